"""The knowledge index: a Whoosh BM25 index beside the notes' one (`.vb/knowledge/`) for
what is not a note -- extracted items, chunks of a project's source files, and messages of
session transcripts. A cache like the notes' index: rebuilt from the files whenever it is
missing, damaged or of an older schema.

Documents come in groups (an items file, one source file, one transcript) so a changed file
replaces exactly its own documents. `state.json` holds, per group, the stamp it was indexed
at; the application decides what changed (`app.memory.sources`).
"""

from __future__ import annotations

import contextlib
import json
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from vault_brain.storage.files import file_lock, write_cache
from vault_brain.storage.index.schema import analyzer
from vault_brain.storage.index.segments import writer as segment_writer
from vault_brain.storage.index.snippets import Snippets
from vault_brain.storage.paths import VaultPaths

VERSION = 1
FIELDS = ("key", "group", "kind", "project", "type", "path", "line", "session", "message")


@dataclass
class KnowledgeHit:
    kind: str  # items | sessions | sources
    key: str
    project: str
    type: str
    path: str
    line: int | None
    session: str | None
    message: str | None
    title: str
    body: str
    score: float
    snippet: str = ""


def _schema() -> Any:
    from whoosh.fields import ID, STORED, TEXT, Schema

    ana = analyzer()
    return Schema(
        key=ID(stored=True, unique=True),
        group=ID(stored=True),
        kind=ID(stored=True),
        project=ID(stored=True),
        type=ID(stored=True),
        path=STORED(),
        line=STORED(),
        session=STORED(),
        message=STORED(),
        title=TEXT(analyzer=ana, stored=True, phrase=False),
        body=TEXT(analyzer=ana, stored=True, phrase=False),
    )


class KnowledgeIndex:
    def __init__(self, paths: VaultPaths) -> None:
        self.paths = paths
        self.dir = paths.cache_dir / "knowledge"
        self.lock = paths.cache_dir / "knowledge.lock"
        self._ana = analyzer()
        self._snippets = Snippets(self._ana)

    # -- state --------------------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        """group -> the stamp it was indexed at ({} when the index must be built anew)."""
        try:
            data = json.loads((self.dir / "state.json").read_text("utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict) or data.get("version") != VERSION:
            return {}
        groups = data.get("groups")
        return dict(groups) if isinstance(groups, dict) else {}

    def _open(self, fresh: bool) -> Any:
        from whoosh import index

        if not fresh:
            with contextlib.suppress(Exception):  # missing or damaged: built anew
                return index.open_dir(str(self.dir))
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir.mkdir(parents=True, exist_ok=True)
        return index.create_in(str(self.dir), _schema())

    # -- writing ------------------------------------------------------------------------
    def update(
        self,
        replace: dict[str, tuple[Any, list[dict[str, Any]]]],
        drop: Iterable[str],
        append: dict[str, tuple[Any, list[dict[str, Any]]]] | None = None,
    ) -> None:
        """Groups replaced (new stamp, documents), dropped, and grown (new stamp, documents
        added to those already there); one commit, under the index's lock."""
        drop = list(drop)
        append = append or {}
        if not (replace or drop or append):
            return
        with file_lock(self.lock, "knowledge index", self.paths.lock_timeout):
            state = self.state()
            ix = self._open(fresh=not state)  # no state: the groups given are all there is
            writer = segment_writer(ix)
            try:
                for group in [*replace, *drop]:
                    writer.delete_by_term("group", group)
                    state.pop(group, None)
                for group, (stamp, docs) in replace.items():
                    for doc in docs:
                        writer.add_document(group=group, **doc)
                    state[group] = stamp
                for group, (stamp, docs) in append.items():  # another process may have
                    for doc in docs:  # added them meanwhile: keys are unique
                        writer.update_document(group=group, **doc)
                    state[group] = stamp
                writer.commit()
            except BaseException:
                writer.cancel()
                raise
            write_cache(self.dir / "state.json", json.dumps({"version": VERSION, "groups": state}))

    # -- reading ------------------------------------------------------------------------
    def terms(self, text: str) -> list[str]:
        return list(dict.fromkeys(t.text for t in self._ana(text[:2000])))[:64]

    def search(self, query: str, k: int, kinds: Iterable[str]) -> list[KnowledgeHit]:
        from whoosh import index
        from whoosh.query import Or, Term

        terms = self.terms(query)
        kinds = list(kinds)
        if not terms or not kinds or not (self.dir / "state.json").exists():
            return []
        try:
            ix = index.open_dir(str(self.dir))
        except Exception:  # being built for the first time by another process
            return []
        query_ = Or([Term(f, t) for t in terms for f in ("title", "body")])
        allow = Or([Term("kind", kind) for kind in kinds])
        stems = set(terms)
        with ix.searcher() as searcher:
            found = searcher.search(query_, limit=k, filter=allow)
            return [self._hit(dict(h), float(h.score), stems) for h in found]

    def _hit(self, doc: dict[str, Any], score: float, stems: set[str]) -> KnowledgeHit:
        body = str(doc.get("body") or "")
        return KnowledgeHit(
            kind=str(doc["kind"]),
            key=str(doc["key"]),
            project=str(doc.get("project") or ""),
            type=str(doc.get("type") or ""),
            path=str(doc.get("path") or ""),
            line=doc.get("line"),
            session=doc.get("session"),
            message=doc.get("message"),
            title=str(doc.get("title") or ""),
            body=body,
            score=score,
            snippet=self._snippets.snippet(body, stems),
        )

    def counts(self) -> dict[str, int]:
        """Documents per kind (for vb status)."""
        from whoosh import index

        try:
            ix = index.open_dir(str(self.dir))
        except Exception:
            return {}
        from whoosh.query import Term

        with ix.searcher() as searcher:
            return {
                kind: sum(1 for _ in searcher.docs_for_query(Term("kind", kind)))
                for kind in ("items", "sessions", "sources")
            }
