"""Sync as a person sees it, with real git (a bare repository as the remote, clones as the
machines `a` and `b`, each with its own VB_MACHINE): what `vb sync` says it did, `vb status`'s
sync block, conflict copies named after the machine whose text they hold, tags merged as a
union, `vb conflicts` and its resolutions as commits, and a merge driver that still merges
after the environment moved."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from test_sync import TOPIC, clone, edit_line, remote

from conftest import git
from vault_brain.app.api import MemoryAPI
from vault_brain.domain.notes.model import Filters
from vault_brain.domain.sync.merge import read_trailers
from vault_brain.storage.git.sync import driver_command
from vault_brain.storage.notes.frontmatter import parse_text

__all__ = ["remote"]  # the fixture, shared with test_sync


def today() -> str:
    """The day a copy made just now is named with (read when asserted, not at import: a run
    that crosses midnight would otherwise expect yesterday's)."""
    return dt.date.today().isoformat()


@pytest.fixture
def as_machine(cli: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """`vb --vault ROOT ARGS...` run as the machine named by ROOT's folder (VB_MACHINE)."""

    def run(root: Path, *args: str) -> Any:
        monkeypatch.setenv("VB_MACHINE", root.name)
        return cli("--vault", str(root), *args)

    return run


def count(root: Path) -> int:
    return int(parse_text((root / TOPIC).read_bytes()).meta.get("access_count") or 0)


def synced(as_machine: Any, root: Path) -> dict[str, Any]:
    res = as_machine(root, "sync", "--json")
    assert res.exit_code == 0, res.stdout + res.stderr
    doc: dict[str, Any] = res.json()
    return doc


def clash(remote: Path, as_machine: Any, cli: Any) -> tuple[Path, Path, str]:
    """`a` and `b` change line 4 of TOPIC differently; a syncs first, then b: b's merge keeps
    b's text and writes a's beside it. Returns (a, b, the copy's path)."""
    a, b = remote.parent / "a", clone(remote, "b", cli)
    edit_line(a, TOPIC, "Line 4 of", "Line four as a wrote it, of")
    edit_line(b, TOPIC, "Line 4 of", "Line four as b wrote it, of")
    synced(as_machine, a)
    doc = synced(as_machine, b)
    assert len(doc["conflict_copies"]) == 1
    return a, b, doc["conflict_copies"][0]


def test_a_conflict_copy_is_named_after_the_machine_whose_text_it_holds(
    remote: Path, as_machine: Any, cli: Any
) -> None:
    _a, b, copy = clash(remote, as_machine, cli)
    assert copy == f"entities/projects/topic-3 (conflict a {today()}).md"
    text = (b / copy).read_text()
    assert "Line four as a wrote it" in text and "as b wrote it" not in text
    assert "Line four as b wrote it" in (b / TOPIC).read_text()
    merge = git("log", "-1", "--format=%B", cwd=b)
    trailers = read_trailers(merge)
    assert trailers.machine == "b" and trailers.copies == [(TOPIC, copy)]


def test_a_person_s_own_git_merge_names_the_copy_after_the_other_machine(
    remote: Path, as_machine: Any, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = remote.parent / "a", clone(remote, "b", cli)
    edit_line(a, TOPIC, "Line 4 of", "Line four as a wrote it, of")
    edit_line(b, TOPIC, "Line 4 of", "Line four as b wrote it, of")
    synced(as_machine, a)
    git("commit", "-qam", "b's own edit", cwd=b)
    git("fetch", "-q", "origin", cwd=b)
    monkeypatch.setenv("VB_MACHINE", "b")  # (git passes it on to the driver it runs)
    git("merge", "-q", "--no-edit", "origin/main", cwd=b)
    assert (b / f"entities/projects/topic-3 (conflict a {today()}).md").is_file()


def test_tags_both_machines_changed_merge_as_a_union_without_a_copy(
    remote: Path, as_machine: Any, cli: Any
) -> None:
    a, b = remote.parent / "a", clone(remote, "b", cli)
    MemoryAPI.open(a).update(TOPIC, tags=["alpha", "shared"])
    MemoryAPI.open(b).update(TOPIC, tags=["beta", "shared"])
    synced(as_machine, a)
    assert synced(as_machine, b)["conflict_copies"] == []
    synced(as_machine, a)
    for machine in (a, b):
        meta = parse_text((machine / TOPIC).read_bytes()).meta
        assert sorted(meta["tags"]) == ["alpha", "beta", "shared"]
        assert not list(machine.rglob("*(conflict *"))


def test_a_copy_reaches_no_agent_and_is_listed_by_vb_conflicts(
    remote: Path, as_machine: Any, cli: Any
) -> None:
    _a, b, copy = clash(remote, as_machine, cli)
    api = MemoryAPI.open(b)
    agent = api.search("four", k=10, filters=Filters(current_only=True)).results
    assert copy not in [hit.path for hit in agent] and TOPIC in [hit.path for hit in agent]
    listed = as_machine(b, "conflicts", "--json").json()["copies"]
    assert listed == [{"copy": copy, "note": TOPIC, "machine": "a", "day": today()}]
    text = as_machine(b, "status").stdout
    assert "conflict copies: 1 (`vb conflicts` resolves them)" in text and copy in text
    memory = (b / "MEMORY.md").read_text() if (b / "MEMORY.md").exists() else ""
    assert "(conflict " not in memory


def test_a_copy_a_person_retrieved_earns_no_credit(remote: Path, as_machine: Any, cli: Any) -> None:
    _a, b, copy = clash(remote, as_machine, cli)
    before = (b / copy).read_bytes()
    person = MemoryAPI.open(b, session="p1")
    found = [hit.path for hit in person.search("four", k=10).results]
    assert found.index(TOPIC) < found.index(copy)  # shown to the person, below the note
    result = person.feedback("good")
    assert [s.reason for s in result.skipped] == ["a conflict copy (see `vb conflicts`)"]
    assert TOPIC in [c.path for c in result.changes]
    assert parse_text((b / copy).read_bytes()).meta["credit"] == parse_text(before).meta["credit"]


def test_keep_theirs_leaves_one_note_with_the_copy_s_text_as_a_commit(
    remote: Path, as_machine: Any, cli: Any
) -> None:
    a, b, copy = clash(remote, as_machine, cli)
    before = parse_text((b / TOPIC).read_bytes()).meta
    res = as_machine(b, "conflicts", "keep", "theirs", TOPIC, "--json")
    assert res.exit_code == 0, res.stdout + res.stderr
    done = res.json()
    assert done["kept"] == "theirs" and done["commit"].startswith("committed ")
    assert not (b / copy).exists() and (b / done["archived"]).is_file()
    assert done["archived"].startswith("archive/")
    note = parse_text((b / TOPIC).read_bytes())
    assert "Line four as a wrote it" in note.body and "as b wrote it" not in note.body
    assert note.meta["id"] == before["id"] and "conflict_of" not in note.meta
    assert note.meta.get("access_count") == before.get("access_count")
    live = [p for p in b.rglob("topic-3*.md") if "archive" not in p.parts]
    assert [p.relative_to(b).as_posix() for p in live] == [TOPIC]
    assert git("status", "--porcelain", cwd=b) == ""
    assert git("log", "-1", "--format=%s", cwd=b).startswith("vb conflicts: ")
    assert as_machine(b, "conflicts", "--json").json()["copies"] == []
    latest = as_machine(b, "history", TOPIC, "--json").json()["entries"][0]
    assert latest["operations"] == ["conflict resolved"]
    synced(as_machine, b)
    synced(as_machine, a)
    assert (a / TOPIC).read_bytes() == (b / TOPIC).read_bytes()
    assert not (a / copy).exists()


def test_mine_is_the_text_this_machine_wrote_on_either_machine(
    remote: Path, as_machine: Any, cli: Any
) -> None:
    """On `a`, whose text the copy holds, `keep mine` gives the note a's text."""
    a, b, copy = clash(remote, as_machine, cli)
    synced(as_machine, a)
    listed = as_machine(a, "conflicts").stdout
    assert f"  a's text, {today()}: {copy}" in listed
    res = as_machine(a, "conflicts", "keep", "mine", TOPIC)
    assert res.exit_code == 0, res.stderr
    assert "kept this machine's text" in res.stdout
    body = parse_text((a / TOPIC).read_bytes()).body
    assert "Line four as a wrote it" in body and "as b wrote it" not in body
    synced(as_machine, a)
    synced(as_machine, b)
    assert (b / TOPIC).read_bytes() == (a / TOPIC).read_bytes()


def test_keep_mine_archives_the_copy_and_merge_puts_both_texts_in_the_note(
    remote: Path, as_machine: Any, cli: Any
) -> None:
    a, b, copy = clash(remote, as_machine, cli)
    mine = (b / TOPIC).read_bytes()
    res = as_machine(b, "conflicts", "keep", "mine", copy)  # the copy named, not the note
    assert res.exit_code == 0, res.stderr
    assert (b / TOPIC).read_bytes() == mine and not (b / copy).exists()
    synced(as_machine, b)
    synced(as_machine, a)

    edit_line(a, TOPIC, "Line 7 of", "Line seven as a wrote it, of")
    edit_line(b, TOPIC, "Line 7 of", "Line seven as b wrote it, of")
    synced(as_machine, a)
    second = synced(as_machine, b)["conflict_copies"]
    assert len(second) == 1
    res = as_machine(b, "conflicts", "keep", "--merge", TOPIC)
    assert res.exit_code == 0, res.stderr
    body = parse_text((b / TOPIC).read_bytes()).body
    assert "Line seven as b wrote it" in body and "Line seven as a wrote it" in body
    assert "## The text the note kept" in body
    assert f"## a's text, from the conflict copy of {today()}" in body
    assert not (b / second[0]).exists()


def test_keep_with_a_note_that_has_no_copy_says_so(remote: Path, as_machine: Any, cli: Any) -> None:
    a = remote.parent / "a"
    res = as_machine(a, "conflicts", "keep", "theirs", TOPIC)
    assert res.exit_code != 0 and "has no conflict copy" in res.stderr
    res = as_machine(a, "conflicts", "keep", "both", TOPIC)
    assert res.exit_code != 0 and "vb conflicts keep mine NOTE" in res.stderr


def test_sync_says_what_it_received_and_pushed(remote: Path, as_machine: Any, cli: Any) -> None:
    a, b = remote.parent / "a", clone(remote, "b", cli)
    MemoryAPI.open(a).add("entity", "Kiwi Facts", "Kiwis are flightless.", "projects")
    edit_line(a, TOPIC, "Line 2 of", "Line two, edited, of")
    out = as_machine(a, "sync").stdout
    assert "pushed 1 commit to origin/main" in out
    out = as_machine(b, "sync").stdout
    assert "received 1 commit from origin/main: 2 notes changed" in out
    assert "  entities/projects/kiwi-facts.md" in out and f"  {TOPIC}" in out
    assert "nothing to push: origin/main has every commit" in out
    out = as_machine(b, "sync").stdout
    assert "nothing to commit" in out and "received" not in out and "pushed" not in out


def test_sync_without_a_remote_commits_here_and_says_how_to_add_one(
    vault: Path, as_machine: Any
) -> None:
    MemoryAPI.open(vault).add("entity", "Local Note", "Kept on this machine.", "projects")
    res = as_machine(vault, "sync")
    assert res.exit_code == 0, res.stderr
    assert "committed " in res.stdout and "git remote add origin URL" in res.stdout
    assert git("status", "--porcelain", cwd=vault) == ""
    assert "no remote" in as_machine(vault, "status").stdout


def test_status_shows_the_sync_block_and_notes_before_the_first_index(
    remote: Path, as_machine: Any, cli: Any
) -> None:
    b = clone(remote, "b", cli)
    shutil.rmtree(b / ".vb" / "index", ignore_errors=True)
    for name in os.listdir(b / ".vb"):
        if name.startswith("index") or name == "manifest.json":
            path = b / ".vb" / name
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    text = as_machine(b, "status").stdout
    assert "notes:   20 on disk (by type once indexed)" in text
    assert "sync:    origin/main: 0 ahead, 0 behind as of the last fetch" in text
    assert "last sync: 20" in text


def test_the_driver_still_merges_after_the_environment_moved(
    remote: Path, as_machine: Any, cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The drivers in b's .git/config name a Python that is gone (the environment was moved
    or rebuilt); a `vb` on PATH is there, as an installed vb is."""
    a, b = remote.parent / "a", clone(remote, "b", cli)
    gone = str(tmp_path / "moved-away" / "bin" / "python")
    for kind in ("note", "jsonl", "tasks", "items"):
        git("config", f"merge.vb-{kind}.driver", driver_command(kind, gone), cwd=b)
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "vb").write_text(f'#!/bin/sh\nexec {sys.executable} -m vault_brain "$@"\n')
    (shim / "vb").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim}{os.pathsep}{os.environ['PATH']}")
    base = count(b)
    MemoryAPI.open(a, session="sa").search("topic3 subject", k=1)  # a read of TOPIC on a
    synced(as_machine, a)
    MemoryAPI.open(b, session="sb").search("topic3 subject", k=1)  # and one on b
    assert count(a) == count(b) == base + 1
    edit_line(b, TOPIC, "Line 6 of", "Line six, b's, of")
    git("add", "-A", cwd=b)
    git("commit", "-qm", "b's reads and edit", cwd=b)
    git("fetch", "-q", "origin", cwd=b)
    git("merge", "-q", "--no-edit", "origin/main", cwd=b)  # git runs the driver: `vb` on PATH
    merged = parse_text((b / TOPIC).read_bytes())
    assert "Line six, b's" in merged.body and "<<<<<<<" not in merged.body
    assert count(b) == base + 2  # both reads: the driver merged the counters, not git
    text = as_machine(b, "status").stdout
    assert f"repaired: merge drivers named {gone}, which is gone" in text
    assert gone not in git("config", "--get", "merge.vb-note.driver", cwd=b)
