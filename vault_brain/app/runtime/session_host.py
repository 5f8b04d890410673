"""The host side of `vb session --agent opencode`: what OpenCode in the sandbox reaches through
two unix sockets in a folder mounted read-only at /run/vb, and nothing else.

- `model.sock`: `vb serve` (its own process), OpenCode's model provider. It holds the model
  key, adds the vault's memories to each request and records the conversation in the
  session's transcript (`X-VB-Session`); the container sends no key at all.
- `mcp.sock`: each connection is a `vb mcp` process of its own on the host, its stdin and
  stdout the connection (OpenCode's local MCP server command is the bridge in the image).
  The memory tools run here, on the writable vault, with the session's id.

The folder is private to the host user (and to the container's user when vb runs as root);
`serve.log` and `mcp.log` sit beside it, outside what the container sees.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from vault_brain.domain.errors import VaultBrainError

MOUNTED = "/run/vb"
MODEL_SOCKET = "model.sock"
MCP_SOCKET = "mcp.sock"
START_WAIT = 30.0  # seconds vb serve may take to listen
PR_SET_PDEATHSIG = 1  # prctl(2)
PREFIX = "vb-"  # the folder: <temp>/vb-<session>-<random>
STOP_WAIT = 30.0  # seconds it may take to record what it holds once told to stop

Say = Callable[[str], None]


class HostServiceError(VaultBrainError):
    """vb serve or the MCP relay could not start."""


class HostServices:
    def __init__(self, vault: Path, session: str, env: dict[str, str], warn: Say) -> None:
        self.vault, self.session, self.env, self.warn = vault, session, env, warn
        self.home = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{session}-"))  # 0700: the user's
        self.sockets = self.home / "sockets"
        self.sockets.mkdir(mode=0o700)
        self.serve: subprocess.Popen[bytes] | None = None
        self.owner: tuple[int, int] | None = None
        self._listener: socket.socket | None = None
        self._children: list[subprocess.Popen[bytes]] = []
        self._lock = threading.Lock()
        self._closing = False

    def _vb(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "vault_brain", "--vault", str(self.vault), *args]

    # -- start ---------------------------------------------------------------------------
    def start(self, owner: tuple[int, int] | None) -> None:
        """Both sockets listening; `owner` (uid, gid) gets them when vb runs as root and the
        container does not."""
        self.owner = owner if os.getuid() == 0 and owner and owner[0] != 0 else None
        self._listen_mcp()
        self.start_serve()
        if self.owner:  # (the folder holding it stays the host user's)
            os.chown(self.sockets, *self.owner)

    def start_serve(self) -> None:
        path = self.sockets / MODEL_SOCKET
        path.unlink(missing_ok=True)
        with (self.home / "serve.log").open("ab") as log:
            self.serve = subprocess.Popen(
                self._vb("serve", "--unix-socket", str(path), "--session-only", self.session),
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=self.env,
                start_new_session=True, preexec_fn=_die_with_parent,
            )  # fmt: skip
        deadline = time.monotonic() + START_WAIT
        while not _answers(path):
            if self.serve.poll() is not None or time.monotonic() > deadline:
                why = self._log_tail("serve.log") or f"exit code {self.serve.poll()}"
                raise HostServiceError(
                    f"vb serve (OpenCode's model provider) did not start: {why}",
                    hint=f"its log: {self.home / 'serve.log'}",
                )
            time.sleep(0.05)
        if self.owner:
            os.chown(path, *self.owner)

    def serve_alive(self) -> bool:
        return self.serve is not None and self.serve.poll() is None

    def _listen_mcp(self) -> None:
        path = self.sockets / MCP_SOCKET
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(path))
        os.chmod(path, 0o600)
        if self.owner:
            os.chown(path, *self.owner)
        listener.listen(8)
        self._listener = listener
        threading.Thread(target=self._accept, name="vb-session-mcp", daemon=True).start()

    def _accept(self) -> None:
        assert self._listener is not None
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return  # closed: the session is over
            with conn, (self.home / "mcp.log").open("ab") as log, self._lock:
                if self._closing:
                    return
                child = subprocess.Popen(
                    self._vb("mcp", "--session", self.session, "--confined"),
                    stdin=conn.fileno(), stdout=conn.fileno(), stderr=log, env=self.env,
                    start_new_session=True, preexec_fn=_die_with_parent,
                )  # fmt: skip
                self._children.append(child)
            threading.Thread(target=self._watch, args=(child,), daemon=True).start()

    def _watch(self, child: subprocess.Popen[bytes]) -> None:
        code = child.wait()
        with self._lock:
            if self._closing:
                return
            self._children.remove(child)
        if code != 0:
            why = self._log_tail("mcp.log") or f"exit code {code}"
            self.warn(
                f"vb: the memory tools (vb mcp) stopped: {why}; OpenCode goes on without "
                f"them until its next turn (log: {self.home / 'mcp.log'})"
            )

    def _log_tail(self, name: str) -> str:
        try:
            lines = (self.home / name).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return ""
        lines = [line.strip() for line in lines if line.strip()]
        return lines[-1][:200] if lines else ""

    # -- stop ----------------------------------------------------------------------------
    def stop(self) -> None:
        """vb serve stopped (it records what it holds first), the MCP servers ended, the
        folder removed."""
        with self._lock:
            self._closing = True
            children = list(self._children)
        if self._listener is not None:
            with contextlib.suppress(OSError):
                self._listener.close()
        for child in children:
            _end(child, 5.0)
        if self.serve is not None:
            _end(self.serve, STOP_WAIT)
        shutil.rmtree(self.home, ignore_errors=True)


def remove_leftover_folders(session: str) -> None:
    """The folders of a session whose host died (no `stop()` ran): its sockets and logs."""
    for folder in Path(tempfile.gettempdir()).glob(f"{PREFIX}{session}-*"):
        shutil.rmtree(folder, ignore_errors=True)


def _die_with_parent() -> None:
    """In the child: SIGTERM when vb session dies (killed: no stop() ran), so vb serve records
    what it holds and ends, and no server outlives its session. (Its own session: a Ctrl-C
    at the REPL is vb session's to handle, not theirs.)"""
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _answers(path: Path) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(str(path))
        return True
    except OSError:
        return False
    finally:
        probe.close()


def _end(process: subprocess.Popen[bytes], wait: float) -> None:
    if process.poll() is not None:
        return
    with contextlib.suppress(OSError):
        process.send_signal(signal.SIGTERM)
    try:
        process.wait(wait)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
