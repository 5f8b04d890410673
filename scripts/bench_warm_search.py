#!/usr/bin/env python3
"""Cold `vb search` with and without a running `vb watch` (the warm socket), beside a minimal
Whoosh script and a minimal SQLite FTS5 script answering the same queries.

    python scripts/bench_warm_search.py --notes 10000 --runs 21 [--out bench-out/]

Each figure is the p50 wall time of whole processes (interleaved, after one untimed run
each). The reference scripts are bench_search.py's (the same index for Whoosh; an FTS5 table
built once). Targets (issue 14): with the watcher <= 2x the FTS5 script, without it <= 1.3x
the minimal Whoosh script. The watcher's resident memory (VmRSS, and its peak VmHWM, from
/proc/<pid>/status) is read after it answered the warm runs. The script also checks that the
warm answers are the in-process ones, byte for byte, and that the watcher answered every warm
run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen_vault
from bench_common import add_record_option, process_memory_mb, save_record
from bench_search import FTS_BUILD, FTS_QUERY, MIN_WHOOSH, BenchError, child_env, run_timed

TIMEOUT = 600.0


def vb(root: Path, *args: str) -> list[str]:
    return [*gen_vault.vb_command(), "--vault", str(root), *args]


def prepare(out: Path, notes: int, seed: int) -> Path:
    root = out / f"warm-vault-{notes}-{seed}"
    if not (root / "STRATEGY.md").exists():
        gen_vault.generate(root, notes=notes, seed=seed, force=True)
    run_timed(vb(root, "index", "--json"), TIMEOUT, "vb index", child_env())
    return root


def warm_searches(root: Path) -> int:
    proc = run_timed(vb(root, "status", "--json"), TIMEOUT, "vb status", child_env()).proc
    warm: dict[str, Any] = json.loads(proc.stdout)["watcher"]["warm"]
    return int(warm["searches"]) if warm["alive"] else -1


def p50(root: Path, commands: dict[str, Any], queries: list[str], runs: int) -> dict[str, Any]:
    env = child_env()
    times: dict[str, list[float]] = {name: [] for name in commands}
    outputs: dict[str, dict[str, str]] = {name: {} for name in commands}
    for name, make in commands.items():  # untimed: .pyc files, the OS cache
        run_timed(make(queries[0]), TIMEOUT, name, env)
    for n in range(runs):
        query = queries[n % len(queries)]
        for name, make in commands.items():
            timed = run_timed(make(query), TIMEOUT, name, env)
            times[name].append(timed.wall)
            outputs[name][query] = timed.proc.stdout
    return {
        "p50_ms": {n: round(statistics.median(t) * 1000, 2) for n, t in times.items()},
        "outputs": outputs,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--notes", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--runs", type=int, default=21, help="timed runs per command")
    parser.add_argument("--out", type=Path, default=Path("bench-out"))
    add_record_option(parser)
    args = parser.parse_args()
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    root = prepare(out, args.notes, args.seed)
    scripts = out / "warm-scripts"
    scripts.mkdir(exist_ok=True)
    files = {}
    for name, source in (("whoosh", MIN_WHOOSH), ("fts_build", FTS_BUILD), ("fts", FTS_QUERY)):
        files[name] = scripts / f"min_{name}.py"
        files[name].write_text(source, encoding="utf-8")
    db = out / f"warm-{args.notes}.fts5.sqlite"
    run_timed([sys.executable, str(files["fts_build"]), str(root), str(db)], TIMEOUT, "fts5", None)
    manifest = json.loads((root / ".vb/manifest.json").read_text(encoding="utf-8"))
    index_dir = str(root / ".vb" / manifest["index"])
    queries = [q for q in gen_vault.sample_queries(50, seed=7) if len(q.split()) >= 2][:5]

    def search(q: str) -> list[str]:
        return vb(root, "search", q, "-k", "10", "--json")

    refs = {
        "whoosh": lambda q: [sys.executable, str(files["whoosh"]), index_dir, q],
        "fts5": lambda q: [sys.executable, str(files["fts"]), str(db), q],
    }
    cold = p50(root, {"vb_in_process": search, **refs}, queries, args.runs)
    watch = subprocess.Popen(
        vb(root, "watch", "-q"), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + TIMEOUT
        while warm_searches(root) < 0:
            if watch.poll() is not None or time.monotonic() > deadline:
                raise BenchError(f"vb watch did not start: {watch.stderr and watch.stderr.read()}")
            time.sleep(0.2)
        before = warm_searches(root)
        warm = p50(root, {"vb_warm": search, **refs}, queries, args.runs)
        answered = warm_searches(root) - before
        memory = process_memory_mb(watch.pid)  # (after answering every warm search)
    finally:
        watch.terminate()
        watch.wait(timeout=30)
    if warm["outputs"]["vb_warm"] != cold["outputs"]["vb_in_process"]:
        raise BenchError("the warm answers differ from the in-process ones")
    if answered != args.runs + 1:
        raise BenchError(f"the watcher answered {answered} of {args.runs + 1} warm searches")
    t = {**cold["p50_ms"], **warm["p50_ms"]}
    # the references ran in both phases (with and without the watcher's load): each
    # ratio is taken against the reference runs of its own phase
    result = {
        "notes": args.notes,
        "runs": args.runs,
        "queries": queries,
        "p50_ms": {
            "vb_search_in_process": t["vb_in_process"],
            "vb_search_warm": t["vb_warm"],
            "min_whoosh (no watcher / watcher running)": [
                cold["p50_ms"]["whoosh"],
                warm["p50_ms"]["whoosh"],
            ],
            "fts5 (no watcher / watcher running)": [cold["p50_ms"]["fts5"], warm["p50_ms"]["fts5"]],
        },
        "in_process_vs_min_whoosh": round(t["vb_in_process"] / cold["p50_ms"]["whoosh"], 3),
        "in_process_target": 1.3,
        "warm_vs_fts5": round(t["vb_warm"] / warm["p50_ms"]["fts5"], 3),
        "warm_target": 2.0,
        "identical_output": True,
        "watch_rss_mb": memory.get("rss_mb"),
        "watch_peak_rss_mb": memory.get("peak_rss_mb"),
    }
    if args.record:
        figures = {k: v for k, v in result.items() if not k.endswith("_target")}
        save_record(f"warm_search-{args.notes}", figures)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchError as exc:
        sys.stderr.write(f"bench_warm_search: {exc}\n")
        sys.exit(1)
