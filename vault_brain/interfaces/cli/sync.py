"""vb sync (git's per-file merge driver, `vb merge-driver`, is `interfaces.git_merge`)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

import typer

from vault_brain.domain.clock import now_iso
from vault_brain.domain.errors import UsageError, VaultBrainError
from vault_brain.domain.text import plural
from vault_brain.interfaces.cli.app import app, open_api, report_error
from vault_brain.interfaces.cli.options import JsonOpt
from vault_brain.interfaces.cli.output import emit, json_line

if TYPE_CHECKING:
    from vault_brain.app.api import MemoryAPI
    from vault_brain.app.sync.remote import SyncResult

MAX_LISTED = 10  # notes named after "received N commits"


def render_sync(result: SyncResult) -> str:
    """What the sync did, one line per step, each true of this run."""
    lines = [*result.notices]
    lines.append(
        f"committed {result.committed[:12]}: {result.message}"
        if result.committed
        else "nothing to commit"
    )
    lines += [f"warning: {line}" for line in result.warnings]
    if result.resumed:
        lines.append("finished a sync that was interrupted")
    where = f"{result.remote}/{result.branch}"
    if result.remote is None:
        lines.append(
            "no remote: the commit stays on this machine; to share the vault, add one "
            "(git remote add origin URL) and run `vb sync` again"
        )
        return "\n".join(lines)
    if result.received:
        notes = result.received_notes
        changed = f": {len(notes)} {plural(len(notes), 'note')} changed" if notes else ""
        lines.append(f"received {_commits(result.received)} from {where}{changed}")
        lines += [f"  {rel}" for rel in notes[:MAX_LISTED]]
        if len(notes) > MAX_LISTED:
            lines.append(f"  ... and {len(notes) - MAX_LISTED} more")
    if result.merged:
        files = f"{result.merged_files} {plural(result.merged_files, 'file')}"
        lines.append(f"merged them: {files} merged by vb")
    lines += [f"conflict copy: {path} (see `vb conflicts`)" for path in result.conflict_copies]
    if result.pushed:
        after = result.attempts - 1
        retried = f" (after {after} rejected {plural(after, 'push')})" if after else ""
        lines.append(f"pushed {_commits(result.pushed_commits)} to {where}{retried}")
    elif result.push_pending:
        lines.append(f"push pending: {result.push_pending}")
    else:
        lines.append(f"nothing to push: {where} has every commit")
    return "\n".join(lines)


def _commits(n: int) -> str:
    return f"{n} {plural(n, 'commit')}"


def parse_every(text: str) -> float:
    """'30s', '5m', '1h' or plain seconds -> seconds (at least 1)."""
    units = {"s": 1, "m": 60, "h": 3600}
    raw = text.strip().lower()
    scale = units.get(raw[-1:], 0) if raw else 0
    try:
        seconds = float(raw[:-1] if scale else raw) * (scale or 1)
    except ValueError:
        seconds = -1.0
    if not seconds >= 1:  # (also refuses nan)
        raise UsageError(
            f"--every {text!r} is not an interval of at least one second",
            hint="give seconds or a number with s, m or h: --every 30s, --every 5m, --every 1h",
        )
    return seconds


@app.command()
def sync(
    remote: Annotated[
        str, typer.Option("--remote", help="The git remote to sync with.")
    ] = "origin",
    retry_for: Annotated[
        float,
        typer.Option(
            "--retry-for",
            metavar="SECONDS",
            min=0,
            help="How long to keep retrying when another machine pushed first (each retry "
            "fetches and merges again after a jittered pause). When it passes, the push waits "
            "for the next sync; nothing is lost.",
        ),
    ] = 60.0,
    every: Annotated[
        str | None,
        typer.Option(
            "--every",
            metavar="INTERVAL",
            help="Keep running and sync on this schedule (30s, 5m, 1h) until interrupted, "
            "each round about INTERVAL after the last one ended (jittered by up to a tenth, "
            "so agents started together spread out). A round that fails says why and the "
            "next one tries again. With --json, one JSON line per round.",
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Commit, fetch, merge and push the vault through its git remote.

    Says what it did: what it committed, the commits it received (and the notes they
    changed), conflict copies it wrote, and what it pushed. Without a remote it commits
    here and says how to add one."""
    quiet = as_json or not sys.stderr.isatty()

    def say(text: str) -> None:
        if not quiet:
            sys.stderr.write(f"vb: {text}\n")

    api = open_api()
    if every is None:
        result = api.sync(remote, say, retry_for)
        emit(result, as_json, render_sync(result))
        return
    _every(api, parse_every(every), lambda: api.sync(remote, say, retry_for), as_json)


def _every(api: MemoryAPI, interval: float, run: Callable[[], SyncResult], as_json: bool) -> None:
    """`vb sync --every`: a round, then a jittered pause, until interrupted (exit 0)."""
    import random
    import time

    in_round = False
    try:
        while True:
            in_round = True
            try:
                result = run()
            except VaultBrainError as exc:  # this round's; the next may succeed
                report_error(exc, as_json)
            else:
                if as_json:
                    json_line(result)
                else:
                    emit(result, False, f"[{now_iso()[:19]}] " + render_sync(result))
                sys.stdout.flush()
            in_round = False
            time.sleep(interval * random.uniform(0.9, 1.1))
    except KeyboardInterrupt:
        api.close()
        if not as_json:
            cut = " (in the middle of a round: the next `vb sync` finishes it)" if in_round else ""
            sys.stderr.write(f"vb: stopped syncing{cut}\n")
