"""`vb watch`: keep the index current while people and editors change files.

Events are collected and debounced; a move's destination counts as a change (editors
and Obsidian save through a temp file and a rename); directory moves and deletes fall
back to a full reconcile. vb's own writes are recognised by the manifest: a file whose
size and mtime are already indexed is not read again.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vault_brain.core import Vault
from vault_brain.index.store import is_ignored_rel
from vault_brain.vault.store import now_iso, write_cache

HEARTBEAT_SECONDS = 2.0
STALE_AFTER_SECONDS = 10.0


@dataclass
class WatchState:
    pending: set[str] = field(default_factory=set)
    full: bool = False
    last_event: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)


def _handler(vault: Vault, state: WatchState) -> Any:
    from watchdog.events import FileSystemEventHandler

    root = str(vault.paths.root)

    def rel_of(path: str | bytes) -> str | None:
        text = os.fsdecode(path)
        if not text.startswith(root):
            return None
        rel = Path(os.path.relpath(text, root)).as_posix()
        return None if rel.startswith("..") else rel

    class Handler(FileSystemEventHandler):
        def on_any_event(self, event: Any) -> None:
            if event.event_type in ("opened", "closed_no_write"):
                return
            paths = [event.src_path] + (
                [event.dest_path] if getattr(event, "dest_path", "") else []
            )
            rels = [r for r in (rel_of(p) for p in paths) if r]
            if event.is_directory:
                if event.event_type in ("moved", "deleted", "created") and any(
                    not r.split("/")[0].startswith(".")
                    and r.split("/")[0] not in ("sessions", "logs")
                    for r in rels
                ):
                    with state.lock:
                        state.full = True
                        state.last_event = time.monotonic()
                return
            wanted = [r for r in rels if not is_ignored_rel(r)]
            if wanted:
                with state.lock:
                    state.pending.update(wanted)
                    state.last_event = time.monotonic()

    return Handler()


def write_status(vault: Vault, status: dict[str, Any]) -> None:
    write_cache(vault.paths.watch_status, json.dumps(status, ensure_ascii=False))


def read_status(vault: Vault) -> dict[str, Any]:
    """The watcher's status file, with `alive` computed from its pid and heartbeat."""
    try:
        status = json.loads(vault.paths.watch_status.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"alive": False, "running": False}
    alive = False
    if not status.get("stopped") and status.get("host") == socket.gethostname():
        try:
            os.kill(int(status.get("pid", 0)), 0)
            alive = time.time() - float(status.get("heartbeat_epoch", 0)) < STALE_AFTER_SECONDS
        except (OSError, ValueError):
            alive = False
    status["alive"] = alive
    return status


def run_watch(
    vault: Vault, debounce: float = 0.2, on_batch: Any = None, stop: threading.Event | None = None
) -> None:
    """Watch until SIGINT/SIGTERM (or `stop` is set)."""
    from watchdog.observers import Observer

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
    observer = Observer()
    observer.schedule(_handler(vault, state), str(vault.paths.root), recursive=True)
    observer.start()
    # reconcile only once watching has begun, so an edit made during start-up is never missed
    vault.reconcile(force=True)
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
                result = vault.index.reconcile() if full else vault.index.refresh(batch)
                seconds = time.perf_counter() - started
                status["batches"] += 1
                changed = result.added + result.updated + result.removed
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
            if now - last_beat >= HEARTBEAT_SECONDS:
                status["heartbeat"] = now_iso()
                status["heartbeat_epoch"] = time.time()
                write_status(vault, status)
                last_beat = now
            stop.wait(0.05)
    finally:
        observer.stop()
        observer.join(timeout=5)
        status["stopped"] = True
        status["heartbeat"] = now_iso()
        write_status(vault, status)
