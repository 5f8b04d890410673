"""BM25F candidates read straight from Whoosh's postings, for the short queries agents send.

Whoosh's own search builds a tree of union matchers (every term in every text field, per
segment) and scores each posting through several layers of calls and block-quality checks:
for a query of a few words over 10k notes that machinery was two thirds of a warm search.
Here each term's postings in each field are read once, in order, scored with the formula of
Whoosh's BM25F (its idf, its average field lengths, its quantised per-document lengths, all
read through the reader's public methods) and
added up per document; the best `limit` are kept as Whoosh's top collector keeps them (higher
score first, then the lower document number). The scores equal Whoosh's up to the order of
the additions, i.e. in the last bits (`tests/integration/test_search_warm.py` compares the two).

What a segment holds never changes once it is written (deletions only mark documents), so
`Segments` keeps, per segment, the postings and field lengths of the terms asked for
(as arrays: a warm process reads a frequent term's postings once, not on every query)."""

from __future__ import annotations

import heapq
from array import array
from collections.abc import Iterable, Mapping
from typing import Any

from whoosh.matching import FilterMatcher

Postings = tuple["array[int]", "array[float]", "array[int]"]  # docnums, frequencies, lengths
MAX_REMEMBERED_POSTINGS = 2_000_000  # postings kept, all terms together (about 12 bytes each)


class Segments:
    """What is read once per segment: each term's postings, with the field length of each
    document they name, keyed by the segment's id (a reopened index keeps the segments it
    still has; what is kept holds numbers only, never a reader that may close)."""

    def __init__(self) -> None:
        self._postings: dict[tuple[str, str, str], Postings] = {}
        self._held = 0  # postings in `_postings`

    def postings(self, reader: Any, field: str, term: str) -> Postings:
        """(docnums, term frequencies, field lengths) of a term in one segment's reader,
        deleted documents included: the caller leaves out `deleted_docs_set`'s (a segment
        with deletions wraps its postings in a matcher that skips them at a method call per
        posting). Lengths come from the reader's public `doc_field_length`."""
        segment = reader.segment()
        key = (segment.segment_id(), field, term) if segment is not None else None
        found = self._postings.get(key) if key is not None else None
        if found is not None:
            return found
        matcher = reader.postings(field, term)
        if isinstance(matcher, FilterMatcher) and matcher.child is not None:
            matcher = matcher.child
        ids: array[int] = array("l")
        weights: array[float] = array("d")
        while matcher.is_active():
            ids.append(matcher.id())
            weights.append(matcher.weight())
            matcher.next()
        length = reader.doc_field_length
        lengths = array("l", (int(length(d, field, 1) or 1) for d in ids))
        if key is not None:
            if self._held + len(ids) > MAX_REMEMBERED_POSTINGS:
                self._postings.clear()
                self._held = 0
            self._postings[key] = (ids, weights, lengths)
            self._held += len(ids)
        return ids, weights, lengths


def top_docs(
    searcher: Any,
    terms: Iterable[str],
    fields: Iterable[str],
    limit: int,
    *,
    b: float,
    k1: float,
    segments: Segments,
    allow: set[int] | None = None,
    left_out: set[int] | None = None,
) -> list[tuple[int, float]]:
    """The best `limit` (docnum, BM25F score) for any of `terms` in any of `fields` (a
    mapping: field -> boost, the score's factor for a term found there), among
    the documents `allow` lets in (all when None) and `left_out` does not name."""
    reader = searcher.reader()
    if reader.doc_count_all() == 0:
        return []
    scores: dict[int, float] = {}
    get = scores.get
    k1_1, one_b = k1 + 1, 1 - b
    terms = list(terms)
    leaves = searcher.leaf_searchers()
    boosts = fields if isinstance(fields, Mapping) else {}
    for field in fields:
        boost = float(boosts.get(field, 1.0))
        avgfl = searcher.avg_field_length(field) or 1
        for term in terms:
            if (field, term) not in reader:
                continue
            idf = searcher.idf(field, term) * boost
            for leaf, offset in leaves:
                leaf_reader = leaf.reader()
                if (field, term) not in leaf_reader:
                    continue
                deleted = getattr(leaf_reader, "deleted_docs_set", None) or ()
                ids, weights, lengths = segments.postings(leaf_reader, field, term)
                for docnum, tf, fl in zip(ids, weights, lengths, strict=True):
                    if docnum in deleted:
                        continue
                    score = idf * ((tf * k1_1) / (tf + k1 * (one_b + b * fl / avgfl)))
                    scores[docnum + offset] = get(docnum + offset, 0.0) + score
    found: Iterable[tuple[int, float]] = scores.items()
    if allow is not None:
        found = ((d, s) for d, s in found if d in allow)
    if left_out:
        found = ((d, s) for d, s in found if d not in left_out)
    return heapq.nlargest(limit, found, key=lambda item: (item[1], -item[0]))
