"""The one error type users see.

Anything the user can fix (bad input, a missing vault, a locked index) raises
`VaultBrainError`; the CLI catches it once, prints one line and a hint, and
exits with the error's code.
"""

from __future__ import annotations


class VaultBrainError(Exception):
    """A problem the user can act on: a message, a hint, and an exit code."""

    exit_code = 1

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class NotFoundError(VaultBrainError):
    """An id, path or session that does not exist."""

    exit_code = 3


class LockedError(VaultBrainError):
    """The vault or its index is held by another writer for too long."""

    exit_code = 4


class VaultMissingError(VaultBrainError):
    """No vault could be found or the given path is not one."""

    exit_code = 5
