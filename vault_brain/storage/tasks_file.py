"""tasks.json on disk: read, and change under the vault lock with an atomic replace."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from vault_brain.domain.errors import VaultBrainError
from vault_brain.domain.task_format import dump_tasks, parse_tasks
from vault_brain.domain.tasks import TaskList
from vault_brain.storage.files import atomic_write, vault_lock
from vault_brain.storage.paths import VaultPaths

T = TypeVar("T")


def _read(paths: VaultPaths) -> bytes | None:
    try:
        return paths.tasks.read_bytes()
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
    """Read, change and write tasks.json under the vault lock; unchanged bytes are not written.

    The write is an atomic replace, so a reader (or a crash) sees the old or the new file.
    """
    with vault_lock(paths):
        raw = _read(paths)
        task_list = TaskList() if raw is None else parse_tasks(raw, str(paths.tasks))
        before = dump_tasks(task_list)
        result = operation(task_list)
        after = dump_tasks(task_list)
        if after != before:
            atomic_write(paths.tasks, after.encode("utf-8"))
    return result
