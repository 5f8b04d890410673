"""`vb watch` keeps the index current with no reconcile by readers: atomic saves, renames,
deletes and folder moves made behind its back show up in the index itself."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from conftest import stop_process, watching
from vault_brain.app.memory.vault import Vault


def indexed_ids(root: Path, query: str) -> list[str]:
    """Search the index as it is, without the reconcile every vb command does first."""
    vault = Vault.open(root)
    try:
        return [h.id for h in vault.searcher.search(query, k=20)]
    finally:
        vault.index.close()


def wait_for(check: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return False


def atomic_save(path: Path, text: str) -> None:
    """What editors and Obsidian do: write a temp file, then rename it over the note."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


@pytest.fixture
def watcher(vault: Path) -> Iterator[subprocess.Popen[str]]:
    with watching(vault) as proc:
        yield proc


def test_watcher_indexes_hand_edits_live(vault: Path, watcher: subprocess.Popen[str]) -> None:
    note = vault / "entities/people/gus.md"
    note.write_text("---\ntitle: Gus\n---\nGus collects marbles.\n", encoding="utf-8")
    assert wait_for(lambda: indexed_ids(vault, "marbles") == ["entity-people-gus"])

    atomic_save(note, "---\ntitle: Gus\n---\nGus collects stamps.\n")
    assert wait_for(lambda: indexed_ids(vault, "stamps") == ["entity-people-gus"])
    assert indexed_ids(vault, "marbles") == []

    note.rename(vault / "entities/people/gustav.md")
    assert wait_for(lambda: indexed_ids(vault, "stamps") == ["entity-people-gustav"])

    (vault / "entities/people").rename(vault / "entities/persons")
    assert wait_for(lambda: indexed_ids(vault, "stamps") == ["entity-persons-gustav"])

    (vault / "entities/persons/gustav.md").unlink()
    assert wait_for(lambda: indexed_ids(vault, "stamps") == [])


def test_watcher_ignores_temp_files_and_vb_dirs(
    vault: Path, watcher: subprocess.Popen[str]
) -> None:
    (vault / "entities/people/.draft.md.tmp").write_text("quokka", encoding="utf-8")
    (vault / ".obsidian/notes.md").write_text("quokka", encoding="utf-8")
    (vault / "entities/people/real.md").write_text("quokka sighting", encoding="utf-8")
    assert wait_for(lambda: indexed_ids(vault, "quokka") == ["entity-people-real"])
    manifest = json.loads((vault / ".vb/manifest.json").read_text())["files"]
    assert all(not p.startswith(".obsidian") and not p.endswith(".tmp") for p in manifest)


def test_status_reports_live_watcher(vault: Path, watcher: subprocess.Popen[str], cli) -> None:  # type: ignore[no-untyped-def]
    report = cli("--vault", str(vault), "status", "--json").json()
    assert report["watcher"]["alive"] is True
    assert report["watcher"]["pid"] == watcher.pid
    stop_process(watcher)
    assert cli("--vault", str(vault), "status", "--json").json()["watcher"]["alive"] is False
