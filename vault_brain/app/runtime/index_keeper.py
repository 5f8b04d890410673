"""Keeping the index in line with the files for `vb serve`, whose reads do not reconcile: a
watcher (watchdog, as `vb watch`) and a thread of its own, see `IndexKeeper`."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from vault_brain.app.api import MemoryAPI
from vault_brain.app.memory.vault import Vault
from vault_brain.app.runtime.proxy import ProxyAPI
from vault_brain.domain.errors import VaultBrainError
from vault_brain.storage.index.scan import ReconcileResult, is_ignored_rel, unchanged
from vault_brain.storage.index.watch import VaultWatch

log = logging.getLogger("vault_brain.serve")

DEBOUNCE = 0.3  # seconds the IndexKeeper lets changes settle (vb's own writes index themselves)
SETTLE_TIMEOUT = 2.0  # seconds a read waits for the watcher before reconciling instead
IN_FLIGHT_AT_MOST = 10.0  # seconds a write of vb serve's own may keep reads from its paths
MAX_FRESH = 10_000  # stamps of the proxy's own writes remembered
LATE_AT_MOST = 3  # watcher syncs timed out in a row before every read reconciles instead
SAFETY_WALK = 60.0  # seconds between walks over the files for what no event reported


class IndexKeeper:
    """Keeps the index in line with the files for the proxy's reads, which do not reconcile.

    A watchdog watcher (`storage.index.watch.VaultWatch`) reports which files changed; a
    thread of the keeper's own (with its own `ProxyAPI`) indexes them once a burst of
    changes has settled, and `settle()`, called before each read, first waits for the
    watcher to report every change made before it, then indexes what is still pending
    itself: a change that lands between an event and a read is still seen. Where the
    system gives no watcher (e.g. inotify's limit is reached), or a read waits for it in
    vain (three times in a row: from then on), `settle()` reconciles (a walk over the
    files) instead: slower, never stale. Every `SAFETY_WALK` seconds the thread walks the
    files anyway, for changes no event reports (a vault on a network share written by
    another machine)."""

    def __init__(
        self,
        api: ProxyAPI,
        debounce: float = DEBOUNCE,
        settle_timeout: float = SETTLE_TIMEOUT,
        on_batch: Callable[[ReconcileResult, bool, float], None] | None = None,
    ) -> None:
        self.api, self.debounce, self.settle_timeout = api, debounce, settle_timeout
        self.on_batch = on_batch
        """Called after each batch indexed, with the result, whether it was a full
        reconcile, and the seconds it took (`vb watch` reports and counts them)."""
        self._apply_lock = threading.Lock()
        self._stop = threading.Event()
        # path -> (writes of vb serve's own under way, until when they may hold reads)
        self._in_flight: dict[str, tuple[int, float]] = {}
        self._fresh: dict[str, list[int] | None] = {}  # path -> stamp its writer indexed
        self.changes = 0
        """How many times changes not the proxy's own were indexed (or found indexed)."""
        self._late = 0  # watcher syncs that timed out in a row
        self._flight_lock = threading.Lock()
        self.watch: VaultWatch | None = VaultWatch(api.vault.paths)
        try:
            self.watch.start()
        except OSError as exc:
            log.warning(
                "cannot watch the vault (%s): each request reconciles the index first (slower)",
                exc,
            )
            self.watch.stop()
            self.watch = None
        self.api.reconcile_now()  # once watching has begun: no change made meanwhile is missed
        self._thread = threading.Thread(target=self._run, name="vb-serve-index", daemon=True)
        self._thread.start()

    def settle(self) -> None:
        """Return once every change made to the files before the call is in the index (as
        far as the index can be written: a locked one is written by the next read)."""
        if self.watch is None or self._late >= LATE_AT_MOST:
            self._apply(full=True)
            self.changed()
            return
        if self.watch.sync(self.settle_timeout):
            self._late = 0
        else:
            self._late += 1
            log.warning(
                "the vault's watcher did not answer in time: reconciling instead%s",
                "; from now on, before every request" if self._late >= LATE_AT_MOST else "",
            )
            self.watch.lost_events()
        self._apply(reading=True)

    def changed(self) -> None:
        """Readers are to see the index as it is now (e.g. after feedback changed credit)."""
        with self._flight_lock:
            self.changes += 1

    def writing(self, rels: list[str]) -> None:
        """vb serve itself is about to write these paths, and indexes them once written
        (`indexed`): until then the keeper's thread leaves them to their writer (see
        `Vault.writing`); a read indexes them only if the file changed on disk."""
        until = time.monotonic() + IN_FLIGHT_AT_MOST
        with self._flight_lock:
            for rel in (r for r in rels if not is_ignored_rel(r)):  # (notes only)
                self._in_flight[rel] = (self._in_flight.get(rel, (0, 0.0))[0] + 1, until)

    def indexed(self, rels: list[str], stamps: dict[str, list[int] | None]) -> None:
        """vb serve's own write of these paths is indexed (or failed to be): `stamps` says
        how the index holds each now, so that the watcher's report of that very write
        (which may come later) costs a read nothing."""
        with self._flight_lock:
            for rel in rels:
                count, until = self._in_flight.pop(rel, (0, 0.0))
                if count > 1:
                    self._in_flight[rel] = (count - 1, until)
            if len(self._fresh) > MAX_FRESH:
                self._fresh.clear()
            self._fresh.update(stamps)

    def _held(self, batch: set[str], reading: bool) -> set[str]:
        """The paths of `batch` that a write of vb serve's own has indexed as they are on
        disk, and (but for a read) those it is still writing. A read indexes those too:
        their events may be a person's edit made before it, and a file's stamp shows
        what changed whoever wrote it (a write still under way is not on disk yet)."""
        now = time.monotonic()
        with self._flight_lock:
            held = (
                set()
                if reading
                else {r for r in batch if self._in_flight.get(r, (0, 0.0))[1] > now}
            )
            fresh = {r: self._fresh[r] for r in batch - held if r in self._fresh}
        paths = self.api.vault.paths
        done = {r for r, st in fresh.items() if unchanged(paths, [r], {r: st} if st else {})}
        return held | done

    def _run(self) -> None:
        walked = time.monotonic()
        while not self._stop.wait(self.debounce):
            if time.monotonic() - walked >= SAFETY_WALK and self.watch is not None:
                self._apply(full=True)  # what no event reports (e.g. a network share)
                walked = time.monotonic()
            busy = self.watch is not None and self.watch.state.due(self.debounce)
            if busy and not self._apply():
                self._stop.wait(1.0)  # e.g. a locked index: try again in a moment

    def _apply(self, full: bool = False, reading: bool = False) -> bool:
        """Index what the watcher reported (everything, with `full` or after lost events),
        except, but for a `reading` (`settle`), what vb serve's own writes are still
        writing; False when the index could not be written (what was taken is pending
        again)."""
        with self._apply_lock:
            batch: set[str] = set()
            if self.watch is not None:
                batch, reported = self.watch.state.take()
                full = full or reported
                held = self._held(batch, reading)
                batch -= held
                with self._flight_lock:  # (those indexed already are done with)
                    held = {r for r in held if r in self._in_flight}
                if held:
                    self.watch.state.put_back(held)
            if not batch and not full:
                return True
            started = time.perf_counter()
            try:
                result = self.api.reconcile_now() if full else self.api.reindex(sorted(batch))
            except Exception as exc:  # e.g. the index locked by a rebuild: next time
                if self.watch is not None:
                    self.watch.state.put_back(batch, full)
                if isinstance(exc, VaultBrainError):
                    log.warning("index not brought up to date: %s", exc.one_line())
                else:  # a bug: say so, and keep serving
                    log.exception("index not brought up to date (internal error)")
                return False
            self.changed()
            if self.on_batch is not None:
                self.on_batch(result, full, time.perf_counter() - started)
            return True

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        if self.watch is not None:
            self.watch.stop()
        self.api.close()


def keep_index(api: MemoryAPI) -> None:
    """Keep a live API's index current from a vault watcher's reports instead of a walk over
    every file before each call (at 10k notes, most of a warm MCP search). Reads still see
    every change made before them."""
    if api.is_live and api.keeper is None:
        kept = Vault(api.vault.paths, api.vault.env)
        kept.index.merge_later = api.vault.index.merge_later
        api.keeper = IndexKeeper(ProxyAPI(kept))
        api.vault.kept = True  # this API's writes: indexed by the keeper's thread
