"""A command in the sandbox whose output is read as it comes: OpenCode's JSON events, a line
at a time, for `vb session --agent opencode`.

Like `Sandbox.exec` (the same frames, the same deadline, the same `timeout` inside the
container), but stdout is handed over line by line while the command runs, and stderr is kept
(its last 8 KB) for the error message when the command fails.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from vault_brain.storage.sandbox_exec import Frames, hang_up

if TYPE_CHECKING:
    from vault_brain.storage.sandbox import Sandbox

STDERR = 2
STDERR_KEPT = 8192
SETTLE = 2.0  # seconds a killed container may take to be seen as stopped
LINE_CAP = 4 * 1024 * 1024  # one event longer than this is cut (and so not valid JSON)


class Streamed:
    """`lines()` yields stdout's lines as they come; then `exit_code` (-1: unknown, vb stopped
    waiting), `timed_out` and `stderr` say how it ended. A container that stopped or vanished
    under the command raises `SandboxError` (as `Sandbox.exec` does)."""

    def __init__(
        self,
        sandbox: Sandbox,
        argv: list[str],
        timeout: float,
        environment: dict[str, str] | None = None,
    ) -> None:
        self.sandbox, self.argv, self.timeout = sandbox, argv, timeout
        self.environment = environment
        self.exit_code = -1
        self.timed_out = False
        self.stderr = ""

    def lines(self) -> Iterator[str]:
        from vault_brain.storage.sandbox import HOST_SLACK, KILL_GRACE, KILLED  # (cycle)

        command = ["timeout", "-k", str(KILL_GRACE), f"{self.timeout:.3f}", *self.argv]
        api = self.sandbox.client.api
        with self.sandbox._errors("running a command in the sandbox"):
            exec_id = api.exec_create(self.sandbox.id, command, environment=self.environment)["Id"]
            conn = api.exec_start(exec_id, socket=True)
        sock: socket.socket = getattr(conn, "_sock", conn)
        started = time.monotonic()
        deadline = started + self.timeout + KILL_GRACE + HOST_SLACK
        frames = _Lines()
        hung_up = False
        try:
            while True:
                sock.settimeout(max(deadline - time.monotonic(), 0.001))
                chunk = sock.recv(65536)
                if not chunk:
                    break
                yield from frames.feed(chunk)
            if frames.partial:
                yield frames.partial.decode("utf-8", errors="replace")
        except TimeoutError:
            hung_up = True
        except OSError:
            hang_up(conn, sock)
            self.sandbox._raise_if_broken("lost the output of a command")
            hung_up = True
        finally:
            hang_up(conn, sock)
            self.stderr = frames.errors.decode("utf-8", errors="replace")
        killed = hung_up and self.sandbox._kill(exec_id)
        self.exit_code = KILLED if killed else self.sandbox._exit_code(exec_id, wait=2.0)
        elapsed = time.monotonic() - started
        self.timed_out = self.exit_code in (124, KILLED) and elapsed >= self.timeout
        if self.exit_code != 0:  # the container itself may be what ended it
            self._check_container()

    def _check_container(self) -> None:
        """`SandboxError` if the container stopped; a command killed by a signal (as when the
        container is killed: its state changes a moment after) gets SETTLE seconds to show it."""
        from vault_brain.storage.sandbox import KILLED  # (cycle)

        killed = self.exit_code in (-1, KILLED, 128 + 15)
        deadline = time.monotonic() + (SETTLE if killed else 0.0)
        while True:
            self.sandbox._raise_if_broken("a command ended")
            if time.monotonic() >= deadline:
                return
            time.sleep(0.1)


class _Lines(Frames):
    """The exec stream's frames: stdout cut into lines, stderr's tail kept."""

    def __init__(self) -> None:
        super().__init__()
        self.partial = bytearray()
        self.errors = bytearray()

    def feed(self, data: bytes) -> Iterator[str]:
        for stream, payload in self.split(data):
            if stream == STDERR:
                self.errors = (self.errors + payload)[-STDERR_KEPT:]
                continue
            self.partial += payload
            while (end := self.partial.find(b"\n")) >= 0:
                line = bytes(self.partial[:end])
                del self.partial[: end + 1]
                yield line.decode("utf-8", errors="replace")
            if len(self.partial) > LINE_CAP:
                yield self.partial[:LINE_CAP].decode("utf-8", errors="replace")
                self.partial.clear()
