"""Which files are notes, and what changed on disk since the index was written.

A stat scan of the vault (one walk, no reads) compared with the manifest's rows
(path -> mtime, size) tells a reader exactly which notes to re-index.
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import warnings
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


SPLIT_FROM = 5_000
"""Notes from which a walk stats half of them in a forked child, beside the parent's half
(at 10,000 notes: 20 ms against 28-30 ms in one process; below this, the fork's and the
pipe's fixed cost would take much of the gain). A `stat` releases the GIL, but threads hand
it over at every call: two of them walked slower than one."""
KEPT_OPEN = 256  # folders listed through a descriptor kept open for the stat pass


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # (no affinity on macOS)
        return os.cpu_count() or 1


_SECOND_CORE = hasattr(os, "fork") and _cores() > 1
_GONE = -1  # the size stamped for a file gone (or no longer regular) between list and stat


@dataclass(eq=False)
class _Folder:
    """One listed folder: the notes to stat by name (through `fd`, or by path when no
    descriptor was kept), and the ones the listing had to stat already (links)."""

    path: str
    prefix: str
    fd: int | None
    names: list[str] = field(default_factory=list)
    stamped: list[tuple[str, int, int]] = field(default_factory=list)


def walk(paths: VaultPaths, split_from: int | None = None) -> Walk:
    """The notes of the vault and their stamps, by one walk of stat calls (`Walk`). Temp
    files a killed writer left behind are removed on the way (in sessions/ and logs/ too).

    Two passes: the folders are listed first (names only, which the listing gives without
    a stat), then every note is stat'ed; from `split_from` notes on (`SPLIT_FROM`), with
    a second core to run it, a forked child stats the second half while this process stats
    the first (a reconcile with nothing changed on two cores: 10,000 notes ~28 -> ~20 ms,
    100,000 ~300 -> ~200 ms). A child that fails leaves its half to this process.

    The listing is `visible_files`' walk (hidden files and folders, and the top folders
    that hold no notes, left out), written out here: at 100,000 notes a reconcile with
    nothing changed is this loop, and each call or lookup it makes per note costs it 2-3%."""
    remove_dead_temps(paths.sessions_dir, paths.logs_dir)
    with bulk_allocation():
        folders: list[_Folder] = []
        child = None
        try:
            _list(str(paths.root), folders)
            total = sum(len(f.names) for f in folders)
            split = total >= (SPLIT_FROM if split_from is None else split_from)
            half = total // 2 if split and _SECOND_CORE else total
            if half < total:
                child = _ChildStamps(folders, half, total)
            stamps = _stamp(folders, 0, half)
            if child is not None:
                stamps.extend(child.result())
        finally:
            if child is not None:
                child.close()
            for folder in folders:
                if folder.fd is not None:
                    os.close(folder.fd)
        return _assemble(folders, stamps)


def _list(root: str, listed: list[_Folder]) -> None:
    """Every folder that may hold notes, with the names of the notes in it, added to
    `listed` (the caller closes their descriptors, whatever happens); a symlink (or another
    file the listing cannot tell regular) is checked and stat'ed here."""
    real_root = os.path.realpath(root)
    stack = [(root, "")]
    while stack:
        path, prefix = stack.pop()
        fd = open_folder(path)
        if fd is None:
            continue
        folder = _Folder(path, prefix, fd)
        listed.append(folder)
        add = folder.names.append
        try:
            # (a stat through the folder's descriptor looks up the name alone, not the path)
            with os.scandir(fd) as entries:
                for entry in entries:
                    name = entry.name
                    if name[0] == ".":
                        if dead_temp_file(name):
                            with contextlib.suppress(OSError):
                                os.unlink(os.path.join(path, name))
                        continue
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            if prefix or name not in IGNORED_DIRS:
                                stack.append((os.path.join(path, name), f"{prefix}{name}/"))
                            continue
                        # (`is_note_name` and `is_note_path`, without a call per file:
                        # below the top, every visible Markdown file is a note)
                        if not name.endswith(NOTE_SUFFIXES) or (
                            not prefix and name in ROOT_NON_NOTES
                        ):
                            continue
                        if entry.is_file(follow_symlinks=False):  # (the listing says so)
                            add(name)
                            continue
                        if entry.is_symlink() and not inside_vault(
                            os.path.join(path, name), real_root
                        ):
                            continue  # a link out of the vault is never read
                        st = entry.stat()  # a link in the vault, or a FIFO or device
                    except OSError:
                        continue
                    if S_ISREG(st.st_mode):  # (only a regular file is ever read)
                        folder.stamped.append((name, st.st_mtime_ns, st.st_size))
        except OSError:
            pass
        if len(listed) > KEPT_OPEN:
            os.close(fd)
            folder.fd = None


def _stamp(folders: list[_Folder], start: int, stop: int) -> array[int]:
    """mtime_ns and size of the notes `start` to `stop` in the listing's order (a size of
    `_GONE` for a file gone since, or no longer a regular file)."""
    stamps: array[int] = array("q")
    add, stat, at = stamps.append, os.stat, 0
    for folder in folders:
        names, fd = folder.names, folder.fd
        first, last = max(start - at, 0), min(stop - at, len(names))
        at += len(names)
        for name in names[first:last] if first < last else ():
            try:
                if fd is None:
                    st = stat(os.path.join(folder.path, name), follow_symlinks=False)
                else:
                    st = stat(name, dir_fd=fd, follow_symlinks=False)
                regular = S_ISREG(st.st_mode)
            except OSError:
                regular = False
            add(st.st_mtime_ns if regular else 0)
            add(st.st_size if regular else _GONE)
    return stamps


class _ChildStamps:
    """`_stamp(folders, start, stop)` run in a forked child while this process stats its
    own half; the child sends the stamps back through a pipe. Where the child cannot be
    made, or does not deliver all of them, `result` stats them here."""

    def __init__(self, folders: list[_Folder], start: int, stop: int) -> None:
        self.folders, self.start, self.stop = folders, start, stop
        self.pid, self.reading = -1, -1
        try:
            reading, writing = os.pipe()
        except OSError:
            return
        try:
            with warnings.catch_warnings():
                # (Python 3.12+ warns of a fork in a threaded process: the child runs no
                # code that takes a lock another thread may hold, only stats and a write)
                warnings.simplefilter("ignore", DeprecationWarning)
                pid = os.fork()
        except OSError:
            os.close(reading)
            os.close(writing)
            return
        if pid == 0:  # pragma: no cover - the child (coverage does not follow it)
            code = 1
            try:
                os.close(reading)
                data = memoryview(_stamp(folders, start, stop).tobytes())
                while data:
                    data = data[os.write(writing, data) :]
                code = 0
            finally:
                os._exit(code)
        os.close(writing)
        self.pid, self.reading = pid, reading

    def result(self) -> array[int]:
        want = 2 * (self.stop - self.start)
        stamps: array[int] = array("q")
        if self.pid > 0:
            chunks, status = [], None
            with contextlib.suppress(OSError):
                while chunk := os.read(self.reading, 1 << 20):
                    chunks.append(chunk)
                # (the pipe's end: the child has written and is exiting)
                _, status = os.waitpid(self.pid, 0)
                self.pid = -1
            data = b"".join(chunks)
            if status == 0 and len(data) == 8 * want:
                stamps.frombytes(data)
                return stamps
        return _stamp(self.folders, self.start, self.stop)

    def close(self) -> None:
        """Stop and reap a child whose stamps were not read (an interrupted walk)."""
        if self.reading >= 0:
            os.close(self.reading)
            self.reading = -1
        if self.pid > 0:
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.waitpid(self.pid, 0)
            self.pid = -1


def _assemble(folders: list[_Folder], stamps: array[int]) -> Walk:
    """The walk's notes in the listing's order (each folder's listed notes, then the ones
    it stat'ed itself), leaving out the files gone between the listing and the stats."""
    seen = Walk()
    names, kept = seen.names, seen.stamps
    at = 0
    for folder in folders:
        count = len(folder.names)
        mine = stamps[2 * at : 2 * (at + count)]
        at += count
        before = len(names)
        if _GONE in mine[1::2]:
            for n, name in enumerate(folder.names):
                if mine[2 * n + 1] != _GONE:
                    names.append(name)
                    kept.append(mine[2 * n])
                    kept.append(mine[2 * n + 1])
        else:
            names.extend(folder.names)
            kept.extend(mine)
        for name, mtime, size in folder.stamped:
            names.append(name)
            kept.append(mtime)
            kept.append(size)
        if len(names) > before:
            seen.folders.append((folder.prefix, len(names) - before))
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
