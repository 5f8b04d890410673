"""`vb watch`: keep the index current while people and editors change files.

Events are debounced; directory moves and deletes fall back to a full reconcile. vb's own
writes are recognised by the manifest: a file whose size and mtime are already indexed is
not read again.
"""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
from typing import Any

from vault_brain.app.vault import Vault
from vault_brain.app.watch_projects import ProjectWatch
from vault_brain.domain.clock import now_iso
from vault_brain.storage.index.watch import (
    HEARTBEAT_SECONDS,
    WatchState,
    start_observer,
    write_status,
)


def run_watch(
    vault: Vault, debounce: float = 0.1, on_batch: Any = None, stop: threading.Event | None = None
) -> None:
    """Watch until SIGINT/SIGTERM (or `stop` is set)."""
    stop = stop or threading.Event()
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stop.set())
    state = WatchState()
    status: dict[str, Any] = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "started": now_iso(),
        "batches": 0,
        "indexed": 0,
        "last_batch": None,
        "stopped": False,
    }
    observer = start_observer(vault.paths, state)
    projects = ProjectWatch(vault, max(debounce, 0.5))
    # reconcile only once watching has begun, so an edit made during start-up is never missed
    vault.reconcile(force=True)
    vault.sync_embeddings()  # (hybrid search only; best effort, like every call below)
    last_beat = 0.0
    try:
        while not stop.is_set():
            now = time.monotonic()
            batch: set[str] = set()
            full = False
            with state.lock:
                if (state.pending or state.full) and now - state.last_event >= debounce:
                    batch, full = state.pending, state.full
                    state.pending, state.full = set(), False
            if batch or full:
                started = time.perf_counter()
                try:
                    result = vault.index.reconcile() if full else vault.index.refresh(batch)
                except Exception as exc:  # a locked index or a disk error: keep watching
                    status["last_error"] = {
                        "at": now_iso(),
                        "error": f"{type(exc).__name__}: {exc}",
                    }
                    with state.lock:  # try these paths again with the next batch
                        state.pending.update(batch)
                        state.full = state.full or full
                        state.last_event = time.monotonic()
                    stop.wait(1.0)
                    continue
                seconds = time.perf_counter() - started
                status["batches"] += 1
                changed = result.added + result.updated + result.removed
                if changed or result.rebuilt:
                    vault.sync_embeddings()
                status["indexed"] += len(changed)
                status["last_batch"] = {
                    "at": now_iso(),
                    "paths": sorted(changed)[:50],
                    "full": full,
                    "seconds": round(seconds, 4),
                }
                if on_batch is not None:
                    on_batch(result)
                last_beat = 0.0
            projects.run_due(status)
            if now - last_beat >= HEARTBEAT_SECONDS:
                status["heartbeat"] = now_iso()
                status["heartbeat_epoch"] = time.time()
                write_status(vault.paths, status)
                last_beat = now
            stop.wait(0.05)
    finally:
        projects.stop()
        observer.stop()
        observer.join(timeout=5)
        status["stopped"] = True
        status["heartbeat"] = now_iso()
        write_status(vault.paths, status)
