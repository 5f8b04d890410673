"""Recording agent retrievals behind the answers, for long-lived processes (MCP, the proxy,
sessions).

Recording a retrieval writes front matter (access_count, last_accessed) that the index must
then re-read, and a line in the session's transcript. A server that did this before each
answer would pay for it on every call, so retrievals are queued and recorded: after a quiet
moment (`flush_delay`), before any call that reads or changes credit (so feedback sees
them), at once when many are waiting, and when the process stops.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from vault_brain.app.credit import Retrieved, record_retrieval
from vault_brain.app.vault import Vault
from vault_brain.domain.clock import now_iso
from vault_brain.domain.errors import LockedError, VaultBrainError
from vault_brain.storage.files import vault_lock

log = logging.getLogger("vault_brain.access")

FLUSH_DELAY = 1.0
MAX_PENDING = 16
MAX_PENDING_SECONDS = 5.0


@dataclass(frozen=True)
class Ref:
    """What recording needs of a retrieved note."""

    id: str
    path: str


class AccessRecorder:
    """Queues retrievals of one session and records them when it is safe and cheap.

    `lock` is the caller's own per-process lock (one call at a time); `current` returns the
    vault to record into. The idle timer takes the lock itself."""

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
        self._since = 0.0
        self._timer: threading.Timer | None = None

    @property
    def pending(self) -> int:
        return len(self._pending)

    def defer(self, vault: Vault, query: str, hits: Sequence[Retrieved], tool: str) -> None:
        """Queue a retrieval (the caller holds the lock); a long queue (an agent that never
        pauses) is recorded at once, so little is pending when the process stops."""
        if not hits:
            return
        extra = {"tool": tool, "called": now_iso()}
        self._pending.append((query, [Ref(h.id, h.path) for h in hits], extra))
        if len(self._pending) == 1:
            self._since = time.monotonic()
        if (
            len(self._pending) >= MAX_PENDING
            or time.monotonic() - self._since >= MAX_PENDING_SECONDS
        ):
            self.record(vault, wait=False)
        else:
            self._schedule()

    def _schedule(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = threading.Timer(self.flush_delay, self._on_timer)
        self._timer.daemon = True
        self._timer.start()

    def _on_timer(self) -> None:
        with self._lock:
            vault = self._current()
            if vault is not None:
                self.record(vault, wait=False)

    def record(self, vault: Vault, wait: bool) -> None:
        """Record what is pending (the caller holds the lock). Without `wait`, a vault locked
        by another writer keeps the queue for a later try instead of delaying the answer."""
        if not self._pending:
            return
        if not wait:
            try:
                with vault_lock(vault.paths, timeout=0):
                    pass
            except LockedError:
                self._schedule()
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
        if touched:
            vault.refresh(sorted(touched))

    def close(self) -> None:
        """Stop the timer and record everything still pending, waiting for the lock."""
        if self._timer is not None:
            self._timer.cancel()
        with self._lock:
            vault = self._current()
            if vault is not None:
                with contextlib.suppress(VaultBrainError):
                    self.record(vault, wait=True)
