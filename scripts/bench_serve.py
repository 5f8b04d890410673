#!/usr/bin/env python3
"""`vb serve` benchmark: the latency the memory proxy adds over calling the upstream directly.

    python scripts/bench_serve.py [--notes 10000] [--seed 42] [--requests 200] [--json]

A vault of --notes synthetic notes (scripts/gen_vault.py, indexed with `vb index`, cached under
OUT/serve-vaults/) is copied for the run (the proxy writes transcripts and captured notes into
it). The project's fake upstream (tests/fake_llm_server.py) answers at once; `vb serve` runs as
a real process in front of it, with no LLM configured (offline capture). One HTTP client with
keep-alive calls both, interleaved, so each proxied request has a direct twin:

* non-streaming: --requests chat completions, each a new conversation whose user message is
  "What do you know about <1-4 vocabulary words>?"; wall time per request, direct and proxied;
  added = proxied - direct, p50 and p95. The same with `memory_top_k: 0` shows the proxy's own
  cost without retrieval (the rest is the search of the vault);
* streaming: --streams requests with `stream: true`; time to the first content chunk (TTFT),
  direct and proxied; added TTFT p50 and p95;
* concurrency: --concurrent streams at once through the proxy (10 chunks, 20 ms apart); every
  one must complete with the whole text.

Requests are --pause seconds apart (default 0.1), as turns of a chat are, so the writes the
proxy does after each response (transcript, retrieval record, flush, summary) mostly finish
between requests; --pause 0 measures back-to-back load. Prints a table, or one JSON document
with --json; writes OUT/serve.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import httpx2

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "tests"))
import gen_vault  # noqa: E402
from bench_common import add_record_option, log, percentile, save_record  # noqa: E402

from fake_llm_server import Canned, FakeLLMServer, completion, streamed  # noqa: E402

TARGETS = {"added_p50_ms": 15.0, "added_ttft_p50_ms": 20.0}
CONCURRENT_CHUNKS = 10


def prepare_vault(out: Path, notes: int, seed: int) -> Path:
    key = f"n{notes}-s{seed}-g{gen_vault.GENERATOR_VERSION}"
    root, ready = out / "serve-vaults" / key, out / "serve-vaults" / f"{key}.ready.json"
    if ready.is_file() and root.is_dir():
        log(f"reusing {root}; bringing its index up to date ...")
        subprocess.run(  # (a new index schema means a rebuild here, not in the server)
            [*gen_vault.vb_command(), "--vault", str(root), "index"],
            check=True,
            capture_output=True,
            stdin=subprocess.DEVNULL,
        )
        return root
    log(f"generating {notes} notes (seed {seed}) in {root} ...")
    gen_vault.generate(root, notes, seed, force=True)
    started = time.perf_counter()
    subprocess.run(
        [*gen_vault.vb_command(), "--vault", str(root), "index"],
        check=True,
        capture_output=True,
        stdin=subprocess.DEVNULL,
    )
    log(f"indexed in {time.perf_counter() - started:.1f}s")
    ready.write_text(json.dumps({"notes": notes, "seed": seed}) + "\n", encoding="utf-8")
    return root


def start_proxy(vault: Path, upstream: str) -> tuple[subprocess.Popen[str], str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VB_", "OPENAI_"))}
    args = ["--vault", str(vault), "serve", "--port", "0", "--upstream", upstream]
    proc = subprocess.Popen(
        [*gen_vault.vb_command(), *args],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stderr is not None
    line = proc.stderr.readline()
    if "listening on http://" not in line:
        proc.kill()
        raise SystemExit(f"vb serve did not start: {line}{proc.stderr.read()}")
    url = line.split("listening on ", 1)[1].split()[0]
    threading.Thread(target=proc.stderr.read, daemon=True).start()  # keep the pipe drained
    return proc, url


def answer(body: Any) -> dict[str, Any] | Canned:
    if body.get("stream"):
        return streamed(["Here ", "is ", "what ", "I ", "know."])
    return completion("Here is what I know.")


def timed_post(client: httpx2.Client, url: str, body: dict[str, Any]) -> float:
    started = time.perf_counter()
    response = client.post(url, json=body)
    response.raise_for_status()
    return (time.perf_counter() - started) * 1000


def ttft(client: httpx2.Client, url: str, body: dict[str, Any]) -> float:
    """Milliseconds to the first chunk with content; the rest of the stream is read."""
    started = time.perf_counter()
    first = float("nan")
    with client.stream("POST", url, json=body) as response:
        response.raise_for_status()
        for line in response.iter_lines():
            if first == first or not line.startswith("data: {"):
                continue  # (first == first: no longer NaN, the first token came)
            if json.loads(line[6:])["choices"][0]["delta"].get("content"):
                first = (time.perf_counter() - started) * 1000
    return first


def paired(
    run: Callable[[httpx2.Client, str, dict[str, Any]], float],
    direct: str,
    proxied: str,
    queries: list[str],
    extra: dict[str, Any],
    pause: float,
    tag: str,
) -> dict[str, float]:
    d_times, p_times, added = [], [], []
    with httpx2.Client(timeout=60) as client:
        for n, query in enumerate(queries):
            body = {
                "model": "bench",
                "messages": [{"role": "user", "content": f"What do you know about {query}?"}],
                **extra,
            }
            d = run(client, direct, body)
            p = run(client, proxied, {**body, "memory_session": f"bench-{tag}-{n}"})
            if n >= 5:  # warm-up excluded
                d_times.append(d)
                p_times.append(p)
                added.append(p - d)
            time.sleep(pause)
    return {
        "n": len(added),
        "direct_p50_ms": round(percentile(d_times, 50), 2),
        "direct_p95_ms": round(percentile(d_times, 95), 2),
        "proxied_p50_ms": round(percentile(p_times, 50), 2),
        "proxied_p95_ms": round(percentile(p_times, 95), 2),
        "added_p50_ms": round(percentile(added, 50), 2),
        "added_p95_ms": round(percentile(added, 95), 2),
    }


def concurrent(upstream: FakeLLMServer, proxied: str, count: int) -> dict[str, Any]:
    pieces = [f"piece{n} " for n in range(CONCURRENT_CHUNKS)]
    upstream.responder = lambda body: streamed(pieces, chunk_delay=0.02)
    errors: list[str] = []
    durations: list[float] = []
    lock = threading.Lock()

    def one(n: int) -> None:
        body = {
            "model": "bench",
            "stream": True,
            "memory_session": f"bench-concurrent-{n}",
            "messages": [{"role": "user", "content": f"Stream {n}: what about the release?"}],
        }
        started = time.perf_counter()
        try:
            with httpx2.Client(timeout=120) as client:
                text = []
                with client.stream("POST", proxied, json=body) as response:
                    response.raise_for_status()
                    for line in response.iter_lines():
                        if line.startswith("data: {"):
                            delta = json.loads(line[6:])["choices"][0]["delta"]
                            text.append(delta.get("content") or "")
            if "".join(text) != "".join(pieces):
                raise ValueError("incomplete text")
            with lock:
                durations.append((time.perf_counter() - started) * 1000)
        except Exception as exc:
            with lock:
                errors.append(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=one, args=(n,)) for n in range(count)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(180)
    return {
        "streams": count,
        "errors": len(errors),
        "first_errors": errors[:3],
        "wall_s": round(time.perf_counter() - started, 3),
        "stream_p50_ms": round(percentile(durations, 50), 2),
        "stream_max_ms": round(max(durations, default=float("nan")), 2),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--notes", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--requests", type=int, default=200, help="non-streaming pairs")
    parser.add_argument("--streams", type=int, default=100, help="streaming (TTFT) pairs")
    parser.add_argument("--concurrent", type=int, default=50, help="streams at once")
    parser.add_argument("--pause", type=float, default=0.1, help="seconds between requests")
    parser.add_argument("--out", type=Path, default=REPO / "bench-out")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    add_record_option(parser)
    args = parser.parse_args(argv)

    cached = prepare_vault(args.out, args.notes, args.seed)
    work = Path(tempfile.mkdtemp(prefix="vb-bench-serve-"))
    vault = work / "vault"
    log(f"copying the vault to {vault} ...")
    shutil.copytree(cached, vault, symlinks=True)
    upstream = FakeLLMServer().start()
    upstream.max_requests = 10**9
    upstream.responder = answer
    proc, url = start_proxy(vault, upstream.base_url)
    log(f"vb serve at {url}")
    direct, proxied = f"{upstream.base_url}/chat/completions", f"{url}/chat/completions"
    queries = gen_vault.sample_queries(max(args.requests, args.streams) + 5, seed=11)
    try:
        log(f"{args.requests} non-streaming pairs ...")
        plain = paired(
            timed_post, direct, proxied, queries[: args.requests + 5], {}, args.pause, "plain"
        )
        log(f"{args.requests} non-streaming pairs without memory (memory_top_k 0) ...")
        bare = paired(
            timed_post,
            direct,
            proxied,
            queries[: args.requests + 5],
            {"memory_top_k": 0},
            args.pause,
            "bare",
        )
        log(f"{args.streams} streaming pairs (TTFT) ...")
        stream = paired(
            ttft, direct, proxied, queries[: args.streams + 5], {"stream": True}, args.pause, "ttft"
        )
        log(f"{args.concurrent} concurrent streams ...")
        together = concurrent(upstream, proxied, args.concurrent)
    finally:
        proc.terminate()
        proc.wait(120)
        upstream.stop()
        shutil.rmtree(work, ignore_errors=True)
    result = {
        "notes": args.notes,
        "seed": args.seed,
        "pause_s": args.pause,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "load_average": os.getloadavg()[0],
        "non_streaming": plain,
        "non_streaming_no_memory": bare,
        "streaming_ttft": stream,
        "concurrent": together,
        "targets": TARGETS,
        "met": {
            "added_p50_ms": plain["added_p50_ms"] <= TARGETS["added_p50_ms"],
            "added_ttft_p50_ms": stream["added_p50_ms"] <= TARGETS["added_ttft_p50_ms"],
            "concurrent_no_error": together["errors"] == 0,
        },
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "serve.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    if args.record:
        save_record(f"serve-{args.notes}", result, argv=argv)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    rows = [
        ("non-streaming", plain, "added_p50_ms"),
        ("non-streaming, memory_top_k 0", bare, None),
        ("streaming: time to first token", stream, "added_ttft_p50_ms"),
    ]
    print(f"vb serve on a {args.notes}-note vault ({args.pause}s between requests)\n")
    print("| measure | direct p50 / p95 | via vb serve p50 / p95 | added p50 / p95 | target |")
    print("|---|---|---|---|---|")
    for name, r, target in rows:
        goal = "-"
        if target:
            ok = result["met"][target]
            goal = f"<= {TARGETS[target]:g} ms: {'met' if ok else 'not met'}"
        print(
            f"| {name} | {r['direct_p50_ms']} / {r['direct_p95_ms']} ms | "
            f"{r['proxied_p50_ms']} / {r['proxied_p95_ms']} ms | "
            f"{r['added_p50_ms']} / {r['added_p95_ms']} ms | {goal} |"
        )
    c = together
    print(
        f"| {c['streams']} concurrent streams | - | p50 {c['stream_p50_ms']} ms, max "
        f"{c['stream_max_ms']} ms, wall {c['wall_s']} s | - | "
        f"{'no error: met' if c['errors'] == 0 else str(c['errors']) + ' errors: not met'} |"
    )
    return 0 if all(result["met"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
