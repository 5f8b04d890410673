"""When vb commits the vault with git: `commit_on` in STRATEGY.md names the moments --
`session` (a session's end: vb session, Claude Code's SessionEnd), `lifecycle` (each
consolidation, promotion or pruning pass that changed something), `operation` (every memory
write through the API). `vb sync` commits whatever is pending, always."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vault_brain.app.memory.vault import Vault


def commit_at(vault: Vault, moment: str, message: str) -> str | None:
    """Commit the vault's changes if the policy commits at `moment`: what happened (see
    `storage.git.repo.commit_vault`), or None when it does not."""
    if moment not in vault.policy.commit_on:
        return None
    from vault_brain.storage.git.repo import commit_vault  # lazy: GitPython

    return commit_vault(vault.paths, message)
