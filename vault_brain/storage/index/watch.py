"""The watchdog side of `vb watch` and `vb serve`: file events collected for debouncing,
the status file (`.vb/watch.json`) the watcher keeps and `vb status` reads, and `VaultWatch`,
a watcher that can tell when every change made so far has been reported.

Events are collected per path; a move's destination counts as a change (editors and Obsidian
save through a temp file and a rename); directory moves and deletes ask for a full reconcile,
and so does anything watchdog warns about (e.g. the kernel's event queue overflowed: events
were lost).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import socket
import threading
import time
import warnings
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer

from vault_brain.storage.files import TEMP_SUFFIX, write_cache
from vault_brain.storage.index.scan import is_ignored_rel
from vault_brain.storage.paths import VaultPaths

# watchdog's inotify backend warns ("Callback with id ... already exists ... It will be
# Overwritten") when a folder made and renamed in quick succession (an index generation's
# MAIN.tmp) is watched again. The new watch replacing the old is what vb wants; the warning
# reached the terminal of `vb serve` and `vb watch`, even ahead of `vb serve`'s ready line.
warnings.filterwarnings(
    "ignore", message="Callback with id", category=RuntimeWarning, module=r"watchdog\."
)

HEARTBEAT_SECONDS = 2.0
STALE_AFTER_SECONDS = 10.0


@dataclass
class WatchState:
    pending: set[str] = field(default_factory=set)
    full: bool = False
    last_event: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self) -> tuple[set[str], bool]:
        """The paths changed and whether everything is to be reconciled; both cleared."""
        with self.lock:
            batch, full = self.pending, self.full
            self.pending, self.full = set(), False
        return batch, full

    def put_back(self, rels: set[str], full: bool = False) -> None:
        """Paths taken but not indexed after all: pending again."""
        with self.lock:
            self.pending.update(rels)
            self.full = self.full or full

    def due(self, debounce: float) -> bool:
        """Changes that have been quiet for `debounce` seconds are waiting."""
        with self.lock:
            quiet = time.monotonic() - self.last_event >= debounce
            return bool(self.pending or self.full) and quiet


# The events that can change a file. Opening and closing unwritten are left out: they are
# asked of the kernel only when listed, and every read of the index (and every lock taken)
# made several, each costing the watching process time under its interpreter lock.
CHANGES = [
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileClosedEvent,
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
]


def event_handler(
    paths: VaultPaths, state: WatchState, on_mark: Callable[[str, str], bool] | None = None
) -> Any:
    """A watchdog handler that records the vault paths that changed in `state`; each event's
    path and type are first offered to `on_mark` (True: a mark's, nothing more to do)."""
    root = os.path.normpath(str(paths.root))
    prefix = root.rstrip(os.sep) + os.sep

    def rel_of(path: str | bytes) -> str | None:
        text = os.path.normpath(os.fsdecode(path))  # (events come many a second: no pathlib)
        if not text.startswith(prefix):
            return None
        rel = text[len(prefix) :]
        return rel.replace(os.sep, "/") if os.sep != "/" else rel

    class Handler(FileSystemEventHandler):
        def on_any_event(self, event: Any) -> None:
            if event.event_type in ("opened", "closed_no_write"):
                return
            if on_mark is not None and on_mark(os.fsdecode(event.src_path), event.event_type):
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


class VaultWatch:
    """A watchdog observer on the vault feeding `state`, and `sync`: wait until every change
    made to the files before the call has been reported (so a reader that applies `state`
    afterwards misses none).

    `sync` writes a byte to a mark file of its own in `.vb/` and waits for that write's event:
    the kernel reports one watch's events in the order they happened, so once it arrives,
    every earlier change has arrived too. One mark is in flight at a time (the kernel merges
    two identical unread events into one), and a sync that began before another one's mark
    was written is answered by it."""

    def __init__(self, paths: VaultPaths) -> None:
        self.paths = paths
        self.state = WatchState()
        self._observer: Any = None
        self._mark = ""
        self._fd: int | None = None
        self._seen = 0
        self._cond = threading.Condition()
        self._sync_lock = threading.Lock()
        self._synced_at = 0.0

    def start(self) -> None:
        """Start watching (an OSError when the system cannot watch the vault, e.g. inotify's
        watch limit)."""
        self._new_mark()
        observer = Observer()
        handler = event_handler(self.paths, self.state, self._on_mark)
        observer.schedule(handler, str(self.paths.root), recursive=True, event_filter=CHANGES)
        observer.start()
        self._observer = observer
        _WATCHES.add(self)

    def _new_mark(self) -> None:
        """A fresh mark file (named like a temp file, so a killed server's is cleaned up)."""
        self._close_mark()
        self.paths.vb_dir.mkdir(parents=True, exist_ok=True)
        name = f".watch-mark.{os.getpid()}.{secrets.token_hex(4)}{TEMP_SUFFIX}"
        path = self.paths.vb_dir / name
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with self._cond:
            self._mark = str(path)

    def _close_mark(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
            with contextlib.suppress(OSError):
                os.unlink(self._mark)

    def _on_mark(self, path: str, kind: str) -> bool:
        if path != self._mark:
            return False
        if kind == "modified":  # (only `sync`'s writes: never the file's creation)
            with self._cond:
                self._seen += 1
                self._cond.notify_all()
        return True

    def lost_events(self) -> None:
        """Events may have been lost: the next reader reconciles everything."""
        with self.state.lock:
            self.state.full = True
            self.state.last_event = time.monotonic()

    def sync(self, timeout: float) -> bool:
        """True once every change made before this call has been reported in `state`; False
        if that was not seen within `timeout` seconds (the caller reconciles instead)."""
        arrived = time.monotonic()
        with self._sync_lock:
            if self._synced_at > arrived or self._fd is None:
                return self._fd is not None
            with self._cond:
                before = self._seen
            written = time.monotonic()
            os.pwrite(self._fd, b".", 0)
            with self._cond:
                seen = self._cond.wait_for(lambda: self._seen > before, timeout)
            if seen:
                self._synced_at = written
            else:  # a late event of this mark must not answer a later sync
                self._new_mark()
            return seen

    def stop(self) -> None:
        _WATCHES.discard(self)
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
            self._observer = None
        with self._sync_lock:
            self._close_mark()


_WATCHES: weakref.WeakSet[VaultWatch] = weakref.WeakSet()


class _LostEvents(logging.Handler):
    """watchdog says what went wrong only in its log (e.g. "Inotify queue overflowed"): any
    warning from it means events may be missing, so every running VaultWatch reconciles."""

    def emit(self, record: logging.LogRecord) -> None:
        for watch in list(_WATCHES):
            watch.lost_events()


_watchdog_log = logging.getLogger("watchdog")
_watchdog_log.addHandler(_LostEvents(logging.WARNING))


def _prompt_get(self: Any) -> Any:
    """watchdog's `DelayedQueue.get`, without its stall: inotify's events pass through a
    queue that holds a move's first half for 0.5 s to pair it with its second, and `get`
    slept those 0.5 s even when the pair arrived a moment later (every event behind it
    waited, and so did `VaultWatch.sync`: one such stall per burst of atomic saves). Here
    it waits on the queue's condition instead, so the pair is returned as soon as it is
    complete; what is returned, and when an unpaired half is, do not change."""
    delay = getattr(self, "delay", None)
    delay = getattr(self, "delay_sec", 0.5) if delay is None else delay
    with self._not_empty:
        while True:
            while not self._queue and not self._closed:
                self._not_empty.wait()
            if self._closed:
                return None
            head, inserted, delayed = self._queue[0]
            left = inserted + delay - time.monotonic() if delayed else 0.0
            if left <= 0:
                self._queue.popleft()
                return head
            self._not_empty.wait(left)  # a `put` (the pair) wakes it


def _patch_delayed_queue() -> None:
    with contextlib.suppress(ImportError):
        from watchdog.utils.delayed_queue import DelayedQueue

        probe: DelayedQueue[Any] = DelayedQueue(0.5)
        if all(hasattr(probe, a) for a in ("_not_empty", "_queue", "_closed")):
            DelayedQueue.get = _prompt_get  # type: ignore[method-assign]


_patch_delayed_queue()


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
