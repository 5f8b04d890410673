"""The vault as one object: paths, policy and index, built once per command and passed down."""

from __future__ import annotations

import os
from functools import cached_property
from typing import TYPE_CHECKING

from vault_brain.paths import VaultPaths, find_vault
from vault_brain.policy import Policy, load_policy

if TYPE_CHECKING:
    from vault_brain.index.search import Searcher
    from vault_brain.index.store import Index, Progress, ReconcileResult


class Vault:
    def __init__(self, paths: VaultPaths) -> None:
        self.paths = paths
        self._reconciled: ReconcileResult | None = None

    @classmethod
    def open(cls, path: str | os.PathLike[str] | None = None) -> Vault:
        return cls(find_vault(path))

    @property
    def root(self) -> os.PathLike[str]:
        return self.paths.root

    @cached_property
    def policy(self) -> Policy:
        return load_policy(self.paths)

    @cached_property
    def index(self) -> Index:
        from vault_brain.index.store import Index

        return Index(self.paths)

    def reconcile(self, progress: Progress | None = None, force: bool = False) -> ReconcileResult:
        """Reconcile the index with the files, once per command unless forced."""
        if self._reconciled is None or force:
            self._reconciled = self.index.reconcile(progress)
        return self._reconciled

    @cached_property
    def searcher(self) -> Searcher:
        from vault_brain.index.search import Searcher

        return Searcher(self.index, self.policy)
