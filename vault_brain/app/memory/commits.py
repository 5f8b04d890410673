"""When vb commits the vault with git: `commit_on` in STRATEGY.md names the moments --
`session` (a session's end: vb session, a vb serve conversation's flush, Claude Code's
SessionEnd), `lifecycle` (each consolidation, promotion or pruning pass that changed
something), `command` (each note write of a command a person runs at the terminal: vb add,
update, delete, restore, feedback, flush), `operation` (every memory write through the API,
an agent's too). `vb sync` commits whatever is pending, always.

A commit holds everything pending in the vault, so whoever commits at a moment commits its
own changes before another moment's commit can take them (a session's flush before its
maintenance)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vault_brain.app.memory.vault import Vault

COMMAND = "command"
"""The moment of a person's command at the terminal."""


def commit_at(vault: Vault, moment: str, message: str) -> str | None:
    """Commit the vault's changes if the policy commits at `moment`: what happened (see
    `storage.git.repo.commit_vault`), or None when it does not."""
    if moment not in vault.policy.commit_on:
        return None
    from vault_brain.storage.git.repo import commit_vault  # lazy: GitPython

    return commit_vault(vault.paths, message)


def commit_write(vault: Vault, operation: str, source: str, command: bool) -> str | None:
    """One write's own commit (`operation`: what it did and to which note, e.g. "add: Ada
    Lovelace"): a person's command commits at `command` ("vb add: Ada Lovelace"), any write at
    `operation` (with who made it: "vb add: Release (mcp)"). None when neither applies."""
    moments = vault.policy.commit_on
    if command and COMMAND in moments:
        return commit_at(vault, COMMAND, f"vb {operation}")
    return commit_at(vault, "operation", f"vb {operation} ({source})")
