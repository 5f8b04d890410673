"""`vb merge-driver KIND BASE OURS THEIRS PATH`: git's per-file merge driver (installed by
`vb init` and `vb sync`, used by a person's own `git merge` or `git pull`; `vb sync` merges
the same way in-process). The result replaces OURS; a conflict copy of theirs is written
beside PATH in the work tree. Light on purpose: git starts one process per file.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import TYPE_CHECKING

from vault_brain.domain.sync.merge import conflict_copy_name
from vault_brain.storage.files import atomic_write
from vault_brain.storage.git.sync import last_writer
from vault_brain.storage.notes.merge import Merged, conflict_copy_bytes, merge_bytes

if TYPE_CHECKING:
    from vault_brain.storage.paths import VaultPaths


def write_conflict_copy(
    root: Path, path: str, kind: str, merged: Merged, machine: str, inside: VaultPaths | None = None
) -> str:
    """Theirs beside `path` as `<stem> (conflict <machine> <date>).<ext>`; a copy with the same
    content already there (from an interrupted merge) is reused. Returns its path. With
    `inside`, the copy is checked to stay inside that folder (no symlink leading out)."""
    assert merged.conflict is not None
    day = dt.date.today()
    data = merged.conflict
    if kind == "note":
        data = conflict_copy_bytes(data, path, f"conflict-{machine}-{day.isoformat()}")
    taken: list[str] = []
    while True:
        name = conflict_copy_name(path, machine, day, taken)
        target = root / name
        if not os.path.lexists(target):
            atomic_write(target, data, inside=inside)
            return name
        if target.is_symlink():
            taken.append(name)
            continue
        if target.read_bytes() == data:
            return name
        taken.append(name)


def theirs_machine(path: str) -> str:
    """The machine whose text of `path` a person's `git merge` brings in: git names the
    commits it merges in `GITHEAD_<sha>` variables for the merge drivers it runs."""
    for key in sorted(os.environ):
        if key.startswith("GITHEAD_"):
            machine = last_writer(Path.cwd(), key.removeprefix("GITHEAD_"), path)
            if machine:
                return machine
    return "theirs"


def run_driver(kind: str, base: str, ours: str, theirs: str, path: str) -> str | None:
    """Merge the three files into `ours`; returns the conflict copy written, if any."""
    data = [Path(p).read_bytes() for p in (base, ours, theirs)]
    merged = merge_bytes(kind, data[0], data[1], data[2], path)
    copy = None
    if merged.conflict is not None:
        copy = write_conflict_copy(Path.cwd(), path, kind, merged, theirs_machine(path))
    atomic_write(Path(ours), merged.data)
    return copy
