#!/usr/bin/env python3
"""Warm retrieval in a long-lived process: `Searcher.search` and the proxy's `recall`.

    python scripts/bench_recall.py [--vault DIR | --notes 10000] [--queries 200] [--rounds 3]

Times, in-process and after a warm-up, `Vault.searcher.search(q, k=10)` (what
scripts/bench_search.py calls "warm search") and `app.runtime.proxy.recall(vault, q)`
(what `vb serve` runs before each request; the pool is k x 3) over deterministic queries of
1-4 vocabulary words, in the form the proxy sees them ("What do you know about ...?").
Each measure is run --rounds times, interleaved; the median of the rounds' p50 is reported
with the load average. Without --vault, the vault bench_serve.py caches (bench-out/serve-vaults/) is
copied to a temporary folder (recall may write refusal events).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))
import gen_vault  # noqa: E402
from bench_common import add_record_option, percentile, save_record  # noqa: E402

from vault_brain.app.memory.vault import Vault  # noqa: E402
from vault_brain.app.runtime.proxy import recall  # noqa: E402
from vault_brain.storage.tokens import get_counter  # noqa: E402


def timed(run: Callable[[str], object], queries: list[str]) -> tuple[float, float]:
    times = []
    for query in queries:
        started = time.perf_counter()
        run(query)
        times.append((time.perf_counter() - started) * 1000)
    return percentile(times, 50), percentile(times, 95)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--vault", type=Path, help="an indexed vault (used in place)")
    parser.add_argument("--notes", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=REPO / "bench-out")
    add_record_option(parser)
    args = parser.parse_args(argv)

    work: Path | None = None
    if args.vault is not None:
        root = args.vault
    else:
        import bench_serve

        cached = bench_serve.prepare_vault(args.out, args.notes, args.seed)
        work = Path(tempfile.mkdtemp(prefix="vb-bench-recall-"))
        root = work / "vault"
        shutil.copytree(cached, root, symlinks=True)
    try:
        vault = Vault.open(root)
        vault.reconcile()
        get_counter()
        words = gen_vault.sample_queries(args.queries, seed=11)
        queries = [f"What do you know about {w}?" for w in words]
        for query in gen_vault.sample_queries(20, seed=1):  # warm-up
            vault.searcher.search(query, k=10)
            recall(vault, query)
        measures: dict[str, Callable[[str], object]] = {
            "Searcher.search k=10": lambda q: vault.searcher.search(q, k=10),
            "recall (proxy)": lambda q: recall(vault, q),
        }
        found: dict[str, list[tuple[float, float]]] = {name: [] for name in measures}
        for _ in range(args.rounds):
            for name, run in measures.items():
                found[name].append(timed(run, queries))
        load = os.getloadavg()
        keys = {"Searcher.search k=10": "search", "recall (proxy)": "recall"}
        if args.record:
            figures: dict[str, float] = {"rounds": args.rounds, "queries": len(queries)}
            for name, rounds in found.items():
                figures[f"{keys[name]}_p50_ms"] = statistics.median(r[0] for r in rounds)
                figures[f"{keys[name]}_p95_ms"] = statistics.median(r[1] for r in rounds)
            save_record("recall", figures, argv=argv)
        print(
            f"{args.notes if args.vault is None else root} notes, {len(queries)} queries, "
            f"{args.rounds} rounds; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
        )
        for name, rounds in found.items():
            p50 = statistics.median(r[0] for r in rounds)
            p95 = statistics.median(r[1] for r in rounds)
            each = ", ".join(f"{r[0]:.2f}" for r in rounds)
            print(f"{name}: p50 {p50:.2f} ms (rounds {each}), p95 {p95:.2f} ms")
    finally:
        if work is not None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
