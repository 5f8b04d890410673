"""vb sync (git's per-file merge driver, `vb merge-driver`, is `interfaces.git_merge`)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

from vault_brain.domain.text import plural
from vault_brain.interfaces.cli.app import app, open_api
from vault_brain.interfaces.cli.options import JsonOpt
from vault_brain.interfaces.cli.output import emit

if TYPE_CHECKING:
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
