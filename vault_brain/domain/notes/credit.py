"""Credit math: pure functions over values, no I/O."""

from __future__ import annotations

import math
from collections.abc import Iterable


def effective_score(score: float, days_since_access: float, decay_rate: float) -> float:
    """Credit as read now: the stored score decayed by the days since last access."""
    return max(0.0, min(1.0, score)) * math.exp(-decay_rate * max(0.0, days_since_access))


# Feedback words on the command line -> outcome signals (their rewards live in the policy).
SIGNALS = {
    "completed": "task_completed",
    "good": "positive_feedback",
    "tool-success": "tool_success",
    "bad": "user_correction",
    "abandoned": "session_abandoned",
}


def shared_reward(reward: float, n: int) -> float:
    """The memories retrieved in a turn share its reward: reward / sqrt(n)."""
    return reward / math.sqrt(n) if n > 0 else 0.0


def update_score(score: float, share: float, alpha: float, strongest: float) -> float:
    """Move a score toward 1 (reward) or 0 (penalty) by a step proportional to the share.

    The step is `alpha * |share| / strongest`, so `alpha` is the step of the strongest
    signal for a memory retrieved alone. Unlike the EMA toward `reward / sqrt(n)`, this
    keeps every score in [0, 1], moves it in the sign of the reward, lets repeated
    positive signals climb past any threshold below 1 and repeated penalties sink below
    any threshold above 0.
    """
    score = min(1.0, max(0.0, score))
    if share == 0 or strongest <= 0:
        return score
    step = min(1.0, alpha * abs(share) / strongest)
    target = 1.0 if share > 0 else 0.0
    return min(1.0, max(0.0, score + step * (target - score)))


def stored_score(value: object, default: float) -> float:
    """A credit value from front matter, clamped to [0, 1]; `default` when it is not a number."""
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return min(1.0, max(0.0, float(value)))
    return default


def is_scored(value: object) -> bool:
    """True when a note carries a credit number (hand-written notes may have none)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def merged_score(parts: Iterable[float], initial: float) -> float:
    """The credit of a note merged from `parts`: the initial score plus what outcomes moved
    each part from it (gains and losses), clamped to [0, 1]. Merging never creates credit:
    parts no outcome ever scored merge into a note at the initial score, not their sum."""
    return min(1.0, max(0.0, initial + sum(p - initial for p in parts)))


def earned_transfer(score: float, initial: float, share: float) -> float:
    """What promotion moves from an episode to its entity notes: `share` of the credit
    outcomes earned it above the initial score (nothing when they earned none)."""
    return max(0.0, score - initial) * share
