"""BM25F candidates read straight from Whoosh's postings, for the short queries agents send.

Whoosh's own search builds a tree of union matchers (every term in every text field, per
segment) and scores each posting through several layers of calls and block-quality checks:
for a query of a few words over 10k notes that machinery was two thirds of a warm search.
Here each term's postings in each field are read once, in order, scored with the formula of
Whoosh's BM25F (its idf, its average field lengths, its quantised per-document lengths) and
added up per document; the best `limit` are kept as Whoosh's top collector keeps them (higher
score first, then the lower document number). The scores equal Whoosh's up to the order of
the additions, i.e. in the last bits (`tests/test_search_warm.py` compares the two)."""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from typing import Any

from whoosh.matching import FilterMatcher

MAX_REMEMBERED_LENGTHS = 64


class Lengths:
    """Each segment's field lengths as BM25F reads them (quantised, one per document), read
    once per segment instead of through five calls per scored posting. Segments never change
    once written (deletions do not change lengths), so their ids key the cache."""

    def __init__(self) -> None:
        self._of: dict[tuple[str, str], list[int]] = {}

    def get(self, leaf: Any, fieldname: str) -> Any:
        """A sequence docnum -> length for one leaf searcher (a segment's)."""
        segment = leaf.reader().segment()
        if segment is None:  # (not a segment's reader: ask it per document)
            read = leaf.doc_field_length
            return _PerDocument(lambda d: read(d, fieldname, 1))
        key = (segment.segment_id(), fieldname)
        lengths = self._of.get(key)
        if lengths is None:
            read = leaf.doc_field_length
            lengths = [read(d, fieldname, 1) for d in range(leaf.doc_count_all())]
            if len(self._of) >= MAX_REMEMBERED_LENGTHS:
                self._of.clear()
            self._of[key] = lengths
        return lengths


class _PerDocument:
    def __init__(self, read: Any) -> None:
        self._read = read

    def __getitem__(self, docnum: int) -> int:
        return int(self._read(docnum))


def _postings(reader: Any, field: str, term: str) -> tuple[Any, Any]:
    """A term's postings in one segment, and the documents among them to skip (deleted ones).
    A segment with deletions wraps its postings in a matcher that leaves them out, at a
    method call per posting (a third of a search once access counters had re-indexed
    notes); its set is tested here instead."""
    postings = reader.postings(field, term)
    deleted = getattr(reader, "deleted_docs_set", None)
    if deleted and isinstance(postings, FilterMatcher) and postings.child is not None:
        return postings.child, deleted
    return postings, frozenset()


def top_docs(
    searcher: Any,
    terms: Iterable[str],
    fields: Iterable[str],
    limit: int,
    *,
    b: float,
    k1: float,
    lengths: Lengths,
    allow: set[int] | None = None,
    left_out: set[int] | None = None,
) -> list[tuple[int, float]]:
    """The best `limit` (docnum, BM25F score) for any of `terms` in any of `fields`, among
    the documents `allow` lets in (all when None) and `left_out` does not name."""
    reader = searcher.reader()
    if reader.doc_count_all() == 0:
        return []
    scores: dict[int, float] = {}
    get = scores.get
    k1_1, one_b = k1 + 1, 1 - b
    terms = list(terms)
    leaves = searcher.leaf_searchers()
    for field in fields:
        avgfl = searcher.avg_field_length(field) or 1
        for term in terms:
            if (field, term) not in reader:
                continue
            idf = searcher.idf(field, term)
            for leaf, offset in leaves:
                leaf_reader = leaf.reader()
                if (field, term) not in leaf_reader:
                    continue
                fl = lengths.get(leaf, field)
                postings, deleted = _postings(leaf_reader, field, term)
                while postings.is_active():
                    docnum, tf = postings.id(), postings.weight()
                    if docnum not in deleted:
                        score = idf * ((tf * k1_1) / (tf + k1 * (one_b + b * fl[docnum] / avgfl)))
                        scores[docnum + offset] = get(docnum + offset, 0.0) + score
                    postings.next()
    found: Iterable[tuple[int, float]] = scores.items()
    if allow is not None:
        found = ((d, s) for d, s in found if d in allow)
    if left_out:
        found = ((d, s) for d, s in found if d not in left_out)
    return heapq.nlargest(limit, found, key=lambda item: (item[1], -item[0]))
