"""Fault injection for the tests: kill a real `vb` process at an exact write syscall.

`strace` lists the process's file-changing syscalls (write, fsync, rename, unlink, mkdir,
chmod, truncate...): its write points. `inject=SYSCALL:signal=SIGKILL:when=N` delivers
SIGKILL just before the N-th call of one syscall (strace counts each syscall separately), so
killing at write point k means injecting on that point's syscall at its occurrence number.
Running the command again killed at each point proves what happens after a crash at exactly
that step. Python is run with PYTHONDONTWRITEBYTECODE so that start-up itself writes nothing
(no bytecode): every write point belongs to the command's own work, and is the same in every
run.

strace is a test dependency (`.ci/run` installs it). Where it is missing, tests that need it
are skipped, except under CI (`VB_REQUIRE_TOOLS=1`), where a missing tool is a failure.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

WRITE_SYSCALLS = (
    "write,pwrite64,writev,fsync,fdatasync,rename,renameat,renameat2,unlink,unlinkat,"
    "ftruncate,truncate,mkdir,mkdirat,chmod,fchmod,fchmodat,link,linkat,symlink,symlinkat"
)
KILLED = 128 + 9  # strace exits like a shell: 128 + the signal that killed the tracee
# `make test` tries a sample of each crash matrix; CI (`.ci/run`) sets VB_CRASH_MATRIX=full.
FULL_MATRIX = os.environ.get("VB_CRASH_MATRIX") == "full"
SAMPLE_EVERY = 3  # (the sample: every third write point, and the last)


def sampled(numbers: list[int], every: int = SAMPLE_EVERY) -> list[int]:
    """The write points a matrix tries: all under VB_CRASH_MATRIX=full, else every
    `every`-th (from the first) and the last, so each run still kills early and late."""
    if FULL_MATRIX or len(numbers) <= 2:
        return numbers
    return sorted({*numbers[::every], numbers[-1]})


def require_strace() -> str:
    path = shutil.which("strace")
    if path is None:
        if os.environ.get("VB_REQUIRE_TOOLS"):
            pytest.fail("strace is required (VB_REQUIRE_TOOLS is set): apt-get install strace")
        pytest.skip("strace is not installed (apt-get install strace)")
    return path


def vb_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "vault_brain", *args]


def _env(extra: dict[str, str] | None) -> dict[str, str]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **(extra or {})}
    env.pop("VB_VAULT", None)
    return env


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str

    @property
    def killed(self) -> bool:
        return self.returncode in (KILLED, -9)  # strace may re-raise the SIGKILL on itself


def write_points(
    cmd: list[str], env: dict[str, str] | None = None, cwd: Path | None = None
) -> list[str]:
    """The write syscalls `cmd` makes (one strace line each), running it to completion."""
    strace = require_strace()
    log = Path(os.environ.get("TMPDIR", "/tmp")) / f"vb-trace-{os.getpid()}.txt"
    try:
        subprocess.run(
            [strace, "-f", "-qq", "-e", f"trace={WRITE_SYSCALLS}", "-o", str(log), *cmd],
            env=_env(env),
            cwd=cwd,
            capture_output=True,
            timeout=120,
            check=False,
        )
        return [line for line in log.read_text().splitlines() if line.strip()]
    finally:
        log.unlink(missing_ok=True)


def _syscall(point: str) -> str:
    """The syscall of a trace line such as `123 rename("a", "b") = 0`."""
    return point.split(maxsplit=1)[1].split("(", 1)[0]


def file_point_numbers(points: list[str]) -> list[int]:
    """The numbers (1-based) of the write points that change files, not stdout or stderr."""
    return [n for n, p in enumerate(points, 1) if not re.search(r"\bwritev?\([12],", p)]


def run_killed_at(
    cmd: list[str],
    points: list[str],
    n: int,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> Run:
    """Run `cmd`, SIGKILLed just before its `n`-th write point (1-based, from `points`, the
    write points of the same command on an identical vault)."""
    return _inject(cmd, points, n, "signal=SIGKILL", env, cwd)


def run_failed_at(
    cmd: list[str],
    points: list[str],
    n: int,
    error: str = "ENOSPC",
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> Run:
    """Run `cmd` with its `n`-th write point failing with `error` (a disk that fills there)."""
    return _inject(cmd, points, n, f"error={error}", env, cwd)


def _injected(strace: str, points: list[str], n: int, what: str, cmd: list[str]) -> list[str]:
    """The strace command line that runs `cmd` with `what` injected at its `n`-th point."""
    name = _syscall(points[n - 1])
    occurrence = sum(1 for p in points[:n] if _syscall(p) == name)  # strace counts per syscall
    inject = f"inject={name}:{what}:when={occurrence}"
    trace = f"trace={WRITE_SYSCALLS}"
    return [strace, "-f", "-qq", "-o", "/dev/null", "-e", trace, "-e", inject, *cmd]


def _inject(
    cmd: list[str],
    points: list[str],
    n: int,
    what: str,
    env: dict[str, str] | None,
    cwd: Path | None,
) -> Run:
    strace = require_strace()
    proc = subprocess.run(
        _injected(strace, points, n, what, cmd),
        env=_env(env),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)


def start_paused_at(
    cmd: list[str], points: list[str], n: int, seconds: float, env: dict[str, str] | None = None
) -> subprocess.Popen[str]:
    """Start `cmd` in the background, held for `seconds` just before its `n`-th write point
    (a long step made long on purpose, at an exact place)."""
    strace = require_strace()
    delay = f"delay_enter={int(seconds * 1_000_000)}"
    return subprocess.Popen(
        _injected(strace, points, n, delay, cmd),
        env=_env(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
