"""vb init | status | watch."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from vault_brain.domain.text import counted
from vault_brain.interfaces.cli.app import app, open_api, state
from vault_brain.interfaces.cli.options import JsonOpt
from vault_brain.interfaces.cli.output import emit

if TYPE_CHECKING:
    from vault_brain.app.status import StatusReport
    from vault_brain.app.sync.remote import SyncState
    from vault_brain.storage.index.scan import ReconcileResult


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
    """Create a vault from the template, as its own git repository."""
    from vault_brain.app.api import create_vault  # lazy: keeps `vb --help` light

    result = create_vault(path or Path(state().vault or "."), adopt=adopt)
    human = (
        f"{'adopted' if adopt else 'created'} vault at {result.vault}: "
        f"{counted(len(result.created), 'file')} added, {len(result.kept)} existing kept; "
        f"git: {result.git}"
    )
    if result.counters:  # (said, never asked: `vb init --adopt` runs in scripts too)
        human += f"\ncounters: {result.counters}"
    emit(result, as_json, human)


def render_status(report: StatusReport) -> str:
    notes, index, watcher = report.notes, report.index, report.watcher
    kinds = ", ".join(f"{k} {v}" for k, v in notes.by_type.items())
    lines = [f"vault:   {report.vault}"]
    if index.exists:
        lines.append(f"notes:   {notes.total} ({kinds or 'none'}), {notes.archived} archived")
    else:  # (types come from the index: before it, what is on disk)
        lines.append(f"notes:   {index.on_disk} on disk (by type once indexed)")
    lines += [f"         {key}: {count}" for key, count in notes.by_category.items()]
    if not index.exists:
        lines.append("index:   not built yet (any search builds it; or run `vb index`)")
    else:
        fresh = (
            "fresh" if index.fresh else f"{index.stale_count} stale (the next command reconciles)"
        )
        on_disk = counted(index.on_disk, "note")
        lines.append(f"index:   {index.indexed} indexed, {on_disk} on disk, {fresh}")
        lines += [f"         stale: {path}" for path in index.stale[:10]]
    if Path(index.location) != Path(report.vault) / ".vb":
        lines.append(f"         kept in {index.location} (vb cannot write this vault)")
    if watcher.get("alive"):
        lines.append(
            f"watcher: running (pid {watcher.get('pid')}, {watcher.get('batches', 0)} batches)"
        )
    else:
        lines.append(
            "watcher: not running (`vb watch` keeps the index live; searches reconcile anyway)"
        )
    warm = watcher.get("warm") or {}
    last = (
        f"; the last search was answered {warm['last_search']}" if warm.get("last_search") else ""
    )
    lines.append(
        f"search:  warm: vb watch answers on {warm.get('socket')} "
        f"({warm.get('searches', 0)} searches answered so far{last})"
        if warm.get("alive")
        else f"search:  in-process (no warm server: `vb watch` answers searches faster{last})"
    )
    lines.append(f"tokens:  {report.token_counter['name']}")
    lines.append("events:  " + ", ".join(f"{k} {v}" for k, v in report.events.items()))
    if report.refused:
        lines.append("refused: " + ", ".join(f"{k} {v}" for k, v in report.refused.items()))
    for p in report.projects:
        stale = f", {p.stale_count} stale: {', '.join(p.stale[:5])}" if p.stale_count else ""
        where = f" from {p.root}" if p.root else ""
        lines.append(f"items:   {p.project}: {p.items} in {p.items_file}{where}{stale}")
    if report.problems:
        lines.append(f"problems: {len(report.problems)}")
        lines += [f"         {p.path}: {p.problem}" for p in report.problems]
    if report.policy_warning:
        lines.append(f"policy:  {report.policy_warning}")
    lines += [f"trust:   {line}" for line in report.trust]
    if report.sync is not None:
        lines += render_sync_state(report.sync)
    if report.left_out is not None:
        out = report.left_out
        lines.append(
            f"checkout: sparse (vb clone): {counted(out.notes, 'note')} and "
            f"{counted(out.transcripts, 'transcript')} left out (`vb fetch-old "
            "archive|sessions|PATH` checks them out)"
        )
    return "\n".join(lines)


def render_sync_state(sync: SyncState) -> list[str]:
    """The sync block of `vb status`."""
    if sync.remote is None:
        add = "share the vault with git remote add origin URL, then `vb sync`"
        lines = [f"sync:    no remote: `vb sync` commits here; {add}"]
    else:
        where = f"{sync.remote}/{sync.branch}" if sync.branch else sync.remote
        if sync.ahead is None:
            state = "never fetched (`vb sync` fetches)"
        else:
            state = f"{sync.ahead} ahead, {sync.behind} behind as of the last fetch"
        lines = [f"sync:    {where}: {state}"]
        lines.append(f"         last sync: {sync.last_sync or 'never'}")
        if sync.push_pending:
            lines.append(f"         push pending: {sync.push_pending}")
    if sync.conflict_copies:
        lines.append(
            f"         conflict copies: {len(sync.conflict_copies)} (`vb conflicts` resolves them)"
        )
        lines += [f"           {path}" for path in sync.conflict_copies[:10]]
    if sync.drivers:
        lines.append(f"         repaired: {sync.drivers}")
    return lines


@app.command()
def status(as_json: JsonOpt = False) -> None:
    """Notes by type and category, index freshness, problems, watcher."""
    report = open_api().status()
    emit(report, as_json, render_status(report))


@app.command()
def watch(
    debounce: Annotated[
        float,
        typer.Option(
            "--debounce",
            min=0.0,
            help="Seconds of quiet before re-indexing (an editor's save is one burst of "
            "events well within it; a larger value batches long copies and checkouts).",
        ),
    ] = 0.1,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print nothing per batch.")] = False,
) -> None:
    """Keep the index current while files change (Ctrl-C to stop).

    Meanwhile `vb search` asks it first, on .vb/search.sock: the same answers, without
    loading the index in each command."""
    api = open_api()

    def report(result: ReconcileResult) -> None:
        if not quiet:
            changed = result.added + result.updated + result.removed
            sys.stderr.write(f"indexed {len(changed)}: {', '.join(changed[:5])}\n")

    sys.stderr.write(f"watching {api.vault.root} (Ctrl-C to stop)\n")
    from vault_brain.app.runtime.watch import run_watch  # lazy: start-up (watchdog)

    run_watch(api.vault, debounce=debounce, on_batch=report)
