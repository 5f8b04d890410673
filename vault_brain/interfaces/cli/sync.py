"""vb sync (git's per-file merge driver, `vb merge-driver`, is `interfaces.git_merge`)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from vault_brain.domain.clock import now_iso
from vault_brain.domain.errors import UsageError, VaultBrainError
from vault_brain.domain.text import plural
from vault_brain.interfaces.cli.app import app, open_api, report_error, state
from vault_brain.interfaces.cli.options import JsonOpt
from vault_brain.interfaces.cli.output import emit, json_line
from vault_brain.interfaces.cli.progress import on_terminal

if TYPE_CHECKING:
    from vault_brain.app.api import MemoryAPI
    from vault_brain.app.sync.clone import CloneResult
    from vault_brain.app.sync.remote import SyncResult

MAX_LISTED = 10  # notes named after "received N commits"


def _teller(as_json: bool) -> Callable[[str], None]:
    """What a long command says it is doing: a `vb: ...` line on a terminal, nothing when
    piped or with --json."""
    shown = on_terminal(as_json)

    def say(text: str) -> None:
        if shown:
            sys.stderr.write(f"vb: {text}\n")

    return say


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
    say = _teller(as_json)
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


def render_clone(result: CloneResult) -> str:
    transcripts = f"{result.transcripts} {plural(result.transcripts, 'transcript')}"
    lines = [
        f"cloned {result.remote} ({result.branch} at {result.commit[:12]}) into {result.path}",
        f"checked out {result.notes} {plural(result.notes, 'note')} and {transcripts} "
        f"of the last {result.recent_days} days; left out {result.notes_left_out} archived "
        f"{plural(result.notes_left_out, 'note')} and {result.transcripts_left_out} older "
        f"{plural(result.transcripts_left_out, 'transcript')} (`vb fetch-old archive|sessions`)",
        f"fetched {result.bytes_fetched / 1e6:.1f} MB; indexed {result.indexed} "
        f"{plural(result.indexed, 'note')}; {result.seconds:.1f}s",
    ]
    return "\n".join(lines)


@app.command()
def clone(
    url: Annotated[str, typer.Argument(help="The vault's git remote (URL or local folder).")],
    folder: Annotated[
        Path, typer.Argument(metavar="DIR", help="A new or empty folder for the vault.")
    ],
    recent: Annotated[
        int,
        typer.Option(
            "--recent",
            min=0,
            metavar="DAYS",
            help="Check out the transcripts committed (or, sharded by day, dated) in the "
            "last DAYS days.",
        ),
    ] = 30,
    as_json: JsonOpt = False,
) -> None:
    """Join a big vault fast: its notes and recent transcripts.

    git fetches commits and trees, then the blobs of what is checked out: every note but
    archive/, MEMORY.md, STRATEGY.md, tasks.json, policy/, logs/ and the recent transcripts.
    What is left out stays in git's tree (a commit never deletes it) and `vb fetch-old`
    brings it. The vault is then set up as `vb sync` sets one up (what a sync refuses from
    a remote, the clone refuses too) and indexed; `vb sync` works in it as anywhere."""
    from vault_brain.app.sync.clone import clone_vault  # lazy: start-up
    from vault_brain.interfaces.cli.progress import progress_bar

    say = _teller(as_json)
    with progress_bar("indexing", enabled=not as_json) as bar:
        result = clone_vault(url, folder, recent, state().env, say, bar)
    emit(result, as_json, render_clone(result))


@app.command(name="fetch-old")
def fetch_old(
    what: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="[archive|sessions|PATH]...",
            help="What to check out: archive, sessions, or a folder or file of the vault.",
            show_default=False,
        ),
    ] = None,
    everything: Annotated[
        bool, typer.Option("--all", help="Check everything out (a full checkout).")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Check out and index what `vb clone` left out."""
    from vault_brain.interfaces.cli.progress import progress_bar

    with progress_bar("indexing", enabled=not as_json) as bar:
        result = open_api().fetch_old(list(what or []), everything, bar)
    human = (
        f"checked out {result.files} more {plural(result.files, 'file')} "
        f"({', '.join(result.added)}); fetched {result.bytes_fetched / 1e6:.1f} MB; "
        f"indexed {result.indexed} {plural(result.indexed, 'note')}; still left out: "
        f"{result.notes_left_out} {plural(result.notes_left_out, 'note')}, "
        f"{result.transcripts_left_out} {plural(result.transcripts_left_out, 'transcript')}"
    )
    emit(result, as_json, human)
