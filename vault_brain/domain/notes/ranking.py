"""Ranking: BM25 blended with effective credit and recency, and maximal marginal relevance
for a diverse selection (pure)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

from vault_brain.domain.clock import days_since
from vault_brain.domain.notes.credit import effective_score, is_scored
from vault_brain.domain.policy.settings import Policy


def factors(
    row: dict[str, Any], policy: Policy, now_ts: float
) -> tuple[dict[str, float], float | None]:
    """What a note's relevance is multiplied by: `credit` (1 + credit_weight x (effective
    credit - initial score)), `recency` (1 + recency_weight, halving every half-life since
    the note's stamp) and `superseded` (`superseded_weight` when a newer note states its
    fact anew); each is 1 for a note without credit, dates or successor. Returns them with
    the note's effective credit (None when it has none)."""
    credit = row.get("credit")
    eff: float | None = None
    found = {"credit": 1.0, "recency": 1.0, "superseded": 1.0}
    if isinstance(credit, int | float) and is_scored(credit):
        eff = effective_score(
            float(credit), days_since(row.get("ref_ts"), now_ts), policy.decay_rate
        )
        found["credit"] = 1.0 + policy.credit_weight * (eff - policy.initial_score)
    stamp = row.get("stamp_ts")
    if stamp is not None and policy.recency_weight:
        half_life = max(policy.recency_half_life_days, 1e-6)
        age = days_since(stamp, now_ts) / half_life
        found["recency"] = 1.0 + policy.recency_weight * 0.5**age
    if row.get("superseded"):
        found["superseded"] = policy.superseded_weight
    return found, eff


def blend(
    bm25: float, row: dict[str, Any], policy: Policy, now_ts: float
) -> tuple[float, float | None]:
    """Final score = relevance (BM25, or the hybrid fusion) x the note's `factors`; all are
    1 for a note without credit, dates or successor, so plain hand-written notes rank by
    relevance alone, and a superseded note ranks below the one that replaced it. Returns
    the score and the note's effective credit (None when it has no credit)."""
    found, eff = factors(row, policy, now_ts)
    return bm25 * (found["credit"] * found["recency"] * found["superseded"]), eff


def fuse(
    bm25: Mapping[str, float],
    similarity: Mapping[str, float],
    *,
    rule: str,
    weight: float,
    rrf_k: int = 60,
) -> dict[str, float]:
    """Hybrid relevance of each candidate (key) from its BM25 score and its embedding
    similarity; `weight` is the embeddings' share. Candidates are the keys of `similarity`
    (every candidate has one); `bm25` holds the lexical candidates only (the others scored
    below them: they count as unmatched).

    - rrf (reciprocal rank fusion): `(1 - weight) / (rrf_k + lexical rank) + weight /
      (rrf_k + similarity rank)`, ranks from 1, no lexical term for an unmatched note.
    - mix: `(1 - weight) * bm25 / best bm25 + weight * (similarity - lowest) / (highest -
      lowest)` over the candidates (0 for an unmatched note).

    Ties in a ranking go to the smaller key, so the result never depends on dict order."""
    if rule not in ("rrf", "mix"):
        raise ValueError(f"unknown fusion rule {rule!r}")
    by_sim = sorted(similarity, key=lambda key: (-similarity[key], key))
    if rule == "rrf":
        lexical = sorted((key for key in bm25 if bm25[key] > 0), key=lambda key: (-bm25[key], key))
        fused = {key: weight / (rrf_k + rank) for rank, key in enumerate(by_sim, 1)}
        for rank, key in enumerate(lexical, 1):
            fused[key] = fused.get(key, 0.0) + (1 - weight) / (rrf_k + rank)
        return fused
    top = max((v for v in bm25.values() if v > 0), default=1.0)
    low = min(similarity.values(), default=0.0)
    spread = max(similarity.values(), default=0.0) - low
    return {
        key: (1 - weight) * max(bm25.get(key, 0.0), 0.0) / top
        + weight * ((similarity[key] - low) / spread if spread > 0 else 1.0)
        for key in by_sim
    }


def jaccard(a: AbstractSet[str], b: AbstractSet[str]) -> float:
    """|a & b| / |a | b|: 1 for the same words, 0 for none in common (or both empty)."""
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def mmr(
    relevance: Sequence[float], words: Sequence[AbstractSet[str]], k: int, lam: float
) -> list[int]:
    """Maximal marginal relevance: the indices of up to `k` items, in the order chosen. Each
    step takes the item with the best `lam * relevance - (1 - lam) * max similarity` to the
    items already chosen, so a near-copy of a chosen item waits behind a different one.
    Relevance is scaled to [0, 1] by the best score; similarity is the Jaccard overlap of
    the items' `words`; ties go to the earlier (better ranked) item. `lam` 1 keeps the
    ranking as it is."""
    if len(relevance) != len(words):
        raise ValueError("relevance and words must have the same length")
    top = max((r for r in relevance if r > 0), default=1.0)
    scaled = [max(r, 0.0) / top for r in relevance]
    chosen: list[int] = []
    left = list(range(len(relevance)))
    while left and len(chosen) < k:
        best = max(
            left,
            key=lambda i: (
                lam * scaled[i]
                - (1 - lam) * max((jaccard(words[i], words[j]) for j in chosen), default=0.0),
                -i,
            ),
        )
        chosen.append(best)
        left.remove(best)
    return chosen
