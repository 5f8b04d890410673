"""Machines sharing a vault through a real git remote (a bare repository, clones with their own
.vb/): reads in the same second."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from test_sync import TOPIC, bump, clone, conflict_copies, count_of, remote, sync

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
