"""Kills and a full disk at exact write syscalls of every writing command: afterwards the
next command finds the vault whole (each change complete or absent, each note in one place,
no temp file, no journal left) and every error said what really happened.

The matrix itself is `scripts/crash_matrix.py` (which also produces RELIABILITY.md's
figures): here it runs every write point to a vault file and every 6th point in vb's cache.
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

import pytest

from conftest import REPO
from faults import FULL_MATRIX, require_strace


def _matrix() -> Any:
    spec = importlib.util.spec_from_file_location(
        "crash_matrix", REPO / "scripts" / "crash_matrix.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["crash_matrix"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


MATRIX = _matrix()


# the flush case takes 50 s alone (its 34 sampled runs about 2.5 s each, none slower: all 246
# points timed on 2026-11-27) and once passed 300 s on a loaded CI machine
@pytest.mark.timeout(900)
@pytest.mark.parametrize("case", [c.name for c in MATRIX.CASES])
def test_every_kill_and_full_disk_leaves_the_vault_whole(case: str) -> None:
    require_strace()
    every, vault_every = (1, 1) if FULL_MATRIX else (12, 3)  # (make test: a sample)
    outcomes = MATRIX.run_matrix({case}, ("kill", "enospc"), every=every, vault_every=vault_every)
    assert outcomes, "no write point was tried"
    failures = [(o.fault, o.point, o.syscall, o.problems) for o in outcomes if o.problems]
    assert failures == []
    kills = [o for o in outcomes if o.fault == "kill"]
    missed = [o.point for o in kills if not o.reached]  # a run with fewer writes than the probe
    assert len(missed) <= max(1, len(kills) // 20), f"kills that never landed: {missed}"
    results = {o.result for o in outcomes}
    assert "done" in results  # the fault landed late enough for the change to be finished
