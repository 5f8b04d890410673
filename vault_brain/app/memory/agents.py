"""Agent definitions kept in the vault (`agents/<name>.md`) and the scopes they grant.

---
role: project          # admin | project | skill
read: [user:ana]       # scopes read besides its own and global
write: [chat:tg:42]    # scopes written besides its own
---
What this agent is for (free text).
"""

from __future__ import annotations

from dataclasses import replace

from vault_brain.app.memory.vault import Vault
from vault_brain.domain.errors import ForbiddenError, NotFoundError, VaultBrainError
from vault_brain.domain.notes.model import Filters
from vault_brain.domain.policy.scopes import Agent, agent_from
from vault_brain.domain.text import slugify
from vault_brain.storage.notes.frontmatter import parse_text

AGENTS = "agents"


def load_agent(vault: Vault, name: str) -> Agent:
    """The agent `name` as its definition in the vault says (raises when there is none)."""
    slug = slugify(name)
    if not slug or slug != name.strip().lower():
        raise VaultBrainError(
            f"agent name {name!r} is not a plain name",
            hint="use letters, digits and hyphens, as in the file agents/<name>.md",
        )
    path = vault.paths.note(f"{AGENTS}/{slug}.md")
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise NotFoundError(
            f"no agent {slug}: {AGENTS}/{slug}.md does not exist",
            hint=f"create {AGENTS}/{slug}.md with front matter role: admin, project or skill",
        ) from None
    parsed = parse_text(raw)
    if parsed.error:
        raise VaultBrainError(
            f"{AGENTS}/{slug}.md: malformed front matter ({parsed.error})",
            hint="fix the YAML between the --- lines",
        )
    return agent_from(slug, parsed.meta)


def readable_filters(agent: Agent | None, filters: Filters) -> Filters:
    """`filters` (normalised) narrowed to the scopes `agent` may read."""
    if agent is None or (allowed := agent.readable()) is None:
        return filters
    if not filters.scopes:
        return replace(filters, scopes=tuple(allowed))
    outside = [s for s in filters.scopes if s not in allowed]
    if outside:
        raise ForbiddenError(
            f"agent {agent.name} may not read scope {outside[0]} (it reads {', '.join(allowed)})",
            hint="search the scopes it reads, or add the scope under read: in its definition",
        )
    return filters


def check_readable(agent: Agent | None, scope: str, ref: str) -> None:
    if agent is None or (allowed := agent.readable()) is None:
        return
    if scope not in allowed:
        raise ForbiddenError(
            f"{ref} is in scope {scope}, which agent {agent.name} may not read",
            hint="read it as a person (vb show), or add the scope under read: in its definition",
        )
