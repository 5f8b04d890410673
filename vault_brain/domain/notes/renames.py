"""Renames of notes: which paths one update of the index dropped and added are one note
under a new path, and where a chain of renames ends. Pure; the moves seen are kept by
`storage.index.renames`.

A dropped and an added path are one note when they hold the same `id` key (a note vb has
written), or else the same body (a note vb never wrote, renamed in Obsidian or moved by git).
A body that several dropped or added notes share (an empty one, a template) tells nothing and
is not matched.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

MAX_HOPS = 100  # a chain of renames followed at most this far


@dataclass(frozen=True)
class Move:
    old_id: str
    old_path: str
    new_id: str
    new_path: str
    at: float = 0.0  # when the index saw it (seconds since the epoch)


def moves_between(
    gone: Mapping[str, tuple[str, str | None]], came: Mapping[str, tuple[str, str | None]]
) -> list[Move]:
    """The moves among the paths one index update dropped (`gone`) and added (`came`), each
    path -> (id, body hash): paired by an id both sides have once, then by a body hash."""
    moves: list[Move] = []
    left, right = dict(gone), dict(came)
    for key in (0, 1):
        old = Counter(v[key] for v in left.values() if v[key])
        new = Counter(v[key] for v in right.values() if v[key])
        by_value = {v[key]: rel for rel, v in right.items() if v[key] and new[v[key]] == 1}
        for rel, value in list(left.items()):
            target = by_value.get(value[key] or "")
            if target is None or old[value[key]] != 1:
                continue
            moves.append(Move(value[0], rel, right[target][0], target))
            del left[rel], right[target]
    return sorted(moves, key=lambda m: m.old_path)


def last_move(moves: Sequence[Move], ref: str) -> Move | None:
    """Where the note that `ref` (an old id or path) named went: its last move from `ref`
    in `moves` (oldest first), followed through the moves after it (`new_id` and `new_path`
    are where the last one took it). None when no move starts at `ref`."""
    starts = [i for i, m in enumerate(moves) if ref in (m.old_id, m.old_path)]
    if not starts:
        return None
    at = starts[-1]
    start = current = moves[at]
    for _ in range(MAX_HOPS):
        step = next(
            (i for i in range(at + 1, len(moves)) if moves[i].old_path == current.new_path), None
        )
        if step is None:
            break
        at, current = step, moves[step]
    return replace(start, new_id=current.new_id, new_path=current.new_path)
