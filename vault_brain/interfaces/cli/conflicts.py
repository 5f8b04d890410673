"""vb conflicts [list] | keep mine|theirs NOTE | keep --merge NOTE: the conflict copies a
merge wrote, listed and resolved."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from vault_brain.domain.errors import UsageError
from vault_brain.interfaces.cli.app import app, open_api
from vault_brain.interfaces.cli.options import JsonOpt
from vault_brain.interfaces.cli.output import emit

if TYPE_CHECKING:
    from vault_brain.app.sync.conflicts import ConflictList

conflicts_app = typer.Typer(
    help=(
        "Conflict copies: list them, keep one side, or merge both.\n\n"
        "A conflict copy is another machine's text of a note both machines changed on the "
        "same lines: `vb sync` keeps this machine's text in the note and writes the other "
        "beside it as `<note> (conflict <machine> <date>).md`. A copy reaches no agent until it is "
        "resolved; each resolution is a commit of its own, and the copy is archived."
    ),
    invoke_without_command=True,
)
app.add_typer(conflicts_app, name="conflicts")


def render_list(result: ConflictList) -> str:
    if not result.copies and not result.tasks:
        return "no conflict copies"
    lines = []
    for c in result.copies:  # (paths in full: a person pastes them into `keep`)
        lines.append(c.note)
        lines.append(f"  {c.machine or 'another machine'}'s text, {c.day or '?'}: {c.copy}")
    lines += [f"tasks copy: {name} (merge its tasks with `vb tasks`)" for name in result.tasks]
    if result.copies:
        lines.append(
            "\nresolve one: vb conflicts keep mine|theirs NOTE, or vb conflicts keep --merge NOTE"
        )
    return "\n".join(lines)


@conflicts_app.callback()
def conflicts(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """The conflict copies no one resolved yet (with no subcommand)."""
    if ctx.invoked_subcommand is None:
        result = open_api().conflicts()
        emit(result, as_json, render_list(result))


@conflicts_app.command("list")
def list_(as_json: JsonOpt = False) -> None:
    """The conflict copies no one resolved yet: each note, whose text its copy holds, when."""
    result = open_api().conflicts()
    emit(result, as_json, render_list(result))


@conflicts_app.command()
def keep(
    args: Annotated[
        list[str],
        typer.Argument(
            help="mine NOTE (the text this machine wrote) or theirs NOTE (the other "
            "machine's), or NOTE with --merge. NOTE is the note or its copy, by id or path. "
            "The note keeps its id, counters, tags and aliases whichever text it takes.",
            show_default=False,
        ),
    ],
    merge: Annotated[
        bool,
        typer.Option(
            "--merge",
            help="Put both texts in the note, under a heading each, for you to edit into one.",
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Resolve one conflict copy: keep mine, keep theirs, or --merge both into the note.

    The copy is archived, and the resolution is committed."""
    if merge:
        if len(args) != 1:
            raise UsageError(
                "with --merge, name only the note", hint="vb conflicts keep --merge NOTE"
            )
        side, ref = "merge", args[0]
    elif len(args) != 2 or args[0] not in ("mine", "theirs"):
        raise UsageError(
            "say which text to keep, then the note",
            hint="vb conflicts keep mine NOTE | vb conflicts keep theirs NOTE | "
            "vb conflicts keep --merge NOTE",
        )
    else:
        side, ref = args
    result = open_api().keep_conflict(side, ref)
    what = {"mine": "kept this machine's text", "theirs": "kept the other machine's text"}.get(
        side, "both texts are in the note: edit it into one"
    )
    emit(
        result,
        as_json,
        f"{result.note}: {what}; {result.copy} archived to {result.archived}; git: {result.commit}",
    )
