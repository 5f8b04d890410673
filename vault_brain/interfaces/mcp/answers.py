"""What the MCP tools answer: compact documents an agent pays few tokens for.

Each tool answers with the fields its contract names at the top level (store: id and path;
search: results of id, name, snippet and score; update: id and updated; delete: id and
archived; credit_report: entries; compact: consolidated and pruned), a few small extras, no
field twice and no note body unless the tool is there to read one (retrieve). A field left
empty (null, an empty list) is left out. The same document is the call's structured content
and, as one line of JSON, its text content.

The CLI's `--json` keeps the full result types of `app.memory.results`; these are made from
them here, in the interface, so the API stays one vocabulary.
"""

from __future__ import annotations

import json
from typing import Any

from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel, Field

from vault_brain.app.lifecycle.plans import CompactResult
from vault_brain.app.memory.credit import CreditReport
from vault_brain.app.memory.results import (
    MoveResult,
    NoteResult,
    Result,
    SearchHit,
    SearchResult,
    to_json,
)
from vault_brain.app.sync.history import HistoryResult, KeyChange, MergeSide
from vault_brain.domain.errors import VaultBrainError


class Answer(BaseModel):
    """Base of the tools' answers."""


class Stored(Answer):
    """A memory stored."""

    id: str = Field(description="The new note's id (for memory_retrieve, update, delete).")
    path: str = Field(description="Where the note is, relative to the vault.")
    warnings: list[str] | None = Field(
        default=None, description="What the gate found in the text and let through."
    )


class Hit(Answer):
    id: str
    name: str = Field(description="The note's display name.")
    snippet: str = Field(description="The passage around the words that matched.")
    score: float = Field(description="BM25 blended with credit and recency; higher is better.")
    path: str = Field(description="Where the note (or source) is, relative to its root.")
    written_by: str = Field(
        description="Who wrote the text: person, agent, conversation, extraction or merge."
    )
    source: str | None = Field(
        default=None,
        description="Only when the result is not a note: items (an extracted item), sources "
        "(a project file) or sessions (a transcript message).",
    )
    line: int | None = Field(default=None, description="The 1-based line in `path`.")
    session: str | None = None
    message: str | None = Field(default=None, description="A transcript message id (m0003).")

    @classmethod
    def of(cls, hit: SearchHit) -> Hit:
        return cls(
            id=hit.id,
            name=hit.title,
            snippet=hit.snippet,
            score=hit.score,
            path=hit.path,
            written_by=hit.written_by,
            source=None if hit.source == "memory" else hit.source,
            line=hit.line,
            session=hit.session,
            message=hit.message,
        )


class Found(Answer):
    """Search results, best first."""

    results: list[Hit]


class Retrieved(Answer):
    """One memory in full."""

    id: str
    path: str
    name: str
    type: str = Field(description="entity, episode or note (a hand-made note).")
    content: str = Field(description="The note's Markdown body.")
    credit_score: float | None = Field(
        default=None, description="Stored credit in [0, 1]; left out if never scored."
    )
    written_by: str
    metadata: dict[str, Any] = Field(
        description="The note's other properties: category, tags, aliases, created, updated, "
        "access_count, last_accessed, and pinned, archived or problem when they apply."
    )
    warnings: list[str] | None = None

    @classmethod
    def of(cls, result: NoteResult) -> Retrieved:
        note = result.note
        metadata: dict[str, Any] = {
            "category": note.category,
            "tags": note.tags,
            "aliases": note.aliases,
            "created": note.created,
            "updated": note.updated,
            "access_count": note.access_count,
            "last_accessed": note.last_accessed,
            "pinned": note.pinned,
            "archived": note.archived,
            "problem": note.problem,
        }
        return cls(
            id=note.id,
            path=note.path,
            name=note.title,
            type=note.type,
            content=note.body,
            credit_score=note.credit,
            written_by=note.written_by,
            metadata={k: v for k, v in metadata.items() if _given(v)},
            warnings=result.warnings or None,
        )


def _given(value: Any) -> bool:
    """Worth sending: not null, an empty list or text, or a flag that is off (0 is sent)."""
    return value is not None and value is not False and value != [] and value != ""


class Updated(Answer):
    id: str
    updated: bool = Field(description="True: the new content is in the note.")
    path: str
    warnings: list[str] | None = None


class Archived(Answer):
    id: str
    archived: bool = Field(description="True: the note is in archive/ (never deleted).")
    path: str = Field(description="Where the note is now.")
    from_path: str = Field(description="Where it was.")


class Entry(Answer):
    id: str
    name: str
    score: float = Field(description="Effective credit: stored credit decayed since last use.")
    access_count: int


class Credits(Answer):
    """The memories with the highest and the lowest credit, best first."""

    entries: list[Entry] = Field(
        description="The top_n highest, then the top_n lowest (each note once), best first."
    )
    count: int = Field(description="Live notes in the vault.")


class Compacted(Answer):
    consolidated: int = Field(description="Episodes merged into consolidated notes.")
    pruned: int = Field(description="Low-credit notes moved to archive/.")
    created: list[str] | None = Field(default=None, description="The notes written (paths).")
    archived: list[str] | None = Field(default=None, description="The notes archived (paths).")


class Change(Answer):
    commit: str
    when: str = Field(description="The commit's author date (ISO 8601).")
    author: str
    operations: list[str] = Field(
        description="What the commit did to the note: feedback, flush, promote, consolidate, "
        "prune, merge, conflict copy, archive, restore, rename, created, deleted, retrieval, "
        "vb edit, hand edit."
    )
    path: str = Field(description="Where the note was after this change.")
    status: str = Field(description="added, modified, renamed, copied or deleted.")
    subject: str = Field(description="The commit message's first line.")
    renamed_from: str | None = None
    details: list[str] | None = Field(default=None, description="What vb's logs say of it.")
    keys: list[KeyChange] | None = Field(
        default=None, description="The front matter keys that changed."
    )
    lines_added: int = 0
    lines_removed: int = 0
    sides: list[MergeSide] | None = Field(
        default=None, description="For a merge: each parent, whose text the note had there."
    )


class History(Answer):
    """Every change to one memory, newest first."""

    id: str
    path: str = Field(description="The note's path now.")
    paths: list[str] | None = Field(
        default=None, description="Every path the note had, newest first (when it moved)."
    )
    entries: list[Change]


# ----------------------------------------------------------------------------- conversions


def stored(result: NoteResult) -> Stored:
    return Stored(id=result.note.id, path=result.note.path, warnings=result.warnings or None)


def found(result: SearchResult) -> Found:
    return Found(results=[Hit.of(h) for h in result.results])


def updated(result: NoteResult) -> Updated:
    note = result.note
    return Updated(id=note.id, updated=True, path=note.path, warnings=result.warnings or None)


def archived(result: MoveResult) -> Archived:
    return Archived(
        id=result.id, archived=result.archived, path=result.path, from_path=result.from_path
    )


def credits(report: CreditReport) -> Credits:
    seen: set[str] = set()
    entries = []
    for e in [*report.highest, *reversed(report.lowest)]:
        if e.id not in seen:
            seen.add(e.id)
            entries.append(
                Entry(id=e.id, name=e.title, score=e.effective_credit, access_count=e.access_count)
            )
    return Credits(entries=entries, count=report.count)


def history(result: HistoryResult) -> History:
    return History(
        id=result.id,
        path=result.path,
        paths=result.paths if result.paths != [result.path] else None,
        entries=[
            Change(
                commit=e.commit,
                when=e.when,
                author=e.author,
                operations=e.operations,
                path=e.path,
                status=e.status,
                subject=e.subject,
                renamed_from=e.renamed_from,
                details=e.details or None,
                keys=e.keys or None,
                lines_added=e.lines_added,
                lines_removed=e.lines_removed,
                sides=e.sides or None,
            )
            for e in result.entries
        ],
    )


def compacted(result: CompactResult) -> Compacted:
    return Compacted(
        consolidated=result.consolidated,
        pruned=result.pruned,
        created=result.created or None,
        archived=result.archived or None,
    )


# ----------------------------------------------------------------------------- the wire


def _line(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def answer(result: BaseModel | Result) -> CallToolResult:
    """A tool's answer: its fields as structured content, and the same as one line of JSON
    (an `Answer`'s empty fields left out of both; an API result's fields all kept)."""
    if isinstance(result, BaseModel):
        data = result.model_dump(mode="json", exclude_none=True)
    else:
        data = to_json(result)
    return CallToolResult(
        content=[TextContent(type="text", text=_line(data))], structured_content=data
    )


def error_doc(exc: VaultBrainError) -> dict[str, Any]:
    """An error as the CLI's `--json` gives it (`error` there), without the exit code."""
    return {"code": exc.code, "message": exc.message, "hint": exc.hint}


def failed(exc: VaultBrainError) -> CallToolResult:
    """A tool error: `{code, message, hint}` as one line of JSON, the call marked an error."""
    return CallToolResult(
        content=[TextContent(type="text", text=_line(error_doc(exc)))], is_error=True
    )
