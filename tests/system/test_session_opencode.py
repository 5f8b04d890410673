"""`vb session --agent opencode`, end to end: a real `vb session` process, a real Docker engine,
the OpenCode image (the pinned OpenCode release), `vb serve` and `vb mcp` on the host through
the mounted sockets, a real vault with git. The local fake Chat Completions server plays the
model (the one thing that cannot exist here): OpenCode's requests reach it only through
`vb serve` on the host, which adds the key; the container has no network."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from test_session import NOTE, commits, containers, records
from test_session import setup as setup  # the fixture

from conftest import git, run_vb
from fake_llm_server import API_KEY, Canned, FakeLLMServer, streamed
from fake_llm_server import fake_llm as fake_llm  # the fixture
from vault_brain.storage.notes.frontmatter import parse_text

pytestmark = pytest.mark.docker

NO_RETRY = {"x-should-retry": "false"}
ANSWER = "The quokka survey runs on Rottnest Island in March; your workspace holds notes.txt."


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"call_{name}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def scripted_agent(body: Any) -> Canned:
    """The model OpenCode talks to: search memory, then list the workspace, then answer,
    whatever the conversation so far (decided by the last message)."""
    if not body.get("stream"):  # vb's own calls (the flush's fact extraction): not scripted
        return Canned(400, b'{"error": {"message": "not scripted"}}', headers=NO_RETRY)
    messages = body.get("messages") or []
    last = messages[-1] if messages else {}
    called = {c.get("id") for m in messages for c in (m.get("tool_calls") or [])}
    if last.get("role") == "user":
        return streamed([], tool_calls=[_call("vb_memory_search", {"query": "quokka survey"})])
    if last.get("role") == "tool" and "call_bash" not in called:
        command = {"command": "ls /workspace", "description": "List the workspace"}
        return streamed([], tool_calls=[_call("bash", command)])
    return streamed([ANSWER])


def test_a_scripted_opencode_session_remembers_and_commits_once(
    setup: tuple[Path, Path], fake_llm: FakeLLMServer, docker_engine: Any, opencode_image: str
) -> None:
    vault, workspace = setup
    (workspace / "notes.txt").write_text("field notes\n")
    if os.getuid() == 0:  # vb never runs the sandbox as root: a workspace with files is a user's
        for path in (workspace, workspace / "notes.txt"):
            os.chown(path, 1000, 1000)
    fake_llm.responder = scripted_agent
    before = commits(vault)
    proc = _start(vault, workspace)
    found = [_container(vault, proc)]
    # from inside: no network, no key, no vb configuration, the vault read-only
    inside = _exec(found[0], "env; cat /run/vb/opencode.json; ls -a /run/vb")
    assert API_KEY not in inside and "VB_LLM" not in inside and "api_key" not in inside.lower()
    assert "X-VB-Session" in inside and "vb_memory" not in inside
    net = _exec(
        found[0], "python3 -c \"import socket; socket.create_connection(('1.1.1.1', 53), 3)\""
    )
    assert "Network is unreachable" in net or "OSError" in net
    assert "Read-only file system" in _exec(found[0], "touch /vault/x")
    out, err = proc.communicate("Where does the quokka survey run?\n/good\n/quit\n", timeout=300)
    assert proc.returncode == 0, err
    assert ANSWER in out and "[vb_memory_search]" in out and "[bash] ls /workspace" in out
    # OpenCode's requests came through vb serve: the key added on the host, the memory
    # tools offered, the memory in the context
    sent = [r for r in fake_llm.requests if (r.body or {}).get("stream")]
    assert sent and all(r.headers.get("authorization") == f"Bearer {API_KEY}" for r in sent)
    names = {t["function"]["name"] for t in sent[0].body["tools"]}
    assert {"vb_memory_search", "bash"} <= names
    assert "Quokka survey" in json.dumps(sent[0].body["messages"])
    # the transcript (written by vb serve) holds the turn; /good credited the retrieval
    kinds = [r.get("type") for r in records(vault)]
    users = [str(r.get("content")) for r in records(vault) if r.get("type") == "user"]
    assert users == ["Where does the quokka survey run?"]
    assert "user" in kinds and "assistant" in kinds and "retrieval" in kinds and "flush" in kinds
    assert parse_text((vault / NOTE).read_bytes()).meta["credit"] > 0.5
    after = commits(vault)
    assert len(after) == len(before) + 1 and after[0].startswith("vb session session-")
    assert containers(vault) == []
    assert git("status", "--porcelain", cwd=vault) == ""


def _start(vault: Path, workspace: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "vault_brain", "--vault", str(vault), "session",
         "--agent", "opencode", "--workspace", str(workspace)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={k: v for k, v in os.environ.items() if k != "VB_VAULT"},
    )  # fmt: skip


def _container(vault: Path, proc: subprocess.Popen[str]) -> str:
    """The session's container, once vb session is ready for the first line."""
    assert proc.stderr is not None
    line = proc.stderr.readline()  # "vb session ...: opencode agent, workspace ..." when ready
    while line and "opencode agent" not in line:
        line = proc.stderr.readline()
    assert line, "vb session ended before its first prompt"
    [found] = containers(vault)
    return found


def _exec(container: str, command: str) -> str:
    done = subprocess.run(
        ["docker", "exec", container, "sh", "-c", command],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    return done.stdout + done.stderr


def test_an_opencode_image_present_is_not_rebuilt(
    docker_engine: Any, sandbox_image: str, opencode_image: str
) -> None:
    from vault_brain.storage.sandbox.opencode_image import ensure_opencode_image

    began = time.monotonic()
    assert ensure_opencode_image(docker_engine, sandbox_image, {}) == opencode_image
    assert time.monotonic() - began < 2
    res = run_vb("session", "--agent", "nope")
    assert res.exit_code != 0 and "use one of: builtin, opencode" in res.stderr


def test_a_container_killed_mid_turn_ends_the_session_and_loses_nothing(
    setup: tuple[Path, Path], fake_llm: FakeLLMServer, docker_engine: Any, opencode_image: str
) -> None:
    vault, workspace = setup

    def slow(body: Any) -> Canned:  # the model is still thinking when the container dies
        return Canned(body=b"{}", delay=8.0) if body.get("stream") else scripted_agent(body)

    fake_llm.responder = slow
    proc = _start(vault, workspace)
    container = _container(vault, proc)
    assert proc.stdin is not None
    proc.stdin.write("Plan the quokka survey for next March.\n")
    proc.stdin.flush()
    deadline = time.monotonic() + 60
    while not any((r.body or {}).get("stream") for r in fake_llm.requests):
        assert time.monotonic() < deadline, "OpenCode never called the model"
        time.sleep(0.1)
    subprocess.run(["docker", "kill", container], capture_output=True, check=True)
    _, err = proc.communicate("/quit\n", timeout=120)
    assert proc.returncode == 0, err
    assert "container stopped" in err or "sandbox" in err
    users = [r for r in records(vault) if r.get("type") == "user"]
    assert any("Plan the quokka survey" in str(r.get("content")) for r in users)
    assert commits(vault)[0].startswith("vb session ")
    assert containers(vault) == []
