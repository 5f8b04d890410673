"""The memory API's knowledge methods: `vb extract`, `vb items`, and searches that cover
extracted items, project sources and transcripts beside memory (a part of `MemoryAPI`, kept in
its own module; see api.py for how the API is held)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from vault_brain.app.memory.api_part import ApiPart
from vault_brain.app.memory.results import Result, SearchHit, result
from vault_brain.domain.errors import ForbiddenError, NotFoundError, UsageError
from vault_brain.domain.knowledge.scope import fuse, parse_sources

if TYPE_CHECKING:
    from vault_brain.app.knowledge.extract import ExtractResult
    from vault_brain.app.knowledge.imports import ImportResult
    from vault_brain.app.memory.vault import Vault
    from vault_brain.domain.knowledge.extract import Item
    from vault_brain.domain.policy.scopes import Agent


@result
class ItemList(Result):
    items: list[dict[str, Any]]
    """Items as items.json holds them (id, type, title, content, sourceFile, lineNumber,
    confidence, extractedAt, project, ...), by project, file and line."""
    count: int


def check_sources(value: str | Sequence[str]) -> tuple[str, ...]:
    try:
        return parse_sources(value)
    except ValueError as exc:
        raise UsageError(str(exc), hint="for example --in memory,items") from None


class Knowledge(ApiPart):
    agent: Agent | None

    def extract(
        self,
        paths: list[str],
        project: str | None = None,
        dry_run: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ) -> ExtractResult:
        """Items from a project's files into its items.json (see `app.knowledge.extract`)."""
        from vault_brain.app.knowledge.extract import extract  # lazy: start-up

        if self.agent is not None and self.agent.role != "admin":
            raise ForbiddenError(
                f"agent {self.agent.name!r} may not extract", hint="a person runs vb extract"
            )
        with self._use() as vault:
            return extract(vault, paths, project, dry_run=dry_run, progress=progress)

    def import_memories(
        self,
        kind: str | None,
        source: str,
        dry_run: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ) -> ImportResult:
        """Another tool's memory files as notes, through the gate, each once (see
        `app.knowledge.imports`); `kind` None: told by the source's files."""
        from vault_brain.app.knowledge.imports import import_source  # lazy: start-up

        if self.agent is not None and self.agent.role != "admin":
            raise ForbiddenError(
                f"agent {self.agent.name!r} may not import", hint="a person runs vb import"
            )
        self.grant.check_vault_wide("import memories")
        operation = None if dry_run else f"import {kind or 'memories'}"
        with self._use(operation=operation) as vault:
            return import_source(vault, kind, source, dry_run=dry_run, progress=progress)

    def _all_items(self, vault: Vault, project: str | None) -> list[Item]:
        from vault_brain.app.memory.sources import items_files  # lazy: start-up
        from vault_brain.storage.knowledge.items import items_rel, read_items

        if project is not None:
            files = [items_rel(vault.policy.items_path, project)]
        else:
            files = items_files(vault)
        return [item for rel in files for item in read_items(vault.root / rel)[0]]

    def items(
        self,
        project: str | None = None,
        type_: str | None = None,
        source: str | None = None,
    ) -> ItemList:
        """Extracted items, filtered by project, type and source file (or folder)."""
        with self._use("skip") as vault:
            found = [
                i.to_json()
                for i in self._all_items(vault, project)
                if (type_ is None or i.type == type_)
                and (
                    source is None
                    or i.source_file == source
                    or i.source_file.startswith(source.rstrip("/") + "/")
                )
            ]
        return ItemList(found, len(found))

    def item(self, item_id: str) -> ItemList:
        with self._use("skip") as vault:
            found = [i.to_json() for i in self._all_items(vault, None) if i.id == item_id]
        if not found:
            raise NotFoundError(
                f"no item {item_id!r}", hint="vb items list shows the ids (vb search --in items)"
            )
        return ItemList(found, len(found))

    def _knowledge(
        self, vault: Vault, query: str, k: int, sources: tuple[str, ...], notes: list[SearchHit]
    ) -> list[SearchHit]:
        """Notes (already found) and the other sources' results for `query`, fused by rank."""
        if sources == ("memory",):
            return notes
        # lazy: start-up (the knowledge index)
        from vault_brain.app.memory import sources as knowledge

        if "sessions" in sources and self.agent is not None and self.agent.role != "admin":
            raise ForbiddenError(
                f"agent {self.agent.name!r} may not search session transcripts",
                hint="search memory, items or sources",
            )
        if "sessions" in sources and self.grant.confined:
            raise ForbiddenError(
                f"{self.grant.who} may not search session transcripts",
                hint="search memory, items or sources",
            )
        lists: list[tuple[str, list[Any]]] = []
        if "memory" in sources:
            lists.append(("memory", notes))
        for kind in sources:
            if kind != "memory":
                lists.append((kind, knowledge.search(vault, query, k, (kind,))))
        if len(lists) == 1:
            return [knowledge.hit_of(h, h.score) for h in lists[0][1]]
        out = []
        for source, score, found in fuse(lists, k):
            if source == "memory":
                out.append(dataclasses.replace(found, score=score))
            else:
                out.append(knowledge.hit_of(found, score))
        return out
