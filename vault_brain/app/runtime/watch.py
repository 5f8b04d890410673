"""`vb watch`: keep the index current while people and editors change files, and answer
searches warm on a unix socket (`app.runtime.warm`).

The indexing is the `IndexKeeper`'s (as in `vb serve` and `vb mcp`): watchdog events are
debounced, directory moves and deletes (and lost events) fall back to a full reconcile, vb's
own writes are recognised by the manifest (a file whose size and mtime are already indexed
is not read again), and a search answered on the socket first `settle()`s, so it sees every
change made to the files before it.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import sys
import threading
import time
from typing import Any

from vault_brain.app.api import MemoryAPI
from vault_brain.app.memory.vault import Vault
from vault_brain.app.runtime.index_keeper import IndexKeeper
from vault_brain.app.runtime.proxy import ProxyAPI
from vault_brain.app.runtime.warm import WarmServer
from vault_brain.app.runtime.watch_projects import ProjectWatch
from vault_brain.domain.clock import now_iso
from vault_brain.storage.index.scan import ReconcileResult
from vault_brain.storage.index.watch import HEARTBEAT_SECONDS, write_status


def _log_to_stderr() -> None:
    """The keeper's and the server's warnings, one line each, on stderr."""
    for name in ("vault_brain.serve", "vault_brain.watch"):
        logger = logging.getLogger(name)
        if not logger.handlers:
            handler = logging.StreamHandler(sys.stderr)
            handler.setFormatter(logging.Formatter("vb watch: %(message)s"))
            logger.addHandler(handler)
            logger.setLevel(logging.WARNING)


class _LastError(logging.Handler):
    """The keeper's and the server's latest warning, kept in the status file."""

    def __init__(self, status: dict[str, Any]) -> None:
        super().__init__(logging.WARNING)
        self.status = status

    def emit(self, record: logging.LogRecord) -> None:
        self.status["last_error"] = {"at": now_iso(), "error": record.getMessage()}


def run_watch(
    vault: Vault,
    debounce: float = 0.1,
    on_batch: Any = None,
    stop: threading.Event | None = None,
    serve: bool = True,
) -> None:
    """Watch until SIGINT/SIGTERM (or `stop` is set); with `serve`, answer searches on the
    vault's warm socket meanwhile."""
    stop = stop or threading.Event()
    # the handler only notes the signal: setting the Event there would take the Event's lock,
    # which the main thread it interrupts may hold inside `stop.wait` (a deadlock: the watcher
    # never stopped on SIGINT)
    signalled: list[int] = []
    previous = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, lambda signum, _: signalled.append(signum))
    _log_to_stderr()
    status: dict[str, Any] = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "started": now_iso(),
        "batches": 0,
        "indexed": 0,
        "last_batch": None,
        "stopped": False,
        "warm_socket": None,
    }
    last_error = _LastError(status)
    for name in ("vault_brain.serve", "vault_brain.watch"):
        logging.getLogger(name).addHandler(last_error)
    writer = ProxyAPI(Vault(vault.paths, vault.env))

    def indexed(result: ReconcileResult, full: bool, seconds: float) -> None:
        changed = result.added + result.updated + result.removed
        status["batches"] += 1
        status["indexed"] += len(changed)
        status["last_batch"] = {
            "at": now_iso(),
            "paths": sorted(changed)[:50],
            "full": full,
            "seconds": round(seconds, 4),
        }
        if changed or result.rebuilt:
            writer.vault.sync_embeddings()  # (hybrid search only; best effort)
        if on_batch is not None and changed:
            on_batch(result)

    # the keeper reconciles once watching has begun, so an edit made meanwhile is not missed
    keeper = IndexKeeper(writer, debounce=debounce, on_batch=indexed)
    writer.vault.sync_embeddings()
    projects = ProjectWatch(vault, max(debounce, 0.5))
    reader = MemoryAPI.live(Vault(vault.paths, vault.env), None, "cli")
    reader.keeper = keeper
    server = WarmServer(reader) if serve else None
    if server is not None and server.start():
        status["warm_socket"] = str(server.path)
    last_beat = 0.0
    batches = 0
    try:
        while not (signalled or stop.is_set()):
            now = time.monotonic()
            projects.run_due(status)
            if server is not None:
                status["warm_searches"] = server.searches
            if now - last_beat >= HEARTBEAT_SECONDS or status["batches"] != batches:
                batches = status["batches"]
                status["heartbeat"] = now_iso()
                status["heartbeat_epoch"] = time.time()
                write_status(vault.paths, status)
                last_beat = now
            stop.wait(0.05)
    finally:
        if server is not None:
            server.stop()
        projects.stop()
        keeper.close()
        for name in ("vault_brain.serve", "vault_brain.watch"):
            logging.getLogger(name).removeHandler(last_error)
        status["stopped"] = True
        status["warm_socket"] = None
        status["heartbeat"] = now_iso()
        write_status(vault.paths, status)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
