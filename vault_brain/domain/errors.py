"""The one error type users see.

Anything the user can fix (bad input, a missing vault, a locked index) raises
`VaultBrainError`; each interface catches it once and reports the message, the hint and
the exit code (the CLI as one line, or a JSON document under `--json`; MCP as a tool error).
"""

from __future__ import annotations


class VaultBrainError(Exception):
    """A problem the user can act on: a message, a hint, and an exit code."""

    exit_code = 1
    code = "invalid_input"

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def one_line(self) -> str:
        """The message, then the hint, on one line (for tool errors and hook output)."""
        return f"{self.message} (hint: {self.hint})" if self.hint else self.message

    def to_json(self) -> dict[str, object]:
        return {
            "code": self.code,
            "message": self.message,
            "hint": self.hint,
            "exit_code": self.exit_code,
        }


class UsageError(VaultBrainError):
    """The command line itself is wrong: an unknown option, a missing argument."""

    exit_code = 2
    code = "usage"


class NotFoundError(VaultBrainError):
    """An id, path or session that does not exist."""

    exit_code = 3
    code = "not_found"


class LockedError(VaultBrainError):
    """The vault or its index is held by another writer for too long."""

    exit_code = 4
    code = "locked"


class VaultMissingError(VaultBrainError):
    """No vault could be found or the given path is not one."""

    exit_code = 5
    code = "no_vault"


class RefusedError(VaultBrainError):
    """The gate refused text as memory: an instruction to the assistant, a secret, code..."""

    code = "refused"


class ExistsError(VaultBrainError):
    """A new memory would take the name of a note that already exists."""

    code = "exists"


class ForbiddenError(VaultBrainError):
    """An agent asked to write (or read) a scope its definition does not allow."""

    code = "forbidden"


class LLMError(VaultBrainError):
    """The LLM endpoint or its reply failed in a way the user can act on."""

    code = "llm"


EXIT_CODES = {
    0: "success",
    1: "bad input (or an error the message explains)",
    2: "usage: unknown option, missing argument",
    3: "unknown id, path or session",
    4: "vault or index locked by another writer",
    5: "no vault",
}
