"""vb memory-file (and the lifecycle commands)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from vault_brain.cli import JsonOpt, app, emit, open_vault


@app.command("memory-file")
def memory_file(
    budget: Annotated[
        int | None,
        typer.Option("--budget", min=0, help="Token budget (default: max_context_budget)."),
    ] = None,
    stdout: Annotated[
        bool, typer.Option("--stdout", help="Print the text instead of writing MEMORY.md.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Regenerate MEMORY.md: the best memories under the token budget, pinned first."""
    from vault_brain.lifecycle.memory_file import build_memory_file, write_memory_file

    vault = open_vault()
    if stdout:
        result = build_memory_file(vault, budget)
        sys.stdout.write(result.text)
        return
    result = write_memory_file(vault, budget)
    human = (
        f"{'wrote' if result.written else 'unchanged'} MEMORY.md: {len(result.included)} memories, "
        f"{result.tokens}/{result.budget} tokens ({result.counter}), {result.omitted} left out"
    )
    emit(result.to_json(), as_json, human)
