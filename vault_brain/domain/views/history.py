"""What one change to a note was: which front matter keys changed, how many body lines, the
text (a unified diff), and which operations made it (pure: the git and log reading is in
`storage.git.history`).

A commit may hold several operations, and each is listed. First those vb's audit logs name,
when the commit added a record about the note (`logs/lifecycle.jsonl`: flush, promote,
consolidate, prune; `logs/credit.jsonl`: feedback). A lifecycle record accounts for the
whole change; feedback only for `credit`, so whatever else changed is named from the change
itself, as a change without a record is: a merge commit brought it from another machine, a
move into or out of archive/ is an archive or a restore, the access counters are a
retrieval, `credit` without a record is feedback, a change to `updated` is vb's own edit
(add, update), and any other key or body change a hand edit.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from typing import Any

COUNTERS = frozenset({"access_count", "last_accessed"})
FEEDBACK_KEYS = frozenset({"credit"})
"""What a logged feedback changes in a note (`app.memory.credit`)."""
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
    body_changed: bool = False,
) -> list[str]:
    """The operations that made a change, logged ones first (see the module's docstring)."""
    found = list(dict.fromkeys(item.operation for item in logged))
    if merge:
        return [*found, "merge"]
    if any(op != "feedback" for op in found):
        return found
    explained = FEEDBACK_KEYS if found else frozenset()
    names = {k.key for k in keys} - explained
    for op in _derived(status, moved, names, body_changed):
        if op not in found:
            found.append(op)
    return found or ["hand edit"]


def _derived(
    status: str, moved: tuple[str, str] | None, names: set[str], body_changed: bool
) -> list[str]:
    """The operations a change shows by itself (`names`: the keys no log record explains)."""
    if moved is not None:
        old, new = moved
        if new.startswith("archive/") and not old.startswith("archive/"):
            return ["archive"]
        if old.startswith("archive/") and not new.startswith("archive/"):
            return ["restore"]
        return ["rename"]
    if status == "A":
        return ["created"]
    if status == "D":
        return ["deleted"]
    found = ["retrieval"] if names & COUNTERS else []
    rest = names - COUNTERS
    if "credit" in rest:
        found.append("feedback")
    rest -= FEEDBACK_KEYS
    if "updated" in rest:
        found.append("vb edit")
    elif rest or body_changed:
        found.append("hand edit")
    return found


def unified(old: str, new: str, old_path: str | None, new_path: str | None) -> str:
    """A unified diff of a note's whole text (front matter and body) from `old` to `new`;
    a path of None is a file that did not exist (/dev/null)."""
    lines = difflib.unified_diff(
        _lines(old),
        _lines(new),
        fromfile=f"a/{old_path}" if old_path else "/dev/null",
        tofile=f"b/{new_path}" if new_path else "/dev/null",
    )
    out: list[str] = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _lines(text: str) -> list[str]:
    """`text`'s lines, each with its newline (split on newlines only, as git does)."""
    parts = text.split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])
