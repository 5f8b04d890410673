"""The notes the index saw move, kept on this machine (`.vb/renames.json`): a note's old id
and path -> its new path, so that the old id or path still finds the note (`follow`). The
index records a move when one reconcile or refresh drops a path and adds another that holds
the same note (`domain.notes.renames.moves_between`).
"""

from __future__ import annotations

import contextlib
import json
import time
from dataclasses import asdict, replace
from pathlib import Path

from vault_brain.domain.notes.renames import Move, last_move
from vault_brain.storage.files import write_cache
from vault_brain.storage.paths import VaultPaths

MAX_MOVES = 5000  # the newest kept (a rename is a few dozen bytes)


def renames_file(paths: VaultPaths) -> Path:
    return paths.vb_dir / "renames.json"


def load_moves(paths: VaultPaths) -> list[Move]:
    """The moves recorded, oldest first (none when the file is missing or unreadable)."""
    try:
        with open(renames_file(paths), encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return []
    moves = []
    for item in data.get("moves", []) if isinstance(data, dict) else []:
        with contextlib.suppress(AttributeError, KeyError, TypeError, ValueError):
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
    """Where the note that `ref` (an old id or path) named went, by the moves recorded
    (`domain.notes.renames.last_move`); None when no move starts at `ref`."""
    return last_move(load_moves(paths), ref)
