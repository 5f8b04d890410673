"""Whoosh's segments: how the index's writers commit, and when they merge.

Each commit adds a segment, and by default also runs Whoosh's merge policy (`MERGE_SMALL`:
once enough small segments have gathered, it merges them), which costs that commit 100-200
ms at 1,000 notes instead of 25. A process that writes a few notes at a time while someone
waits (`vb session`) commits with `merge_later`: no merging, up to `MAX_UNMERGED` segments
(searches stay fast), and `merge_small` runs the same policy when it is quiet (as does the
commit that reaches the bound). The documents are the same either way.
"""

from __future__ import annotations

import os
import secrets
from typing import Any

from whoosh.codec.whoosh3 import W3Codec, W3PerDocReader, W3Segment
from whoosh.util.numeric import byte_to_length
from whoosh.writing import MERGE_SMALL

MAX_UNMERGED = 24  # segments a `merge_later` commit leaves before it merges anyway
MERGEABLE = 5  # (MERGE_SMALL merges nothing in fewer segments)


class Codec(W3Codec):
    """Whoosh 3's codec, with new segments named from the OS's random source: Whoosh names
    them from the process-wide `random` generator, so a process that seeds it (or two forked
    writers sharing its state) reuses a name and the commit fails on an assertion."""

    def new_segment(self, storage: Any, indexname: str) -> W3Segment:
        return W3Segment(self, indexname, segid=secrets.token_hex(8))

    def per_document_reader(self, storage: Any, segment: Any) -> W3PerDocReader:
        # (only writers use this codec: readers take the codec a segment names, Whoosh's)
        return _WrittenLengths(storage, segment)


class _WholeColumn:
    """A lengths column read whole, as it is stored: Whoosh 3's `LENGTHS_COLUMN` holds a byte
    per document (a quantised length, 0 for none) up to the last document with one; those
    after it have the column's default, 0."""

    def reader(self, dbfile: Any, basepos: int, length: int, doccount: int) -> bytes:
        return bytes(dbfile.get(basepos, length))


class _WrittenLengths(W3PerDocReader):
    """The per-document reader a writer hands its postings writer, which asks each posting's
    field length (for the length bounds each block of postings keeps): Whoosh reads each
    through a column reader (a few µs each: at 100,000 notes, 14 million postings and a sixth
    of an index build's time). Here each field's lengths are read once, whole, and indexed."""

    def __init__(self, storage: Any, segment: Any) -> None:
        super().__init__(storage, segment)
        self._whole: dict[str, bytes | None] = {}  # None: the field keeps no lengths

    def doc_field_length(self, docnum: int, fieldname: str, default: Any = 0) -> Any:
        if docnum > self.doc_count_all():
            raise IndexError(f"Asked for docnum {docnum} of {self.doc_count_all()}")
        try:
            found = self._whole[fieldname]
        except KeyError:
            column = f"_{fieldname}_len"  # (Whoosh 3's name for a field's lengths column)
            found = self._whole[fieldname] = (
                self.column_reader(column, _WholeColumn()) if self.has_column(column) else None
            )
        if found is None:  # (Whoosh looked for the file again at each posting: a stat each)
            return default
        quantised = found[docnum] if docnum < len(found) else 0
        return byte_to_length(quantised) if quantised else None  # (as Whoosh's reader)


def writer(ix: Any, **options: Any) -> Any:
    """A writer of `ix` whose segments are named by `Codec`."""
    return ix.writer(codec=Codec(), **options)


def commit(writer: Any, merge_later: bool = False) -> None:
    """Commit a writer: merging small segments, unless `merge_later` and there are few."""
    merge = not merge_later or len(writer.segments) >= MAX_UNMERGED
    writer.commit(optimize=False, merge=merge)


def merge_small(ix: Any) -> bool:
    """Merge small segments now, as a commit would have (the caller holds the index lock);
    False when there were too few to merge."""
    merging = writer(ix)
    if len(merging.segments) < MERGEABLE:
        merging.cancel()
        return False
    merging.commit(mergetype=MERGE_SMALL)
    return True


def row_column(reader: Any) -> Any:
    """The row column of a reader; an empty index (Whoosh's EmptyReader) has none."""
    if reader.doc_count_all() == 0:
        return []
    return reader.column_reader("row")


def fast_writer(ix: Any) -> Any:
    """A writer for thousands of documents (two processes, one segment each). Each process
    sorts its postings in memory up to `limitmb` (Whoosh's estimate), and past it in runs
    on disk merged at the commit, which costs more than the sorting: 512 MB holds the
    postings of `store.BATCH` notes shared by the two (about 400 MB of memory each)."""
    return writer(ix, limitmb=512, procs=min(2, os.cpu_count() or 1), multisegment=True)
