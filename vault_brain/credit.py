"""Credit math: pure functions over values, no I/O."""

from __future__ import annotations

import datetime as dt
import math


def parse_time(value: str | None) -> dt.datetime | None:
    """An ISO date or datetime from front matter -> an aware datetime (local time if naive)."""
    if not value:
        return None
    try:
        parsed = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.astimezone()
    return parsed


def days_between(earlier: dt.datetime | None, now: dt.datetime) -> float:
    if earlier is None:
        return 0.0
    return max(0.0, (now - earlier).total_seconds() / 86400.0)


def effective_score(score: float, days_since_access: float, decay_rate: float) -> float:
    """Credit as read now: the stored score decayed by the days since last access."""
    return max(0.0, min(1.0, score)) * math.exp(-decay_rate * max(0.0, days_since_access))
