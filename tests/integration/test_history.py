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
from vault_brain.domain.views.history import (
    KeyDiff,
    Logged,
    classify,
    diff_body,
    read_records,
    unified,
)

ADA = "entity-people-ada"
BODY = "Ada writes programs.\n\nShe works on the engine.\nShe likes tea.\n"


def sync(cli: Any, root: Path) -> None:
    res = cli("--vault", str(root), "sync", "--json")
    assert res.exit_code == 0, res.stdout + res.stderr


def edit(path: Path, old: str, new: str) -> None:
    path.write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")


def history(cli: Any, root: Path, ref: str = ADA, *flags: str) -> dict[str, Any]:
    res = cli("--vault", str(root), "history", ref, "--json", *flags)
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
    ops = [e["operations"] for e in doc["entries"]]
    assert ops[0] == ["archive"] and ops[-1] == ["created"], ops
    assert ops.count(["hand edit"]) == 3 and ["merge"] in ops
    assert all(e["operation"] == ", ".join(e["operations"]) for e in doc["entries"])
    assert all(e["patch"] is None for e in doc["entries"])  # only with --patch
    archived = doc["entries"][0]
    assert archived["renamed_from"] == "entities/people/ada.md"
    assert {"archived", "archive_reason"} <= {k["key"] for k in archived["keys"]}
    # the search before the feedback counted an access: both are in the commit
    feedback = next(e for e in doc["entries"] if "feedback" in e["operations"])
    assert feedback["operations"] == ["feedback", "retrieval"]
    assert feedback["details"] == ["positive_feedback (session s1)"]
    credit = next(k for k in feedback["keys"] if k["key"] == "credit")
    assert credit["change"] == "changed" and credit["new"] > credit["old"]
    assert feedback["lines_added"] == feedback["lines_removed"] == 0
    edits = [e for e in doc["entries"] if e["operations"] == ["hand edit"]]
    assert [(e["lines_added"], e["lines_removed"], e["keys"]) for e in edits][-1] == (2, 1, [])
    merge = next(e for e in doc["entries"] if e["operations"] == ["merge"])
    assert merge["details"][0] == "merged on test"
    assert (merge["lines_added"], merge["lines_removed"]) == (1, 1)  # b's line, brought in
    # a's hand edit and b's were both new to the merge: it replaced both sides' text
    assert [(s["machine"], s["kept"]) for s in merge["sides"]] == [("test", False)] * 2
    assert all(e["sides"] == [] for e in doc["entries"] if e is not merge)
    whens = [e["when"] for e in doc["entries"]]
    assert whens == sorted(whens, reverse=True)


def test_history_by_path_and_in_text(machines: tuple[Path, Path], cli: Any) -> None:
    a, b = machines
    res = cli("--vault", str(a), "history", "archive/entities/people/ada.md")
    assert res.exit_code == 0, res.stderr
    assert "archive" in res.stdout and "credit: 0.5 ->" in res.stdout
    assert "feedback, retrieval  (+0 -0 lines" in res.stdout
    assert "@@" not in res.stdout  # the text only with --patch
    patched = cli("--vault", str(a), "history", ADA, "--patch")
    assert patched.exit_code == 0, patched.stderr
    assert "    -She works on the engine.\n    +She works on the Analytical Engine." in (
        patched.stdout
    )
    # machine b, which never saw the archive, has the note's history up to its last sync
    assert history(cli, b)["entries"][0]["operations"] == ["hand edit"]


def test_a_commit_with_feedback_and_a_hand_edit_lists_both_with_the_text(
    tmp_path: Path, git_env: dict[str, str], cli: Any
) -> None:
    root = tmp_path / "v"
    assert cli("init", str(root)).exit_code == 0
    MemoryAPI.open(root).add("entity", "Ada", BODY, category="people")
    MemoryAPI.open(root).commit("Ada")
    agent = MemoryAPI.open(root, session="s1")
    assert agent.search("Ada programs", k=1).results[0].id == ADA
    agent.feedback("good")
    edit(root / "entities/people/ada.md", "She likes tea.", "She likes coffee.")
    MemoryAPI.open(root).commit("feedback and an edit by hand")
    doc = history(cli, root, ADA, "--patch")
    top = doc["entries"][0]
    assert top["operations"] == ["feedback", "retrieval", "hand edit"]
    assert top["operation"] == "feedback, retrieval, hand edit"
    assert top["details"] == ["positive_feedback (session s1)"]
    assert (top["lines_added"], top["lines_removed"]) == (1, 1)
    patch = top["patch"]
    assert patch.startswith("--- a/entities/people/ada.md\n+++ b/entities/people/ada.md\n")
    assert "\n-She likes tea.\n+She likes coffee.\n" in patch
    assert "\n-credit: 0.5\n+credit: " in patch  # front matter too
    created = doc["entries"][-1]
    assert created["operations"] == ["created"]
    assert created["patch"].startswith("--- /dev/null\n+++ b/entities/people/ada.md\n")
    assert "+She likes tea.\n" in created["patch"]


def test_a_clash_its_merge_and_its_conflict_copy_are_in_the_history_on_both_machines(
    tmp_path: Path, git_env: dict[str, str], cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """laptop and desktop change the same line; laptop syncs first, desktop's sync merges
    (keeps its own text, laptop's goes to a conflict copy), laptop's next sync fast-forwards.
    Both machines then hold one graph, whose first parents are desktop's: laptop's own edit,
    the merge that replaced its wording and the copy are in the history on both."""
    bare, a, b = tmp_path / "remote.git", tmp_path / "a", tmp_path / "b"
    git("init", "--bare", "-q", "-b", "main", str(bare), cwd=tmp_path)
    monkeypatch.setenv("VB_MACHINE", "laptop")
    assert cli("init", str(a)).exit_code == 0
    git("branch", "-M", "main", cwd=a)
    git("remote", "add", "origin", str(bare), cwd=a)
    MemoryAPI.open(a).add("entity", "Ada", BODY, category="people")
    sync(cli, a)
    git("clone", "-q", str(bare), str(b), cwd=tmp_path)
    monkeypatch.setenv("VB_MACHINE", "desktop")
    sync(cli, b)
    note = "entities/people/ada.md"

    monkeypatch.setenv("VB_MACHINE", "laptop")
    edit(a / note, "She likes tea.", "She likes green tea.")
    sync(cli, a)
    monkeypatch.setenv("VB_MACHINE", "desktop")
    edit(b / note, "She likes tea.", "She likes black tea.")
    res = cli("--vault", str(b), "sync", "--json")
    assert res.exit_code == 0, res.stdout + res.stderr
    [copy] = res.json()["conflict_copies"]
    assert "green" in (b / copy).read_text() and "black" in (b / note).read_text()
    monkeypatch.setenv("VB_MACHINE", "laptop")
    sync(cli, a)
    assert (a / note).read_text() == (b / note).read_text()

    docs = [history(cli, m, ADA, "--patch") for m in (a, b)]
    assert [e["commit"] for e in docs[0]["entries"]] == [e["commit"] for e in docs[1]["entries"]]
    for doc in docs:
        merge, *older = doc["entries"]
        assert merge["operations"] == ["merge", "conflict copy"]
        assert merge["details"][0] == "merged on desktop"
        assert [(s["machine"], s["kept"]) for s in merge["sides"]] == [
            ("desktop", True),
            ("laptop", False),
        ]
        assert f"conflict copy {copy} holds laptop's text" in merge["details"]
        assert any(d.startswith("replaced laptop's text (") for d in merge["details"])
        assert any(d.startswith("kept desktop's text (") for d in merge["details"])
        assert "\n-She likes green tea.\n+She likes black tea.\n" in merge["patch"]
        assert (merge["lines_added"], merge["lines_removed"]) == (1, 1)
        edits = {e["patch"].split("\n+She likes ")[1].split("\n")[0] for e in older[:2]}
        assert [e["operations"] for e in older[:2]] == [["hand edit"]] * 2
        assert edits == {"green tea.", "black tea."}  # laptop's own edit is there on desktop too
        assert older[-1]["operations"] == ["created"]

    res = cli("--vault", str(a), "history", ADA, "--patch")
    assert res.exit_code == 0, res.stderr
    assert "merge, conflict copy  (+1 -1 lines" in res.stdout
    assert "    -She likes green tea.\n    +She likes black tea." in res.stdout
    for m in (a, b):
        [made] = history(cli, m, copy)["entries"]
        assert made["path"] == copy and made["status"] == "added"
        assert made["operations"] == ["merge", "conflict copy"]
        assert f"conflict copy of {note}: holds laptop's text" in made["details"]
        log = cli("--vault", str(m), "log", "--json").json()["entries"]
        assert [e["conflict_copies"] for e in log if e["merge"]] == [[copy]]
        assert all(e["conflict_copies"] == [] for e in log if not e["merge"])
        text = cli("--vault", str(m), "log").stdout
        assert "merge, 1 conflict copy" in text


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


def test_a_merge_made_by_hand_that_kept_the_second_parents_text(
    tmp_path: Path, git_env: dict[str, str], cli: Any
) -> None:
    """A merge with git alone (no `Machine:` trailers) that took theirs: listed, its sides
    named by commit, the first parent's text replaced."""
    root = tmp_path / "v"
    assert cli("init", str(root)).exit_code == 0
    git("branch", "-M", "main", cwd=root)
    MemoryAPI.open(root).add("entity", "Ada", BODY, category="people")
    note = "entities/people/ada.md"
    git("add", "-A", cwd=root)
    git("commit", "-qm", "Ada", cwd=root)
    git("checkout", "-qb", "side", cwd=root)
    edit(root / note, "She likes tea.", "She likes coffee.")
    git("commit", "-qam", "coffee", cwd=root)
    git("checkout", "-q", "main", cwd=root)
    edit(root / note, "She likes tea.", "She likes water.")
    git("commit", "-qam", "water", cwd=root)
    ours = git("rev-parse", "HEAD", cwd=root).strip()
    theirs = git("rev-parse", "side", cwd=root).strip()
    git("merge", "-q", "-s", "ours", "--no-commit", "side", cwd=root)
    git("checkout", "side", "--", note, cwd=root)
    git("commit", "-qam", "take coffee", cwd=root)
    doc = history(cli, root, ADA, "--patch")
    merge = doc["entries"][0]
    assert merge["subject"] == "take coffee" and merge["operations"] == ["merge"]
    assert [(s["commit"], s["machine"], s["kept"]) for s in merge["sides"]] == [
        (ours, None, False),
        (theirs, None, True),
    ]
    assert merge["details"] == [
        "merged (no Machine: trailer)",
        f"replaced the text of {ours[:10]} (water)",
        f"kept the text of {theirs[:10]} (coffee)",
    ]
    assert "\n-She likes water.\n+She likes coffee.\n" in merge["patch"]
    assert sorted(e["subject"] for e in doc["entries"][1:]) == ["Ada", "coffee", "water"]


# --------------------------------------------------------------------------- pure parts


def test_a_change_is_named_by_the_log_record_before_anything_else() -> None:
    line = json.dumps(
        {"operation": "flush", "op": "create", "id": ADA, "path": "x.md", "why": "from s/m1"}
    )
    logged = read_records([line, "not json"], ADA, set())
    assert logged == [Logged("flush", "create: from s/m1")]
    counters = [KeyDiff("access_count", "changed", 1, 2)]
    assert classify(logged, merge=False, status="M", moved=None, keys=counters) == ["flush"]
    assert classify([], merge=True, status="M", moved=None, keys=counters) == ["merge"]
    assert classify([], merge=False, status="M", moved=None, keys=counters) == ["retrieval"]
    moved = ("archive/a.md", "a.md")
    assert classify([], merge=False, status="R", moved=moved, keys=[]) == ["restore"]
    edited = [KeyDiff("updated", "changed", "x", "y")]
    assert classify([], merge=False, status="M", moved=None, keys=edited) == ["vb edit"]
    assert diff_body("a\nb\nc\n", "a\nB\nc\nd\n") == (2, 1)


def test_feedback_explains_credit_only_and_the_rest_is_named_from_the_change() -> None:
    feedback = [Logged("feedback", "positive_feedback (session s1)")]
    credit = KeyDiff("credit", "changed", 0.5, 0.6)
    updated = KeyDiff("updated", "changed", "x", "y")

    def ops(logged: list[Logged], keys: list[KeyDiff], body: bool = False) -> list[str]:
        return classify(logged, merge=False, status="M", moved=None, keys=keys, body_changed=body)

    assert ops(feedback, [credit]) == ["feedback"]
    assert ops(feedback, [credit], body=True) == ["feedback", "hand edit"]
    assert ops(feedback, [credit, updated], body=True) == ["feedback", "vb edit"]
    assert ops([], [credit], body=True) == ["feedback", "hand edit"]  # no record: from the key
    assert ops(feedback, []) == ["feedback"]
    assert ops([], []) == ["hand edit"]  # bytes changed, no key or body line: by hand
    flush = [Logged("flush", "update: from s/m1"), *feedback]
    assert ops(flush, [credit, updated], body=True) == ["flush", "feedback"]  # vb did it all


def test_a_patch_is_the_whole_text_as_git_would_print_it() -> None:
    assert unified("a\nb\n", "a\nb\n", "x.md", "x.md") == ""
    assert unified("a\nb", "a\nc", "x.md", "y.md").splitlines() == [
        "--- a/x.md",
        "+++ b/y.md",
        "@@ -1,2 +1,2 @@",
        " a",
        "-b",
        "\\ No newline at end of file",
        "+c",
        "\\ No newline at end of file",
    ]
    assert unified("", "a\u2028b\n", None, "x.md").splitlines()[:3] == [
        "--- /dev/null",
        "+++ b/x.md",
        "@@ -0,0 +1 @@",
    ]
