"""vb add | show | update | delete | restore | list."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from vault_brain.cli import (
    ArchiveFlag,
    CategoryFilter,
    JsonOpt,
    TagFilter,
    TypeFilter,
    app,
    emit,
    open_vault,
    read_content,
)
from vault_brain.render import table


def _note_json(note: Any, with_body: bool = True) -> dict[str, Any]:
    return note.to_dict(with_body=with_body)


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
    as_json: JsonOpt = False,
) -> None:
    """Add a memory: entities/<category>/<slug>.md or episodes/<YYYY-MM>/<slug>.md."""
    from vault_brain.vault import memory

    note = memory.add(open_vault(), type_, name, read_content(content), category, tag, pinned)
    emit({"note": _note_json(note, with_body=False)}, as_json, f"added {note.id}  ({note.path})")


@app.command()
def show(
    ref: Annotated[str, typer.Argument(help="A note id or a path relative to the vault.")],
    as_json: JsonOpt = False,
) -> None:
    """Show one note: its vb keys and its body."""
    from vault_brain.vault import memory

    note = memory.show(open_vault(), ref)
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
    emit({"note": _note_json(note)}, as_json, "\n".join(head) + "\n\n" + note.body)


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
    as_json: JsonOpt = False,
) -> None:
    """Change a note's body, tags or pin; only the changed front matter lines differ."""
    from vault_brain.vault import memory

    text = read_content(content) if content is not None else None
    note = memory.update(open_vault(), ref, text, tag, pin, append)
    emit({"note": _note_json(note, with_body=False)}, as_json, f"updated {note.id}  ({note.path})")


@app.command()
def delete(
    ref: Annotated[str, typer.Argument(help="A note id or path.")],
    reason: Annotated[
        str, typer.Option("--reason", "-r", help="Why; kept in the archived note.")
    ] = "deleted",
    as_json: JsonOpt = False,
) -> None:
    """Archive a note (moved to archive/ with reason and date); nothing is hard-deleted."""
    from vault_brain.vault import memory

    note, was = memory.archive(open_vault(), ref, reason)
    emit(
        {"id": note.id, "from": was, "path": note.path, "archived": True},
        as_json,
        f"archived {note.id}: {was} -> {note.path}  (undo: vb restore {note.id})",
    )


@app.command()
def restore(
    ref: Annotated[str, typer.Argument(help="The archived note's id or path.")],
    as_json: JsonOpt = False,
) -> None:
    """Bring an archived note back to its original path."""
    from vault_brain.vault import memory

    note, was = memory.restore(open_vault(), ref)
    emit(
        {"id": note.id, "from": was, "path": note.path, "archived": False},
        as_json,
        f"restored {note.id}: {was} -> {note.path}",
    )


@app.command("list")
def list_cmd(
    type_: TypeFilter = None,
    category: CategoryFilter = None,
    tag: TagFilter = None,
    include_archive: ArchiveFlag = False,
    archived: Annotated[bool, typer.Option("--archived", help="List only archived notes.")] = False,
    problems: Annotated[
        bool, typer.Option("--problems", help="Only notes vb could not read cleanly.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """List notes from the index (reconciled with the files first)."""
    from vault_brain.vault import memory

    rows = memory.list_notes(
        open_vault(), type_, category, tag, include_archive, archived, problems
    )
    human = table(
        ["id", "type", "category", "title", "path"],
        [[r["id"], r["type"], r["category"], r["title"], r["path"]] for r in rows],
    )
    emit({"notes": rows, "count": len(rows)}, as_json, human + f"\n{len(rows)} notes")
