"""vb sync (git's per-file merge driver, `vb merge-driver`, is `interfaces.git_merge`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from vault_brain.domain.text import plural
from vault_brain.interfaces.cli.app import app, open_api, state
from vault_brain.interfaces.cli.options import JsonOpt
from vault_brain.interfaces.cli.output import emit

if TYPE_CHECKING:
    from vault_brain.app.sync.clone import CloneResult
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
        lines.append(f"pushed {_commits(result.pushed_commits)} to {where}")
    elif result.push_pending:
        lines.append(f"push pending: {result.push_pending}")
    else:
        lines.append(f"nothing to push: {where} has every commit")
    return "\n".join(lines)


def _commits(n: int) -> str:
    return f"{n} {plural(n, 'commit')}"


@app.command()
def sync(
    remote: Annotated[
        str, typer.Option("--remote", help="The git remote to sync with.")
    ] = "origin",
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

    result = open_api().sync(remote, say)
    emit(result, as_json, render_sync(result))


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

    quiet = as_json or not sys.stderr.isatty()

    def say(text: str) -> None:
        if not quiet:
            sys.stderr.write(f"vb: {text}\n")

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
