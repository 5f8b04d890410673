"""The watchdog side of `vb watch`: file events collected for debouncing, and the status
file (`.vb/watch.json`) the watcher keeps and `vb status` reads.

Events are collected per path; a move's destination counts as a change (editors and Obsidian
save through a temp file and a rename); directory moves and deletes ask for a full reconcile.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from watchdog.events import FileSystemEventHandler
from watchdog.observers import Observer

from vault_brain.storage.files import write_cache
from vault_brain.storage.index.scan import is_ignored_rel
from vault_brain.storage.paths import VaultPaths

HEARTBEAT_SECONDS = 2.0
STALE_AFTER_SECONDS = 10.0


@dataclass
class WatchState:
    pending: set[str] = field(default_factory=set)
    full: bool = False
    last_event: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)


def event_handler(paths: VaultPaths, state: WatchState) -> Any:
    """A watchdog handler that records the vault paths that changed in `state`."""
    root = str(paths.root)

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


def start_observer(paths: VaultPaths, state: WatchState) -> Any:
    """A running watchdog observer feeding `state` with the vault's changes (stop and join it
    when done)."""
    observer = Observer()
    observer.schedule(event_handler(paths, state), str(paths.root), recursive=True)
    observer.start()
    return observer


def write_status(paths: VaultPaths, status: dict[str, Any]) -> None:
    write_cache(paths.watch_status, json.dumps(status, ensure_ascii=False))


def read_status(paths: VaultPaths) -> dict[str, Any]:
    """The watcher's status file, with `alive` computed from its pid and heartbeat."""
    try:
        status = json.loads(paths.watch_status.read_text(encoding="utf-8"))
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
