"""tasks.json on disk: read, and change under the vault lock with an atomic replace."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from vault_brain.domain.errors import VaultBrainError
from vault_brain.domain.sessions.task_format import dump_tasks, parse_tasks
from vault_brain.domain.sessions.tasks import TaskList
from vault_brain.storage.files import read_inside
from vault_brain.storage.paths import VaultPaths
from vault_brain.storage.transaction import transaction

T = TypeVar("T")


def _read(paths: VaultPaths) -> bytes | None:
    try:
        return read_inside(paths, paths.tasks)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise VaultBrainError(
            f"cannot read {paths.tasks}: {exc.strerror or exc}", hint="check the file's permissions"
        ) from None


def load(paths: VaultPaths) -> TaskList:
    """The vault's tasks; a missing tasks.json is an empty list (nothing is created)."""
    raw = _read(paths)
    return TaskList() if raw is None else parse_tasks(raw, str(paths.tasks))


def mutate(paths: VaultPaths, operation: Callable[[TaskList], T]) -> T:
    """Read, change and write tasks.json in one transaction; unchanged bytes are not written,
    and a change someone made meanwhile (by hand, in an editor) is read again and the
    operation applied to it, never overwritten."""
    results: list[T] = []

    def change(raw: bytes | None) -> bytes | None:
        task_list = TaskList() if raw is None else parse_tasks(raw, str(paths.tasks))
        before = dump_tasks(task_list)
        results.append(operation(task_list))
        after = dump_tasks(task_list)
        return None if after == before else after.encode("utf-8")

    with transaction(paths) as tx:
        if tx.exists(paths.tasks):
            tx.edit(paths.tasks, lambda raw: change(raw) or raw)
        else:
            new = change(None)
            if new is not None:
                tx.create(paths.tasks, new)
    return results[-1]
