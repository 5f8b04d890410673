"""A hand-written note renamed in Obsidian (a plain file rename) keeps its credit and history,
with `vb watch` running and with nothing running: the old id resolves with a notice, search
finds the new path, feedback for a turn that retrieved it before the rename credits it, and
`vb history` shows the rename. Feedback that cannot find a note says so and exits non-zero.
Real files, a real index and git, and a real `vb watch` process."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import git, watching
from vault_brain.app.memory.credit import record_retrieval
from vault_brain.app.memory.vault import Vault
from vault_brain.domain.notes.renames import Move
from vault_brain.storage.index.renames import follow, load_moves
from vault_brain.storage.notes.frontmatter import parse_text
from vault_brain.storage.notes.read import load_note

OLD, NEW = "notes/Kettle care.md", "notes/Descaling the kettle.md"
OLD_ID, NEW_ID = "note-notes-kettle-care", "note-notes-descaling-the-kettle"
BODY = "Descale the kettle with citric acid every month; vinegar leaves a taste.\n"


def vb(cli: Any, vault: Path, *args: str) -> Any:
    res = cli("--vault", str(vault), *args)
    assert res.exit_code == 0, res.stdout + res.stderr
    return res


def hand_written(vault: Path, rel: str = OLD, body: str = BODY) -> Path:
    """A note as a person writes it in Obsidian: no front matter, committed."""
    path = vault / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body, encoding="utf-8")
    git("add", "-A", cwd=vault)
    git("commit", "-q", "-m", "a note of mine", cwd=vault)
    return path


def rename(vault: Path, old: str = OLD, new: str = NEW) -> None:
    """What Obsidian does on a rename: one rename(2), nothing else."""
    (vault / new).parent.mkdir(parents=True, exist_ok=True)
    os.rename(vault / old, vault / new)


def ids_found(cli: Any, vault: Path, query: str) -> list[tuple[str, str]]:
    out = vb(cli, vault, "search", query, "--json").json()
    return [(r["id"], r["path"]) for r in out["results"]]


def retrieved_without_counters(vault: Path, session: str = "s1") -> None:
    """A turn that retrieved the note and wrote nothing into it (what a caller that keeps
    counters off the note records): the transcript holds its id and path, the file no id."""
    opened = Vault.open(vault)
    opened.reconcile()  # (a retrieval comes from a search: the index holds the note)
    note = load_note(vault, OLD)
    record_retrieval(opened, session, "kettle", [note], "mcp", counters=False)
    assert "id" not in parse_text((vault / OLD).read_bytes()).meta


def wait_for_move(vault: Path, old_id: str, timeout: float = 20.0) -> Move:
    """The move `vb watch` recorded (polled: the watcher indexes in its own process)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        moves = [m for m in load_moves(Vault.open(vault).paths) if m.old_id == old_id]
        if moves:
            return moves[-1]
        time.sleep(0.05)
    pytest.fail("vb watch did not record the rename")


# ------------------------------------------------------------------ with nothing running


def test_old_id_and_path_of_a_renamed_note_resolve_with_a_notice(vault: Path, cli: Any) -> None:
    hand_written(vault)
    assert ids_found(cli, vault, "descale kettle")[0] == (OLD_ID, OLD)
    rename(vault)
    assert ids_found(cli, vault, "descale kettle")[0] == (NEW_ID, NEW)
    res = vb(cli, vault, "show", OLD_ID)
    assert res.stderr == f"vb: {OLD_ID} was renamed: the note is now {NEW} (id {NEW_ID})\n"
    assert "path:      " + NEW in res.stdout and "citric acid" in res.stdout
    doc = vb(cli, vault, "show", OLD_ID, "--json").json()
    assert doc["note"]["path"] == NEW and doc["notices"] == [res.stderr[4:-1]]
    by_path = vb(cli, vault, "show", OLD)
    assert by_path.stderr == f"vb: {OLD} was renamed: the note is now {NEW} (id {NEW_ID})\n"
    # the note's own id needs no notice
    assert vb(cli, vault, "show", NEW_ID).stderr == ""


def test_a_rename_not_yet_indexed_is_seen_by_the_show_that_asks(vault: Path, cli: Any) -> None:
    """Renamed while nothing ran and before any other command: `vb show <old id>` itself
    reconciles the index, which recognises the rename by the note's body."""
    hand_written(vault)
    vb(cli, vault, "index")
    rename(vault)
    res = vb(cli, vault, "show", OLD)
    assert f"the note is now {NEW}" in res.stderr


def test_feedback_after_a_rename_credits_the_renamed_note(vault: Path, cli: Any) -> None:
    """The turn retrieved the note under its old id and path (and wrote no id into it); the
    person renamed it in Obsidian; the feedback finds and credits it there."""
    hand_written(vault)
    retrieved_without_counters(vault)
    rename(vault)
    out = vb(cli, vault, "feedback", "good", "--session", "s1", "--json").json()
    assert [(c["id"], c["path"]) for c in out["changes"]] == [(OLD_ID, NEW)]
    assert out["skipped"] == []
    meta = parse_text((vault / NEW).read_bytes()).meta
    assert meta["credit"] == out["changes"][0]["new"] > out["changes"][0]["old"]
    assert meta["id"] == NEW_ID  # (vb's first edit: the id the note has now)


def test_a_note_vb_wrote_to_keeps_its_id_through_a_rename(vault: Path, cli: Any) -> None:
    """An agent's search writes the note's id with its first counters; from then on the id
    is the note's own and follows it (no notice: it is still the note's id)."""
    hand_written(vault)
    vb(cli, vault, "search", "descale kettle", "--session", "s1")
    assert parse_text((vault / OLD).read_bytes()).meta["id"] == OLD_ID
    rename(vault)
    assert ids_found(cli, vault, "descale kettle")[0] == (OLD_ID, NEW)
    res = vb(cli, vault, "show", OLD_ID)
    assert res.stderr == "" and "path:      " + NEW in res.stdout
    out = vb(cli, vault, "feedback", "good", "--session", "s1", "--json").json()
    assert [(c["id"], c["path"]) for c in out["changes"]] == [(OLD_ID, NEW)]


def test_history_of_a_renamed_note_shows_the_rename_also_by_its_old_id(
    vault: Path, cli: Any, git_env: dict[str, str]
) -> None:
    hand_written(vault)
    vb(cli, vault, "index")
    rename(vault)
    git("add", "-A", cwd=vault)
    git("commit", "-q", "-m", "renamed in Obsidian", cwd=vault)
    for ref in (NEW_ID, OLD_ID):
        doc = vb(cli, vault, "history", ref, "--json").json()
        assert doc["path"] == NEW
        assert doc["entries"][0]["renamed_from"] == OLD, doc["entries"][0]
        assert len(doc["entries"]) == 2  # written, then renamed


def test_renames_in_a_row_are_followed_to_the_last_name(vault: Path, cli: Any) -> None:
    hand_written(vault)
    vb(cli, vault, "index")
    rename(vault)
    vb(cli, vault, "index")
    rename(vault, NEW, "kitchen/Kettle.md")
    res = vb(cli, vault, "show", OLD_ID)
    assert res.stderr == (
        f"vb: {OLD_ID} was moved: the note is now kitchen/Kettle.md (id note-kitchen-kettle)\n"
    )


def test_notes_with_the_same_body_are_not_taken_for_one_another(vault: Path, cli: Any) -> None:
    """Two notes with one body removed and two added: nothing tells which went where."""
    hand_written(vault, "a/one.md", "Same text.\n")
    hand_written(vault, "a/two.md", "Same text.\n")
    vb(cli, vault, "index")
    rename(vault, "a/one.md", "b/one.md")
    rename(vault, "a/two.md", "b/two.md")
    res = cli("--vault", str(vault), "show", "note-a-one")
    assert res.exit_code == 3 and "renamed" not in res.stderr


# ------------------------------------------------------------------ feedback that finds nothing


def test_feedback_for_a_deleted_note_says_so_exits_3_and_writes_nothing(
    vault: Path, cli: Any
) -> None:
    hand_written(vault)
    retrieved_without_counters(vault)
    (vault / OLD).unlink()
    transcript = Vault.open(vault).paths.transcript("s1")
    before = transcript.read_bytes()
    res = cli("--vault", str(vault), "feedback", "good", "--session", "s1")
    assert res.exit_code == 3
    assert (
        f"nothing credited: the note retrieved in the last turn of session 's1' cannot be "
        f"found ({OLD_ID})" in res.stderr
    )
    assert f"`id: {OLD_ID}`" in res.stderr  # the hint: how to give a renamed note its id back
    assert transcript.read_bytes() == before  # the feedback can be given again
    res = cli("--vault", str(vault), "feedback", "good", "--session", "s1", "--json")
    assert res.exit_code == 3 and json.loads(res.stdout)["error"]["code"] == "not_found"


def test_a_note_renamed_and_changed_at_once_is_found_again_by_the_id_the_hint_names(
    vault: Path, cli: Any
) -> None:
    hand_written(vault)
    retrieved_without_counters(vault)
    rename(vault)
    (vault / NEW).write_text(BODY + "Or use a descaling tablet.\n", encoding="utf-8")
    res = cli("--vault", str(vault), "feedback", "good", "--session", "s1")
    assert res.exit_code == 3 and f"(`id: {OLD_ID}`)" in res.stderr
    (vault / NEW).write_text(f"---\nid: {OLD_ID}\n---\n" + BODY, encoding="utf-8")
    out = vb(cli, vault, "feedback", "good", "--session", "s1", "--json").json()
    assert [(c["id"], c["path"]) for c in out["changes"]] == [(OLD_ID, NEW)]


def test_feedback_credits_what_it_finds_and_names_what_it_does_not(vault: Path, cli: Any) -> None:
    hand_written(vault)
    other = hand_written(vault, "notes/Teapot.md", "The teapot wants warming first.\n")
    vault_ = Vault.open(vault)
    hits = [load_note(vault, OLD), load_note(vault, "notes/Teapot.md")]
    record_retrieval(vault_, "s1", "kettle", hits, "mcp", counters=False)
    (vault / OLD).unlink()
    res = vb(cli, vault, "feedback", "good", "--session", "s1")
    assert "note-notes-teapot:" in res.stdout
    assert f"skipped {OLD_ID}: not found (was {OLD})" in res.stdout
    assert parse_text(other.read_bytes()).meta["credit"] > 0.5


def test_feedback_that_credits_nothing_for_another_reason_says_nothing_credited(
    vault: Path, cli: Any
) -> None:
    """A note vb cannot edit (its front matter is not YAML) is skipped, and the output says
    so, not that nothing was retrieved."""
    broken = "notes/Broken.md"
    hand_written(vault, broken, "---\ntitle: [unclosed\n---\nThe kettle, broken.\n")
    opened = Vault.open(vault)
    opened.reconcile()
    record_retrieval(opened, "s1", "kettle", [load_note(vault, broken)], "mcp", counters=False)
    res = vb(cli, vault, "feedback", "good", "--session", "s1")
    lines = res.stdout.splitlines()
    assert lines[0] == "positive_feedback: nothing credited"
    assert lines[1].startswith("  skipped note-notes-broken: ")


# ------------------------------------------------------------------ with `vb watch` running


@pytest.mark.system
def test_a_rename_while_vb_watch_runs_keeps_credit_search_and_history(
    vault: Path, cli: Any, git_env: dict[str, str]
) -> None:
    hand_written(vault)
    vb(cli, vault, "index")
    retrieved_without_counters(vault)
    with watching(vault):
        rename(vault)
        move = wait_for_move(vault, OLD_ID)  # recorded by the watcher's own refresh
        assert (move.old_path, move.new_path, move.new_id) == (OLD, NEW, NEW_ID)
        assert ids_found(cli, vault, "descale kettle")[0] == (NEW_ID, NEW)
        assert f"the note is now {NEW}" in vb(cli, vault, "show", OLD_ID).stderr
        out = vb(cli, vault, "feedback", "good", "--session", "s1", "--json").json()
    assert [(c["id"], c["path"]) for c in out["changes"]] == [(OLD_ID, NEW)]
    # (the feedback, a person's command, committed the rename with its credit)
    assert git("log", "-1", "--format=%s", cwd=vault).startswith("vb feedback good")
    doc = vb(cli, vault, "history", OLD_ID, "--json").json()
    assert doc["path"] == NEW and doc["entries"][0]["renamed_from"] == OLD


# ------------------------------------------------------------------ the rename map itself


def test_follow_goes_through_later_moves_only(vault: Path) -> None:
    from vault_brain.storage.index.renames import record_moves

    paths = Vault.open(vault).paths
    record_moves(paths, [Move("note-a", "a.md", "note-b", "b.md")])
    record_moves(paths, [Move("note-b", "b.md", "note-c", "c.md")])
    moved = follow(paths, "note-a")
    assert moved is not None and (moved.new_id, moved.new_path) == ("note-c", "c.md")
    assert follow(paths, "a.md") == moved and follow(paths, "note-z") is None


# ------------------------------------------------------------------ two machines' first edits


def test_two_machines_first_edits_of_a_note_merge_into_one_id_line() -> None:
    """Each machine's first retrieval of a hand-written note writes its id with the
    counters; git's merge (the driver's light merge and the full one alike) keeps one id
    line and sums the counters, with no conflict copy."""
    from vault_brain.storage.notes.merge import merge_note
    from vault_brain.storage.notes.merge_light import merge_note_light

    base = b"---\ntitle: Kettle\n---\nThe kettle.\n"
    head = b"---\ntitle: Kettle\nid: note-kettle\naccess_count: 1\n"
    ours = head + b"last_accessed: 2026-11-26T10:00:00.000001+00:00\n---\nThe kettle.\n"
    theirs = head + b"last_accessed: 2026-11-26T11:00:00.000001+00:00\ncredit: 0.6\n---\n"
    theirs += b"The kettle.\n"
    merged = merge_note(base, ours, theirs)
    assert merged.conflict is None
    assert merged.data == (
        b"---\ntitle: Kettle\nid: note-kettle\naccess_count: 2\n"
        b"last_accessed: 2026-11-26T11:00:00.000001+00:00\ncredit: 0.6\n---\nThe kettle.\n"
    )
    assert merge_note_light(base, ours, theirs) == merged.data
