"""A note's counters merged against the common ancestor, and how a counter's number is
written back.

Light on purpose (no `typing` or `dataclasses` at run time): git's per-file merge driver
imports it in a process of its own for every note. `domain.sync.merge` re-exports it.

- `access_count` = base + both sides' increments;
- `credit` = base + both sides' changes, clamped to [0, 1];
- `last_accessed` and `updated` take the later moment.
"""

from __future__ import annotations

import datetime as dt

from vault_brain.domain.clock import parse_time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

SUM_KEYS = ("access_count", "credit")
LATEST_KEYS = ("last_accessed", "updated")
COUNTER_KEYS = SUM_KEYS + LATEST_KEYS
LIST_KEYS = ("tags", "aliases")  # merged as a union (`merge.merge_keys`)
LATEST_SIDE_KEYS = ("pinned", "supersedes", "superseded_by")  # the side updated last


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(str(value))
    except ValueError:
        return None


def moment_of(value: Any) -> dt.datetime | None:
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.astimezone()
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day).astimezone()
    return parse_time(value)


def merge_counters(
    base: Mapping[str, Any], ours: Mapping[str, Any], theirs: Mapping[str, Any]
) -> dict[str, Any]:
    """The merged value of each counter key either side has (keys neither side has are
    absent). A value that is not a number or a time is left to the line merge."""
    merged: dict[str, Any] = {}
    for key in SUM_KEYS:
        if key not in ours and key not in theirs:
            continue
        b, o, t = _number(base.get(key)), _number(ours.get(key)), _number(theirs.get(key))
        default = 0.0 if key == "access_count" else 0.5
        start = b if b is not None else (default if key == "credit" else 0.0)
        o = o if o is not None else start
        t = t if t is not None else start
        if (key in ours and _number(ours[key]) is None) or (
            key in theirs and _number(theirs[key]) is None
        ):
            continue
        total = start + (o - start) + (t - start)
        if key == "access_count":
            merged[key] = max(0, round(total))
        else:
            merged[key] = round(min(1.0, max(0.0, total)), 6)
    for key in LATEST_KEYS:
        candidates = [(m, v) for v in (ours.get(key), theirs.get(key)) if (m := moment_of(v))]
        if candidates:
            merged[key] = max(candidates, key=lambda pair: pair[0])[1]
    return merged


class Places:
    """Which version of a note each merged counter is written into before the line merge."""

    def __init__(
        self,
        base: tuple[str, ...],
        ours: tuple[str, ...],
        theirs: tuple[str, ...],
        dropped: tuple[str, ...],
    ) -> None:
        self.base, self.ours, self.theirs, self.dropped = base, ours, theirs, dropped
        self.new = tuple(k for k in ours if k not in base)
        """The counters the ancestor lacks (written in ours, at ours' place)."""


def counter_places(
    counters: Mapping[str, Any],
    base: Mapping[str, Any],
    theirs: Mapping[str, Any],
) -> Places:
    """Where the merged counters go so that the line merge writes each key once and never
    sees two machines' counter lines as a clash: a key the ancestor has is set in all three
    versions (its line then agrees everywhere); a key the ancestor lacks is written into
    ours only -- at ours' place when ours added it (the person's key order on this
    machine), else where a new key goes -- and dropped from theirs. Two additions at two
    places would both be kept (the key twice), and two different keys added at one place
    (credit on one machine, access_count on the other) would clash. The merges then copy
    those lines into the ancestor and theirs at ours' place (`anchor_new_keys`)."""
    had = tuple(k for k in counters if k in base)
    dropped = tuple(k for k in counters if k not in base and k in theirs)
    return Places(had, tuple(counters), had, dropped)


def render_float(value: float) -> str:
    """A float as front matter holds it, read back as a float by YAML 1.1 and 1.2: always
    with a '.', never in exponent form, at most six decimals."""
    if value != value:
        return ".nan"
    if value in (float("inf"), float("-inf")):
        return ".inf" if value > 0 else "-.inf"
    text = f"{round(value, 6):.6f}".rstrip("0")
    return text + "0" if text.endswith(".") else text


def _top_key(line: str) -> str | None:
    """The key of a block front matter line that starts a top-level key, else None."""
    if not line or line[0] in " \t-#\n":
        return None
    key, colon, _ = line.partition(":")
    return key if colon else None


def _front_lines(text: str) -> tuple[list[str], int] | None:
    """A note's front matter lines (block form, LF line ends) and where they end."""
    if not text.startswith("---\n") or "\r" in text:
        return None
    lines = text.splitlines(keepends=True)
    close = next((i for i in range(1, len(lines)) if lines[i] in ("---\n", "---")), None)
    return (lines[1:close], close) if close is not None else None


SHARED_NEW_KEYS = ("id",)  # written by vb's first edit of a note on each machine alike


def shared_new_keys(base: str, ours: str, theirs: str) -> tuple[str, ...]:
    """The keys of `SHARED_NEW_KEYS` the ancestor lacks that ours and theirs both added with
    the same line (vb's first edit of a note writes its `id` on each machine): anchored at
    ours' place like new counters, so that the two additions are one line, not a clash."""
    lines: list[dict[str | None, str]] = []
    for text in (base, ours, theirs):
        side = _front_lines(text)
        if side is None:
            return ()
        lines.append({_top_key(x): x for x in side[0] if _top_key(x)})
    return tuple(
        k
        for k in SHARED_NEW_KEYS
        if k not in lines[0] and k in lines[1] and lines[1][k] == lines[2].get(k)
    )


def anchor_new_keys(owner: str, other: str, keys: Sequence[str]) -> str | None:
    """`other` with the lines of `keys` (counters the ancestor lacks, merged and written in
    `owner`) copied from `owner` to the same place: after the key they follow in `owner`.
    Given to the ancestor and to theirs, those lines are then the same in all three versions
    and the line merge sees no change there: a key another side added at that place (a
    person's new property) no longer clashes with them. None when `other` lacks the key
    they follow, or either is not block front matter with LF line ends."""
    own, mine = _front_lines(owner), _front_lines(other)
    if own is None or mine is None:
        return None
    owner_lines, (lines, close) = own[0], mine
    body = "".join(other.splitlines(keepends=True)[close:])
    lines = [x for x in lines if _top_key(x) not in keys]
    for i, line in enumerate(owner_lines):
        if _top_key(line) not in keys:
            continue
        before = next((_top_key(x) for x in reversed(owner_lines[:i]) if _top_key(x)), None)
        if before is None:
            at = 0
        else:
            start = next((j for j, x in enumerate(lines) if _top_key(x) == before), None)
            if start is None:
                return None
            at = start + 1
            while at < len(lines) and _top_key(lines[at]) is None:
                at += 1
        lines.insert(at, line)
    return "---\n" + "".join(lines) + body
