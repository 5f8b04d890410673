"""What the memory API returns, in the one vocabulary shared by `vb ... --json` and MCP.

Every result is a plain dataclass. The CLI prints `{"version": 2, ...fields}`; the MCP tools
return the same fields as structured content; `make docs` writes their JSON Schema to
`docs/schema.json` from these classes (field docstrings become descriptions). A field means
the same thing wherever it appears: `title` is a note's display name, `body` its Markdown,
`credit` the stored score, `effective_credit` the score decayed since last access, `score`
a search ranking.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar

from vault_brain.domain.notes import Note
from vault_brain.domain.plan import Action
from vault_brain.domain.tasks import Change, TaskView
from vault_brain.domain.text import json_safe
from vault_brain.storage.transcript import SessionInfo

SCHEMA_VERSION = 2


class Result:
    """Base of every result: field docstrings are read as descriptions by the schema."""

    __pydantic_config__: ClassVar[dict[str, Any]] = {"use_attribute_docstrings": True}


def to_json(result: Any) -> dict[str, Any]:
    """A result as JSON-ready data (the fields only, no envelope)."""
    if dataclasses.is_dataclass(result) and not isinstance(result, type):
        result = dataclasses.asdict(result)
    data: dict[str, Any] = json_safe(result)
    return data


def envelope(result: Any) -> dict[str, Any]:
    """The CLI's `--json` document: the schema version, then the result's fields."""
    return {"version": SCHEMA_VERSION, **to_json(result)}


# --------------------------------------------------------------------------- notes


@dataclass
class NoteView(Result):
    id: str
    """Stable id, e.g. entity-people-ada-lovelace (derived from the path when not written)."""
    path: str
    """Where the note is, relative to the vault (POSIX separators)."""
    title: str
    """Display name: the `title` key, else the first heading, else the file name."""
    type: str
    """entity, episode or note (a hand-made note outside entities/ and episodes/)."""
    category: str
    tags: list[str]
    aliases: list[str]
    created: str | None
    updated: str | None
    pinned: bool
    credit: float | None
    """Stored credit in [0, 1]; null for a note no outcome has scored."""
    access_count: int
    last_accessed: str | None
    archived: bool
    problem: str | None
    """Why vb could not read the note cleanly (it is then never edited), else null."""
    body: str
    """The Markdown after the front matter."""
    meta: dict[str, Any]
    """The whole front matter as JSON (YAML dates become strings)."""

    @classmethod
    def of(cls, note: Note) -> NoteView:
        return cls(
            id=note.id,
            path=note.path,
            title=note.title,
            type=note.type,
            category=note.category,
            tags=list(note.tags),
            aliases=list(note.aliases),
            created=note.created,
            updated=note.updated,
            pinned=note.pinned,
            credit=note.credit,
            access_count=note.access_count,
            last_accessed=note.last_accessed,
            archived=note.archived,
            problem=note.problem,
            body=note.body,
            meta=json_safe(note.meta),
        )


@dataclass
class NoteResult(Result):
    """One note: added, shown, updated or retrieved."""

    note: NoteView


@dataclass
class MoveResult(Result):
    """A note moved to archive/ (delete) or back (restore)."""

    id: str
    path: str
    """Where the note is now."""
    from_path: str
    """Where it was."""
    archived: bool


@dataclass
class NoteRow(Result):
    id: str
    path: str
    title: str
    type: str
    category: str
    tags: list[str]
    pinned: bool
    credit: float | None
    access_count: int
    updated: str | None
    archived: bool
    problem: str | None

    @classmethod
    def of(cls, row: dict[str, Any]) -> NoteRow:
        return cls(
            id=str(row.get("id")),
            path=str(row.get("path")),
            title=str(row.get("title") or ""),
            type=str(row.get("type") or ""),
            category=str(row.get("category") or ""),
            tags=list(row.get("tags") or []),
            pinned=bool(row.get("pinned")),
            credit=row.get("credit"),
            access_count=int(row.get("access_count") or 0),
            updated=row.get("updated"),
            archived=bool(row.get("archived")),
            problem=row.get("problem"),
        )


@dataclass
class NoteList(Result):
    notes: list[NoteRow]
    count: int


# --------------------------------------------------------------------------- search


@dataclass
class SearchHit(Result):
    id: str
    path: str
    title: str
    type: str
    category: str
    score: float
    """BM25 blended with effective credit and recency; higher is better."""
    snippet: str
    """About 200 characters of the body around the first matching word."""


@dataclass
class SearchResult(Result):
    query: str
    results: list[SearchHit]
    """Best first."""


@dataclass
class BatchLine(Result):
    """One line of `vb search --queries`: the query's own id and its results."""

    id: Any
    query: str
    results: list[SearchHit]


# --------------------------------------------------------------------------- credit


@dataclass
class CreditChange(Result):
    id: str
    path: str
    old: float
    new: float


@dataclass
class Skipped(Result):
    id: str
    reason: str


@dataclass
class FeedbackResult(Result):
    session: str
    signal: str
    """The outcome signal, e.g. positive_feedback."""
    reward: float
    share: float
    """The reward each memory retrieved in the turn received: reward / sqrt(n)."""
    changes: list[CreditChange] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    repeated: bool = False
    """True when this exact feedback was already applied (a retry after a crash): nothing moved."""


@dataclass
class CreditEntry(Result):
    id: str
    path: str
    title: str
    credit: float
    """Stored credit (0.5-like default for a note never scored)."""
    effective_credit: float
    """Stored credit decayed by the days since the last access."""
    access_count: int
    last_accessed: str | None


@dataclass
class CreditReport(Result):
    count: int
    """Live notes in the vault."""
    highest: list[CreditEntry]
    lowest: list[CreditEntry]


# --------------------------------------------------------------------------- lifecycle


@dataclass
class PlanResult(Result):
    operation: str
    method: str
    """offline, llm, or offline (llm failed: ...)."""
    dry_run: bool
    actions: list[Action]
    notes: list[str]
    """What was considered and skipped, and why."""
    run_id: str | None = None
    applied: int = 0


@dataclass
class DueState(Result):
    due: bool
    last_run: str | None
    interval_hours: float
    enabled: bool


@dataclass
class MaintainResult(Result):
    dry_run: bool
    due: dict[str, DueState]
    runs: list[PlanResult]


@dataclass
class CompactResult(Result):
    consolidated: int
    """Episodes merged into consolidated notes."""
    pruned: int
    """Low-credit notes moved to archive/."""
    created: list[str]
    archived: list[str]


@dataclass
class MemoryFileResult(Result):
    tokens: int
    budget: int
    included: list[str]
    """Ids of the notes in MEMORY.md."""
    omitted: int
    token_counter: str
    written: bool
    text: str = ""


@dataclass
class IndexResult(Result):
    added: int
    updated: int
    removed: int
    total: int
    rebuilt: bool
    seconds: float


@dataclass
class SettingRow(Result):
    key: str
    value: Any
    source: str
    """default or STRATEGY.md."""
    default: Any
    group: str
    help: str


@dataclass
class StrategyResult(Result):
    settings: list[SettingRow]
    unknown: list[str]
    """Keys in STRATEGY.md that are not settings (ignored)."""


@dataclass
class InitResult(Result):
    vault: str
    created: list[str]
    kept: list[str]
    git: str


# --------------------------------------------------------------------------- sessions


@dataclass
class SessionList(Result):
    sessions: list[SessionInfo]
    """Most recently active first."""


@dataclass
class SessionsArchived(Result):
    dry_run: bool
    sessions: list[str]
    """Ids of the sessions moved (or, with a dry run, that would be) to archive/sessions/."""


# --------------------------------------------------------------------------- tasks


@dataclass
class Task(Result):
    id: str
    milestone: str | None
    priority: str
    """p0 (drop everything), p1, p2 (normal) or p3."""
    status: str
    """todo, in_progress, blocked or done."""
    description: str
    acceptance_criteria: list[str]
    created: str | None
    completed: str | None
    blocked_by: list[str]
    ready: bool
    """todo or in_progress, and every task it waits on is done."""
    open_blockers: list[str]
    extra: dict[str, Any] = field(default_factory=dict)
    """Keys of the task vb does not own (kept as they are)."""

    @classmethod
    def of(cls, view: TaskView) -> Task:
        t = view.task
        return cls(
            t.id,
            t.milestone,
            t.priority,
            t.status,
            t.description,
            list(t.acceptance_criteria),
            t.created,
            t.completed,
            list(t.blocked_by),
            view.ready,
            view.open_blockers,
            dict(t.extra),
        )


@dataclass
class TaskList(Result):
    tasks: list[Task]
    count: int
    ready: int

    @classmethod
    def of(cls, views: list[TaskView]) -> TaskList:
        return cls([Task.of(v) for v in views], len(views), sum(v.ready for v in views))


@dataclass
class TaskChange(Result):
    action: str
    """add, update, done or block."""
    changed: bool
    task: Task
    unblocked: list[str]
    """Tasks that no longer wait on anything (now todo)."""
    reblocked: list[str]
    fields: list[str] = field(default_factory=list)
    added_blockers: list[str] = field(default_factory=list)
    forced: bool = False

    @classmethod
    def of(cls, change: Change) -> TaskChange:
        return cls(
            change.action,
            change.changed,
            Task.of(change.task),
            change.unblocked,
            change.reblocked,
            change.fields,
            change.added_blockers,
            change.forced,
        )
