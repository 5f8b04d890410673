#!/usr/bin/env python3
"""Benchmark `vb clone` of a big vault, to searchable (issue 26: 100,000 notes and a year of
transcripts searchable in <= 60 s on this 2-core machine).

    python scripts/bench_clone.py --notes 100000 --transcripts-days 365 --record

The remote is built once and cached under bench-out/clone-<notes>-<days>d/ (a bare
repository that serves partial clones): `scripts/gen_vault.py`'s notes (one in twenty moved
to archive/), then a year of transcripts, `--sessions-per-day` a day of a few KB each in day
folders (`sessions/<YYYY-MM-DD>/<id>.jsonl`), committed month by month with the month's
dates. The timed part is what a person joining the vault runs: `vb clone file://... DIR`
(partial clone, sparse checkout, set-up, index build), then one `vb search`; searchable_s is
the two together. bytes_fetched is the size of the clone's .git/objects. The clone is kept
in bench-out/clone-<notes>-run/ until the next run, which removes it and waits for the disk
to settle before it times anything (`settle`); files_created_per_s is the disk's speed then
(a probe of 2,000 files).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from bench_common import REPO, add_record_option, log, save_record
from gen_vault import GENERATOR_VERSION, generate, sample_queries, vb_command, zipf_words

BENCH_VERSION = 1  # bump when the remote's layout changes, so cached remotes are rebuilt
CACHE = REPO / "bench-out"
ENV = {
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.org",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.org",
    "GIT_CONFIG_NOSYSTEM": "1",
    "VB_MACHINE": "bench",
}


def git(*args: str, cwd: Path, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(
        ["git", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, **ENV, **(env or {})},
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"git {' '.join(args[:3])} failed: {proc.stderr.strip()}")
    return proc.stdout


def commit_at(work: Path, folder: str, when: str, message: str) -> None:
    """Commit what changed in `folder`, dated `when` (author and committer)."""
    git("add", "-A", folder, cwd=work)
    dates = {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    git("commit", "-q", "-m", message, cwd=work, env=dates)


def transcript(rng: random.Random, session: str, day: dt.date) -> str:
    """One session's JSONL: a dozen to thirty messages and a retrieval or two."""
    lines = []
    stamp = dt.datetime.combine(day, dt.time(9, 0), dt.UTC) + dt.timedelta(
        minutes=rng.randrange(600)
    )
    for n in range(1, rng.randint(12, 30) + 1):
        role = "user" if n % 2 else "assistant"
        words = " ".join(zipf_words(rng, rng.randint(8, 40) if role == "user" else 60))
        record = {"ts": stamp.isoformat(), "id": f"m{n:04d}", "type": role, "content": words}
        lines.append(json.dumps(record))
        stamp += dt.timedelta(seconds=rng.randint(5, 90))
        if n % 9 == 0:
            query = " ".join(zipf_words(rng, 3))
            lines.append(json.dumps({"ts": stamp.isoformat(), "type": "retrieval", "query": query}))
    return "\n".join(lines) + "\n"


def build_remote(
    where: Path, notes: int, days: int, per_day: int, today: dt.date, seed: int = 42
) -> None:
    """The bare remote at where/remote.git (built in where/work, then removed)."""
    work = where / "work"
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir(parents=True)
    started = time.perf_counter()
    log(f"generating {notes} notes")
    generate(work, notes, seed)
    git("branch", "-M", "main", cwd=work)
    moved = 0
    for i, path in enumerate(sorted((work / "entities").rglob("*.md"))):
        if i % 20 == 0:
            target = work / "archive" / path.relative_to(work)
            target.parent.mkdir(parents=True, exist_ok=True)
            path.rename(target)
            moved += 1
    first = today - dt.timedelta(days=days)
    when = f"{first.isoformat()}T08:00:00+00:00"
    commit_at(work, ".", when, f"bench: {notes} notes ({moved} archived)")
    rng = random.Random(seed)
    made = 0
    for offset in range(days, 0, -1):
        day = today - dt.timedelta(days=offset)
        folder = work / "sessions" / day.isoformat()
        folder.mkdir(parents=True, exist_ok=True)
        for k in range(per_day):
            session = f"s{day.strftime('%Y%m%d')}-{k:03d}"
            (folder / f"{session}.jsonl").write_text(transcript(rng, session, day))
            made += 1
        if offset == 1 or (day + dt.timedelta(days=1)).day == 1:
            stamp = f"{day.isoformat()}T20:00:00+00:00"
            commit_at(work, "sessions", stamp, f"bench: transcripts of {day:%Y-%m}")
    bare = where / "remote.git"
    git("clone", "-q", "--bare", str(work), str(bare), cwd=where)
    git("config", "uploadpack.allowFilter", "true", cwd=bare)
    git("gc", "-q", cwd=bare)
    meta = {
        "notes": notes,
        "days": days,
        "per_day": per_day,
        "transcripts": made,
        "archived": moved,
        "built": today.isoformat(),
        "generator": GENERATOR_VERSION,
        "bench": BENCH_VERSION,
    }
    (where / "meta.json").write_text(json.dumps(meta) + "\n")
    log(f"remote built in {time.perf_counter() - started:.0f}s: {made} transcripts")


def remote_for(notes: int, days: int, per_day: int) -> tuple[Path, dict[str, object]]:
    """The cached remote (built when missing or stale). The folder it was built in is
    removed by `main` before the disk is let settle (see `settle`)."""
    where = CACHE / f"clone-{notes}-{days}d-{per_day}"
    meta_path = where / "meta.json"
    today = dt.datetime.now(dt.UTC).date()
    try:
        meta = json.loads(meta_path.read_text())
        fresh = meta.get("generator") == GENERATOR_VERSION and meta.get("bench") == BENCH_VERSION
    except (OSError, ValueError):
        fresh = False
    if not fresh:
        build_remote(where, notes, days, per_day, today)
        meta = json.loads(meta_path.read_text())
    else:
        log(f"using the cached remote in {where} (built {meta['built']})")
    return where / "remote.git", meta


def vb(args: list[str], env: dict[str, str]) -> dict[str, Any]:
    """`vb ARGS --json` as a process; its JSON document."""
    proc = subprocess.run(
        [*vb_command(), *args, "--json"], capture_output=True, text=True, env=env, check=False
    )
    if proc.returncode != 0:
        raise SystemExit(f"vb {args[0]} failed:\n{proc.stdout}\n{proc.stderr}")
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc


def size_of(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


PROBE_FILES = 2_000


def probe(folder: Path) -> float:
    """Small files this disk creates a second now: PROBE_FILES of them in `folder`, kept
    (removing them would slow the disk down again)."""
    folder.mkdir(parents=True)
    started = time.perf_counter()
    for n in range(PROBE_FILES):
        (folder / f"f{n}.md").write_bytes(b"x" * 700)
    return round(PROBE_FILES / (time.perf_counter() - started))


def settle(seconds: float) -> None:
    """On ext4 mounted with `discard` (this machine) creating a file costs several times
    more kernel time for minutes after many files were deleted: about 1,100 files a second
    against 10,000 to 30,000 otherwise, for some 5 minutes after 700,000 were deleted (and
    deleting 2,000 slows the next 2,000 down). A clone run then would pay it: so each run
    keeps its clone until the next one starts, removes it, and waits `seconds` here."""
    if seconds > 0:
        log(f"letting the disk settle for {seconds:.0f} s")
        time.sleep(seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--notes", type=int, default=2000)
    parser.add_argument("--transcripts-days", type=int, default=365)
    parser.add_argument("--sessions-per-day", type=int, default=20)
    parser.add_argument("--recent", type=int, default=30, help="vb clone --recent DAYS")
    parser.add_argument(
        "--settle",
        type=float,
        default=300,
        help="seconds to wait, after the previous run's clone is removed, for the disk to "
        "settle (see `settle`)",
    )
    add_record_option(parser)
    opts = parser.parse_args()
    bare, meta = remote_for(opts.notes, opts.transcripts_days, opts.sessions_per_day)
    tmp = CACHE / f"clone-{opts.notes}-run"  # (kept until the next run: see `settle`)
    for done in (tmp, bare.parent / "work"):
        shutil.rmtree(done, ignore_errors=True)
    settle(opts.settle)
    create_rate = probe(tmp / "probe")
    log(f"the disk creates {create_rate} files a second")
    env = {**os.environ, **ENV, "HOME": str(tmp)}
    env.pop("VB_VAULT", None)
    target = tmp / "vault"
    log(f"vb clone {bare.as_uri()} (notes {opts.notes}, recent {opts.recent} days)")
    started = time.perf_counter()
    result = vb(["clone", bare.as_uri(), str(target), "--recent", str(opts.recent)], env)
    cloned = time.perf_counter()
    query = sample_queries(1, seed=7)[0]
    found = vb(["--vault", str(target), "search", query], env)
    searched = time.perf_counter()
    hits = len(found["results"])
    measures = {
        "searchable_s": round(searched - started, 2),
        "clone_s": round(cloned - started, 2),
        "clone_in_vb_s": result["seconds"],
        "first_search_s": round(searched - cloned, 2),
        "first_search_hits": hits,
        "bytes_fetched": result["bytes_fetched"],
        "mb_fetched": round(result["bytes_fetched"] / 1e6, 1),
        "remote_mb": round(size_of(bare) / 1e6, 1),
        "notes_checked_out": result["notes"],
        "notes_left_out": result["notes_left_out"],
        "transcripts_checked_out": result["transcripts"],
        "transcripts_left_out": result["transcripts_left_out"],
        "indexed": result["indexed"],
        "notes": opts.notes,
        "transcripts": meta["transcripts"],
        "index_s": result["index_seconds"],
        # (git's fetch of the blobs and checkout run under the index build: git_s is
        # what runs before it, the clone of commits and trees and the checks)
        "git_s": round(result["seconds"] - result["index_seconds"], 2),
        "partial": result["partial"],
        "files_created_per_s": create_rate,
    }
    print(json.dumps(measures, indent=1))
    log(
        f"searchable in {measures['searchable_s']}s: clone {measures['clone_s']}s (git "
        f"{measures['git_s']}s, then the index build with git's checkout under it "
        f"{measures['index_s']}s), first search "
        f"{measures['first_search_s']}s; fetched {measures['mb_fetched']} MB of a "
        f"{measures['remote_mb']} MB remote"
    )
    if opts.record:
        save_record(f"clone-{opts.notes}", measures)


if __name__ == "__main__":
    main()
