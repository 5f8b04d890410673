"""Searching the index: BM25F candidates re-ranked with effective credit and recency."""

from __future__ import annotations

import datetime as dt
import json
import re
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
from vault_brain.storage.index.store import Index, filter_terms, row_column

SNIPPET_CHARS = 200
# A query is analysed from its first MAX_QUERY_CHARS characters into at most MAX_QUERY_TERMS
# distinct terms: a pasted 100,000-word message is still answered in milliseconds.
MAX_QUERY_CHARS = 20_000
MAX_QUERY_TERMS = 128
_WORD = re.compile(r"\w+", re.UNICODE)
MAX_REMEMBERED_WORDS = 200_000


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
        self._stems: dict[str, str] = {}

    def terms(self, text: str) -> list[str]:
        return unique(token.text for token in self._ana(text[:MAX_QUERY_CHARS]))[:MAX_QUERY_TERMS]

    def _query(self, terms: list[str]) -> Any:
        return Or([Term(field, t) for t in terms for field in TEXT_FIELDS])

    def _filter(self, filters: Filters) -> Any:
        parts = filter_terms(filters)
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else And(parts)

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
        searcher.weighting = scoring.BM25F(B=self.policy.bm25_b, K1=self.policy.bm25_k1)
        limit = max(k, self.policy.search_candidates)
        # archived notes are few: masking them is far cheaper than allowing every live note
        mask = None if filters.include_archive else Term("archived", True)
        results = searcher.search(
            self._query(terms), limit=limit, filter=self._filter(filters), mask=mask
        )
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
            hit.snippet = self.snippet(self._body(hit.path, hit.summary), stems)

    def _body(self, rel: str, fallback: str) -> str:
        try:
            return body_text(self.index.paths.note(rel).read_bytes())
        except OSError:
            return fallback

    def _stem(self, word: str) -> str:
        """The word as the index holds it ("" for a stop word), remembered: analysing each
        word of a body anew was most of a snippet's time."""
        stem = self._stems.get(word)
        if stem is None:
            tokens = [t.text for t in self._ana(word)]
            stem = tokens[0] if tokens else ""
            if len(self._stems) < MAX_REMEMBERED_WORDS:
                self._stems[word] = stem
        return stem

    def snippet(self, body: str, stems: set[str]) -> str:
        """The ~200 characters around the first word of the body that matches the query."""
        text = body.strip()
        if not text:
            return ""
        start = 0
        for match in _WORD.finditer(text):
            if self._stem(match.group(0)) in stems:
                start = max(0, match.start() - 60)
                break
        window = text[start : start + SNIPPET_CHARS]
        window = " ".join(window.split())
        prefix = "…" if start > 0 else ""
        suffix = "…" if start + SNIPPET_CHARS < len(text) else ""
        return prefix + window + suffix
