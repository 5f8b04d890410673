"""The plumbing under `Sandbox.exec`: the exec stream's frames, hanging up on it, the pid a
process has inside its container, and the file tools' program.

`docker exec` without a terminal sends stdout and stderr as frames (an 8-byte header: stream,
size; then the bytes). The SDK's own reader waits on the socket with no deadline; vb reads the
raw socket itself with one, keeps the first bytes up to a cap and counts the rest.
"""

from __future__ import annotations

import contextlib
import os
import socket
import struct
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HEADER = struct.Struct(">BxxxL")

# Every command waits for one line on its stdin before it starts, and vb sends that line once
# `exec_start` has returned: the engine's first output could otherwise arrive with its reply
# to the HTTP upgrade, be read into the HTTP client's buffer with it, and never reach the raw
# socket vb reads (on a loaded host, 5 of 200 commands lost their output that way).
GATE = ["sh", "-c", 'read -r _ && exec "$@"', "vb-gate"]


def received(sock: socket.socket, stdin: bytes | None, deadline: float) -> Iterator[bytes]:
    """Start a gated command (`GATE`: its line, then its stdin, then end of input), then
    what it sends, chunk by chunk, until it ends; TimeoutError once `deadline` passes."""
    sock.settimeout(max(deadline - time.monotonic(), 0.001))
    sock.sendall(b"\n" + (stdin or b""))
    sock.shutdown(socket.SHUT_WR)
    while True:
        sock.settimeout(max(deadline - time.monotonic(), 0.001))
        chunk = sock.recv(65536)
        if not chunk:
            return
        yield chunk


# The file tools, run as `python3 -I -S -c FILE_TOOL op path [limit]` inside the container.
# Exit codes: 0 done, 2 no such file, 3 outside /workspace, 4 a folder, 5 not a folder,
# 6 permission denied, 7 any other OSError (its text on stdout).
FILE_TOOL = r"""
import os, sys
op, rel = sys.argv[1], sys.argv[2]
root = "/workspace"
path = os.path.realpath(os.path.join(root, rel))
def fail(code, text=""):
    sys.stdout.write(text)
    sys.exit(code)
if path != root and not path.startswith(root + "/"):
    fail(3)
try:
    if op == "read":
        with open(path, "rb") as f:
            sys.stdout.buffer.write(f.read(int(sys.argv[3]) + 1))
    elif op == "write":
        data = sys.stdin.buffer.read()
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    elif op == "list":
        names = sorted(e.name + ("/" if e.is_dir() else "") for e in os.scandir(path))
        sys.stdout.write("\0".join(names))
except FileNotFoundError:
    fail(2)
except IsADirectoryError:
    fail(4)
except NotADirectoryError:
    fail(5)
except PermissionError:
    fail(6)
except OSError as e:
    fail(7, e.strerror or str(e))
"""
FILE_ERRORS = {
    2: "no such file or folder in the workspace: {path}",
    3: "{path} is outside /workspace",
    4: "{path} is a folder",
    5: "{path} is not a folder",
    6: "permission denied: {path}",
}


class Frames:
    """The exec stream's frames (an 8-byte header: stream, size; then the bytes), split as the
    bytes come in whatever pieces the socket gives."""

    def __init__(self) -> None:
        self._header = b""
        self._left = 0
        self._stream = 1

    def split(self, data: bytes) -> Iterator[tuple[int, bytes]]:
        """(stream: 1 stdout, 2 stderr; payload) for each frame's part in `data`."""
        i = 0
        while i < len(data):
            if self._left == 0:
                take = min(HEADER.size - len(self._header), len(data) - i)
                self._header += data[i : i + take]
                i += take
                if len(self._header) == HEADER.size:
                    self._stream, self._left = HEADER.unpack(self._header)
                    self._header = b""
                continue
            payload = data[i : i + min(self._left, len(data) - i)]
            self._left -= len(payload)
            i += len(payload)
            yield self._stream, payload


class Output(Frames):
    """The exec stream's bytes (stdout and stderr as they came), kept up to `cap`."""

    def __init__(self, cap: int) -> None:
        super().__init__()
        self.cap = cap
        self.kept = bytearray()
        self.seen = 0
        self.cut = False

    def feed(self, data: bytes) -> None:
        for _, payload in self.split(data):
            self.seen += len(payload)
            room = self.cap - len(self.kept)
            if len(payload) > room:
                self.cut = True
            self.kept += payload[: max(room, 0)]


def raw_socket(conn: Any) -> socket.socket:
    """The socket an exec's frames are read from. The SDK hands over a socket (over TLS) or a
    file object over one (a unix or TCP socket): its descriptor is duplicated into a socket
    of vb's own, which `hang_up` shuts down (for both) and closes."""
    if isinstance(conn, socket.socket):
        return conn
    return socket.socket(fileno=os.dup(conn.fileno()))


def hang_up(conn: Any, sock: socket.socket) -> None:
    """Close the exec's connection for good: a bare `close()` leaves the socket open while the
    SDK's response object holds it, and the daemon then blocks writing to it for ever (every
    later exec in that container with it)."""
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.close()
    with contextlib.suppress(OSError):
        conn.close()


def container_pid(host_pid: int) -> int | None:
    """The pid in its own namespace of host process `host_pid` (the last NSpid field)."""
    try:
        status = Path(f"/proc/{host_pid}/status").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("NSpid:"):
            fields = line.split()
            return int(fields[-1]) if len(fields) > 2 else None  # one field: no own namespace
    return None
