"""Many writers on one remote: pushes that lose the race are fetched, merged and pushed again
after a jittered pause until they land or `--retry-for` passes (then the vault holds a
finished merge, never one in progress); a refusal that is not a race is not retried;
`vb sync --every` keeps syncing; folders of transcripts and episodes stay small (day shards).
Real git throughout: a bare repository as the remote, clones as machines."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from test_sync import clone, remote, sync

from conftest import git
from vault_brain.app.api import MemoryAPI
from vault_brain.app.sync.remote import FIRST_PAUSE, LONGEST_PAUSE, backoff
from vault_brain.interfaces.cli.sync import parse_every
from vault_brain.storage import paths as vault_paths
from vault_brain.storage.sessions.transcript import SessionIndex

__all__ = ["remote"]  # the fixture, shared with test_sync

# A pre-receive hook that moves the branch to a new commit while each push is received: the
# push's old value is gone when its ref is updated, as when another machine pushed first.
MOVING_HOOK = """#!/bin/sh
unset GIT_QUARANTINE_PATH GIT_OBJECT_DIRECTORY GIT_ALTERNATE_OBJECT_DIRECTORIES
tree=$(git rev-parse refs/heads/main^{tree})
git update-ref refs/heads/main $(git commit-tree $tree -p refs/heads/main -m "moved meanwhile")
"""
DECLINING_HOOK = "#!/bin/sh\necho 'pushes are closed for maintenance' >&2\nexit 1\n"


def hook(bare: Path, text: str) -> None:
    path = bare / "hooks" / "pre-receive"
    path.write_text(text)
    path.chmod(0o755)


def test_the_pause_after_a_lost_race_grows_is_jittered_and_bounded() -> None:
    rng = random.Random(3)
    for attempt in range(1, 12):
        ceiling = min(LONGEST_PAUSE, FIRST_PAUSE * 2 ** (attempt - 1))
        pauses = [backoff(attempt, rng) for _ in range(200)]
        assert all(ceiling / 2 <= p <= ceiling for p in pauses)
        assert len(set(pauses)) == 200  # never in step with the other losers
    assert backoff(40) <= LONGEST_PAUSE


@pytest.mark.parametrize(("text", "seconds"), [("30s", 30), ("5m", 300), ("1h", 3600), ("90", 90)])
def test_every_takes_seconds_minutes_or_hours(text: str, seconds: float) -> None:
    assert parse_every(text) == seconds


@pytest.mark.parametrize("text", ["0", "0.5s", "soon", "", "-5m", "nan"])
def test_every_refuses_what_is_not_an_interval(cli: Any, vault: Path, text: str) -> None:
    res = cli("--vault", str(vault), "sync", "--every", text)
    assert res.exit_code == 2, res.stdout + res.stderr
    assert "--every" in res.stderr and "hint: give seconds" in res.stderr


def test_writers_pushing_at_once_all_land(remote: Path, cli: Any, git_env: dict[str, str]) -> None:
    """Four machines sync at the same moment, each with a note of its own: every push lands
    (the losers fetch, merge and retry), and one more round leaves them all at one HEAD."""
    machines = [clone(remote, f"m{i}", cli) for i in range(4)]
    for i, root in enumerate(machines):
        MemoryAPI.open(root).add("entity", f"Racer {i}", f"Racer {i} wrote this note.", "projects")
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "vault_brain", "--vault", str(root), "sync", "--json"],
            env={**os.environ, "VB_MACHINE": root.name},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for root in machines
    ]
    docs = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, out + err
        docs.append(json.loads(out))
    assert all(doc["pushed"] and doc["push_pending"] is None for doc in docs), docs
    heads = {sync(cli, root) and git("rev-parse", "HEAD", cwd=root) for root in machines}
    assert heads == {git("rev-parse", "main", cwd=remote)}
    for root in machines:
        assert {f"racer-{i}.md" for i in range(4)} <= {
            p.name for p in (root / "entities/projects").glob("*.md")
        }
        assert not (root / ".git/MERGE_HEAD").exists()


def test_a_remote_that_keeps_moving_stops_at_the_bound_with_a_finished_merge(
    remote: Path, cli: Any
) -> None:
    a = remote.parent / "a"
    MemoryAPI.open(a).add("entity", "Late note", "A note that waits for its push.", "projects")
    hook(remote, MOVING_HOOK)
    res = cli("--vault", str(a), "sync", "--retry-for", "1.5", "--json")
    assert res.exit_code == 0, res.stdout + res.stderr
    doc = res.json()
    assert not doc["pushed"] and doc["attempts"] >= 2 and doc["waited"] > 0
    assert "kept moving" in doc["push_pending"] and "next sync" in doc["push_pending"]
    assert not (a / ".git/MERGE_HEAD").exists()
    assert git("status", "--porcelain", cwd=a) == ""
    # everything fetched is merged: the remote's moved commits are ancestors of HEAD
    git("fetch", "-q", "origin", cwd=a)
    assert "moved meanwhile" in git("log", "--format=%s", "-3", "origin/main", cwd=a)
    assert git("merge-base", "--is-ancestor", "origin/main~1", "HEAD", cwd=a) == ""
    hook(remote, "#!/bin/sh\nexit 0\n")
    assert sync(cli, a)["pushed"]
    assert "late-note.md" in git("ls-tree", "-r", "--name-only", "main", cwd=remote)


def test_a_refusal_that_is_not_a_race_is_not_retried(remote: Path, cli: Any) -> None:
    a = remote.parent / "a"
    MemoryAPI.open(a).add(
        "entity", "Closed note", "A note the remote will not take yet.", "projects"
    )
    hook(remote, DECLINING_HOOK)
    doc = sync(cli, a)
    assert doc["attempts"] == 1 and not doc["pushed"]
    assert doc["push_pending"].startswith("cannot push to origin")
    assert "hook declined" in doc["push_pending"]


def test_sync_every_keeps_syncing_until_interrupted(remote: Path, cli: Any) -> None:
    a, b = remote.parent / "a", clone(remote, "b", cli)
    proc = subprocess.Popen(
        [sys.executable, "-m", "vault_brain", "--vault", str(b), "sync", "--every", "1s"],
        env={**os.environ, "VB_MACHINE": "b"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    received = threading.Event()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if "received 1 commit" in line:
                received.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        MemoryAPI.open(a).add("entity", "Scheduled", "Received on b's schedule.", "projects")
        sync(cli, a)
        assert received.wait(60), "the scheduled sync never received the note: " + "".join(lines)
        # ...and it keeps going: a later round reports again
        for _ in range(300):
            if sum(line.startswith("[") for line in lines) >= 2:
                break
            time.sleep(0.1)
    finally:
        proc.send_signal(2)  # Ctrl-C
        _, err = proc.communicate(timeout=60)
        reader.join(10)
    assert proc.returncode == 0, "".join(lines) + err
    assert "stopped syncing" in err
    assert (b / "entities/projects/scheduled.md").is_file()
    assert sum(line.startswith("[") for line in lines) >= 2, lines  # a stamped report a round
    assert not (b / ".git/MERGE_HEAD").exists()


def test_transcripts_go_to_day_shards_once_sessions_is_full(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vault_paths, "SHARD_AT", 5)
    api = MemoryAPI.open(vault, session="s0")
    for n in range(8):
        MemoryAPI.open(vault, session=f"s{n}").add(
            "entity", f"Shard {n}", f"Shard note {n}.", "projects"
        )
        MemoryAPI.open(vault, session=f"s{n}").search("shard note", k=2)
    flat = sorted(p.name for p in (vault / "sessions").glob("*.jsonl"))
    shards = [p for p in (vault / "sessions").iterdir() if p.is_dir()]
    assert len(flat) <= 5 and len(shards) == 1
    moved_on = sorted(p.name for p in shards[0].glob("*.jsonl"))
    assert sorted(flat + moved_on) == sorted(f"s{n}.jsonl" for n in range(8))
    # a sharded session is found where it was written: read, appended to, listed
    late = moved_on[-1].removesuffix(".jsonl")
    assert api.vault.paths.transcript(late) == shards[0] / f"{late}.jsonl"
    before = (shards[0] / f"{late}.jsonl").stat().st_size
    MemoryAPI.open(vault, session=late).search("shard note", k=1)
    assert (shards[0] / f"{late}.jsonl").stat().st_size > before
    assert {i.id for i in SessionIndex(api.vault.paths).all()} == {f"s{n}" for n in range(8)}


def test_episodes_go_to_the_day_then_the_machine_once_a_folder_is_full(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vault_paths, "SHARD_AT", 3)
    monkeypatch.setenv("VB_MACHINE", "laptop")
    api = MemoryAPI.open(vault)
    rels = [api.add("episode", f"Standup {n}", f"Standup number {n} went well.").note.path
            for n in range(9)]  # fmt: skip
    folders = [rel.rsplit("/", 1)[0] for rel in rels]
    month = folders[0]
    assert folders[:3] == [month] * 3
    assert folders[3:6] == [f"{month}/{folders[3][-2:]}"] * 3
    assert folders[6:] == [f"{folders[3]}/laptop"] * 3
    found = {hit.path for hit in api.search("standup went well", k=20).results}
    assert set(rels) <= found


def test_a_small_team_converges_with_no_write_lost_and_exact_counters(tmp_path: Path) -> None:
    """`scripts/bench_team.py` played small: three agent processes, each in its own clone,
    adding, searching with sessions, giving feedback, editing by hand (and clashing on
    purpose) and syncing on their own schedules for 25 s; then the benchmark's own checks,
    which must also catch a lost note and a wrong counter when one is made."""
    from conftest import REPO, load_script

    sys.path.insert(0, str(REPO / "scripts"))  # (its `bench_common`)
    bench = load_script("bench_team")
    out = tmp_path / "team"
    report = bench.run(out, agents=3, minutes=25 / 60, sync_every=4.0, pause=0.4)
    assert report["problems"] == [], report
    assert report["lost_writes"] == 0 and report["counters_wrong"] == 0
    assert report["stray_conflict_copies"] == 0 and report["step_errors"] == 0
    assert report["notes_added"] > 10 and report["counters_checked"] > 5
    assert report["syncs"] >= 6 and report["commits_landed"] >= 6
    clones = sorted((out / "clones").iterdir())
    ledgers = [json.loads(p.read_text()) for p in sorted((out / "ledgers").glob("*.json"))]
    token, path = ledgers[0]["added"][0]
    (clones[0] / path).unlink()
    counted = next(iter(ledgers[1]["accesses"]))
    note = clones[0] / counted
    note.write_text(re.sub(r"access_count: \d+", "access_count: 999", note.read_text()))
    again = bench.check(out / "remote.git", clones, ledgers)
    assert again["lost_writes"] >= 1 and again["counters_wrong"] >= 1
    assert any(token in p for p in again["problems"])
