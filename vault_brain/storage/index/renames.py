"""The notes the index saw move: a note's old id and path -> its new path (`.vb/renames.json`).

When one reconcile or refresh drops a path and adds another that holds the same note -- the
same `id` key (a note vb has written), or else the same body (a note vb never wrote, renamed
in Obsidian or moved by git) -- the move is recorded here, on this machine, so that the old
id or path still finds the note (`follow`). A body that several dropped or added notes share
(an empty one, a template) tells nothing and is not matched.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from vault_brain.storage.files import write_cache
from vault_brain.storage.paths import VaultPaths

MAX_MOVES = 5000  # the newest kept (a rename is a few dozen bytes)
MAX_HOPS = 100  # a chain of renames followed at most this far


@dataclass(frozen=True)
class Move:
    old_id: str
    old_path: str
    new_id: str
    new_path: str
    at: float = 0.0  # when the index saw it (seconds since the epoch)


def renames_file(paths: VaultPaths) -> Path:
    return paths.vb_dir / "renames.json"


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


def load_moves(paths: VaultPaths) -> list[Move]:
    """The moves recorded, oldest first (none when the file is missing or unreadable)."""
    try:
        with open(renames_file(paths), encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return []
    moves = []
    for item in data.get("moves", []) if isinstance(data, dict) else []:
        with contextlib.suppress(TypeError, ValueError):
            moves.append(
                Move(
                    str(item["old_id"]),
                    str(item["old_path"]),
                    str(item["new_id"]),
                    str(item["new_path"]),
                    float(item.get("at", 0.0)),
                )
            )
    return moves


def record_moves(paths: VaultPaths, moves: list[Move]) -> None:
    """Add `moves` (seen now) to the file; best effort, like every cache write."""
    if not moves:
        return
    now = time.time()
    kept = [*load_moves(paths), *(replace(m, at=now) for m in moves)][-MAX_MOVES:]
    data = {"version": 1, "moves": [asdict(m) for m in kept]}
    with contextlib.suppress(OSError):
        write_cache(renames_file(paths), json.dumps(data, ensure_ascii=False))


def follow(paths: VaultPaths, ref: str) -> Move | None:
    """Where the note that `ref` (an old id or path) named went: its last recorded move
    from `ref`, followed through the moves after it (`new_id` and `new_path` are where the
    last one took it). None when no move starts at `ref`."""
    moves = load_moves(paths)
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
