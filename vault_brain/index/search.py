"""Searching the index: BM25F candidates re-ranked with effective credit and recency."""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass
from typing import Any

from vault_brain.credit import days_since, effective_score
from vault_brain.index.schema import TEXT_FIELDS, analyzer
from vault_brain.index.store import row_column
from vault_brain.policy import Policy

SNIPPET_CHARS = 200
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class Filters:
    type: str | None = None
    category: str | None = None
    tag: str | None = None
    include_archive: bool = False


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

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "path": self.path,
            "title": self.title,
            "type": self.type,
            "category": self.category,
            "score": round(self.score, 6),
            "snippet": self.snippet,
        }


def blend(
    bm25: float, row: dict[str, Any], policy: Policy, now_ts: float
) -> tuple[float, float | None]:
    """Final score = BM25 x credit factor x recency factor; both factors are 1 for a note
    without credit or dates, so plain hand-written notes rank by BM25 alone."""
    credit = row.get("credit")
    eff: float | None = None
    factor = 1.0
    if isinstance(credit, int | float) and not isinstance(credit, bool):
        eff = effective_score(
            float(credit), days_since(row.get("ref_ts"), now_ts), policy["decay_rate"]
        )
        factor *= 1.0 + policy["credit_weight"] * (eff - policy["initial_score"])
    stamp = row.get("stamp_ts")
    if stamp is not None and policy["recency_weight"]:
        half_life = max(policy["recency_half_life_days"], 1e-6)
        factor *= 1.0 + policy["recency_weight"] * 0.5 ** (days_since(stamp, now_ts) / half_life)
    return bm25 * factor, eff


class Searcher:
    """Keeps the analyzer and Whoosh searcher warm for many queries (agents, batch mode)."""

    def __init__(self, index: Any, policy: Policy) -> None:
        self.index = index
        self.policy = policy
        self._ana = analyzer()

    def terms(self, text: str) -> list[str]:
        seen: list[str] = []
        for token in self._ana(text):
            if token.text not in seen:
                seen.append(token.text)
        return seen

    def _query(self, terms: list[str]) -> Any:
        from whoosh.query import Or, Term

        return Or([Term(field, t) for t in terms for field in TEXT_FIELDS])

    def _filter(self, filters: Filters) -> Any:
        from whoosh.query import And, Term

        parts = []
        if filters.type:
            parts.append(Term("type", filters.type))
        if filters.category:
            parts.append(Term("category", filters.category))
        if filters.tag:
            parts.append(Term("tags", filters.tag.lstrip("#").lower()))
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else And(parts)

    def search(
        self, text: str, k: int = 10, filters: Filters | None = None, now: dt.datetime | None = None
    ) -> list[Hit]:
        terms = self.terms(text)
        if not terms or k <= 0:
            return []
        from whoosh import scoring
        from whoosh.query import Term

        filters = filters or Filters()
        searcher = self.index.searcher()
        searcher.weighting = scoring.BM25F(B=self.policy["bm25_b"], K1=self.policy["bm25_k1"])
        limit = max(k, int(self.policy["search_candidates"]))
        # archived notes are few: masking them is far cheaper than allowing every live note
        mask = None if filters.include_archive else Term("archived", True)
        results = searcher.search(
            self._query(terms), limit=limit, filter=self._filter(filters), mask=mask
        )
        now_ts = (now or dt.datetime.now().astimezone()).timestamp()
        rows = row_column(searcher.reader())
        hits: list[Hit] = []
        summaries: dict[str, str] = {}
        for res in results:
            fields = res.fields()
            summaries[fields["path"]] = fields.get("summary", "")
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
                )
            )
        hits.sort(key=lambda h: (-h.score, h.path))
        top = hits[:k]
        stems = set(terms)
        for hit in top:
            hit.snippet = self.snippet(self._body(hit.path, summaries.get(hit.path, "")), stems)
        return top

    def _body(self, rel: str, fallback: str) -> str:
        from vault_brain.vault.frontmatter import body_text

        try:
            return body_text((self.index.paths.root / rel).read_bytes())
        except OSError:
            return fallback

    def snippet(self, body: str, stems: set[str]) -> str:
        """The ~200 characters around the first word of the body that matches the query."""
        text = body.strip()
        if not text:
            return ""
        start = 0
        for match in _WORD.finditer(text):
            tokens = [t.text for t in self._ana(match.group(0))]
            if tokens and tokens[0] in stems:
                start = max(0, match.start() - 60)
                break
        window = text[start : start + SNIPPET_CHARS]
        window = " ".join(window.split())
        prefix = "…" if start > 0 else ""
        suffix = "…" if start + SNIPPET_CHARS < len(text) else ""
        return prefix + window + suffix
