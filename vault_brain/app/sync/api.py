"""The memory API's git methods: commit, sync, history and log, personas, export and graph
(a part of `MemoryAPI`, kept in its own module; see api.py for how the API is held)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from vault_brain.app.memory.api_part import ApiPart
from vault_brain.app.memory.commits import commit_at
from vault_brain.domain.policy.grants import unknown_note

if TYPE_CHECKING:
    from vault_brain.app.memory.vault import Vault
    from vault_brain.app.sync.clone import FetchOldResult
    from vault_brain.app.sync.conflicts import ConflictList, ConflictResolved
    from vault_brain.app.sync.export import ExportResult
    from vault_brain.app.sync.graph import GraphResult
    from vault_brain.app.sync.history import HistoryResult, LogResult
    from vault_brain.app.sync.persona import PersonaResult
    from vault_brain.app.sync.remote import SyncResult
    from vault_brain.domain.notes.model import Note


class GitOps(ApiPart):
    """Every module behind these is imported lazily (GitPython takes ~0.1 s)."""

    _vault: Vault

    def _restricted(self) -> bool:
        raise NotImplementedError  # MemoryAPI._restricted

    def _may_read(self, scope: str, private: bool = False) -> bool:
        raise NotImplementedError  # MemoryAPI._may_read

    def _private(self, vault: Vault, note: Note) -> bool:
        raise NotImplementedError  # MemoryAPI._private

    def commit(self, message: str, moment: str | None = None) -> str | None:
        """Commit the vault's changes with git; returns what happened (never raises). At a
        `moment` (session, lifecycle) only when `commit_on` names it (else None). A live
        API records the retrievals still pending first: their access counters are in it."""
        with self._use() as vault:
            if moment is not None:
                return commit_at(vault, moment, message)
            from vault_brain.storage.git.repo import commit_vault  # lazy: start-up

            return commit_vault(vault.paths, message)

    def sync(
        self,
        remote: str = "origin",
        say: Callable[[str], None] | None = None,
        retry_for: float | None = None,
    ) -> SyncResult:
        """Commit, fetch, merge and push through the git remote (see `app.sync.remote`);
        a push rejected because another machine pushed first is retried for `retry_for`
        seconds (None: `RETRY_FOR`)."""
        from vault_brain.app.sync.remote import RETRY_FOR, sync  # lazy: start-up (GitPython)

        return sync(self._vault, remote, say, RETRY_FOR if retry_for is None else retry_for)

    def fetch_old(
        self,
        what: list[str],
        everything: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ) -> FetchOldResult:
        """Check out what `vb clone` left out (`archive`, `sessions`, a folder or file, or
        everything): git fetches the blobs; then the index (see `app.sync.clone`)."""
        from vault_brain.app.sync.clone import fetch_old  # lazy: start-up

        self.grant.check_vault_wide("fetch what the clone left out")
        with self._use("skip") as vault:
            return fetch_old(vault, what, everything, progress)

    def conflicts(self) -> ConflictList:
        """The conflict copies a merge wrote and no one resolved yet."""
        from vault_brain.app.sync.conflicts import list_conflicts  # lazy: start-up

        with self._use("skip") as vault:
            return list_conflicts(vault)

    def keep_conflict(self, side: str, ref: str) -> ConflictResolved:
        """Resolve one conflict copy: keep `mine`, `theirs`, or `merge` both texts into the
        note for the person to edit (see `app.sync.conflicts`); a commit of its own."""
        from vault_brain.app.sync.conflicts import keep  # lazy: start-up (GitPython)

        self.grant.check_vault_wide("resolve conflict copies")
        with self._use() as vault:
            return keep(vault, side, ref)

    def history(self, ref: str, patch: bool = False) -> HistoryResult:
        """Every change to one memory, from git (see `app.sync.history`); with `patch`, the
        text of each change as a unified diff."""
        from vault_brain.app.sync.history import history  # lazy: start-up (GitPython)

        with self._use("skip") as vault:
            if self._restricted():  # a memory it may read, or (to it) no note at all
                from vault_brain.app.memory.notes import resolve
                from vault_brain.storage.notes.read import load_note

                rel = resolve(vault, ref, memory_only=True)
                note = load_note(vault.paths.root, rel)
                if not self._may_read(note.scope, self._private(vault, note)):
                    raise unknown_note(ref, rel)
                ref = rel
            return history(vault, ref, patch)

    def log(self, limit: int | None = None) -> LogResult:
        """The vault's commits, newest first, with the memory operations each recorded."""
        from vault_brain.app.sync.history import vault_log  # lazy: start-up (GitPython)

        return vault_log(self._vault, limit)

    def persona(
        self, action: str, name: str | None = None, start: str | None = None
    ) -> PersonaResult:
        """List, create, switch, merge or cherry-pick personas: git branches of the vault
        (see `app.sync.persona`); the index follows."""
        from vault_brain.app.sync.persona import persona  # lazy: start-up (GitPython)

        self.grant.check_personas()
        with self._use() as vault:
            return persona(vault, action, name, start)

    def export(
        self,
        fmt: str,
        history: bool = False,
        persona: str | None = None,
        for_agent: bool = False,
    ) -> ExportResult:
        """The notes as JSON (a versioned schema) or Markdown (see `app.sync.export`); for an
        agent (`for_agent`, or any caller that is not the person) without private notes."""
        from vault_brain.app.sync.export import export  # lazy: start-up

        private = self.grant.private and not for_agent
        return export(self._vault, fmt, history, persona, private=private)

    def graph(self, kind: str = "branches") -> GraphResult:
        """A Mermaid diagram written into a note under graphs/ (see `app.sync.graph`)."""
        from vault_brain.app.sync.graph import graph  # lazy: start-up (GitPython)

        return graph(self._vault, kind)
