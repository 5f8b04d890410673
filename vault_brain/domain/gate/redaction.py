"""Redaction by span: what the gate refuses in a text, marked where it is and nowhere else.

The gate (`domain.gate`) decides what is refused; its own `redact` replaces a refused
sentence, line or block whole, which on a title or a search snippet hides everything around
the offending words. Here each line the gate redacted is narrowed to the shortest run of
words the gate still refuses (an inline code span is one word; an instruction to the
assistant, its whole sentence), the rest of the line shown as written; what precedes and
what follows that run are judged again on their own. A block the gate refused whole (a code
fence, a private key) stays one marker. `only` limits redaction to some reasons (a person's own
note reaches an agent with its secrets redacted and nothing else).
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Collection

from vault_brain.domain.gate import (
    LABELS,
    MAX_SCAN_CHARS,
    holds_secret,
    judge,
    may_hold_secret,
    redact,
)
from vault_brain.domain.text import split_sentences

# Reasons that speak of a text's size, never of a span in it.
_SIZE = ("fragment", "wall")
# A word, or an inline code span with what clings to it (one unit: a span is never cut open).
_WORD = re.compile(r"(`+)[^`]*?\1\S*|\S+")
# What a title (a name, not a text to run) is redacted for: a title shaped like code, a
# command or tool output ("Import notes") is still only a name.
TITLE_REASONS = ("injection", "exfiltration", "secret")
# An instruction to the assistant is its whole sentence (the verb the gate recognises and the
# orders that follow it): redacted by sentence, the other sentences kept.
_WHOLE_SENTENCE = ("injection", "exfiltration")
_MARKER = re.compile(r"\[redacted: ([a-z ]+)\]")
# What the gate refuses as a whole block or line, whatever a line of it holds.
_BLOCKS = {"code", "command", "tool_output"}
_REASON_OF = {label: reason for reason, label in LABELS.items()}


def redact_spans(text: str, only: Collection[str] | None = None) -> tuple[str, Counter[str]]:
    """`text` with each refused span (of a reason in `only`, default every reason) replaced
    by the gate's marker, and what was redacted, by reason."""
    if len(text) > MAX_SCAN_CHARS:  # the lines that fit, then one marker (as the gate cuts)
        head, found = redact_spans(text[: _cut(text)], only)
        found["wall"] += 1
        return f"{head}\n[redacted: {LABELS['wall']}]".lstrip("\n"), found
    if only is not None and set(only) <= {"secret"} and not may_hold_secret(text):
        return text, Counter()  # (a person's note for an agent: no secret, nothing to judge)
    only = None if only is None else {*only, "wall"}  # (a size, never left unjudged)
    safe, found = redact(text)
    if not found or (only is not None and not set(found) & only and not set(found) & _BLOCKS):
        return text, Counter()
    source, shown = text.split("\n"), safe.split("\n")
    out: list[str] = []
    counted: Counter[str] = Counter()
    matcher = difflib.SequenceMatcher(None, source, shown, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            out += source[i1:i2]
        elif op == "replace" and i2 - i1 == j2 - j1:
            for line, gated in zip(source[i1:i2], shown[j1:j2], strict=True):
                out.append(_narrowed_line(line, gated, only, counted))
        else:  # a block the gate refused whole (or a line it dropped): one marker, kept
            kept = _reasons_in(shown[j1:j2])
            if only is not None and not kept & set(only):
                out += [_line_within(line, only, counted) for line in source[i1:i2]]
            else:
                out += shown[j1:j2]
                counted.update(kept)
    return "\n".join(out), counted


def _line_within(line: str, only: Collection[str], counted: Counter[str]) -> str:
    """A line of a block refused whole for a reason not in `only` (a person's code block
    shown to an agent): a credential in it is still one, redacted as its line."""
    if "secret" not in only or not holds_secret(line):
        return line
    counted["secret"] += 1
    return f"{line[: len(line) - len(line.lstrip())]}[redacted: {LABELS['secret']}]"


def _cut(text: str) -> int:
    """Where the gate cuts a text too long to scan: at a line's end, else between words."""
    cut = text.rfind("\n", 0, MAX_SCAN_CHARS + 1)
    if cut < MAX_SCAN_CHARS // 2:
        cut = max(cut, *(text.rfind(space, 0, MAX_SCAN_CHARS + 1) for space in " \t"))
    return max(cut, 0)


def _reasons_in(lines: list[str]) -> set[str]:
    return {_REASON_OF.get(m, "code") for line in lines for m in _MARKER.findall(line)}


def _narrowed_line(
    line: str, gated: str, only: Collection[str] | None, counted: Counter[str]
) -> str:
    """One line the gate changed, redacted by span; the gate's own line when no span of it
    is refused on its own (it was refused for what surrounds it)."""
    if "[redacted: " not in gated:
        return gated  # (cleaned of invisible characters, nothing refused)
    found: Counter[str] = Counter()
    narrowed = _narrow(line, only, found)
    if found:
        counted.update(found)
        return narrowed
    kept = _reasons_in([gated])
    if only is not None and not kept & set(only):
        return _line_within(line, only, counted)
    counted.update(kept)
    return gated


def _refused(text: str, only: Collection[str] | None) -> tuple[str, ...]:
    reasons = tuple(r for r in judge(text).reasons if r not in _SIZE)
    return reasons if only is None else tuple(r for r in reasons if r in only)


def _sentence_around(segment: str, start: int, end: int) -> tuple[int, int]:
    """The span of the sentences of `segment` that [start, end) touches."""
    first, last, at = start, end, 0
    for sentence in split_sentences(segment):
        begin = segment.find(sentence, at)
        if begin < 0:
            break
        finish = at = begin + len(sentence)
        if begin <= start < finish or (start <= begin and finish <= end):
            first = min(first, begin)
        if begin < end <= finish or (start <= begin and finish <= end):
            last = max(last, finish)
    return first, last


def _narrow(segment: str, only: Collection[str] | None, found: Counter[str]) -> str:
    """`segment` with its shortest refused runs of words replaced: the last one found
    first, then what is before it and what is after it, each judged on its own."""
    words = [m.span() for m in _WORD.finditer(segment)]
    if not words or not _refused(segment, only):
        return segment

    def refused(first: int, last: int) -> bool:
        return bool(_refused(segment[words[first][0] : words[last][1]], only))

    # the latest start the refusal survives, then the earliest end (refusal grows with the
    # text around it, so both are found by halving)
    lo, hi = 0, len(words) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if refused(mid, len(words) - 1) else (lo, mid - 1)
    first = lo
    lo, hi = first, len(words) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if refused(first, mid) else (mid + 1, hi)
    last = lo
    start, end = words[first][0], words[last][1]
    span = segment[start:end]
    reasons = _refused(span, only)
    if not reasons:  # (not monotone after all): the whole segment is the span
        start, end, span, reasons = 0, len(segment), segment, _refused(segment, only)
    if reasons[0] in _WHOLE_SENTENCE:
        start, end = _sentence_around(segment, start, end)
    found[reasons[0]] += 1
    # a secret alone is replaced in place (the gate knows its exact span)
    marked = redact(span)[0] if reasons == ("secret",) else f"[redacted: {LABELS[reasons[0]]}]"
    return _narrow(segment[:start], only, found) + marked + _narrow(segment[end:], only, found)
