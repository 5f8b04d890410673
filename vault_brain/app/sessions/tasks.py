"""Task memory operations: each reads tasks.json, changes it with a pure operation and
writes it back under the vault lock (only when something changed)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import field
from typing import Any

from vault_brain.app.memory.results import Result, result
from vault_brain.app.memory.vault import Vault
from vault_brain.domain.clock import now_iso
from vault_brain.domain.sessions import tasks
from vault_brain.domain.sessions.tasks import Change, TaskView
from vault_brain.storage.sessions.tasks_file import load, mutate


def list_tasks(
    vault: Vault, status: str | None = None, milestone: str | None = None, ready: bool = False
) -> list[tasks.TaskView]:
    return tasks.list_tasks(load(vault.paths), status, milestone, ready)


def add_task(
    vault: Vault,
    description: str,
    priority: str | None = None,
    milestone: str | None = None,
    criteria: Iterable[str] = (),
    blocked_by: Iterable[str] = (),
) -> tasks.Change:
    return mutate(
        vault.paths,
        lambda tl: tasks.add_task(
            tl,
            description,
            now_iso(),
            priority or tasks.DEFAULT_PRIORITY,
            milestone,
            list(criteria),
            list(blocked_by),
        ),
    )


def update_task(
    vault: Vault,
    task_id: str,
    *,
    description: str | None = None,
    priority: str | None = None,
    milestone: str | None = None,
    status: str | None = None,
    criteria: list[str] | None = None,
    add_criteria: Iterable[str] = (),
    force: bool = False,
) -> tasks.Change:
    return mutate(
        vault.paths,
        lambda tl: tasks.update_task(
            tl,
            task_id,
            now_iso(),
            description=description,
            priority=priority,
            milestone=milestone,
            status=status,
            criteria=criteria,
            add_criteria=list(add_criteria),
            force=force,
        ),
    )


def done_task(vault: Vault, task_id: str, force: bool = False) -> tasks.Change:
    return mutate(vault.paths, lambda tl: tasks.done_task(tl, task_id, now_iso(), force))


def block_task(vault: Vault, task_id: str, by: Iterable[str]) -> tasks.Change:
    return mutate(vault.paths, lambda tl: tasks.block_task(tl, task_id, list(by)))


@result
class Task(Result):
    id: str
    milestone: str | None
    priority: str
    """p0 (drop everything), p1, p2 (normal) or p3."""
    status: str
    """todo, in_progress, blocked or done."""
    description: str
    acceptance_criteria: list[str]
    created: str | None
    completed: str | None
    blocked_by: list[str]
    ready: bool
    """todo or in_progress, and every task it waits on is done."""
    open_blockers: list[str]
    extra: dict[str, Any] = field(default_factory=dict)
    """Keys of the task vb does not own (kept as they are)."""

    @classmethod
    def of(cls, view: TaskView) -> Task:
        t = view.task
        return cls(
            t.id,
            t.milestone,
            t.priority,
            t.status,
            t.description,
            list(t.acceptance_criteria),
            t.created,
            t.completed,
            list(t.blocked_by),
            view.ready,
            view.open_blockers,
            dict(t.extra),
        )


@result
class TaskList(Result):
    tasks: list[Task]
    count: int
    ready: int

    @classmethod
    def of(cls, views: list[TaskView]) -> TaskList:
        return cls([Task.of(v) for v in views], len(views), sum(v.ready for v in views))


@result
class TaskChange(Result):
    action: str
    """add, update, done or block."""
    changed: bool
    task: Task
    unblocked: list[str]
    """Tasks that no longer wait on anything (now todo)."""
    reblocked: list[str]
    fields: list[str] = field(default_factory=list)
    added_blockers: list[str] = field(default_factory=list)
    forced: bool = False

    @classmethod
    def of(cls, change: Change) -> TaskChange:
        return cls(
            change.action,
            change.changed,
            Task.of(change.task),
            change.unblocked,
            change.reblocked,
            change.fields,
            change.added_blockers,
            change.forced,
        )
