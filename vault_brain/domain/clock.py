"""Time as vb writes and reads it: ISO 8601 with the local UTC offset, to the second (to
the microsecond for `last_accessed`, see `access_stamp`)."""

from __future__ import annotations

import datetime as dt
import re


def now() -> dt.datetime:
    return dt.datetime.now().astimezone()


def now_iso() -> str:
    """Local time, to the second, with its UTC offset."""
    return now().replace(microsecond=0).isoformat()


def access_stamp() -> str:
    """When a note was retrieved, for `last_accessed`: local time to the microsecond. Two
    machines that bump the same note from the same state write different bytes unless they
    do it in the same microsecond; to the second, they wrote identical files and a merge saw
    one read instead of two."""
    return now().isoformat(timespec="microseconds")


def parse_time(value: object) -> dt.datetime | None:
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


def epoch(value: object) -> float | None:
    moment = parse_time(value)
    return moment.timestamp() if moment is not None else None


def days_between(earlier: dt.datetime | None, later: dt.datetime) -> float:
    if earlier is None:
        return 0.0
    return max(0.0, (later - earlier).total_seconds() / 86400.0)


def days_since(epoch_seconds: float | None, now_ts: float) -> float:
    """Days from an epoch timestamp to now (0 when unknown or in the future)."""
    return 0.0 if epoch_seconds is None else max(0.0, (now_ts - epoch_seconds) / 86400.0)


_DAY_FOLDER = re.compile(r"\d{4}-\d{2}-\d{2}")


def day_of_folder(name: str) -> dt.date | None:
    """The day a folder of transcripts is named after (`sessions/2026-11-27/`: where new
    transcripts go once sessions/ is full, `storage.paths.SHARD_AT`), else None."""
    if not _DAY_FOLDER.fullmatch(name):
        return None
    try:
        return dt.date.fromisoformat(name)
    except ValueError:
        return None
