"""Lifecycle and session benchmarks on a generated vault (default 10,000 notes).

Measures, against the targets in BENCHMARKS.md: MEMORY.md generation, feedback on 10
memories, `vb maintain` with nothing due, a prune that archives 1,000 notes, context
assembly for a 1,000-message session, offline compaction of a 100k-token session and an
offline flush of 200 messages. In-process figures use the library as the CLI does; the
"process" figures run the real `vb` command.

    python scripts/bench_lifecycle.py [--notes 10000] [--out bench-out/]
    python scripts/bench_lifecycle.py --plans-only VAULT   # MEMORY.md and prune planning only
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import gen_vault
from bench_common import add_record_option, save_record

from vault_brain.app.memory.vault import Vault
from vault_brain.domain.policy.settings import build_policy

SENTENCES = [
    "I prefer short status updates on Mondays.",
    "We decided to move the launch to the second week of March.",
    "Alice Kim works at Contoso as the lead engineer.",
    "Can you summarise the open pull requests?",
    "Here is the build log, it failed on the integration step again.",
    "The Apollo project deadline is the end of the quarter.",
    "Thanks, that helps a lot.",
]


def timed(fn: Callable[[], Any], runs: int = 5) -> tuple[float, Any]:
    """Median wall time in ms over `runs`, and the last result."""
    samples = []
    result = None
    for _ in range(runs):
        started = time.perf_counter()
        result = fn()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples), result


def process_ms(args: list[str], runs: int = 5) -> float:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "vault_brain", *args],
            check=True,
            capture_output=True,
            timeout=600,
        )
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def make_session(vault: Vault, session: str, messages: int, words: int = 40) -> None:
    from vault_brain.storage.sessions.transcript import append

    batch = []
    for n in range(messages):
        role = "user" if n % 2 == 0 else "assistant"
        text = " ".join(SENTENCES[(n + i) % len(SENTENCES)] for i in range(max(1, words // 8)))
        batch.append({"type": role, "content": text})
        if len(batch) == 200:
            append(vault.paths, session, batch)
            batch = []
    if batch:
        append(vault.paths, session, batch)


def plans_only(root: Path, record: bool) -> int:
    """MEMORY.md generation and prune planning on an indexed vault, changing nothing: the
    measures that grow with the vault, at sizes where generating a vault of its own for the
    whole benchmark would take longer than the measures."""
    from vault_brain.app.lifecycle.plans import plan_prune
    from vault_brain.app.memory.memory_file import build_memory_file

    vault = Vault.open(root)
    vault.reconcile()
    notes = vault.reconcile().total
    results: dict[str, Any] = {"notes": notes, "vault": str(root)}
    results["memory_file_ms"], mf = timed(lambda: build_memory_file(Vault.open(root)))
    results["memory_file_tokens"] = mf.tokens
    results["prune_plan_ms"], plan = timed(lambda: plan_prune(Vault.open(root)), runs=3)
    results["prune_plan_actions"] = len(plan.actions)
    results["prune_plan_process_ms"] = process_ms(
        ["--vault", str(root), "prune", "--dry-run", "--json"], 3
    )
    if record:
        save_record(f"lifecycle-{notes}", results)
    for key, value in results.items():
        print(f"{key:34} {value:.1f}" if isinstance(value, float) else f"{key:34} {value}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--out", type=Path, default=Path("bench-out"))
    parser.add_argument(
        "--plans-only",
        type=Path,
        metavar="VAULT",
        help="only MEMORY.md generation and prune planning (in-process, and `vb prune "
        "--dry-run` as a process), on this indexed vault, which is left as it is",
    )
    add_record_option(parser)
    args = parser.parse_args()
    if args.plans_only is not None:
        return plans_only(args.plans_only.resolve(), args.record)
    root = (args.out / f"lifecycle-{args.notes}").resolve()
    if root.exists():
        shutil.rmtree(root)
    print(f"generating {args.notes} notes in {root} ...", flush=True)
    gen_vault.generate(root, args.notes, seed=7)
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "vault_brain", "--vault", str(root), "index"],
        check=True,
        capture_output=True,
    )
    results: dict[str, Any] = {"notes": args.notes, "index_seconds": time.perf_counter() - started}
    vault = Vault.open(root)
    vault.reconcile()

    from vault_brain.app.memory.memory_file import build_memory_file

    results["memory_file_ms"], mf = timed(lambda: build_memory_file(vault))
    results["memory_file_tokens"] = mf.tokens
    results["memory_file_process_ms"] = process_ms(["--vault", str(root), "memory-file"], 3)

    from vault_brain.app.memory.credit import apply_feedback, record_retrieval

    hits = vault.searcher.search("project review meeting notes", k=10)
    assert len(hits) == 10, "the generated vault should answer a 10-hit query"

    def fresh_turn_ms(give: Callable[[], Any]) -> float:
        """Median ms of `give` crediting a turn of 10 retrievals not credited yet: a signal
        counts once per turn, so a repeat on the same turn would time a no-op."""
        samples = []
        for _ in range(3):
            record_retrieval(vault, "bench-feedback", "project review", hits, source="bench")
            started = time.perf_counter()
            give()
            samples.append((time.perf_counter() - started) * 1000)
        return statistics.median(samples)

    def in_process() -> None:
        done = apply_feedback(vault, "bench-feedback", "good")
        assert not done.repeated and len(done.changes) == 10, done

    command = [sys.executable, "-m", "vault_brain", "--vault", str(root), "feedback", "good"]
    results["feedback_10_ms"] = fresh_turn_ms(in_process)
    results["feedback_10_process_ms"] = fresh_turn_ms(
        lambda: subprocess.run(
            [*command, "--session", "bench-feedback"], check=True, capture_output=True, timeout=600
        )
    )

    from vault_brain.app.lifecycle.plans import maintain, plan_prune
    from vault_brain.app.memory.apply import apply_plan

    first, report = timed(lambda: maintain(vault), runs=1)
    results["maintain_first_run_ms"] = first
    results["maintain_first_run_actions"] = sum(len(r.actions) for r in report.runs)
    vault = Vault.open(root)
    results["maintain_nothing_due_ms"], idle = timed(lambda: maintain(Vault.open(root)))
    assert not idle.runs, "nothing should be due right after a run"
    results["maintain_nothing_due_process_ms"] = process_ms(["--vault", str(root), "maintain"])

    # a prune that archives 1,000 notes: make 1,000 scored notes old and low
    from vault_brain.storage.notes.frontmatter_edit import edit_front_matter

    prunable = sorted(
        p
        for folder in ("entities/projects", "entities/preferences", "episodes")
        for p in (root / folder).rglob("*.md")
    )[:1000]
    old = {"credit": 0.01, "created": "2020-01-01", "last_accessed": "2020-01-01", "pinned": False}
    for path in prunable:
        path.write_bytes(edit_front_matter(path.read_bytes(), old))
    vault = Vault.open(root)
    vault.reconcile()
    started = time.perf_counter()
    plan = plan_prune(vault)
    apply_plan(vault, plan)
    results["prune_seconds"] = time.perf_counter() - started
    results["prune_archived"] = len(plan.actions)

    from vault_brain.app.sessions.loop import build_context

    make_session(vault, "bench-context", 1000)
    started = time.perf_counter()
    build_context(vault, "bench-context")
    results["context_first_ms"] = (time.perf_counter() - started) * 1000
    results["context_ms"], ctx = timed(lambda: build_context(Vault.open(root), "bench-context"))
    results["context_messages"] = len(ctx.messages)

    from vault_brain.app.sessions.compaction import compact
    from vault_brain.app.sessions.flush import flush
    from vault_brain.storage.sessions.transcript import SessionIndex

    make_session(vault, "bench-compact", 500, words=300)
    info = SessionIndex(vault.paths).info("bench-compact")
    results["compact_session_tokens"] = info.context_tokens if info else 0
    no_flush = Vault.open(root)
    no_flush.__dict__["policy"] = build_policy({"flush_before_compaction": False})
    started = time.perf_counter()
    done = compact(no_flush, "bench-compact")
    results["compact_seconds"] = time.perf_counter() - started
    results["compact_summarized"] = done.summarized

    make_session(vault, "bench-flush", 200)
    started = time.perf_counter()
    flushed = flush(Vault.open(root), "bench-flush")
    results["flush_200_seconds"] = time.perf_counter() - started
    results["flush_200_notes"] = len(flushed.plan.actions)

    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"lifecycle-{args.notes}.json").write_text(json.dumps(results, indent=2) + "\n")
    if args.record:
        save_record(f"lifecycle-{args.notes}", results)
    for key, value in results.items():
        print(f"{key:34} {value:.1f}" if isinstance(value, float) else f"{key:34} {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
