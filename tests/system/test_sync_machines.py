"""Machines sharing a vault through a real git remote (a bare repository, clones with their own
.vb/): reads in the same second, criss-cross merges, a week of use."""

from __future__ import annotations

import datetime as dt
import os
import time
from pathlib import Path
from typing import Any

import pytest
from test_sync import TOPIC, bump, clone, conflict_copies, count_of, edit_line, remote, sync

from conftest import git
from vault_brain.domain import clock

__all__ = ["remote"]  # the fixture, shared with test_sync


def test_two_machines_reading_a_note_in_the_same_second_both_count(
    remote: Path, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both machines bump one note from the same state within one (frozen) second: the files
    still differ (last_accessed to the microsecond), so the merge adds both reads."""
    a, b = remote.parent / "a", clone(remote, "b", cli)
    second = dt.datetime(2026, 3, 1, 12, 0, 0, tzinfo=dt.UTC)
    real_now = clock.now
    monkeypatch.setattr(clock, "now", lambda: second.replace(microsecond=real_now().microsecond))
    start = count_of(a)
    bump(a, 1, "sa")
    bump(b, 1, "sb")
    stamps = [(m / TOPIC).read_text().split("last_accessed: ")[1][:19] for m in (a, b)]
    assert stamps == ["2026-03-01T12:00:00"] * 2  # the same second on both machines
    assert (a / TOPIC).read_bytes() != (b / TOPIC).read_bytes()
    sync(cli, a)
    sync(cli, b)
    sync(cli, a)
    assert count_of(a) == count_of(b) == start + 2
    assert conflict_copies(b) == []


def commit_all(root: Path, message: str) -> None:
    git("add", "-A", cwd=root)
    git("commit", "-qm", message, cwd=root)


def criss_cross(remote: Path, cli: Any) -> tuple[Path, Path, int]:
    """a and b each read TOPIC and edit a line; a merges b's first commit and b merges a's
    (so their next commits have two merge bases); both read and edit again. Returns the
    machines and the access count every read adds up to."""
    a, b = remote.parent / "a", clone(remote, "b", cli)
    start = count_of(a)
    git("remote", "add", "peer", str(b), cwd=a)
    git("remote", "add", "peer", str(a), cwd=b)
    bump(a, 1, "sa")
    edit_line(a, TOPIC, "Line 1 of", "Line one (a) of")
    commit_all(a, "a1")
    bump(b, 2, "sb")
    edit_line(b, TOPIC, "Line 7 of", "Line seven (b) of")
    commit_all(b, "b1")
    git("fetch", "-q", "peer", cwd=a)
    git("fetch", "-q", "peer", cwd=b)
    git("merge", "-q", "--no-edit", "peer/main", cwd=a)  # the drivers git runs, per file
    git("merge", "-q", "--no-edit", "peer/main", cwd=b)
    assert count_of(a) == count_of(b) == start + 3
    bump(a, 1, "sa")
    edit_line(a, TOPIC, "Line 3 of", "Line three (a) of")
    commit_all(a, "a2")
    bump(b, 1, "sb")
    edit_line(b, TOPIC, "Line 5 of", "Line five (b) of")
    commit_all(b, "b2")
    git("fetch", "-q", "peer", cwd=a)
    bases = git("merge-base", "--all", "HEAD", "peer/main", cwd=a).split()
    assert len(bases) == 2  # a criss-cross: two merge bases
    return a, b, start + 5


def assert_merged(root: Path, expected: int) -> None:
    text = (root / TOPIC).read_text()
    assert count_of(root) == expected
    for line in ("Line one (a)", "Line seven (b)", "Line three (a)", "Line five (b)"):
        assert line in text
    assert "<<<<" not in text and ">>>>" not in text
    assert conflict_copies(root) == []


def test_a_criss_cross_merge_by_hand_adds_every_read(remote: Path, cli: Any) -> None:
    """`git merge` builds a virtual ancestor from the two merge bases, running vb's driver
    on them too: the counters still add up, no conflict markers."""
    a, _b, expected = criss_cross(remote, cli)
    git("merge", "-q", "--no-edit", "peer/main", cwd=a)
    assert_merged(a, expected)


def test_a_criss_cross_merge_by_vb_sync_adds_every_read(remote: Path, cli: Any) -> None:
    """vb's in-process merge with two merge bases: the ancestor of each file is the merge of
    the bases (as git's recursive strategy builds it), not one of them."""
    a, b, expected = criss_cross(remote, cli)
    sync(cli, a)
    doc = sync(cli, b)
    assert doc["merged"] == 1 and doc["conflict_copies"] == []
    assert_merged(b, expected)
    sync(cli, a)
    assert_merged(a, expected)
    assert (a / TOPIC).read_bytes() == (b / TOPIC).read_bytes()


def test_a_stale_index_lock_is_removed_and_a_live_one_reported(remote: Path, cli: Any) -> None:
    """A kill inside `git commit` leaves .git/index.lock: an old one with no git running in
    the repository is removed with a notice; a fresh one is reported in one line, kept."""
    a = remote.parent / "a"
    lock = a / ".git" / "index.lock"
    edit_line(a, TOPIC, "Line 2 of", "Line two (after a kill) of")
    lock.write_bytes(b"")
    old = time.time() - 120
    os.utime(lock, (old, old))
    res = cli("--vault", str(a), "sync")
    assert res.exit_code == 0, res.stdout + res.stderr
    assert res.stdout.startswith("removed a stale ") and not lock.exists()
    assert "pushed" in res.stdout
    edit_line(a, TOPIC, "Line 3 of", "Line three (while git runs) of")
    lock.write_bytes(b"")
    res = cli("--vault", str(a), "sync")
    assert res.exit_code != 0 and lock.exists()
    first, *rest = res.stderr.strip().splitlines()
    assert "another git command holds" in first and "index.lock" in first
    assert rest and "if no git is running, delete that file" in rest[0]
