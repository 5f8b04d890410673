"""Which files are notes, and what changed on disk since the index was written.

A stat scan of the vault (one walk, no reads) compared with the manifest's rows
(path -> mtime, size) tells a reader exactly which notes to re-index.
"""

from __future__ import annotations

import contextlib
import gc
import os
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from stat import S_ISREG

from vault_brain.domain.sync.trust import where_no_note_lives
from vault_brain.storage.files import dead_temp_file, open_folder, remove_dead_temps
from vault_brain.storage.paths import IGNORED_DIRS, ROOT_NON_NOTES, VaultPaths

NOTE_SUFFIXES = (".md", ".MD", ".Md", ".mD")  # (`.md` in any case, as Obsidian takes it)


def is_note_name(name: str) -> bool:
    """A Markdown file's name, not hidden (an editor's temp file ends otherwise: `.tmp`,
    `.swp`, `~`, ...)."""
    return name.endswith(NOTE_SUFFIXES) and not name.startswith(".")


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
    calls (`walk`)."""
    return walk(paths).files()


@dataclass(eq=False)
class Walk:
    """The notes one walk of the vault saw, in the walk's order: each folder holding notes
    (its path relative to the vault, "" or ending in "/"; how many), the notes' names, and
    their stamps (mtime_ns and size, one after the other). A walk of an unchanged vault
    sees what the one before it saw, in the same order (the listing order of an unchanged
    folder does not change): `same_as` compares two in C, without a lookup per note."""

    folders: list[tuple[str, int]] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    stamps: array[int] = field(default_factory=lambda: array("q"))

    def __len__(self) -> int:
        return len(self.names)

    def same_as(self, other: Walk) -> bool:
        return (
            self.stamps == other.stamps
            and self.names == other.names
            and self.folders == other.folders
        )

    def files(self) -> dict[str, list[int]]:
        """path -> [mtime_ns, size], as `scan` gives it."""
        found: dict[str, list[int]] = {}
        names, stamps, at = self.names, self.stamps, 0
        with bulk_allocation():
            for prefix, count in self.folders:
                for n in range(at, at + count):
                    found[prefix + names[n]] = [stamps[2 * n], stamps[2 * n + 1]]
                at += count
        return found


def walk(paths: VaultPaths) -> Walk:
    """The notes of the vault and their stamps, by one walk of stat calls (`Walk`). Temp
    files a killed writer left behind are removed on the way (in sessions/ and logs/ too).

    The walk is `visible_files`' (hidden files and folders, and the top folders that hold
    no notes, left out), written out here: at 100,000 notes a reconcile with nothing
    changed is this loop, and each call or lookup it makes per note costs it 2-3%."""
    root = str(paths.root)
    real_root = os.path.realpath(root)
    seen = Walk()
    names, stamps, folders = seen.names, seen.stamps, seen.folders
    add_name, add_stamp = names.append, stamps.append
    remove_dead_temps(paths.sessions_dir, paths.logs_dir)
    stack = [(root, "")]
    with bulk_allocation():
        while stack:
            folder, prefix = stack.pop()
            fd = open_folder(folder)
            if fd is None:
                continue
            before = len(names)
            try:
                # (a stat through the folder's descriptor looks up the name alone, not the path)
                with os.scandir(fd) as entries:
                    for entry in entries:
                        name = entry.name
                        if name[0] == ".":
                            if dead_temp_file(name):
                                with contextlib.suppress(OSError):
                                    os.unlink(os.path.join(folder, name))
                            continue
                        try:
                            if entry.is_dir(follow_symlinks=False):
                                if prefix or name not in IGNORED_DIRS:
                                    stack.append((os.path.join(folder, name), f"{prefix}{name}/"))
                                continue
                            # (`is_note_name` and `is_note_path`, without a call per file:
                            # below the top, every visible Markdown file is a note)
                            if not name.endswith(NOTE_SUFFIXES) or (
                                not prefix and name in ROOT_NON_NOTES
                            ):
                                continue
                            if entry.is_file(follow_symlinks=False):  # (the listing says so)
                                st = entry.stat()
                            elif entry.is_symlink() and not inside_vault(
                                os.path.join(folder, name), real_root
                            ):
                                continue  # a link out of the vault is never read
                            else:  # a link in the vault, or a FIFO or device: never read
                                st = entry.stat()
                                if not S_ISREG(st.st_mode):
                                    continue
                        except OSError:
                            continue
                        add_name(name)
                        add_stamp(st.st_mtime_ns)
                        add_stamp(st.st_size)
            except OSError:
                pass
            finally:
                os.close(fd)
            if len(names) > before:
                folders.append((prefix, len(names) - before))
    return seen


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


def stat_key(path: Path) -> tuple[int, ...]:
    """What tells a file rewritten since (the manifest is replaced whole, never edited)."""
    st = path.stat()
    return st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino


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
