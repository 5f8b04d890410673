#!/usr/bin/env python3
"""What hybrid search costs on one vault: embedding every note, and a warm search (p50, p95)
with `search_mode: lexical` and `hybrid`, in one process (what `vb mcp` and `vb serve` keep).

    .venv/bin/python scripts/bench_hybrid_latency.py VAULT QUERIES.jsonl [-n 200] [-k 10]

VAULT is any indexed vault (e.g. bench-out/scifact/vault from bench_retrieval.py); the
queries file is one {"id", "query"} JSON object a line. The vault's STRATEGY.md is not
changed: the modes are set on the policy in memory.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from bench_common import add_record_option, save_record

from vault_brain.app.memory.vault import Vault
from vault_brain.domain.policy.settings import build_policy
from vault_brain.storage.index.hybrid import HybridSearcher
from vault_brain.storage.index.search import Searcher


def timed(search: Searcher, queries: list[str], k: int) -> tuple[float, float]:
    search.search(queries[0], k)  # warm: searcher open, caches read
    times = []
    for text in queries:
        started = time.perf_counter()
        search.search(text, k)
        times.append(1000 * (time.perf_counter() - started))
    times.sort()
    return statistics.median(times), times[int(0.95 * (len(times) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("vault", type=Path)
    parser.add_argument("queries", type=Path)
    parser.add_argument("-n", type=int, default=200, help="queries timed (default 200)")
    parser.add_argument("-k", type=int, default=10)
    parser.add_argument("--candidates", type=int, help="hybrid_candidates (default: the policy's)")
    add_record_option(parser)
    args = parser.parse_args()
    lines = args.queries.read_text(encoding="utf-8").splitlines()
    queries = [json.loads(line)["query"] for line in lines if line.strip()][: args.n]
    vault = Vault.open(args.vault)
    vault.reconcile()
    changes: dict[str, object] = {"search_mode": "hybrid"}
    if args.candidates is not None:
        changes["hybrid_candidates"] = args.candidates
    hybrid = HybridSearcher(vault.index, build_policy(changes))
    started = time.perf_counter()
    embedded = len(hybrid.sync(rebuild=True))
    figures: dict[str, float] = {"embedded": embedded, "embed_s": time.perf_counter() - started}
    print(f"embedding {embedded} notes: {figures['embed_s']:.1f} s")
    for name, search in (("lexical", Searcher(vault.index, vault.policy)), ("hybrid", hybrid)):
        p50, p95 = timed(search, queries, args.k)
        figures |= {f"{name}_p50_ms": p50, f"{name}_p95_ms": p95}
        print(
            f"{name:8} warm search, k={args.k}, {len(queries)} queries: p50 {p50:.1f} ms, "
            f"p95 {p95:.1f} ms"
        )
    if args.record:  # named after the vault's folder and its parent (scifact/vault)
        save_record(f"hybrid_latency-{args.vault.resolve().parent.name}", figures)


if __name__ == "__main__":
    main()
