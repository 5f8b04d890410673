"""What `vb clone` checks out of a vault (pure): the sparse-checkout patterns, which
transcripts count as recent, and what `vb fetch-old` adds.

The patterns are git's non-cone ones (gitignore syntax, the last match wins), anchored at
the vault's top: every top-level file and folder, except `archive/` and the transcripts of
`sessions/` (its generated `sessions.json` is kept), then each recent transcript by name.
`logs/` is always checked out: vb appends to its logs, and an append to a log that is not
checked out would start a new file.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

LEFT_OUT = ("archive", "sessions")
"""The top-level folders a clone leaves out (the recent transcripts excepted)."""
SESSIONS_INDEX = "sessions/sessions.json"
_SPECIAL = frozenset("*?[]\\")


def is_transcript(path: str) -> bool:
    """A transcript in the repository's tree: `sessions/<id>.jsonl`, or
    `sessions/<YYYY-MM-DD>/<id>.jsonl` in a vault whose transcripts are sharded by day."""
    parts = path.split("/")
    return parts[0] == "sessions" and len(parts) in (2, 3) and parts[-1].endswith(".jsonl")


def shard_day(path: str) -> dt.date | None:
    """The day of a transcript's shard folder (`sessions/2026-11-26/x.jsonl`), else None."""
    parts = path.split("/")
    if len(parts) != 3 or parts[0] != "sessions":
        return None
    try:
        return dt.date.fromisoformat(parts[1])
    except ValueError:
        return None


def recent_transcripts(
    transcripts: Iterable[str], committed_since: set[str], cutoff: dt.date
) -> list[str]:
    """The transcripts to check out: those a commit since the cutoff changed
    (`committed_since`, from `git log --since`), and those whose shard folder's day is on or
    after the cutoff (a transcript committed late, for a recent day, still counts)."""
    out = []
    for path in transcripts:
        day = shard_day(path)
        if path in committed_since or (day is not None and day >= cutoff):
            out.append(path)
    return sorted(out)


def escape(path: str) -> str:
    """A literal path as a sparse-checkout pattern (anchored at the top)."""
    text = "".join("\\" + c if c in _SPECIAL else c for c in path)
    return "/" + text


def checkout_patterns(recent: Iterable[str]) -> list[str]:
    """The sparse-checkout patterns of a clone that takes the `recent` transcripts."""
    head = ["/*"] + [f"!/{folder}/*" for folder in LEFT_OUT] + [escape(SESSIONS_INDEX)]
    return head + [escape(path) for path in sorted(recent)]


def fetch_pattern(rel: str, is_folder: bool) -> str:
    """The pattern that brings `rel` (a vault-relative file or folder) into the checkout. A
    folder's is `/rel/*`, not `/rel/`: git matches a file against the patterns that match
    its own path first (`!/archive/*` matches `archive/x.md`), and only then its folders'."""
    rel = rel.strip("/")
    return escape(rel) + ("/*" if is_folder else "")


def days_ago(today: dt.date, days: int) -> dt.date:
    return today - dt.timedelta(days=days)
