"""What the benchmark scripts share: progress lines on stderr, percentiles, and `--record`.

`--record` writes one run's figures to `benchmarks/<family>.json` (committed), which
`scripts/gen_bench_status.py` turns into the status table at the top of BENCHMARKS.md. A record is
{"script", "command", "date", "machine": {"cores", "load_average"}, "measures": {name: number}};
a later run of the same family replaces it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import re
import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
RECORDS = REPO / "benchmarks"
_NOT_MEASURES = ("targets", "met", "machine", "seed")


def log(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile (q in 0..100), like numpy's default; NaN when empty."""
    data = sorted(values)
    if not data:
        return float("nan")
    pos = (len(data) - 1) * q / 100.0
    low = int(pos)
    high = min(low + 1, len(data) - 1)
    return data[low] + (data[high] - data[low]) * (pos - low)


def add_record_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--record",
        action="store_true",
        help="also write the figures to benchmarks/<family>.json (for the table in BENCHMARKS.md)",
    )


def numbers(data: Mapping[str, Any], prefix: str = "") -> dict[str, float]:
    """The numeric leaves of nested mappings by dotted path (lists, flags and NaN left out)."""
    found: dict[str, float] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            found.update(numbers(value, f"{name}."))
        elif (
            isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        ):
            found[name] = round(value, 4) if isinstance(value, float) else value
    return found


def _relative(arg: str) -> str:
    """An absolute path inside the repository, as a path relative to its root."""
    head, sep, tail = arg.rpartition("=") if arg.startswith("--") else ("", "", arg)
    path = Path(tail)
    if path.is_absolute() and path.is_relative_to(REPO):
        tail = str(path.relative_to(REPO)) or "."
    return f"{head}{sep}{tail}"


def command_line(argv: Sequence[str] | None = None) -> str:
    """The command as run from the repository root, with relative paths where they are inside it."""
    args = list(sys.argv if argv is None else [sys.argv[0], *argv])
    exe = Path(sys.executable)
    python = str(exe.relative_to(REPO)) if exe.is_relative_to(REPO) else "python"
    script = Path(args[0]).resolve()
    if script.is_relative_to(REPO):
        args[0] = str(script.relative_to(REPO))
    return shlex.join([python, args[0], *(_relative(arg) for arg in args[1:])])


def machine() -> dict[str, Any]:
    return {
        "cores": os.cpu_count(),
        "load_average": [round(load, 2) for load in os.getloadavg()],
    }


def save_record(
    family: str,
    measures: Mapping[str, Any],
    *,
    argv: Sequence[str] | None = None,
    directory: Path | None = None,
) -> Path:
    """Write one run's numeric measures to `benchmarks/<family>.json`; returns the path."""
    values = numbers({k: v for k, v in measures.items() if k not in _NOT_MEASURES})
    doc = {
        "script": Path(sys.argv[0]).name,
        "command": command_line(argv),
        "date": dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z"),
        "machine": machine(),
        "measures": dict(sorted(values.items())),
    }
    target = (directory or RECORDS) / f"{family}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    log(f"recorded {len(values)} measures in {target}")
    return target


_STRATEGY_KEY = re.compile(r"^(?P<key>[A-Za-z_][\w]*):(?P<rest>.*)$")


def set_strategy(vault: Path, shipped: str, changes: Mapping[str, object]) -> None:
    """Write STRATEGY.md as `vb init` ships it, with `changes` applied to front matter keys."""
    lines = shipped.splitlines(keepends=True)
    seen: set[str] = set()
    closing = None
    for i, line in enumerate(lines[1:], 1):
        if line.strip() == "---":
            closing = i
            break
        match = _STRATEGY_KEY.match(line)
        if match and match.group("key") in changes:
            key = match.group("key")
            lines[i] = f"{key}: {changes[key]}\n"
            seen.add(key)
    if closing is None or not lines[0].startswith("---"):
        raise SystemExit(f"{vault}/STRATEGY.md has no front matter block")
    missing = [f"{k}: {v}\n" for k, v in changes.items() if k not in seen]
    lines[closing:closing] = missing
    (vault / "STRATEGY.md").write_text("".join(lines), encoding="utf-8")
    # the policy cache is keyed by STRATEGY.md's mtime and size; drop it so that two edits
    # within one mtime tick can never be confused
    (vault / ".vb" / "policy.json").unlink(missing_ok=True)


def process_memory_mb(pid: int) -> dict[str, float]:
    """A live process's resident memory now (VmRSS) and at its peak (VmHWM), in MB, from
    /proc/<pid>/status (Linux); empty where there is no such file."""
    found: dict[str, float] = {}
    try:
        text = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
    except OSError:
        return found
    for line in text.splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM") and value.strip().endswith("kB"):
            found["rss_mb" if name == "VmRSS" else "peak_rss_mb"] = round(
                int(value.split()[0]) / 1024, 1
            )
    return found


def child_pids(parent: int | None = None) -> list[int]:
    """The pids of a process's children (default: this one's), from /proc (Linux)."""
    parent = os.getpid() if parent is None else parent
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text(encoding="utf-8")
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) > 1 and int(fields[1]) == parent:
            found.append(int(entry.name))
    return found


def messages_of(conversation: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A labelled conversation's messages with the ids capture reports them by (m0, m1, ...)."""
    return [{**m, "id": f"m{i}"} for i, m in enumerate(conversation["messages"])]


def ship_weights(out: Path, meta: Mapping[str, Any], check: bool) -> int:
    """Write a trained model's weights to `out` (vb's package data), or with `check` only
    compare: exit status 1 when training did not give the shipped weights."""
    text = json.dumps(meta, separators=(",", ":")) + "\n"
    if check:
        same = out.read_text(encoding="utf-8") == text
        print(
            "the shipped weights are what training gives" if same else "the shipped weights differ"
        )
        return 0 if same else 1
    out.write_text(text, encoding="utf-8")
    print(f"written: {out.name} ({len(text):,} bytes)")
    return 0
