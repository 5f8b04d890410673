"""What the memory API returns, in the one vocabulary shared by `vb ... --json` and MCP.

Every result is a plain dataclass. The CLI prints `{"version": 2, ...fields}`; the MCP tools
answer compact documents made from them (`interfaces.mcp.answers`: the same values, fewer
fields); `make docs` writes their JSON Schema to
`docs/schema.json` from these classes (field docstrings become descriptions). A field means
the same thing wherever it appears: `title` is a note's display name, `body` its Markdown,
`credit` the stored score, `effective_credit` the score decayed since last access, `score`
a search ranking.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, dataclass_transform

from vault_brain.app.memory.memo import redacted
from vault_brain.domain.gate.redaction import TITLE_REASONS
from vault_brain.domain.notes.model import PERSON, Note
from vault_brain.domain.text import json_safe

if TYPE_CHECKING:
    from vault_brain.storage.index.search import Hit

SCHEMA_VERSION = 2


class Result:
    """Base of every result: field docstrings are read as descriptions by the schema.

    Results are declared with `@result` (a dataclass whose equality and repr come from this
    base class instead of being generated per class: cheaper to import, same behaviour)."""

    __pydantic_config__: ClassVar[dict[str, Any]] = {"use_attribute_docstrings": True}

    def _values(self) -> list[Any]:
        return [getattr(self, f.name) for f in dataclasses.fields(self)]  # type: ignore[arg-type]

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, Result)
        return self._values() == other._values()

    def __repr__(self) -> str:
        names = [f.name for f in dataclasses.fields(self)]  # type: ignore[arg-type]
        args = ", ".join(f"{n}={v!r}" for n, v in zip(names, self._values(), strict=True))
        return f"{type(self).__name__}({args})"

    __hash__ = None  # type: ignore[assignment]


_T = TypeVar("_T")


@dataclass_transform()
def result(cls: type[_T]) -> type[_T]:
    """Declare a result class: a dataclass with the base class's equality and repr."""
    return dataclass(eq=False, repr=False)(cls)


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


@result
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
    written_by: str = PERSON
    """Who wrote the text (the `source` key): person (by hand, or no `source`), agent,
    conversation, extraction, merge or import."""

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
            written_by=note.source,
        )


@result
class NoteResult(Result):
    """One note: added, shown, updated or retrieved."""

    note: NoteView
    warnings: list[str] = field(default_factory=list)
    """What the gate found in text a person stored anyway (it is kept out of agents'
    context)."""
    notices: list[str] = field(default_factory=list)
    """How the note was found, when not as asked: an old id or path of a renamed note."""


@result
class MoveResult(Result):
    """A note moved to archive/ (delete) or back (restore)."""

    id: str
    path: str
    """Where the note is now."""
    from_path: str
    """Where it was."""
    archived: bool


@result
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


@result
class NoteList(Result):
    notes: list[NoteRow]
    count: int


# --------------------------------------------------------------------------- search


@result
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
    source: str = "memory"
    """Where the result comes from: memory (a note), items (an extracted item: `category`
    is its project, `path` and `line` its source), sources (a project file: `path` and
    `line`), sessions (a transcript message: `session` and `message`)."""
    line: int | None = None
    """The 1-based line of `path` an item or source chunk starts at."""
    session: str | None = None
    message: str | None = None
    """The transcript message id (m0003) of a sessions result."""
    written_by: str = PERSON
    """Who wrote the text: person (by hand, or a note without `source`), agent,
    conversation, extraction, merge or import (the note's `source` key)."""
    explain: dict[str, Any] | None = None
    """With `--explain`: what `score` is made of. `relevance` (BM25F, or in hybrid mode its
    fusion with the embedding `similarity`), `bm25` and its share per field (`fields`:
    title, aliases, tagtext, body, previously, slots), and the factors the relevance is
    multiplied by: `credit`, `recency`, `superseded` (each 1 when it does not apply)."""

    @classmethod
    def of(cls, hit: Hit, *, person: bool = False) -> SearchHit:
        """A search result as its caller is shown it: to the `person` at the CLI, what they
        wrote by hand as they wrote it; otherwise title and snippet redacted by span where
        the gate refuses a part (of a person's own note, only secrets)."""
        return cls(
            id=hit.id,
            path=hit.path,
            title=shown(hit.title, hit.written_by, person, title=True),
            type=hit.type,
            category=hit.category,
            score=round(hit.score, 6),
            snippet=shown(hit.snippet, hit.written_by, person),
            written_by=hit.written_by,
            explain=hit.explain,
        )


def shown(text: str, written_by: str, person: bool = False, *, title: bool = False) -> str:
    """Text of a note written by `written_by` as the person (`person`) or an agent sees it
    (a `title` is redacted only for what a name can hold: `redaction.TITLE_REASONS`)."""
    if written_by == PERSON:
        return text if person else redacted(text, ("secret",))[0]
    return redacted(text, TITLE_REASONS if title else None)[0]


@result
class SearchResult(Result):
    query: str
    results: list[SearchHit]
    """Best first."""


@result
class BatchLine(Result):
    """One line of `vb search --queries`: the query's own id and its results."""

    id: Any
    query: str
    results: list[SearchHit]


# --------------------------------------------------------------------------- lifecycle


@result
class IndexResult(Result):
    added: int
    updated: int
    removed: int
    total: int
    rebuilt: bool
    seconds: float


@result
class SettingRow(Result):
    key: str
    value: Any
    source: str
    """default or STRATEGY.md."""
    default: Any
    group: str
    help: str


@result
class StrategyResult(Result):
    settings: list[SettingRow]
    unknown: list[str]
    """Keys in STRATEGY.md that are not settings (ignored)."""


@result
class InitResult(Result):
    vault: str
    created: list[str]
    kept: list[str]
    git: str
    counters: str = ""
    """`--adopt`: what vb will write into the person's notes, and how to keep notes out."""
