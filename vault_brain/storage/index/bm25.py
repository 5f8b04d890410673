"""BM25F candidates read straight from Whoosh's postings, for the short queries agents send.

Whoosh's own search builds a tree of union matchers (every term in every text field, per
segment) and scores each posting through several layers of calls and block-quality checks:
for a query of a few words over 10k notes that machinery was two thirds of a warm search.
Here postings are scored with the formula of Whoosh's BM25F (its idf, its average field
lengths, its quantised per-document lengths, all read through the reader's public methods)
and added up per document; the best `limit` are kept as Whoosh's top collector keeps them
(higher score first, then the lower document number). The scores equal Whoosh's up to the
order of the additions, i.e. in the last bits (`tests/integration/test_search_warm.py`
compares the two).

At 100,000 notes a frequent word's body postings name 70,000 of them, and reading them all
was most of a warm search. `top_docs` is MaxScore: the (field, term) pairs are added up best
bound first, and the frequent words, whose bound is small, are only looked up for the few
documents that can still reach the top (see `top_docs`).

What a segment holds never changes once it is written (deletions only mark documents), so
`Segments` keeps, per segment, the postings and field lengths of the terms asked for
(as arrays: a warm process reads a frequent term's postings once, not on every query)."""

from __future__ import annotations

import heapq
import math
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from whoosh.matching import FilterMatcher

Postings = tuple["array[int]", "array[float]", "array[int]"]  # docnums, frequencies, lengths
# postings kept, all terms together (16 bytes each): at 100,000 notes a frequent word's body
# postings alone are 70,000, and a cache smaller than the terms of a few queries read each
# term again at every query (4 in 5 of a warm search's time went to reading them again)
MAX_REMEMBERED_POSTINGS = 8_000_000


class Segments:
    """What is read once per segment: each term's postings, with the field length of each
    document they name, keyed by the segment's id (a reopened index keeps the segments it
    still has; what is kept holds numbers only, never a reader that may close).

    A document's field length is read once per field, into an array per segment and field
    (4 bytes a document): a frequent word's postings name most documents, and each length
    read through the reader costs more than the rest of the posting together."""

    def __init__(self) -> None:
        self._postings: dict[tuple[str, str, str], Postings] = {}
        self._lengths: dict[tuple[str, str], array[int]] = {}
        self._held = 0  # postings in `_postings`

    def kept(self, reader: Any, field: str, term: str) -> Postings | None:
        """The postings `postings` read and kept, if it did."""
        segment = reader.segment()
        return None if segment is None else self._postings.get((segment.segment_id(), field, term))

    def length(self, reader: Any, field: str, docnum: int) -> int:
        """One document's field length in one segment (as `postings` gives it)."""
        segment = reader.segment()
        known = self._field_lengths(reader, (segment.segment_id(), field) if segment else None)
        if not known[docnum]:
            known[docnum] = int(reader.doc_field_length(docnum, field, 1) or 1)
        return known[docnum]

    def keep_only(self, readers: Iterable[Any]) -> None:
        """Forget what was kept for segments no longer in the index (merged away)."""
        live = set()
        for reader in readers:
            segment = reader.segment()
            if segment is not None:
                live.add(segment.segment_id())
        if any(key[0] not in live for key in self._lengths):
            self._lengths = {k: v for k, v in self._lengths.items() if k[0] in live}
        stale = [key for key in self._postings if key[0] not in live]
        for key in stale:
            self._held -= len(self._postings.pop(key)[0])

    def _field_lengths(self, reader: Any, key: tuple[str, str] | None) -> array[int]:
        """The lengths of `key`'s field in one segment, by document (0: not read yet)."""
        found = self._lengths.get(key) if key is not None else None
        if found is None:
            found = array("i", [0]) * reader.doc_count_all()
            if key is not None:
                self._lengths[key] = found
        return found

    def postings(self, reader: Any, field: str, term: str) -> Postings:
        """(docnums, term frequencies, field lengths) of a term in one segment's reader,
        deleted documents included: the caller leaves out `deleted_docs_set`'s (a segment
        with deletions wraps its postings in a matcher that skips them at a method call per
        posting). Lengths come from the reader's public `doc_field_length`."""
        segment = reader.segment()
        sid = segment.segment_id() if segment is not None else None
        key = (sid, field, term) if sid is not None else None
        found = self._postings.get(key) if key is not None else None
        if found is not None:
            return found
        matcher = reader.postings(field, term)
        if isinstance(matcher, FilterMatcher) and matcher.child is not None:
            matcher = matcher.child
        ids: array[int] = array("i")
        weights: array[float] = array("d")
        while matcher.is_active():
            ids.append(matcher.id())
            weights.append(matcher.weight())
            matcher.next()
        known = self._field_lengths(reader, (sid, field) if sid is not None else None)
        length = reader.doc_field_length
        for d in ids:
            if not known[d]:
                known[d] = int(length(d, field, 1) or 1)
        lengths = array("i", (known[d] for d in ids))
        if key is not None:
            if self._held + len(ids) > MAX_REMEMBERED_POSTINGS:
                self._postings.clear()
                self._held = 0
            self._postings[key] = (ids, weights, lengths)
            self._held += len(ids)
        return ids, weights, lengths


@dataclass
class _Term:
    """One query term in one field, over every segment that holds it."""

    field: str
    term: str
    idf: float  # with the field's boost
    avgfl: float
    parts: list[tuple[Any, int]]  # (segment reader, its first docnum in the index)
    bound: float  # no document scores more than this for it
    size: int  # postings, all segments together


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
    the documents `allow` lets in (all when None) and `left_out` does not name.

    MaxScore: each (field, term) has a bound no document's score for it exceeds (from the
    term's largest frequency and shortest field length, which the index keeps per term).
    Terms are added up best bound first; once the `limit`-th best sum so far beats the
    bounds of the terms left together, no document outside the sums can reach the top, and
    the terms left (the frequent words, whose postings name most of the vault) are only
    looked up for the documents that still can. Every score kept is then added up again in
    the order of `fields` and `terms`, as the plain sum over every posting would have."""
    reader = searcher.reader()
    if reader.doc_count_all() == 0 or limit <= 0:
        return []
    k1_1, one_b = k1 + 1, 1 - b
    terms = list(terms)
    leaves = [(leaf.reader(), offset) for leaf, offset in searcher.leaf_searchers()]
    segments.keep_only(leaf for leaf, _ in leaves)
    boosts = fields if isinstance(fields, Mapping) else {}
    wanted: list[_Term] = []
    for field in fields:
        boost = float(boosts.get(field, 1.0))
        avgfl = searcher.avg_field_length(field) or 1
        for term in terms:
            if (field, term) not in reader:
                continue
            idf = searcher.idf(field, term) * boost
            parts = [(leaf, offset) for leaf, offset in leaves if (field, term) in leaf]
            bound, size = 0.0, 0
            for leaf, _ in parts:
                info = leaf.term_info(field, term)
                tf, fl = info.max_weight(), info.min_length()
                bound = max(bound, idf * ((tf * k1_1) / (tf + k1 * (one_b + b * fl / avgfl))))
                size += info.doc_frequency()
            wanted.append(_Term(field, term, idf, avgfl, parts, bound * (1 + _SLACK), size))

    def score(t: _Term, tf: float, fl: int) -> float:
        return t.idf * ((tf * k1_1) / (tf + k1 * (one_b + b * fl / t.avgfl)))

    def eligible(docnum: int) -> bool:
        return (allow is None or docnum in allow) and not (left_out and docnum in left_out)

    def nth_best(values: Iterable[float]) -> float:
        best = heapq.nlargest(limit, values)
        return best[-1] if len(best) == limit else -math.inf

    # the terms that can bring a document into the top: every posting added up
    by_bound = sorted(wanted, key=lambda t: -t.bound)
    prunable = all(t.idf > 0 for t in wanted)  # (a partial sum is then below the whole)
    rest = sum(t.bound for t in by_bound)
    sums: dict[int, float] = {}
    get = sums.get
    done = 0
    for t in by_bound:
        if prunable and len(sums) >= limit and t.size >= _WORTH_A_CHECK:
            theta = nth_best(s for d, s in sums.items() if eligible(d))
            if _below(rest, theta):
                break
        for leaf, offset in t.parts:
            deleted = getattr(leaf, "deleted_docs_set", None) or ()
            ids, weights, lengths = segments.postings(leaf, t.field, t.term)
            idf, avgfl = t.idf, t.avgfl
            for docnum, tf, fl in zip(ids, weights, lengths, strict=True):
                if docnum in deleted:
                    continue
                s = idf * ((tf * k1_1) / (tf + k1 * (one_b + b * fl / avgfl)))
                sums[docnum + offset] = get(docnum + offset, 0.0) + s
        rest -= t.bound
        done += 1
    rest = max(rest, 0.0) if done < len(by_bound) else 0.0

    # the documents that still can reach the top, and the terms left looked up for them only
    alive = {d: s for d, s in sums.items() if eligible(d)}
    theta = nth_best(alive.values())
    alive = {d: s for d, s in alive.items() if not _below(s + rest, theta)}
    for t in by_bound[done:]:
        for docnum, s in _lookup(t, sorted(alive), segments, score).items():
            alive[docnum] += s
        rest = max(rest - t.bound, 0.0)
        theta = nth_best(alive.values())
        alive = {d: s for d, s in alive.items() if not _below(s + rest, theta)}

    # each score kept, added up in the order of the fields and the terms
    kept = sorted(alive)
    final: dict[int, float] = {}
    for t in wanted:
        for docnum, s in _lookup(t, kept, segments, score).items():
            final[docnum] = final.get(docnum, 0.0) + s
    return heapq.nlargest(limit, final.items(), key=lambda item: (item[1], -item[0]))


def _below(most: float, theta: float) -> bool:
    """`most` (a bound) is surely below `theta`, rounding apart."""
    return most < theta - _SLACK * abs(theta)


_SLACK = 1e-9  # relative: bounds and sums added up in another order differ in the last bits
_WORTH_A_CHECK = 256  # postings of the next term from which the top is checked first
_SKIP_COST = 48  # about the postings one skip through a term's postings costs to read


def _lookup(
    t: _Term, docnums: list[int], segments: Segments, score: Callable[[_Term, float, int], float]
) -> dict[int, float]:
    """docnum -> the term's score, for those of the sorted `docnums` its postings name: from
    the postings kept (or read whole and kept) when the documents are many for the term's
    size, else by skipping through its postings to each."""
    found: dict[int, float] = {}
    for leaf, offset in t.parts:
        lo = bisect_left(docnums, offset)
        hi = bisect_left(docnums, offset + leaf.doc_count_all())
        if lo == hi:
            continue
        wanted = [d - offset for d in docnums[lo:hi]]
        kept = segments.kept(leaf, t.field, t.term)
        if kept is None and len(wanted) * _SKIP_COST < leaf.doc_frequency(t.field, t.term):
            matcher = leaf.postings(t.field, t.term)
            for docnum in wanted:
                if not matcher.is_active():
                    break
                matcher.skip_to(docnum)
                if matcher.is_active() and matcher.id() == docnum:
                    fl = segments.length(leaf, t.field, docnum)
                    found[docnum + offset] = score(t, matcher.weight(), fl)
            continue
        ids, weights, lengths = kept or segments.postings(leaf, t.field, t.term)
        n = len(ids)
        for docnum in wanted:
            j = bisect_left(ids, docnum)
            if j < n and ids[j] == docnum:
                found[docnum + offset] = score(t, weights[j], lengths[j])
    return found
