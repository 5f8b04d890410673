"""vb memory-file | consolidate | promote | prune | doctor | maintain | strategy."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from vault_brain.domain.policy.plan import Plan
from vault_brain.domain.text import counted
from vault_brain.interfaces.cli.app import app, open_api
from vault_brain.interfaces.cli.options import DryRun, JsonOpt
from vault_brain.interfaces.cli.output import emit, table


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
    """Regenerate MEMORY.md: the best memories under the token budget."""
    result = open_api().memory_file(budget, write=not stdout)
    if stdout and not as_json:
        sys.stdout.write(result.text)
        return
    human = (
        f"{'wrote' if result.written else 'unchanged'} MEMORY.md: "
        f"{counted(len(result.included), 'memory')}, "
        f"{result.tokens}/{result.budget} tokens ({result.token_counter}), "
        f"{result.omitted} left out"
    )
    emit(result, as_json, human)


def _run(
    operation: str, dry_run: bool, as_json: bool, older: float | None = None, type_: str = ""
) -> None:
    """Print the plan (dry run) or apply it exactly as planned."""
    api = open_api()
    plan = api.plan(operation, older, type_ or "episode")
    result = api.run(plan, dry_run)
    human = ("[dry run] " if dry_run else "") + plan.render()
    if not dry_run:
        human += f"\napplied (run {result.run_id})"
    emit(result, as_json, human)


@app.command()
def consolidate(dry_run: DryRun = False, as_json: JsonOpt = False) -> None:
    """Merge same-day episodes that share tags into one episode."""
    _run("consolidate", dry_run, as_json)


@app.command()
def promote(dry_run: DryRun = False, as_json: JsonOpt = False) -> None:
    """Feed facts of high-credit episodes into entity notes."""
    _run("promote", dry_run, as_json)


@app.command()
def prune(
    dry_run: DryRun = False,
    older_than_days: Annotated[
        float | None,
        typer.Option(
            "--older-than-days",
            min=0,
            help="Retention by age instead of credit: archive "
            "notes of --type older than this many days.",
        ),
    ] = None,
    type_: Annotated[
        str,
        typer.Option("--type", "-t", help="Type for --older-than-days (entity, episode, note)."),
    ] = "episode",
    as_json: JsonOpt = False,
) -> None:
    """Archive old low-credit notes (never pinned or people notes).

    By credit: notes below prune_threshold and older than prune_min_age_days. With
    --older-than-days: notes of --type older than that, whatever their credit."""
    _run("prune", dry_run, as_json, older_than_days, type_)


@app.command()
def doctor(
    fix: Annotated[
        bool, typer.Option("--fix", help="Apply the plan (archive, lower credit).")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Repair notes vb manufactured and credit no outcome earned.

    Episodes with no decisions, facts or open questions and entity notes that are only
    links are archived (never deleted; `vb restore` brings them back); credit above what
    outcomes gave a note vb made is lowered to that (only its credit line changes). Notes a
    person wrote and pinned notes are never touched. Without --fix, only the plan is shown;
    with it, MEMORY.md is regenerated after."""
    result = open_api().doctor(fix=fix)
    head = "vault is healthy: nothing to repair" if not result.actions else ""
    plan = Plan(result.operation, list(result.actions), list(result.notes), result.method)
    human = head or plan.render()
    if result.actions:
        human = ("applied: " if fix else "[plan: run `vb doctor --fix` to apply] ") + human
    elif result.notes:
        human += "\n" + "\n".join(f"  - {n}" for n in result.notes)
    emit(result, as_json, human)


@app.command()
def maintain(dry_run: DryRun = False, as_json: JsonOpt = False) -> None:
    """Run whichever lifecycle steps are due."""
    result = open_api().maintain(dry_run=dry_run)
    lines = []
    for op, state in result.due.items():
        status = "due" if state.due else ("disabled" if not state.enabled else "not due")
        lines.append(
            f"{op}: {status} (last run {state.last_run or 'never'}, "
            f"every {state.interval_hours:g}h)"
        )
    for run in result.runs:
        lines.append(
            f"  {run.operation}: {len(run.actions)} action(s)" + (" [dry run]" if dry_run else "")
        )
    emit(result, as_json, "\n".join(lines))


@app.command()
def strategy(as_json: JsonOpt = False) -> None:
    """Show the effective policy and where each value came from."""
    result = open_api().strategy()
    human = table(
        ["key", "value", "source", "meaning"],
        [[r.key, r.value, r.source, r.help] for r in result.settings],
        max_width=70,
    )
    if result.unknown:
        human += f"\nunknown keys in STRATEGY.md (ignored): {', '.join(result.unknown)}"
    emit(result, as_json, human)
