"""Task memory (tasks.json): ids, statuses, dependencies, a hand-edited file, crashes and races."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import run_vb
from vault_brain.domain.sessions import task_format, tasks
from vault_brain.storage import files as store


def vb(cli: Any, vault: Path, *args: str) -> dict[str, Any]:
    """Run `vb tasks ...` with --json, expect success, return the document."""
    res = cli("--vault", str(vault), "tasks", *args, "--json")
    assert res.exit_code == 0, res.stderr
    doc = res.json()
    assert doc["version"] == 2
    return doc


def fails(cli: Any, vault: Path, *args: str, code: int = 1) -> str:
    """Run `vb tasks ...`, expect the given exit code, return stderr."""
    res = cli("--vault", str(vault), "tasks", *args)
    assert res.exit_code == code, (res.exit_code, res.stdout, res.stderr)
    assert res.stdout == ""
    return str(res.stderr)


def add(cli: Any, vault: Path, description: str, *opts: str) -> str:
    return str(vb(cli, vault, "add", description, *opts)["task"]["id"])


def stored(vault: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((vault / "tasks.json").read_text(encoding="utf-8"))
    return data


def by_id(vault: Path) -> dict[str, dict[str, Any]]:
    return {t["id"]: t for t in stored(vault)["tasks"]}


def write_tasks(vault: Path, data: Any) -> bytes:
    raw = json.dumps(data, indent=1).encode()
    (vault / "tasks.json").write_bytes(raw)
    return raw


def temp_files(vault: Path) -> list[str]:
    return [p.name for p in vault.iterdir() if p.name.endswith(".vbtmp")]


# ---------------------------------------------------------------------------
# add and ids


def test_add_fills_every_schema_key_and_numbers_ids_from_t1(cli: Any, vault: Path) -> None:
    doc = vb(
        cli,
        vault,
        "add",
        "Write the lock",
        "-p",
        "p1",
        "-m",
        "M1",
        "--criterion",
        "lock taken",
        "--criterion",
        "freed",
    )
    assert doc["action"] == "add" and doc["changed"] is True
    task = doc["task"]
    assert task["id"] == "t1"
    assert task["status"] == "todo" and task["ready"] is True and task["open_blockers"] == []
    assert (task["priority"], task["milestone"]) == ("p1", "M1")
    assert task["acceptance_criteria"] == ["lock taken", "freed"]
    assert task["completed"] is None and task["blocked_by"] == []
    assert task["created"][:4].isdigit() and "T" in task["created"]
    assert add(cli, vault, "second") == "t2"
    on_disk = stored(vault)
    assert [list(t) for t in on_disk["tasks"]] == [list(tasks.KNOWN_KEYS)] * 2
    assert on_disk["tasks"][1]["priority"] == "p2"  # the default


def test_missing_file_reads_as_empty_and_is_created_by_the_first_write(
    cli: Any, vault: Path
) -> None:
    path = vault / "tasks.json"
    path.unlink()
    doc = vb(cli, vault, "list")
    assert (doc["tasks"], doc["count"], doc["ready"]) == ([], 0, 0)
    assert not path.exists(), "reading must not create the file"
    assert "no tasks yet" in cli("--vault", str(vault), "tasks", "list").stdout
    assert add(cli, vault, "first") == "t1"
    assert [t["id"] for t in stored(vault)["tasks"]] == ["t1"]


def test_ids_are_never_reused_after_a_task_is_removed_by_hand(cli: Any, vault: Path) -> None:
    for name in ("a", "b", "c"):
        add(cli, vault, name)
    data = stored(vault)
    data["tasks"] = [t for t in data["tasks"] if t["id"] != "t3"]
    write_tasks(vault, data)
    assert add(cli, vault, "d") == "t4"


def test_ids_continue_above_hand_written_ones(cli: Any, vault: Path) -> None:
    write_tasks(
        vault, {"tasks": [{"id": "t7", "description": "x"}, {"id": "TASK-001", "description": "y"}]}
    )
    assert add(cli, vault, "z") == "t8"


def test_add_refuses_unknown_priority_and_empty_description(cli: Any, vault: Path) -> None:
    before = (vault / "tasks.json").read_bytes()
    err = fails(cli, vault, "add", "x", "-p", "urgent")
    assert "unknown priority 'urgent'" in err and "p0" in err
    assert "needs a description" in fails(cli, vault, "add", "   ")
    assert (vault / "tasks.json").read_bytes() == before


def test_add_accepts_priority_in_any_case(cli: Any, vault: Path) -> None:
    assert vb(cli, vault, "add", "x", "-p", "P0")["task"]["priority"] == "p0"


# ---------------------------------------------------------------------------
# list


def test_list_sorts_by_priority_then_natural_id_and_marks_ready(cli: Any, vault: Path) -> None:
    write_tasks(
        vault,
        {
            "tasks": [
                {"id": "t10", "description": "ten", "priority": "p1"},
                {"id": "t2", "description": "two", "priority": "p1"},
                {
                    "id": "t3",
                    "description": "three",
                    "priority": "p0",
                    "blocked_by": ["t2"],
                    "status": "blocked",
                },
                {"id": "t4", "description": "four", "priority": "p3", "status": "done"},
                {"id": "t5", "description": "five", "priority": "p2", "status": "in_progress"},
            ]
        },
    )
    doc = vb(cli, vault, "list")
    assert [t["id"] for t in doc["tasks"]] == ["t3", "t2", "t10", "t5", "t4"]
    ready = {t["id"]: t["ready"] for t in doc["tasks"]}
    assert ready == {"t3": False, "t2": True, "t10": True, "t5": True, "t4": False}
    assert doc["tasks"][0]["open_blockers"] == ["t2"]
    assert (doc["count"], doc["ready"]) == (5, 3)
    human = cli("--vault", str(vault), "tasks", "list").stdout
    assert human.splitlines()[0].split() == [
        "id",
        "pri",
        "status",
        "ready",
        "milestone",
        "waits",
        "on",
        "task",
    ]
    assert human.rstrip().endswith("5 tasks, 3 ready")


def test_list_filters_by_status_milestone_and_readiness(cli: Any, vault: Path) -> None:
    add(cli, vault, "a", "-m", "M1")
    add(cli, vault, "b", "-m", "M2", "-b", "t1")
    add(cli, vault, "c", "-m", "M1")
    vb(cli, vault, "done", "t3")
    assert [t["id"] for t in vb(cli, vault, "list", "--status", "blocked")["tasks"]] == ["t2"]
    assert [t["id"] for t in vb(cli, vault, "list", "--status", "done")["tasks"]] == ["t3"]
    assert [t["id"] for t in vb(cli, vault, "list", "-m", "M1")["tasks"]] == ["t1", "t3"]
    assert [t["id"] for t in vb(cli, vault, "list", "--ready")["tasks"]] == ["t1"]
    assert vb(cli, vault, "list", "-m", "M9")["tasks"] == []
    assert cli("--vault", str(vault), "tasks", "list", "-m", "M9").stdout == "no tasks match\n"
    err = fails(cli, vault, "list", "--status", "finished")
    assert "unknown status 'finished'" in err and "in_progress" in err


# ---------------------------------------------------------------------------
# dependencies: unknown ids and cycles


def test_unknown_blockers_are_refused_by_name_and_nothing_is_written(cli: Any, vault: Path) -> None:
    add(cli, vault, "a")
    before = (vault / "tasks.json").read_bytes()
    err = fails(cli, vault, "add", "b", "-b", "t1,t8", "-b", "t9", code=3)
    assert "no tasks t8, t9 in tasks.json" in err
    assert "vb: hint:" in err
    err = fails(cli, vault, "block", "t1", "--by", "t5", code=3)
    assert "no task t5" in err
    assert "no task 't7'" in fails(cli, vault, "block", "t7", "--by", "t1", code=3)
    assert (vault / "tasks.json").read_bytes() == before


@pytest.mark.parametrize(
    ("chain", "block", "cycle"),
    [
        ([], ("t1", "t1"), "t1 -> t1"),
        ([("t2", "t1")], ("t1", "t2"), "t1 -> t2 -> t1"),
        ([("t2", "t1"), ("t3", "t2")], ("t1", "t3"), "t1 -> t3 -> t2 -> t1"),
    ],
    ids=["self", "two", "three"],
)
def test_dependency_cycles_are_refused_with_the_cycle_path(
    cli: Any, vault: Path, chain: list[tuple[str, str]], block: tuple[str, str], cycle: str
) -> None:
    for _ in range(3):
        add(cli, vault, "task")
    for task_id, blocker in chain:
        vb(cli, vault, "block", task_id, "--by", blocker)
    before = (vault / "tasks.json").read_bytes()
    err = fails(cli, vault, "block", block[0], "--by", block[1])
    assert f"dependency cycle {cycle}" in err
    assert (vault / "tasks.json").read_bytes() == before


def test_block_makes_a_task_wait_and_blocking_again_changes_nothing(cli: Any, vault: Path) -> None:
    add(cli, vault, "a")
    add(cli, vault, "b")
    vb(cli, vault, "update", "t2", "--status", "in_progress")
    doc = vb(cli, vault, "block", "t2", "--by", "t1")
    assert doc["added_blockers"] == ["t1"] and doc["changed"] is True
    assert doc["task"]["status"] == "blocked" and doc["task"]["open_blockers"] == ["t1"]
    before = (vault / "tasks.json").read_bytes()
    again = vb(cli, vault, "block", "t2", "--by", "t1")
    assert again["added_blockers"] == [] and again["changed"] is False
    assert (vault / "tasks.json").read_bytes() == before


def test_waiting_on_a_done_task_does_not_block(cli: Any, vault: Path) -> None:
    add(cli, vault, "a")
    add(cli, vault, "b")
    vb(cli, vault, "done", "t1")
    assert vb(cli, vault, "add", "c", "-b", "t1")["task"]["status"] == "todo"
    doc = vb(cli, vault, "block", "t2", "--by", "t1")
    assert doc["task"]["status"] == "todo" and doc["task"]["blocked_by"] == ["t1"]


def test_a_done_task_cannot_start_waiting_on_an_open_one(cli: Any, vault: Path) -> None:
    add(cli, vault, "a")
    add(cli, vault, "b")
    vb(cli, vault, "done", "t1")
    err = fails(cli, vault, "block", "t1", "--by", "t2")
    assert "t1 is done" in err and "vb tasks update t1 --status todo" in err


# ---------------------------------------------------------------------------
# done, reopening, unblocking


def test_done_is_refused_while_blockers_are_open_unless_forced(cli: Any, vault: Path) -> None:
    add(cli, vault, "a")
    add(cli, vault, "b", "-b", "t1")
    before = (vault / "tasks.json").read_bytes()
    err = fails(cli, vault, "done", "t2")
    assert "t2 is still blocked by t1" in err and "--force" in err
    assert (vault / "tasks.json").read_bytes() == before
    doc = vb(cli, vault, "done", "t2", "--force")
    assert doc["forced"] is True and doc["task"]["status"] == "done"
    assert by_id(vault)["t1"]["status"] == "todo"


def test_done_records_completion_and_unblocks_tasks_with_no_other_open_blocker(
    cli: Any, vault: Path
) -> None:
    add(cli, vault, "a")
    add(cli, vault, "b")
    add(cli, vault, "waits on a", "-b", "t1")
    add(cli, vault, "waits on a and b", "-b", "t1,t2")
    write = by_id(vault)
    assert (write["t3"]["status"], write["t4"]["status"]) == ("blocked", "blocked")
    doc = vb(cli, vault, "done", "t1")
    assert doc["changed"] is True and doc["forced"] is False
    assert doc["unblocked"] == ["t3"]
    assert doc["task"]["completed"] and doc["task"]["status"] == "done"
    on_disk = by_id(vault)
    assert on_disk["t1"]["completed"] == doc["task"]["completed"]
    assert (on_disk["t3"]["status"], on_disk["t4"]["status"]) == ("todo", "blocked")
    human = cli("--vault", str(vault), "tasks", "done", "t2").stdout
    assert "unblocked (now todo): t4" in human
    assert by_id(vault)["t4"]["status"] == "todo"


def test_done_leaves_tasks_blocked_for_other_reasons_alone(cli: Any, vault: Path) -> None:
    add(cli, vault, "a")
    add(cli, vault, "waiting for the client")
    vb(cli, vault, "update", "t2", "--status", "blocked")
    assert vb(cli, vault, "done", "t1")["unblocked"] == []
    assert by_id(vault)["t2"]["status"] == "blocked"


def test_done_twice_changes_nothing(cli: Any, vault: Path) -> None:
    add(cli, vault, "a")
    first = vb(cli, vault, "done", "t1")
    path = vault / "tasks.json"
    before, inode = path.read_bytes(), path.stat().st_ino
    again = vb(cli, vault, "done", "t1")
    assert again["changed"] is False
    assert again["task"]["completed"] == first["task"]["completed"]
    assert path.read_bytes() == before
    assert path.stat().st_ino == inode, "an atomic rewrite would have made a new file"


def test_commands_that_change_nothing_leave_a_hand_formatted_file_as_it_is(
    cli: Any, vault: Path
) -> None:
    raw = (
        b'{"tasks":[{"id":"t1","description":"a","status":"done","completed":"2026-01-02"},\n'
        b'{"id":"t2","description":"b","blocked_by":["t1"],"priority":"p1"}]}'
    )
    path = vault / "tasks.json"
    path.write_bytes(raw)
    vb(cli, vault, "done", "t1")
    vb(cli, vault, "block", "t2", "--by", "t1")
    vb(cli, vault, "update", "t2", "-p", "p1")
    vb(cli, vault, "list")
    assert path.read_bytes() == raw


def test_reopening_clears_completion_and_blocks_waiting_todo_tasks_again(
    cli: Any, vault: Path
) -> None:
    add(cli, vault, "a")
    add(cli, vault, "b", "-b", "t1")
    vb(cli, vault, "done", "t1")
    doc = vb(cli, vault, "update", "t1", "--status", "in_progress")
    assert doc["task"]["status"] == "in_progress" and doc["task"]["completed"] is None
    assert doc["reblocked"] == ["t2"]
    assert set(doc["fields"]) == {"status", "completed"}
    assert by_id(vault)["t2"]["status"] == "blocked"


def test_update_to_done_follows_the_done_rules(cli: Any, vault: Path) -> None:
    add(cli, vault, "a")
    add(cli, vault, "b", "-b", "t1")
    assert "still blocked by t1" in fails(cli, vault, "update", "t2", "--status", "done")
    doc = vb(cli, vault, "update", "t1", "--status", "done")
    assert doc["unblocked"] == ["t2"] and doc["task"]["completed"]
    assert (
        vb(cli, vault, "update", "t2", "--status", "done", "-p", "p0")["task"]["status"] == "done"
    )


# ---------------------------------------------------------------------------
# update


def test_update_changes_each_field_and_reports_which(cli: Any, vault: Path) -> None:
    add(cli, vault, "draft", "-m", "M1", "--criterion", "one")
    doc = vb(
        cli,
        vault,
        "update",
        "t1",
        "-d",
        "final",
        "-p",
        "p0",
        "-m",
        "M2",
        "--criterion",
        "x",
        "--criterion",
        "y",
    )
    assert doc["fields"] == ["milestone", "priority", "description", "acceptance_criteria"]
    task = by_id(vault)["t1"]
    assert (task["description"], task["priority"], task["milestone"]) == ("final", "p0", "M2")
    assert task["acceptance_criteria"] == ["x", "y"]
    assert vb(cli, vault, "update", "t1", "--add-criterion", "z")["task"][
        "acceptance_criteria"
    ] == [
        "x",
        "y",
        "z",
    ]
    cleared = vb(cli, vault, "update", "t1", "--clear-criteria", "-m", "")["task"]
    assert cleared["acceptance_criteria"] == [] and cleared["milestone"] is None
    same = vb(cli, vault, "update", "t1", "-p", "p0")
    assert same["changed"] is False and same["fields"] == []
    assert "unchanged: t1" in cli("--vault", str(vault), "tasks", "update", "t1", "-p", "p0").stdout


def test_update_refuses_bad_input(cli: Any, vault: Path) -> None:
    add(cli, vault, "a")
    before = (vault / "tasks.json").read_bytes()
    assert "nothing to change for t1" in fails(cli, vault, "update", "t1")
    assert "unknown status 'started'" in fails(cli, vault, "update", "t1", "--status", "started")
    assert "unknown priority 'p9'" in fails(cli, vault, "update", "t1", "-p", "p9")
    assert "no task 't9'" in fails(cli, vault, "update", "t9", "-p", "p1", code=3)
    assert (vault / "tasks.json").read_bytes() == before


# ---------------------------------------------------------------------------
# a file written by people


def test_unknown_keys_in_tasks_and_at_the_top_survive_every_rewrite(cli: Any, vault: Path) -> None:
    write_tasks(
        vault,
        {
            "owner": "alice",
            "tasks": [
                {
                    "id": "t1",
                    "description": "a",
                    "status": "todo",
                    "estimate": {"hours": 3},
                    "notes": ["ask bob"],
                },
                {"id": "t2", "description": "b", "jira": "ABC-12"},
            ],
        },
    )
    add(cli, vault, "c", "-b", "t1")
    vb(cli, vault, "update", "t1", "-p", "p1")
    vb(cli, vault, "done", "t1")
    vb(cli, vault, "block", "t2", "--by", "t3")
    data = stored(vault)
    assert data["owner"] == "alice"
    tasks_ = {t["id"]: t for t in data["tasks"]}
    assert tasks_["t1"]["estimate"] == {"hours": 3} and tasks_["t1"]["notes"] == ["ask bob"]
    assert tasks_["t2"]["jira"] == "ABC-12"
    assert list(tasks_["t1"])[-2:] == ["estimate", "notes"]  # schema keys first, then theirs
    listed = vb(cli, vault, "list")["tasks"]
    assert next(t for t in listed if t["id"] == "t2")["extra"] == {"jira": "ABC-12"}


def _valid() -> dict[str, Any]:
    return {"tasks": [{"id": "t1", "description": "a"}]}


MALFORMED: dict[str, tuple[bytes, str]] = {
    "invalid json": (b'{"tasks": [\n  {"id": "t1",}\n]}', "invalid JSON"),
    "truncated": (b'{"tasks": [{"id": "t1", "descr', "invalid JSON"),
    "not utf-8": (b'{"tasks": [{"id": "t1", "description": "\xff"}]}', "not UTF-8"),
    "top-level list": (b"[]", "top level must be an object"),
    "no tasks list": (b'{"task": []}', "'tasks' list"),
    "task not object": (b'{"tasks": ["do it"]}', "task #1 must be an object"),
    "no id": (b'{"tasks": [{"description": "a"}]}', "task #1 needs an 'id'"),
    "bad status": (
        b'{"tasks": [{"id": "T-1", "description": "a", "status": "pending"}]}',
        "task T-1: status 'pending' is not one of",
    ),
    "bad priority": (
        b'{"tasks": [{"id": "t1", "description": "a", "priority": 1}]}',
        "priority 1 is not one of p0, p1, p2, p3",
    ),
    "criteria not list": (
        b'{"tasks": [{"id": "t1", "description": "a", "acceptance_criteria": "x"}]}',
        "'acceptance_criteria' must be a list of strings",
    ),
    "duplicate id": (
        b'{"tasks": [{"id": "t1", "description": "a"}, {"id": "t1", "description": "b"}]}',
        "two tasks have the id 't1'",
    ),
    "unknown blocker": (
        b'{"tasks": [{"id": "t1", "description": "a", "blocked_by": ["t4"]}]}',
        "task t1 is blocked by unknown task t4",
    ),
    "cycle": (
        b'{"tasks": [{"id": "t1", "description": "a", "blocked_by": ["t2"]},'
        b' {"id": "t2", "description": "b", "blocked_by": ["t1"]}]}',
        "dependency cycle t1 -> t2 -> t1",
    ),
}


@pytest.mark.parametrize("case", list(MALFORMED))
@pytest.mark.parametrize(
    "command",
    [
        ("list",),
        ("add", "x"),
        ("done", "t1"),
        ("block", "t1", "--by", "t1"),
        ("update", "t1", "-p", "p0"),
    ],
    ids=lambda c: c[0],
)
def test_malformed_file_is_reported_in_one_line_and_never_rewritten(
    cli: Any, vault: Path, case: str, command: tuple[str, ...]
) -> None:
    raw, problem = MALFORMED[case]
    path = vault / "tasks.json"
    path.write_bytes(raw)
    err = fails(cli, vault, *command)
    lines = err.splitlines()
    assert len(lines) == 2, err
    assert lines[0].startswith(f"vb: error: {path} is malformed: ")
    assert problem in lines[0]
    assert lines[1].startswith("vb: hint: fix it by hand")
    assert path.read_bytes() == raw
    assert temp_files(vault) == []


@pytest.mark.system
def test_malformed_file_fails_the_real_cli_with_a_non_zero_exit(vault: Path) -> None:
    path = vault / "tasks.json"
    path.write_bytes(b"{oops")
    res = run_vb("--vault", str(vault), "tasks", "add", "x")
    assert res.exit_code == 1 and res.stdout == ""
    assert "is malformed: invalid JSON" in res.stderr and "Traceback" not in res.stderr
    as_json = run_vb("--vault", str(vault), "tasks", "add", "x", "--json")
    error = as_json.json()["error"]
    assert as_json.exit_code == 1 and as_json.stderr == ""
    assert "is malformed: invalid JSON" in error["message"] and error["exit_code"] == 1
    assert path.read_bytes() == b"{oops"


def test_an_empty_file_and_missing_optional_keys_are_accepted(cli: Any, vault: Path) -> None:
    (vault / "tasks.json").write_bytes(b"")
    assert vb(cli, vault, "list")["tasks"] == []
    write_tasks(vault, _valid())
    task = vb(cli, vault, "list")["tasks"][0]
    assert (task["status"], task["priority"], task["blocked_by"]) == ("todo", "p2", [])
    add(cli, vault, "b")
    assert list(by_id(vault)["t1"]) == list(tasks.KNOWN_KEYS)


# ---------------------------------------------------------------------------
# crashes and concurrent writers


def test_a_failed_replace_leaves_the_old_file_and_the_change_is_finished_later(
    cli: Any, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rename over tasks.json fails (as on a full disk or a yanked drive) after the change
    was journaled: readers still see the old file, the error says the change will be
    finished, and the next command finishes it (no temp file is left)."""
    add(cli, vault, "keep me")
    path = vault / "tasks.json"
    before = path.read_bytes()
    real_replace = os.replace

    def replace_fails(src: Any, dst: Any) -> None:
        if Path(dst) == path:
            raise OSError(errno.EIO, "simulated failure during rename", str(dst))
        real_replace(src, dst)

    real_exchange = store._exchange

    def exchange_fails(tmp: str, dst: str) -> bool:
        if Path(dst) == path:
            raise OSError(errno.EIO, "simulated failure during rename", dst)
        return real_exchange(tmp, dst)

    monkeypatch.setattr(store.os, "replace", replace_fails)
    monkeypatch.setattr(store, "_exchange", exchange_fails)  # the atomic swap, on Linux
    err = fails(cli, vault, "add", "lost")
    assert f"cannot write {path}" in err and "will be finished by the next vb command" in err
    assert path.read_bytes() == before
    monkeypatch.undo()
    assert cli("--vault", str(vault), "status").exit_code == 0  # finishes the journaled change
    assert [t["description"] for t in stored(vault)["tasks"]] == ["keep me", "lost"]
    assert add(cli, vault, "next") == "t3"
    assert temp_files(vault) == []


CRASH_CHILD = """
import os, sys
from vault_brain.storage import files as store
real_replace = os.replace
def die(src, dst):
    if str(dst).endswith("tasks.json"):
        os._exit(9)  # the process dies between writing the temp file and renaming it
    real_replace(src, dst)
store.os.replace = die
real_exchange = store._exchange
def die_in_swap(tmp, dst):
    if str(dst).endswith("tasks.json"):
        os._exit(9)
    return real_exchange(tmp, dst)
store._exchange = die_in_swap  # the atomic swap, on Linux
sys.argv = ["vb", "--vault", sys.argv[1], "tasks", "add", "journaled"]
from vault_brain.entry import main
sys.exit(main())
"""


@pytest.mark.system
def test_a_process_killed_mid_write_leaves_valid_json_and_the_change_is_finished(
    vault: Path,
) -> None:
    """A real process death (os._exit, no cleanup runs) after the change was journaled and
    its temp file written, before the rename: tasks.json is still the old, valid document;
    the next command finishes the change and removes the dead writer's temp file."""
    res = run_vb("--vault", str(vault), "tasks", "add", "before the crash")
    assert res.exit_code == 0, res.stderr
    path = vault / "tasks.json"
    before = path.read_bytes()
    proc = subprocess.run(
        [sys.executable, "-c", CRASH_CHILD, str(vault)], capture_output=True, timeout=60
    )
    assert proc.returncode == 9, proc.stderr
    assert path.read_bytes() == before
    assert len(temp_files(vault)) == 1  # what the killed writer left
    res = run_vb("--vault", str(vault), "tasks", "add", "after the crash", "--json")
    assert res.exit_code == 0, res.stderr
    assert res.json()["task"]["id"] == "t3"
    tasks = [t["description"] for t in json.loads(path.read_bytes())["tasks"]]
    assert tasks == ["before the crash", "journaled", "after the crash"]
    assert temp_files(vault) == []


@pytest.mark.system
def test_four_concurrent_adds_get_four_distinct_ids(vault: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "VB_VAULT"}
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "vault_brain",
                "--vault",
                str(vault),
                "tasks",
                "add",
                f"racer {i}",
                "--json",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for i in range(4)
    ]
    outputs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, [err for _, err in outputs]
    ids = {json.loads(out)["task"]["id"] for out, _ in outputs}
    assert ids == {"t1", "t2", "t3", "t4"}
    data = stored(vault)
    assert sorted(t["description"] for t in data["tasks"]) == [f"racer {i}" for i in range(4)]
    assert {t["id"] for t in data["tasks"]} == ids
    assert temp_files(vault) == []


# ---------------------------------------------------------------------------
# the pure core and the help text


def test_find_cycle_and_path_between_on_values() -> None:
    task_list = tasks.TaskList(
        [
            tasks.Task("t1", "a", blocked_by=["t2"]),
            tasks.Task("t2", "b", blocked_by=["t3"]),
            tasks.Task("t3", "c"),
        ]
    )
    assert tasks.find_cycle(task_list) is None
    assert tasks.path_between(task_list, "t1", "t3") == ["t1", "t2", "t3"]
    assert tasks.path_between(task_list, "t3", "t1") is None
    task_list.get("t3").blocked_by.append("t1")
    assert tasks.find_cycle(task_list) == ["t1", "t2", "t3", "t1"]


def test_parse_and_dump_round_trip_keeps_everything() -> None:
    raw = json.dumps(
        {"tasks": [{"id": "t1", "description": "a", "x": 1}], "next_id": 5, "meta": True}
    ).encode()
    task_list = task_format.parse_tasks(raw)
    again = task_format.parse_tasks(task_format.dump_tasks(task_list).encode())
    assert again == task_list
    assert task_list.allocate_id() == "t5"


def test_help_documents_statuses_priorities_and_ids(cli: Any) -> None:
    group = cli("tasks", "--help").stdout
    for word in ("todo", "in_progress", "blocked", "done", "p0", "p3", "t1", "never reused"):
        assert word in group
    for command in ("list", "add", "update", "done", "block"):
        res = cli("tasks", command, "--help")
        assert res.exit_code == 0 and "--json" in res.stdout
    assert "p0 (drop everything)" in cli("tasks", "add", "--help").stdout
