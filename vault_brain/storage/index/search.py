"""Searching the index: BM25F candidates re-ranked with effective credit and recency."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import Any

from whoosh import scoring
from whoosh.query import And, Or, Term

from vault_brain.domain.notes import Filters
from vault_brain.domain.policy import Policy
from vault_brain.domain.ranking import blend
from vault_brain.domain.text import unique
from vault_brain.storage.frontmatter import body_text
from vault_brain.storage.index.schema import TEXT_FIELDS, analyzer
from vault_brain.storage.index.snippets import Snippets
from vault_brain.storage.index.store import Index, filter_terms, row_column

# A query is analysed from its first MAX_QUERY_CHARS characters into at most MAX_QUERY_TERMS
# distinct terms: a pasted 100,000-word message is still answered in milliseconds.
MAX_QUERY_CHARS = 20_000
MAX_QUERY_TERMS = 128
MAX_REMEMBERED_FILTERS = 16
MAX_REMEMBERED_LENGTHS = 64


class _Lengths:
    """Each segment's field lengths as Whoosh's BM25F reads them (quantised, one per
    document), read once per segment: the same numbers, without the five calls deep
    lookup per scored posting (a sixth of a warm search). Segments are never changed
    once written (deletions do not change lengths), so their ids key the cache."""

    def __init__(self) -> None:
        self._of: dict[tuple[str, str], list[int]] = {}

    def get(self, searcher: Any, fieldname: str) -> list[int] | None:
        segment = searcher.reader().segment()
        if segment is None:  # (not one segment: leave Whoosh's lookup)
            return None
        key = (segment.segment_id(), fieldname)
        lengths = self._of.get(key)
        if lengths is None:
            read = searcher.doc_field_length
            lengths = [read(d, fieldname, 1) for d in range(searcher.doc_count_all())]
            if len(self._of) >= MAX_REMEMBERED_LENGTHS:
                self._of.clear()
            self._of[key] = lengths
        return lengths


class _Scorer(scoring.BM25FScorer):
    """Whoosh's BM25F scorer with the lengths of `_Lengths` and its formula inlined (the
    same operations in the same order: the same scores to the last bit)."""

    def __init__(
        self,
        searcher: Any,
        fieldname: str,
        text: Any,
        B: float,
        K1: float,
        qf: int,
        lengths: list[int],
    ) -> None:
        super().__init__(searcher, fieldname, text, B, K1, qf=qf)
        self._fl = lengths
        self._k1_1 = K1 + 1
        self._1_b = 1 - B

    def score(self, matcher: Any) -> float:
        tf, fl = matcher.weight(), self._fl[matcher.id()]
        k1, b = self.K1, self.B
        return float(self.idf * ((tf * self._k1_1) / (tf + k1 * (self._1_b + b * fl / self.avgfl))))


class _BM25F(scoring.BM25F):
    """Whoosh's BM25F, scoring with `_Scorer`."""

    def __init__(self, lengths: _Lengths, B: float, K1: float) -> None:
        super().__init__(B=B, K1=K1)
        self._lengths = lengths

    def scorer(self, searcher: Any, fieldname: str, text: Any, qf: int = 1) -> Any:
        if searcher.schema[fieldname].scorable and fieldname not in self._field_B:
            lengths = self._lengths.get(searcher, fieldname)
            if lengths is not None:
                return _Scorer(searcher, fieldname, text, self.B, self.K1, qf, lengths)
        return super().scorer(searcher, fieldname, text, qf=qf)


@dataclass
class Hit:
    id: str
    path: str
    title: str
    type: str
    category: str
    score: float
    snippet: str
    bm25: float
    credit: float | None
    summary: str = ""
    """The stored start of the body (what a snippet falls back to)."""


class Searcher:
    """Keeps the analyzer and Whoosh searcher warm for many queries (agents, batch mode)."""

    def __init__(self, index: Index, policy: Policy) -> None:
        self.index = index
        self.policy = policy
        self._ana = analyzer()
        self._text = Snippets(self._ana)
        # the docnums each filter leaves out, for the Whoosh searcher they were read from
        self._masks_of: Any = None
        self._masks: dict[Filters, tuple[set[int] | None, set[int] | None]] = {}
        self._lengths = _Lengths()

    def terms(self, text: str) -> list[str]:
        return unique(token.text for token in self._ana(text[:MAX_QUERY_CHARS]))[:MAX_QUERY_TERMS]

    def _query(self, terms: list[str]) -> Any:
        return Or([Term(field, t) for t in terms for field in TEXT_FIELDS])

    def _filter(self, filters: Filters) -> Any:
        parts = filter_terms(filters)
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else And(parts)

    def _weighting(self) -> Any:
        return _BM25F(self._lengths, self.policy.bm25_b, self.policy.bm25_k1)

    def _allow_and_mask(self, searcher: Any, filters: Filters) -> tuple[Any, Any]:
        """The notes a (normalised) filter lets a search return, as Whoosh's `filter` and
        `mask` document sets: (allowed, None), (None, left out) or (None, None) for all.
        Read once per filter and per open searcher (turning a scope filter into a set of
        10k docnums was a fifth of a warm search), so a reopened index is read again."""
        if searcher is not self._masks_of:
            self._masks_of, self._masks = searcher, {}
        found = self._masks.get(filters)
        if found is not None:
            return found
        # archived notes are few: left out by a mask rather than allowing every live note
        left_out: set[int] = set()
        if not filters.include_archive:
            left_out.update(searcher.docs_for_query(Term("archived", True)))
        query = self._filter(filters)
        if query is None:
            found = (None, left_out or None)
        else:
            allowed = set(searcher.docs_for_query(query)) - left_out
            others = searcher.doc_count_all() - len(allowed)
            if len(allowed) <= others:  # (an empty set means no match: see `search`)
                found = (allowed, None)
            else:
                found = (None, set(range(searcher.doc_count_all())) - allowed or None)
        if len(self._masks) >= MAX_REMEMBERED_FILTERS:
            self._masks.clear()
        self._masks[filters] = found
        return found

    def search(
        self,
        text: str,
        k: int = 10,
        filters: Filters | None = None,
        now: dt.datetime | None = None,
        *,
        snippets: bool = True,
    ) -> list[Hit]:
        """The top `k` notes for `text` under (normalised) `filters`, best first; without
        `snippets`, the hits have none yet (`add_snippets` gives the ones a caller keeps)."""
        terms = self.terms(text)
        if not terms or k <= 0:
            return []
        filters = filters or Filters()
        searcher = self.index.searcher()
        searcher.weighting = self._weighting()
        limit = max(k, self.policy.search_candidates)
        allow, mask = self._allow_and_mask(searcher, filters)
        if isinstance(allow, set) and not allow:
            return []  # (Whoosh reads an empty filter as none)
        results = searcher.search(self._query(terms), limit=limit, filter=allow, mask=mask)
        now_ts = (now or dt.datetime.now().astimezone()).timestamp()
        rows = row_column(searcher.reader())
        hits: list[Hit] = []
        for res in results:
            fields = res.fields()
            row = json.loads(rows[res.docnum] or b"{}")
            score, eff = blend(float(res.score), row, self.policy, now_ts)
            hits.append(
                Hit(
                    id=fields["id"],
                    path=fields["path"],
                    title=fields.get("title", ""),
                    type=fields.get("type", ""),
                    category=fields.get("category", ""),
                    score=score,
                    snippet="",
                    bm25=float(res.score),
                    credit=eff,
                    summary=fields.get("summary", ""),
                )
            )
        hits.sort(key=lambda h: (-h.score, h.path))
        top = hits[:k]
        if snippets:
            self._snippets(top, set(terms))
        return top

    def add_snippets(self, text: str, hits: list[Hit]) -> None:
        """Snippets for `text` on hits a search returned without them."""
        self._snippets([h for h in hits if not h.snippet], set(self.terms(text)))

    def _snippets(self, hits: list[Hit], stems: set[str]) -> None:
        for hit in hits:
            hit.snippet = self._text.snippet(self._body(hit.path, hit.summary), stems)

    def _body(self, rel: str, fallback: str) -> str:
        try:
            return body_text(self.index.paths.note(rel).read_bytes())
        except OSError:
            return fallback
