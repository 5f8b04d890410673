"""`vb watch` for the projects extracted on this machine: a change to one of a project's
Markdown or text files re-extracts the project once the changes have gone quiet (only the
files that changed are read again, see `app.knowledge.extract`).

Projects extracted while the watcher runs are picked up within a few seconds.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vault_brain.domain.clock import now_iso
from vault_brain.domain.errors import VaultBrainError
from vault_brain.storage.index.watch import CHANGES
from vault_brain.storage.knowledge.items import registries
from vault_brain.storage.knowledge.project_files import SUFFIXES

if TYPE_CHECKING:
    from vault_brain.app.memory.vault import Vault

log = logging.getLogger(__name__)
RESCAN_SECONDS = 3.0


class ProjectWatch:
    def __init__(self, vault: Vault, debounce: float) -> None:
        from watchdog.observers import Observer  # lazy: start-up

        self.vault, self.debounce = vault, debounce
        self.lock = threading.Lock()
        self.dirty: dict[str, float] = {}  # project -> time of its latest change
        self.watched: set[tuple[str, str]] = set()
        self.observer = Observer()
        self.observer.start()
        self._rescanned = 0.0
        self.rescan()

    def _handler(self, project: str, named: set[str]) -> Any:
        from watchdog.events import FileSystemEventHandler

        watch = self

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event: Any) -> None:
                if event.event_type in ("opened", "closed", "closed_no_write"):
                    return
                for raw in (event.src_path, getattr(event, "dest_path", "")):
                    path = raw.decode() if isinstance(raw, bytes) else str(raw)
                    name = Path(path).name
                    counts = Path(path).suffix.lower() in SUFFIXES and not name.startswith(".")
                    if path and (counts or path in named or event.is_directory):
                        with watch.lock:
                            watch.dirty[project] = time.monotonic()
                        return

        return Handler()

    def rescan(self) -> None:
        """Watch every path of every project extracted on this machine (new ones too)."""
        self._rescanned = time.monotonic()
        for registry in registries(self.vault.paths):
            for raw in registry.paths:
                path = Path(raw)
                if (registry.project, raw) in self.watched or not path.exists():
                    continue
                folder = path if path.is_dir() else path.parent
                named = set() if path.is_dir() else {str(path)}
                try:
                    handler = self._handler(registry.project, named)
                    self.observer.schedule(
                        handler, str(folder), recursive=path.is_dir(), event_filter=CHANGES
                    )
                except OSError as exc:  # e.g. out of inotify watches: say so, keep going
                    log.warning("cannot watch %s: %s", folder, exc)
                    continue
                self.watched.add((registry.project, raw))

    def run_due(self, status: dict[str, Any]) -> None:
        """Re-extract the projects whose changes have gone quiet."""
        from vault_brain.app.knowledge.extract import extract  # lazy: start-up

        if time.monotonic() - self._rescanned >= RESCAN_SECONDS:
            self.rescan()
        now = time.monotonic()
        with self.lock:
            due = [p for p, at in self.dirty.items() if now - at >= self.debounce]
            for project in due:
                del self.dirty[project]
        for project in due:
            try:
                result = extract(self.vault, [], project)
            except VaultBrainError as exc:  # a bad file or a lock: say so, keep watching
                status["last_error"] = {"at": now_iso(), "error": exc.one_line()}
                continue
            status["last_extract"] = {
                "at": now_iso(),
                "project": project,
                "changed": result.changed[:20],
                "items": result.items,
                "seconds": result.seconds,
            }

    def stop(self) -> None:
        self.observer.stop()
        self.observer.join(timeout=5)
