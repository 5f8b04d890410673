"""vb extract | items list | items show."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from vault_brain.domain.text import counted
from vault_brain.interfaces.cli.app import app, open_api
from vault_brain.interfaces.cli.options import DryRun, JsonOpt
from vault_brain.interfaces.cli.output import emit, table
from vault_brain.interfaces.cli.progress import progress_bar

if TYPE_CHECKING:
    from vault_brain.app.knowledge.extract import ExtractResult

ProjectOpt = Annotated[
    str | None,
    typer.Option(
        "--project",
        help="Project name (letters, digits, '-'); default: the name of the folder given.",
        show_default=False,
    ),
]


@app.command()
def extract(
    paths: Annotated[
        list[str] | None,
        typer.Argument(
            help="The project's folders or files (Markdown and text; hidden, dependency and "
            "build folders skipped). None: every path extracted before into --project.",
            show_default=False,
        ),
    ] = None,
    project: ProjectOpt = None,
    dry_run: DryRun = False,
    as_json: JsonOpt = False,
) -> None:
    """Extract knowledge cited to the line from a project's files.

    Decisions, claims, tasks, entities and notes go to the project's items.json. Only files
    that changed since the last extraction are read again; their items replace their old
    ones (unchanged text keeps its id) and the items of deleted files expire into the
    archive. Every item passes the safety gate. With a model configured (VB_LLM_*), the
    model extracts more beside the offline rules."""
    with progress_bar("extracting", enabled=not as_json) as bar:
        result = open_api().extract(list(paths or []), project, dry_run, bar)
    emit(result, as_json, _extract_text(result))


def _extract_text(r: ExtractResult) -> str:
    counts: dict[str, int] = {}
    for change in r.changes:
        counts[change.action] = counts.get(change.action, 0) + 1
    done = ", ".join(f"{n} {action}" for action, n in counts.items()) or "no change"
    lines = [
        f"{'would extract' if r.dry_run else 'extracted'} {r.project}: {counted(r.files, 'file')} "
        f"({len(r.changed)} read, {len(r.gone)} gone), {counted(r.items, 'item')} ({done}) "
        f"-> {r.items_file} [{r.extractor}, {r.seconds:.2f}s]"
    ]
    if r.refused:
        kept_out = ", ".join(f"{n} {reason}" for reason, n in sorted(r.refused.items()))
        lines.append(f"kept out by the gate: {kept_out}")
    lines += [f"skipped {s}" for s in r.skipped]
    if r.dry_run:
        lines += [
            f"  {c.action:8} {c.type:8} {c.sourceFile}:{c.lineNumber}  {c.title}" for c in r.changes
        ]
    return "\n".join(lines)


items_app = typer.Typer(
    help=(
        "Items extracted from project files by vb extract.\n\nRead-only: only extraction "
        "writes them. Types: decision, claim, task, entity, note. Each cites its "
        "sourceFile (relative to the project's folder) and lineNumber."
    ),
    no_args_is_help=True,
)
app.add_typer(items_app, name="items")


def _items_table(items: list[dict[str, Any]]) -> str:
    if not items:
        return "no items"
    return table(
        ["id", "type", "where", "title"],
        [
            [i["id"], i["type"], f"{i['project']}:{i['sourceFile']}:{i['lineNumber']}", i["title"]]
            for i in items
        ],
    )


@items_app.command("list")
def items_list(
    project: ProjectOpt = None,
    type_: Annotated[
        str | None,
        typer.Option(
            "--type", "-t", help="Only decision, claim, task, entity or note.", show_default=False
        ),
    ] = None,
    source: Annotated[
        str | None,
        typer.Option(
            "--source",
            help="Only items from this file or folder (relative to the project's folder).",
            show_default=False,
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """List extracted items, by project, file and line."""
    from vault_brain.domain.knowledge.rules import TYPES
    from vault_brain.domain.text import check_choice

    if type_ is not None:
        type_ = check_choice(type_, TYPES, "item type")
    result = open_api().items(project, type_, source)
    emit(result, as_json, _items_table(result.items))


@items_app.command("show")
def items_show(
    item_id: Annotated[str, typer.Argument(help="Item id, e.g. item_3f2a9c1d0b7e4a5c.")],
    as_json: JsonOpt = False,
) -> None:
    """One item in full: its text and where it was found."""
    result = open_api().item(item_id)
    human = "\n\n".join(
        f"{i['id']} ({i['type']}, confidence {i['confidence']})\n{i['title']}\n"
        f"{i['project']}:{i['sourceFile']}:{i['lineNumber']}"
        + (f"  [{i['section']}]" if i.get("section") else "")
        + f"\n\n{i['content']}"
        for i in result.items
    )
    emit(result, as_json, human)
