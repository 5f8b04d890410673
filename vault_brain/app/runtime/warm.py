"""`vb watch`'s warm path: searches answered on a unix socket (`storage.warm`) by a live
memory API whose index the watcher keeps current.

Each request is answered as `vb search` would answer it in-process: the same
`MemoryAPI.search` (live: first `IndexKeeper.settle()`, so every change made to the files
before the request is in the index), its result put into JSON by `results.envelope`, the
one vocabulary of `--json`. The client prints that document, or renders its text from it,
exactly as the in-process path does. A request the server cannot answer gets
`{"ok": false}` (one line in the log) and the client answers in-process; the server keeps
serving.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import threading
from pathlib import Path
from typing import Any

from vault_brain.app.api import MemoryAPI
from vault_brain.app.memory.results import envelope
from vault_brain.domain.notes.model import Filters
from vault_brain.storage.warm import MAX_LINE, PROTOCOL, listen, read_line, remove

log = logging.getLogger("vault_brain.watch")


class BadRequest(ValueError):
    """A request this server does not answer (the client answers in-process)."""


def _filters(raw: Any) -> Filters:
    if not isinstance(raw, dict):
        raise BadRequest("filters must be an object")
    text = {k: raw.get(k) for k in ("type", "category", "tag", "scope")}
    if not all(v is None or isinstance(v, str) for v in text.values()):
        raise BadRequest("filters hold strings")
    return Filters.of_search({**text, "include_archive": raw.get("include_archive")})


class WarmServer:
    """Answers `vb search` requests on `api.vault.paths.warm_socket` from a thread of its own
    (one more thread per connection; the live API serialises the searches)."""

    def __init__(self, api: MemoryAPI) -> None:
        self.api = api
        api.answers = "warm"
        self.root = str(api.vault.root)
        self.path: Path = api.vault.paths.warm_socket
        self.searches = 0
        """How many searches this server answered (`vb status` shows it)."""
        self._count_lock = threading.Lock()
        self._sock: socket.socket | None = None
        self._inode = 0
        self._thread: threading.Thread | None = None

    def start(self) -> bool:
        """Listen; False (and a line in the log) when another watcher already serves this
        vault or the socket cannot be made (e.g. a path too long for a unix socket)."""
        try:
            sock = listen(self.path)
        except OSError as exc:
            log.warning("warm search off: cannot listen on %s (%s)", self.path, exc)
            return False
        if sock is None:
            log.warning("warm search off: another watcher answers on %s", self.path)
            return False
        self._sock, self._inode = sock, os.stat(self.path).st_ino
        self._thread = threading.Thread(target=self._accept, name="vb-warm", daemon=True)
        self._thread.start()
        return True

    def _accept(self) -> None:
        assert self._sock is not None
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:  # closed: stopping
                return
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            try:
                conn.settimeout(5.0)
                request = json.loads(read_line(conn, MAX_LINE))
                answer = self.answer(request)
            except Exception as exc:  # a bad request, or a bug: say so, keep serving
                log.warning("warm search: request not answered: %s: %s", type(exc).__name__, exc)
                answer = {"v": PROTOCOL, "ok": False, "error": f"{type(exc).__name__}: {exc}"}
            with contextlib.suppress(OSError):  # (the client gave up: it answers in-process)
                conn.sendall(json.dumps(answer, ensure_ascii=False).encode() + b"\n")

    def answer(self, request: Any) -> dict[str, Any]:
        """The answer to one decoded request line (BadRequest when there is none)."""
        if not isinstance(request, dict) or request.get("v") != PROTOCOL:
            raise BadRequest(f"not protocol version {PROTOCOL}")
        op = request.get("op")
        if op == "ping":
            return {"v": PROTOCOL, "ok": True, "pid": os.getpid(), "searches": self.searches}
        if op != "search":
            raise BadRequest(f"unknown op {op!r}")
        if request.get("vault") != self.root:
            raise BadRequest(f"this server answers for {self.root}")
        query, k, sources = request.get("query"), request.get("k"), request.get("in")
        if not isinstance(query, str) or type(k) is not int or k < 1:
            raise BadRequest("a search needs a string query and a positive k")
        if sources is not None and not isinstance(sources, str):
            raise BadRequest("in must be a string")
        result = self.api.search(query, k, _filters(request.get("filters")), sources)
        with self._count_lock:
            self.searches += 1
        return {"v": PROTOCOL, "ok": True, "vault": self.root, "result": envelope(result)}

    def stop(self) -> None:
        if self._sock is not None:
            remove(self.path, self._inode)
            with contextlib.suppress(OSError):  # (wakes the accepting thread on Linux)
                self._sock.shutdown(socket.SHUT_RDWR)
            self._sock.close()
            self._sock = None
        if self._thread is not None:
            self._thread.join(timeout=5)
