"""The host side of `vb session --agent opencode` (`app.runtime.session_host`), without Docker: real
`vb serve` and `vb mcp` processes behind the sockets the container would reach."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from fake_llm_server import FakeLLMServer
from fake_llm_server import fake_llm as fake_llm  # the fixture
from vault_brain.app.runtime.session_host import (
    MCP_SOCKET,
    MODEL_SOCKET,
    HostServices,
    remove_leftover_folders,
)


@pytest.fixture
def vault(tmp_path: Path, cli: Any) -> Path:
    root = tmp_path / "vault"
    assert cli("init", str(root)).exit_code == 0
    return root


def send_message(path: Path, data: bytes, until: bytes = b"\n", timeout: float = 30) -> bytes:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(timeout)
    conn.connect(str(path))
    conn.sendall(data)
    got = b""
    while until not in got:
        try:
            chunk = conn.recv(65536)
        except ConnectionResetError:  # the server ended with our request unread
            break
        if not chunk:
            break
        got += chunk
    conn.close()
    return got


INITIALIZE = (
    json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"},
            },
        }
    )
    + "\n"
).encode()


def test_serve_and_mcp_answer_on_the_sockets_and_stop_with_the_session(
    vault: Path, fake_llm: FakeLLMServer
) -> None:
    warnings: list[str] = []
    services = HostServices(vault, "session-host-1", dict(os.environ), warnings.append)
    services.start(None)
    try:
        assert services.serve_alive()
        assert oct((services.sockets / MODEL_SOCKET).stat().st_mode & 0o777) == "0o600"
        fake_llm.reply_text("hello from upstream")
        request = json.dumps(
            {"model": "test-model", "messages": [{"role": "user", "content": "hi"}]}
        )
        head = (
            "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"X-VB-Session: session-host-1\r\nContent-Length: {len(request)}\r\n"
            "Connection: close\r\n\r\n"
        )
        reply = send_message(
            services.sockets / MODEL_SOCKET, head.encode() + request.encode(), b"}}"
        )
        assert b"200 OK" in reply and b"hello from upstream" in reply
        answer = send_message(services.sockets / MCP_SOCKET, INITIALIZE)
        assert json.loads(answer.splitlines()[0])["result"]["serverInfo"]["name"]
    finally:
        services.stop()
    assert not services.serve_alive() and not services.home.exists()
    assert warnings == []


def test_a_memory_server_that_crashes_is_one_warning_and_the_next_connection_works(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An MCP server crash (seed error table) is simulated by `vb mcp` exiting 3 on its first
    start: the host says so in one line; OpenCode's next connection gets a working server."""
    warnings: list[str] = []
    services = HostServices(vault, "session-host-2", dict(os.environ), warnings.append)
    real = services._vb
    crashed: list[bool] = []

    def vb(*args: str) -> list[str]:
        if args[0] == "mcp" and not crashed:
            crashed.append(True)
            return [sys.executable, "-c", "import sys; print('boom', file=sys.stderr); sys.exit(3)"]
        return real(*args)

    monkeypatch.setattr(services, "_vb", vb)
    monkeypatch.setattr(services, "start_serve", lambda: None)  # not what this test is about
    services.start(None)
    try:
        assert (
            send_message(services.sockets / MCP_SOCKET, INITIALIZE) == b""
        )  # the crash hangs up, nothing said
        deadline = time.monotonic() + 10
        while not warnings:
            assert time.monotonic() < deadline, "no warning"
            time.sleep(0.05)
        [line] = warnings
        assert "memory tools (vb mcp) stopped: boom" in line and "goes on without them" in line
        answer = send_message(services.sockets / MCP_SOCKET, INITIALIZE)
        assert json.loads(answer.splitlines()[0])["result"]
    finally:
        services.stop()


def test_a_killed_session_takes_vb_serve_with_it(vault: Path, fake_llm: FakeLLMServer) -> None:
    script = textwrap.dedent(
        f"""
        import os, sys
        from vault_brain.app.runtime.session_host import HostServices
        s = HostServices({str(vault)!r}, "session-host-3", dict(os.environ), print)
        s.start(None)
        print(s.serve.pid, s.home, flush=True)
        sys.stdin.read()
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    pid, home = proc.stdout.readline().split()
    serve_pid = int(pid)
    os.kill(serve_pid, 0)  # running
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 30
    while _running(serve_pid):
        assert time.monotonic() < deadline, "vb serve outlived its session"
        time.sleep(0.1)
    # its folder (sockets, logs) is left: the next start's recovery removes it
    assert Path(home).is_dir() and Path(home).name.startswith("vb-session-host-3-")
    remove_leftover_folders("session-host-3")
    assert not Path(home).exists()


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (no parent reaped it yet) has ended
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False
