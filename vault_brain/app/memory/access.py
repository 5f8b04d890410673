"""Recording agent retrievals behind the answers, for long-lived processes (`vb mcp`,
`vb session`).

Recording a retrieval writes a line in the session's transcript and front matter
(access_count, last_accessed) that the index must then re-read. The line is written at once
(feedback needs nothing else: it finds a turn's memories there); the counters are added up in
memory and written to the notes in one transaction behind the answers, never inside a call
(an agent that never pauses does not pay for them): after a quiet moment (`flush_delay`) --
while the person reads the reply and types, or while the model thinks -- or by the timer
once the oldest has waited `MAX_PENDING_SECONDS`, before any call that reads credit or
changes notes (`_use` "wait"), and when the process ends. A vault another writer holds when
a line is due keeps the whole retrieval queued for the timer's next try.

Nothing is lost on a kill: before the first line whose counters wait, a marker
(`VaultPaths.access_marker`) names where in the transcript they begin and the process that
holds them; the transaction that writes the counters removes it. A marker whose process is
gone is finished by `recover_counters` (at the next `vb session` or `vb mcp` start); until
then no other process marks that session (its retrievals are counted with their lines).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vault_brain.app.memory.credit import Retrieved, count_access, record_retrieval
from vault_brain.app.memory.vault import Vault
from vault_brain.domain.clock import access_stamp, now_iso
from vault_brain.domain.errors import LockedError, VaultBrainError
from vault_brain.domain.sessions.records import record_kind
from vault_brain.storage.files import atomic_write, vault_lock

log = logging.getLogger("vault_brain.access")

FLUSH_DELAY = 1.0
MAX_PENDING_SECONDS = 5.0
DEFERRED = "deferred"  # a retrieval line's `counters`: written later (see the module doc)

Counts = dict[str, tuple[int, str]]  # path -> (retrievals not counted yet, the last one's time)


@dataclass(frozen=True)
class Ref:
    """What recording needs of a retrieved note."""

    id: str
    path: str


class AccessRecorder:
    """Queues retrievals of one session and records them when it is safe and cheap.

    `lock` is the caller's own per-process lock (one call at a time); `current` returns the
    vault to record into. The idle timer takes the lock itself. The transcript line of each
    retrieval is written at once and only its counters wait (see the module doc)."""

    def __init__(
        self,
        session: str,
        lock: threading.Lock,
        current: Callable[[], Vault | None],
        source: str,
        flush_delay: float = FLUSH_DELAY,
    ) -> None:
        self.session = session
        self.source = source
        self.flush_delay = flush_delay
        self._lock = lock
        self._current = current
        self._pending: list[tuple[str, list[Ref], dict[str, Any]]] = []
        self._counts: Counts = {}
        self._marked = False  # this process's marker is on disk
        self._since = 0.0
        self._last = 0.0  # when the latest retrieval was
        self._timer: threading.Timer | None = None

    @property
    def pending(self) -> int:
        return len(self._pending) + len(self._counts)

    def defer(self, vault: Vault, query: str, hits: Sequence[Retrieved], tool: str) -> None:
        """Record a retrieval's line now and its counters later (the caller holds the lock);
        while another writer holds the vault, both later."""
        if not hits:
            return
        extra = {"tool": tool, "called": now_iso()}
        try:
            self.retrieved(vault, query, hits, self.source, extra)
            return
        except LockedError:  # another writer holds the vault: line and counters later
            pass
        self._pending.append((query, [Ref(h.id, h.path) for h in hits], extra))
        self._queued()

    def retrieved(
        self,
        vault: Vault,
        query: str,
        hits: Sequence[Retrieved],
        source: str,
        extra: dict[str, Any],
    ) -> None:
        """The retrieval's line in the transcript now, its counters later (the caller holds
        the lock)."""
        stamp, self._last = access_stamp(), time.monotonic()
        if not self._marked:
            self._mark(vault)
        if not self._marked:  # no marker, no promise: the counters go with the line
            record_retrieval(vault, self.session, query, hits, source, extra)
            return
        extra = {**extra, "counters": DEFERRED, "accessed": stamp}
        record_retrieval(vault, self.session, query, hits, source, extra, counters=False)
        for hit in hits:
            self._counts[hit.path] = (self._counts.get(hit.path, (0, ""))[0] + 1, stamp)
        self._queued()

    def _mark(self, vault: Vault) -> None:
        """Write the marker: the counters of the lines from here on wait in this process.
        Not over another process's marker of the same session (one still running, or one a
        kill left for `recover_counters`)."""
        owner = _marker_pid(vault.paths.access_marker(self.session))
        if owner is not None and owner != os.getpid():
            return
        path = vault.paths.transcript(self.session)
        try:
            offset = path.stat().st_size if path.exists() else 0
            marker = {"session": self.session, "offset": offset, "pid": os.getpid()}
            atomic_write(vault.paths.access_marker(self.session), json.dumps(marker), durable=False)
        except (OSError, VaultBrainError) as exc:
            log.warning("access counters written with each retrieval: %s", exc)
            return
        self._marked = True

    def _queued(self) -> None:
        """Something waits: the timer records it after a quiet moment, at the latest when
        the oldest has waited `MAX_PENDING_SECONDS` (e.g. while the model thinks or a tool
        runs), never in the caller's call."""
        if not self._since:
            self._since = time.monotonic()
        waited = time.monotonic() - self._since
        self._schedule(min(self.flush_delay, max(0.0, MAX_PENDING_SECONDS - waited)))

    def _schedule(self, delay: float | None = None) -> None:
        if self._timer is not None:
            self._timer.cancel()
        wait = self.flush_delay if delay is None else delay
        self._timer = threading.Timer(wait, self._on_timer)
        self._timer.daemon = True
        self._timer.start()

    def _on_timer(self) -> None:
        with self._lock:
            vault = self._current()
            if vault is not None:
                self.record(vault, wait=False)
                quiet = time.monotonic() - self._last >= self.flush_delay
                if quiet and not self.pending:
                    vault.index.merge()  # (what `Index.merge_later` writes left unmerged)

    def record(self, vault: Vault, wait: bool) -> None:
        """Record what is pending (the caller holds the lock). Without `wait`, a vault locked
        by another writer keeps the queue for a later try instead of delaying the answer."""
        if not self._pending and not self._counts:
            return
        if not wait:
            try:
                with vault_lock(vault.paths, timeout=0):
                    pass
            except LockedError:
                self._schedule()
                return
        if self._counts:
            self._write_counts(vault)
        if not self._pending:
            return
        done, touched = 0, set[str]()
        try:
            for query, refs, extra in self._pending:
                record_retrieval(vault, self.session, query, refs, source=self.source, extra=extra)
                done += 1
                touched.update(r.path for r in refs)
        except LockedError as exc:
            log.warning("access not recorded yet (will retry): %s", exc.message)
            self._schedule()
        except VaultBrainError as exc:  # e.g. a disk error: drop what cannot be written
            log.error("access not recorded: %s", exc.message)
            done = len(self._pending)
        finally:
            del self._pending[:done]
            self._since = 0.0 if not self.pending else self._since
        if touched:
            vault.refresh(sorted(touched))

    def _write_counts(self, vault: Vault) -> None:
        """The counters added up so far, and the marker's removal, in one transaction."""
        counts, marker = self._counts, vault.paths.access_marker(self.session)
        try:
            with vault.transaction(durable=False) as tx:
                skipped = count_access(tx, vault, counts)
                if self._marked and tx.exists(marker):
                    tx.delete(marker)
        except LockedError as exc:
            log.warning("access counters not written yet (will retry): %s", exc.message)
            self._schedule()
            return
        except VaultBrainError as exc:  # e.g. a disk error: dropped, as `record` drops lines
            log.error("access counters not written: %s", exc.message)
            self._counts, self._since = {}, 0.0
            return
        self._counts, self._marked, self._since = {}, False, 0.0
        vault.refresh(sorted(set(counts) - set(skipped)))

    def close(self) -> None:
        """Stop the timer and record everything still pending, waiting for the lock."""
        if self._timer is not None:
            self._timer.cancel()
        with self._lock:
            vault = self._current()
            if vault is not None:
                with contextlib.suppress(VaultBrainError):
                    self.record(vault, wait=True)
                vault.index.merge()


def recover_counters(vault: Vault) -> list[str]:
    """Write the access counters that a `vb session` or `vb mcp` killed before writing them
    left waiting (its marker names where they begin; each line still has its ids, paths and
    time), and remove the marker, in one transaction; a marker whose process still runs is
    left to it. Returns the sessions recovered."""
    folder = vault.paths.access_dir
    recovered = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else ():
        try:
            session, offset, pid = _read_marker(path)
            if vault.paths.access_marker(session) != path:
                raise ValueError("a marker named for another session")
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("%s ignored: %s", path.name, exc)
            continue
        if _alive(pid):  # (its process writes them; or ours: the recorder's own)
            continue
        counts = _deferred(vault, session, offset)
        try:
            with vault.transaction(durable=False) as tx:
                skipped = count_access(tx, vault, counts)
                if tx.exists(path):
                    tx.delete(path)
        except VaultBrainError as exc:  # e.g. locked: the marker stays for the next start
            log.warning("access counters of session %s not recovered yet: %s", session, exc)
            continue
        vault.refresh(sorted(set(counts) - set(skipped)))
        recovered.append(session)
    return recovered


def _deferred(vault: Vault, session: str, offset: int) -> Counts:
    """The counters of the retrieval lines from `offset` on whose counters were deferred."""
    counts: Counts = {}
    try:
        with open(vault.paths.transcript(session), "rb") as handle:
            handle.seek(offset)
            lines = handle.read().splitlines()
    except OSError:  # (archived, or never written): nothing to count
        return counts
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict) or record_kind(record) != "retrieval":
            continue
        if record.get("counters") != DEFERRED or not isinstance(record.get("paths"), list):
            continue
        stamp = str(record.get("accessed") or record.get("ts") or access_stamp())
        for rel in record["paths"]:
            if isinstance(rel, str):
                counts[rel] = (counts.get(rel, (0, ""))[0] + 1, stamp)
    return counts


def _read_marker(path: Path) -> tuple[str, int, int]:
    """A marker's session, transcript offset and process (OSError, ValueError, KeyError or
    TypeError when it cannot be read)."""
    marker = json.loads(path.read_bytes())
    return str(marker["session"]), int(marker["offset"]), int(marker["pid"])


def _marker_pid(path: Path) -> int | None:
    """The process a marker names, or None (no marker, or one that cannot be read)."""
    try:
        return _read_marker(path)[2]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True
