"""The vault as a git repository (GitPython): commits, locks, history, personas, sync."""

from vault_brain.domain.errors import VaultBrainError


class GitError(VaultBrainError):
    """git refused a step (of a sync, a clone, a checkout)."""
