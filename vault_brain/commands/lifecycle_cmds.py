"""vb memory-file (and the lifecycle commands)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

from vault_brain.cli import JsonOpt, app, emit, open_vault

if TYPE_CHECKING:
    from collections.abc import Callable

    from vault_brain.core import Vault
    from vault_brain.lifecycle.plan import Plan


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


DryRun = Annotated[
    bool,
    typer.Option("--dry-run", help="Print the plan (what moves where and why); change nothing."),
]


def _run(
    operation: str, dry_run: bool, as_json: bool, planner: Callable[[Vault], Plan] | None = None
) -> None:
    """Print the plan (dry run) or apply it exactly as planned."""
    from vault_brain.lifecycle.operations import make_plan
    from vault_brain.lifecycle.plan import apply_plan

    vault = open_vault()
    plan = planner(vault) if planner else make_plan(vault, operation)
    if dry_run:
        emit({"dry_run": True, **plan.to_json()}, as_json, "[dry run] " + plan.render())
        return
    result = apply_plan(vault, plan)
    human = plan.render() + f"\napplied (run {result.run_id})"
    emit({"dry_run": False, **result.to_json()}, as_json, human)


@app.command()
def consolidate(dry_run: DryRun = False, as_json: JsonOpt = False) -> None:
    """Merge same-day episodes with overlapping tags into one; originals go to archive/."""
    _run("consolidate", dry_run, as_json)


@app.command()
def promote(dry_run: DryRun = False, as_json: JsonOpt = False) -> None:
    """Feed entity-like facts from high-credit episodes into entity notes (with links back)."""
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
    """Archive low-credit notes older than prune_min_age_days (never pinned or people)."""
    from vault_brain.lifecycle.operations import plan_prune

    def by_age(vault: Vault) -> Plan:
        return plan_prune(vault, older_than_days=older_than_days, type_=type_)

    _run("prune", dry_run, as_json, by_age if older_than_days is not None else None)


@app.command()
def maintain(dry_run: DryRun = False, as_json: JsonOpt = False) -> None:
    """Run whatever lifecycle step is due, from the last run times in logs/lifecycle.jsonl."""
    from vault_brain.lifecycle.operations import maintain as run_maintain

    result = run_maintain(open_vault(), dry_run=dry_run)
    lines = []
    for op, state in result["due"].items():
        status = "due" if state["due"] else ("disabled" if not state["enabled"] else "not due")
        lines.append(
            f"{op}: {status} (last run {state['last_run'] or 'never'}, "
            f"every {state['interval_hours']:g}h)"
        )
    for run in result["runs"]:
        lines.append(
            f"  {run['operation']}: {len(run['actions'])} action(s)"
            + (" [dry run]" if run.get("dry_run") else "")
        )
    emit(result, as_json, "\n".join(lines))


@app.command()
def strategy(as_json: JsonOpt = False) -> None:
    """Print the effective memory policy and where each value came from."""
    from vault_brain.policy import SETTINGS
    from vault_brain.render import table

    policy = open_vault().policy
    rows = [
        {
            "key": k,
            "value": policy[k],
            "source": policy.sources[k],
            "group": s.group,
            "help": s.help,
        }
        for k, s in SETTINGS.items()
    ]
    human = table(
        ["key", "value", "source", "meaning"],
        [[r["key"], r["value"], r["source"], r["help"]] for r in rows],
        max_width=70,
    )
    if policy.unknown:
        human += f"\nunknown keys in STRATEGY.md (ignored): {', '.join(policy.unknown)}"
    emit({"settings": rows, "unknown": list(policy.unknown)}, as_json, human)
