"""Task memory: the vault's tasks.json, its checks and the operations on it.

File format (extra keys, top-level or in a task, belong to whoever wrote them and survive
every rewrite)::

    {"tasks": [{"id": "t3", "milestone": "M1", "priority": "p1", "status": "blocked",
                "description": "...", "acceptance_criteria": ["..."],
                "created": "2026-02-05T10:00:00+01:00", "completed": null,
                "blocked_by": ["t1"]}],
     "next_id": 4}

- ids: ``t1``, ``t2``, ... vb hands out the next number above both ``next_id`` and every
  ``t<N>`` in the file, and records the high-water mark in ``next_id``, so an id is never
  handed out twice, even after a person deletes a task by hand. Ids written by people
  (``TASK-001``) are accepted as they are.
- status: ``todo`` | ``in_progress`` | ``blocked`` | ``done``. ``done`` sets ``completed``;
  any other status clears it. A task becomes ``blocked`` when it gains an open blocker and
  goes back to ``todo`` when its last open blocker is done (and back to ``blocked`` if that
  blocker is reopened while the task is still ``todo``).
- priority: ``p0`` (drop everything) ``p1`` (high) ``p2`` (normal, the default) ``p3`` (low).
- ``blocked_by``: ids of tasks that must be done first; every id must exist and the graph
  must have no cycle (a task may not wait on itself, directly or through others).
- A task is *ready* when it is ``todo`` or ``in_progress`` and none of its blockers is open.

This module is the pure part (`TaskList`, `parse_tasks`, `dump_tasks` and the operations)
over values; `storage.sessions.tasks_file` reads and writes the file (atomic replace under the vault
lock). A file that fails the checks is reported and never rewritten.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from vault_brain.domain.errors import NotFoundError, VaultBrainError

STATUSES = ("todo", "in_progress", "blocked", "done")
PRIORITIES = ("p0", "p1", "p2", "p3")
DEFAULT_PRIORITY = "p2"
OPEN = frozenset(STATUSES) - {"done"}

KNOWN_KEYS = (
    "id",
    "milestone",
    "priority",
    "status",
    "description",
    "acceptance_criteria",
    "created",
    "completed",
    "blocked_by",
)
_AUTO_ID = re.compile(r"t([1-9][0-9]*)")
_NUMBER = re.compile(r"([0-9]+)")


@dataclass
class Task:
    id: str
    description: str
    status: str = "todo"
    priority: str = DEFAULT_PRIORITY
    milestone: str | None = None
    acceptance_criteria: list[str] = field(default_factory=list)
    created: str | None = None
    completed: str | None = None
    blocked_by: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The task as stored: schema keys in order, then the keys vb does not own."""
        own = {
            "id": self.id,
            "milestone": self.milestone,
            "priority": self.priority,
            "status": self.status,
            "description": self.description,
            "acceptance_criteria": list(self.acceptance_criteria),
            "created": self.created,
            "completed": self.completed,
            "blocked_by": list(self.blocked_by),
        }
        return {**own, **self.extra}


@dataclass
class TaskList:
    tasks: list[Task] = field(default_factory=list)
    next_id: int = 1
    extra: dict[str, Any] = field(default_factory=dict)

    def find(self, task_id: str) -> Task | None:
        return next((t for t in self.tasks if t.id == task_id), None)

    def get(self, task_id: str) -> Task:
        task = self.find(task_id)
        if task is None:
            raise NotFoundError(
                f"no task {task_id!r} in tasks.json",
                hint="`vb tasks list` shows the task ids",
            )
        return task

    def open_blockers(self, task: Task) -> list[str]:
        """Blockers of `task` that are not done yet."""
        return [b for b in task.blocked_by if (o := self.find(b)) is not None and o.status in OPEN]

    def is_ready(self, task: Task) -> bool:
        return task.status in ("todo", "in_progress") and not self.open_blockers(task)

    def dependents(self, task_id: str) -> list[Task]:
        """Tasks waiting on `task_id`."""
        return [t for t in self.tasks if task_id in t.blocked_by]

    def allocate_id(self) -> str:
        highest = max((_auto_number(t.id) for t in self.tasks), default=0)
        number = max(self.next_id, highest + 1)
        self.next_id = number + 1
        return f"t{number}"


def _auto_number(task_id: str) -> int:
    match = _AUTO_ID.fullmatch(task_id)
    return int(match.group(1)) if match else 0


def id_sort_key(task_id: str) -> tuple[Any, ...]:
    """Natural order: t2 before t10."""
    return tuple(int(p) if p.isdigit() else p for p in _NUMBER.split(task_id))


def sort_key(task: Task) -> tuple[Any, ...]:
    return (PRIORITIES.index(task.priority), id_sort_key(task.id))


def check_status(value: str) -> str:
    status = value.strip().lower().replace("-", "_")
    if status not in STATUSES:
        raise VaultBrainError(
            f"unknown status {value!r}", hint=f"use one of: {', '.join(STATUSES)}"
        )
    return status


def check_priority(value: str) -> str:
    priority = value.strip().lower()
    if priority not in PRIORITIES:
        raise VaultBrainError(
            f"unknown priority {value!r}",
            hint="use p0 (drop everything), p1 (high), p2 (normal) or p3 (low)",
        )
    return priority


def describe_ids(ids: Iterable[str]) -> str:
    ids = list(ids)
    return ("task " if len(ids) == 1 else "tasks ") + ", ".join(ids)


# ---------------------------------------------------------------------------
# Dependencies


def path_between(task_list: TaskList, start: str, goal: str) -> list[str] | None:
    """A chain start -> ... -> goal following `blocked_by`, or None."""
    stack: list[tuple[str, list[str]]] = [(start, [start])]
    seen: set[str] = set()
    while stack:
        current, chain = stack.pop()
        if current == goal:
            return chain
        if current in seen:
            continue
        seen.add(current)
        task = task_list.find(current)
        for nxt in reversed(task.blocked_by if task else []):
            stack.append((nxt, [*chain, nxt]))
    return None


def find_cycle(task_list: TaskList) -> list[str] | None:
    """Some cycle in the `blocked_by` graph as a path that ends where it starts, or None."""
    for task in sorted(task_list.tasks, key=lambda t: id_sort_key(t.id)):
        for blocker in task.blocked_by:
            chain = path_between(task_list, blocker, task.id)
            if chain is not None:
                return [task.id, *chain]
    return None


def _check_new_blockers(task_list: TaskList, task: Task, blockers: list[str]) -> None:
    unknown = [b for b in blockers if task_list.find(b) is None]
    if unknown:
        raise NotFoundError(
            f"cannot block {task.id}: no {describe_ids(unknown)} in tasks.json",
            hint="`vb tasks list` shows the task ids",
        )
    for blocker in blockers:
        chain = path_between(task_list, blocker, task.id)
        if chain is not None:
            cycle = " -> ".join([task.id, *chain])
            raise VaultBrainError(
                f"{task.id} cannot wait on {blocker}: that makes a dependency cycle {cycle}",
                hint="a task cannot wait, directly or through others, on itself",
            )


def _unique(ids: Iterable[str]) -> list[str]:
    out: list[str] = []
    for raw in ids:
        value = raw.strip()
        if value and value not in out:
            out.append(value)
    return out


# ---------------------------------------------------------------------------
# Operations (pure: they change a TaskList and say what they did)


@dataclass
class TaskView:
    task: Task
    ready: bool
    open_blockers: list[str]

    def to_json(self) -> dict[str, Any]:
        return {**self.task.to_dict(), "ready": self.ready, "open_blockers": self.open_blockers}


def view(task_list: TaskList, task: Task) -> TaskView:
    return TaskView(task, task_list.is_ready(task), task_list.open_blockers(task))


@dataclass
class Change:
    """What an operation did: the task it acted on and the tasks whose status it moved."""

    action: str
    task: TaskView
    changed: bool = True
    unblocked: list[str] = field(default_factory=list)
    reblocked: list[str] = field(default_factory=list)
    fields: list[str] = field(default_factory=list)
    added_blockers: list[str] = field(default_factory=list)
    forced: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "action": self.action,
            "changed": self.changed,
            "task": self.task.to_json(),
            "unblocked": self.unblocked,
            "reblocked": self.reblocked,
        }
        if self.action == "update":
            out["fields"] = self.fields
        if self.action == "block":
            out["added_blockers"] = self.added_blockers
        if self.action == "done":
            out["forced"] = self.forced
        return out


def list_tasks(
    task_list: TaskList,
    status: str | None = None,
    milestone: str | None = None,
    ready_only: bool = False,
) -> list[TaskView]:
    """Tasks by priority (p0 first) then id, optionally filtered."""
    wanted = check_status(status) if status is not None else None
    views = [
        view(task_list, t)
        for t in sorted(task_list.tasks, key=sort_key)
        if (wanted is None or t.status == wanted)
        and (milestone is None or t.milestone == milestone)
    ]
    return [v for v in views if v.ready] if ready_only else views


def add_task(
    task_list: TaskList,
    description: str,
    now: str,
    priority: str = DEFAULT_PRIORITY,
    milestone: str | None = None,
    criteria: Iterable[str] = (),
    blocked_by: Iterable[str] = (),
) -> Change:
    if not description.strip():
        raise VaultBrainError("a task needs a description", hint='vb tasks add "what to do"')
    task = Task(
        id="",
        description=description.strip(),
        priority=check_priority(priority),
        milestone=(milestone or "").strip() or None,
        acceptance_criteria=[c.strip() for c in criteria if c.strip()],
        created=now,
    )
    blockers = _unique(blocked_by)
    _check_new_blockers(task_list, task, blockers)  # a new task has no dependents: no cycle
    task.id = task_list.allocate_id()
    task.blocked_by = blockers
    task_list.tasks.append(task)
    if task_list.open_blockers(task):
        task.status = "blocked"
    return Change("add", view(task_list, task))


def _finish(task_list: TaskList, task: Task, now: str, force: bool) -> list[str]:
    """Mark `task` done; return the dependents that no longer wait on anything."""
    open_ = task_list.open_blockers(task)
    if open_ and not force:
        raise VaultBrainError(
            f"{task.id} is still blocked by {', '.join(open_)}",
            hint=f"finish {', '.join(open_)} first, or pass --force to mark {task.id} done anyway",
        )
    task.status = "done"
    task.completed = now
    unblocked = []
    for dependent in task_list.dependents(task.id):
        if dependent.status == "blocked" and not task_list.open_blockers(dependent):
            dependent.status = "todo"
            unblocked.append(dependent.id)
    return unblocked


def _reopen(task_list: TaskList, task: Task, status: str) -> list[str]:
    """Move a done task back to `status`; return the dependents that wait on it again."""
    task.status = status
    task.completed = None
    reblocked = []
    for dependent in task_list.dependents(task.id):
        if dependent.status == "todo":
            dependent.status = "blocked"
            reblocked.append(dependent.id)
    return reblocked


def done_task(task_list: TaskList, task_id: str, now: str, force: bool = False) -> Change:
    task = task_list.get(task_id.strip())
    if task.status == "done":
        return Change("done", view(task_list, task), changed=False)
    forced = bool(task_list.open_blockers(task))
    unblocked = _finish(task_list, task, now, force)
    return Change("done", view(task_list, task), unblocked=unblocked, forced=forced)


def block_task(task_list: TaskList, task_id: str, by: Iterable[str]) -> Change:
    task = task_list.get(task_id.strip())
    blockers = _unique(by)
    if not blockers:
        raise VaultBrainError("no blocker given", hint=f"vb tasks block {task.id} --by OTHER_ID")
    _check_new_blockers(task_list, task, blockers)
    new = [b for b in blockers if b not in task.blocked_by]
    if task.status == "done" and any(task_list.get(b).status in OPEN for b in new):
        raise VaultBrainError(
            f"{task.id} is done; it cannot wait on an open task",
            hint=f"reopen it first: vb tasks update {task.id} --status todo",
        )
    task.blocked_by.extend(new)
    if task.status != "done" and task_list.open_blockers(task):
        before, task.status = task.status, "blocked"
        changed = bool(new) or before != "blocked"
    else:
        changed = bool(new)
    return Change("block", view(task_list, task), changed=changed, added_blockers=new)


def update_task(
    task_list: TaskList,
    task_id: str,
    now: str,
    description: str | None = None,
    priority: str | None = None,
    milestone: str | None = None,
    status: str | None = None,
    criteria: list[str] | None = None,
    add_criteria: Iterable[str] = (),
    force: bool = False,
) -> Change:
    """Change the given fields; `milestone=""` clears the milestone, `criteria=[]` the list."""
    task = task_list.get(task_id.strip())
    before = task.to_dict()
    if description is not None:
        if not description.strip():
            raise VaultBrainError("a task needs a description", hint="give a non-empty text")
        task.description = description.strip()
    if priority is not None:
        task.priority = check_priority(priority)
    if milestone is not None:
        task.milestone = milestone.strip() or None
    if criteria is not None:
        task.acceptance_criteria = [c.strip() for c in criteria if c.strip()]
    task.acceptance_criteria += [c.strip() for c in add_criteria if c.strip()]
    unblocked: list[str] = []
    reblocked: list[str] = []
    if status is not None:
        new_status = check_status(status)
        if new_status == "done" and task.status != "done":
            unblocked = _finish(task_list, task, now, force)
        elif new_status != "done" and task.status == "done":
            reblocked = _reopen(task_list, task, new_status)
        else:
            task.status = new_status
    after = task.to_dict()
    fields = [k for k in KNOWN_KEYS if before.get(k) != after.get(k)]
    return Change(
        "update",
        view(task_list, task),
        changed=bool(fields or unblocked or reblocked),
        unblocked=unblocked,
        reblocked=reblocked,
        fields=fields,
    )
