"""vb import: another tool's memory files as vb notes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from vault_brain.domain.errors import UsageError
from vault_brain.interfaces.cli.app import app, open_api
from vault_brain.interfaces.cli.options import DryRun, JsonOpt
from vault_brain.interfaces.cli.output import emit, progress_bar

if TYPE_CHECKING:
    from vault_brain.app.knowledge.imports import ImportEntry, ImportResult

KINDS = ("openclaw", "claude-code", "basic-memory", "markdown")
MARKS = {"create": "+", "exists": "=", "refused": "!", "duplicate": "=", "skipped": "-"}


@app.command("import")
def import_command(
    kind: Annotated[
        str | None,
        typer.Argument(
            help=f"What the source is: {', '.join(KINDS)}. Leave it out to let vb tell by "
            "the source's files.",
            show_default=False,
            metavar="[KIND]",
        ),
    ] = None,
    source: Annotated[
        str | None,
        typer.Argument(
            help="The workspace, project or memory folder (or one Markdown file).",
            show_default=False,
            metavar="SOURCE",
        ),
    ] = None,
    dry_run: DryRun = False,
    as_json: JsonOpt = False,
) -> None:
    """Import another tool's memory files as notes.

    From OpenClaw, Claude Code, basic-memory, or a folder of Markdown. OpenClaw: MEMORY.md and
    the daily logs in memory/. Claude Code: CLAUDE.md, CLAUDE.local.md, MEMORY.md and its topic
    files. basic-memory: every note, with its title, tags, observations and relations. Markdown:
    every note of the folder. A fact (a bullet or paragraph of a memory file) becomes an entity
    note of its own, a daily log an episode of its day, and a note of basic-memory or of a
    folder stays one note. Every line passes the safety gate: what it refuses is left out and
    listed with the reason. Each note records where it came from (imported_from: file#Lline) and
    a key, so a second run imports nothing twice. The plan is printed first; --dry-run prints
    only it."""
    if source is None:
        kind, source = None, kind
    if source is None:
        raise UsageError(
            "name the folder to import", hint="vb import openclaw ~/.openclaw/workspace"
        )
    with progress_bar("importing", enabled=not as_json) as bar:
        result = open_api().import_memories(kind, source, dry_run, bar)
    emit(result, as_json, import_text(result))


def _entry(e: ImportEntry) -> list[str]:
    mark = MARKS.get(e.action, "?")
    if e.action == "create":
        lines = [f"  {mark} {e.type:7} {e.path}  <- {e.origin}  {e.title}"]
    elif e.action == "exists":
        lines = [f"  {mark} {e.origin}: already imported as {e.path}"]
    else:
        what = "refused" if e.action == "refused" else e.action
        lines = [f"  {mark} {e.origin}: {what}: {e.reason}"]
    lines += [f"      left out {line}" for line in e.kept_out]
    return lines


def import_text(r: ImportResult) -> str:
    why = f" ({r.detected})" if r.detected else ""
    head = (
        f"{'plan: would import' if r.dry_run else 'imported'} {r.kind} from {r.source}{why}: "
        f"{r.files} {'file' if r.files == 1 else 'files'}, {r.new} new, "
        f"{r.existing} already imported, {r.refused} refused by the gate"
    )
    lines = [head]
    for e in r.entries:
        if e.action != "exists":
            lines += _entry(e)
    if r.dry_run and r.new:
        lines.append("nothing written: run it again without --dry-run to import")
    return "\n".join(lines)
