#!/usr/bin/env python3
"""Kill, or fill the disk under, each writing command at every one of its write syscalls,
then check that the vault is whole.

    python scripts/crash_matrix.py [--only add,delete] [--faults kill,enospc] [--json]

For every command below, strace lists the syscalls that change files (write, fsync, rename,
unlink, mkdir, ...) on a fresh copy of a prepared vault. Then, for each of those points, a
new copy is made and the command is run again with SIGKILL (`kill`) or ENOSPC (`enospc`)
injected at exactly that syscall. The next command (`vb status`) runs, and the invariants are
checked:

- the change happened completely or not at all (the command's own check);
- every note is in one place only (no note both at its path and in archive/);
- no temp file (`.vbtmp`) is left anywhere in the vault, no journal is left in `.vb/`;
- every note, transcript and log still reads (JSONL lines parse);
- the index still answers a search (a rebuild cut short leaves the previous one in use);
- with ENOSPC, the error message was true: "nothing was changed" only when nothing was,
  and a change said to be finished later was finished by the next command.

`tests/system/test_crash_safety.py` runs this matrix; RELIABILITY.md reports its figures.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from faults import (  # noqa: E402
    file_point_numbers,
    run_failed_at,
    run_killed_at,
    vb_command,
    write_points,
)
from vault_brain.entry import main  # noqa: E402
from vault_brain.storage.notes.frontmatter import parse_text  # noqa: E402
from vault_brain.storage.template import init_vault  # noqa: E402

_IN_PROCESS = threading.Lock()  # stdout and stderr are the process's: one call at a time


def vb(root: Path, *args: str) -> tuple[int, str, str]:
    """`vb --vault ROOT ...` in this process (the real entry point)."""
    out, err = io.StringIO(), io.StringIO()
    with _IN_PROCESS, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["--vault", str(root), *args])
    return code, out.getvalue(), err.getvalue()


def ok(root: Path, *args: str) -> str:
    code, out, err = vb(root, *args)
    if code != 0:
        raise RuntimeError(f"setup command failed: vb {' '.join(args)}: {err}")
    return out


def meta(root: Path, rel: str) -> dict[str, Any]:
    return parse_text((root / rel).read_bytes()).meta


@dataclass
class Case:
    name: str
    args: list[str]
    prepare: Callable[[Path], None]
    done: Callable[[Path], bool]
    untouched: Callable[[Path, dict[str, bytes]], bool] = field(
        default=lambda root, before: snapshot(root) == before
    )


def snapshot(root: Path) -> dict[str, bytes]:
    """The vault's own files (not vb's machine-local cache or git, not the sessions cache)."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
        and p.relative_to(root).parts[0] not in (".vb", ".git")
        and p.name != "sessions.json"
    }


def _base(root: Path) -> None:
    ok(root, "add", "-n", "Ada", "-c", "people", "Ada builds engines.")
    ok(root, "add", "-n", "Mill", "-c", "projects", "The mill turns slowly.")
    ok(root, "search", "engines mill", "-s", "s1")


def _with_archived(root: Path) -> None:
    _base(root)
    ok(root, "delete", "entity-projects-mill")


def _with_session(root: Path) -> None:
    _base(root)
    for text in ("I prefer green tea in the morning.", "We decided to ship on Friday."):
        ok(root, "loop", "intake", "-s", "f1", text)
        ok(root, "loop", "persist", "-s", "f1", "--role", "assistant", "--content", "Noted.")


def _old_low_credit(root: Path) -> None:
    _base(root)
    for n in range(3):
        path = root / "entities" / "projects" / f"stale-{n}.md"
        path.write_text(
            f"---\ntitle: Stale {n}\ncreated: 2020-01-01\nupdated: 2020-01-01\ncredit: 0.05\n"
            f"---\nNever used {n}.\n"
        )


def _archived_once(root: Path, rel: str) -> bool:
    return not (root / rel).exists() and (root / "archive" / rel).exists()


CASES = [
    Case(
        "add",
        ["add", "-n", "Bo", "-c", "people", "Bo repairs looms."],
        _base,
        lambda root: (root / "entities/people/bo.md").is_file(),
    ),
    Case(
        "update",
        ["update", "entity-people-ada", "--content", "Ada designs engines.", "--tag", "math"],
        _base,
        lambda root: (
            meta(root, "entities/people/ada.md").get("tags") == ["math"]
            and (root / "entities/people/ada.md").read_text().endswith("Ada designs engines.\n")
        ),
    ),
    Case(
        "delete",
        ["delete", "entity-projects-mill", "--reason", "gone"],
        _base,
        lambda root: _archived_once(root, "entities/projects/mill.md"),
    ),
    Case(
        "restore",
        ["restore", "entity-projects-mill"],
        _with_archived,
        lambda root: (
            (root / "entities/projects/mill.md").is_file()
            and not (root / "archive/entities/projects/mill.md").exists()
        ),
    ),
    Case(
        "feedback",
        ["feedback", "good", "-s", "s1"],
        _base,
        lambda root: (
            float(meta(root, "entities/people/ada.md")["credit"]) > 0.5
            and float(meta(root, "entities/projects/mill.md")["credit"]) > 0.5
            and '"signal":"positive_feedback"' in (root / "sessions/s1.jsonl").read_text()
            and (root / "logs/credit.jsonl").is_file()
        ),
    ),
    Case(
        "agent search",
        ["search", "engines", "-s", "s2"],
        _base,
        lambda root: (
            meta(root, "entities/people/ada.md").get("access_count") == 2
            and (root / "sessions/s2.jsonl").is_file()
        ),
    ),
    Case(
        "prune",
        ["prune"],
        _old_low_credit,
        lambda root: all(_archived_once(root, f"entities/projects/stale-{n}.md") for n in range(3)),
    ),
    Case(
        "flush",
        ["flush", "-s", "f1"],
        _with_session,
        lambda root: (
            '"type":"flush"' in (root / "sessions/f1.jsonl").read_text()
            and any((root / "episodes").rglob("session-f1-*.md"))
        ),
    ),
    Case(
        "tasks add",
        ["tasks", "add", "oil the gears"],
        _base,
        lambda root: "oil the gears" in (root / "tasks.json").read_text(),
    ),
    Case(
        "index rebuild",
        ["index", "--rebuild"],
        _base,
        lambda root: _finds_ada(root),  # the files do not change: a whole index is the result
    ),
    Case(
        "memory-file",
        ["memory-file"],
        _base,
        lambda root: "Ada" in (root / "MEMORY.md").read_text(),
    ),
]


def _finds_ada(root: Path) -> bool:
    code, out, _ = vb(root, "search", "engines", "--json")
    return code == 0 and "entity-people-ada" in [h["id"] for h in json.loads(out)["results"]]


def whole(root: Path) -> list[str]:
    """What is wrong with the vault (empty when it is whole)."""
    problems: list[str] = []
    if not _finds_ada(root):
        problems.append("the index no longer answers (a search for 'engines' misses Ada)")
    temps = [p.relative_to(root).as_posix() for p in root.rglob("*.vbtmp")]
    if temps:
        problems.append(f"temp files left: {temps}")
    journals = list((root / ".vb" / "journal").glob("*.json"))
    if journals:
        problems.append(f"journals left: {[p.name for p in journals]}")
    live = {
        p.relative_to(root).as_posix()
        for p in root.rglob("*.md")
        if p.relative_to(root).parts[0] not in ("archive", ".vb", ".git")
    }
    archived = {
        p.relative_to(root / "archive").as_posix() for p in (root / "archive").rglob("*.md")
    }
    if live & archived:
        problems.append(f"notes in two places: {sorted(live & archived)}")
    for path in [*root.rglob("*.jsonl")]:
        if ".vb" in path.parts:
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            try:
                json.loads(line)
            except ValueError:
                problems.append(f"{path.relative_to(root)}:{n} is not JSON")
    for rel in live:
        if parse_text((root / rel).read_bytes()).error:
            problems.append(f"{rel} no longer parses")
    return problems


@dataclass
class Outcome:
    case: str
    fault: str
    point: int
    syscall: str
    result: str  # done | untouched
    problems: list[str]
    reached: bool = True  # the fault landed (see `run_point`)


def run_point(case: Case, fault: str, base: Path, points: list[str], n: int, work: Path) -> Outcome:
    root = work / f"{case.name.replace(' ', '-')}-{fault}-{n}"
    shutil.copytree(base, root, symlinks=True)
    before = snapshot(root)
    cmd = vb_command("--vault", str(root), *case.args)
    problems: list[str] = []
    reached = True
    if fault == "kill":
        run = run_killed_at(cmd, points, n)
        if run.returncode == 0:
            # Finished before the kill: Whoosh writes a segment in chunks whose number
            # follows the notes' bytes (dates, ids), so near the end a run may make fewer
            # writes than the probe did. Its vault is still checked below.
            reached = False
        elif not run.killed:
            problems.append(f"not killed (exit {run.returncode}): {run.stderr.strip()[:200]}")
    else:
        run = run_failed_at(cmd, points, n, "ENOSPC")
        said = run.stderr
        if run.returncode == 0:
            pass  # the failing write was one vb can do without (a cache): fine if whole
        elif "nothing was changed" in said and snapshot(root) != before:
            problems.append(f"said nothing was changed, but the vault changed: {said.strip()}")
        elif "Traceback" in said or not said.startswith("vb: error: "):
            problems.append(f"not one clear error: {said.strip()[:300]}")
    code, _, err = vb(root, "status")  # the next command finishes or undoes what was cut short
    if code != 0:
        problems.append(f"the next command failed: {err.strip()}")
    promised = "will be finished by the next vb command" in run.stderr
    if fault == "enospc" and promised and not case.done(root):
        problems.append("said the change would be finished, but the next command did not")
    state = "done" if case.done(root) else "untouched" if case.untouched(root, before) else "half"
    if state == "half":
        problems.append("the change is neither complete nor absent")
    problems += whole(root)
    syscall = points[n - 1].split(maxsplit=1)[1][:80]
    shutil.rmtree(root, ignore_errors=True)
    return Outcome(case.name, fault, n, syscall, state, problems, reached)


def _no_commits(root: Path) -> None:
    """The matrix checks vb's own writes: a lifecycle pass's git commit afterwards (git's own
    atomic writes, in child processes whose syscalls vary with the hashes) is left out, and
    so are the learned checks of the gate and of updates (they write nothing, and loading
    their encoder under strace at every write point of a flush takes minutes)."""
    strategy = root / "STRATEGY.md"
    text = strategy.read_text(encoding="utf-8")
    text = text.replace("# commit_on: [session, lifecycle, command]", "commit_on: []")
    learned = "gate_learned_check: false\nlearned_updates: false\n"
    strategy.write_text(text.replace("---\n", f"---\n{learned}", 1))


def _sampled(points: list[str], numbers: list[int], every: int, vault_every: int) -> list[int]:
    """Every `vault_every`-th write point to a vault file (and the last), and every `every`-th
    point in vb's cache (.vb/) or of a file descriptor whose path strace does not show (a
    write to an open file)."""
    vault_file = [n for n in numbers if '"/' in points[n - 1] and "/.vb/" not in points[n - 1]]
    rest = [n for n in numbers if n not in vault_file]
    return sorted({*vault_file[::vault_every], *vault_file[-1:], *rest[::every]})


def run_matrix(
    only: set[str] | None = None,
    faults: tuple[str, ...] = ("kill", "enospc"),
    workers: int = 2,
    every: int = 1,
    vault_every: int = 1,
) -> list[Outcome]:
    """Every case at every write point (or a sample: every `vault_every`-th point that writes
    a vault file and every `every`-th other one)."""
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory(prefix="vb-crash-") as tmp:
        work = Path(tmp)
        jobs: list[tuple[Case, str, Path, list[str], int]] = []
        for case in CASES:
            if only and case.name not in only:
                continue
            base = work / f"base-{case.name.replace(' ', '-')}"
            init_vault(base)
            _no_commits(base)
            case.prepare(base)
            probe = work / f"probe-{case.name.replace(' ', '-')}"
            shutil.copytree(base, probe, symlinks=True)
            points = write_points(vb_command("--vault", str(probe), *case.args))
            shutil.rmtree(probe)
            numbers = file_point_numbers(points)
            if not numbers:
                raise RuntimeError(f"{case.name}: no write points found")
            if every > 1 or vault_every > 1:
                numbers = _sampled(points, numbers, every, vault_every)
            jobs += [(case, fault, base, points, n) for fault in faults for n in numbers]
        with ThreadPoolExecutor(workers) as pool:
            outcomes = list(
                pool.map(lambda job: run_point(job[0], job[1], job[2], job[3], job[4], work), jobs)
            )
    return outcomes


def summary(outcomes: list[Outcome]) -> dict[str, Any]:
    by_case: dict[str, dict[str, Any]] = {}
    for o in outcomes:
        row = by_case.setdefault(o.case, {"points": 0, "done": 0, "untouched": 0, "problems": 0})
        row["points"] += 1
        if o.result in ("done", "untouched"):
            row[o.result] += 1
        row["problems"] += int(bool(o.problems))
    return {
        "runs": len(outcomes),
        "kills": sum(o.fault == "kill" for o in outcomes),
        "enospc": sum(o.fault == "enospc" for o in outcomes),
        "kills_not_reached": sum(not o.reached for o in outcomes),
        "violations": sum(bool(o.problems) for o in outcomes),
        "by_command": by_case,
    }


def main_cli() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--only", help="comma-separated command names (default: all)")
    parser.add_argument("--faults", default="kill,enospc", help="kill, enospc or both")
    parser.add_argument(
        "--every", type=int, default=1, help="try every Nth point in vb's cache (default 1: all)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    args = parser.parse_args()
    only = set(args.only.split(",")) if args.only else None
    started = time.perf_counter()
    outcomes = run_matrix(only, tuple(args.faults.split(",")), every=args.every)
    report = summary(outcomes)
    report["seconds"] = round(time.perf_counter() - started, 1)
    failures = [o.__dict__ for o in outcomes if o.problems]
    if args.json:
        print(json.dumps({**report, "failures": failures}, indent=1))
    else:
        print(json.dumps(report, indent=1))
        for f in failures:
            where = f"{f['case']} {f['fault']} at point {f['point']} ({f['syscall']})"
            print(f"FAIL {where}: {f['problems']}")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main_cli())
