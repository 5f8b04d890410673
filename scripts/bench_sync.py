"""Benchmark `vb sync` and the note merge driver (issue 13 targets: sync <= 10 s with 1,000
changed notes on each side; the note merge driver <= 30 ms per note).

A bare repository is the remote; machine a pushes a vault of N notes, machine b clones it.
Both machines then change the same N notes (counters: access_count, credit, last_accessed;
and a different body line on each side), a syncs (push), and b's `vb sync` is timed: commit,
fetch, merge of N notes changed on both sides, regeneration, push. The driver is timed as git
runs it (the command `vb init`/`vb sync` write into .git/config, one process per file: median
of --driver-runs after a warm-up run, its result checked against the in-process merge) and
in-process (what `vb sync` does per note). Time it with bytecode caching on:

    env -u PYTHONDONTWRITEBYTECODE .venv/bin/python scripts/bench_sync.py --notes 1000
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_common import add_record_option, save_record

VB = [sys.executable, "-m", "vault_brain"]


def note(i: int, count: int, credit: float, stamp: str, line: str) -> str:
    return (
        f"---\nid: entity-projects-topic-{i}\ntype: entity\ncategory: projects\n"
        f"title: Topic {i}\ntags: [bench]\ncreated: 2026-01-01T10:00:00+00:00\n"
        f"updated: 2026-01-01T10:00:00+00:00\ncredit: {credit}\naccess_count: {count}\n"
        f"last_accessed: {stamp}\n---\n# Topic {i}\n\nFacts about topic {i}.\n"
        + "".join(f"Line {n} about topic {i}.\n" for n in range(1, 9))
        + line
    )


def run(args: list[str], cwd: Path | None = None) -> float:
    started = time.perf_counter()
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")
    return time.perf_counter() - started


def write_all(root: Path, n: int, count: int, credit: float, stamp: str, line: str) -> None:
    folder = root / "entities" / "projects"
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (folder / f"topic-{i}.md").write_text(note(i, count, credit, stamp, line))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--notes", type=int, default=1000)
    parser.add_argument("--driver-runs", type=int, default=30)
    add_record_option(parser)
    opts = parser.parse_args()
    n = opts.notes
    with tempfile.TemporaryDirectory(prefix="vb-bench-sync-") as tmp_name:
        tmp = Path(tmp_name)
        os.environ.update(
            HOME=str(tmp),
            GIT_AUTHOR_NAME="Bench",
            GIT_AUTHOR_EMAIL="bench@example.org",
            GIT_COMMITTER_NAME="Bench",
            GIT_COMMITTER_EMAIL="bench@example.org",
            GIT_CONFIG_NOSYSTEM="1",
        )
        bare, a, b = tmp / "remote.git", tmp / "a", tmp / "b"
        run(["git", "init", "--bare", "-q", "-b", "main", str(bare)])
        run([*VB, "init", str(a)])
        run(["git", "branch", "-M", "main"], cwd=a)
        run(["git", "remote", "add", "origin", str(bare)], cwd=a)
        write_all(a, n, 1, 0.5, "2026-01-01T10:00:00+00:00", "")
        first = run([*VB, "--vault", str(a), "sync"])
        run(["git", "clone", "-q", str(bare), str(b)])
        clone_sync = run([*VB, "--vault", str(b), "sync"])
        write_all(a, n, 3, 0.62, "2026-01-02T10:00:00+00:00", "Added on a.\n")
        write_all(b, n, 4, 0.41, "2026-01-03T10:00:00+00:00", "")
        b_lines = b / "entities" / "projects"
        for i in range(n):  # b edits another line than a
            path = b_lines / f"topic-{i}.md"
            path.write_text(path.read_text().replace("Line 2 about", "Line two (b) about"))
        push_a = run([*VB, "--vault", str(a), "sync"])
        merge_b = run([*VB, "--vault", str(b), "sync"])
        sample = (b_lines / "topic-0.md").read_text()
        assert "access_count: 6" in sample and "Added on a." in sample, sample
        assert "Line two (b)" in sample and "<<<<" not in sample, sample

        # the driver as git runs it: one process per file
        base = tmp / "base.md"
        base.write_text(note(0, 1, 0.5, "2026-01-01T10:00:00+00:00", ""))
        theirs = tmp / "theirs.md"
        theirs.write_text(note(0, 3, 0.62, "2026-01-02T10:00:00+00:00", "Added on a.\n"))
        ours_text = note(0, 4, 0.41, "2026-01-03T10:00:00+00:00", "").replace(
            "Line 2 about", "Line two (b) about"
        )
        from vault_brain.storage.git.sync import driver_command
        from vault_brain.storage.notes.merge import merge_note

        raw = [p.read_bytes() for p in (base, theirs)]
        expected = merge_note(raw[0], ours_text.encode(), raw[1])
        assert expected.conflict is None
        ours = tmp / "ours.md"
        command = driver_command("note").replace("%O %A %B %P", f"{base} {ours} {theirs} x.md")
        per_process = []
        for run_no in range(opts.driver_runs + 1):  # the first run is a warm-up
            ours.write_text(ours_text)
            took = run(["sh", "-c", command], tmp)  # as git runs it: through the shell
            assert ours.read_bytes() == expected.data, ours.read_text()
            if run_no:
                per_process.append(took)
        in_process = []
        for _ in range(opts.driver_runs):
            started = time.perf_counter()
            merge_note(raw[0], ours_text.encode(), raw[1])
            in_process.append(time.perf_counter() - started)
    if opts.record:
        figures = {
            "notes": n,
            "first_sync_s": first,
            "clone_sync_s": clone_sync,
            "push_sync_s": push_a,
            "merge_sync_s": merge_b,
            "driver_process_ms_median": statistics.median(per_process) * 1000,
            "driver_process_ms_min": min(per_process) * 1000,
            "merge_in_process_ms_median": statistics.median(in_process) * 1000,
        }
        save_record(f"sync-{n}", figures)
    print(f"notes changed on each side: {n}; load average {os.getloadavg()[0]:.2f}")
    print(f"first sync of machine a (commit {n} notes, push): {first:.2f} s")
    print(f"sync of a fresh clone (b): {clone_sync:.2f} s")
    print(f"vb sync on a (commit {n} changed notes, push): {push_a:.2f} s")
    print(
        f"vb sync on b (commit, fetch, merge {n} notes changed on both sides, push): "
        f"{merge_b:.2f} s"
    )
    print(
        f"note merge driver, one process per file as git runs it ({len(per_process)} runs): "
        f"median {statistics.median(per_process) * 1000:.1f} ms, "
        f"min {min(per_process) * 1000:.1f} ms"
    )
    print(
        f"note merge, in-process (what vb sync does per note): median "
        f"{statistics.median(in_process) * 1000:.1f} ms"
    )


if __name__ == "__main__":
    main()
