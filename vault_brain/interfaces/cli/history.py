"""vb history, vb log: a memory's changes and the vault's operations, from git."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any

import typer

from vault_brain.domain.text import counted
from vault_brain.interfaces.cli.app import app, open_api
from vault_brain.interfaces.cli.options import JsonOpt
from vault_brain.interfaces.cli.output import emit, table

if TYPE_CHECKING:
    from vault_brain.app.sync.history import HistoryResult, LogEntry, LogResult


def _value(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:39] + "…"


def render_history(result: HistoryResult) -> str:
    lines = [f"{result.id}  ({result.path}): {counted(len(result.entries), 'change')}"]
    for e in result.entries:
        where = f"{e.renamed_from} -> {e.path}" if e.renamed_from else e.path
        body = f"+{e.lines_added} -{e.lines_removed} lines"
        operations = ", ".join(e.operations)
        lines.append(f"\n{e.when}  {e.commit[:10]}  {operations}  ({body}; {e.status} {where})")
        lines.append(f"    {e.subject}")
        lines += [f"    {detail}" for detail in e.details]
        for k in e.keys:
            if k.change == "changed":
                lines.append(f"    {k.key}: {_value(k.old)} -> {_value(k.new)}")
            else:
                lines.append(
                    f"    {k.key}: {k.change} {_value(k.new if k.new is not None else k.old)}"
                )
        if e.patch:
            lines += ["", *(f"    {line}" for line in e.patch.splitlines())]
    return "\n".join(lines)


def render_log(result: LogResult, oneline: bool) -> str:
    if oneline:
        return "\n".join(f"{e.commit[:10]} {e.subject}" for e in result.entries)
    rows = [
        (
            e.when,
            e.commit[:10],
            _operations(e),
            e.notes,
            e.subject,
        )
        for e in result.entries
    ]
    return table(["when", "commit", "operations", "notes", "message"], rows)


def _operations(e: LogEntry) -> str:
    parts = [f"{op} {n}" for op, n in sorted(e.operations.items())]
    if e.merge:
        parts.insert(0, "merge")
    if e.conflict_copies:
        n = len(e.conflict_copies)
        parts.append(f"{n} conflict {'copy' if n == 1 else 'copies'}")
    return ", ".join(parts) or "-"


@app.command()
def history(
    ref: Annotated[str, typer.Argument(help="Note id or vault-relative path.", show_default=False)],
    patch: Annotated[
        bool,
        typer.Option("--patch", help="Show the text of each change (a unified diff of the note)."),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Every change to one memory, from git, newest first.

    Follows the note across renames and archiving, on every side of a merge (the same
    history on every machine after `vb sync`). Each change shows when, the commit, every
    operation in it (feedback, flush, promote, consolidate, prune, merge, conflict copy,
    archive, restore, retrieval, vb edit, hand edit, ...), the front matter keys that
    changed and the body lines added and removed; a merge, whose text it kept and whose
    it replaced, and the conflict copy it wrote. `--patch` adds the text of each change."""
    result = open_api().history(ref, patch)
    emit(result, as_json, render_history(result))


@app.command("log")
def log_(
    oneline: Annotated[
        bool, typer.Option("--oneline", help="One line per commit: its id and message.")
    ] = False,
    limit: Annotated[
        int | None,
        typer.Option(
            "--limit",
            "-k",
            min=1,
            help="Show at most this many commits (-n is --name everywhere in vb).",
            show_default=False,
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """The vault's commits and memory operations, newest first.

    Each commit with the operations vb's logs recorded in it (feedback, flush, prune, ...)
    and how many notes it changed; a merge brought changes from another machine, and names
    the conflict copies it wrote (counted here, listed in `--json`)."""
    result = open_api().log(limit)
    emit(result, as_json, render_log(result, oneline))
