"""A warm `Searcher` (the one `vb serve`, `vb mcp` and batch searches keep) returns exactly what
the straightforward path returns, and sees an edit once the index is reconciled.

The reference below is the search as it was before the warm path: Whoosh's own search and
BM25F (a tree of union matchers, field lengths looked up per posting) and the filter and the
archive mask given to Whoosh as queries, read anew for every search. The warm path adds up
the same per-field scores in another order, so scores are compared to 12 significant digits
(the order of the hits exactly)."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path
from typing import Any

import pytest
from whoosh import scoring
from whoosh.query import Or, Term

from conftest import REPO
from vault_brain.app.memory.memo import redacted, token_count
from vault_brain.app.memory.vault import Vault
from vault_brain.app.runtime.proxy import recall
from vault_brain.domain.gate.redaction import redact_spans
from vault_brain.domain.notes.model import Filters
from vault_brain.storage.index import bm25
from vault_brain.storage.index.schema import TEXT_FIELDS
from vault_brain.storage.index.search import Hit, Searcher
from vault_brain.storage.tokens import get_counter

sys.path.insert(0, str(REPO / "scripts"))
import gen_vault

NOW = dt.datetime(2026, 11, 22, 12, 0, tzinfo=dt.UTC)
FILTERS = [
    Filters(),
    Filters(include_archive=True),
    Filters(type="entity"),
    Filters(category="projects"),
    Filters(scopes=("global",)),
    Filters(scopes=("user:ann", "global")),
    Filters(scopes=("user:ann",)),
    Filters(scopes=("chat:tg:1",)),  # no note: nothing
]


class Reference(Searcher):
    def _top(
        self, searcher: Any, terms: list[str], limit: int, allow: Any, mask: Any
    ) -> list[tuple[int, float]]:
        searcher.weighting = scoring.BM25F(B=self.policy.bm25_b, K1=self.policy.bm25_k1)
        query = Or([Term(field, t) for t in terms for field in TEXT_FIELDS])
        found = searcher.search(query, limit=limit, filter=allow, mask=mask)
        return [(hit.docnum, float(hit.score)) for hit in found]

    def _allow_and_mask(self, searcher: Any, filters: Filters) -> tuple[Any, Any]:
        mask = None if filters.include_archive else Term("archived", True)
        return self._filter(filters), mask


def queries() -> list[str]:
    words = gen_vault.sample_queries(40, seed=3)
    asked = [f"What do you know about {w}?" for w in words[:20]] + words[20:]
    long = " ".join(gen_vault.sample_queries(80, seed=4))  # over MAX_QUERY_TERMS terms
    return [*asked, long, long[:300], "alpha", "zzzunknownword", "the and of"]


def key(hits: list[Hit]) -> list[tuple[Any, ...]]:
    return [(h.id, h.path, f"{h.score:.12g}", f"{h.bm25:.12g}", h.credit, h.snippet) for h in hits]


def same(vault: Vault, k: int = 15) -> int:
    """Asserts the warm searcher equals the reference for every query and filter; returns
    how many hits were compared."""
    reference = Reference(vault.index, vault.policy)
    compared = 0
    for n, query in enumerate(queries()):
        filters = FILTERS[n % len(FILTERS)].normalized()
        for _ in range(2):  # cold, then warm caches
            got = vault.searcher.search(query, k=k, filters=filters, now=NOW)
            assert key(got) == key(reference.search(query, k=k, filters=filters, now=NOW)), query
        compared += len(got)
    return compared


def write(root: Path, rel: str, scope: str, body: str, title: str = "Ann's note") -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"---\nid: {path.stem}\ntype: entity\ncategory: people\ntitle: {title}\n"
        f"scope: {scope}\n---\n{body}\n",
        encoding="utf-8",
    )


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    made = gen_vault.generate(tmp_path_factory.mktemp("warm") / "vault", 500, seed=5)
    words = gen_vault.sample_queries(30, seed=3)
    for n, text in enumerate(words):
        scope = "user:ann" if n % 2 else "global"
        write(made.root, f"entities/people/ann-{n}.md", scope, f"Ann said {text} twice: {text}.")
    return made.root


def test_warm_search_returns_exactly_what_the_reference_does(root: Path) -> None:
    vault = Vault.open(root)
    vault.reconcile()
    assert same(vault) > 200
    # a reopened index (another process committed) is read anew, and still the same
    write(root, "entities/people/ann-0.md", "user:ann", "Ann moved the whole note elsewhere.")
    Vault.open(root).reconcile()
    assert same(vault) > 200


def test_the_terms_left_out_by_their_bound_change_no_hit(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """MaxScore (`bm25.top_docs`) stops adding up a term's postings once its bound cannot
    bring a document into the top, and looks that term up for the documents left: by
    skipping through its postings, or in the postings kept. At 500 notes the frequent words
    are too short for either; with both forced, the hits are still the reference's."""
    monkeypatch.setattr(bm25, "_WORTH_A_CHECK", 0)  # the top is checked before every term
    for skip_cost in (0, 10**9):  # looked up by skipping, then in the postings kept
        monkeypatch.setattr(bm25, "_SKIP_COST", skip_cost)
        vault = Vault.open(root)
        vault.reconcile()
        assert same(vault) > 200


def test_an_edit_is_seen_by_the_next_search_after_a_reconcile(root: Path) -> None:
    reader, keeper = Vault.open(root), Vault.open(root)  # as `vb serve` and its IndexKeeper
    reader.reconcile()
    assert reader.searcher.search("quokkaberry", 5) == []
    write(root, "entities/people/quokka.md", "global", "The quokkaberry grows here.")
    assert reader.searcher.search("quokkaberry", 5) == []  # not reconciled yet
    keeper.reconcile(force=True)
    assert [h.path for h in reader.searcher.search("quokkaberry", 5)] == [
        "entities/people/quokka.md"
    ]
    # a scope change reaches the (remembered) filter sets too
    write(root, "entities/people/quokka.md", "user:ann", "The quokkaberry grows here.")
    keeper.reconcile(force=True)
    only_global = Filters(scopes=("global",)).normalized()
    assert reader.searcher.search("quokkaberry", 5, only_global) == []
    ann = Filters(scopes=("user:ann",)).normalized()
    assert len(reader.searcher.search("quokkaberry", 5, ann)) == 1
    # and the same vault object, reconciling itself (the live API), sees a removal
    (root / "entities/people/quokka.md").unlink()
    reader.reconcile(force=True)
    assert reader.searcher.search("quokkaberry", 5, ann) == []


def test_recall_memos_give_the_gates_and_counters_answers(root: Path) -> None:
    secret = "Ann's key is AKIAIOSFODNN7QWERTYU for the build."
    for text in ["plain words about the release", secret, "", "Ann said: run rm -rf / now"]:
        for _ in range(2):
            assert redacted(text) == redact_spans(text)
            assert token_count(text) == get_counter().count(text)
    write(root, "entities/people/keyholder.md", "global", secret, title="Keyholder zebrafinch")
    vault = Vault.open(root)
    vault.reconcile(force=True)
    first, again = recall(vault, "keyholder zebrafinch"), recall(vault, "keyholder zebrafinch")
    assert first == again
    assert first.memories and "AKIA" not in first.message


def test_a_warm_searcher_reads_new_terms_after_the_index_reopens(tmp_path: Path) -> None:
    """What the warm path keeps per segment outlives the reader it was read with: a term
    first asked after another process's commit reopened the index (closing the old
    readers) is read through the new reader, in the same unchanged segment."""
    root = gen_vault.generate(tmp_path / "vault", 60, seed=9).root
    for n in range(10):
        write(root, f"entities/people/p{n}.md", "global", f"Alder{n} and birch{n} in one note.")
    vault = Vault.open(root)
    vault.reconcile()
    assert len(vault.searcher.search("alder3", 5)) == 1  # alder3's note: lengths read
    write(root, "entities/people/late.md", "global", "A note committed elsewhere.")
    Vault.open(root).reconcile()  # another process: the searcher below reopens
    vault.reconcile()
    assert [h.path for h in vault.searcher.search("birch7", 5)] == ["entities/people/p7.md"]
