"""vb init | status | watch."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from vault_brain.cli import OPTIONS, JsonOpt, app, emit, open_vault


@app.command()
def init(
    path: Annotated[
        Path | None,
        typer.Argument(
            help="Folder for the vault (default: --vault, else here).", show_default=False
        ),
    ] = None,
    adopt: Annotated[
        bool,
        typer.Option(
            "--adopt",
            help="Add vb's files to an existing (Obsidian) vault; no existing file is changed.",
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Create a vault from the template (entities, episodes, STRATEGY.md, ...) as a git repo."""
    from vault_brain.vault.init import init_vault

    target = path or Path(OPTIONS.vault or ".")
    result = init_vault(target, adopt=adopt)
    human = (
        f"{'adopted' if adopt else 'created'} vault at {result.root}: "
        f"{len(result.created)} files added, {len(result.kept)} existing kept; git: {result.git}"
    )
    emit(
        {
            "vault": str(result.root),
            "created": result.created,
            "kept": result.kept,
            "git": result.git,
        },
        as_json,
        human,
    )


@app.command()
def status(as_json: JsonOpt = False) -> None:
    """Notes by type and category, index freshness, problems, watcher and token counter."""
    from vault_brain.status import render_status, vault_status

    report = vault_status(open_vault())
    emit(report, as_json, render_status(report))


@app.command()
def watch(
    debounce: Annotated[
        float, typer.Option("--debounce", min=0.0, help="Seconds of quiet before re-indexing.")
    ] = 0.2,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print nothing per batch.")] = False,
) -> None:
    """Keep the index current while files change (Ctrl-C to stop)."""
    import sys

    from vault_brain.index.watch import run_watch

    vault = open_vault()

    def report(result: object) -> None:
        if not quiet:
            changed = result.added + result.updated + result.removed  # type: ignore[attr-defined]
            sys.stderr.write(f"indexed {len(changed)}: {', '.join(changed[:5])}\n")

    sys.stderr.write(f"watching {vault.paths.root} (Ctrl-C to stop)\n")
    run_watch(vault, debounce=debounce, on_batch=report)
