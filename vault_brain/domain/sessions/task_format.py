"""tasks.json as text: parsing with every check (a file that fails one is reported and never
rewritten), and writing it back with the schema keys first and unknown keys kept."""

from __future__ import annotations

import json
from typing import Any

from vault_brain.domain.errors import VaultBrainError
from vault_brain.domain.sessions.tasks import (
    DEFAULT_PRIORITY,
    KNOWN_KEYS,
    PRIORITIES,
    STATUSES,
    Task,
    TaskList,
    describe_ids,
    find_cycle,
)


class MalformedTasks(VaultBrainError):
    """tasks.json exists but is not a task list vb can trust; nothing is rewritten."""


def _bad(where: str, problem: str) -> MalformedTasks:
    return MalformedTasks(
        f"{where} is malformed: {problem}",
        hint="fix it by hand (vb left it untouched); the format is in `vb tasks --help`",
    )


def _optional_str(raw: dict[str, Any], key: str, label: str, where: str) -> str | None:
    value = raw.get(key)
    if value is not None and not isinstance(value, str):
        raise _bad(where, f"{label}: {key!r} must be a string or null, not {_kind(value)}")
    return value


def _str_list(raw: dict[str, Any], key: str, label: str, where: str) -> list[str]:
    value = raw.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _bad(where, f"{label}: {key!r} must be a list of strings")
    return list(value)


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "true/false"}.get(
        type(value), "a number" if isinstance(value, int | float) else "null"
    )


def _parse_task(raw: Any, position: int, where: str) -> Task:
    label = f"task #{position + 1}"
    if not isinstance(raw, dict):
        raise _bad(where, f"{label} must be an object, not {_kind(raw)}")
    task_id = raw.get("id")
    if not isinstance(task_id, str) or not task_id.strip() or task_id != task_id.strip():
        raise _bad(where, f"{label} needs an 'id': a non-empty string, no surrounding spaces")
    label = f"task {task_id}"
    description = raw.get("description")
    if not isinstance(description, str):
        raise _bad(where, f"{label}: 'description' must be a string")
    status = raw.get("status", "todo")
    if status not in STATUSES:
        raise _bad(where, f"{label}: status {status!r} is not one of {', '.join(STATUSES)}")
    priority = raw.get("priority", DEFAULT_PRIORITY)
    if priority not in PRIORITIES:
        raise _bad(where, f"{label}: priority {priority!r} is not one of {', '.join(PRIORITIES)}")
    return Task(
        id=task_id,
        description=description,
        status=status,
        priority=priority,
        milestone=_optional_str(raw, "milestone", label, where),
        acceptance_criteria=_str_list(raw, "acceptance_criteria", label, where),
        created=_optional_str(raw, "created", label, where),
        completed=_optional_str(raw, "completed", label, where),
        blocked_by=_str_list(raw, "blocked_by", label, where),
        extra={k: v for k, v in raw.items() if k not in KNOWN_KEYS},
    )


def parse_tasks(raw: bytes, where: str = "tasks.json") -> TaskList:
    """Parse and check the file's bytes; an empty file is an empty list."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _bad(where, f"not UTF-8 text (byte {exc.start})") from None
    if not text.strip():
        return TaskList()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _bad(
            where, f"invalid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None
    if not isinstance(data, dict):
        raise _bad(where, f'the top level must be an object {{"tasks": [...]}}, not {_kind(data)}')
    items = data.get("tasks")
    if not isinstance(items, list):
        raise _bad(where, "it needs a 'tasks' list at the top level")
    next_id = data.get("next_id", 1)
    if isinstance(next_id, bool) or not isinstance(next_id, int) or next_id < 1:
        raise _bad(where, "'next_id' must be a positive whole number")
    tasks = [_parse_task(item, i, where) for i, item in enumerate(items)]
    seen: set[str] = set()
    for task in tasks:
        if task.id in seen:
            raise _bad(where, f"two tasks have the id {task.id!r}")
        seen.add(task.id)
    for task in tasks:
        unknown = [b for b in task.blocked_by if b not in seen]
        if unknown:
            raise _bad(where, f"task {task.id} is blocked by unknown {describe_ids(unknown)}")
    result = TaskList(
        tasks, next_id, {k: v for k, v in data.items() if k not in ("tasks", "next_id")}
    )
    cycle = find_cycle(result)
    if cycle:
        raise _bad(where, f"dependency cycle {' -> '.join(cycle)}")
    return result


def dump_tasks(task_list: TaskList) -> str:
    data: dict[str, Any] = {
        "tasks": [t.to_dict() for t in task_list.tasks],
        "next_id": task_list.next_id,
        **task_list.extra,
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
