"""The vault as one object: paths, environment, policy, index and LLM, built once per command
(or once per server) and passed down."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from vault_brain.domain.errors import VaultBrainError
from vault_brain.domain.policy import Policy
from vault_brain.storage.env import Environment
from vault_brain.storage.events import emit
from vault_brain.storage.files import Transaction, transaction
from vault_brain.storage.index.search import Searcher
from vault_brain.storage.index.store import Index, Progress, ReconcileResult
from vault_brain.storage.paths import VaultPaths, find_vault
from vault_brain.storage.policy_file import load_policy

if TYPE_CHECKING:
    from vault_brain.storage.llm import LLM


class Vault:
    def __init__(self, paths: VaultPaths, env: Environment | None = None) -> None:
        self.paths = paths
        self.env = env or Environment()
        self._reconciled: ReconcileResult | None = None

    @classmethod
    def open(cls, path: str | Path | None = None, env: Environment | None = None) -> Vault:
        """The vault at `path`, else $VB_VAULT, else the nearest folder with STRATEGY.md."""
        env = env or Environment()
        given = str(path) if path is not None else None
        return cls(find_vault(given, env.vault, lock_timeout=env.lock_timeout), env)

    @property
    def root(self) -> Path:
        return self.paths.root

    @cached_property
    def policy(self) -> Policy:
        return load_policy(self.paths)

    @cached_property
    def index(self) -> Index:
        return Index(self.paths)

    @cached_property
    def searcher(self) -> Searcher:
        return Searcher(self.index, self.policy)

    def reconcile(
        self, progress: Progress | None = None, force: bool = False, timeout: float | None = None
    ) -> ReconcileResult:
        """Reconcile the index with the files, once per command unless forced. `timeout`
        bounds the wait for another process's index lock (default: the vault's)."""
        if self._reconciled is None or force:
            self._reconciled = self.index.reconcile(progress, timeout)
        return self._reconciled

    def refresh(self, rels: list[str]) -> None:
        """After a write: re-index exactly these paths, best effort. Files are the truth and
        the index a cache, so a locked or damaged index never fails a write that is done;
        the next read reconciles."""
        with contextlib.suppress(VaultBrainError, OSError):
            self.index.refresh(rels)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Transaction]:
        """The vault lock and an undoable set of file changes (rolled back if the block
        raises); a `write` event names the files it changed."""
        with transaction(self.paths) as tx:
            yield tx
        if tx.touched:
            rels = sorted({p.relative_to(self.paths.root).as_posix() for p in tx.touched})
            emit(self.paths, "write", {"paths": rels})

    @cached_property
    def _llm(self) -> LLM | None:
        from vault_brain.storage.llm import LLM  # lazy: only steps that may call a model

        return LLM.from_config(self.env.values)

    def llm(self) -> LLM | None:
        """The configured model, or None to use the offline methods (one place decides)."""
        return self._llm
