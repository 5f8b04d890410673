"""The search index as a cache of the files: reconcile, targeted refresh, rebuild, lookups.

Files are the truth. Every reader first calls `reconcile()`: a stat scan compares the
vault with `.vb/manifest.json` (path -> mtime, size) and re-parses only what changed,
so results are never stale even with no watcher running.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from whoosh import index as windex
from whoosh.codec import base as whoosh_codec
from whoosh.query import And, Every, Term

from vault_brain.domain.errors import VaultBrainError
from vault_brain.domain.notes import Filters, Note, note_from_parsed
from vault_brain.storage.files import dead_temp_file, file_lock, remove_dead_temps, write_cache
from vault_brain.storage.index.schema import SCHEMA_VERSION, build_schema, document
from vault_brain.storage.notes import note_from_bytes
from vault_brain.storage.paths import IGNORED_DIRS, ROOT_NON_NOTES, VaultPaths

Progress = Callable[[int, int], None]


def _segment_id(size: int = 16) -> str:
    return secrets.token_hex(size)[:size]


# Whoosh names new segments from the process-wide `random` generator: a process that seeds
# it (or two forked writers sharing its state) reuses a name and the commit fails on an
# assertion. Segment names from the OS's random source cannot repeat that way.
whoosh_codec.Segment._random_id = classmethod(lambda cls, size=16: _segment_id(size))
_TEMP_SUFFIXES = (".tmp", ".vbtmp", ".swp", ".swx", ".crswap", "~", ".bak")


def is_note_name(name: str) -> bool:
    low = name.lower()
    return low.endswith(".md") and not name.startswith(".") and not low.endswith(_TEMP_SUFFIXES)


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


def scan(paths: VaultPaths) -> dict[str, tuple[int, int]]:
    """Every note in the vault -> (mtime_ns, size), by one walk of stat calls. Temp files a
    killed writer left behind are removed on the way (in sessions/ and logs/ too)."""
    root = str(paths.root)
    real_root = os.path.realpath(root)
    found: dict[str, tuple[int, int]] = {}
    stack = [(root, "")]
    remove_dead_temps(paths.sessions_dir, paths.logs_dir)
    while stack:
        folder, prefix = stack.pop()
        try:
            entries = os.scandir(folder)
        except OSError:
            continue
        with entries:
            for entry in entries:
                name = entry.name
                if name.startswith("."):
                    if dead_temp_file(name):
                        with contextlib.suppress(OSError):
                            os.unlink(entry.path)
                    continue
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if prefix or name not in IGNORED_DIRS:
                            stack.append((entry.path, f"{prefix}{name}/"))
                    elif is_note_name(name) and (prefix or name not in ROOT_NON_NOTES):
                        if entry.is_symlink() and not _inside(entry.path, real_root):
                            continue  # a link out of the vault is never read
                        st = entry.stat()
                        found[prefix + name] = (st.st_mtime_ns, st.st_size)
                except OSError:
                    continue
    return found


def _inside(path: str, real_root: str) -> bool:
    real = os.path.realpath(path)
    return real == real_root or real.startswith(real_root + os.sep)


@dataclass
class ReconcileResult:
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    total: int = 0
    rebuilt: bool = False

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed)


class Index:
    """The Whoosh index of one vault."""

    def __init__(self, paths: VaultPaths) -> None:
        self.paths = paths
        self._ix: Any = None
        self._searcher: Any = None

    # -- manifest -----------------------------------------------------------
    def load_manifest(self) -> dict[str, list[int]] | None:
        try:
            data = json.loads(self.paths.manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("schema") != SCHEMA_VERSION:
            return None
        files = data.get("files")
        return files if isinstance(files, dict) else None

    def _save_manifest(self, files: dict[str, list[int]]) -> None:
        payload = json.dumps({"schema": SCHEMA_VERSION, "files": files}, ensure_ascii=False)
        write_cache(self.paths.manifest, payload)

    # -- whoosh -------------------------------------------------------------
    def _open(self, create: bool = False) -> Any:
        if self._ix is not None and not create:
            return self._ix
        folder = self.paths.index_dir
        if create:
            self.close()
            self._ix = None
            if folder.exists():
                shutil.rmtree(folder)
            folder.mkdir(parents=True)
            self._ix = windex.create_in(str(folder), build_schema())
        else:
            try:
                self._ix = windex.open_dir(str(folder))
            except Exception as exc:  # a damaged cache is rebuilt, never fatal
                raise _CorruptIndex(str(exc)) from exc
        return self._ix

    def _usable(self) -> bool:
        """True if the index opens and can be searched; a missing or damaged one is rebuilt."""
        try:
            self._open()
            self.searcher()
        except Exception:
            self._ix = self._searcher = None
            return False
        return True

    def _lock(self, timeout: float | None = None) -> contextlib.AbstractContextManager[None]:
        wait = self.paths.lock_timeout if timeout is None else timeout
        return file_lock(self.paths.index_lock, "search index", wait)

    def _write(
        self,
        docs: Iterable[str],
        removed: Iterable[str],
        progress: Progress | None,
        total: int,
        create: bool = False,
    ) -> dict[str, list[int]]:
        """Index `docs` (relative paths) and drop `removed`; returns their new manifest rows."""
        ix = self._open(create=create)
        docs = list(docs)
        big = len(docs) >= 2000
        writer = ix.writer(limitmb=256) if not big else _fast_writer(ix)
        rows: dict[str, list[int]] = {}
        try:
            for rel in removed:
                writer.delete_by_term("path", rel)
            for n, rel in enumerate(docs, 1):
                full = self.paths.note(rel)
                try:
                    st = full.stat()
                    raw = full.read_bytes()
                except OSError:
                    writer.delete_by_term("path", rel)
                    continue
                fields = document(_readable_note(rel, raw))
                if create:
                    writer.add_document(**fields)
                else:
                    writer.update_document(**fields)
                rows[rel] = [st.st_mtime_ns, st.st_size]
                if progress and (n % 200 == 0 or n == total):
                    progress(n, total)
            writer.commit(optimize=False)
        except BaseException:
            with contextlib.suppress(Exception):
                writer.cancel()
            raise
        self._searcher = None
        return rows

    # -- public -------------------------------------------------------------
    def reconcile(
        self, progress: Progress | None = None, timeout: float | None = None
    ) -> ReconcileResult:
        """Bring the index in line with the files on disk."""
        disk = scan(self.paths)
        manifest = self.load_manifest()
        if manifest is None or not self._usable():
            with self._lock(timeout):
                return self._rebuild_locked(progress, disk)
        result = diff_manifest(disk, manifest)
        if not result.changed:
            result.total = len(disk)
            return result
        with self._lock(timeout):
            manifest = self.load_manifest() or {}
            result = diff_manifest(disk, manifest)
            if result.changed:
                try:
                    rows = self._write(
                        result.added + result.updated,
                        result.removed,
                        progress,
                        len(result.added) + len(result.updated),
                    )
                except _CorruptIndex:
                    return self._rebuild_locked(progress, disk)
                for rel in result.removed:
                    manifest.pop(rel, None)
                manifest.update(rows)
                self._save_manifest(manifest)
        result.total = len(disk)
        return result

    def rebuild(
        self, progress: Progress | None = None, disk: dict[str, tuple[int, int]] | None = None
    ) -> ReconcileResult:
        with self._lock():
            return self._rebuild_locked(progress, disk if disk is not None else scan(self.paths))

    def _rebuild_locked(
        self, progress: Progress | None, disk: dict[str, tuple[int, int]]
    ) -> ReconcileResult:
        self.paths.manifest.unlink(missing_ok=True)
        rels = sorted(disk)
        rows = self._write(rels, (), progress, len(rels), create=True)
        self._save_manifest(rows)
        return ReconcileResult(added=rels, total=len(rels), rebuilt=True)

    def refresh(self, rels: Iterable[str]) -> ReconcileResult:
        """Re-index just these paths (after vb's own writes, or watcher events)."""
        result = ReconcileResult()
        wanted = sorted({r for r in rels if not is_ignored_rel(r)})
        if not wanted:
            return result
        real_root = os.path.realpath(self.paths.root)
        with self._lock():
            manifest = self.load_manifest()
            if manifest is None:
                return self._rebuild_locked(None, scan(self.paths))
            present, gone = [], []
            for rel in wanted:
                full = self.paths.note(rel)
                outside = full.is_symlink() and not _inside(str(full), real_root)
                if full.is_file() and not outside:
                    st = full.stat()
                    if manifest.get(rel) != [st.st_mtime_ns, st.st_size]:
                        present.append(rel)
                elif rel in manifest:
                    gone.append(rel)
            if not present and not gone:
                return result
            rows = self._write(present, gone, None, len(present))
            for rel in gone:
                manifest.pop(rel, None)
            for rel in present:
                (result.updated if rel in manifest else result.added).append(rel)
            manifest.update(rows)
            result.removed = gone
            self._save_manifest(manifest)
        return result

    def searcher(self) -> Any:
        # (Searcher.refresh() breaks on a searcher opened over an empty index: reopen instead)
        if self._searcher is not None and not self._searcher.up_to_date():
            self.close()
        if self._searcher is None:
            self._searcher = self._open().searcher()
        return self._searcher

    def rows(self, include_archived: bool = False) -> Iterator[tuple[int, dict[str, Any]]]:
        """(docnum, row) for every live note, from the row column (one pass, no decompression)."""
        reader = self.searcher().reader()
        column = row_column(reader)
        for docnum, raw in enumerate(column):
            if not raw or reader.is_deleted(docnum):
                continue
            data = json.loads(raw)
            if include_archived or not data.get("archived"):
                yield docnum, data

    def pending(self) -> ReconcileResult:
        """What a reconcile would do now (the files changed since), without doing it."""
        result = diff_manifest(scan(self.paths), self.load_manifest() or {})
        return result

    def exists(self) -> bool:
        """True when an index has been built (whether or not it is fresh)."""
        return windex.exists_in(str(self.paths.index_dir)) and self.load_manifest() is not None

    def stored_by_id(self, note_id: str, include_archive: bool = True) -> dict[str, Any] | None:
        for hit in self.searcher().search(Term("id", note_id), limit=None):
            fields = dict(hit.fields())
            if include_archive or not fields.get("archived"):
                return fields
        return None

    def summary(self, docnum: int) -> str:
        """The stored start of a note's body (for listings and MEMORY.md)."""
        return str(self.searcher().stored_fields(docnum).get("summary", ""))

    def row_for_path(self, rel: str) -> dict[str, Any] | None:
        """The row of the note at `rel`, or None when it is not indexed."""
        return next(self._rows_for(Term("path", rel)), None)

    def list_rows(self, filters: Filters) -> list[dict[str, Any]]:
        """The rows of the notes a (normalised) filter selects, by path."""
        parts = filter_terms(filters)
        if filters.archived_only:
            parts.append(Term("archived", True))
        elif not filters.include_archive:
            parts.append(Term("archived", False))
        if filters.problems_only:
            parts.append(Term("problem", True))
        query = And(parts) if parts else Every()
        return sorted(self._rows_for(query), key=lambda r: str(r["path"]))

    def _rows_for(self, query: Any) -> Iterator[dict[str, Any]]:
        """The rows of the notes matching a Whoosh query."""
        searcher = self.searcher()
        column = row_column(searcher.reader())
        for docnum in searcher.docs_for_query(query):
            raw = column[docnum]
            if raw:
                yield json.loads(raw)

    def close(self) -> None:
        if self._searcher is not None:
            self._searcher.close()
            self._searcher = None


class _CorruptIndex(VaultBrainError):
    def __init__(self, detail: str) -> None:
        super().__init__(f"the search index is damaged ({detail})", hint="run `vb index --rebuild`")


def row_column(reader: Any) -> Any:
    """The row column of a reader; an empty index (Whoosh's EmptyReader) has none."""
    if reader.doc_count_all() == 0:
        return []
    return reader.column_reader("row")


def _fast_writer(ix: Any) -> Any:
    return ix.writer(limitmb=256, procs=min(2, os.cpu_count() or 1), multisegment=True)


def _readable_note(rel: str, raw: bytes) -> Note:
    """The note as far as it can be read. Reading is total (see `parse_text`), but a note is
    the one thing a person controls byte by byte: whatever still fails here makes that note
    a problem, indexed by its file name, and never stops the notes after it."""
    try:
        return note_from_bytes(rel, raw)
    except Exception as exc:  # one note never takes the index down
        problem = f"unreadable ({type(exc).__name__}: {str(exc)[:120]})"
        return note_from_parsed(rel, {}, "", False, None, [problem])


def filter_terms(filters: Filters) -> list[Any]:
    """The Whoosh terms of a (normalised) filter's type, category and tag."""
    parts: list[Any] = []
    if filters.type:
        parts.append(Term("type", filters.type))
    if filters.category:
        parts.append(Term("category", filters.category))
    if filters.tag:
        parts.append(Term("tags", filters.tag))
    return parts


def diff_manifest(
    disk: dict[str, tuple[int, int]], manifest: dict[str, list[int]]
) -> ReconcileResult:
    result = ReconcileResult()
    for rel, (mtime, size) in disk.items():
        row = manifest.get(rel)
        if row is None:
            result.added.append(rel)
        elif row[0] != mtime or row[1] != size:
            result.updated.append(rel)
    result.removed = [rel for rel in manifest if rel not in disk]
    return result
