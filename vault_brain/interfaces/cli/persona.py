"""vb persona list | create | switch | merge | cherry-pick: personas as git branches."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from vault_brain.domain.text import counted
from vault_brain.interfaces.cli.app import app, open_api
from vault_brain.interfaces.cli.options import JsonOpt
from vault_brain.interfaces.cli.output import emit, table

if TYPE_CHECKING:
    from vault_brain.app.sync.persona import PersonaResult

persona_app = typer.Typer(
    help=(
        "Personas: git branches of the vault, each with its own memories.\n\n"
        "Switching commits pending changes first (the commit's message says so) and the "
        "index follows the switch. Merge and cherry-pick resolve vb's files as `vb sync` "
        "does: counters added, log records merged once each, tasks by id, and a conflict "
        "copy beside a note both sides changed on the same lines (never conflict markers)."
    ),
    no_args_is_help=True,
)
app.add_typer(persona_app, name="persona")

NameArg = Annotated[str, typer.Argument(help="The persona (a branch name), e.g. work-assistant.")]


def render(result: PersonaResult) -> str:
    if result.action == "list":
        rows = [
            ("*" if p.current else "", p.name, p.commit[:10], p.when[:10], p.subject)
            for p in result.personas
        ]
        return table(["", "persona", "commit", "date", "last change"], rows)
    lines = [*result.notices, result.message]
    if result.merged_files:
        lines.append(f"{counted(result.merged_files, 'file')} merged by vb")
    lines += [f"conflict copy: {path}" for path in result.conflict_copies]
    if result.action == "create":
        lines.append(f"switch to it: vb persona switch {result.persona}")
    return "\n".join(lines)


def _run(action: str, name: str | None, as_json: bool, start: str | None = None) -> None:
    result = open_api().persona(action, name, start)
    emit(result, as_json, render(result))


@persona_app.command("list")
def list_(as_json: JsonOpt = False) -> None:
    """The personas, the current one marked with *."""
    _run("list", None, as_json)


@persona_app.command()
def create(
    name: NameArg,
    start: Annotated[
        str | None,
        typer.Option(
            "--from",
            help="The persona (branch) or commit it starts from. Default: the current one.",
            show_default=False,
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Create a persona (it is not switched to)."""
    _run("create", name, as_json, start)


@persona_app.command()
def switch(name: NameArg, as_json: JsonOpt = False) -> None:
    """Switch to a persona; pending changes are committed first."""
    _run("switch", name, as_json)


@persona_app.command()
def merge(
    name: NameArg,
    undo: Annotated[
        bool,
        typer.Option(
            "--undo",
            help="Undo the last merge of this persona instead: a new commit reverts its merge "
            "commit (history is kept; counters lose what the merge added). Merging the "
            "persona again later brings nothing back: git counts it as merged.",
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Merge a persona's memories into the current one (--undo reverts the last merge)."""
    _run("undo-merge" if undo else "merge", name, as_json)


@persona_app.command("cherry-pick")
def cherry_pick(
    commit: Annotated[
        str, typer.Argument(help="The commit to apply (an id from `vb log`, or a git ref).")
    ],
    as_json: JsonOpt = False,
) -> None:
    """Apply one commit of another persona to the current one."""
    _run("cherry-pick", commit, as_json)
