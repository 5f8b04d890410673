"""The warm path's socket: a running `vb watch` answers searches on a unix socket in `.vb/`
(`paths.warm_socket`), so a one-shot `vb search` skips opening the index.

The protocol is one JSON request line and one JSON response line per connection, both with
`"v": PROTOCOL`; a client that gets anything else (no socket, connection refused, a timeout,
another version, another vault, `"ok": false`) answers in-process instead. This module holds
both ends' plumbing and imports only the standard library: the client side runs before
`vb search` decides whether to load the index at all.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
from pathlib import Path
from typing import Any

PROTOCOL = 1
CONNECT_TIMEOUT = 0.5  # seconds to reach the watcher
ANSWER_TIMEOUT = 10.0  # seconds for its answer (it first indexes what changed: `settle`)
MAX_LINE = 1 << 20  # bytes of a request line a server reads at most
AVAILABLE = hasattr(socket, "AF_UNIX")  # (not on every Windows Python)


def ask(
    path: Path, request: dict[str, Any], timeout: float = ANSWER_TIMEOUT
) -> dict[str, Any] | None:
    """Send one request to the server at `path`; its answer, or None when there is no
    usable answer (the caller answers in-process)."""
    if not AVAILABLE:
        return None
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(CONNECT_TIMEOUT)
            sock.connect(os.fspath(path))
            sock.settimeout(timeout)
            sock.sendall(json.dumps({"v": PROTOCOL, **request}).encode() + b"\n")
            sock.shutdown(socket.SHUT_WR)
            data = read_line(sock, 1 << 30)
        answer = json.loads(data)
    except (OSError, ValueError):
        return None
    if not isinstance(answer, dict) or answer.get("v") != PROTOCOL or not answer.get("ok"):
        return None
    return answer


def search(
    path: Path, vault: str, query: str, k: int, filters: dict[str, Any], sources: str | None
) -> dict[str, Any] | None:
    """The warm server's answer to a search as the `--json` document, or None (no server,
    or no usable answer: the caller searches in-process). `filters` are the command line's
    as given (type, category, tag, include_archive, scope): the server checks and
    normalizes them as the in-process search does (`Filters.normalized`), so the client
    loads none of that code."""
    if not path.exists():  # (a stat: the common case without a watcher costs no socket)
        return None
    request = {"op": "search", "vault": vault, "query": query, "k": k, "filters": filters}
    answer = ask(path, {**request, "in": sources})
    result = answer.get("result") if answer and answer.get("vault") == vault else None
    return result if isinstance(result, dict) else None


def read_line(sock: socket.socket, limit: int) -> bytes:
    """One line from `sock` (without its newline); a ValueError past `limit` bytes."""
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if b"\n" in chunk:
            break
        if size > limit:
            raise ValueError("line too long")
    return b"".join(chunks).split(b"\n", 1)[0]


def alive(path: Path) -> bool:
    """A server accepts connections at `path` (False for a stale socket file or none)."""
    if not AVAILABLE:
        return False
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(CONNECT_TIMEOUT)
        try:
            sock.connect(os.fspath(path))
        except OSError:
            return False
    return True


def listen(path: Path) -> socket.socket | None:
    """A listening socket at `path`, readable and writable by this user only (mode 0600);
    None when another live server holds `path`. A stale socket file (a killed watcher's) is
    replaced. The socket is bound under a temporary name, restricted, then renamed into
    place, so it is never reachable with wider permissions."""
    if not AVAILABLE:
        raise OSError("this Python has no unix sockets")
    if alive(path):
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(os.fspath(tmp))
        os.chmod(tmp, 0o600)
        sock.listen(16)
        os.replace(tmp, path)  # (over a stale socket file)
    except OSError:
        sock.close()
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    return sock


def remove(path: Path, inode: int) -> None:
    """Remove the socket file at `path` if it is still the one bound with `inode` (another
    server may have replaced it since)."""
    with contextlib.suppress(OSError):
        if os.stat(path).st_ino == inode:
            path.unlink()
