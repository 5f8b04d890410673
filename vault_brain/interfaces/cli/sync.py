"""vb sync (git's per-file merge driver, `vb merge-driver`, is `interfaces.git_merge`)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

from vault_brain.interfaces.cli.app import app, open_api
from vault_brain.interfaces.cli.options import JsonOpt
from vault_brain.interfaces.cli.output import emit

if TYPE_CHECKING:
    from vault_brain.app.sync.remote import SyncResult


def render_sync(result: SyncResult) -> str:
    lines = [
        f"committed {result.committed[:12]}: {result.message}"
        if result.committed
        else "nothing to commit"
    ]
    lines[:0] = result.notices
    lines += [f"warning: {line}" for line in result.warnings]
    if result.resumed:
        lines.append("finished a sync that was interrupted")
    if result.merged:
        lines.append(
            f"merged {result.remote}/{result.branch}: {result.merged_files} files merged by vb"
        )
    lines += [f"conflict copy: {path}" for path in result.conflict_copies]
    if result.pushed:
        lines.append(f"pushed to {result.remote}/{result.branch}")
    if result.push_pending:
        lines.append(f"push pending: {result.push_pending}")
    return "\n".join(lines)


@app.command()
def sync(
    remote: Annotated[
        str, typer.Option("--remote", help="The git remote to sync with.")
    ] = "origin",
    as_json: JsonOpt = False,
) -> None:
    """Commit, fetch, merge and push the vault through its git remote."""
    quiet = as_json or not sys.stderr.isatty()

    def say(text: str) -> None:
        if not quiet:
            sys.stderr.write(f"vb: {text}\n")

    result = open_api().sync(remote, say)
    emit(result, as_json, render_sync(result))
