"""`vb persona` with real git: personas are branches of the vault; switching, merging and
cherry-picking keep the index right and resolve vb's files as `vb sync` does."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import git
from vault_brain.app.api import MemoryAPI
from vault_brain.storage.notes.frontmatter import parse_text

ADA = "entities/people/ada.md"
BODY = "Ada writes programs.\n\nShe works on the engine.\nShe likes tea.\n"


@pytest.fixture
def root(tmp_path: Path, git_env: dict[str, str], cli: Any) -> Path:
    """A vault with Ada's note (access_count 1, credit 0.5) committed on `main`."""
    root = tmp_path / "v"
    assert cli("init", str(root)).exit_code == 0
    git("branch", "-M", "main", cwd=root)
    MemoryAPI.open(root).add("entity", "Ada", BODY, category="people")
    edit(root / ADA, "credit: 0.5\n", "credit: 0.5\naccess_count: 1\n")
    commit(root, "Ada")
    return root


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def commit(root: Path, message: str) -> str:
    git("add", "-A", cwd=root)
    git("commit", "-q", "-m", message, cwd=root)
    return git("rev-parse", "HEAD", cwd=root).strip()


def vb(cli: Any, root: Path, *args: str) -> dict[str, Any]:
    res = cli("--vault", str(root), *args, "--json")
    assert res.exit_code == 0, res.stdout + res.stderr
    doc: dict[str, Any] = res.json()
    return doc


def found(cli: Any, root: Path, query: str) -> list[str]:
    return [r["title"] for r in vb(cli, root, "search", query)["results"]]


def add(root: Path, name: str, text: str) -> None:
    MemoryAPI.open(root).add("entity", name, text, category="people")


def test_create_switch_and_search_follows_the_persona(root: Path, cli: Any) -> None:
    created = vb(cli, root, "persona", "create", "work")
    assert created["persona"] == "work" and created["current"] == "main"
    switched = vb(cli, root, "persona", "switch", "work")
    assert (switched["previous"], switched["current"], switched["committed"]) == (
        "main",
        "work",
        None,
    )
    add(root, "Grace", "Grace writes compilers.")  # not committed
    assert found(cli, root, "compilers") == ["Grace"]
    back = vb(cli, root, "persona", "switch", "main")
    assert back["committed"] and "pending changes committed first" in back["message"]
    subject = git("log", "-1", "--format=%s", "work", cwd=root)
    assert "committed before switching to main" in subject
    assert git("status", "--porcelain", cwd=root) == ""
    assert found(cli, root, "compilers") == [] and found(cli, root, "programs") == ["Ada"]
    listed = vb(cli, root, "persona", "list")
    assert [(p["name"], p["current"]) for p in listed["personas"]] == [
        ("main", True),
        ("work", False),
    ]
    text = cli("--vault", str(root), "persona", "list")
    assert text.exit_code == 0 and "* " in text.stdout.splitlines()[1]
    vb(cli, root, "persona", "switch", "work")
    assert found(cli, root, "compilers") == ["Grace"]
    from_main = vb(cli, root, "persona", "create", "home", "--from", "main")
    assert next(p for p in from_main["personas"] if p["name"] == "home")["commit"] == (
        git("rev-parse", "main", cwd=root).strip()
    )


def test_merge_adds_counters_and_writes_conflict_copies_never_markers(root: Path, cli: Any) -> None:
    vb(cli, root, "persona", "create", "work")
    vb(cli, root, "persona", "switch", "work")
    note = root / ADA
    edit(note, "access_count: 1", "access_count: 3")
    edit(note, "credit: 0.5", "credit: 0.6")
    edit(note, "She likes tea.", "She likes green tea.")
    add(root, "Grace", "Grace writes compilers.")
    vb(cli, root, "persona", "switch", "main")  # commits work's changes
    edit(note, "access_count: 1", "access_count: 4")
    edit(note, "credit: 0.5", "credit: 0.55")
    edit(note, "She likes tea.", "She likes coffee.")
    merged = vb(cli, root, "persona", "merge", "work")  # main's edit committed first
    assert merged["outcome"] == "merged" and merged["committed"]
    assert merged["merged_files"] >= 1
    meta = parse_text(note.read_bytes()).meta
    assert meta["access_count"] == 6  # 1 + 2 (work) + 3 (main)
    assert meta["credit"] == pytest.approx(0.65)
    text = note.read_text(encoding="utf-8")
    assert "<<<<<<<" not in text and "=======" not in text
    [copy] = merged["conflict_copies"]
    assert "(conflict " in copy
    both = text + (root / copy).read_text(encoding="utf-8")
    assert "green tea" in both and "coffee" in both
    assert git("status", "--porcelain", cwd=root) == ""
    assert not (root / ".git" / "MERGE_HEAD").exists()
    assert found(cli, root, "compilers") == ["Grace"]
    again = vb(cli, root, "persona", "merge", "work")
    assert again["outcome"] == "up to date"


def test_cherry_pick_applies_one_commit_and_the_index_follows(root: Path, cli: Any) -> None:
    vb(cli, root, "persona", "create", "work")
    vb(cli, root, "persona", "switch", "work")
    add(root, "Grace", "Grace writes compilers.")
    grace = commit(root, "Grace")
    add(root, "Linus", "Linus writes kernels.")
    edit(root / ADA, "access_count: 1", "access_count: 2")
    commit(root, "Linus")
    vb(cli, root, "persona", "switch", "main")
    edit(root / ADA, "access_count: 1", "access_count: 5")
    commit(root, "Ada read on main")
    picked = vb(cli, root, "persona", "cherry-pick", grace[:10])
    assert picked["outcome"] == "picked" and picked["current"] == "main"
    assert found(cli, root, "compilers") == ["Grace"]
    assert found(cli, root, "kernels") == []
    assert "cherry-pick" in git("log", "-1", "--format=%s", cwd=root)
    assert git("status", "--porcelain", cwd=root) == ""
    linus = git("rev-parse", "work", cwd=root).strip()
    vb(cli, root, "persona", "cherry-pick", linus)  # Ada's counter: both increments
    assert parse_text((root / ADA).read_bytes()).meta["access_count"] == 6
    assert found(cli, root, "kernels") == ["Linus"]
    empty = vb(cli, root, "persona", "cherry-pick", grace)
    assert empty["outcome"] == "empty"


def test_errors_are_one_line_with_a_hint(root: Path, cli: Any) -> None:
    cases = [
        (("persona", "switch", "nobody"), "vb: error: no persona named 'nobody'"),
        (("persona", "merge", "nobody"), "vb: error: no persona named 'nobody'"),
        (("persona", "create", "main"), "vb: error: persona 'main' exists already"),
        (("persona", "create", "a..b"), "vb: error: 'a..b' is not a valid persona name"),
        (("persona", "cherry-pick", "f00"), "vb: error: no commit 'f00' in the vault's"),
    ]
    for args, first in cases:
        res = cli("--vault", str(root), *args)
        assert res.exit_code != 0, args
        lines = res.stderr.splitlines()
        assert len(lines) == 2 and lines[0].startswith(first), lines
        assert lines[1].startswith("vb: hint: ")
    shutil.rmtree(root / ".git")
    res = cli("--vault", str(root), "persona", "list")
    assert res.stderr.splitlines() == [
        f"vb: error: {root} is not a git repository",
        "vb: hint: run `git init` there, or `vb init` a new vault",
    ]


def test_the_mcp_tool_lists_creates_and_switches(root: Path) -> None:
    api = MemoryAPI.open(root)
    assert api.persona("create", "work").persona == "work"
    switched = api.persona("switch", "work")
    assert switched.current == "work"
    assert [p.name for p in api.persona("list").personas if p.current] == ["work"]


def test_a_persona_merge_is_undone_by_a_revert_commit(root: Path, cli: Any) -> None:
    """`vb persona merge NAME --undo` reverts the merge commit with a new commit (history
    kept): the persona's note leaves, its counters come off, later reads stay, the index
    follows."""
    vb(cli, root, "persona", "create", "work")
    vb(cli, root, "persona", "switch", "work")
    note = root / ADA
    edit(note, "access_count: 1", "access_count: 3")  # work reads Ada twice
    add(root, "Grace", "Grace writes compilers.")
    vb(cli, root, "persona", "switch", "main")
    add(root, "Linus", "Linus writes kernels.")  # main moved on: a real merge commit
    merged = vb(cli, root, "persona", "merge", "work")
    assert merged["outcome"] == "merged"
    merge_sha = merged["commit"]
    edit(note, "access_count: 3", "access_count: 4")  # main reads Ada after the merge
    commit(root, "a read after the merge")
    undone = vb(cli, root, "persona", "merge", "work", "--undo")
    assert undone["outcome"] == "undone" and undone["action"] == "undo-merge"
    assert f"reverted {merge_sha[:10]}" in undone["message"]
    assert parse_text(note.read_bytes()).meta["access_count"] == 2  # 4 - the 2 work added
    assert found(cli, root, "compilers") == [] and found(cli, root, "kernels") == ["Linus"]
    assert git("merge-base", "--is-ancestor", merge_sha, "HEAD", cwd=root) == ""  # kept
    assert git("status", "--porcelain", cwd=root) == ""
    subject = git("log", "-1", "--format=%s", cwd=root)
    assert "undo merge work (revert" in subject
    again = cli("--vault", str(root), "persona", "merge", "ghost", "--undo")
    assert again.exit_code != 0 and "no merge commit of persona 'ghost'" in again.stderr


def test_a_stale_index_lock_is_removed_before_a_persona_switch(root: Path, cli: Any) -> None:
    """A kill inside `git commit` leaves .git/index.lock: `vb persona switch` (which commits
    pending changes first) removes an old one with a notice, as `vb sync` does, and reports
    a fresh one in one line, keeping it."""
    import os
    import time

    vb(cli, root, "persona", "create", "work")
    lock = root / ".git" / "index.lock"
    add(root, "Grace", "Grace writes compilers.")  # pending: the switch commits it
    lock.write_bytes(b"")
    old = time.time() - 120
    os.utime(lock, (old, old))
    res = cli("--vault", str(root), "persona", "switch", "work")
    assert res.exit_code == 0, res.stdout + res.stderr
    assert res.stdout.startswith("removed a stale ") and not lock.exists()
    assert "pending changes committed first" in res.stdout
    assert git("status", "--porcelain", cwd=root) == ""
    lock.write_bytes(b"")  # fresh: a git may hold it
    res = cli("--vault", str(root), "persona", "switch", "main")
    assert res.exit_code != 0 and lock.exists()
    first, *rest = res.stderr.strip().splitlines()
    assert "another git command holds" in first and "index.lock" in first
    assert rest and "if no git is running, delete that file" in rest[0]
    assert git("branch", "--show-current", cwd=root).strip() == "work"
