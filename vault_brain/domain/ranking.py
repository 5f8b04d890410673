"""Ranking: BM25 blended with effective credit and recency (pure)."""

from __future__ import annotations

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
