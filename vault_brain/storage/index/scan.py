"""Which files are notes, and what changed on disk since the index was written.

A stat scan of the vault (one walk, no reads) compared with the manifest's rows
(path -> mtime, size) tells a reader exactly which notes to re-index.
"""

from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from stat import S_ISREG

from vault_brain.domain.sync.trust import where_no_note_lives
from vault_brain.storage.files import dead_temp_file, remove_dead_temps, visible_files
from vault_brain.storage.paths import IGNORED_DIRS, ROOT_NON_NOTES, VaultPaths, is_note_path


def is_note_name(name: str) -> bool:
    """A Markdown file's name, not hidden (an editor's temp file ends otherwise: `.tmp`,
    `.swp`, `~`, ...)."""
    return name.lower().endswith(".md") and not name.startswith(".")


def is_ignored_rel(rel: str) -> bool:
    """True for paths that never hold notes (vb's cache, git, Obsidian, transcripts, temp files)."""
    parts = PurePosixPath(rel).parts
    if not parts:
        return True
    if parts[0] in IGNORED_DIRS or any(p.startswith(".") for p in parts[:-1]):
        return True
    if len(parts) == 1 and parts[0] in ROOT_NON_NOTES:
        return True
    return not is_note_name(parts[-1])


def scan(paths: VaultPaths) -> dict[str, list[int]]:
    """Every note in the vault -> [mtime_ns, size] (a manifest row), by one walk of stat
    calls. Temp files a killed writer left behind are removed on the way (in sessions/ and
    logs/ too)."""
    root = str(paths.root)
    real_root = os.path.realpath(root)
    found: dict[str, list[int]] = {}
    remove_dead_temps(paths.sessions_dir, paths.logs_dir)

    def hidden(name: str, path: str) -> None:
        if dead_temp_file(name):
            with contextlib.suppress(OSError):
                os.unlink(path)

    with bulk_allocation():
        for entry, rel in visible_files(root, IGNORED_DIRS, hidden):
            if not is_note_path(rel):
                continue  # (is_note_name: the name is not hidden, checked by the walk)
            try:
                if entry.is_symlink() and not inside_vault(os.path.join(root, rel), real_root):
                    continue  # a link out of the vault is never read
                st = entry.stat()
            except OSError:
                continue
            if S_ISREG(st.st_mode):  # (a FIFO or device named like a note is never read)
                found[rel] = [st.st_mtime_ns, st.st_size]
    return found


@contextlib.contextmanager
def bulk_allocation() -> Iterator[None]:
    """Python's cycle collector paused while a walk or a manifest makes one small list per
    note: none of them can form a cycle, and at 100,000 notes the collections it would
    otherwise run over every object the process holds were a third of a reconcile."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


# manifest file -> (its stat, its files) as this process last read or wrote it
_KNOWN: dict[str, tuple[tuple[int, int, int], dict[str, list[int]] | None]] = {}


def _stat_key(path: Path) -> tuple[int, int, int]:
    st = path.stat()
    return st.st_mtime_ns, st.st_size, st.st_ino


def known_files(
    manifest: Path, load: Callable[[], dict[str, list[int]] | None]
) -> dict[str, list[int]] | None:
    """The manifest's files, to read only; `load`ed (5 ms at 10k notes) only when the file
    was written since this process last read or wrote it."""
    try:
        key = _stat_key(manifest)
    except OSError:
        return None
    seen = _KNOWN.get(str(manifest))
    if seen is None or seen[0] != key:
        seen = _KNOWN[str(manifest)] = (key, load())
    return seen[1]


def remember_files(manifest: Path, files: dict[str, list[int]]) -> None:
    """This process just wrote the manifest with `files` (which it no longer changes)."""
    with contextlib.suppress(OSError):
        _KNOWN[str(manifest)] = (_stat_key(manifest), files)


def unchanged(paths: VaultPaths, rels: list[str], files: dict[str, list[int]]) -> bool:
    """True when the manifest's `files` hold these notes as they are on disk (and none of
    those gone)."""
    real_root = os.path.realpath(paths.root)
    for rel in rels:
        full = paths.note(rel)
        try:
            readable = full.is_file() and not (
                full.is_symlink() and not inside_vault(str(full), real_root)
            )
            st = full.stat() if readable else None
        except OSError:
            st = None
        row = files.get(rel)
        if (row is not None) if st is None else (row != [st.st_mtime_ns, st.st_size]):
            return False
    return True


def inside_vault(path: str, real_root: str) -> bool:
    """Whether the note at `path` (a symlink) may be read: its real path lies inside the
    vault and where notes live, not in `.git`, `.vb`, sessions/ or logs/ (a link to this
    machine's git config or to a transcript is no note: it would be searched, shown to
    agents and written back as one)."""
    real = os.path.realpath(path)
    if not real.startswith(real_root + os.sep):
        return False
    rel = PurePosixPath(*Path(os.path.relpath(real, real_root)).parts).as_posix()
    return where_no_note_lives(rel) is None


@dataclass
class ReconcileResult:
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    total: int = 0
    rebuilt: bool = False
    stamps: dict[str, list[int] | None] = field(default_factory=dict)
    """After `Index.refresh`: each path asked for as the index now holds it ([mtime_ns,
    size], None: not at all)."""

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed)


def diff_manifest(disk: dict[str, list[int]], manifest: dict[str, list[int]]) -> ReconcileResult:
    result = ReconcileResult()
    if disk == manifest:  # (the common case, compared in C)
        return result
    for rel, row_now in disk.items():
        row = manifest.get(rel)
        if row is None:
            result.added.append(rel)
        elif row[:2] != row_now:
            result.updated.append(rel)
    result.removed = [rel for rel in manifest if rel not in disk]
    return result
