"""Session retention: transcripts idle longer than `session_retention_days` move to
archive/sessions/ (never deleted)."""

from __future__ import annotations

import datetime as dt

from vault_brain.app.memory.results import Result, result
from vault_brain.app.memory.vault import Vault
from vault_brain.domain.clock import days_between, parse_time
from vault_brain.storage.sessions.transcript import SessionIndex, SessionInfo


def archive_sessions(
    vault: Vault,
    older_than_days: float | None = None,
    *,
    dry_run: bool = False,
    now: dt.datetime | None = None,
) -> list[str]:
    now = now or dt.datetime.now().astimezone()
    limit = vault.policy.session_retention_days if older_than_days is None else older_than_days
    index = SessionIndex(vault.paths)
    old = [
        info.id for info in index.all() if days_between(parse_time(info.last_activity), now) > limit
    ]
    if dry_run or not old:
        return old
    with vault.transaction() as tx:
        for session_id in old:
            src = vault.paths.transcript(session_id)
            dest = vault.paths.archive_dir / "sessions" / src.name
            tx.move(src, dest)
        SessionIndex(vault.paths, tx).forget(old)
    return old


@result
class SessionList(Result):
    sessions: list[SessionInfo]
    """Most recently active first."""


@result
class SessionsArchived(Result):
    dry_run: bool
    sessions: list[str]
    """Ids of the sessions moved (or, with a dry run, that would be) to archive/sessions/."""
