"""vb add | show | update | delete | restore | list."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from vault_brain.domain.notes.model import Filters
from vault_brain.domain.text import counted
from vault_brain.interfaces.cli.app import app, open_api
from vault_brain.interfaces.cli.options import (
    ArchiveFlag,
    CategoryFilter,
    JsonOpt,
    ScopeFilter,
    TagFilter,
    TypeFilter,
)
from vault_brain.interfaces.cli.output import emit, read_content, table

if TYPE_CHECKING:
    from vault_brain.app.memory.results import NoteView


def _head(note: NoteView) -> str:
    head = [
        f"id:        {note.id}",
        f"path:      {note.path}",
        f"title:     {note.title}",
        f"type:      {note.type} / {note.category}",
    ]
    if note.tags:
        head.append(f"tags:      {', '.join(note.tags)}")
    if note.pinned:
        head.append("pinned:    yes")
    if note.credit is not None:
        head.append(f"credit:    {note.credit}  (accessed {note.access_count}x)")
    if note.problem:
        head.append(f"problem:   {note.problem}")
    return "\n".join(head)


AllowSecretOpt = Annotated[
    bool,
    typer.Option(
        "--allow-secret",
        help="Store the text even though it holds a credential or secret (it is still kept "
        "out of what agents are shown).",
    ),
]


@app.command()
def add(
    name: Annotated[
        str, typer.Option("--name", "-n", help="Title of the memory (also its file name).")
    ],
    content: Annotated[
        str | None, typer.Argument(help="Text of the memory; '-' or omitted reads stdin.")
    ] = None,
    type_: Annotated[
        str, typer.Option("--type", "-t", help="entity (durable fact) or episode (what happened).")
    ] = "entity",
    category: Annotated[
        str | None,
        typer.Option(
            "--category",
            "-c",
            help="people, projects, preferences, or your own; episodes default to 'general'.",
        ),
    ] = None,
    tag: Annotated[
        list[str] | None, typer.Option("--tag", help="A tag (repeat, or comma-separated).")
    ] = None,
    pinned: Annotated[
        bool, typer.Option("--pinned", help="Pin it: always in MEMORY.md, never pruned.")
    ] = False,
    allow_secret: AllowSecretOpt = False,
    scope: Annotated[
        str | None,
        typer.Option(
            "--scope",
            help="Whose memory it is: global (default), user:<id>, chat:<channel>:<id> or "
            "agent:<name>.",
            show_default=False,
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Add a memory as an entity or episode note."""
    result = open_api().add(
        type_,
        name,
        read_content(content),
        category,
        tag,
        pinned,
        allow_secret=allow_secret,
        scope=scope,
    )
    emit(result, as_json, f"added {result.note.id}  ({result.note.path})")


@app.command()
def show(
    ref: Annotated[str, typer.Argument(help="A note id or a path relative to the vault.")],
    as_json: JsonOpt = False,
) -> None:
    """Show one note: its vb keys and its body."""
    result = open_api().show(ref)
    if not as_json:
        for notice in result.notices:
            typer.echo(f"vb: {notice}", err=True)
    emit(result, as_json, _head(result.note) + "\n\n" + result.note.body)


@app.command()
def update(
    ref: Annotated[str, typer.Argument(help="A note id or path.")],
    content: Annotated[
        str | None, typer.Option("--content", help="New body ('-' reads stdin).")
    ] = None,
    append: Annotated[
        bool, typer.Option("--append", help="Append the content instead of replacing the body.")
    ] = False,
    tag: Annotated[
        list[str] | None, typer.Option("--tag", help="Replace the tags (repeat or comma-separate).")
    ] = None,
    pin: Annotated[
        bool | None,
        typer.Option("--pin/--unpin", help="Pin or unpin the note.", show_default=False),
    ] = None,
    allow_secret: AllowSecretOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Change a note's body, tags or pin (only those lines differ)."""
    text = read_content(content) if content is not None else None
    result = open_api().update(ref, text, tag, pin, append, allow_secret=allow_secret)
    emit(result, as_json, f"updated {result.note.id}  ({result.note.path})")


@app.command()
def delete(
    ref: Annotated[str, typer.Argument(help="A note id or path.")],
    reason: Annotated[
        str, typer.Option("--reason", "-r", help="Why; kept in the archived note.")
    ] = "deleted",
    as_json: JsonOpt = False,
) -> None:
    """Archive a note (moved to archive/; nothing is hard-deleted)."""
    moved = open_api().archive(ref, reason)
    human = f"archived {moved.id}: {moved.from_path} -> {moved.path}  (undo: vb restore {moved.id})"
    emit(moved, as_json, human)


@app.command()
def restore(
    ref: Annotated[str, typer.Argument(help="The archived note's id or path.")],
    as_json: JsonOpt = False,
) -> None:
    """Bring an archived note back to its original path."""
    moved = open_api().restore(ref)
    emit(moved, as_json, f"restored {moved.id}: {moved.from_path} -> {moved.path}")


@app.command("list")
def list_cmd(
    type_: TypeFilter = None,
    category: CategoryFilter = None,
    tag: TagFilter = None,
    scope: ScopeFilter = None,
    include_archive: ArchiveFlag = False,
    archived: Annotated[bool, typer.Option("--archived", help="List only archived notes.")] = False,
    problems: Annotated[
        bool, typer.Option("--problems", help="Only notes vb could not read cleanly.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """List notes, filtered by type, category, tag or problems."""
    scopes = (scope,) if scope else ()
    filters = Filters(type_, category, tag, include_archive, archived, problems, scopes)
    result = open_api().list_notes(filters)
    human = table(
        ["id", "type", "category", "title", "path"],
        [[r.id, r.type, r.category, r.title, r.path] for r in result.notes],
    )
    emit(result, as_json, human + f"\n{counted(result.count, 'note')}")
