"""The memory API's access checks: the agent it serves as (`act_as`), the grant of the caller
it serves (`confine`: a sandboxed agent's session), and what both allow of each note (a part
of `MemoryAPI`, kept in its own module; see api.py for how the API is held)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vault_brain.app.memory.api_part import ApiPart
from vault_brain.app.memory.guard import PERSON
from vault_brain.domain.errors import ForbiddenError
from vault_brain.domain.notes.model import Filters, Note
from vault_brain.domain.policy.exclusions import is_private
from vault_brain.domain.policy.grants import AGENT, FULL, Grant, session_grant
from vault_brain.domain.sessions.records import check_session_id
from vault_brain.storage.notes.read import load_note

if TYPE_CHECKING:
    from vault_brain.app.memory.vault import Vault
    from vault_brain.domain.policy.scopes import Agent


class Access(ApiPart):
    _vault: Vault
    agent: Agent | None
    source: str

    def act_as(self, name: str) -> Agent:
        """Serve as the agent defined in agents/<name>.md: reads and writes limited to its
        scopes (a skill agent writes nothing)."""
        from vault_brain.app.memory.agents import load_agent  # lazy: agent servers only

        self.agent = load_agent(self._vault, name)
        return self.agent

    def confine(self, session: str) -> Grant:
        """Act for a sandboxed agent bound to `session` (`vb mcp --confined`): its session's
        scopes only (global when it has none), no feedback, no personas, no other session."""
        from vault_brain.domain.policy.scopes import session_scopes
        from vault_brain.storage.sessions.transcript import read_records

        session = check_session_id(session)
        scopes = session_scopes(read_records(self._vault.paths.transcript(session)))
        self.grant = session_grant(session, scopes)
        return self.grant

    def _restricted(self) -> bool:
        """A caller that may not see every note (an agent, or a scoped grant)."""
        return self.agent is not None or self.grant.readable() is not None or not self.grant.private

    @staticmethod
    def _grant_of(source: str) -> Grant:
        """What a caller may do until it is confined: the person (`vb` at a keyboard)
        everything; every agent path everything but private notes."""
        return FULL if source == PERSON else AGENT

    def _private(self, vault: Vault, note: Note) -> bool:
        """No agent reads this note: its front matter says `private`, or its path is one of
        STRATEGY.md's `private_paths` (`domain.policy.exclusions`)."""
        return is_private(note.path, note.meta, vault.policy.private_paths)

    def _may_read(self, scope: str, private: bool = False) -> bool:
        """A note of `scope` (marked private or not) is one this caller may read (its grant,
        and its agent)."""
        if not self.grant.may_read(scope, private):
            return False
        allowed = self.agent.readable() if self.agent is not None else None
        return allowed is None or scope in allowed

    def _check_write(self, vault: Vault, rel: str, ref: str | None = None) -> None:
        """An agent changes only notes in its scopes, and never an agent definition; a grant
        changes only notes of its scopes (one it may not read does not exist for it)."""
        if self.source != PERSON and rel.startswith("agents/"):
            raise ForbiddenError(
                f"{rel} defines an agent: only a person changes it",
                hint="edit the file by hand (vb update as a person)",
            )
        if self.agent is not None or not self.grant.is_full:
            note = load_note(vault.paths.root, rel)
            self.grant.check_read(note.scope, ref or rel, rel, self._private(vault, note))
            self.grant.check_write(note.scope)
            if self.agent is not None:
                self.agent.check_write(note.scope)

    def _readable(self, filters: Filters | None) -> Filters:
        from dataclasses import replace

        from vault_brain.app.memory.agents import readable_filters

        filters = (filters or Filters()).normalized()
        filters = replace(
            filters,
            scopes=self.grant.search_scopes(filters.scopes),
            private=filters.private and self.grant.private,
        )
        return readable_filters(self.agent, filters)
