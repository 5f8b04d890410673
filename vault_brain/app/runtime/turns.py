"""Writing the proxy's turns behind its responses, so that no write delays a reply.

Two threads, each with its own `ProxyAPI` (its own lock and index handles), so that a slow
model call in a capture never holds up the recording of a turn:

- the recorder writes each turn (user, retrieval, assistant records, one transaction) in
  the order the responses finished. Feedback is not queued behind it: it waits for the
  turns of its own conversation queued before it (so it sees them), then is answered on
  the request's thread; the turns of other conversations never hold it up. The access
  counters of the memories a turn
  injected are added up in memory and written to the notes in one batch `ACCESS_EVERY`
  seconds after the first of them (and before feedback, and when closing): one write per
  note and one index update for many turns, instead of a write to five notes and a new
  index searcher for every turn. The `retrieval` line of each turn is in its transcript
  at once; what a kill loses is the counters of the last few seconds' turns;
- the capturer (in a process of its own when given a `CaptureProcess`, see
  `app.runtime.capture_process`) runs the flush (durable memories through the gate; the
  configured model reconciles when there is one) and the rolling summary of a
  conversation once it has been quiet for `idle` seconds (or `max_wait` after its first
  uncaptured turn): one flush, and one episode note, for a stretch of conversation rather
  than one per turn, and no capture work while the conversation is busy asking.

Both give way to requests: a job waits (up to `YIELD_AT_MOST` seconds) while a request is
being answered (`answering`), so that the work after one response does not compete with
the next request's retrieval for the interpreter. A request counts as answered from when
its body has been read (the server calls `answering` only then): a client that stalls its
body holds up nothing.

Closing records every turn still queued and writes the access counters, then captures
every conversation still waiting, for up to `CLOSE_BUDGET` seconds; what is left is in the
transcripts, and the conversation's next flush (or `vb flush -s ID`) captures it.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import TYPE_CHECKING

from vault_brain.app.runtime.capture_process import CaptureProcess, capture
from vault_brain.app.runtime.proxy import ProxyAPI, Turn, TurnResult
from vault_brain.domain.clock import access_stamp
from vault_brain.domain.errors import LockedError, VaultBrainError

if TYPE_CHECKING:
    from vault_brain.app.memory.credit import FeedbackResult

log = logging.getLogger("vault_brain.serve")

CAPTURE_IDLE = 20.0  # seconds a conversation is quiet before it is captured
CAPTURE_MAX_WAIT = 120.0  # ... or after its first uncaptured turn, however busy it is
CLOSE_BUDGET = 30.0  # seconds closing spends on the captures still waiting
ACCESS_EVERY = 5.0  # seconds access counters are added up before they are written
YIELD_AT_MOST = 1.0  # seconds a job waits for the requests being answered


class TurnWriter:
    def __init__(
        self,
        recorder: ProxyAPI,
        capturer: ProxyAPI | CaptureProcess,
        on_summary: Callable[[str, str], None] | None = None,
        *,
        idle: float = CAPTURE_IDLE,
        max_wait: float = CAPTURE_MAX_WAIT,
    ) -> None:
        self._recorder = recorder
        self._capturer = capturer
        self._on_summary = on_summary
        self.idle_seconds, self.max_wait = idle, max_wait
        self._records = ThreadPoolExecutor(max_workers=1, thread_name_prefix="vb-serve-record")
        # conversation -> (when its first uncaptured turn came, when it is due)
        self._waiting: dict[str, tuple[float, float]] = {}
        self._wake = threading.Condition()
        self._closing = False
        self._busy = False
        self._outstanding = 0  # turns queued or being recorded
        self._answering = 0  # requests being answered now
        self._last: dict[str, Future[TurnResult | None]] = {}  # session -> latest turn queued
        # path -> (retrievals not yet counted in the note, when the last one was);
        # changed under `_access_lock` (the recorder's thread, feedback, `close`)
        self._accessed: dict[str, tuple[int, str]] = {}
        self._access_timer: threading.Timer | None = None
        self._access_lock = threading.Lock()
        self._thread = threading.Thread(target=self._capture_loop, name="vb-serve-capture")
        self._thread.daemon = True
        self._thread.start()

    # -- what the server calls ---------------------------------------------------------------
    def hold(self) -> None:
        """A turn is on its way (its response is being sent): not idle until it is queued."""
        with self._wake:
            self._outstanding += 1

    def submit(self, turn: Turn, held: bool = False) -> Future[TurnResult | None]:
        """Queue a turn (returns at once; `held`: announced by `hold`); its conversation is
        captured once it has been quiet for a while."""
        if not held:
            self.hold()
        future = self._records.submit(self._record, turn)
        with self._wake:
            self._last[turn.session] = future
        future.add_done_callback(lambda done: self._recorded(turn.session, done))
        return future

    def _recorded(self, session: str, future: Future[TurnResult | None]) -> None:
        with self._wake:
            if self._last.get(session) is future:
                del self._last[session]

    def feedback(self, session: str, signal: str, timeout: float = 60.0) -> FeedbackResult:
        """Feedback for a conversation, once every turn of it queued before is recorded
        (the caller's thread; other conversations' turns do not delay it)."""
        with self._wake:
            last = self._last.get(session)
        if last is not None and wait([last], timeout).not_done:
            raise LockedError(
                f"the earlier turns of {session} are still being written",
                hint="try again in a moment",
            )
        self._write_access(give_way=False)  # the notes as feedback finds them: counted
        return self._recorder.feedback(signal, session)

    def announce_writes(
        self,
        writing: Callable[[list[str]], None],
        indexed: Callable[[list[str], dict[str, list[int] | None]], None],
    ) -> None:
        """Tell `writing` the paths each write is about to change, and `indexed` those it
        has indexed since (see `Vault.writing`)."""
        self._recorder.vault.writing, self._recorder.vault.indexed = writing, indexed
        if isinstance(self._capturer, CaptureProcess):
            self._capturer.writing, self._capturer.indexed = writing, indexed
        else:
            self._capturer.vault.writing, self._capturer.vault.indexed = writing, indexed

    def answering(self) -> Callable[[], None]:
        """A request is being answered: jobs wait (see the module docstring) until the
        function returned is called (once; later calls do nothing)."""
        with self._wake:
            self._answering += 1
        done = threading.Event()

        def answered() -> None:
            if not done.is_set():
                done.set()
                with self._wake:
                    self._answering -= 1
                    self._wake.notify_all()

        return answered

    @property
    def idle(self) -> bool:
        """Nothing queued, waiting or running (a test or a benchmark waits for this; access
        counters still being added up do not count)."""
        with self._wake:
            return not (self._outstanding or self._waiting or self._busy)

    def close(self) -> int:
        """Record every queued turn, then capture what waits (see the module docstring);
        returns how many conversations were left for their next flush."""
        self._records.shutdown(wait=True)
        with self._wake:
            self._closing = True
            waiting = len(self._waiting) + self._busy
            self._wake.notify_all()
        if waiting:  # (what a stop waits for, said before the wait)
            log.warning(
                "stopping: capturing %d conversation(s) first (at most %.0f s)",
                waiting,
                CLOSE_BUDGET,
            )
        if self._access_timer is not None:
            self._access_timer.cancel()
        self._write_access()
        if self._accessed:
            log.error("access counters of %d note(s) not written", len(self._accessed))
        self._thread.join()
        left = len(self._waiting)
        if left:
            log.warning(
                "%d conversation(s) not captured yet: their next turn (or `vb flush -s ID`) "
                "captures them",
                left,
            )
        self._recorder.close()
        self._capturer.close()
        return left

    # -- the two threads -----------------------------------------------------------------------
    def _give_way(self) -> None:
        """Wait while requests are being answered (at most `YIELD_AT_MOST` seconds)."""
        deadline = time.monotonic() + YIELD_AT_MOST
        with self._wake:
            while self._answering and not self._closing:
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                self._wake.wait(left)

    def _record(self, turn: Turn) -> TurnResult | None:
        result = None
        try:
            self._give_way()
            result = self._recorder.record_turn(turn, counters=False)
            if result.records and turn.memories:
                self._count_access([m.path for m in turn.memories])
        except VaultBrainError as exc:
            log.error("turn of %s not recorded: %s", turn.session, exc.one_line())
        except Exception:  # a bug: say so, and keep serving
            log.exception("turn of %s not recorded (internal error)", turn.session)
        finally:
            with self._wake:
                self._outstanding -= 1
                if result is not None and not result.repeated:
                    now = time.monotonic()
                    first, _ = self._waiting.get(turn.session, (now, now))
                    due = min(now + self.idle_seconds, first + self.max_wait)
                    self._waiting[turn.session] = (first, due)
                self._wake.notify_all()
        return result

    def _count_access(self, rels: list[str]) -> None:
        """Add a turn's retrievals to the counters to write (recorder's thread)."""
        stamp = access_stamp()
        with self._access_lock:
            for rel in rels:
                self._accessed[rel] = (self._accessed.get(rel, (0, ""))[0] + 1, stamp)
            if self._access_timer is None:
                self._access_timer = threading.Timer(ACCESS_EVERY, self._access_due)
                self._access_timer.daemon = True
                self._access_timer.start()

    def _access_due(self) -> None:
        with contextlib.suppress(RuntimeError):  # (closing: `close` writes them)
            self._records.submit(self._write_access)

    def _write_access(self, give_way: bool = True) -> None:
        """Write the access counters added up so far (recorder's thread, feedback's, or
        `close`)."""
        with self._access_lock:
            self._access_timer = None
            accessed, self._accessed = self._accessed, {}
        if not accessed:
            return
        try:
            if give_way:
                self._give_way()
            if isinstance(self._capturer, CaptureProcess):  # (its index commit, off our lock)
                self._capturer.record_access(accessed)
            else:
                self._recorder.record_access(accessed)
        except (VaultBrainError, OSError, ValueError) as exc:  # e.g. the vault locked: later
            why = exc.one_line() if isinstance(exc, VaultBrainError) else f"its process: {exc}"
            log.warning("access counters not written yet (%s)", why)
            with self._access_lock:
                for rel, (times, stamp) in accessed.items():
                    later = self._accessed.get(rel, (0, stamp))
                    self._accessed[rel] = (times + later[0], later[1])
                if self._access_timer is None and not self._closing:
                    self._access_timer = threading.Timer(ACCESS_EVERY, self._access_due)
                    self._access_timer.daemon = True
                    self._access_timer.start()
        except Exception:  # a bug: say so, and keep serving
            log.exception("access counters not written (internal error)")

    def _next(self) -> str | None:
        """The next conversation to capture, waiting until one is due; None to stop."""
        deadline: float | None = None
        with self._wake:
            while True:
                soonest = min(self._waiting, key=lambda s: self._waiting[s][1], default=None)
                if self._closing:  # everything waiting is due now, within the budget
                    deadline = deadline or time.monotonic() + CLOSE_BUDGET
                    if soonest is None or time.monotonic() > deadline:
                        return None
                elif soonest is None or self._waiting[soonest][1] > time.monotonic():
                    wait = None if soonest is None else self._waiting[soonest][1]
                    self._wake.wait(None if wait is None else wait - time.monotonic())
                    continue
                del self._waiting[soonest]
                self._busy = True
                return soonest

    def _capture_loop(self) -> None:
        while (session := self._next()) is not None:
            try:
                self._capture(session)
            finally:
                with self._wake:
                    self._busy = False

    def _capture(self, session: str) -> None:
        self._give_way()
        if isinstance(self._capturer, CaptureProcess):
            summary = self._capturer.capture(session)
        else:
            summary = capture(self._capturer, session)
        if summary is not None and self._on_summary is not None:
            self._on_summary(session, summary)
