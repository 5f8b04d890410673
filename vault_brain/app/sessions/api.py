"""The memory API's session, agent-loop and task methods (a part of `MemoryAPI`, kept in
its own module; see api.py for how the API is held)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vault_brain.app.memory.api_part import ApiPart

if TYPE_CHECKING:
    from vault_brain.app.sessions import loop
    from vault_brain.app.sessions.compaction import CompactionResult
    from vault_brain.app.sessions.flush import FlushResult
    from vault_brain.app.sessions.loop import ContextResult, IntakeResult, PersistResult
    from vault_brain.app.sessions.retention import SessionList, SessionsArchived
    from vault_brain.app.sessions.tasks import TaskChange, TaskList


class SessionsAndTasks(ApiPart):
    """Sessions, the agent loop and tasks; every module behind them is imported lazily."""

    # -- sessions and the agent loop -----------------------------------------------------------
    def intake(
        self,
        session: str,
        message: str,
        key: str | None = None,
        scopes: list[str] | None = None,
    ) -> IntakeResult:
        from vault_brain.app.sessions import loop  # lazy: start-up

        with self._use("lines") as vault:
            return loop.intake(vault, session, message, key, scopes)

    def context(self, session: str) -> ContextResult:
        from vault_brain.app.sessions import loop  # lazy: start-up

        with self._use("lines") as vault:
            return loop.build_context(vault, session, self._later(session)).result()

    def _later(self, session: str) -> loop.RecordLater | None:
        """How this session's retrievals are recorded, their counters waiting
        (`AccessRecorder.retrieved`), else None (another session's: recorded whole, at once)."""
        access = self.access
        if access is None or session != self.session:
            return None
        return access.retrieved

    def memories_for_message(
        self, session: str, message_id: str | None, text: str, source: str
    ) -> list[dict[str, Any]]:
        """The memories for one user message, retrieved once and recorded for credit (not
        recorded when the message has no id, e.g. it could not be written)."""
        from vault_brain.app.sessions import loop  # lazy: start-up

        with self._use("skip") as vault:
            return loop.memories_for_message(
                vault, session, message_id or "", text, None, source, record=bool(message_id)
            )

    def persist(self, session: str, records: list[dict[str, Any]]) -> PersistResult:
        from vault_brain.app.sessions import loop  # lazy: start-up

        with self._use("lines") as vault:
            return loop.persist(vault, session, records)

    def recover_counters(self) -> list[str]:
        """Access counters a `vb session` or `vb mcp` killed before writing them left
        waiting, written (see `app.memory.access`); returns the sessions recovered."""
        from vault_brain.app.memory.access import recover_counters  # lazy: start-up

        with self._use("skip") as vault:
            return recover_counters(vault)

    def flush(self, session: str, dry_run: bool = False) -> FlushResult:
        from vault_brain.app.sessions.flush import flush  # lazy: start-up

        with self._use(operation=None if dry_run else f"flush: {session}") as vault:
            return flush(vault, session, dry_run=dry_run, llm=vault.llm())

    def compact_session(
        self, session: str, dry_run: bool = False, force: bool = False
    ) -> CompactionResult:
        from vault_brain.app.sessions.compaction import compact  # lazy: start-up

        with self._use() as vault:
            llm = None if dry_run else vault.llm()
            return compact(vault, session, dry_run=dry_run, force=force, llm=llm)

    def sessions(self) -> SessionList:
        from vault_brain.app.sessions.retention import SessionList  # lazy: start-up
        from vault_brain.storage.sessions.transcript import SessionIndex

        with self._use("skip") as vault:
            infos = SessionIndex(vault.paths).all()
        infos.sort(key=lambda r: r.last_activity, reverse=True)
        return SessionList(infos)

    def archive_sessions(
        self, older_than_days: float | None = None, dry_run: bool = False
    ) -> SessionsArchived:
        from vault_brain.app.sessions.retention import SessionsArchived, archive_sessions  # lazy

        with self._use() as vault:
            moved = archive_sessions(vault, older_than_days, dry_run=dry_run)
        return SessionsArchived(dry_run, moved)

    # -- tasks -------------------------------------------------------------------------------
    def tasks(
        self, status: str | None = None, milestone: str | None = None, ready: bool = False
    ) -> TaskList:
        from vault_brain.app.sessions import tasks  # lazy: start-up

        with self._use("skip") as vault:
            views = tasks.list_tasks(vault, status, milestone, ready)
        return tasks.TaskList.of(views)

    def add_task(self, description: str, **options: Any) -> TaskChange:
        from vault_brain.app.sessions import tasks  # lazy: start-up

        with self._use() as vault:
            return tasks.TaskChange.of(tasks.add_task(vault, description, **options))

    def update_task(self, task_id: str, **changes: Any) -> TaskChange:
        from vault_brain.app.sessions import tasks  # lazy: start-up

        with self._use() as vault:
            return tasks.TaskChange.of(tasks.update_task(vault, task_id, **changes))

    def done_task(self, task_id: str, force: bool = False) -> TaskChange:
        from vault_brain.app.sessions import tasks  # lazy: start-up

        with self._use() as vault:
            return tasks.TaskChange.of(tasks.done_task(vault, task_id, force))

    def block_task(self, task_id: str, by: list[str]) -> TaskChange:
        from vault_brain.app.sessions import tasks  # lazy: start-up

        with self._use() as vault:
            return tasks.TaskChange.of(tasks.block_task(vault, task_id, by))
