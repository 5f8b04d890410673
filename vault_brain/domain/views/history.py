"""What one change to a note was: which front matter keys changed, how many body lines, and
which operation made it (pure: the git and log reading is in `storage.git.history`).

The operation comes from vb's audit logs when the commit added a record about the note
(`logs/lifecycle.jsonl`: flush, promote, consolidate, prune; `logs/credit.jsonl`:
feedback); otherwise from the change itself: a merge commit brought it from another
machine, a move into or out of archive/ is an archive or a restore, counters alone are a
retrieval, a change to `updated` is vb's own edit (add, update), anything else a hand edit.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from typing import Any

COUNTERS = frozenset({"access_count", "last_accessed"})
ARCHIVE_KEYS = frozenset({"archived", "archive_reason", "archived_from"})


@dataclass
class KeyDiff:
    key: str
    change: str
    """added, removed or changed."""
    old: Any = None
    new: Any = None


@dataclass
class Logged:
    """A log record about the note, as an operation and a detail."""

    operation: str
    detail: str


@dataclass
class Change:
    keys: list[KeyDiff] = field(default_factory=list)
    lines_added: int = 0
    lines_removed: int = 0


def diff_meta(old: dict[str, Any], new: dict[str, Any]) -> list[KeyDiff]:
    out: list[KeyDiff] = []
    for key in list(old) + [k for k in new if k not in old]:
        if key not in new:
            out.append(KeyDiff(key, "removed", old[key], None))
        elif key not in old:
            out.append(KeyDiff(key, "added", None, new[key]))
        elif old[key] != new[key]:
            out.append(KeyDiff(key, "changed", old[key], new[key]))
    return out


def diff_body(old: str, new: str) -> tuple[int, int]:
    """(lines added, lines removed) from `old` to `new`."""
    if old == new:
        return 0, 0
    a, b = old.splitlines(), new.splitlines()
    added = removed = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            removed += i2 - i1
            added += j2 - j1
    return added, removed


def read_records(lines: list[str], note_id: str, paths: set[str]) -> list[Logged]:
    """The operations that log lines (JSON records) say were done to the note."""
    out: list[Logged] = []
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict):
            continue
        if record.get("event") == "feedback":
            changes = record.get("changes") or []
            if any(
                isinstance(c, dict) and (c.get("id") == note_id or c.get("path") in paths)
                for c in changes
            ):
                signal = record.get("signal", "?")
                out.append(Logged("feedback", f"{signal} (session {record.get('session', '?')})"))
        elif record.get("op") and (record.get("id") == note_id or record.get("path") in paths):
            operation = str(record.get("operation", "lifecycle"))
            out.append(Logged(operation, f"{record.get('op')}: {record.get('why', '')}".strip()))
    return out


def classify(
    logged: list[Logged],
    *,
    merge: bool,
    status: str,
    moved: tuple[str, str] | None,
    keys: list[KeyDiff],
) -> str:
    """The operation that made a change (see the module's docstring)."""
    if logged:
        return ", ".join(dict.fromkeys(item.operation for item in logged))
    if merge:
        return "merge"
    names = {k.key for k in keys}
    if moved is not None:
        old, new = moved
        if new.startswith("archive/") and not old.startswith("archive/"):
            return "archive"
        if old.startswith("archive/") and not new.startswith("archive/"):
            return "restore"
        return "rename"
    if status == "A":
        return "created"
    if status == "D":
        return "deleted"
    if names and names <= COUNTERS:
        return "retrieval"
    if "credit" in names:
        return "feedback"
    if "updated" in names:
        return "vb edit"
    return "hand edit"
