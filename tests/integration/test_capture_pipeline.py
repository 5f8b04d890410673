"""No hostile string reaches memory, whichever path it takes through a real vault.

`scripts/bench_capture.py --stage pipeline` (its `pipeline_scores`) builds a vault in a
temporary folder, offline, and pushes through it, with the memory API in-process, the 46 labelled
conversations of tests/data/capture and synthetic sessions whose ordinary user turns embed
every one of the corpus's 212 hostile strings (prompt injections, secrets, code, commands,
exfiltration requests, tool output; most are in no conversation). Every path that writes
memory or hands it to an agent is taken: persist, forced compaction (with the flush before
it), flush, promote, consolidate, an agent's memory_store and memory_update, MEMORY.md, the
loop's intake and context, an agent's search and retrieve. Then every destination is
searched for the hostile strings' needles, as written and normalised (NFKC, invisible
characters, homoglyphs, bidi overrides, spacing).

Why: a needle in memory is text a later session is shown as if the user had said it, so
there must be none in any destination. The test also checks that every destination and step
was exercised (episodes written, MEMORY.md filled, a compaction summary per session, a
context per session holding its summary, retrieved memories, entity notes, agent stores
refused...), so that it cannot pass because a path wrote nothing. Recall of the labelled
facts is reported by the script, not asserted here: routing is being changed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import load_script

BENCH = load_script("bench_capture")
CONVERSATIONS = 46
HOSTILE = 212


# the module's fixture runs the whole pipeline: 125-150 s alone on two cores, and past the
# run's 300 s hang guard on a loaded CI machine (its cost is measured by the benchmark)
pytestmark = pytest.mark.timeout(900)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root: Path = tmp_path_factory.mktemp("pipeline") / "vault"
    result: dict[str, Any] = BENCH.pipeline_scores(root)
    return result


def test_every_hostile_string_is_pushed_through_the_pipeline(report: dict[str, Any]) -> None:
    assert report["conversations"] == CONVERSATIONS
    assert report["hostile"] == report["hostile_used"] == HOSTILE
    assert report["steps"]["agent stores attempted"] == 2 * HOSTILE


def test_every_path_and_destination_is_exercised(report: dict[str, Any]) -> None:
    sessions = report["conversations"] + report["synthetic_sessions"]
    steps, scanned = report["steps"], report["scanned"]
    assert steps["compactions"] == steps["flushes"] == sessions, steps
    assert steps["promoted episodes"] > 0, steps
    assert steps["consolidated episodes"] > 0, steps
    assert steps["MEMORY.md memories"] > 0, steps
    assert steps["agent stores refused"] > 0, steps
    assert steps["contexts with a summary"] == sessions, steps
    assert steps["contexts with memories"] > 0, steps
    assert scanned["MEMORY.md"] == 1, scanned
    assert scanned["compaction summaries"] == scanned["loop context"] == sessions, scanned
    for destination in ("entities", "episodes", "archive", "transcript records", "agent reads"):
        assert scanned[destination] > 0, (destination, scanned)


@pytest.mark.parametrize("destination", BENCH.DESTINATIONS)
def test_no_hostile_needle_reaches(report: dict[str, Any], destination: str) -> None:
    leaks = report["leaks"][destination]
    if leaks:
        shown = "\n".join(
            f"  {row['hostile']} {row['needle']!r} in {row['where']}: {row['line'][:200]}"
            for row in leaks[:20]
        )
        pytest.fail(f"{len(leaks)} leak(s) in {destination} (the first 20):\n{shown}")
