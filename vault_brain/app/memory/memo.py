"""Per-text memos: the gate's redaction and the token count of a memory on the proxy's read
path (`vb serve`), and the learned check's verdict on what a conversation leaves (a
compaction's summary repeats the decisions of the one before), remembered by the text
itself, so a text seen again is not judged and counted again. Keyed by the exact text, a
changed note is a new key: the results are what `redact_spans`, the counter and the model
give, only not recomputed."""

from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
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


_learned: OrderedDict[str, str | None] = OrderedDict()


def learned(
    texts: Sequence[str], judge: Callable[[list[str]], list[str | None]]
) -> list[str | None]:
    """`judge(texts)` (the learned check's kind per text, or None), remembered by text: only
    texts not seen before are judged, in one batch."""
    fresh = [t for t in dict.fromkeys(texts) if t not in _learned]
    found = dict(zip(fresh, judge(fresh), strict=True)) if fresh else {}
    for text in texts:
        if text not in found:
            found[text] = _learned[text]
            _learned.move_to_end(text)
    _learned.update((t, found[t]) for t in fresh)
    while len(_learned) > MAX_REMEMBERED:
        _learned.popitem(last=False)
    return [found[t] for t in texts]


def forget_learned() -> None:
    """Forget the learned check's remembered verdicts (the model they came from is gone)."""
    _learned.clear()
