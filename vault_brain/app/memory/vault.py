"""The vault as one object: paths, environment, policy, index and LLM, built once per command
(or once per server) and passed down."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from vault_brain.domain.errors import VaultBrainError
from vault_brain.domain.policy.settings import Policy
from vault_brain.storage.env import Environment
from vault_brain.storage.events import emit
from vault_brain.storage.files import remove_dead_temps, vault_lock
from vault_brain.storage.index.scan import ReconcileResult
from vault_brain.storage.index.search import Searcher
from vault_brain.storage.index.store import Index, Progress
from vault_brain.storage.paths import VaultPaths, find_vault
from vault_brain.storage.policy.file import load_policy
from vault_brain.storage.transaction import Transaction, pending_journals, recover, transaction

if TYPE_CHECKING:
    from vault_brain.storage.llm.client import LLM


class Vault:
    def __init__(self, paths: VaultPaths, env: Environment | None = None) -> None:
        self.paths = paths
        self.env = env or Environment()
        self._reconciled: ReconcileResult | None = None
        self.writing: Callable[[list[str]], None] | None = None
        """Told the paths a transaction is about to change, before it changes them, and
        `indexed` the paths a refresh was asked to index, with their stamps as the index
        now holds them (`vb serve` tells its index keeper, whose readers then do not wait
        for a write still under way)."""
        self.indexed: Callable[[list[str], dict[str, list[int] | None]], None] | None = None
        self.kept = False
        """An index keeper watches this vault for the process (`MemoryAPI.keep_index`): a
        write leaves the index to it (its thread indexes what the watcher reports, and each
        read first waits for every earlier change to be indexed) instead of indexing inline."""
        self.progress: Progress | None = None
        """Told `(done, total)` by a reconcile that indexes files, when its caller gave no
        progress of its own (the command line draws a progress line with it)."""

    @classmethod
    def open(cls, path: str | Path | None = None, env: Environment | None = None) -> Vault:
        """The vault at `path`, else $VB_VAULT, else the nearest folder with STRATEGY.md."""
        env = env or Environment()
        given = str(path) if path is not None else None
        paths = find_vault(
            given, env.vault, lock_timeout=env.lock_timeout, cache_home=env.cache_home
        )
        vault = cls(paths, env)
        vault._finish_interrupted()
        return vault

    @property
    def root(self) -> Path:
        return self.paths.root

    @cached_property
    def policy(self) -> Policy:
        return load_policy(self.paths)

    @cached_property
    def index(self) -> Index:
        return Index(self.paths, tuple(self.policy.private_paths))

    @cached_property
    def searcher(self) -> Searcher:
        """The lexical searcher, or with `search_mode: hybrid` the hybrid one (lexical, after
        one warning line, when the embeddings extra is missing)."""
        if self.policy.search_mode == "hybrid":
            from vault_brain.storage.index.hybrid import hybrid_searcher  # lazy: numpy, model

            found = hybrid_searcher(self.index, self.policy)
            if found is not None:
                return found
        return Searcher(self.index, self.policy)

    def sync_embeddings(self, rebuild: bool = False, progress: Progress | None = None) -> None:
        """Hybrid search: embed what the index changed now rather than at the next search
        (every note with `rebuild`), telling `progress`; best effort, and nothing to do when
        lexical."""
        if self.policy.search_mode != "hybrid":
            return
        from vault_brain.storage.index.hybrid import HybridSearcher, warn_once

        searcher = self.searcher
        if isinstance(searcher, HybridSearcher):
            try:
                searcher.sync(rebuild, progress or self.progress)
            except Exception as exc:  # a cache: the next search tries again
                warn_once(f"the embeddings were not updated ({type(exc).__name__}: {exc})")

    def reconcile(
        self, progress: Progress | None = None, force: bool = False, timeout: float | None = None
    ) -> ReconcileResult:
        """Reconcile the index with the files, once per command unless forced. `timeout`
        bounds the wait for another process's index lock (default: the vault's)."""
        if self._reconciled is None or force:
            self._finish_interrupted()
            self._reconciled = self.index.reconcile(progress or self.progress, timeout)
        return self._reconciled

    def _finish_interrupted(self) -> None:
        """A change a kill interrupted (a journal left in .vb/) is finished before any
        command reads the vault; if another writer holds the lock, that writer finishes it
        (and on a vault vb cannot write, nobody can: it is read as it is)."""
        remove_dead_temps(self.paths.vb_dir, self.paths.journal_dir)
        if not pending_journals(self.paths):
            return
        with contextlib.suppress(VaultBrainError), vault_lock(self.paths, timeout=1.0):
            recover(self.paths)

    def reopened(self) -> Vault:
        """A new `Vault` on the same files (its policy read again), with this one's hooks:
        `writing`, `indexed`, `kept` and the index's `merge_later`."""
        new = Vault(self.paths, self.env)
        new.writing, new.indexed, new.kept = self.writing, self.indexed, self.kept
        new.progress = self.progress
        new.index.merge_later = self.index.merge_later
        return new

    def refresh(self, rels: list[str]) -> None:
        """After a write: re-index exactly these paths, best effort. Files are the truth and
        the index a cache, so a locked or damaged index never fails a write that is done;
        the next read reconciles. Under an index keeper, the keeper does it (see `kept`)."""
        if self.kept:
            return
        stamps: dict[str, list[int] | None] = {}
        try:
            with contextlib.suppress(VaultBrainError, OSError):
                stamps = self.index.refresh(rels).stamps
        finally:
            if self.indexed is not None:
                self.indexed(rels, stamps)

    @contextlib.contextmanager
    def transaction(self, durable: bool = True) -> Iterator[Transaction]:
        """The vault lock and a set of file changes committed together when the block ends
        (none if it raises; see `storage.transaction`); a `write` event names the files."""
        with transaction(self.paths, durable=durable) as tx:
            yield tx
            rels = sorted({p.relative_to(self.paths.root).as_posix() for p in tx.touched})
            if self.writing is not None and rels:
                self.writing(rels)  # (the commit follows, as the block ends)
        if rels:
            emit(self.paths, "write", {"paths": rels})

    @cached_property
    def _llm(self) -> LLM | None:
        from vault_brain.storage.llm.client import LLM  # lazy: only steps that may call a model

        return LLM.from_config(self.env.values)

    def llm(self) -> LLM | None:
        """The configured model, or None to use the offline methods (one place decides)."""
        return self._llm
