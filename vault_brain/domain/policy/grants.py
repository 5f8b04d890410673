"""Grants: what a caller of `vb serve` or `vb mcp` may do, given by who is calling (its
token, or the flags the trusted host started the process with), never by what a request
names.

- `scopes`: the scopes it reads and writes; it also reads global. None: every scope.
- `agent`: an agent definition (`agents/<name>.md`) that narrows it further.
- `feedback`: it may credit memories (`/v1/vb/feedback`, `memory_feedback`).
- `personas`: it may list, create and switch personas (`memory_persona`).
- `session`: the one session it is bound to (a sandbox): every turn goes there, and no
  other session is named.

The full grant is what the person at this machine has (and what every caller had before
tokens carried scopes): every scope, feedback, personas, any session.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from vault_brain.domain.errors import ForbiddenError, NotFoundError
from vault_brain.domain.policy.scopes import GLOBAL, layers, parse_scopes

TOKEN_HINT = "`vb token add NAME --scope ...` makes a token for that scope"


@dataclass(frozen=True)
class Grant:
    name: str | None = None
    """Who holds it: a token's name, `session:<id>` for a sandbox; None for the person."""
    scopes: tuple[str, ...] | None = None
    """The scopes it reads and writes (and global, which it reads too); None: every scope."""
    agent: str | None = None
    """An agent (agents/<name>.md) whose own limits apply as well."""
    feedback: bool = True
    """It may credit memories (feedback)."""
    personas: bool = True
    """It may list, create and switch personas."""
    session: str | None = None
    """The session it is bound to (None: any)."""
    private: bool = True
    """It reads private notes (`private: true`, what `--allow-secret` stores, or a path in
    STRATEGY.md's `private_paths`): the person's own, never an agent's (`AGENT`), a
    sandbox's or a scoped token's."""

    # -- what it is ----------------------------------------------------------------------
    @property
    def is_full(self) -> bool:
        return (
            self.scopes is None
            and self.agent is None
            and self.feedback
            and self.personas
            and self.session is None
            and self.private
        )

    @property
    def confined(self) -> bool:
        """It may not see the whole vault: some scopes only, or one session only."""
        return self.scopes is not None or self.session is not None

    @property
    def who(self) -> str:
        if self.name is None:
            return "this caller"
        kind, _, rest = self.name.partition(":")
        return f"session {rest}" if kind == "session" and rest else f"token {self.name!r}"

    def readable(self) -> list[str] | None:
        """The scopes it reads (None: every scope): its own and global."""
        return None if self.scopes is None else layers(self.scopes)

    def writable(self) -> list[str] | None:
        """The scopes it writes (None: every scope)."""
        return None if self.scopes is None else list(self.scopes)

    def may_read(self, scope: str, private: bool = False) -> bool:
        """It may read a note of `scope` (marked private or not)."""
        if private and not self.private:
            return False
        allowed = self.readable()
        return allowed is None or scope in allowed

    def default_scope(self) -> str | None:
        """Where a memory stored without a scope goes (None: the caller's usual default)."""
        return None if not self.scopes else self.scopes[0]

    # -- checks (each raises ForbiddenError with a hint) ---------------------------------
    def check_read(self, scope: str, ref: str, rel: str, private: bool = False) -> None:
        """A note it may not read is, to it, a note that does not exist (`ref` as given,
        `rel` its path: the same words as for an unknown id or path)."""
        if not self.may_read(scope, private):
            raise unknown_note(ref, rel)

    def check_write(self, scope: str) -> None:
        allowed = self.writable()
        if allowed is None or scope in allowed:
            return
        raise ForbiddenError(
            f"{self.who} may not write scope {scope} (it writes {', '.join(allowed)})",
            hint=f"store it in one of those scopes; {TOKEN_HINT}",
        )

    def conversation_scopes(self, requested: Iterable[str]) -> list[str]:
        """A conversation's scopes: those a request names (each must be its own), else its
        own (none for the full grant: global only, as before)."""
        given = list(requested)
        if self.scopes is None:
            return given
        outside = [s for s in given if s not in self.scopes]
        if outside:
            raise ForbiddenError(
                f"{self.who} may not use scope {outside[0]} "
                f"(it is granted {', '.join(self.scopes)})",
                hint=f"leave memory_scope out to use its own scopes; {TOKEN_HINT}",
            )
        return given or list(self.scopes)

    def search_scopes(self, requested: tuple[str, ...]) -> tuple[str, ...]:
        """A search's scope filter (normalised: () means any) narrowed to what it reads."""
        allowed = self.readable()
        if allowed is None:
            return requested
        if not requested:
            return tuple(allowed)
        outside = [s for s in requested if s not in allowed]
        if outside:
            raise ForbiddenError(
                f"{self.who} may not read scope {outside[0]} (it reads {', '.join(allowed)})",
                hint="search the scopes it reads, or leave the scope out",
            )
        return requested

    def bound_session(self, requested: str | None) -> str | None:
        """The session a call acts in: its own when bound (naming another is refused)."""
        if self.session is None:
            return requested
        if requested is not None and requested != self.session:
            raise ForbiddenError(
                f"{self.who} may act only in its own session, not {requested!r}",
                hint="leave the session out: it is set for you",
            )
        return self.session

    def check_feedback(self) -> None:
        if not self.feedback:
            raise ForbiddenError(
                f"{self.who} may not give feedback",
                hint="feedback comes from the person (vb feedback, /good and /bad in vb "
                "session), or from a token made with `vb token add NAME --feedback`",
            )

    def check_personas(self) -> None:
        if not self.personas:
            raise ForbiddenError(
                f"{self.who} may not list, create or switch personas",
                hint="a person runs `vb persona`",
            )

    def check_vault_wide(self, what: str) -> None:
        """Work over the whole vault (compaction, every note's credit) needs every scope."""
        if self.confined:
            raise ForbiddenError(
                f"{self.who} may not {what}: it changes notes of every scope",
                hint="a person runs it from the command line (vb maintain)",
            )


FULL = Grant()
AGENT = Grant(private=False)
"""Every agent path (MCP, `vb serve`, hooks, `vb session`) at most: all but private notes."""


def unknown_note(ref: str, rel: str) -> NotFoundError:
    """What a caller is told of a note it may not read: what it is told of no note at all
    (the words `app.memory.notes.resolve` uses for an unknown id, or path)."""
    if "/" in ref or "\\" in ref or ref.lower().endswith(".md"):
        return NotFoundError(f"no note at {rel!r}", hint="check the path with `vb list`")
    return NotFoundError(f"no note with id {ref!r}", hint="find ids with `vb list` or `vb search`")


def session_grant(session: str, scopes: Iterable[str]) -> Grant:
    """The grant of a sandboxed agent bound to `session`: that session's scopes (global
    when it has none), no feedback, no personas, no private notes."""
    own = tuple(parse_scopes(list(scopes))) or (GLOBAL,)
    return Grant(f"session:{session}", own, None, False, False, session, private=False)
