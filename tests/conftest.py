"""Shared fixtures: real vaults in tmp_path, the real CLI in-process and as a subprocess."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from vault_brain.entry import main

REPO = Path(__file__).resolve().parents[1]
# A subset of kepano's hand-made Obsidian vault (MIT), vendored: see its ATTRIBUTION.txt.
KEPANO = REPO / "tests" / "data" / "kepano-vault"
KEPANO_NOTES = sum(1 for _ in KEPANO.rglob("*.md"))


@pytest.fixture(scope="session", autouse=True)
def machine_config_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The machine-local config folder (the policy-approval key, ...) of the whole run: a
    folder of its own, inherited by every vb process the tests start, never the real home's."""
    home = tmp_path_factory.mktemp("xdg-config")
    before = os.environ.get("XDG_CONFIG_HOME")
    os.environ["XDG_CONFIG_HOME"] = str(home)
    yield home
    if before is None:
        os.environ.pop("XDG_CONFIG_HOME", None)
    else:
        os.environ["XDG_CONFIG_HOME"] = before


@dataclass
class Result:
    exit_code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)


def run_vb(
    *args: str, input: str | None = None, env: dict[str, str] | None = None, cwd: Path | None = None
) -> Result:
    """Run `vb` as a real subprocess (what users and agents do)."""
    full_env = {**os.environ, **(env or {})}
    if env is None or "VB_VAULT" not in env:
        full_env.pop("VB_VAULT", None)
    proc = subprocess.run(
        [sys.executable, "-m", "vault_brain", *args],
        input=input,
        capture_output=True,
        text=True,
        env=full_env,
        cwd=cwd,
        timeout=120,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Run `vb` in-process through the real entry point (`vault_brain.entry.main`, what the
    console script calls), with stdin, stdout and stderr of its own; returns a Result."""
    monkeypatch.delenv("VB_VAULT", raising=False)

    def invoke(*args: str, input: str | None = None) -> Result:
        out, err = io.StringIO(), io.StringIO()
        monkeypatch.setattr(sys, "stdin", io.StringIO(input or ""))
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
        return Result(code, out.getvalue(), err.getvalue())

    yield invoke


TIERS = ("unit", "integration", "system")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Each test's tier is its folder's (tests/unit, tests/integration, tests/system), unless
    it is marked `system` itself: a process-level test kept beside the in-process ones of
    its file. `make check` runs `-m "not system"`."""
    for item in items:
        if item.get_closest_marker("system") is None:
            folder = item.path.parent.name
            item.add_marker(folder if folder in TIERS else "integration")


@pytest.fixture(scope="session")
def vault_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One vault made by `vb init` (its git repository, first commit and all) per test run
    and worker: each `vault` is a copy of it, not another `vb init`."""
    root = tmp_path_factory.mktemp("template") / "vault"
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["init", str(root)])
    assert code == 0, err.getvalue()
    return root


@pytest.fixture
def vault(tmp_path: Path, vault_template: Path) -> Path:
    """A fresh vault as `vb init` makes it (a copy of the run's template)."""
    root = tmp_path / "vault"
    shutil.copytree(vault_template, root, symlinks=True)
    return root


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file's bytes, except vb's machine-local cache and git internals."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.relative_to(root).parts[0] not in (".vb", ".git")
    }


def load_script(name: str) -> Any:
    """A script of `scripts/` as a module (the tests run what the figures come from),
    registered in sys.modules as dataclasses and pickling expect."""
    import importlib.util

    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def index_dir(root: Path) -> Path:
    """The folder of the index generation the manifest names as current."""
    manifest = json.loads((root / ".vb" / "manifest.json").read_text(encoding="utf-8"))
    return root / ".vb" / str(manifest["index"])


def git(*args: str, cwd: Path) -> str:
    """Run git in `cwd` (the tests' real repositories); its stdout."""
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return proc.stdout


@pytest.fixture
def git_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A home of its own, a git identity and a machine name for tests with git remotes."""
    env = {
        "HOME": str(tmp_path / "home"),
        "GIT_AUTHOR_NAME": "Tester",
        "GIT_AUTHOR_EMAIL": "tester@example.org",
        "GIT_COMMITTER_NAME": "Tester",
        "GIT_COMMITTER_EMAIL": "tester@example.org",
        "GIT_CONFIG_NOSYSTEM": "1",
        "VB_MACHINE": "test",
    }
    (tmp_path / "home").mkdir(exist_ok=True)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("VB_VAULT", raising=False)
    return env


VB_PROCESS = (sys.executable, "-X", "faulthandler", "-m", "vault_brain")
"""`vb` as a process of its own; `-X faulthandler`: `stop_process` shows where one hangs."""


@contextlib.contextmanager
def watching(root: Path, timeout: float = 30.0) -> Iterator[subprocess.Popen[str]]:
    """`vb watch` on `root` as a real process, once its status file names it; stopped with
    SIGINT (as Ctrl-C) on the way out (`stop_process`)."""
    command = ["watch", "-q", "--debounce", "0.1"]
    proc = subprocess.Popen(
        [*VB_PROCESS, "--vault", str(root), *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    status = root / ".vb/watch.json"
    deadline = time.monotonic() + timeout
    while not (status.exists() and json.loads(status.read_text()).get("pid") == proc.pid):
        assert proc.poll() is None and time.monotonic() < deadline, "vb watch did not start"
        time.sleep(0.05)
    try:
        yield proc
    finally:
        stop_process(proc)


def stop_process(
    proc: subprocess.Popen[str],
    name: str = "vb watch",
    sig: signal.Signals = signal.SIGINT,
    timeout: float = 60.0,
) -> None:
    """Send `sig` (SIGINT: as Ctrl-C) and wait for the process to exit. One that does not exit
    in `timeout` is aborted, never left running (a watcher would answer the next test's
    searches), and the test fails with every thread's stack, when it was started with
    `-X faulthandler`."""
    if proc.poll() is None:
        proc.send_signal(sig)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)
        _, err = proc.communicate(timeout=30)
        pytest.fail(f"{name} did not stop within {timeout:.0f} s of {sig.name}:\n{err[-6000:]}")


# ---------------------------------------------------------------- Docker (`vb session`'s sandbox)


def _docker_unavailable(why: str) -> None:
    """Skip the test, except under CI (`VB_REQUIRE_TOOLS=1`), where Docker is required."""
    if os.environ.get("VB_REQUIRE_TOOLS"):
        pytest.fail(f"Docker is required (VB_REQUIRE_TOOLS is set): {why}")
    pytest.skip(f"needs a running Docker engine: {why}")


@pytest.fixture(scope="session")
def docker_engine() -> Any:
    """A Docker SDK client whose daemon answers (`storage.sandbox.engine.docker_client`)."""
    from vault_brain.storage.sandbox.engine import SandboxError, docker_client

    try:
        return docker_client()
    except SandboxError as exc:
        _docker_unavailable(exc.one_line())


@pytest.fixture(scope="session")
def sandbox_image(docker_engine: Any, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The sandbox image's tag, built once per test run by `ensure_image` itself (its base
    vb-base:bookworm-<hash> too, with debootstrap, when missing: a few minutes the first time;
    one worker at a time: on a fresh machine two would each build the base, and the tag of
    the first would be gone by the time its tests ran)."""
    from filelock import FileLock

    from vault_brain.storage.sandbox.build import ensure_image
    from vault_brain.storage.sandbox.engine import SandboxError

    try:
        with FileLock(tmp_path_factory.getbasetemp().parent / "sandbox-image.lock"):
            return ensure_image(
                docker_engine, say=lambda line: print(f"[sandbox] {line}", file=sys.stderr)
            )
    except SandboxError as exc:
        _docker_unavailable(exc.one_line())
        raise


@pytest.fixture(scope="session")
def opencode_image(docker_engine: Any, sandbox_image: str) -> str:
    """The OpenCode image's tag, built once per test run by `ensure_opencode_image` (OpenCode's
    pinned release fetched from the npm registry into ~/.cache/vault_brain the first time)."""
    from vault_brain.storage.sandbox.engine import SandboxError
    from vault_brain.storage.sandbox.opencode_image import ensure_opencode_image

    try:
        return ensure_opencode_image(
            docker_engine,
            sandbox_image,
            os.environ,
            say=lambda line: print(f"[opencode] {line}", file=sys.stderr),
        )
    except SandboxError as exc:
        _docker_unavailable(exc.one_line())
        raise
