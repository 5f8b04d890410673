"""`vb token add | list | revoke`: the tokens clients of `vb serve` present, each carrying a
grant (`domain.policy.grants`): the scopes it reads and writes, an agent, feedback or not. Kept on
this machine only (`storage.policy.token_store`)."""

from __future__ import annotations

from vault_brain.app.memory.results import Result, result
from vault_brain.app.memory.vault import Vault
from vault_brain.domain.errors import UsageError
from vault_brain.storage.policy.token_store import StoredToken, TokenStore


@result
class TokenInfo(Result):
    name: str
    scopes: list[str] | None
    """The scopes it reads and writes (it reads global too); null: every scope."""
    agent: str | None
    """The agent (agents/<name>.md) whose limits apply as well."""
    feedback: bool
    """It may credit memories (POST /v1/vb/feedback)."""
    created: str

    @classmethod
    def of(cls, stored: StoredToken) -> TokenInfo:
        scopes = None if stored.scopes is None else list(stored.scopes)
        return cls(stored.name, scopes, stored.agent, stored.feedback, stored.created)


@result
class TokenAdded(Result):
    token: str
    """The token itself: shown this once, never stored (only its SHA-256 is)."""
    info: TokenInfo


@result
class TokenList(Result):
    tokens: list[TokenInfo]
    """Names and grants only: never a token or its hash."""


@result
class TokenRevoked(Result):
    info: TokenInfo
    """The token that was revoked (it is refused from now on, also by a running vb serve)."""


def add_token(
    vault: Vault,
    name: str,
    scopes: list[str],
    agent: str | None = None,
    feedback: bool = False,
    all_scopes: bool = False,
) -> TokenAdded:
    if all_scopes and scopes:
        raise UsageError(
            "--all-scopes and --scope do not go together",
            hint="give the scopes the token may use, or --all-scopes for every scope",
        )
    if not all_scopes and not scopes:
        raise UsageError(
            "a token needs the scopes it may use",
            hint="pass --scope user:<id> (and more --scope), or --all-scopes",
        )
    if agent is not None:
        from vault_brain.app.memory.agents import load_agent  # lazy: only tokens with an agent

        agent = load_agent(vault, agent).name  # an unknown agent fails here
    stored, token = TokenStore(vault.paths).add(
        name, None if all_scopes else scopes, agent, feedback
    )
    return TokenAdded(token, TokenInfo.of(stored))


def list_tokens(vault: Vault) -> TokenList:
    return TokenList([TokenInfo.of(t) for t in TokenStore(vault.paths).tokens()])


def revoke_token(vault: Vault, name: str) -> TokenRevoked:
    return TokenRevoked(TokenInfo.of(TokenStore(vault.paths).revoke(name)))
