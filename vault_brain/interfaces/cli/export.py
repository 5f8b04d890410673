"""vb export, vb graph: the vault's notes as one document, and Mermaid diagrams as notes."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from vault_brain.domain.text import counted
from vault_brain.interfaces.cli.app import app, open_api
from vault_brain.interfaces.cli.options import JsonOpt
from vault_brain.interfaces.cli.output import emit


@app.command()
def export(
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            "-f",
            help="json (a document with a version field and a list of notes) or markdown "
            "(one file with a heading per note, readable on its own).",
        ),
    ] = "json",
    history: Annotated[
        bool,
        typer.Option("--history", help="Add each note's changes from git (slower)."),
    ] = False,
    persona: Annotated[
        str | None,
        typer.Option(
            "--persona",
            help="Export this persona's notes (read from git, without switching). "
            "Default: the vault's files as they are now.",
            show_default=False,
        ),
    ] = None,
    for_agent: Annotated[
        bool,
        typer.Option(
            "--for-agent",
            help="Leave out private notes (private: true, or a path in private_paths), as "
            "every agent path does.",
        ),
    ] = False,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="Write the export to this file. Default: standard output.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Export the notes as JSON or Markdown, for reading or backup."""
    from vault_brain.storage.files import atomic_write  # lazy

    result = open_api().export(fmt, history, persona, for_agent)
    if output is None:
        sys.stdout.write(result.text)
        return
    atomic_write(output, result.text.encode("utf-8"))
    sys.stdout.write(f"exported {counted(result.notes, 'note')} to {output}\n")


@app.command()
def graph(
    kind: Annotated[
        str,
        typer.Option(
            "--kind",
            help="branches (personas and their commits), links (notes and their "
            "[[wikilinks]]) or timeline (memory activity per day).",
        ),
    ] = "branches",
    as_json: JsonOpt = False,
) -> None:
    """Write a Mermaid diagram of the vault into a note under graphs/."""
    result = open_api().graph(kind)
    emit(result, as_json, f"wrote {result.path} ({result.nodes} nodes)")
