#!/usr/bin/env python3
"""Two processes that embed at once: hybrid `vb search` batches run alone and side by side.

The e5 engine runs on OpenMP threads. `vb` shortens how long idle threads spin
(`storage.index.vectors.SPIN_COUNT`); this script times the same batch of queries with
the spin vb sets and with libgomp's default, one process alone and --procs at once.

    .venv/bin/python scripts/bench_contention.py [VAULT QUERIES.jsonl] [--procs 2] [--record]

Without VAULT it uses LoCoMo's first conversation as `scripts/bench_retrieval.py` builds it
(bench-out/locomo/conv-26, with its question file; run that script first). The vault's
STRATEGY.md is set to `search_mode: hybrid` for the runs and put back afterwards.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench_common import add_record_option, log, save_record, set_strategy

from vault_brain.storage.index.vectors import SPIN_COUNT

REPO = Path(__file__).resolve().parents[1]
LIBGOMP_DEFAULT = "300000"  # libgomp's spin count when OMP_WAIT_POLICY is not set
RUNS = 3


def batch(vault: Path, queries: Path, spin: str, procs: int) -> float:
    """Seconds until `procs` processes have each searched every query of the file."""
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    env["GOMP_SPINCOUNT"] = spin
    cmd = [sys.executable, "-m", "vault_brain", "--vault", str(vault), "search"]
    cmd += ["--queries", str(queries), "-k", "50"]
    started = time.perf_counter()
    running = [subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL) for _ in range(procs)]
    if any(proc.wait() != 0 for proc in running):
        raise SystemExit(f"a search failed: {' '.join(cmd)}")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("vault", nargs="?", type=Path)
    parser.add_argument("queries", nargs="?", type=Path)
    parser.add_argument("--procs", type=int, default=2, help="processes run at once")
    add_record_option(parser)
    args = parser.parse_args()
    vault = args.vault or REPO / "bench-out" / "locomo" / "conv-26"
    queries = args.queries or vault.parent / f"{vault.name}.queries.jsonl"
    if not (vault / ".vb" / "embeddings.npz").is_file() or not queries.is_file():
        raise SystemExit(f"{vault}: no embeddings or queries (run bench_retrieval.py first)")
    shipped = (vault / "STRATEGY.md").read_text(encoding="utf-8")
    set_strategy(vault, shipped, {"search_mode": "hybrid"})
    results: dict[str, float] = {}
    try:
        subprocess.run(
            [sys.executable, "-m", "vault_brain", "--vault", str(vault), "index"],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        for name, spin in (("vb", SPIN_COUNT), ("libgomp_default", LIBGOMP_DEFAULT)):
            alone = statistics.median(batch(vault, queries, spin, 1) for _ in range(RUNS))
            together = batch(vault, queries, spin, args.procs)
            results[f"{name}.alone_s"] = round(alone, 2)
            results[f"{name}.together_s"] = round(together, 2)
            results[f"{name}.ratio"] = round(together / alone, 2)
            log(f"spin {spin}: alone {alone:.2f} s, {args.procs} at once {together:.2f} s")
    finally:
        set_strategy(vault, shipped, {})
    for key, value in results.items():
        print(f"{key:28} {value}")
    if args.record:
        save_record(f"contention-{args.procs}", {"procs": args.procs, **results})


if __name__ == "__main__":
    main()
