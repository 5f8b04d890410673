"""Searching the index: BM25F candidates re-ranked with effective credit and recency."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import Any

from whoosh.query import And, Term

from vault_brain.domain.capture.supersede import current_text
from vault_brain.domain.notes.model import PERSON, Filters
from vault_brain.domain.notes.ranking import blend, factors
from vault_brain.domain.policy.settings import Policy
from vault_brain.domain.text import unique
from vault_brain.storage.index.bm25 import Segments, top_docs
from vault_brain.storage.index.schema import TEXT_FIELDS, analyzer
from vault_brain.storage.index.segments import row_column
from vault_brain.storage.index.snippets import Snippets
from vault_brain.storage.index.store import Index, filter_terms
from vault_brain.storage.notes.frontmatter import body_text
from vault_brain.storage.regular import read_regular

# A query is analysed from its first MAX_QUERY_CHARS characters into at most MAX_QUERY_TERMS
# distinct terms: a pasted 100,000-word message is still answered in milliseconds.
MAX_QUERY_CHARS = 20_000
MAX_QUERY_TERMS = 128
MAX_REMEMBERED_FILTERS = 16


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
    relevance: float = 0.0
    """What `score` was made from before the note's factors: its BM25, or in hybrid mode
    the fusion of BM25 and embedding similarity."""
    summary: str = ""
    """The stored start of the body (what a snippet falls back to)."""
    written_by: str = PERSON
    """The note's `source`: who wrote its text (`domain.notes.model.SOURCES`)."""
    explain: dict[str, Any] | None = None
    """What `score` is made of (`Searcher.explain`), when asked for."""


class Searcher:
    """Keeps the analyzer and Whoosh searcher warm for many queries (agents, batch mode)."""

    def __init__(self, index: Index, policy: Policy) -> None:
        self.index = index
        self.policy = policy
        self._ana = analyzer()
        self._text = Snippets(self._ana)
        # read once per open Whoosh searcher: the docnums each filter leaves out, the rows
        self._read_from: Any = None
        self._masks: dict[Filters, tuple[set[int] | None, set[int] | None]] = {}
        self._rows: Any = None
        self._parsed: dict[int, dict[str, Any]] = {}  # docnum -> its row, once read
        self._segments = Segments()

    def terms(self, text: str) -> list[str]:
        return unique(token.text for token in self._ana(text[:MAX_QUERY_CHARS]))[:MAX_QUERY_TERMS]

    def _filter(self, filters: Filters) -> Any:
        parts = filter_terms(filters)
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else And(parts)

    def _searcher(self) -> Any:
        """The index's Whoosh searcher; once it was reopened, what is read once per open
        searcher (the filters' document sets, the row column) is read anew."""
        searcher = self.index.searcher()
        if searcher is not self._read_from:
            self._read_from, self._masks = searcher, {}
            self._rows, self._parsed = row_column(searcher.reader()), {}
        return searcher

    def _row(self, docnum: int) -> dict[str, Any]:
        """A document's row (`schema.row`), parsed once per open Whoosh searcher."""
        found = self._parsed.get(docnum)
        if found is None:
            found = self._parsed[docnum] = json.loads(self._rows[docnum] or b"{}")
        return found

    def _allow_and_mask(self, searcher: Any, filters: Filters) -> tuple[Any, Any]:
        """The notes a (normalised) filter lets a search return, as Whoosh's `filter` and
        `mask` document sets: (allowed, None), (None, left out) or (None, None) for all.
        Read once per filter and per open searcher (turning a scope filter into a set of
        10k docnums was a fifth of a warm search), so a reopened index is read again."""
        found = self._masks.get(filters)
        if found is not None:
            return found
        # archived notes are few: left out by a mask rather than allowing every live note
        left_out: set[int] = set()
        if not filters.include_archive:
            left_out.update(searcher.docs_for_query(Term("archived", True)))
        if not filters.private:  # (as few: left out the same way)
            left_out.update(searcher.docs_for_query(Term("private", True)))
        if filters.current_only:  # (superseded notes: as few)
            left_out.update(searcher.docs_for_query(Term("superseded", True)))
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
        searcher = self._searcher()
        limit = max(k, self.policy.search_candidates)
        allow, mask = self._allow_and_mask(searcher, filters)
        if isinstance(allow, set) and not allow:
            return []  # (Whoosh reads an empty filter as none)
        candidates = self._top(searcher, terms, limit, allow, mask)
        now_ts = (now or dt.datetime.now().astimezone()).timestamp()
        hits: list[Hit] = []
        for docnum, bm25 in candidates:
            fields = searcher.stored_fields(docnum)
            row = self._row(docnum)
            score, eff = blend(bm25, row, self.policy, now_ts)
            hits.append(
                Hit(
                    id=fields["id"],
                    path=fields["path"],
                    title=fields.get("title", ""),
                    type=fields.get("type", ""),
                    category=fields.get("category", ""),
                    score=score,
                    snippet="",
                    bm25=bm25,
                    credit=eff,
                    relevance=bm25,
                    summary=fields.get("summary", ""),
                    written_by=str(row.get("source") or PERSON),
                )
            )
        hits.sort(key=lambda h: (-h.score, h.path))
        top = hits[:k]
        if snippets:
            self._snippets(top, set(terms))
        return top

    def _top(
        self, searcher: Any, terms: list[str], limit: int, allow: Any, mask: Any
    ) -> list[tuple[int, float]]:
        """The BM25F candidates: (docnum, score), best first."""
        policy = self.policy
        return top_docs(
            searcher,
            terms,
            TEXT_FIELDS,
            limit,
            b=policy.bm25_b,
            k1=policy.bm25_k1,
            segments=self._segments,
            allow=allow,
            left_out=mask,
        )

    def explain(self, text: str, hits: list[Hit], now: dt.datetime | None = None) -> None:
        """Set each hit's `explain`: its relevance, the BM25F score of the query's terms in
        each field (title, aliases, tags, body, ...), and the factors the relevance was
        multiplied by (`domain.notes.ranking.factors`): score = relevance x credit x
        recency x superseded."""
        terms = self.terms(text)
        searcher = self._searcher()
        now_ts = (now or dt.datetime.now().astimezone()).timestamp()
        policy = self.policy
        for hit in hits:
            doc = searcher.document_number(path=hit.path)
            if doc is None:
                continue
            fields = {}
            for field, boost in TEXT_FIELDS.items():
                found = top_docs(
                    searcher,
                    terms,
                    {field: boost},
                    1,
                    b=policy.bm25_b,
                    k1=policy.bm25_k1,
                    segments=self._segments,
                    allow={doc},
                )
                if found and found[0][1] > 0:
                    fields[field] = round(found[0][1], 4)
            multiplied, _ = factors(self._row(doc), policy, now_ts)
            hit.explain = {
                "relevance": round(hit.relevance, 4),
                "bm25": round(hit.bm25, 4),
                "fields": fields,
                **{name: round(value, 4) for name, value in multiplied.items()},
            }

    def add_snippets(self, text: str, hits: list[Hit]) -> None:
        """Snippets for `text` on hits a search returned without them."""
        self._snippets([h for h in hits if not h.snippet], set(self.terms(text)))

    def _snippets(self, hits: list[Hit], stems: set[str]) -> None:
        for hit in hits:
            hit.snippet = self._text.snippet(self._body(hit.path, hit.summary), stems)

    def _body(self, rel: str, fallback: str) -> str:
        try:
            return current_text(body_text(read_regular(self.index.paths.note(rel))))
        except OSError:
            return fallback
