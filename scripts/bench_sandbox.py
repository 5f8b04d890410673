#!/usr/bin/env python3
"""`vb session` sandbox benchmark: container start and one workspace tool call via `docker exec`.

    python scripts/bench_sandbox.py [--starts 5] [--calls 50] [--base IMAGE]

Needs a running Docker engine; the sandbox image is `ensure_image`'s (built first when missing,
not timed). Measures, in one process with one Docker client (as `vb session` holds one):

* start: `Sandbox.start` of a fresh container (create + start, hardened as in a session) until
  it answers `true` through `docker exec`; then its removal; --starts times;
* per tool, --calls calls each on one running sandbox: `run_shell("true")` (the floor of a
  `docker exec`), `read_file` of a 2 KB file, `write_file` of 2 KB, `list_dir` of 50 names,
  and `run_shell` of `grep -c` over the written file (a typical agent command).

Prints one JSON document: p50/p95 per measure in ms, the target (one workspace tool call
<= 150 ms p50, checked against the slowest tool's p50) and whether it was met, the load
average, the Docker version.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))
from bench_common import add_record_option, log, percentile, save_record  # noqa: E402

from vault_brain.storage.sandbox.build import ensure_image  # noqa: E402
from vault_brain.storage.sandbox.container import Sandbox  # noqa: E402
from vault_brain.storage.sandbox.engine import docker_client  # noqa: E402

TARGET_TOOL_P50_MS = 150.0


def timed(fn: Callable[[], Any], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        fn()
        times.append((time.perf_counter() - began) * 1000)
    return times


def summary(times: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(percentile(times, 50), 1),
        "p95_ms": round(percentile(times, 95), 1),
        "runs": len(times),
    }


def folders(root: Path) -> tuple[Path, Path]:
    workspace, vault = root / "workspace", root / "vault"
    workspace.mkdir(parents=True)
    vault.mkdir()
    (vault / "note.md").write_text("a note\n")
    return workspace, vault


def run(starts: int, calls: int, base: str | None) -> dict[str, Any]:
    client = docker_client()
    image = ensure_image(client, base=base, say=log)
    root = Path(tempfile.mkdtemp(prefix="vb-bench-sandbox."))

    def start_once() -> None:
        workspace, vault = folders(root / uuid.uuid4().hex[:8])
        box = Sandbox.start(
            client, image, workspace=workspace, vault=vault, session=f"bench-{uuid.uuid4().hex[:8]}"
        )
        try:
            assert box.exec(["true"]).exit_code == 0
        finally:
            box.remove()

    log(f"starting {starts} sandboxes of {image} ...")
    start_once()  # warm-up: the first start after a daemon restart pays for layer caches
    start_times = timed(start_once, starts)
    workspace, vault = folders(root / "tools")
    box = Sandbox.start(client, image, workspace=workspace, vault=vault, session="bench-tools")
    try:
        text = "".join(f"line {i}: the quick brown fox\n" for i in range(70))  # ~2 KB
        box.write_file("data/sample.txt", text)
        for i in range(50):
            box.write_file(f"many/file-{i:02d}.txt", "x")
        tools: dict[str, Callable[[], Any]] = {
            "run_shell_true": lambda: box.run_shell("true"),
            "read_file_2kb": lambda: box.read_file("data/sample.txt"),
            "write_file_2kb": lambda: box.write_file("data/out.txt", text),
            "list_dir_50": lambda: box.list_dir("many"),
            "run_shell_grep": lambda: box.run_shell("grep -c fox data/sample.txt"),
        }
        results: dict[str, Any] = {}
        for name, fn in tools.items():
            log(f"{calls} x {name} ...")
            fn()  # warm-up
            results[name] = summary(timed(fn, calls))
    finally:
        box.remove()
        shutil.rmtree(root, ignore_errors=True)
    tool_p50 = max(result["p50_ms"] for result in results.values())  # the slowest tool
    version = client.version()
    return {
        "benchmark": "sandbox",
        "image": image,
        "docker": version.get("Version"),
        "cgroup": client.info().get("CgroupVersion"),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "start": summary(start_times),
        "tools": results,
        "target": {
            "tool_call_p50_ms": TARGET_TOOL_P50_MS,
            "measured_p50_ms": tool_p50,
            "met": tool_p50 <= TARGET_TOOL_P50_MS,
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--base", default=None, help="a local base image (default vb-base)")
    add_record_option(parser)
    args = parser.parse_args(argv)
    report = run(args.starts, args.calls, args.base)
    if args.record:
        slowest = report["target"]["measured_p50_ms"]
        save_record(
            "sandbox",
            {"start": report["start"], "tools": report["tools"], "tool_call_p50_ms": slowest},
            argv=argv,
        )
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
