"""`vb sync` with real git: a bare repository as the remote, clones as machines (each with its
own .vb/), the merge drivers, the conflict copies, an unreachable remote, a killed sync."""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import git, watching
from vault_brain.app.api import MemoryAPI
from vault_brain.domain.sync.merge import merge_counters, merge_records, merge_tasks
from vault_brain.storage.notes.frontmatter import parse_text
from vault_brain.storage.notes.merge import Merged, merge_note
from vault_brain.storage.notes.merge_light import merge_note_light

NOTES = 20


def note_text(i: int, extra: str = "") -> str:
    body = "\n".join(f"Line {n} of the note about topic{i}." for n in range(1, 9))
    return f"Facts about topic{i} and the subject {i}.\n\n{body}\n{extra}"


@pytest.fixture
def remote(tmp_path: Path, git_env: dict[str, str], cli: Any) -> Path:
    """A bare remote holding a vault with 20 notes, pushed by machine `a`."""
    bare = tmp_path / "remote.git"
    git("init", "--bare", "-q", "-b", "main", str(bare), cwd=tmp_path)
    a = tmp_path / "a"
    assert cli("init", str(a)).exit_code == 0
    git("branch", "-M", "main", cwd=a)
    api = MemoryAPI.open(a)
    for i in range(NOTES):
        api.add("entity", f"Topic {i}", note_text(i), category="projects")
    git("remote", "add", "origin", str(bare), cwd=a)
    res = cli("--vault", str(a), "sync", "--json")
    assert res.exit_code == 0, res.stdout + res.stderr
    assert res.json()["pushed"] is True
    return bare


def clone(remote: Path, name: str, cli: Any) -> Path:
    target = remote.parent / name
    git("clone", "-q", str(remote), str(target), cwd=remote.parent)
    res = cli("--vault", str(target), "sync", "--json")
    assert res.exit_code == 0, res.stdout + res.stderr
    return target


def sync(cli: Any, root: Path) -> dict[str, Any]:
    res = cli("--vault", str(root), "sync", "--json")
    assert res.exit_code == 0, res.stdout + res.stderr
    doc: dict[str, Any] = res.json()
    return doc


def metas(root: Path) -> dict[str, dict[str, Any]]:
    out = {}
    for path in sorted((root / "entities").rglob("*.md")):
        out[path.relative_to(root).as_posix()] = parse_text(path.read_bytes()).meta
    return out


def conflict_copies(root: Path) -> list[str]:
    return sorted(p.name for p in root.rglob("*(conflict *") if ".git" not in p.parts)


# --------------------------------------------------------------------------- pure parts


def test_counters_add_both_sides_increments_and_take_the_later_time() -> None:
    base = {"access_count": 3, "credit": 0.5, "last_accessed": "2026-01-01T10:00:00+00:00"}
    ours = {"access_count": 5, "credit": 0.6, "last_accessed": "2026-01-02T10:00:00+00:00"}
    theirs = {"access_count": 4, "credit": 0.45, "last_accessed": "2026-01-03T09:00:00+00:00"}
    merged = merge_counters(base, ours, theirs)
    assert merged["access_count"] == 6
    assert merged["credit"] == pytest.approx(0.55)
    assert merged["last_accessed"] == "2026-01-03T09:00:00+00:00"
    high = merge_counters({"credit": 0.9}, {"credit": 0.99}, {"credit": 0.98})
    assert high["credit"] == 1.0


def test_two_sides_that_counted_alike_since_the_ancestor_both_count() -> None:
    """Two machines each count one access from 5 and merge a third machine's later access
    time: both hold the same bytes (6), and the merge is 7, not one of them (a team
    benchmark lost increments this way)."""

    def note(count: int, credit: str) -> bytes:
        meta = f"id: entity-projects-x\ncredit: {credit}\naccess_count: {count}\n"
        return f"---\n{meta}last_accessed: 2026-01-02T10:00:00+00:00\n---\nBody.\n".encode()

    base, alike = note(5, "0.5"), note(6, "0.6")
    for merge in (merge_note, lambda *sides: Merged(merge_note_light(*sides) or b"")):
        merged = parse_text(merge(base, alike, alike).data).meta
        assert merged["access_count"] == 7 and merged["credit"] == pytest.approx(0.7)
    assert merge_note(alike, alike, alike).data == alike  # nothing changed: nothing added
    assert merge_note(base, alike, base).data == alike  # one side changed: that side


def test_records_merge_once_each_in_order() -> None:
    base = ['{"ts": "2026-01-01T00:00:00+00:00", "n": 0}\n']
    ours = [*base, '{"ts": "2026-01-01T00:00:02+00:00", "n": 2}\n']
    theirs = [*base, '{"n": 1,  "ts": "2026-01-01T00:00:01+00:00"}\n', ours[1]]
    merged = merge_records(base, ours, theirs)
    assert [json.loads(x)["n"] for x in merged] == [0, 1, 2]


def test_tasks_merge_by_id_and_keep_theirs_of_a_double_change() -> None:
    base = {"tasks": [{"id": "t1", "status": "todo"}, {"id": "t2", "status": "todo"}]}
    ours = {"tasks": [{"id": "t1", "status": "done"}, {"id": "t2", "status": "blocked"}]}
    theirs = {
        "tasks": [
            {"id": "t1", "status": "todo"},
            {"id": "t2", "status": "in_progress"},
            {"id": "t3", "status": "todo"},
        ]
    }
    result = merge_tasks(base, ours, theirs)
    assert [(t["id"], t["status"]) for t in result.document["tasks"]] == [
        ("t1", "done"),
        ("t2", "blocked"),
        ("t3", "todo"),
    ]
    assert result.conflicts == [{"id": "t2", "status": "in_progress"}]


def test_a_note_merge_never_holds_conflict_markers() -> None:
    base = b"---\nid: x\naccess_count: 1\n---\nline one\nline two\n"
    ours = b"---\nid: x\naccess_count: 2\n---\nline one (ours)\nline two\n"
    theirs = b"---\nid: x\naccess_count: 3\n---\nline one (theirs)\nline two\n"
    merged = merge_note(base, ours, theirs)
    assert b"<<<<<<<" not in merged.data and b">>>>>>>" not in merged.data
    assert merged.data == b"---\nid: x\naccess_count: 4\n---\nline one (ours)\nline two\n"
    assert merged.conflict == theirs


# --------------------------------------------------------------------------- machines


def test_two_machines_using_the_same_notes_never_conflict(remote: Path, cli: Any) -> None:
    """100 rounds of retrievals and feedback on both machines, synced at random points
    (`last_accessed` to the microsecond: two machines' reads of one note do not write the
    same bytes, see test_sync_machines)."""
    a, b = remote.parent / "a", clone(remote, "b", cli)
    base = {rel: int(m.get("access_count") or 0) for rel, m in metas(a).items()}
    increments = {rel: 0 for rel in base}
    feedback = 0
    rng = random.Random(13)
    apis = {m: MemoryAPI.open(m, session=f"s-{m.name}") for m in (a, b)}
    for _round in range(100):
        for machine in (a, b):
            api = apis[machine]
            hits = api.search(f"topic{rng.randrange(NOTES)} subject", k=2).results
            for hit in hits:
                increments[hit.path] += 1
            if hits and rng.random() < 0.5:
                api.feedback(rng.choice(["good", "bad", "completed"]))
                feedback += 1
            if rng.random() < 0.08:
                sync(cli, machine)
                apis[machine] = MemoryAPI.open(machine, session=f"s-{machine.name}")
    sync(cli, a)
    sync(cli, b)
    sync(cli, a)
    assert git("rev-parse", "HEAD", cwd=a) == git("rev-parse", "HEAD", cwd=b)
    for machine in (a, b):
        assert conflict_copies(machine) == []
        assert "<<<<<<<" not in "".join(p.read_text() for p in machine.rglob("*.md"))
        found = metas(machine)
        assert {rel: int(m.get("access_count") or 0) for rel, m in found.items()} == {
            rel: base[rel] + increments[rel] for rel in base
        }
        assert all(0.0 <= float(m.get("credit", 0.5)) <= 1.0 for m in found.values())
        log = (machine / "logs" / "credit.jsonl").read_text().splitlines()
        assert len(log) == len(set(log)) == feedback
    status = cli("--vault", str(a), "status", "--json").json()["sync"]
    assert status["ahead"] == 0 and status["behind"] == 0 and status["push_pending"] is None
    assert status["last_sync"] and status["conflict_copies"] == []


def edit_line(root: Path, rel: str, old: str, new: str) -> None:
    path = root / rel
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


TOPIC = "entities/projects/topic-3.md"


def test_hand_edits_merge_line_by_line_and_a_clash_leaves_a_conflict_copy(
    remote: Path, cli: Any
) -> None:
    a, b = remote.parent / "a", clone(remote, "b", cli)
    edit_line(a, TOPIC, "Line 1 of", "Line one (edited on a) of")
    edit_line(b, TOPIC, "Line 7 of", "Line seven (edited on b) of")
    sync(cli, a)
    assert sync(cli, b)["conflict_copies"] == []
    text = (b / TOPIC).read_text()
    assert "Line one (edited on a)" in text and "Line seven (edited on b)" in text
    sync(cli, a)
    assert (a / TOPIC).read_text() == text

    edit_line(a, TOPIC, "Line 4 of", "Line four as a wrote it, of")
    edit_line(b, TOPIC, "Line 4 of", "Line four as b wrote it, of")
    sync(cli, a)
    doc = sync(cli, b)
    assert doc["conflict_copies"] == [
        f"entities/projects/topic-3 (conflict test {dt.date.today().isoformat()}).md"
    ]
    ours = (b / TOPIC).read_text()
    copy = (b / doc["conflict_copies"][0]).read_text()
    assert "Line four as b wrote it" in ours and "Line four as a wrote it" not in ours
    assert "Line four as a wrote it" in copy and "<<<<" not in ours + copy
    assert parse_text(copy).meta["conflict_of"] == TOPIC
    sync(cli, a)
    assert (a / doc["conflict_copies"][0]).is_file()
    status = cli("--vault", str(a), "status", "--json").json()["sync"]
    assert status["conflict_copies"] == doc["conflict_copies"]


def test_a_third_machine_clones_and_finds_everything(remote: Path, cli: Any) -> None:
    a = remote.parent / "a"
    MemoryAPI.open(a).add("entity", "Zebra Facts", "Zebras sleep standing up.", "projects")
    sync(cli, a)
    c = clone(remote, "c", cli)
    found = cli("--vault", str(c), "search", "zebras standing", "--json").json()["results"]
    assert found and found[0]["title"] == "Zebra Facts"
    assert len(metas(c)) == NOTES + 1
    config = git("config", "--get", "merge.vb-note.driver", cwd=c)
    assert "git_merge note %O %A %B %P" in config and sys.executable in config


def test_unreachable_remote_commits_locally_then_pushes_when_back(remote: Path, cli: Any) -> None:
    a = remote.parent / "a"
    moved = remote.with_name("moved.git")
    remote.rename(moved)
    MemoryAPI.open(a).add("entity", "Offline Note", "Written while offline.", "projects")
    res = cli("--vault", str(a), "sync")
    assert res.exit_code == 0, res.stderr
    assert "push pending: cannot reach origin" in res.stdout
    assert "nothing to commit" in cli("--vault", str(a), "sync").stdout
    status = cli("--vault", str(a), "status", "--json").json()["sync"]
    assert status["push_pending"] and status["ahead"] == 1
    moved.rename(remote)
    doc = sync(cli, a)
    assert doc["pushed"] and doc["push_pending"] is None and doc["ahead"] == 0
    assert "Offline Note" in git("show", "main:entities/projects/offline-note.md", cwd=remote)


def test_a_rejected_push_is_merged_again_and_retried(remote: Path, cli: Any) -> None:
    """The remote moves between our fetch and our push: fetch, merge and push again."""
    a, b = remote.parent / "a", clone(remote, "b", cli)
    edit_line(b, TOPIC, "Line 2 of", "Line two from b of")
    sync(cli, b)
    edit_line(a, TOPIC, "Line 5 of", "Line five from a of")
    # a fetched before b pushed: its remote-tracking ref is stale, so its first push is rejected
    doc = sync(cli, a)
    assert doc["pushed"] and doc["merged"] == 1
    assert "Line two from b" in (a / TOPIC).read_text()


def test_tasks_merge_by_id_and_transcripts_record_by_record(remote: Path, cli: Any) -> None:
    a, b = remote.parent / "a", clone(remote, "b", cli)
    for machine, text in ((a, "first task"), (b, "second task")):
        res = cli("--vault", str(machine), "tasks", "add", text)
        assert res.exit_code == 0, res.stderr
    shared = "sessions/shared.jsonl"
    common = '{"ts": "2026-01-01T00:00:00+00:00", "type": "user", "content": "hello"}\n'
    for machine in (a, b):
        (machine / shared).write_text(common)
    sync(cli, a)
    sync(cli, b)
    line_a = '{"ts": "2026-01-01T00:00:01+00:00", "type": "assistant", "content": "from a"}\n'
    line_b = '{"ts": "2026-01-01T00:00:02+00:00", "type": "assistant", "content": "from b"}\n'
    (a / shared).write_text(common + line_a)
    (b / shared).write_text(common + line_b)
    sync(cli, a)
    sync(cli, b)
    sync(cli, a)
    for machine in (a, b):
        tasks = json.loads((machine / "tasks.json").read_text())["tasks"]
        assert sorted(t["description"] for t in tasks) == ["first task", "second task"]
        assert (machine / shared).read_text() == common + line_a + line_b
        index = json.loads((machine / "sessions" / "sessions.json").read_text())
        assert "shared" in index["sessions"]


def test_git_merge_by_hand_uses_the_installed_drivers(remote: Path, cli: Any) -> None:
    """A person's own `git pull` merges counters with `vb merge-driver`, one process per file."""
    a, b = remote.parent / "a", clone(remote, "b", cli)
    for machine, session, times in ((a, "sa", 1), (b, "sb", 2)):
        api = MemoryAPI.open(machine, session=session)
        for _ in range(times):
            assert api.search("topic3 subject", k=1).results[0].path == TOPIC
    before = int(parse_text((a / TOPIC).read_bytes()).meta.get("access_count") or 0)
    sync(cli, a)
    git("add", "-A", cwd=b)
    git("commit", "-qm", "by hand", cwd=b)
    git("pull", "-q", "--no-rebase", "--no-edit", "origin", "main", cwd=b)
    meta = parse_text((b / TOPIC).read_bytes()).meta
    assert meta["access_count"] == before + 2
    assert "<<<<" not in (b / TOPIC).read_text()


def test_a_failing_driver_exits_non_zero(tmp_path: Path) -> None:
    for name in ("base", "ours", "theirs"):
        (tmp_path / name).write_text("{not json " + name)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "vault_brain",
            "merge-driver",
            "tasks",
            "base",
            "ours",
            "theirs",
            "tasks.json",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode != 0 and "tasks.json" in proc.stderr
    assert (tmp_path / "ours").read_text() == "{not json ours"


def bump(root: Path, times: int, session: str) -> None:
    api = MemoryAPI.open(root, session=session)
    for _ in range(times):
        assert api.search("topic3 subject", k=1).results[0].path == TOPIC


def count_of(root: Path) -> int:
    return int(parse_text((root / TOPIC).read_bytes()).meta.get("access_count") or 0)


def test_a_merge_a_kill_interrupted_is_finished_by_the_next_sync(remote: Path, cli: Any) -> None:
    a, b = remote.parent / "a", clone(remote, "b", cli)
    bump(a, 1, "sa")
    bump(b, 2, "sb")
    sync(cli, a)
    git("add", "-A", cwd=b)
    git("commit", "-qm", "local", cwd=b)
    git("fetch", "-q", "origin", cwd=b)
    # what a kill right after `git merge` leaves: MERGE_HEAD, and vb's files still ours
    config = [f"merge.vb-{k}.driver=true" for k in ("note", "jsonl", "tasks", "ours")]
    args = [x for c in config for x in ("-c", c)]
    git(*args, "merge", "--no-commit", "--no-ff", "origin/main", cwd=b)
    assert (b / ".git" / "MERGE_HEAD").exists() and count_of(b) == 2
    doc = sync(cli, b)
    assert doc["resumed"] and doc["pushed"]
    assert not (b / ".git" / "MERGE_HEAD").exists() and count_of(b) == 3
    assert git("status", "--porcelain", cwd=b) == ""


def test_sync_killed_at_any_moment_is_finished_by_rerunning_it(remote: Path, cli: Any) -> None:
    a, b = remote.parent / "a", clone(remote, "b", cli)
    rng = random.Random(7)
    expected = count_of(a)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    for round_ in range(4):
        bump(a, 1, "sa")
        bump(b, 2, "sb")
        expected += 3
        sync(cli, a)
        proc = subprocess.Popen(
            [sys.executable, "-m", "vault_brain", "--vault", str(b), "sync"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(0.3 + rng.random() * 0.9)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        proc.wait()
        lock = b / ".git" / "index.lock"
        if lock.exists():  # git itself was killed mid-write: what a person removes by hand
            lock.unlink()
        sync(cli, b)
        sync(cli, a)
        assert count_of(a) == count_of(b) == expected, round_
        assert conflict_copies(b) == []


def test_init_and_adopt_declare_and_install_the_drivers(
    tmp_path: Path, git_env: dict[str, str], cli: Any
) -> None:
    fresh = tmp_path / "fresh"
    assert cli("init", str(fresh)).exit_code == 0
    assert "*.md merge=vb-note" in (fresh / ".gitattributes").read_text()
    assert "git_merge note" in git("config", "merge.vb-note.driver", cwd=fresh)
    assert git("config", "merge.vb-ours.driver", cwd=fresh).strip() == "true"
    adopted = tmp_path / "obsidian"
    adopted.mkdir()
    (adopted / "Hand note.md").write_text("# Hand note\n\nKept as it is.\n")
    git("init", "-q", cwd=adopted)
    assert cli("init", "--adopt", str(adopted)).exit_code == 0
    assert "tasks.json merge=vb-tasks" in (adopted / ".gitattributes").read_text()
    assert "git_merge jsonl" in git("config", "merge.vb-jsonl.driver", cwd=adopted)


def test_sync_while_vb_watch_runs_keeps_the_index_live(remote: Path, cli: Any) -> None:
    """With a watcher running on machine a, a sync that merges b's note and pushes a's own
    succeeds, the watcher keeps running (and exits cleanly), and a search finds the merged
    note."""
    a = remote.parent / "a"
    b = clone(remote, "b", cli)
    with watching(a) as watcher:
        MemoryAPI.open(b).add("entity", "Okapi Facts", "Okapis have striped legs.", "projects")
        sync(cli, b)
        MemoryAPI.open(a).add("entity", "Quokka Facts", "Quokkas live on Rottnest.", "projects")
        result = sync(cli, a)
        assert result["merged"] >= 1 and result["pushed"] is True
        assert watcher.poll() is None  # still running
        report = cli("--vault", str(a), "status", "--json").json()
        assert report["watcher"]["alive"] is True
        found = cli("--vault", str(a), "search", "okapis striped", "--json").json()["results"]
        assert [h["title"] for h in found][:1] == ["Okapi Facts"]
    assert watcher.returncode == 0, watcher.stderr.read() if watcher.stderr else ""


def test_items_extracted_on_two_machines_merge_by_item_id(
    remote: Path, cli: Any, tmp_path: Path
) -> None:
    a, b = remote.parent / "a", clone(remote, "b", cli)
    project = tmp_path / "proj"
    project.mkdir()
    (project / "x.md").write_text("We chose Whoosh over SQLite for search.\n")
    (project / "y.md").write_text("We decided to sync the vault with git.\n")
    assert cli("--vault", str(a), "extract", str(project / "x.md")).exit_code == 0
    sync(cli, a)
    sync(cli, b)
    # b extracts another file of the project while a re-extracts a changed one
    assert (
        cli("--vault", str(b), "extract", str(project / "y.md"), "--project", "proj").exit_code == 0
    )
    (project / "x.md").write_text("We chose Whoosh over Xapian for search.\n")
    assert cli("--vault", str(a), "extract", "--project", "proj").exit_code == 0
    sync(cli, a)
    sync(cli, b)
    sync(cli, a)
    items = "items/proj/items.json"
    assert (a / items).read_bytes() == (b / items).read_bytes()
    merged = json.loads((a / items).read_text())
    assert sorted(i["content"] for i in merged) == [
        "We chose Whoosh over Xapian for search.",
        "We decided to sync the vault with git.",
    ]
    assert not conflict_copies(a) and "<<<<" not in (a / items).read_text()
    archived = (a / "archive/items/proj/items.expired.jsonl").read_text()
    assert "over SQLite" in archived  # the replaced item, archived on a, synced


def test_a_vault_with_older_attributes_gets_the_new_drivers_added(tmp_path: Path) -> None:
    from vault_brain.storage.git.sync import ATTRIBUTES, ensure_attributes

    old = "\n".join(line for line in ATTRIBUTES.splitlines() if "items" not in line) + "\n"
    (tmp_path / ".gitattributes").write_text("*.png binary\n\n" + old)
    assert ensure_attributes(tmp_path) is True
    text = (tmp_path / ".gitattributes").read_text()
    assert text.startswith("*.png binary\n\n" + old)
    assert "items/*/items.json merge=vb-items" in text.splitlines()
    assert ensure_attributes(tmp_path) is False  # and only once
