"""The git side of `vb clone` and `vb fetch-old`: a partial clone (commits and trees now,
each blob when something needs it) with a sparse checkout (non-cone patterns).

Plain git processes, not GitPython: each step is one command over the whole tree. A clone
sets `sparse.expectFilesOutsideOfPatterns`: a file that appears where a path left out of the
checkout is (a vb append to a transcript that was not checked out) keeps the path's
skip-worktree bit, so `git add --all` never stages that new, partial file over the whole
one; `keep_unchecked_writes` then checks the path out and merges what was written into it.
This module imports nothing of `storage.git.sync` (whose `stage_all` calls it).
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from vault_brain.domain.errors import ExistsError, VaultBrainError
from vault_brain.domain.sync.sparse import escape
from vault_brain.storage.files import atomic_write
from vault_brain.storage.git import GitError
from vault_brain.storage.paths import VaultPaths

MIN_GIT = (2, 35)
"""`git sparse-checkout set --no-cone` (2.35); partial clone and lazy fetch are older."""
_SCP = re.compile(r"^[\w.-]+@?[\w.-]*:")  # user@host:path, git's scp-like form


def _git(
    *args: str,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    input: bytes | None = None,
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ["git", *args],
        cwd=cwd,
        capture_output=True,
        input=input,
        env={**os.environ, **(env or {})},
        check=False,
    )


def _out(proc: subprocess.CompletedProcess[bytes]) -> str:
    return proc.stdout.decode("utf-8", "replace")


def _err(proc: subprocess.CompletedProcess[bytes]) -> str:
    return _said(proc.stderr, proc.returncode)


def _said(stderr: bytes, code: int) -> str:
    """What git said on stderr, on one line (or its exit code, when it said nothing)."""
    text = " ".join(stderr.decode("utf-8", "replace").split())
    return text.removeprefix("fatal: ") or f"git exited with {code}"


def _run(*args: str, cwd: Path | None = None, what: str = "", input: bytes | None = None) -> str:
    proc = _git(*args, cwd=cwd, input=input)
    if proc.returncode != 0:
        raise GitError(
            f"{what or 'git ' + args[0]} failed: {_err(proc)}",
            hint="`vb --debug` shows where; the repository is left as it is",
        )
    return _out(proc)


def git_version() -> tuple[int, ...]:
    try:
        proc = _git("--version")
    except FileNotFoundError:
        raise GitError(
            "git is not installed", hint="install git (2.35 or later), then try again"
        ) from None
    found = re.search(r"(\d+)\.(\d+)", _out(proc))
    return (int(found.group(1)), int(found.group(2))) if found else (0, 0)


def check_git() -> None:
    version = git_version()
    if version < MIN_GIT:
        need = ".".join(map(str, MIN_GIT))
        raise GitError(
            f"git {'.'.join(map(str, version))} is too old for a partial clone with a sparse "
            f"checkout (vb clone needs git {need} or later)",
            hint="upgrade git, or clone the whole vault with `git clone URL DIR` and run "
            "`vb sync` in it",
        )


def clone_url(url: str) -> str:
    """The URL to clone: a local folder becomes a file:// URL (git ignores --filter for a
    plain path and copies every object, and the clone's origin is then that URL)."""
    if "://" in url or (_SCP.match(url) and not Path(url).exists()):
        return url
    path = Path(url).expanduser()
    return path.resolve().as_uri() if path.exists() else url


def remote_head(url: str, env: dict[str, str]) -> str | None:
    """The remote's default branch (None: an empty repository); a one-line error when the
    remote cannot be reached or is not a git repository. `env`: git's, for the network."""
    proc = _git("ls-remote", "--symref", url, "HEAD", env=env)
    if proc.returncode != 0:
        raise GitError(
            f"cannot reach {url}: {_err(proc)}",
            hint="check the URL and your access to it (`git ls-remote URL` says the same)",
        )
    for line in _out(proc).splitlines():
        if line.startswith("ref: ") and line.endswith("\tHEAD"):
            return line[5:].split("\t")[0].removeprefix("refs/heads/")
    return None


@dataclass
class Cloned:
    partial: bool
    """False: the remote does not serve partial clones (every blob came with the clone)."""
    branch: str


def partial_clone(url: str, target: Path, branch: str, env: dict[str, str]) -> Cloned:
    """`git clone --filter=blob:none --no-checkout`: commits and trees only, nothing checked
    out yet."""
    proc = _git(
        "clone",
        "--quiet",
        "--filter=blob:none",
        "--no-checkout",
        "--branch",
        branch,
        "--origin",
        "origin",
        url,
        str(target),
        env=env,
    )
    if proc.returncode != 0:
        raise GitError(
            f"git clone of {url} failed: {_err(proc)}",
            hint="check the URL and your access to it; nothing was left in the folder",
        )
    partial = "filtering not recognized" not in proc.stderr.decode("utf-8", "replace")
    return Cloned(partial, branch)


def top_entries(root: Path, commit: str = "HEAD") -> dict[str, str]:
    """name -> 'tree' | 'blob' | 'commit' of the top level of `commit`'s tree."""
    out = _run("ls-tree", "-z", commit, cwd=root, what="reading the remote's tree")
    entries: dict[str, str] = {}
    for item in out.split("\0"):
        if item:
            meta, _, name = item.partition("\t")
            entries[name] = meta.split()[1]
    return entries


def kind_of(root: Path, rel: str, commit: str = "HEAD") -> str | None:
    """'tree', 'blob' or 'commit' for a path of `commit`'s tree; None when it has none."""
    proc = _git("ls-tree", "-z", commit, "--", rel, cwd=root)
    for item in _out(proc).split("\0"):
        meta, _, name = item.partition("\t")
        if name == rel:
            return meta.split()[1]
    return None


def head(root: Path) -> str:
    return _run("rev-parse", "HEAD", cwd=root).strip()


def files_under(root: Path, folder: str, commit: str = "HEAD") -> list[str]:
    """Every file of `commit`'s tree under `folder` (from the trees: no blob fetched)."""
    out = _run(
        "-c",
        "core.quotePath=false",
        "ls-tree",
        "-r",
        "-z",
        "--name-only",
        commit,
        "--",
        folder,
        cwd=root,
        what="listing the remote's files",
    )
    return [p for p in out.split("\0") if p]


def vaults_below(root: Path, commit: str = "HEAD", limit: int = 5) -> list[str]:
    """Folders of `commit`'s tree holding a STRATEGY.md (a vault below the top)."""
    out = _run("ls-tree", "-r", "-z", "--name-only", commit, cwd=root, what="listing files")
    found = [p.rsplit("/", 1)[0] for p in out.split("\0") if p.endswith("/STRATEGY.md")]
    return sorted(found)[:limit]


OLD_COMMITS_SEEN = 500
"""Commits older than the window read in a row before `committed_since` stops reading."""


def committed_since(
    root: Path, days: int, folder: str = "sessions", now: float | None = None
) -> set[str]:
    """The files under `folder` that commits of the last `days` days (by committer date)
    changed. Not `git log --since`, which stops at the first older commit: a commit from a
    machine whose clock was behind would hide every recent one below it. The log is read
    newest first and left once `OLD_COMMITS_SEEN` older commits came in a row."""
    cutoff = (now if now is not None else time.time()) - days * 86400
    command = ["git", "-c", "core.quotePath=false", "log", "--format=%x01%ct", "--name-only"]
    command += ["-z", "--no-renames", "HEAD", "--", folder]
    found: set[str] = set()
    with subprocess.Popen(
        command, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    ) as proc:
        assert proc.stdout is not None
        rest, recent, old_in_a_row = b"", False, 0
        fd = proc.stdout.fileno()
        for chunk in iter(lambda: os.read(fd, 1 << 16), b""):
            *tokens, rest = (rest + chunk).split(b"\0")
            for token in tokens:
                if token.startswith(b"\x01"):
                    recent = int(token[1:] or 0) >= cutoff
                    old_in_a_row = 0 if recent else old_in_a_row + 1
                elif recent and token.strip(b"\n"):
                    found.add(token.strip(b"\n").decode("utf-8", "replace"))
            if old_in_a_row >= OLD_COMMITS_SEEN:
                proc.kill()
                break
    return found


def set_patterns(root: Path, patterns: list[str]) -> None:
    _run("config", "sparse.expectFilesOutsideOfPatterns", "true", cwd=root)
    text = "\n".join(patterns) + "\n"
    _run(
        "sparse-checkout",
        "set",
        "--no-cone",
        "--stdin",
        cwd=root,
        input=text.encode(),
        what="setting the sparse checkout",
    )


def checkout(root: Path, branch: str) -> None:
    """Check the branch out: git fetches the checked-out files' blobs in one batch, then
    writes the files with a worker per core (`checkout.workers=0`; git writes them one by
    one by default: at 100,000 notes on this machine, 60 s of mostly kernel time against
    14 s with two workers)."""
    _run(
        "-c",
        "checkout.workers=0",
        "checkout",
        "--quiet",
        branch,
        cwd=root,
        what="checking the vault out",
    )


_SET = ("git", "-c", "checkout.workers=0", "sparse-checkout", "set")


class Widening:
    """`git sparse-checkout set` with wider and wider patterns (each set of `stages` in
    turn), running in a thread: for each, git fetches the blobs of the files it adds in one
    batch and writes the files (a worker per core, as `checkout`)."""

    def __init__(self, root: Path, stages: list[list[str]]) -> None:
        self._root, self._stages = root, stages
        self._proc: subprocess.Popen[bytes] | None = None
        self._stopped = False
        self._failed: GitError | None = None
        self._thread = threading.Thread(target=self._run, name="vb-checkout", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        for patterns in self._stages:
            if self._stopped:
                return
            with tempfile.TemporaryFile() as errors:  # (a pipe nobody reads could fill)
                try:
                    self._proc = subprocess.Popen(
                        [*_SET, "--no-cone", "--stdin"],
                        cwd=self._root,
                        stdin=subprocess.PIPE,
                        stdout=subprocess.DEVNULL,
                        stderr=errors,
                    )
                except OSError as exc:
                    self._failed = GitError(
                        f"checking the vault out failed: {exc}", hint="is git installed?"
                    )
                    return
                self._proc.communicate(("\n".join(patterns) + "\n").encode())
                code = self._proc.returncode
                if code != 0 and not self._stopped:
                    errors.seek(0)
                    self._failed = GitError(
                        f"checking the vault out failed: {_said(errors.read(), code)}",
                        hint="check your access to the remote; nothing was left in the folder",
                    )
                if code != 0:
                    return

    def running(self) -> bool:
        return self._thread.is_alive()

    def finish(self) -> None:
        """Wait for git; a GitError if it failed."""
        self._thread.join()
        if self._failed is not None:
            raise self._failed

    def stop(self) -> None:
        """Stop git (the caller removes what it wrote)."""
        self._stopped = True
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.terminate()
        self._thread.join()


@contextlib.contextmanager
def widening(root: Path, stages: list[list[str]]) -> Iterator[Widening]:
    """Widen the sparse checkout to each of `stages` in turn, in the background while the
    block runs (it may read the files as they appear); then wait for git, a GitError if it
    failed. If the block raises, git is stopped."""
    running = Widening(root, stages)
    try:
        yield running
    except BaseException:
        running.stop()
        raise
    running.finish()


def is_sparse(root: Path, git_dir: Path | None = None) -> bool:
    """A sparse checkout is on. With the repository's `git_dir`, a repository that never
    had one (no info/sparse-checkout) is told without running git."""
    if git_dir is not None and not (git_dir / "info" / "sparse-checkout").exists():
        return False
    proc = _git("config", "--bool", "core.sparseCheckout", cwd=root)
    return _out(proc).strip() == "true"


def patterns(root: Path) -> list[str]:
    proc = _git("sparse-checkout", "list", cwd=root)
    return [line for line in _out(proc).splitlines() if line] if proc.returncode == 0 else []


def add_patterns(root: Path, new: list[str]) -> None:
    """Add patterns to the sparse checkout: git checks out what they match, fetching the
    blobs it lacks."""
    _run(
        "sparse-checkout",
        "add",
        "--stdin",
        cwd=root,
        input=("\n".join(new) + "\n").encode(),
        what="adding to the sparse checkout",
    )


def disable(root: Path) -> None:
    """Check everything out (every blob is fetched)."""
    _run("sparse-checkout", "disable", cwd=root, what="checking everything out")


@dataclass
class Checkout:
    present: list[str]
    """Files checked out (paths relative to the repository)."""
    absent: list[str]
    """Files in the commit but not checked out (skip-worktree)."""


def checkout_state(root: Path) -> Checkout:
    out = _run(
        "-c", "core.quotePath=false", "ls-files", "-t", "-z", cwd=root, what="listing the checkout"
    )
    state = Checkout([], [])
    for item in out.split("\0"):
        if len(item) > 2:
            (state.absent if item[0] == "S" else state.present).append(item[2:])
    return state


def unchecked_writes(root: Path) -> list[str]:
    """Paths left out of the checkout where a file exists all the same: something wrote
    there (git does not stage it: the path keeps its skip-worktree bit)."""
    return [p for p in checkout_state(root).absent if (root / p).is_file()]


Merge = Callable[[str, bytes, bytes], bytes | None]
"""(path, committed, written) -> the file to keep, or None to leave the write unstaged."""


def keep_unchecked_writes(root: Path, merge: Merge) -> list[str]:
    """In a sparse clone, the files written where a path was left out of the checkout: each
    is replaced by `merge` of the committed file (its blob fetched) and the written one,
    then checked out (git keeps the file there), so that the next `git add` stages the
    whole file. A kill in between leaves the merged file still unchecked: the next call
    merges it again, to the same. Returns those paths."""
    kept = []
    for path in unchecked_writes(root):
        full = root / path
        committed = _git("cat-file", "blob", f"HEAD:{path}", cwd=root).stdout
        merged = merge(path, committed, full.read_bytes())
        if merged is not None:
            atomic_write(full, merged, inside=VaultPaths(root))
            kept.append(path)
    if kept:
        add_patterns(root, [escape(path) for path in kept])
    return kept


def check_out_written(root: Path, paths: list[str]) -> list[str]:
    """Of `paths` (relative to the repository), those left out of the checkout whose file
    was written all the same are added to the checkout (git keeps the written file);
    returns them."""
    out = _run("-c", "core.quotePath=false", "ls-files", "-t", "-z", "--", *paths, cwd=root)
    written = [i[2:] for i in out.split("\0") if i.startswith("S ") and (root / i[2:]).is_file()]
    if written:
        add_patterns(root, [escape(path) for path in written])
    return written


def objects_bytes(root: Path) -> int:
    """The size of `.git/objects` (what the clone fetched and keeps)."""
    total = 0
    for folder, _dirs, files in os.walk(root / ".git" / "objects"):
        for name in files:
            try:
                total += (Path(folder) / name).stat().st_size
            except OSError:
                continue
    return total


def refuse_target(target: Path) -> None:
    """A clone goes into a new or empty folder."""
    if target.exists() and not target.is_dir():
        raise VaultBrainError(f"{target} is a file", hint="give a new folder for the clone")
    if target.is_dir() and any(target.iterdir()):
        raise ExistsError(
            f"{target} exists and is not empty",
            hint="give a new or empty folder (to update a vault already there: `vb sync` in it)",
        )
