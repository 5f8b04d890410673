"""Ranking: BM25 blended with effective credit and recency, and maximal marginal relevance
for a diverse selection (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from typing import Any

from vault_brain.domain.clock import days_since
from vault_brain.domain.credit import effective_score, is_scored
from vault_brain.domain.policy import Policy


def blend(
    bm25: float, row: dict[str, Any], policy: Policy, now_ts: float
) -> tuple[float, float | None]:
    """Final score = BM25 x credit factor x recency factor; both factors are 1 for a note
    without credit or dates, so plain hand-written notes rank by BM25 alone. Returns the
    score and the note's effective credit (None when it has no credit)."""
    credit = row.get("credit")
    eff: float | None = None
    factor = 1.0
    if isinstance(credit, int | float) and is_scored(credit):
        eff = effective_score(
            float(credit), days_since(row.get("ref_ts"), now_ts), policy.decay_rate
        )
        factor *= 1.0 + policy.credit_weight * (eff - policy.initial_score)
    stamp = row.get("stamp_ts")
    if stamp is not None and policy.recency_weight:
        half_life = max(policy.recency_half_life_days, 1e-6)
        factor *= 1.0 + policy.recency_weight * 0.5 ** (days_since(stamp, now_ts) / half_life)
    return bm25 * factor, eff


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
