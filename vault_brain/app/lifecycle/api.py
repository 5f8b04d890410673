"""The memory API's policy methods: the diff and approval of the agent-editable lifecycle
rules in policy/ (see `app.lifecycle.policy_review`), and `vb doctor`, which holds vb's
own notes to the lifecycle's rules (see `app.lifecycle.doctor`). A part of `MemoryAPI`, kept
in its own module."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vault_brain.app.memory.api_part import ApiPart

if TYPE_CHECKING:
    from vault_brain.app.lifecycle.policy_review import PolicyApproval, PolicyDiff
    from vault_brain.app.memory.apply import PlanResult
    from vault_brain.app.memory.vault import Vault


class PolicyOps(ApiPart):
    _vault: Vault

    def policy_diff(self) -> PolicyDiff:
        """policy/ against what was last approved on this machine."""
        from vault_brain.app.lifecycle.policy_review import policy_diff  # lazy: start-up

        return policy_diff(self._vault)

    def policy_approve(self, expect_hash: str | None = None) -> PolicyApproval:
        """Approve policy/ as it is now (refused when a rule is invalid)."""
        from vault_brain.app.lifecycle.policy_review import approve_policy  # lazy: start-up

        return approve_policy(self._vault, expect_hash)

    def policy_warning(self) -> str | None:
        """One line when policy/ has changes not approved here, else None (never raises)."""
        from vault_brain.app.lifecycle.policy_review import policy_warning  # lazy: start-up

        return policy_warning(self._vault)

    def doctor(self, fix: bool = False) -> PlanResult:
        """Manufactured notes and credit no outcome earned: the plan, applied with `fix`."""
        from vault_brain.app.lifecycle.doctor import doctor  # lazy: start-up

        with self._use() as vault:
            return doctor(vault, fix)
