"""BENCHMARKS.md's status table is generated from benchmarks/ and must not drift from it."""

from __future__ import annotations

import importlib.util
import json
import sys
import tomllib
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_the_status_table_is_up_to_date() -> None:
    generator = _load("gen_bench_status")
    current = (REPO / "BENCHMARKS.md").read_text(encoding="utf-8")
    assert generator.render(current) == current, "BENCHMARKS.md is stale: run `make bench-status`"


def test_every_record_has_the_fields_the_table_reads() -> None:
    for path in sorted((REPO / "benchmarks").glob("*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        assert {"script", "command", "date", "machine", "measures"} <= record.keys(), path.name
        assert (REPO / "scripts" / record["script"]).is_file(), path.name
        assert all(isinstance(v, (int, float)) for v in record["measures"].values()), path.name


def test_every_target_is_well_formed() -> None:
    rows = tomllib.loads((REPO / "benchmarks/targets.toml").read_text(encoding="utf-8"))["target"]
    for row in rows:
        assert {"label", "record", "key", "op", "target", "issue"} <= row.keys(), row
        assert row["op"] in ("<=", ">="), row


def test_a_record_keeps_the_numbers_and_a_relative_command(tmp_path: Path) -> None:
    common = _load("bench_common")
    figures = {"size": 10, "warm": {"p50_ms": 1.5, "runs": [1, 2]}, "ok": True, "nan": float("nan")}
    assert common.numbers(figures) == {"size": 10, "warm.p50_ms": 1.5}
    argv = ["--out", str(REPO / "bench-out"), "--vault=/elsewhere/v", "--record"]
    saved = sys.argv
    sys.argv = [str(REPO / "scripts" / "bench_x.py"), *argv]
    try:
        path = common.save_record("x-10", figures, directory=tmp_path)
    finally:
        sys.argv = saved
    record = json.loads(path.read_text(encoding="utf-8"))
    assert path.name == "x-10.json" and record["measures"] == {"size": 10, "warm.p50_ms": 1.5}
    assert record["command"].endswith(
        "scripts/bench_x.py --out bench-out --vault=/elsewhere/v --record"
    )
    assert record["date"].endswith("Z") and record["machine"]["cores"] >= 1
