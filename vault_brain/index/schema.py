"""The Whoosh schema: what a note contributes to the search index."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from whoosh.fields import Schema

    from vault_brain.vault.notes import Note

SCHEMA_VERSION = 6
SUMMARY_CHARS = 400
# Text fields searched by a query, with their BM25F field boosts.
TEXT_FIELDS = {"title": 2.0, "aliases": 1.5, "tagtext": 1.2, "body": 1.0}


def analyzer() -> Any:
    from whoosh.analysis import StemmingAnalyzer

    return StemmingAnalyzer(minsize=1, cachesize=200_000)


def build_schema() -> Schema:
    from whoosh.columns import VarBytesColumn
    from whoosh.fields import BOOLEAN, COLUMN, ID, KEYWORD, STORED, TEXT, Schema

    ana = analyzer()
    return Schema(
        path=ID(stored=True, unique=True),
        id=ID(stored=True),
        type=ID(stored=True),
        category=ID(stored=True),
        tags=KEYWORD(stored=True, commas=True, lowercase=True),
        archived=BOOLEAN(stored=True),
        problem=BOOLEAN(),
        # phrase=False: term frequencies only (no positions), several times cheaper to index
        title=TEXT(analyzer=ana, stored=True, phrase=False, field_boost=TEXT_FIELDS["title"]),
        aliases=TEXT(analyzer=ana, phrase=False, field_boost=TEXT_FIELDS["aliases"]),
        tagtext=TEXT(analyzer=ana, phrase=False, field_boost=TEXT_FIELDS["tagtext"]),
        body=TEXT(analyzer=ana, phrase=False),
        summary=STORED(),
        row=COLUMN(VarBytesColumn()),
    )


def tag_terms(tags: list[str]) -> list[str]:
    """A hierarchical tag also answers for its parents: project/alpha -> project/alpha, project."""
    out: list[str] = []
    for tag in tags:
        parts = tag.split("/")
        for i in range(len(parts), 0, -1):
            term = "/".join(parts[:i])
            if term and term not in out:
                out.append(term)
    return out


def _search_names(note: Note) -> list[str]:
    """Aliases, plus the file name when the title differs from it (people search by it)."""
    from pathlib import PurePosixPath

    stem = PurePosixPath(note.path).stem
    return [*note.aliases, stem] if stem.lower() != note.title.lower() else list(note.aliases)


def summary(body: str, limit: int = SUMMARY_CHARS) -> str:
    """The start of the body, whitespace collapsed, for listings and MEMORY.md."""
    text = " ".join(body[: limit * 2].split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _epoch(value: str | None) -> float | None:
    from vault_brain.credit import parse_time

    moment = parse_time(value)
    return moment.timestamp() if moment is not None else None


def row(note: Note) -> dict[str, Any]:
    """The per-note values listings, ranking, credit and MEMORY.md need, kept in a column
    so they can be read for every note at once without decompressing stored documents."""
    return {
        "id": note.id,
        "path": note.path,
        "title": note.title,
        "type": note.type,
        "category": note.category,
        "tags": note.tags,
        "aliases": note.aliases,
        "created": note.created,
        "updated": note.updated,
        "pinned": note.pinned,
        "credit": note.credit,
        "access_count": note.access_count,
        "last_accessed": note.last_accessed,
        "problem": note.problem,
        "archived": note.archived,
        # decay runs from the last access (else the last update, else creation)
        "ref_ts": _epoch(note.last_accessed or note.updated or note.created),
        "born_ts": _epoch(note.created or note.updated),
        "stamp_ts": _epoch(note.updated or note.created),
    }


def document(note: Note) -> dict[str, Any]:
    return {
        "path": note.path,
        "id": note.id,
        "type": note.type,
        "category": note.category,
        "tags": ",".join(t.replace(",", " ") for t in tag_terms(note.tags)),
        "archived": note.archived,
        "problem": note.problem is not None,
        "title": note.title,
        "aliases": " ".join(_search_names(note)),
        "tagtext": " ".join(t.replace("/", " ").replace("-", " ") for t in note.tags),
        "body": note.body,
        "summary": summary(note.body),
        "row": json.dumps(row(note), ensure_ascii=False, default=str).encode("utf-8"),
    }
