"""Scopes: whose a memory is, and who may read or write it.

A note may carry `scope` in its front matter: `global` (the default: a note without the key
is global, so vaults written before scopes behave as before), `user:<id>` (one person's
preferences and facts, across their chats), `chat:<channel>:<id>` (one conversation) or
`agent:<name>` (one agent's own memory). A conversation reads its chat scope, its user's
scope and global; capture files each kind in the scope the policy names for it.

Agents are defined in the vault (`agents/<name>.md`): an `admin` reads and writes every
scope, a `project` agent reads and writes its own scope and those listed under `write` and
also reads those under `read` and global, a `skill` agent is given retrieval context from
the scopes under `read` and global and writes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from vault_brain.domain.errors import ForbiddenError, UsageError, VaultBrainError
from vault_brain.domain.text import slugify, unique

GLOBAL = "global"
ALL = "all"  # a search filter meaning "any scope"
_ID = r"-?[A-Za-z0-9][\w.@+-]{0,79}"  # telegram group ids are negative
_SCOPE = re.compile(rf"^(?:global|user:{_ID}|chat:{_ID}:{_ID}|agent:{_ID})$")
SCOPE_HINT = "a scope is global, user:<id>, chat:<channel>:<id> or agent:<name>"
ROLES = ("admin", "project", "skill")


def check_scope(value: str, what: str = "scope") -> str:
    """A scope as given by a person or an agent, checked (raises with a hint)."""
    scope = str(value).strip()
    if not _SCOPE.fullmatch(scope):
        raise UsageError(f"{what} {value!r} is not a scope", hint=SCOPE_HINT)
    return scope


def parse_scopes(value: Any, what: str = "scope") -> list[str]:
    """Scopes from a comma-separated string or a list (empty when none given)."""
    if value is None or value == "":
        return []
    items = value.split(",") if isinstance(value, str) else list(value)
    return unique(check_scope(str(item), what) for item in items if str(item).strip())


def note_scope(value: Any) -> str:
    """The scope a note's front matter gives it: global when missing. A value vb cannot read
    is kept as written, so only a search naming it exactly finds the note (never leaked)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return GLOBAL
    return str(value).strip()


def layers(scopes: Iterable[str]) -> list[str]:
    """What a conversation with these scopes reads: its chat scopes, its user scopes, global."""
    given = list(scopes)
    chats = [s for s in given if s.startswith("chat:")]
    users = [s for s in given if s.startswith("user:")]
    others = [s for s in given if s not in chats and s not in users and s != GLOBAL]
    return unique([*chats, *users, *others, GLOBAL])


def scope_for(kind: str, scopes: Iterable[str], user_kinds: Iterable[str]) -> str:
    """The scope capture files a statement of `kind` in, for a conversation with `scopes`:
    the user's scope for `user_kinds` (identity, preferences, people by default), the chat's
    for the rest (decisions, plans, projects, the episode); the other one when the
    conversation has only one of them; global when it has neither."""
    given = list(scopes)
    user = next((s for s in given if s.startswith("user:")), None)
    chat = next((s for s in given if s.startswith("chat:")), None)
    agent = next((s for s in given if s.startswith("agent:")), None)
    preferred = (user, chat) if kind in set(user_kinds) else (chat, user)
    return next((s for s in (*preferred, agent) if s), GLOBAL)


def scope_folder(scope: str) -> str:
    """The folder under an entity category that holds a scope's notes ("" for global)."""
    return "" if scope == GLOBAL else slugify(scope.replace(":", "-"))


@dataclass(frozen=True)
class Agent:
    """An agent definition (`agents/<name>.md`) and what it may read and write."""

    name: str
    role: str
    read: tuple[str, ...] = ()
    write: tuple[str, ...] = ()

    @property
    def own(self) -> str:
        return f"agent:{self.name}"

    def readable(self) -> list[str] | None:
        """The scopes it reads (None: every scope)."""
        if self.role == "admin":
            return None
        own = [self.own, *self.write] if self.role == "project" else []  # it reads what it writes
        return unique([*own, *self.read, GLOBAL])

    def writable(self) -> list[str] | None:
        """The scopes it may write (None: every scope; [] for a skill)."""
        if self.role == "admin":
            return None
        if self.role == "skill":
            return []
        return unique([self.own, *self.write])

    def default_scope(self) -> str:
        """Where a store without a scope goes."""
        return GLOBAL if self.role == "admin" else self.own

    def check_write(self, scope: str) -> None:
        allowed = self.writable()
        if allowed is None or scope in allowed:
            return
        if not allowed:
            raise ForbiddenError(
                f"agent {self.name} is a skill agent and writes no memory",
                hint="store it through an agent that may write, or make this one a project agent",
            )
        raise ForbiddenError(
            f"agent {self.name} may not write scope {scope} (it writes {', '.join(allowed)})",
            hint=f"store it in one of those scopes, or add {scope} under write: in "
            f"agents/{self.name}.md",
        )


def agent_from(name: str, meta: Mapping[str, Any]) -> Agent:
    """An agent from its note's front matter (`role`, `read`, `write`), checked."""
    role = str(meta.get("role") or "project").strip().lower()
    if role not in ROLES:
        raise VaultBrainError(
            f"agents/{name}.md: role {role!r} is not one of {', '.join(ROLES)}",
            hint="set role: admin, project or skill in its front matter",
        )
    where = f"agents/{name}.md"
    return Agent(
        name,
        role,
        tuple(parse_scopes(meta.get("read"), f"{where}: read scope")),
        tuple(parse_scopes(meta.get("write"), f"{where}: write scope")),
    )


def session_scopes(records: Iterable[Mapping[str, Any]]) -> list[str]:
    """A session's scopes: those of its latest message that names any (none: global only)."""
    latest: list[str] = []
    for record in records:
        given = record.get("scope")
        if given:
            try:
                latest = parse_scopes(given)
            except VaultBrainError:
                continue  # a hand-edited transcript line: the scopes before it stand
    return latest
