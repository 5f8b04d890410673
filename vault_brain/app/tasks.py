"""Task memory operations: each reads tasks.json, changes it with a pure operation and
writes it back under the vault lock (only when something changed)."""

from __future__ import annotations

from collections.abc import Iterable

from vault_brain.app.vault import Vault
from vault_brain.domain import tasks
from vault_brain.domain.clock import now_iso
from vault_brain.storage.tasks_file import load, mutate


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
