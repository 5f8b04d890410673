"""A rebuild that follows files while they are written (`Index.rebuild(arriving=...)`, as a
clone's checkout writes them): it indexes them as they come, and at the end every file is
indexed as it ends, a file read half-written included."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from whoosh.query import Term

from vault_brain.storage.index import store
from vault_brain.storage.index.scan import scan
from vault_brain.storage.index.store import Index
from vault_brain.storage.paths import VaultPaths
from vault_brain.storage.template import init_vault


def note(root: Path, rel: str, body: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\ntitle: {path.stem}\n---\n{body}\n", encoding="utf-8")
    return path


def found(index: Index, word: str) -> set[str]:
    hits = index.searcher().search(Term("body", word), limit=None)  # (the index's own searcher)
    return {hit["path"] for hit in hits}


def test_a_build_that_follows_a_writer_indexes_each_file_as_it_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store, "FOLLOW_ROUND", 3)
    monkeypatch.setattr(store, "FOLLOW_PAUSE", 0.01)
    root = tmp_path / "vault"
    init_vault(root)
    first_round = threading.Event()
    seen_while_writing: list[tuple[int, int]] = []

    def writer() -> None:
        half = note(root, "entities/half.md", "alpha")  # (read before the rest is written)
        for n in range(4):
            note(root, f"entities/early{n}.md", "alpha")
        assert first_round.wait(30), "the build indexed nothing while files were written"
        with half.open("a", encoding="utf-8") as rest:
            rest.write("omega\n")
        for n in range(5):  # (slowly: a build that stopped looking would miss some)
            time.sleep(0.05)
            note(root, f"episodes/2026-11/late{n}.md", "omega")

    writing = threading.Thread(target=writer)

    def progress(done: int, total: int) -> None:
        if writing.is_alive():
            seen_while_writing.append((done, total))
            if done and done == total:
                first_round.set()

    writing.start()
    index = Index(VaultPaths(root))
    result = index.rebuild(progress, arriving=writing.is_alive)
    writing.join()

    assert seen_while_writing, "nothing was indexed while the files were being written"
    assert result.total == 10
    assert found(index, "alpha") == {"entities/half.md"} | {
        f"entities/early{n}.md" for n in range(4)
    }
    assert found(index, "omega") == {"entities/half.md"} | {
        f"episodes/2026-11/late{n}.md" for n in range(5)
    }
    assert index.load_manifest() == scan(VaultPaths(root))


def test_a_build_that_follows_nothing_arriving_is_a_plain_rebuild(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    init_vault(root)
    for n in range(3):
        note(root, f"entities/n{n}.md", "alpha")
    index = Index(VaultPaths(root))
    assert index.rebuild(arriving=lambda: False).total == 3
    assert len(found(index, "alpha")) == 3
