"""What each part of `MemoryAPI` kept in a feature's room (`app.<feature>.api`) relies on:
the vault for one call, through `MemoryAPI._use`."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    from vault_brain.app.memory.access import AccessRecorder
    from vault_brain.app.memory.vault import Vault
    from vault_brain.domain.policy.grants import Grant

Pending = Literal["skip", "try", "lines", "wait"]


class ApiPart:
    """A part of `MemoryAPI` kept in a module of its own: it holds the vault through
    `MemoryAPI._use`."""

    session: str | None
    access: AccessRecorder | None
    grant: Grant

    def _use(
        self, pending: Pending = "wait", operation: str | None = None
    ) -> contextlib.AbstractContextManager[Vault]:
        raise NotImplementedError  # MemoryAPI._use


class Keeper(Protocol):
    """What a live `MemoryAPI` asks of the index keeper a runtime gave it
    (`app.runtime.index_keeper`): the index brought up to date before a read, and a stop."""

    def settle(self) -> None: ...

    def close(self) -> None: ...
