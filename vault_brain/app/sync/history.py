"""`vb history ID` and `vb log`: a memory's changes and the vault's operations, read from git.

A note's history follows it across renames and archiving: `git log --follow` on its
current path, then on the other paths it is known by (`archived_from` in its front matter,
the paths vb's lifecycle log recorded for its id) when git's rename detection lost the
trail. Each change is read from the two blobs (keys changed, body lines added and removed)
and named by the records vb's audit logs gained in the same commit (see `domain.views.history`).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from dataclasses import field
from datetime import datetime
from pathlib import Path
from typing import Any

from vault_brain.app.memory.results import Result, result
from vault_brain.app.memory.vault import Vault
from vault_brain.domain.errors import NotFoundError, VaultBrainError
from vault_brain.domain.text import json_safe
from vault_brain.domain.views.history import KeyDiff, Logged, classify, diff_body, diff_meta
from vault_brain.domain.views.history import read_records as _read_records
from vault_brain.storage.git import history as hg
from vault_brain.storage.git.sync import open_repo, top
from vault_brain.storage.notes.frontmatter import parse_text

LOGS = ("logs/lifecycle.jsonl", "logs/credit.jsonl")
STATUS = {"A": "added", "M": "modified", "R": "renamed", "D": "deleted", "T": "modified"}


@result
class KeyChange(Result):
    key: str
    change: str
    """added, removed or changed."""
    old: Any = None
    new: Any = None


@result
class HistoryEntry(Result):
    commit: str
    when: str
    """The commit's author date (ISO 8601)."""
    author: str
    operation: str
    """feedback, flush, promote, consolidate, prune (from vb's logs); merge (from another
    machine); archive, restore, rename, created, deleted, retrieval, vb edit, hand edit."""
    path: str
    """Where the note was after this change (vault-relative)."""
    status: str
    """added, modified, renamed or deleted."""
    subject: str
    """The commit message's first line."""
    renamed_from: str | None = None
    details: list[str] = field(default_factory=list)
    """What the log records say (e.g. the session a flush came from, the feedback signal)."""
    keys: list[KeyChange] = field(default_factory=list)
    lines_added: int = 0
    lines_removed: int = 0


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


def _parse(repo: Any, sha: str | None, cache: dict[str, tuple[dict[str, Any], str]]) -> Any:
    if sha is None:
        return {}, ""
    if sha not in cache:
        parsed = parse_text(repo.odb.stream(bytes.fromhex(sha)).read())
        cache[sha] = (parsed.meta, parsed.body)
    return cache[sha]


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


def history(vault: Vault, ref: str) -> HistoryResult:
    started = time.perf_counter()
    note_id, rel = _id_and_path(vault, ref)
    with _git_errors(vault) as (repo, prefix):
        commits: list[hg.FileCommit] = []
        seen: set[tuple[str, str]] = set()
        covered: set[str] = set()
        for path in _known_paths(vault, note_id, rel):
            if path in covered:
                continue
            for c in hg.file_commits(repo, prefix + path):
                covered.update(p.removeprefix(prefix) for p in (c.path, c.old_path) if p)
                if (c.sha, c.path) not in seen:
                    seen.add((c.sha, c.path))
                    commits.append(c)
        if not commits:
            raise NotFoundError(
                f"git has no history of {rel!r}",
                hint="the note was never committed: `vb sync` (or git commit) records it",
            )
        commits.sort(key=lambda c: datetime.fromisoformat(c.when), reverse=True)
        paths = {rel} | {p.removeprefix(prefix) for c in commits for p in (c.path, c.old_path) if p}
        needles = [note_id, *sorted(paths)]
        logs = hg.added_lines(repo, [c.sha for c in commits], [prefix + p for p in LOGS], needles)
        cache: dict[str, tuple[dict[str, Any], str]] = {}
        entries = [_entry(repo, c, prefix, logs, note_id, paths, cache) for c in commits]
    ordered = list(dict.fromkeys(e.path for e in entries))
    return HistoryResult(
        id=note_id,
        path=rel,
        paths=ordered,
        entries=entries,
        seconds=round(time.perf_counter() - started, 3),
    )


def _entry(
    repo: Any,
    c: hg.FileCommit,
    prefix: str,
    logs: dict[str, list[str]],
    note_id: str,
    paths: set[str],
    cache: dict[str, tuple[dict[str, Any], str]],
) -> HistoryEntry:
    old_meta, old_body = _parse(repo, c.old_blob, cache)
    new_meta, new_body = _parse(repo, c.new_blob, cache)
    keys: list[KeyDiff] = diff_meta(old_meta, new_meta)
    added, removed = diff_body(old_body, new_body)
    logged: list[Logged] = _read_records(logs.get(c.sha, []), note_id, paths)
    path = c.path.removeprefix(prefix)
    old = c.old_path.removeprefix(prefix) if c.old_path else None
    operation = classify(
        logged,
        merge=len(c.parents) > 1,
        status=c.status,
        moved=(old, path) if old else None,
        keys=keys,
    )
    details = [item.detail for item in logged]
    if len(c.parents) > 1:
        details.append(f"merged from another machine: {c.subject}")
    return HistoryEntry(
        commit=c.sha,
        when=c.when,
        author=c.author,
        operation=operation,
        path=path,
        status=STATUS.get(c.status, c.status),
        subject=c.subject,
        renamed_from=old,
        details=details,
        keys=[KeyChange(k.key, k.change, json_safe(k.old), json_safe(k.new)) for k in keys],
        lines_added=added,
        lines_removed=removed,
    )


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
                notes=sum(1 for f in files if _is_note(f)),
                operations=counted,
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


def _is_note(path: str) -> bool:
    return (
        path.endswith(".md")
        and not path.startswith(("logs/", "sessions/", "."))
        and (path not in ("MEMORY.md", "STRATEGY.md"))
    )
