"""vb tasks list | add | update | done | block."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from vault_brain.domain.errors import VaultBrainError
from vault_brain.interfaces.cli.app import app, open_api
from vault_brain.interfaces.cli.options import JsonOpt
from vault_brain.interfaces.cli.output import emit, table

if TYPE_CHECKING:
    from vault_brain.app.sessions.tasks import Task, TaskChange

tasks_app = typer.Typer(
    help=(
        "Task memory: the vault's tasks.json.\n\n"
        "Ids are t1, t2, ... (never reused). "
        "Status: todo, in_progress, blocked, done; done records when, reopening clears it. "
        "Priority: p0 (drop everything), p1 (high), p2 (normal, default), p3 (low). "
        "A task waits on the tasks in its blocked_by list (no unknown ids, no cycles); "
        "it is ready when it is todo or in_progress and all of them are done. "
        "Keys vb does not know are kept as they are."
    ),
    no_args_is_help=True,
)
app.add_typer(tasks_app, name="tasks")

PriorityOpt = Annotated[
    str | None,
    typer.Option(
        "--priority",
        "-p",
        help="p0 (drop everything), p1 (high), p2 (normal), p3 (low).",
        show_default=False,
    ),
]
MilestoneOpt = Annotated[
    str | None, typer.Option("--milestone", "-m", help="Milestone name.", show_default=False)
]
CriterionOpt = Annotated[
    list[str] | None,
    typer.Option("--criterion", help="An acceptance criterion (repeat for more)."),
]
IdArg = Annotated[str, typer.Argument(help="Task id, e.g. t3.")]


def _ids(values: list[str] | None) -> list[str]:
    """Ids given repeatedly or comma-separated."""
    return [part.strip() for value in values or [] for part in value.split(",") if part.strip()]


def _status_line(t: Task) -> str:
    waits = f", waits on {', '.join(t.open_blockers)}" if t.open_blockers else ""
    ready = ", ready" if t.ready else ""
    return f"{t.id} ({t.priority}, {t.status}{ready}{waits}): {t.description}"


def _moves(change: TaskChange) -> list[str]:
    lines = []
    if change.unblocked:
        lines.append(f"unblocked (now todo): {', '.join(change.unblocked)}")
    if change.reblocked:
        lines.append(f"blocked again (wait on {change.task.id}): {', '.join(change.reblocked)}")
    return lines


@tasks_app.command("list")
def list_(
    status: Annotated[
        str | None,
        typer.Option("--status", help="Only this status: todo, in_progress, blocked, done."),
    ] = None,
    milestone: MilestoneOpt = None,
    ready: Annotated[
        bool, typer.Option("--ready", help="Only tasks ready to start (no open blockers).")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Tasks by priority (p0 first) then id, with which are ready to start."""
    result = open_api().tasks(status, milestone, ready)
    rows = [
        [
            t.id,
            t.priority,
            t.status,
            "yes" if t.ready else "",
            t.milestone or "",
            ", ".join(t.open_blockers),
            t.description,
        ]
        for t in result.tasks
    ]
    if result.tasks:
        human = table(["id", "pri", "status", "ready", "milestone", "waits on", "task"], rows)
        human += f"\n{result.count} task{'s' if result.count != 1 else ''}, {result.ready} ready"
    else:
        filtered = status is not None or milestone is not None or ready
        human = "no tasks match" if filtered else 'no tasks yet: vb tasks add "what to do"'
    emit(result, as_json, human)


@tasks_app.command()
def add(
    description: Annotated[str, typer.Argument(help="What is to be done.")],
    priority: PriorityOpt = None,
    milestone: MilestoneOpt = None,
    criterion: CriterionOpt = None,
    blocked_by: Annotated[
        list[str] | None,
        typer.Option(
            "--blocked-by",
            "-b",
            help="Id of a task that must be done first (repeat, or comma-separated).",
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Add a task with the next free id: todo, or blocked while it waits on an open task."""
    change = open_api().add_task(
        description,
        priority=priority,
        milestone=milestone,
        criteria=criterion or [],
        blocked_by=_ids(blocked_by),
    )
    emit(change, as_json, "added " + _status_line(change.task))


@tasks_app.command()
def update(
    task_id: IdArg,
    description: Annotated[
        str | None,
        typer.Option("--description", "-d", help="New description.", show_default=False),
    ] = None,
    priority: PriorityOpt = None,
    milestone: Annotated[
        str | None,
        typer.Option("--milestone", "-m", help="New milestone ('' clears it).", show_default=False),
    ] = None,
    status: Annotated[
        str | None,
        typer.Option(
            "--status",
            help="todo, in_progress, blocked or done (done works like `vb tasks done`).",
            show_default=False,
        ),
    ] = None,
    criterion: Annotated[
        list[str] | None,
        typer.Option("--criterion", help="Replace the acceptance criteria (repeat)."),
    ] = None,
    add_criterion: Annotated[
        list[str] | None,
        typer.Option("--add-criterion", help="Append an acceptance criterion (repeat)."),
    ] = None,
    clear_criteria: Annotated[
        bool, typer.Option("--clear-criteria", help="Remove every acceptance criterion.")
    ] = False,
    force: Annotated[
        bool, typer.Option("--force", help="With --status done: even if blockers are open.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Change a task's description, priority, milestone, status or acceptance criteria."""
    criteria = [] if clear_criteria else criterion
    if all(v is None for v in (description, priority, milestone, status, criteria)) and not (
        add_criterion
    ):
        raise VaultBrainError(
            f"nothing to change for {task_id}",
            hint="give --description, --priority, --milestone, --status or --criterion",
        )
    change = open_api().update_task(
        task_id,
        description=description,
        priority=priority,
        milestone=milestone,
        status=status,
        criteria=criteria,
        add_criteria=add_criterion or [],
        force=force,
    )
    head = (
        f"updated {', '.join(change.fields)} of " if change.changed else "unchanged: "
    ) + _status_line(change.task)
    emit(change, as_json, "\n".join([head, *_moves(change)]))


@tasks_app.command()
def done(
    task_id: IdArg,
    force: Annotated[
        bool, typer.Option("--force", help="Mark it done even if tasks it waits on are open.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Mark a task done; tasks that waited only on it go back to todo."""
    change = open_api().done_task(task_id, force)
    if not change.changed:
        head = f"{change.task.id} was already done (completed {change.task.completed})"
    else:
        head = f"done {change.task.id}: {change.task.description}"
        if change.forced:
            head += "  (forced: some of its blockers are still open)"
    emit(change, as_json, "\n".join([head, *_moves(change)]))


@tasks_app.command()
def block(
    task_id: IdArg,
    by: Annotated[
        list[str],
        typer.Option("--by", help="Id of the task it waits on (repeat, or comma-separated)."),
    ],
    as_json: JsonOpt = False,
) -> None:
    """Make a task wait on others; it becomes blocked while any of them is open."""
    change = open_api().block_task(task_id, _ids(by))
    if change.added_blockers:
        head = f"{change.task.id} now waits on {', '.join(change.added_blockers)}"
    else:
        head = f"{change.task.id} already waited on {', '.join(_ids(by))}"
    emit(change, as_json, f"{head}\n{_status_line(change.task)}")
