"""`vb history` and `vb log` with real git: a bare repository as the remote, two clones as
machines; a note changed by feedback, by hand on both machines (a merge), and archived."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import git
from vault_brain.app.api import MemoryAPI
from vault_brain.domain.views.history import KeyDiff, Logged, classify, diff_body, read_records

ADA = "entity-people-ada"
BODY = "Ada writes programs.\n\nShe works on the engine.\nShe likes tea.\n"


def sync(cli: Any, root: Path) -> None:
    res = cli("--vault", str(root), "sync", "--json")
    assert res.exit_code == 0, res.stdout + res.stderr


def edit(path: Path, old: str, new: str) -> None:
    path.write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")


def history(cli: Any, root: Path, ref: str = ADA) -> dict[str, Any]:
    res = cli("--vault", str(root), "history", ref, "--json")
    assert res.exit_code == 0, res.stdout + res.stderr
    doc: dict[str, Any] = res.json()
    return doc


@pytest.fixture
def machines(tmp_path: Path, git_env: dict[str, str], cli: Any) -> tuple[Path, Path]:
    """Machine a (Ada's note added, feedback, a hand edit) and machine b (a clone that edits
    another line), merged on a; then Ada archived on a. Each step synced."""
    bare, a = tmp_path / "remote.git", tmp_path / "a"
    git("init", "--bare", "-q", "-b", "main", str(bare), cwd=tmp_path)
    assert cli("init", str(a)).exit_code == 0
    git("branch", "-M", "main", cwd=a)
    git("remote", "add", "origin", str(bare), cwd=a)
    MemoryAPI.open(a).add("entity", "Ada", BODY, category="people")
    MemoryAPI.open(a).add("entity", "Babbage", "Babbage designs engines.", category="people")
    sync(cli, a)  # 1: created
    agent = MemoryAPI.open(a, session="s1")
    assert agent.search("Ada programs", k=1).results[0].id == ADA
    agent.feedback("good")
    sync(cli, a)  # 2: feedback
    note = a / "entities/people/ada.md"
    edit(note, "She works on the engine.", "She works on the Analytical Engine.\nShe is careful.")
    sync(cli, a)  # 3: hand edit
    b = tmp_path / "b"
    git("clone", "-q", str(bare), str(b), cwd=tmp_path)
    sync(cli, b)
    edit(b / "entities/people/ada.md", "She likes tea.", "She likes tea with milk.")
    sync(cli, b)  # 4: hand edit on b
    edit(note, "Ada writes programs.", "Ada writes the first programs.")
    sync(cli, a)  # 5: a's hand edit, then the merge of b's
    assert cli("--vault", str(a), "delete", ADA, "-r", "left the project").exit_code == 0
    sync(cli, a)  # 6: archive
    return a, b


def test_history_lists_every_change_with_its_operation_keys_and_lines(
    machines: tuple[Path, Path], cli: Any
) -> None:
    a, _b = machines
    doc = history(cli, a)
    assert doc["id"] == ADA and doc["path"] == "archive/entities/people/ada.md"
    assert doc["paths"] == ["archive/entities/people/ada.md", "entities/people/ada.md"]
    ops = [e["operation"] for e in doc["entries"]]
    assert ops[0] == "archive" and ops[-1] == "created", ops
    assert ops.count("hand edit") == 3 and "merge" in ops and "feedback" in ops
    archived = doc["entries"][0]
    assert archived["renamed_from"] == "entities/people/ada.md"
    assert {"archived", "archive_reason"} <= {k["key"] for k in archived["keys"]}
    feedback = next(e for e in doc["entries"] if e["operation"] == "feedback")
    assert feedback["details"] == ["positive_feedback (session s1)"]
    credit = next(k for k in feedback["keys"] if k["key"] == "credit")
    assert credit["change"] == "changed" and credit["new"] > credit["old"]
    assert feedback["lines_added"] == feedback["lines_removed"] == 0
    edits = [e for e in doc["entries"] if e["operation"] == "hand edit"]
    assert [(e["lines_added"], e["lines_removed"], e["keys"]) for e in edits][-1] == (2, 1, [])
    merge = next(e for e in doc["entries"] if e["operation"] == "merge")
    assert merge["details"][0].startswith("merged from another machine")
    assert (merge["lines_added"], merge["lines_removed"]) == (1, 1)  # b's line, brought in
    whens = [e["when"] for e in doc["entries"]]
    assert whens == sorted(whens, reverse=True)


def test_history_by_path_and_in_text(machines: tuple[Path, Path], cli: Any) -> None:
    a, b = machines
    res = cli("--vault", str(a), "history", "archive/entities/people/ada.md")
    assert res.exit_code == 0, res.stderr
    assert "archive" in res.stdout and "credit: 0.5 ->" in res.stdout
    # machine b, which never saw the archive, has the note's history up to its last sync
    assert history(cli, b)["entries"][0]["operation"] == "hand edit"


def test_log_lists_the_vaults_operations(machines: tuple[Path, Path], cli: Any) -> None:
    a, _b = machines
    res = cli("--vault", str(a), "log", "--json")
    assert res.exit_code == 0, res.stderr
    entries = res.json()["entries"]
    assert entries[-1]["subject"].startswith("vb init")
    assert any(e["operations"] == {"feedback": 1} for e in entries)
    assert any(e["merge"] for e in entries)
    oneline = cli("--vault", str(a), "log", "--oneline", "-k", "2")
    assert oneline.exit_code == 0
    lines = oneline.stdout.splitlines()
    assert len(lines) == 2 and lines[0].split(" ", 1)[0] == entries[0]["commit"][:10]


def test_history_of_a_vault_without_git_is_one_line_with_a_hint(
    tmp_path: Path, git_env: dict[str, str], cli: Any
) -> None:
    root = tmp_path / "v"
    assert cli("init", str(root)).exit_code == 0
    shutil.rmtree(root / ".git")
    MemoryAPI.open(root).add("entity", "Ada", BODY, category="people")
    res = cli("--vault", str(root), "history", ADA)
    assert res.exit_code != 0
    assert res.stderr.splitlines()[0] == f"vb: error: {root} is not a git repository"
    assert res.stderr.splitlines()[1].startswith("vb: hint: ")
    missing = cli("--vault", str(root), "history", "nobody")
    assert missing.exit_code != 0 and "no note with id 'nobody'" in missing.stderr


# --------------------------------------------------------------------------- pure parts


def test_a_change_is_named_by_the_log_record_before_anything_else() -> None:
    line = json.dumps(
        {"operation": "flush", "op": "create", "id": ADA, "path": "x.md", "why": "from s/m1"}
    )
    logged = read_records([line, "not json"], ADA, set())
    assert logged == [Logged("flush", "create: from s/m1")]
    counters = [KeyDiff("access_count", "changed", 1, 2)]
    assert classify(logged, merge=True, status="M", moved=None, keys=counters) == "flush"
    assert classify([], merge=True, status="M", moved=None, keys=counters) == "merge"
    assert classify([], merge=False, status="M", moved=None, keys=counters) == "retrieval"
    moved = ("archive/a.md", "a.md")
    assert classify([], merge=False, status="R", moved=moved, keys=[]) == "restore"
    edited = [KeyDiff("updated", "changed", "x", "y")]
    assert classify([], merge=False, status="M", moved=None, keys=edited) == "vb edit"
    assert diff_body("a\nb\nc\n", "a\nB\nc\nd\n") == (2, 1)
