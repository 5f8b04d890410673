"""Hybrid search (`search_mode: hybrid`): BM25 candidates and the notes nearest in meaning,
fused by `domain.notes.ranking.fuse`, then re-ranked with credit and recency like lexical hits.

The embeddings follow the index: before each search, up to `SEARCH_EMBEDS` notes whose
text changed since their vector was made are embedded (the index has just been reconciled,
so this is exactly what changed); `vb index` and each batch of `vb watch` embed all of them
ahead of time, saving as they go; a note write never touches them. Filters (type,
category, tag, scope, archive) select the vector side's candidates through the same Whoosh
document sets as the lexical side. Whatever fails on the embedding side is logged and the
search answers lexically: it never fails a search.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

from vault_brain.domain.capture.supersede import current_text
from vault_brain.domain.notes.model import PERSON, Filters
from vault_brain.domain.notes.ranking import blend, fuse
from vault_brain.domain.policy.settings import Policy
from vault_brain.storage.index.search import MAX_QUERY_CHARS, Hit, Searcher
from vault_brain.storage.index.segments import row_column
from vault_brain.storage.index.store import Index, Progress
from vault_brain.storage.notes.read import note_from_bytes
from vault_brain.storage.regular import read_regular

log = logging.getLogger("vault_brain.search")
INSTALL_HINT = "pip install 'vault-brain[embeddings]'"
# notes a search embeds before answering (a few seconds at most); `vb index` and `vb watch`
# embed the rest ahead of time
SEARCH_EMBEDS = 16
_warned: set[str] = set()


def warn_once(message: str) -> None:
    """One line on stderr (or the server's log) per process and message."""
    if message not in _warned:
        _warned.add(message)
        log.warning("vb: %s", message)


def hybrid_searcher(index: Index, policy: Policy) -> HybridSearcher | None:
    """A hybrid searcher, or None (after one warning line) when the embeddings extra is not
    installed or its model does not load: the caller searches lexically."""
    try:
        from vault_brain.storage.index import vectors

        vectors.encoder(policy.embedding_model, index.paths.embeddings.parent)
    except ImportError:
        warn_once(
            f"search_mode: hybrid needs the embeddings extra ({INSTALL_HINT}); searching lexically"
        )
        return None
    except Exception as exc:  # a damaged install: lexical search still answers
        warn_once(f"the embedding model did not load ({exc}); searching lexically")
        return None
    return HybridSearcher(index, policy)


class HybridSearcher(Searcher):
    """A `Searcher` whose hits fuse BM25 with embedding similarity."""

    def __init__(self, index: Index, policy: Policy) -> None:
        super().__init__(index, policy)
        from vault_brain.storage.index.vectors import Vectors

        self._vectors: Vectors | None = None
        self.embedded: list[str] = []
        """The notes the last `sync` embedded (what changed since the one before)."""
        self._docnums_of: Any = None  # the Whoosh searcher `_docnums_found` was read from
        self._docnums_found: dict[str, int] = {}
        self._synced_with: Any = None  # the manifest the vectors were last fully synced with

    def sync(
        self, rebuild: bool = False, progress: Progress | None = None, limit: int | None = None
    ) -> list[str]:
        """Bring the embeddings in line with the index's manifest (all of them again with
        `rebuild`), telling `progress` how far it is and saving after each batch; returns
        the notes embedded. With `limit`, at most that many are embedded now: the others
        are found by BM25 alone until a later sync (one warning line says how many)."""
        from vault_brain.storage.index.vectors import Vectors

        target = self.index.paths.embeddings
        model = self.policy.embedding_model
        if self._vectors is None or rebuild:
            if rebuild:
                self._vectors = Vectors(model, target.parent)
            else:
                self._vectors = Vectors.load(target, model)
            if self._vectors.damaged:
                warn_once(f"rebuilding the embeddings cache ({self._vectors.damaged})")
        vectors = self._vectors
        files = self.index.load_manifest() or {}
        if files is self._synced_with and not rebuild:
            self.embedded = []  # (the manifest this process read last: nothing changed)
            return self.embedded
        self.embedded = vectors.sync(
            files, self._note_text, progress, limit=limit, checkpoint=lambda: vectors.save(target)
        )
        if vectors.dirty:
            vectors.save(target)
        self._synced_with = files if not vectors.pending else None
        if vectors.pending:
            warn_once(
                f"{vectors.pending} changed notes are not embedded yet, so only their words "
                "find them: `vb index` embeds them (with progress), `vb watch` keeps them current"
            )
        return self.embedded

    def _note_text(self, rel: str) -> str | None:
        try:
            raw = read_regular(self.index.paths.note(rel))
        except OSError:
            return None
        try:
            note = note_from_bytes(rel, raw)
        except Exception:  # (the index reads such a note as a problem: embed its bytes)
            return raw.decode("utf-8", "replace")
        return f"{note.title}\n{current_text(note.body)}"  # (its Previously lines: not current)

    def search(
        self,
        text: str,
        k: int = 10,
        filters: Filters | None = None,
        now: dt.datetime | None = None,
        *,
        snippets: bool = True,
    ) -> list[Hit]:
        if k <= 0 or not text.strip():
            return []
        filters = filters or Filters()
        try:
            hits = self._fused(text, k, filters, now)
        except Exception as exc:  # the embedding side never fails a search
            warn_once(f"hybrid search failed ({type(exc).__name__}: {exc}); searching lexically")
            hits = super().search(text, k, filters, now, snippets=False)
        if snippets:
            self._snippets(hits, set(self.terms(text)))
        return hits

    def _fused(self, text: str, k: int, filters: Filters, now: dt.datetime | None) -> list[Hit]:
        """The top `k` of the fusion: both sides' candidates are scored from the index's
        row column alone; only the `k` kept read their stored summary."""
        import numpy as np

        self.sync(limit=SEARCH_EMBEDS)
        vectors = self._vectors
        assert vectors is not None
        searcher = self._searcher()
        docnum_of = self._docnums(searcher)
        allow, mask = self._allow_and_mask(searcher, filters)
        if isinstance(allow, set) and not allow:
            return []  # (Whoosh reads an empty filter as none)
        pool = max(k, self.policy.hybrid_candidates)
        terms = self.terms(text)
        bm25 = {
            str(self._row(doc).get("path", "")): score
            for doc, score in (self._top(searcher, terms, pool, allow, mask) if terms else [])
        }
        sims = vectors.similarity(text[:MAX_QUERY_CHARS]) if vectors.rels else np.zeros(0)

        def allowed(rel: str) -> bool:
            doc = docnum_of.get(rel)
            if doc is None:
                return False
            return (allow is None or doc in allow) and (mask is None or doc not in mask)

        similarity: dict[str, float] = {}
        for row in np.argsort(-sims, kind="stable"):
            rel = vectors.rels[row]
            if allowed(rel):
                similarity[rel] = float(sims[row])
                if len(similarity) >= pool:
                    break
        for rel in bm25:
            row = vectors.row_of.get(rel)
            similarity.setdefault(rel, float(sims[row]) if row is not None else -1.0)
        fused = fuse(
            bm25,
            similarity,
            rule=self.policy.hybrid_fusion,
            weight=self.policy.hybrid_vector_weight,
            rrf_k=self.policy.hybrid_rrf_k,
        )
        now_ts = (now or dt.datetime.now().astimezone()).timestamp()
        scored = []
        for rel, relevance in fused.items():
            doc = docnum_of.get(rel)
            if doc is None:
                continue
            row = self._row(doc)
            score, eff = blend(relevance, row, self.policy, now_ts)
            scored.append((score, relevance, rel, doc, row, eff))
        scored.sort(key=lambda item: (-item[0], item[2]))
        return [
            Hit(
                id=str(row.get("id", "")),
                path=rel,
                title=str(row.get("title") or ""),
                type=str(row.get("type") or ""),
                category=str(row.get("category") or ""),
                score=score,
                snippet="",
                bm25=bm25.get(rel, 0.0),
                credit=eff,
                relevance=relevance,
                summary=str(searcher.stored_fields(doc).get("summary", "")),
                written_by=str(row.get("source") or PERSON),
            )
            for score, relevance, rel, doc, row, eff in scored[:k]
        ]

    def explain(self, text: str, hits: list[Hit], now: dt.datetime | None = None) -> None:
        """As `Searcher.explain`, with each hit's embedding `similarity` to the query (the
        relevance is then the fusion of BM25 and similarity, `hybrid_fusion`)."""
        super().explain(text, hits, now)
        vectors = self._vectors
        if vectors is None or not vectors.rels:
            return
        sims = vectors.similarity(text[:MAX_QUERY_CHARS])
        for hit in hits:
            row = vectors.row_of.get(hit.path)
            if hit.explain is not None and row is not None:
                hit.explain["similarity"] = round(float(sims[row]), 4)

    def _docnums(self, searcher: Any) -> dict[str, int]:
        """Path -> docnum of every live note, read once per open Whoosh searcher."""
        if searcher is not self._docnums_of:
            reader = searcher.reader()
            found: dict[str, int] = {}
            for doc, raw in enumerate(row_column(reader)):
                if raw and not reader.is_deleted(doc):
                    found[str(self._row(doc)["path"])] = doc
            self._docnums_of, self._docnums_found = searcher, found
        return self._docnums_found
