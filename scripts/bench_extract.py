"""Benchmark `vb extract`: a generated project of Markdown files extracted offline, then
re-extracted after one file changes (issue targets: 1,000 files of about 2 MB <= 10 s;
re-extract after one change <= 200 ms).

    .venv/bin/python scripts/bench_extract.py --files 1000

Each figure is measured twice: through the memory API in one process (what `vb watch` does
when a file changes) and as the `vb extract` command a person runs (a new process, start-up
included). Prints one JSON document on stdout.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_common import add_record_option, log, percentile, save_record

WORDS = [
    "index",
    "vault",
    "note",
    "search",
    "merge",
    "sync",
    "agent",
    "memory",
    "credit",
    "archive",
    "session",
    "transcript",
    "token",
    "budget",
    "policy",
    "scope",
    "watcher",
    "cache",
    "release",
    "schema",
    "parser",
    "client",
    "server",
    "model",
    "retrieval",
    "ranking",
    "decay",
    "promotion",
    "pruning",
    "consolidation",
    "journal",
    "lock",
    "commit",
    "remote",
]


def sentence(rng: random.Random, n: int) -> str:
    words = [rng.choice(WORDS) for _ in range(n)]
    return " ".join(words).capitalize() + "."


def document(rng: random.Random, n: int) -> str:
    """About 2 KB of Markdown mixing what projects write: sections, prose, decisions,
    checklists, definitions, claims with numbers, notes and code."""
    parts = [f"# Component {n}\n"]
    for section in range(5):
        parts.append(f"## Part {section}\n")
        parts.append(" ".join(sentence(rng, rng.randint(8, 16)) for _ in range(4)) + "\n")
        kind = rng.randrange(6)
        if kind == 0:
            parts.append(
                f"We decided to keep the {rng.choice(WORDS)} in one file. {sentence(rng, 9)}\n"
            )
        elif kind == 1:
            parts.append(
                f"- [ ] Measure the {rng.choice(WORDS)} on 10k notes\n- [x] {sentence(rng, 6)}\n"
            )
        elif kind == 2:
            parts.append(f"- **{rng.choice(WORDS).title()}**: {sentence(rng, 10)}\n")
        elif kind == 3:
            parts.append(f"The {rng.choice(WORDS)} must answer within {rng.randint(5, 500)} ms.\n")
        elif kind == 4:
            parts.append(f"> **Note:** {sentence(rng, 10)}\n")
        else:
            parts.append("```python\nprint('hello')\n```\n")
    return "\n".join(parts)


def make_project(root: Path, files: int, seed: int = 7) -> int:
    rng = random.Random(seed)
    size = 0
    for n in range(files):
        path = root / f"area{n % 20:02d}" / f"doc{n:04d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        text = document(rng, n)
        path.write_text(text, encoding="utf-8")
        size += len(text.encode("utf-8"))
    return size


def cli(vault: Path, *args: str) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "vault_brain", "--vault", str(vault), "extract", *args],
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5, help="re-extractions after one change")
    add_record_option(parser)
    args = parser.parse_args()

    from vault_brain.app.api import MemoryAPI, create_vault

    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        project = base / "project"
        size = make_project(project, args.files)
        log(f"{args.files} files, {size / 1e6:.2f} MB")
        results: dict[str, Any] = {"files": args.files, "megabytes": round(size / 1e6, 2)}

        vault = base / "vault"
        create_vault(vault)
        api = MemoryAPI.open(vault)
        started = time.perf_counter()
        first = api.extract([str(project)], "bench")
        results["full_in_process_s"] = round(time.perf_counter() - started, 3)
        results["items"] = first.items
        log(f"full extraction in process: {results['full_in_process_s']} s, {first.items} items")

        other = base / "vault2"
        create_vault(other)
        results["full_cli_s"] = round(cli(other, str(project), "--project", "bench"), 3)
        log(f"full extraction, vb extract: {results['full_cli_s']} s")

        target = project / "area00" / "doc0000.md"
        in_process, by_cli = [], []
        for n in range(args.rounds):  # as vb watch does: one process, one change at a time
            target.write_text(target.read_text() + f"\nWe decided to ship round {n}.\n")
            started = time.perf_counter()
            again = api.extract([], "bench")
            in_process.append(time.perf_counter() - started)
            assert again.changed == ["area00/doc0000.md"], again.changed
        for n in range(args.rounds):  # as a person does: a new vb extract each time
            target.write_text(target.read_text() + f"\nWe decided to test round {n}.\n")
            by_cli.append(cli(vault, "--project", "bench"))
        results["one_change_in_process_ms_p50"] = round(percentile(in_process, 50) * 1000, 1)
        results["one_change_cli_ms_p50"] = round(percentile(by_cli, 50) * 1000, 1)
        log(
            f"one changed file: {results['one_change_in_process_ms_p50']} ms in process, "
            f"{results['one_change_cli_ms_p50']} ms with vb extract"
        )
        if args.record:
            save_record(f"extract-{args.files}", results)
        print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
