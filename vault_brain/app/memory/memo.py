"""Per-text memos for the proxy's read path (`vb serve`): the gate's redaction and the token
count of a memory, remembered by the text itself, so a note retrieved again (unchanged)
is not judged and counted again. Keyed by the exact text, a changed note is a new key:
the results are what `redact_spans` and the counter give, only not recomputed."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from functools import lru_cache

from vault_brain.domain.gate.redaction import redact_spans
from vault_brain.storage.tokens import get_counter

MAX_REMEMBERED = 4096


@lru_cache(maxsize=MAX_REMEMBERED)
def _redacted(text: str, only: tuple[str, ...] | None) -> tuple[str, tuple[tuple[str, int], ...]]:
    safe, found = redact_spans(text, only)
    return safe, tuple(found.items())


def redacted(text: str, only: tuple[str, ...] | None = None) -> tuple[str, Counter[str]]:
    """`redact_spans(text, only)`, remembered (a fresh Counter each time: callers may change
    it)."""
    safe, found = _redacted(text, only)
    return safe, Counter(dict(found))


def token_count(text: str) -> int:
    """`get_counter().count(text)`, remembered for the counter in use."""
    return _counted(get_counter().count, text)


@lru_cache(maxsize=MAX_REMEMBERED)
def _counted(count: Callable[[str], int], text: str) -> int:
    return count(text)
