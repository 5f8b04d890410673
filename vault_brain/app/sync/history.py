"""`vb history ID` and `vb log`: a memory's changes and the vault's operations, read from git.

A note's history follows it across renames and archiving: `git log --follow` on its
current path, then on the other paths it is known by (`archived_from` in its front matter,
the paths vb's lifecycle log recorded for its id) when git's rename detection lost the
trail. Each change is read from the two blobs (keys changed, body lines added and removed,
with `patch` the text as a unified diff) and named by the records vb's audit logs gained in
the same commit and by the change itself (see `domain.views.history`).

History is the commit graph's, the same on every machine after `vb sync`, not one machine's
first-parent view: a merge is listed when the note differs from any of its parents, with
each parent's side (the machine in its `Machine:` trailer) kept or replaced, and a merge
whose `Conflict-copy:` trailer names the note is listed in the history of the note and of
the copy, naming the other and the machine whose text the copy holds.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from vault_brain.app.memory.results import Result, result
from vault_brain.app.memory.vault import Vault
from vault_brain.domain.errors import NotFoundError, VaultBrainError
from vault_brain.domain.sync.merge import (
    RESOLVED_SUBJECT,
    is_conflict_copy,
    is_note_path,
    read_trailers,
)
from vault_brain.domain.text import json_safe
from vault_brain.domain.views.history import (
    KeyDiff,
    Logged,
    classify,
    diff_body,
    diff_meta,
    unified,
)
from vault_brain.domain.views.history import read_records as _read_records
from vault_brain.storage.git import history as hg
from vault_brain.storage.git.sync import open_repo, top
from vault_brain.storage.notes.frontmatter import parse_text

LOGS = ("logs/lifecycle.jsonl", "logs/credit.jsonl")
STATUS = {
    "A": "added",
    "C": "copied",
    "M": "modified",
    "R": "renamed",
    "D": "deleted",
    "T": "modified",
}


@result
class KeyChange(Result):
    key: str
    change: str
    """added, removed or changed."""
    old: Any = None
    new: Any = None


@result
class MergeSide(Result):
    """One parent of a merge: whose text the note had there, and whether the merge kept it."""

    commit: str
    machine: str | None
    """The machine that made the parent commit (its `Machine:` trailer); None for a commit
    made without vb."""
    subject: str
    """The parent commit's first line."""
    kept: bool
    """True when the note after the merge is the note of this parent (its text was kept)."""


@result
class HistoryEntry(Result):
    commit: str
    when: str
    """The commit's author date (ISO 8601)."""
    author: str
    operation: str
    """`operations` joined with ", " (e.g. "feedback, hand edit")."""
    operations: list[str]
    """Every operation the commit did to the note, logged ones first: feedback, flush,
    promote, consolidate, prune (from vb's logs); merge (of two machines' work), conflict
    copy (the merge wrote one of this note, or this note is one); archive, restore, rename,
    created, deleted, retrieval, vb edit, hand edit (from the change)."""
    path: str
    """Where the note was after this change (vault-relative)."""
    status: str
    """added, modified, renamed, copied (a new file git found like another) or deleted."""
    subject: str
    """The commit message's first line."""
    renamed_from: str | None = None
    details: list[str] = field(default_factory=list)
    """What the log records say (e.g. the session a flush came from, the feedback signal);
    for a merge, the machine it was made on, whose text it kept or replaced, and the
    conflict copy it wrote (naming the machine whose text the copy holds)."""
    keys: list[KeyChange] = field(default_factory=list)
    lines_added: int = 0
    lines_removed: int = 0
    """Body lines; for a merge, against the first parent whose note differs."""
    sides: list[MergeSide] = field(default_factory=list)
    """For a merge: each parent, in order (empty for any other commit)."""
    patch: str | None = None
    """With `--patch`: the change to the note's whole text (front matter and body) as a
    unified diff; for a merge, one diff against each parent whose text it replaced."""


@result
class HistoryResult(Result):
    id: str
    path: str
    """The note's path now."""
    paths: list[str]
    """Every path the note had, newest first."""
    entries: list[HistoryEntry]
    """Newest first."""
    seconds: float


@result
class LogEntry(Result):
    commit: str
    when: str
    author: str
    subject: str
    merge: bool
    files: int
    """Files the commit changed in the vault (a merge: what it brought in)."""
    notes: int
    """Of those, notes (Markdown files outside logs/ and sessions/)."""
    operations: dict[str, int] = field(default_factory=dict)
    """Memory operations vb logged in this commit, counted (feedback, flush, prune, ...)."""
    conflict_copies: list[str] = field(default_factory=list)
    """Conflict copies a merge wrote (vault-relative paths, from its `Conflict-copy:`
    trailers)."""


@result
class LogResult(Result):
    entries: list[LogEntry]
    """Newest first."""


# --------------------------------------------------------------------------- helpers


def _open(vault: Vault) -> tuple[Any, str]:
    """The repository and the vault's path inside it ('' at its top)."""
    repo = open_repo(vault.root)
    rel = Path(os.path.relpath(vault.root.resolve(), top(repo).resolve())).as_posix()
    if not hg.has_commits(repo):
        repo.close()
        raise VaultBrainError(
            f"the vault's repository at {top(repo)} has no commits yet",
            hint="commit the vault first: `vb sync`, or git add -A && git commit",
        )
    return repo, "" if rel == "." else rel + "/"


@contextlib.contextmanager
def _git_errors(vault: Vault) -> Iterator[tuple[Any, str]]:
    """The repository for one command (closed after), a git failure as one line."""
    repo, prefix = _open(vault)
    with hg.reading(repo, "read the vault's history"):
        yield repo, prefix


def _known_paths(vault: Vault, note_id: str, rel: str) -> list[str]:
    """Other paths the note had: `archived_from`, its archive/ twin, the lifecycle log's."""
    found = [rel]
    try:
        meta = parse_text(vault.paths.note(rel).read_bytes()).meta
    except OSError:
        meta = {}
    if isinstance(meta.get("archived_from"), str):
        found.append(meta["archived_from"])
    found.append(rel.removeprefix("archive/") if rel.startswith("archive/") else f"archive/{rel}")
    needle = f'"id":"{note_id}"'
    try:
        with open(vault.paths.lifecycle_log, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if needle in line.replace(" ", ""):
                    try:
                        path = json.loads(line).get("path")
                    except ValueError:
                        continue
                    if isinstance(path, str):
                        found.append(path)
    except OSError:
        pass
    return list(dict.fromkeys(found))


def _id_and_path(vault: Vault, ref: str) -> tuple[str, str]:
    from vault_brain.app.memory.notes import resolve  # lazy
    from vault_brain.storage.notes.read import load_note

    rel = resolve(vault, ref)
    return load_note(vault.paths.root, rel).id, rel


# --------------------------------------------------------------------------- history


def history(vault: Vault, ref: str, patch: bool = False) -> HistoryResult:
    started = time.perf_counter()
    note_id, rel = _id_and_path(vault, ref)
    with _git_errors(vault) as (repo, prefix):
        rows: list[hg.FileCommit] = []
        seen: set[tuple[str, str, str | None]] = set()
        covered: set[str] = set()
        for path in _known_paths(vault, note_id, rel):
            if path in covered:
                continue
            for c in hg.file_commits(repo, prefix + path):
                covered.update(p.removeprefix(prefix) for p in (c.path, c.old_path) if p)
                if (c.sha, c.path, c.old_blob) not in seen:
                    seen.add((c.sha, c.path, c.old_blob))
                    rows.append(c)
        if is_conflict_copy(rel):
            rows = _since_written(rows)
        groups: dict[tuple[str, str], list[hg.FileCommit]] = {}
        for c in rows:
            groups.setdefault((c.sha, c.path), []).append(c)
        if not groups:
            raise NotFoundError(
                f"git has no history of {rel!r}",
                hint="the note was never committed: `vb sync` (or git commit) records it",
            )
        commits = sorted(
            groups.values(), key=lambda g: datetime.fromisoformat(g[0].when), reverse=True
        )
        paths = {rel} | {
            p.removeprefix(prefix) for g in commits for c in g for p in (c.path, c.old_path) if p
        }
        needles = [note_id, *sorted(paths)]
        shas = list(dict.fromkeys(g[0].sha for g in commits))
        logs = hg.added_lines(repo, shas, [prefix + p for p in LOGS], needles)
        reader = _Reader(repo, prefix)
        entries = [_entry(reader, g, logs, note_id, paths, patch) for g in commits]
    ordered = list(dict.fromkeys(e.path for e in entries))
    return HistoryResult(
        id=note_id,
        path=rel,
        paths=ordered,
        entries=entries,
        seconds=round(time.perf_counter() - started, 3),
    )


def _since_written(rows: list[hg.FileCommit]) -> list[hg.FileCommit]:
    """A conflict copy's history begins at the merge that wrote it (its `Conflict-copy:`
    trailer). git's `--follow` takes the new file for a copy of the note (status C) and goes
    on with the note's history, which is the note's, not the copy's: that is left out, and
    the copy is added at the merge."""
    for c in rows:
        if len(c.parents) < 2:
            continue
        notes = [note for note, copy in read_trailers(c.message).copies if copy == c.path]
        if notes:
            born = dataclasses.replace(c, status="A", old_path=None, old_blob=None)
            return [
                born if r is c else r
                for r in rows
                if r is c or (r.sha != c.sha and r.path not in notes)
            ]
    return rows


class _Reader:
    """Blobs, notes and commit messages of one repository, each read once (cat-file)."""

    def __init__(self, repo: Any, prefix: str) -> None:
        self.repo, self.prefix = repo, prefix
        self.notes: dict[str, tuple[dict[str, Any], str]] = {}
        self.texts: dict[str, str] = {}
        self.messages: dict[str, str] = {}

    def note(self, sha: str | None) -> tuple[dict[str, Any], str]:
        """(front matter, body) of a blob; empty for None (no file)."""
        if sha is None:
            return {}, ""
        if sha not in self.notes:
            parsed = parse_text(hg.read_blob(self.repo, sha))
            self.notes[sha] = (parsed.meta, parsed.body)
        return self.notes[sha]

    def text(self, sha: str | None) -> str:
        if sha is None:
            return ""
        if sha not in self.texts:
            self.texts[sha] = hg.read_blob(self.repo, sha).decode("utf-8", "replace")
        return self.texts[sha]

    def message(self, commit: str) -> str:
        if commit not in self.messages:
            self.messages[commit] = hg.message(self.repo, commit)
        return self.messages[commit]

    def rel(self, path: str) -> str:
        return path.removeprefix(self.prefix)

    def text_of(self, commit: str) -> str:
        """Whose text a commit holds: "laptop's text" (its `Machine:` trailer), or "the text
        of 3f2a9c1e4b" for a commit made without vb."""
        machine = read_trailers(self.message(commit)).machine
        return f"{machine}'s text" if machine else f"the text of {commit[:10]}"


@dataclass
class _Side:
    commit: str
    blob: str | None
    path: str
    """Where the note was in this parent (repository-relative)."""
    kept: bool


def _sides(reader: _Reader, group: list[hg.FileCommit]) -> list[_Side]:
    """Each parent of a merge with the note's blob there. git printed one change per parent
    the note differs from, in parent order; a parent it printed none for holds the merge's
    own blob (found by reading the parent's tree, only when some parent is missing)."""
    c = group[0]
    if len(group) == len(c.parents):
        return [
            _Side(p, g.old_blob, g.old_path or g.path, False)
            for p, g in zip(c.parents, group, strict=True)
        ]
    changes = list(group)
    sides: list[_Side] = []
    for parent in c.parents:
        blob = hg.blob_at(reader.repo, parent, c.path)
        if (blob is not None and blob == c.new_blob) or not changes:
            sides.append(_Side(parent, blob, c.path, blob == c.new_blob))
        else:
            g = changes.pop(0)
            sides.append(_Side(parent, g.old_blob, g.old_path or g.path, False))
    return sides


def _entry(
    reader: _Reader,
    group: list[hg.FileCommit],
    logs: dict[str, list[str]],
    note_id: str,
    paths: set[str],
    patch: bool,
) -> HistoryEntry:
    c = group[0]
    merge = len(c.parents) > 1
    old_meta, old_body = reader.note(c.old_blob)
    new_meta, new_body = reader.note(c.new_blob)
    keys: list[KeyDiff] = diff_meta(old_meta, new_meta)
    added, removed = diff_body(old_body, new_body)
    logged: list[Logged] = _read_records(logs.get(c.sha, []), note_id, paths)
    if c.subject.startswith(RESOLVED_SUBJECT):  # (`vb conflicts keep`: no log record)
        how = c.subject.removeprefix(RESOLVED_SUBJECT).partition(": ")[2]
        logged.insert(0, Logged("conflict resolved", how))
    path = reader.rel(c.path)
    old = reader.rel(c.old_path) if c.old_path else None
    copied = old if c.status == "C" else None  # a new file git found like another
    if copied:
        old = None
    operations = classify(
        logged,
        merge=merge,
        status="A" if copied else c.status,
        moved=(old, path) if old else None,
        keys=keys,
        body_changed=old_body != new_body,
    )
    details = [item.detail for item in logged]
    if copied:
        details.append(f"a copy of {copied}")
    sides = _sides(reader, group) if merge else []
    if merge:
        machine = read_trailers(c.message).machine
        details.append(f"merged on {machine}" if machine else "merged (no Machine: trailer)")
        for side in sides:
            if side.blob is None:  # the file is new: no text of this side was replaced
                continue
            verb = "kept" if side.kept else "replaced"
            subject = reader.message(side.commit).partition("\n")[0]
            label = reader.text_of(side.commit)
            sha = "" if label.endswith(side.commit[:10]) else f"{side.commit[:10]} "
            details.append(f"{verb} {label} ({sha}{subject})")
        copies = _copies(reader, c)
        if copies:
            operations.append("conflict copy")
            details += copies
    return HistoryEntry(
        commit=c.sha,
        when=c.when,
        author=c.author,
        operation=", ".join(operations),
        operations=operations,
        path=path,
        status=STATUS.get(c.status, c.status),
        subject=c.subject,
        renamed_from=old,
        details=details,
        keys=[KeyChange(k.key, k.change, json_safe(k.old), json_safe(k.new)) for k in keys],
        lines_added=added,
        lines_removed=removed,
        sides=[
            MergeSide(
                s.commit,
                read_trailers(reader.message(s.commit)).machine,
                reader.message(s.commit).partition("\n")[0],
                s.kept,
            )
            for s in sides
        ],
        patch=_patch(reader, c, sides) if patch else None,
    )


def _patch(reader: _Reader, c: hg.FileCommit, sides: list[_Side]) -> str:
    """The note's text change; a merge's against each parent whose text it replaced (once
    per different text), each under a line naming that parent."""
    new_path = reader.rel(c.path) if c.new_blob else None
    if not sides:
        old_path = reader.rel(c.old_path or c.path) if c.old_blob else None
        return unified(reader.text(c.old_blob), reader.text(c.new_blob), old_path, new_path)
    replaced = [s for s in sides if not s.kept]
    blobs = {s.blob for s in replaced}
    parts: list[str] = []
    for side in replaced:
        if side.blob not in blobs:
            continue
        blobs.discard(side.blob)
        old_path = reader.rel(side.path) if side.blob else None
        diff = unified(reader.text(side.blob), reader.text(c.new_blob), old_path, new_path)
        if len(replaced) > 1 and len({s.blob for s in replaced}) > 1:
            diff = f"against {reader.text_of(side.commit)} ({side.commit[:10]})\n" + diff
        parts.append(diff)
    return "".join(parts)


def _copies(reader: _Reader, c: hg.FileCommit) -> list[str]:
    """What a merge's `Conflict-copy:` trailers say about this file: the copy it wrote of
    the note, or (for a copy) the note it was written from; with the machine whose text
    the copy holds."""
    here = {c.path, *([c.old_path] if c.old_path else [])}
    out: list[str] = []
    for note, copy in read_trailers(c.message).copies:
        if note in here:
            holder = _holder(reader, c, note, hg.blob_at(reader.repo, c.sha, copy))
            out.append(f"conflict copy {reader.rel(copy)} holds {holder}")
        elif copy in here:
            holder = _holder(reader, c, note, c.new_blob)
            out.append(f"conflict copy of {reader.rel(note)}: holds {holder}")
    return out


def _holder(reader: _Reader, c: hg.FileCommit, note: str, copy_blob: str | None) -> str:
    """Whose text a conflict copy holds: the parent whose version of the note has the
    copy's body; else the one parent whose note the merge did not keep."""
    body = reader.note(copy_blob)[1].strip()
    versions = [(p, hg.blob_at(reader.repo, p, note)) for p in c.parents]
    for parent, blob in versions:
        if blob is not None and reader.note(blob)[1].strip() == body:
            return reader.text_of(parent)
    merged = hg.blob_at(reader.repo, c.sha, note)
    replaced = [p for p, blob in versions if blob != merged]
    return reader.text_of(replaced[0]) if len(replaced) == 1 else "another side's text"


# --------------------------------------------------------------------------- log


def vault_log(vault: Vault, limit: int | None = None) -> LogResult:
    with _git_errors(vault) as (repo, prefix):
        commits = hg.vault_commits(repo, prefix or ".", limit)
        logs = hg.added_lines(repo, [c.sha for c in commits], [prefix + p for p in LOGS], ['"'])
    entries: list[LogEntry] = []
    for c in commits:
        files = [f.removeprefix(prefix) for f in c.files]
        counted: dict[str, int] = {}
        for line in logs.get(c.sha, []):
            operation = _operation(line)
            if operation:
                counted[operation] = counted.get(operation, 0) + 1
        entries.append(
            LogEntry(
                commit=c.sha,
                when=c.when,
                author=c.author,
                subject=c.subject,
                merge=len(c.parents) > 1,
                files=len(files),
                notes=sum(1 for f in files if is_note_path(f)),
                operations=counted,
                conflict_copies=[
                    copy.removeprefix(prefix) for _note, copy in read_trailers(c.message).copies
                ],
            )
        )
    return LogResult(entries)


def _operation(line: str) -> str | None:
    """The operation a log record counts as (one per note touched; a run's summary: none)."""
    try:
        record = json.loads(line)
    except ValueError:
        return None
    if not isinstance(record, dict) or record.get("event") == "run":
        return None
    if record.get("event") == "feedback":
        return "feedback"
    return str(record["operation"]) if record.get("op") and record.get("operation") else None
