"""The search index as a cache of the files: reconcile, targeted refresh, rebuild, lookups.

Files are the truth. Every reader first calls `reconcile()`: a stat scan compares the
vault with the manifest (path -> mtime, size; see `scan`) and re-parses only what changed,
so results are never stale even with no watcher running.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from whoosh import index as windex
from whoosh.query import And, Every, Or, Term

from vault_brain.domain.errors import VaultBrainError
from vault_brain.domain.notes.model import Filters, Note, note_from_parsed
from vault_brain.domain.notes.renames import moves_between
from vault_brain.storage.files import atomic_write, file_lock, io_error, write_cache
from vault_brain.storage.index import mapped
from vault_brain.storage.index.renames import record_moves
from vault_brain.storage.index.scan import (
    ReconcileResult,
    Walk,
    bulk_allocation,
    diff_manifest,
    inside_vault,
    is_ignored_rel,
    scan,
    stat_key,
    unchanged,
    walk,
)
from vault_brain.storage.index.schema import SCHEMA_VERSION, build_schema, document
from vault_brain.storage.index.segments import (
    commit,
    fast_writer,
    merge_small,
    row_column,
)
from vault_brain.storage.index.segments import writer as segment_writer
from vault_brain.storage.notes.read import note_from_bytes
from vault_brain.storage.paths import VaultPaths
from vault_brain.storage.regular import read_regular

Progress = Callable[[int, int], None]


LEGACY_GENERATION = "index"  # the one folder indexes had before generations
_GENERATION = re.compile(r"index(-[0-9a-f]{16})?")
RETIRED_GRACE = 60.0  # seconds a replaced generation is kept for readers still using it
# Notes per commit when thousands are indexed (a rebuild): each of the writer's processes then
# sorts its postings in memory once. At 100,000 notes in one commit they outgrew the writer's
# memory limit and were sorted in runs on disk and merged back, a third of a rebuild's time
# (`vb index --rebuild`: 104 s); in batches the index has a few more segments.
BATCH = 25_000
CHUNK = 500  # notes a writer's reading thread parses at a time
READ_AHEAD = 4  # chunks parsed ahead of the writer (at most)
# A build that follows files being written (`Index.rebuild(arriving=...)`) indexes them in
# rounds of at least this many new files, looking again every FOLLOW_PAUSE seconds.
FOLLOW_ROUND = 2_000
FOLLOW_PAUSE = 0.2


@dataclass
class Manifest:
    """`.vb/manifest.json`: the current index generation and the files it holds."""

    index: str = LEGACY_GENERATION
    files: dict[str, list[int]] = field(default_factory=dict)
    retired: dict[str, float] = field(default_factory=dict)  # generation -> when replaced
    private_paths: list[str] = field(default_factory=list)
    """STRATEGY.md's `private_paths` the rows were indexed with (another: index again)."""

    def copy(self) -> Manifest:
        return Manifest(self.index, dict(self.files), dict(self.retired), list(self.private_paths))

    def to_json(self) -> str:
        data: dict[str, Any] = {"schema": SCHEMA_VERSION, "index": self.index, "files": self.files}
        if self.retired:
            data["retired"] = self.retired
        if self.private_paths:
            data["private_paths"] = self.private_paths
        return json.dumps(data, ensure_ascii=False)


def _new_generation() -> str:
    return f"{LEGACY_GENERATION}-{secrets.token_hex(8)}"


class Index:
    """The Whoosh index of one vault.

    The index lives in a generation folder named by the manifest. Small changes are written
    into the current generation under the index lock; a rebuild writes a whole new
    generation beside it with no lock held (searches and writes go on), catches up with what
    changed meanwhile, and swaps it in by rewriting the manifest. The replaced generation is
    removed a minute later, when no reader can still be using it."""

    def __init__(self, paths: VaultPaths, private_paths: tuple[str, ...] = ()) -> None:
        self.paths = paths
        self.private_paths = tuple(private_paths)
        """STRATEGY.md's `private_paths`: each row's `private` says whether the note's front
        matter or its path keeps it from agents; when they change, every row is indexed
        again (the manifest records the patterns its rows were made with)."""
        self._ix: Any = None
        self._generation: str | None = None
        self._searcher: Any = None
        self._opened, self.lag = 0.0, 0.0  # (see `searcher`)
        self.merge_later = False
        """Small writes leave merging segments to `merge` (see `segments`)."""
        self._read_last: tuple[tuple[int, ...], Manifest | None] | None = None
        """(the manifest file's stat, what it held) as this process last read or wrote it."""
        self._quiet: tuple[tuple[int, ...], Walk] | None = None
        """(the manifest file's stat, a walk of the vault) when a reconcile last found the
        vault as that manifest has it."""

    # -- manifest -----------------------------------------------------------
    def _load(self) -> Manifest | None:
        """The manifest, to change (a copy of `_read`'s)."""
        manifest = self._read()
        return None if manifest is None else manifest.copy()

    def _read(self) -> Manifest | None:
        """The manifest, to read only: parsed again only when the file changed (by its stat)
        since this process last read or wrote it (at 100,000 notes, 60 ms a parse)."""
        try:
            key = stat_key(self.paths.manifest)
        except OSError:
            return None
        if self._read_last is not None and self._read_last[0] == key:
            return self._read_last[1]
        manifest = self._parse()
        self._read_last = (key, manifest)
        return manifest

    def _remember(self, manifest: Manifest) -> None:
        """This process just wrote `manifest` (which is not changed after this)."""
        try:
            self._read_last = (stat_key(self.paths.manifest), manifest)
        except OSError:
            self._read_last = None

    def _parse(self) -> Manifest | None:
        try:
            with bulk_allocation():  # (a list per note)
                data = json.loads(self.paths.manifest.read_bytes())
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("schema") != SCHEMA_VERSION:
            return None
        files, name = data.get("files"), data.get("index", LEGACY_GENERATION)
        if not isinstance(files, dict) or not isinstance(name, str):
            return None
        if not _GENERATION.fullmatch(name):
            return None
        retired = data.get("retired")
        retired = {
            k: v
            for k, v in (retired.items() if isinstance(retired, dict) else ())
            if isinstance(k, str) and _GENERATION.fullmatch(k) and isinstance(v, int | float)
        }
        private = data.get("private_paths", [])
        private = [p for p in private if isinstance(p, str)] if isinstance(private, list) else []
        return Manifest(name, files, retired, private)

    def _fits(self, manifest: Manifest) -> bool:
        """The rows were made with this index's `private_paths` (else: index every note
        again, each row's `private` may have changed)."""
        return manifest.private_paths == list(self.private_paths)

    def load_manifest(self) -> dict[str, list[int]] | None:
        """The indexed files (path -> [mtime_ns, size]), or None when there is no index: to
        read only, and the same object until the manifest changes."""
        manifest = self._read()
        return None if manifest is None else manifest.files

    def _save(self, manifest: Manifest) -> None:
        """After an incremental write: best effort (a lost manifest update only makes the
        next reconcile index those files again)."""
        write_cache(self.paths.manifest, manifest.to_json())
        self._remember(manifest)

    # -- whoosh -------------------------------------------------------------
    def _open(self, manifest: Manifest | None = None) -> Any:
        """The index of the generation `manifest` names (reopened when another process
        swapped in a new one); without one, what is open, else the current generation."""
        if manifest is None:
            if self._ix is not None:
                return self._ix
            manifest = self._read()
        name = manifest.index if manifest else LEGACY_GENERATION
        if self._ix is not None and name == self._generation:
            return self._ix
        self.close()
        self._ix = None
        try:
            self._ix = mapped.open_dir(str(self.paths.index_dir(name)))
        except Exception as exc:  # a damaged cache is rebuilt, never fatal
            raise _CorruptIndex(str(exc)) from exc
        self._generation = name
        return self._ix

    def _create(self, name: str) -> Any:
        folder = self.paths.index_dir(name)
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        return mapped.create_in(str(folder), build_schema())

    def _usable(self, manifest: Manifest | None = None) -> bool:
        """True if the index opens and can be searched; a missing or damaged one is rebuilt."""
        try:
            self._open(manifest)
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
        ix: Any = None,
        fresh: bool = False,
    ) -> dict[str, list[int]]:
        """Index `docs` (relative paths) and drop `removed` in `ix` (default: the current
        generation); returns their new manifest rows. `fresh`: `ix` is empty (adds only).

        Thousands of notes go in batches of `BATCH`, each its own commit. A thread reads and
        parses them `READ_AHEAD` chunks of `CHUNK` ahead of the writer: the writer's
        processes start on the first chunk, and while a batch is committed (the processes
        finish their segments, and this one waits for them) the next is being read."""
        ix = self._open() if ix is None else ix
        docs = list(docs)
        big = len(docs) >= 2000
        step = BATCH if big else max(len(docs), 1)
        chunks = [docs[start : start + CHUNK] for start in range(0, len(docs), CHUNK)] or [[]]
        rows: dict[str, list[int]] = {}
        if progress and total:
            progress(0, total)
        done = in_batch = 0
        writer = None
        with ThreadPoolExecutor(1) as reading:
            ahead = deque(reading.submit(self._documents, c) for c in chunks[:READ_AHEAD])
            upcoming = iter(chunks[READ_AHEAD:])
            try:
                while ahead:
                    read = ahead.popleft().result()
                    if (chunk := next(upcoming, None)) is not None:
                        ahead.append(reading.submit(self._documents, chunk))
                    if writer is None:
                        writer = segment_writer(ix, limitmb=256) if not big else fast_writer(ix)
                        if not done:
                            for rel in removed:
                                writer.delete_by_term("path", rel)
                    for rel, fields, row in read:
                        done += 1
                        in_batch += 1
                        if fields is None:
                            writer.delete_by_term("path", rel)
                            continue
                        if fresh:
                            writer.add_document(**fields)
                        else:
                            writer.update_document(**fields)
                        rows[rel] = row
                        if progress and (done % 25 == 0 or done == total):
                            progress(done, total)
                    if in_batch >= step or not ahead:
                        commit(writer, self.merge_later and not big)
                        writer, in_batch = None, 0
            except BaseException:
                if writer is not None:
                    with contextlib.suppress(Exception):
                        writer.cancel()
                for pending in ahead:
                    pending.cancel()
                raise
        self._searcher = None
        return rows

    def _documents(self, rels: list[str]) -> list[tuple[str, dict[str, Any] | None, list[int]]]:
        """(path, index document, manifest row) of each note; no document for a file that
        is gone or cannot be read."""
        read: list[tuple[str, dict[str, Any] | None, list[int]]] = []
        for rel in rels:
            full = self.paths.note(rel)
            try:
                st = full.stat()
                raw = read_regular(full)
            except OSError:
                read.append((rel, None, []))
                continue
            fields = document(_readable_note(rel, raw), self.private_paths)
            read.append((rel, fields, [st.st_mtime_ns, st.st_size]))
        return read

    # -- public -------------------------------------------------------------
    def reconcile(
        self, progress: Progress | None = None, timeout: float | None = None
    ) -> ReconcileResult:
        """Bring the index in line with the files on disk."""
        seen = walk(self.paths)
        manifest = self._read()
        if manifest is None or not self._fits(manifest) or not self._usable(manifest):
            return self._build_first(progress, timeout)
        read_as = self._read_last[0] if self._read_last else None
        if self._quiet and self._quiet[0] == read_as and seen.same_as(self._quiet[1]):
            return ReconcileResult(total=len(seen))  # (as the last reconcile found it)
        disk = seen.files()
        result = diff_manifest(disk, manifest.files)
        if not result.changed:
            self._quiet = (read_as, seen) if read_as else None
            result.total = len(disk)
            return result
        with self._lock(timeout):
            manifest = self._load()
            if manifest is None or not self._fits(manifest):
                return self._build_first(progress, timeout, locked=True)
            result = diff_manifest(disk, manifest.files)
            if result.changed:
                gone = self._identities(result.removed if result.added else [])
                try:
                    rows = self._write(
                        result.added + result.updated,
                        result.removed,
                        progress,
                        len(result.added) + len(result.updated),
                    )
                except _CorruptIndex:
                    return self._build_first(progress, timeout, locked=True)
                self._record_moves(gone, result.added)
                for rel in result.removed:
                    manifest.files.pop(rel, None)
                manifest.files.update(rows)
                self._sweep(manifest)
                self._save(manifest)
        result.total = len(disk)
        return result

    def _build_first(
        self, progress: Progress | None, timeout: float | None, locked: bool = False
    ) -> ReconcileResult:
        """There is no usable index: build one. Everyone who needs it waits for the first
        to finish (there is nothing to serve meanwhile)."""
        if locked:  # under the index lock already (never wait for the rebuild lock in it)
            return self._build(progress, contextlib.nullcontext, rebuilding=False)
        wait = self.paths.lock_timeout if timeout is None else timeout
        with file_lock(self.paths.rebuild_lock, "search index rebuild", wait):
            manifest = self._read()
            if manifest is not None and self._fits(manifest) and self._usable(manifest):
                # (built while this one waited)
                return self.reconcile(progress, timeout)
            return self._build(progress, lambda: self._lock(timeout))

    def rebuild(
        self, progress: Progress | None = None, arriving: Callable[[], bool] | None = None
    ) -> ReconcileResult:
        """A whole new index from the files, built beside the current one, which serves
        searches and takes writes until the new one is swapped in. `arriving`: the files
        are still being written (a checkout) while it answers True; the build indexes them
        as they come (see `_follow`)."""
        with file_lock(self.paths.rebuild_lock, "search index rebuild", self.paths.lock_timeout):
            return self._build(progress, self._lock, arriving=arriving)

    def _build(
        self,
        progress: Progress | None,
        swap_lock: Callable[[], contextlib.AbstractContextManager[Any]],
        rebuilding: bool = True,
        arriving: Callable[[], bool] | None = None,
    ) -> ReconcileResult:
        """Write a new generation with `swap_lock` not held, then, holding it, catch up with
        the files changed meanwhile and make it current. On any failure the new generation
        is removed and the old one stays current."""
        name = _new_generation()
        try:
            ix = self._create(name)
            if arriving is None:
                rels = sorted(scan(self.paths))
                rows = self._write(rels, (), progress, len(rels), ix=ix, fresh=True)
            else:
                rows = self._follow(ix, arriving, progress)
            with swap_lock():
                now = scan(self.paths)
                late = diff_manifest(now, rows)
                if late.changed:
                    rows.update(
                        self._write(late.added + late.updated, late.removed, None, 0, ix=ix)
                    )
                    for rel in late.removed:
                        rows.pop(rel, None)
                old = self._load()
                manifest = Manifest(
                    name, rows, old.retired if old else {}, list(self.private_paths)
                )
                if old is not None and old.index != name:
                    manifest.retired[old.index] = time.time()
                atomic_write(self.paths.manifest, manifest.to_json(), durable=False)
                self._remember(manifest)
        except BaseException as exc:
            with contextlib.suppress(OSError):
                shutil.rmtree(self.paths.index_dir(name))
            if isinstance(exc, (VaultBrainError, OSError)) and self._read() is not None:
                raise _kept_old_index(exc) from exc
            raise
        self.close()
        self._ix, self._generation = ix, name
        self._sweep(manifest, rebuilding, save=True)
        return ReconcileResult(added=sorted(now), total=len(now), rebuilt=True)

    def _follow(
        self, ix: Any, arriving: Callable[[], bool], progress: Progress | None
    ) -> dict[str, list[int]]:
        """Index files while they are being written, in rounds: each takes what has appeared
        (or changed) since the last, once there are `FOLLOW_ROUND` of them, until
        `arriving()` is False; `_build`'s catch-up then takes the rest. A file read
        half-written keeps the stat it had when it was read, so a later round (or the
        catch-up) finds it changed and indexes it again."""
        rows: dict[str, list[int]] = {}
        while True:
            todo = diff_manifest(scan(self.paths), rows)
            if len(todo.added) + len(todo.updated) < FOLLOW_ROUND:
                if not arriving():
                    return rows
                time.sleep(FOLLOW_PAUSE)
                continue
            if todo.added:
                added = sorted(todo.added)
                step = _offset(progress, len(rows)) if progress else None
                rows.update(self._write(added, (), step, len(added), ix=ix, fresh=True))
            if todo.updated or todo.removed:
                rows.update(self._write(todo.updated, todo.removed, None, 0, ix=ix))
            for rel in todo.removed:
                rows.pop(rel, None)

    def _sweep(self, manifest: Manifest, rebuilding: bool = False, save: bool = False) -> None:
        """Remove generations replaced more than a minute ago, and folders a killed rebuild
        left untouched for a minute (when no rebuild runs: `rebuilding` says this process
        holds its lock). Never the current generation."""
        now = time.time()
        keep = {manifest.index} | {
            g for g, when in manifest.retired.items() if now - when < RETIRED_GRACE
        }
        try:
            names = [n for n in os.listdir(self.paths.cache_dir) if _GENERATION.fullmatch(n)]
        except OSError:
            return
        stray = [
            n for n in names if n not in keep and n not in manifest.retired and self._idle(n, now)
        ]
        if stray and not rebuilding and not self._no_rebuild_running():
            stray = []
        for name in [n for n in names if n in manifest.retired and n not in keep] + stray:
            with contextlib.suppress(OSError):
                shutil.rmtree(self.paths.index_dir(name))
        expired = set(manifest.retired) - keep
        for name in expired:
            manifest.retired.pop(name)
        if save and expired:
            self._save(manifest)

    def _idle(self, name: str, now: float) -> bool:
        """A folder no one has written for `RETIRED_GRACE`: a generation another process is
        still building (the first index, built under the index lock alone) is never taken
        for one a killed rebuild left."""
        try:
            return now - self.paths.index_dir(name).stat().st_mtime >= RETIRED_GRACE
        except OSError:
            return False

    def _no_rebuild_running(self) -> bool:
        try:
            with file_lock(self.paths.rebuild_lock, "search index rebuild", 0):
                return True
        except VaultBrainError:
            return False

    def refresh(self, rels: Iterable[str]) -> ReconcileResult:
        """Re-index just these paths (after vb's own writes, or watcher events)."""
        result = ReconcileResult()
        wanted = sorted({r for r in rels if not is_ignored_rel(r)})
        if not wanted:
            return result
        real_root = os.path.realpath(self.paths.root)
        files = self.load_manifest()  # (saved after commit)
        if files is not None and unchanged(self.paths, wanted, files):
            result.stamps = {rel: files.get(rel) for rel in wanted}
            return result  # e.g. vb's own writes, indexed as they were written: no lock
        with self._lock():
            manifest = self._load()
            if manifest is None or not self._fits(manifest):
                return self._build_first(None, None, locked=True)
            present, gone = [], []
            for rel in wanted:
                full = self.paths.note(rel)
                outside = full.is_symlink() and not inside_vault(str(full), real_root)
                if full.is_file() and not outside:
                    st = full.stat()
                    if manifest.files.get(rel) != [st.st_mtime_ns, st.st_size]:
                        present.append(rel)
                elif rel in manifest.files:
                    gone.append(rel)
            result.stamps = {rel: manifest.files.get(rel) for rel in wanted}
            if not present and not gone:
                return result
            came = [rel for rel in present if rel not in manifest.files]
            identities = self._identities(gone if came else [])
            rows = self._write(present, gone, None, len(present))
            self._record_moves(identities, came)
            for rel in gone:
                manifest.files.pop(rel, None)
            for rel in present:
                (result.updated if rel in manifest.files else result.added).append(rel)
            manifest.files.update(rows)
            result.removed = gone
            result.stamps = {rel: manifest.files.get(rel) for rel in wanted}
            self._sweep(manifest)
            self._save(manifest)
        return result

    def _identities(self, rels: list[str]) -> dict[str, tuple[str, str | None]]:
        """path -> (id, body hash) of these indexed notes (before they are dropped)."""
        found = {}
        for rel in rels:
            row = self.row_for_path(rel)
            if row is not None:
                found[rel] = (str(row.get("id") or ""), row.get("body_hash"))
        return found

    def _record_moves(self, gone: dict[str, tuple[str, str | None]], came: list[str]) -> None:
        """Record as renames the notes among `came` (just indexed) that are notes of `gone`
        under a new path (storage/index/renames.py)."""
        if gone and came:
            record_moves(self.paths, moves_between(gone, self._identities(came)))

    def merge(self) -> bool:
        """Merge the small segments `merge_later` writes left (when it is quiet); False when
        there was nothing to merge or another writer holds the index."""
        try:
            with self._lock(timeout=0):
                return merge_small(self._open(self._read()))
        except Exception:  # locked, or a damaged index: an optimisation, never an error
            return False

    def searcher(self) -> Any:
        """The open searcher, reopened once the index has changed (if `lag` allows: the
        seconds a searcher may stay behind later commits; 0, the default, none)."""
        # (Searcher.refresh() breaks on a searcher opened over an empty index: reopen instead)
        young = time.monotonic() - self._opened < self.lag
        if self._searcher is not None and not young and not self._searcher.up_to_date():
            self.close()
        if self._searcher is None:
            self._searcher, self._opened = self._open().searcher(), time.monotonic()
        return self._searcher

    def rows(self, include_archived: bool = False) -> Iterator[tuple[int, dict[str, Any]]]:
        """(docnum, row) for every live note, from the row column (one pass, no decompression)."""
        reader = self.searcher().reader()
        deleted = reader.is_deleted if reader.has_deletions() else None
        live = [
            (docnum, raw)
            for docnum, raw in enumerate(row_column(reader))
            if raw and not (deleted and deleted(docnum))
        ]
        # one JSON array for them all: at 100,000 notes, a `json.loads` per row was half of
        # MEMORY.md's time and of a prune's plan
        with bulk_allocation():
            parsed = json.loads(b"[" + b",".join(raw for _, raw in live) + b"]")
        for (docnum, _), data in zip(live, parsed, strict=True):
            if include_archived or not data.get("archived"):
                yield docnum, data

    def pending(self) -> ReconcileResult:
        """What a reconcile would do now (the files changed since), without doing it."""
        result = diff_manifest(scan(self.paths), self.load_manifest() or {})
        return result

    def exists(self) -> bool:
        """True when an index has been built (whether or not it is fresh)."""
        manifest = self._read()
        return manifest is not None and windex.exists_in(str(self.paths.index_dir(manifest.index)))

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
        if not filters.private:
            parts.append(Term("private", False))
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


def _offset(progress: Progress, done: int) -> Progress:
    """`progress` of a round of work that follows `done` items already done."""
    return lambda n, total: progress(done + n, done + total)


def _kept_old_index(exc: VaultBrainError | OSError) -> VaultBrainError:
    err = exc if isinstance(exc, VaultBrainError) else io_error(exc, exc.filename or "the index")
    return VaultBrainError(
        f"{err.message}; the index was not rebuilt, searches use the previous one", hint=err.hint
    )


class _CorruptIndex(VaultBrainError):
    def __init__(self, detail: str) -> None:
        super().__init__(f"the search index is damaged ({detail})", hint="run `vb index --rebuild`")


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
    if filters.scopes:
        scopes = [Term("scope", scope) for scope in filters.scopes]
        parts.append(scopes[0] if len(scopes) == 1 else Or(scopes))
    return parts
