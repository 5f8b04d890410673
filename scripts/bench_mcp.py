#!/usr/bin/env python3
"""MCP-server benchmark of vault_brain on a synthetic vault, through the SDK's real client.

    python scripts/bench_mcp.py [--notes 10000] [--seed 42] [--out bench-out/]

The vault is generated with scripts/gen_vault.py and indexed with `vb --vault X index`
(cached under OUT/mcp-vaults/, keyed by size, seed and generator version). Then:

* start to first answered call: spawn `vb --vault X mcp` through the stdio client, connect
  (MCP handshake) and call memory_search once; wall time of the whole, median of --starts runs;
* warm memory_search round trip: on one connection, --queries deterministic queries of 1-4
  vocabulary words (after a few warm-up calls); p50/p95 of the client-side wall time. Each call
  does what an agent's call does: search the index, which the server's index keeper keeps
  current from watcher events; the access is recorded behind the answer (front matter of the
  hits, the session transcript);
* the same steps in-process (no MCP), to show where a round trip's time goes: a stat-scan
  reconcile (what a one-shot command pays; the server has the keeper instead), the search,
  and record + index refresh (done by the server behind the answer);
* the server's resident memory after the warm searches (VmRSS and its peak VmHWM, from
  /proc/<pid>/status);
* the floors: `python -c pass` and `python -c "import mcp.server.mcpserver"`.

Prints a table and writes OUT/mcp.json. The searches bump access counters in the cached vault
(as they would in use); the timing does not depend on it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen_vault
from bench_common import (
    add_record_option,
    child_pids,
    log,
    percentile,
    process_memory_mb,
    save_record,
)

REPO = Path(__file__).resolve().parent.parent
TARGETS = {"start_to_first_call_s": 1.0, "warm_search_p50_ms": 20.0}  # (at 10k notes)


def prepare_vault(out: Path, notes: int, seed: int, regenerate: bool) -> Path:
    key = f"n{notes}-s{seed}-g{gen_vault.GENERATOR_VERSION}"
    root, ready = out / "mcp-vaults" / key, out / "mcp-vaults" / f"{key}.ready.json"
    if ready.is_file() and root.is_dir() and not regenerate:
        log(f"reusing {root}")
    else:
        ready.unlink(missing_ok=True)
        log(f"generating {notes} notes (seed {seed}) in {root} ...")
        made = gen_vault.generate(root, notes, seed, force=True)
        log(f"generated in {made.seconds:.1f}s; indexing ...")
        started = time.perf_counter()
        proc = subprocess.run(
            [*gen_vault.vb_command(), "--vault", str(root), "index"],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        if proc.returncode != 0:
            raise SystemExit(f"vb index failed: {proc.stderr.strip()}")
        log(f"indexed in {time.perf_counter() - started:.1f}s")
        ready.write_text(json.dumps({"notes": notes, "seed": seed}) + "\n", encoding="utf-8")
    # a fresh reconcile, so the runs below start from an index that matches the files
    subprocess.run([*gen_vault.vb_command(), "--vault", str(root), "index"], check=True,
                   capture_output=True, stdin=subprocess.DEVNULL)  # fmt: skip
    return root


def server_params(vault: Path, session: str) -> Any:
    from mcp.client.stdio import StdioServerParameters

    return StdioServerParameters(
        command=gen_vault.vb_command()[0],
        args=[*gen_vault.vb_command()[1:], "--vault", str(vault), "mcp"],
        env={"VB_SESSION_ID": session},
    )


async def first_call(vault: Path, query: str) -> float:
    from mcp import Client

    started = time.perf_counter()
    async with Client(server_params(vault, "bench-mcp-start"), read_timeout_seconds=120) as client:
        result = await client.call_tool("memory_search", {"query": query, "limit": 10})
        elapsed = time.perf_counter() - started
    if result.is_error:
        raise SystemExit(f"memory_search failed: {result.content}")
    return elapsed


def server_memory_mb() -> dict[str, float]:
    """The resident memory of the `vb mcp` process this one started (see `process_memory_mb`)."""
    for pid in child_pids():
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"mcp" in cmdline:
            return process_memory_mb(pid)
    return {}


async def warm_calls(
    vault: Path, queries: list[str], warmup: int
) -> tuple[list[float], int, dict[str, float]]:
    from mcp import Client

    times: list[float] = []
    empty = 0
    async with Client(server_params(vault, "bench-mcp-warm"), read_timeout_seconds=120) as client:
        for n, query in enumerate(queries[:warmup] + queries):
            started = time.perf_counter()
            result = await client.call_tool("memory_search", {"query": query, "limit": 10})
            elapsed = time.perf_counter() - started
            if result.is_error:
                raise SystemExit(f"memory_search failed: {result.content}")
            if n >= warmup:
                times.append(elapsed)
                empty += not (result.structured_content or {}).get("results")
        memory = server_memory_mb()  # (still serving: after every search)
    return times, empty, memory


def in_process(vault: Path, queries: list[str]) -> dict[str, float]:
    """The steps of one memory_search without MCP: reconcile and search (in the answer), then
    what the server does behind the answer: record the access and refresh the index."""
    from vault_brain.app.memory.credit import record_retrieval
    from vault_brain.app.memory.vault import Vault

    v = Vault.open(vault)
    v.reconcile(force=True)
    steps: dict[str, list[float]] = {"reconcile_ms": [], "search_ms": [], "record_ms": []}
    for query in queries:
        t0 = time.perf_counter()
        v.reconcile(force=True)
        t1 = time.perf_counter()
        hits = v.searcher.search(query, 10)
        t2 = time.perf_counter()
        if hits:
            record_retrieval(v, "bench-mcp-steps", query, hits, source="bench")
            v.index.refresh([h.path for h in hits])
        t3 = time.perf_counter()
        steps["reconcile_ms"].append((t1 - t0) * 1000)
        steps["search_ms"].append((t2 - t1) * 1000)
        if hits:
            steps["record_ms"].append((t3 - t2) * 1000)
    return {f"{k}_p50": round(statistics.median(v), 2) for k, v in steps.items()}


def timed_python(code: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, stdin=subprocess.DEVNULL)
        times.append(time.perf_counter() - started)
    return round(statistics.median(times), 3)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--queries", type=int, default=200, help="warm searches timed")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--starts", type=int, default=5, help="cold starts timed")
    parser.add_argument("--out", type=Path, default=REPO / "bench-out")
    parser.add_argument("--regenerate", action="store_true")
    add_record_option(parser)
    args = parser.parse_args(argv)

    args.out.mkdir(parents=True, exist_ok=True)
    vault = prepare_vault(args.out, args.notes, args.seed, args.regenerate)
    queries = gen_vault.sample_queries(args.queries + args.warmup, seed=11)

    log("floors: python startup, mcp SDK import ...")
    python_s = timed_python("pass", 3)
    sdk_s = timed_python("import mcp.server.mcpserver", 3)

    log(f"{args.starts} cold starts ...")
    starts = [asyncio.run(first_call(vault, queries[n % len(queries)])) for n in range(args.starts)]
    log(f"{args.queries} warm searches ...")
    times, empty, memory = asyncio.run(warm_calls(vault, queries[args.warmup :], args.warmup))
    log("in-process breakdown ...")
    steps = in_process(vault, queries[args.warmup : args.warmup + 100])

    results: dict[str, Any] = {
        "notes": args.notes,
        "seed": args.seed,
        "vault": str(vault),
        "start_to_first_call_s": round(statistics.median(starts), 3),
        "start_to_first_call_runs_s": [round(s, 3) for s in starts],
        "warm_search_p50_ms": round(percentile(times, 50) * 1000, 2),
        "warm_search_p95_ms": round(percentile(times, 95) * 1000, 2),
        "warm_search_mean_ms": round(statistics.fmean(times) * 1000, 2),
        "warm_search_queries": len(times),
        "warm_search_empty": empty,
        "in_process": steps,
        "server_rss_mb": memory.get("rss_mb"),
        "server_peak_rss_mb": memory.get("peak_rss_mb"),
        "python_startup_s": python_s,
        "mcp_sdk_import_s": sdk_s,
        "machine": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "load_avg_1m": round(os.getloadavg()[0], 2),
        },
    }
    results["targets"] = {
        key: {"limit": limit, "value": results[key], "met": results[key] <= limit}
        for key, limit in TARGETS.items()
    }
    (args.out / "mcp.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    if args.record:
        save_record(f"mcp-{args.notes}", results, argv=argv)

    rows = [
        ("start to first answered call (median)", f"{results['start_to_first_call_s']:.3f} s",
         "<= 1 s"),
        ("warm memory_search round trip p50", f"{results['warm_search_p50_ms']:.2f} ms",
         "<= 20 ms"),
        ("warm memory_search round trip p95", f"{results['warm_search_p95_ms']:.2f} ms", ""),
        ("  in process: reconcile p50", f"{steps['reconcile_ms_p50']:.2f} ms", ""),
        ("  in process: search p50", f"{steps['search_ms_p50']:.2f} ms", ""),
        ("  behind the answer: record + refresh p50", f"{steps['record_ms_p50']:.2f} ms", ""),
        ("vb mcp resident memory, peak", f"{memory.get('peak_rss_mb', float('nan')):.0f} MB", ""),
        ("python -c pass", f"{python_s:.3f} s", ""),
        ("python -c 'import mcp.server.mcpserver'", f"{sdk_s:.3f} s", ""),
    ]  # fmt: skip
    print(f"vb mcp at {args.notes} notes (load avg {results['machine']['load_avg_1m']})")
    for label, value, target in rows:
        print(f"  {label:<42} {value:>12}  {target}")
    print(f"wrote {args.out / 'mcp.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
