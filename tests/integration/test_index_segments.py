"""`Index.merge_later` (what `vb session` uses): small writes commit without merging Whoosh's
segments, up to a bound, and `merge` merges them when it is quiet; the index holds the same
documents as one whose every commit merged, and as a rebuild."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from vault_brain.storage.index import segments
from vault_brain.storage.index.search import Searcher
from vault_brain.storage.index.store import Index
from vault_brain.storage.paths import VaultPaths
from vault_brain.storage.policy.file import load_policy
from vault_brain.storage.template import init_vault


def make_vault(root: Path, notes: int = 40) -> VaultPaths:
    init_vault(root)
    for n in range(notes):
        path = root / "entities" / "projects" / f"note-{n}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\ntitle: Note {n}\n---\nQuokka fact number {n}.\n", encoding="utf-8")
    return VaultPaths(root)


def touch(paths: VaultPaths, n: int, count: int) -> str:
    """A counter change, as a session's access counters make it."""
    rel = f"entities/projects/note-{n}.md"
    text = f"---\ntitle: Note {n}\naccess_count: {count}\n---\nQuokka fact number {n}.\n"
    (paths.root / rel).write_text(text, encoding="utf-8")
    return rel


def segment_count(index: Index) -> int:
    return len(index._open()._segments())


def rows(index: Index) -> dict[str, Any]:
    return {row["path"]: row for _, row in index.rows()}


def test_small_writes_leave_merging_to_a_quiet_moment_and_hold_the_same_documents(
    tmp_path: Path,
) -> None:
    paths = make_vault(tmp_path / "vault")
    index = Index(paths)
    index.reconcile()
    start = segment_count(index)
    index.merge_later = True
    for n in range(12):
        index.refresh([touch(paths, n % 5, n + 1)])
    assert segment_count(index) == start + 12  # one segment a write, none merged
    found = Searcher(index, load_policy(paths)).search("quokka fact number 3", 5)
    assert found and found[0].path == "entities/projects/note-3.md"
    assert index.merge()  # the quiet moment
    assert segment_count(index) < start + 12
    rebuilt = Index(paths)
    rebuilt.rebuild()
    assert rows(Index(paths)) == rows(rebuilt)
    assert rows(rebuilt)["entities/projects/note-4.md"]["access_count"] == 10


def test_unmerged_segments_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(segments, "MAX_UNMERGED", 6)
    paths = make_vault(tmp_path / "vault")
    index = Index(paths)
    index.reconcile()
    index.merge_later = True
    counts = []
    for n in range(15):
        index.refresh([touch(paths, n, 1)])
        counts.append(segment_count(index))
    assert max(counts) <= 6 + 1  # at the bound a write merges, as every write used to
    assert json.loads(paths.manifest.read_text())["files"]  # (the manifest is kept as ever)


def test_writers_name_segments_apart_even_when_the_process_seeds_random(tmp_path: Path) -> None:
    """Whoosh names a new segment from the process-wide `random` generator; a process that
    seeds it (as a forked writer sharing its state does) would reuse a name, and the second
    commit would fail. vb's writers name segments from the OS's random source instead."""
    import random

    from whoosh import index as whoosh_index
    from whoosh.fields import ID, Schema

    ix = whoosh_index.create_in(str(tmp_path), Schema(path=ID(stored=True)))
    for n in range(3):
        random.seed(7)  # the same state before every commit
        writer = segments.writer(ix)
        writer.add_document(path=f"note-{n}.md")
        writer.commit(merge=False)
    with ix.searcher() as searcher:
        assert searcher.doc_count() == 3
    assert len({segment.segment_id() for segment in ix._segments()}) == 3


def test_a_rebuild_in_batches_holds_every_note_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Thousands of notes are indexed in batches (`store.BATCH`), each its own commit, the
    next one read while one commits: the index holds every note once, as one batch would,
    and a later change to a note of the first batch replaces its document."""
    from vault_brain.storage.index import store

    paths = make_vault(tmp_path / "v", notes=2_300)
    monkeypatch.setattr(store, "BATCH", 1_000)  # 3 batches (a rebuild of >= 2,000 notes)
    index = Index(paths)
    result = index.rebuild()
    assert result.total == 2_300
    assert segment_count(index) > 2  # (two writer processes, one segment each, per batch)
    found = rows(index)
    assert len(found) == 2_300 and index.searcher().doc_count() == 2_300
    assert json.loads(paths.manifest.read_text(encoding="utf-8"))["files"].keys() == found.keys()
    touch(paths, 3, 7)
    assert index.reconcile().updated == ["entities/projects/note-3.md"]
    assert rows(index)["entities/projects/note-3.md"]["access_count"] == 7
    assert index.searcher().doc_count() == 2_300
    hits = Searcher(index, load_policy(paths)).search("quokka 2299", k=3)
    assert hits[0].path == "entities/projects/note-2299.md"


def test_vbs_indexing_writes_the_segment_whooshs_own_would(tmp_path: Path) -> None:
    """vb's index writing (the analyzer's one loop, `NoteText`'s counting, the writer's
    lengths read whole: `segments._WrittenLengths`) writes every part of a segment with the
    bytes Whoosh's own writer, TEXT fields and StemmingAnalyzer chain write (in vb's format,
    `TermWeights`, whose postings have no values), for documents
    with empty fields, long fields, fields most documents lack, mixed case and Unicode."""
    import random

    from whoosh import index as windex
    from whoosh.analysis import StemmingAnalyzer
    from whoosh.fields import TEXT, Schema

    from vault_brain.storage.index.schema import STOP_WORDS, NoteText, TermWeights, build_schema

    rng = random.Random(5)
    words = [f"w{n}" for n in range(300)] + [
        "Running",
        "runs",
        "the",
        "Ünïcödé",
        "naïve",
        "café,",
        "it's",
        "3.14",
        "and",
        "v1.2",
    ]
    docs = []
    for n in range(900):
        docs.append(
            {
                "path": f"n{n}.md",
                "title": " ".join(rng.choices(words, k=rng.randint(0, 4))),
                "body": " ".join(rng.choices(words, k=rng.choice([0, 3, 40, 700, 5000]))),
                **({"previously": "old w1 w2 w3 RUNNING"} if n % 97 == 0 else {}),
            }
        )
    ours = build_schema()
    chain = StemmingAnalyzer(stoplist=STOP_WORDS, minsize=1)

    def whooshs_text(field: NoteText) -> TEXT:
        """Whoosh's own TEXT field, StemmingAnalyzer chain and indexing, with vb's postings
        format (counts through Whoosh's token stream, no value per posting)."""
        text = TEXT(analyzer=chain, phrase=False, stored=field.stored)
        text.format = TermWeights(field_boost=field.format.field_boost)
        return text

    whooshs = Schema(
        **{name: whooshs_text(f) if isinstance(f, NoteText) else f for name, f in ours.items()}
    )
    parts = []
    for name, schema, make in (
        ("whoosh", whooshs, lambda ix: ix.writer()),
        ("vb", ours, segments.writer),
    ):
        folder = tmp_path / name
        folder.mkdir()
        ix = windex.create_in(str(folder), schema)
        writer = make(ix)
        for doc in docs:
            writer.add_document(**doc)
        writer.commit()
        (segment,) = ix._segments()
        compound = segment.open_compound_file(ix.storage)
        parts.append({n.split(".", 1)[1]: compound.open_file(n).read() for n in compound.list()})
        compound.close()
    plain, vb = parts
    assert set(plain) == set(vb) and {"pst", "trm", "_body_len.col"} <= set(plain)
    for ext in plain:
        assert vb[ext] == plain[ext], ext
