"""What `vb clone` checks out (`domain.sync.sparse`): which transcripts are recent, and the
sparse-checkout patterns, checked against git's own matching in tests/system/test_clone.py."""

from __future__ import annotations

import datetime as dt

from vault_brain.domain.sync import sparse
from vault_brain.domain.sync.sparse import (
    FLAT_PATTERNS_MAX,
    checkout_patterns,
    escape,
    fetch_pattern,
    is_transcript,
    recent_transcripts,
    shard_day,
)

CUTOFF = dt.date(2026, 10, 28)


def test_transcripts_are_flat_or_in_day_folders() -> None:
    assert is_transcript("sessions/abc.jsonl")
    assert is_transcript("sessions/2026-11-26/abc.jsonl")
    assert not is_transcript("sessions/sessions.json")
    assert not is_transcript("logs/credit.jsonl")
    assert not is_transcript("sessions/a/b/c.jsonl")
    assert shard_day("sessions/2026-11-26/abc.jsonl") == dt.date(2026, 11, 26)
    assert shard_day("sessions/abc.jsonl") is None
    assert shard_day("sessions/not-a-day/abc.jsonl") is None


def test_recent_is_committed_since_the_cutoff_or_dated_after_it() -> None:
    paths = [
        "sessions/old.jsonl",
        "sessions/touched.jsonl",
        "sessions/2025-01-02/old.jsonl",
        "sessions/2025-01-02/touched.jsonl",
        "sessions/2026-11-20/late.jsonl",  # a recent day, whatever its commit's date
    ]
    touched = {"sessions/touched.jsonl", "sessions/2025-01-02/touched.jsonl"}
    assert recent_transcripts(paths, touched, CUTOFF) == [
        "sessions/2025-01-02/touched.jsonl",
        "sessions/2026-11-20/late.jsonl",
        "sessions/touched.jsonl",
    ]


def test_patterns_leave_out_the_archive_and_each_old_transcript_or_old_day() -> None:
    transcripts = [
        "sessions/old.jsonl",
        "sessions/new.jsonl",
        "sessions/2025-01-02/a.jsonl",
        "sessions/2025-01-02/b.jsonl",
        "sessions/2025-02-03/old.jsonl",
        "sessions/2025-02-03/touched.jsonl",
    ]
    recent = ["sessions/new.jsonl", "sessions/2025-02-03/touched.jsonl"]
    assert checkout_patterns(transcripts, recent) == [
        "/*",
        "!/archive/*",
        "!/sessions/old.jsonl",
        "!/sessions/2025-01-02/*",  # every transcript of that day is old: the folder
        "!/sessions/2025-02-03/old.jsonl",  # a day with a recent one: each old one
    ]


def test_many_old_flat_transcripts_are_one_pattern_and_the_recent_taken_back() -> None:
    old = [f"sessions/old-{i:04d}.jsonl" for i in range(FLAT_PATTERNS_MAX + 1)]
    patterns = checkout_patterns([*old, "sessions/new.jsonl"], ["sessions/new.jsonl"])
    assert patterns == ["/*", "!/archive/*", "!/sessions/*.jsonl", "/sessions/new.jsonl"]
    few = checkout_patterns(old[:3], [])
    assert few == ["/*", "!/archive/*"] + ["!/" + p for p in old[:3]]


def test_patterns_are_literal_paths() -> None:
    assert escape("sessions/a*b?[c].jsonl") == "/sessions/a\\*b\\?\\[c\\].jsonl"
    assert fetch_pattern("archive/", is_folder=True) == "/archive/**"
    assert fetch_pattern("sessions/x.jsonl", is_folder=False) == "/sessions/x.jsonl"


def test_a_big_clone_checks_out_a_tenth_of_its_files_first_as_whole_folders() -> None:
    files = (
        ["STRATEGY.md", "MEMORY.md", "logs/today.md"]
        + [f"entities/people/p{n}.md" for n in range(1_500)]
        + [f"entities/projects/j{n}.md" for n in range(900)]
        + [f"episodes/2025-0{m}/e{n}.md" for m in range(1, 10) for n in range(2_000)]
        + [f"archive/entities/a{n}.md" for n in range(400)]  # (all three: never chosen)
        + [f"sessions/2025-01-0{d}/s{n}.jsonl" for d in range(1, 4) for n in range(100)]
    )
    first = sparse.first_stage(files)
    assert first is not None and first[:2] == sparse.TOP_FILES
    chosen = [p.removeprefix("/").removesuffix("/*") for p in first[2:]]
    assert chosen == ["entities/people", "entities/projects"]  # the smallest, 2,400 files
    taken = sum(1 for f in files if f.rsplit("/", 1)[0] in chosen)
    assert len(files) * 0.1 <= taken <= len(files) * 0.2


def test_a_small_clone_or_one_without_folders_to_take_is_checked_out_at_once() -> None:
    assert sparse.first_stage([f"entities/people/p{n}.md" for n in range(1_000)]) is None
    flat = [f"notes/n{n}.md" for n in range(30_000)]  # (no folder of the second level)
    assert sparse.first_stage(flat) is None
    big = [f"episodes/2025-01/e{n}.md" for n in range(30_000)]  # (one folder: all of it)
    assert sparse.first_stage(big) is None
