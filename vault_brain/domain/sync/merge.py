"""Merging what two machines did to the same file, as pure functions over values.

`vb sync` and the git merge drivers (`vb merge-driver`) use these; `storage.notes.merge`
reads and writes the bytes around them.

- Counters in a note's front matter merge arithmetically against the common ancestor:
  `access_count` = base + both sides' increments; `credit` = base + both sides' changes,
  clamped to [0, 1]; `last_accessed` and `updated` take the later moment.
- Append-only JSONL (transcripts, logs) merges record by record: the ancestor's records in
  order, then the records new on either side (interleaved by `ts` when both sides' new
  records carry one, each side's own order kept), each record once. Records are the same
  when their JSON is the same (key order and spacing aside); a record `id` alone is not
  identity, because transcript ids (`m0001`, ...) are sequential per machine and two
  machines appending to one session produce different records under one id.
- Front matter keys both sides changed differently that vb merges by rule (`merge_keys`):
  `tags` and `aliases` as a union (an item either side removed stays removed); vb's own
  scalar keys (`pinned`, `supersedes`, `superseded_by`) take the side updated last. Only the
  text left after that (the body, a person's other properties) can make a conflict copy.
- tasks.json merges by task id, three-way per task; a task both sides changed keeps ours and
  theirs is returned for a conflict copy; two new tasks given the same automatic id on two
  machines are both kept (theirs renumbered).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from vault_brain.domain.clock import parse_time
from vault_brain.domain.sync.counters import LATEST_KEYS as LATEST_KEYS
from vault_brain.domain.sync.counters import LATEST_SIDE_KEYS, LIST_KEYS, moment_of
from vault_brain.domain.sync.counters import SUM_KEYS as SUM_KEYS
from vault_brain.domain.sync.counters import merge_counters as merge_counters
from vault_brain.domain.text import plural

CONFLICT_MARK = " (conflict "
RESOLVED_SUBJECT = "vb conflicts: "  # how the commit of a resolved conflict copy begins
_UNSAFE_MACHINE = re.compile(r"[^A-Za-z0-9._-]+")
_AUTO_ID = re.compile(r"t([1-9][0-9]*)")
_COPY_NAME = re.compile(
    r" \(conflict ([A-Za-z0-9._-]+) (\d{4}-\d{2}-\d{2})(?: \d+)?\)(?:\.[^.]*)?$"
)


# --------------------------------------------------------------------------- keys


def _items(value: Any) -> list[Any] | None:
    """A list key's items (absent: none), or None when it is not a list of plain values."""
    if value is None:
        return []
    if isinstance(value, list) and all(
        isinstance(x, str | int | float) and not isinstance(x, bool) for x in value
    ):
        return list(value)
    return None


def merge_keys(
    base: Mapping[str, Any], ours: Mapping[str, Any], theirs: Mapping[str, Any]
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The keys both sides changed differently that merge by rule (see the module's
    docstring): (values to set in every version, keys to drop from every version)."""
    values: dict[str, Any] = {}
    drop: list[str] = []
    missing = object()
    for key in (*LIST_KEYS, *LATEST_SIDE_KEYS):
        b, o, t = (side.get(key, missing) for side in (base, ours, theirs))
        if o in (t, b) or t == b:
            continue  # one side changed it (or both the same way): the line merge takes it
        if key in LIST_KEYS:
            lists = [_items(None if v is missing else v) for v in (b, o, t)]
            if lists[0] is None or lists[1] is None or lists[2] is None:
                continue
            gone = {x for x in lists[0] if x not in lists[1] or x not in lists[2]}
            values[key] = [x for x in dict.fromkeys(lists[1] + lists[2]) if x not in gone]
            continue
        later = _later(theirs.get("updated"), ours.get("updated"))
        chosen = t if later else o
        if chosen is missing:
            drop.append(key)
        else:
            values[key] = chosen
    return values, tuple(drop)


def _later(a: Any, b: Any) -> bool:
    """Whether moment `a` is after moment `b` (a missing or unreadable one is earliest)."""
    ma, mb = moment_of(a), moment_of(b)
    return ma is not None and (mb is None or ma > mb)


# --------------------------------------------------------------------------- records


def _identity(line: str) -> str:
    """What makes two JSONL lines the same record: their JSON, key order aside (a line that
    is not JSON is its own text)."""
    try:
        return json.dumps(json.loads(line), sort_keys=True, ensure_ascii=False)
    except ValueError:
        return line.rstrip("\r\n")


def _ts(line: str) -> str | None:
    try:
        record = json.loads(line)
    except ValueError:
        return None
    ts = record.get("ts") if isinstance(record, dict) else None
    return ts if isinstance(ts, str) and ts else None


def merge_records(base: Sequence[str], ours: Sequence[str], theirs: Sequence[str]) -> list[str]:
    """Every record of the three versions once: base order, then what is new on either side
    (interleaved by timestamp when all new records have one; ours first otherwise)."""
    seen: set[str] = set()
    out: list[str] = []

    def fresh(lines: Sequence[str]) -> list[str]:
        new: list[str] = []
        for line in lines:
            if not line.strip():
                continue
            key = _identity(line)
            if key not in seen:
                seen.add(key)
                new.append(line)
        return new

    out += fresh(base)
    mine, other = fresh(ours), fresh(theirs)
    mine_ts, other_ts = [_ts(x) for x in mine], [_ts(x) for x in other]
    if all(mine_ts) and all(other_ts) and _moments_comparable(mine_ts + other_ts):
        i = j = 0
        while i < len(mine) or j < len(other):
            take_mine = j >= len(other) or (i < len(mine) and _key(mine_ts[i]) <= _key(other_ts[j]))
            if take_mine:
                out.append(mine[i])
                i += 1
            else:
                out.append(other[j])
                j += 1
    else:
        out += mine + other
    return [line if line.endswith("\n") else line + "\n" for line in out]


def _moments_comparable(stamps: Sequence[str | None]) -> bool:
    return all(parse_time(s) is not None for s in stamps)


def _key(stamp: str | None) -> float:
    moment = parse_time(stamp)
    return moment.timestamp() if moment is not None else 0.0


# --------------------------------------------------------------------------- tasks


@dataclass
class TasksMerge:
    document: dict[str, Any]
    conflicts: list[dict[str, Any]] = field(default_factory=list)
    """Theirs' version of each task both sides changed differently (ours was kept)."""


def _by_id(doc: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    tasks = doc.get("tasks") or []
    return {str(t["id"]): t for t in tasks if isinstance(t, dict) and "id" in t}


def merge_tasks(
    base: Mapping[str, Any], ours: Mapping[str, Any], theirs: Mapping[str, Any]
) -> TasksMerge:
    """tasks.json three-way by task id: a task changed (or added, or deleted) on one side
    takes that side; changed on both sides differently: ours, with theirs in `conflicts`;
    deleted on one side and changed on the other: kept as changed (nothing is lost)."""
    b, o, t = _by_id(base), _by_id(ours), _by_id(theirs)
    t = _renumber_added_on_both_sides(b, o, t, ours, theirs)
    order = list(o) + [i for i in t if i not in o]
    merged: list[dict[str, Any]] = []
    conflicts: list[dict[str, Any]] = []
    for task_id in order:
        was, mine, other = b.get(task_id), o.get(task_id), t.get(task_id)
        if mine is None:  # deleted by us, or added by them
            if other is not None and (was is None or other != was):
                merged.append(other)
            continue
        if other is None:  # deleted by them, or added by us
            if was is None or mine != was:
                merged.append(mine)
            continue
        if mine == other or other == was:
            merged.append(mine)
        elif mine == was:
            merged.append(other)
        else:
            merged.append(mine)
            conflicts.append(other)
    document: dict[str, Any] = {**theirs, **ours, "tasks": merged}
    next_ids = [n for n in (ours.get("next_id"), theirs.get("next_id")) if isinstance(n, int)]
    numbers = [int(m.group(1)) for i in (*o, *t) if (m := _AUTO_ID.fullmatch(i))]
    if next_ids or numbers:
        document["next_id"] = max([*next_ids, *(n + 1 for n in numbers)])
    return TasksMerge(document, conflicts)


def _renumber_added_on_both_sides(
    b: dict[str, dict[str, Any]],
    o: dict[str, dict[str, Any]],
    t: dict[str, dict[str, Any]],
    ours: Mapping[str, Any],
    theirs: Mapping[str, Any],
) -> dict[str, dict[str, Any]]:
    """Both machines handed out the same automatic id (t3) to different new tasks: theirs
    gets the next free id (and their new tasks' `blocked_by` follows), so both are kept."""
    clashes = [i for i in t if i not in b and i in o and o[i] != t[i] and _AUTO_ID.fullmatch(i)]
    if not clashes:
        return t
    used = [int(m.group(1)) for i in (*b, *o, *t) if (m := _AUTO_ID.fullmatch(i))]
    next_ids = [n for n in (ours.get("next_id"), theirs.get("next_id")) if isinstance(n, int)]
    free = max([*used, *(n - 1 for n in next_ids), 0]) + 1
    renamed: dict[str, str] = {}
    for old in clashes:
        renamed[old] = f"t{free}"
        free += 1
    out: dict[str, dict[str, Any]] = {}
    for task_id, task in t.items():
        task = dict(task)
        if task_id not in b and isinstance(task.get("blocked_by"), list):
            task["blocked_by"] = [renamed.get(x, x) for x in task["blocked_by"]]
        new_id = renamed.get(task_id, task_id)
        task["id"] = new_id
        out[new_id] = task
    return out


# --------------------------------------------------------------------------- names


def machine_label(name: str) -> str:
    """A machine name safe inside a file name."""
    return _UNSAFE_MACHINE.sub("-", name).strip("-.") or "machine"


def conflict_copy_name(rel: str, machine: str, day: dt.date, taken: Sequence[str] = ()) -> str:
    """`folder/Name (conflict <machine> <YYYY-MM-DD>).md` beside `rel` (a number added when
    that name is taken)."""
    folder, _, name = rel.rpartition("/")
    stem, dot, ext = name.rpartition(".")
    if not dot:
        stem, ext = name, ""
    label = f"{stem}{CONFLICT_MARK}{machine_label(machine)} {day.isoformat()}"
    n = 1
    while True:
        candidate = label + (f" {n}" if n > 1 else "") + ")" + (f".{ext}" if ext else "")
        full = f"{folder}/{candidate}" if folder else candidate
        if full not in taken:
            return full
        n += 1


def is_conflict_copy(rel: str) -> bool:
    return CONFLICT_MARK in rel.rpartition("/")[2]


def copy_origin(rel: str) -> tuple[str, str] | None:
    """(machine, YYYY-MM-DD) a conflict copy's name gives, or None for another name."""
    match = _COPY_NAME.search(rel.rpartition("/")[2])
    return (match.group(1), match.group(2)) if match else None


# --------------------------------------------------------------------------- trailers

MACHINE_TRAILER = "Machine"
"""On every commit vb makes: the machine it was made on (`VB_MACHINE`, else the host)."""
COPY_TRAILER = "Conflict-copy"
"""On a merge that wrote conflict copies, one per copy: `<note> -> <copy>`, both paths
relative to the repository's top; the copy holds the other side's text of the note."""
_TRAILER = re.compile(r"^([A-Za-z][A-Za-z-]*): (.+)$")
_SYNC_SUBJECT = re.compile(r"vb (?:sync|persona) \(([^)]+)\): ")


@dataclass
class Trailers:
    machine: str | None = None
    copies: list[tuple[str, str]] = field(default_factory=list)
    """(note, copy) for each conflict copy the commit wrote."""


def with_trailers(message: str, machine: str, copies: Sequence[tuple[str, str]] = ()) -> str:
    """`message` with vb's trailers after a blank line (git's trailer block)."""
    lines = [f"{COPY_TRAILER}: {note} -> {copy}" for note, copy in copies]
    lines.append(f"{MACHINE_TRAILER}: {machine_label(machine)}")
    return message.rstrip("\n") + "\n\n" + "\n".join(lines) + "\n"


def machine_of(message: str, author: str) -> str:
    """The machine a commit was made on: its `Machine:` trailer, else the machine a `vb sync
    (<machine>): ...` subject names, else its author (a person's own git commit)."""
    machine = read_trailers(message).machine
    if machine is None:
        match = _SYNC_SUBJECT.match(message)
        machine = match.group(1) if match else author
    return machine_label(machine)


def read_trailers(message: str) -> Trailers:
    """vb's trailers in a commit message (the last paragraph); none when it has none."""
    found = Trailers()
    paragraphs = message.strip().split("\n\n")
    if len(paragraphs) < 2:
        return found
    for line in paragraphs[-1].splitlines():
        match = _TRAILER.match(line.strip())
        if match is None:
            continue
        key, value = match.groups()
        if key == MACHINE_TRAILER:
            found.machine = value.strip()
        elif key == COPY_TRAILER and " -> " in value:
            note, _, copy = value.partition(" -> ")
            found.copies.append((note.strip(), copy.strip()))
    return found


# --------------------------------------------------------------------------- messages


@dataclass
class ChangeCounts:
    added: int = 0
    changed: int = 0
    archived: int = 0
    restored: int = 0
    transcripts: int = 0
    other: int = 0


def is_note_path(rel: str) -> bool:
    """A memory note (not a log, transcript, MEMORY.md or STRATEGY.md), by its path
    (vault-relative; `.md` in any case, as Obsidian takes it)."""
    return (
        rel.lower().endswith(".md")
        and not rel.startswith(("logs/", "sessions/", "."))
        and rel not in ("MEMORY.md", "STRATEGY.md")
    )


def count_changes(entries: Sequence[tuple[str, str, str | None]]) -> ChangeCounts:
    """Counts for a commit message from `(status, path, renamed_to)` entries
    (git's A/M/D/R letters; paths relative to the vault)."""
    counts = ChangeCounts()
    for status, path, new in entries:
        target = new or path
        if target.startswith("sessions/") and target.endswith(".jsonl"):
            counts.transcripts += 1
        elif not target.endswith(".md") or target == "MEMORY.md":
            counts.other += 1
        elif status.startswith("R") and target.startswith("archive/"):
            counts.archived += 1
        elif status.startswith("R") and path.startswith("archive/"):
            counts.restored += 1
        elif status.startswith("A"):
            counts.added += 1
        else:
            counts.changed += 1
    return counts


def describe_changes(counts: ChangeCounts) -> str:
    parts = [
        f"{n} {plural(n, noun)}{what}"
        for n, noun, what in (
            (counts.added, "note", " added"),
            (counts.changed, "note", " changed"),
            (counts.archived, "note", " archived"),
            (counts.restored, "note", " restored"),
            (counts.transcripts, "transcript", ""),
            (counts.other, "other file", ""),
        )
        if n
    ]
    return ", ".join(parts) or "no changes"


def merge_items(
    base: Sequence[Mapping[str, Any]],
    ours: Sequence[Mapping[str, Any]],
    theirs: Sequence[Mapping[str, Any]],
) -> list[Mapping[str, Any]]:
    """A project's items.json three-way by item id: an item added, changed or removed on
    one side takes that side; changed on both sides, ours (items are extracted, not written
    by hand: the next `vb extract` settles any difference). By file and line."""

    def by_id(rows: Sequence[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
        return {str(r["id"]): r for r in rows if isinstance(r, Mapping) and "id" in r}

    b, o, t = by_id(base), by_id(ours), by_id(theirs)
    merged = []
    for item_id in {**o, **t}:
        was, mine, other = b.get(item_id), o.get(item_id), t.get(item_id)
        if mine is None:  # removed by us, or added by them
            if other is not None and (was is None or other != was):
                merged.append(other)
        elif other is None:  # removed by them, or added by us
            if was is None or mine != was:
                merged.append(mine)
        else:
            merged.append(other if mine == was else mine)
    return sorted(
        merged,
        key=lambda r: (str(r.get("sourceFile", "")), _line(r.get("lineNumber")), str(r["id"])),
    )


def _line(value: Any) -> int:
    return value if isinstance(value, int) else 0
