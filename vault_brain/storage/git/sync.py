"""The git side of `vb sync` (GitPython): drivers, commit, fetch, merge, push, and the files a
merge left for vb to resolve.

GitPython is imported inside each function (it takes ~0.1 s), and a repository object lives
for one command only. `push()` reports a rejection in its result (PushInfo flags) rather than
raising; an exception from push or fetch means the remote could not be reached.
"""

from __future__ import annotations

import logging
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vault_brain.domain.sync.merge import machine_of, with_trailers
from vault_brain.domain.sync.trust import Entry
from vault_brain.storage.files import TEMP_SUFFIX, atomic_write
from vault_brain.storage.git import GitError, sparse

ATTRIBUTES_HEADER = "# vb's merge drivers"
# merge attribute -> the kind git's driver (`interfaces.git_merge`) is given
# (None: git's `true`, keep ours)
DRIVERS: dict[str, str | None] = {
    "vb-note": "note",
    "vb-jsonl": "jsonl",
    "vb-tasks": "tasks",
    "vb-items": "items",
    "vb-ours": None,
}
ATTRIBUTES = """\
# vb's merge drivers (vb init and vb sync install them into each clone's .git/config).
# Notes: counters merged arithmetically, the rest line by line, a conflict copy instead of markers.
*.md merge=vb-note
# Append-only logs and transcripts: merged record by record, each record once.
logs/*.jsonl merge=vb-jsonl
sessions/*.jsonl merge=vb-jsonl
sessions/*/*.jsonl merge=vb-jsonl
# Tasks: merged by task id.
tasks.json merge=vb-tasks
# Items extracted from project files (vb extract): merged by item id; their archive by record.
items/*/items.json merge=vb-items
archive/items/*/*.jsonl merge=vb-jsonl
# Generated files: ours kept, regenerated after the merge.
MEMORY.md merge=vb-ours
sessions/sessions.json merge=vb-ours
"""
# git never asks for a password or a host key on a terminal nobody watches
_QUIET_NETWORK = {"GIT_TERMINAL_PROMPT": "0", "GIT_SSH_COMMAND": "ssh -o BatchMode=yes"}


def detail(exc: BaseException) -> str:
    text = getattr(exc, "stderr", "") or str(exc)
    text = " ".join(str(text).split())
    return text.removeprefix("stderr: ").strip("' ") or type(exc).__name__


def open_repo(root: Path) -> Any:
    import git  # lazy: GitPython takes ~0.1 s to import

    try:
        return git.Repo(root, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise GitError(
            f"{root} is not a git repository", hint="run `git init` there, or `vb init` a new vault"
        ) from None


def top(repo: Any) -> Path:
    return Path(repo.working_tree_dir)


def network_env() -> dict[str, str]:
    return {k: v for k, v in _QUIET_NETWORK.items() if k not in os.environ}


# --------------------------------------------------------------------------- drivers


def driver_command(kind: str, python: str | None = None) -> str:
    """The shell command git runs to merge one file: this Python while it exists, else the
    `vb` on PATH (an environment moved or rebuilt since the command was written)."""
    exe = shlex.quote(python or sys.executable)
    args = f"{kind} %O %A %B %P"
    return (
        f"if [ -x {exe} ]; then {exe} -m vault_brain.interfaces.git_merge {args}; "
        f"else vb merge-driver {args}; fi"
    )


def repair_drivers(repo: Any) -> str | None:
    """The drivers rewritten when the notes' driver names a Python that is gone (what was
    wrong, in one line), else None. Only where vb's drivers are installed (`vb init`, `vb
    sync`): a clone that never had them is left as it is."""
    reader = repo.config_reader("repository")
    written = reader.get_value('merge "vb-note"', "driver", default="")
    if not written:
        return None
    python = _python_of(written)
    if python is not None and os.access(python, os.X_OK):
        return None
    install_drivers(repo)
    gone = f"named {python}, which is gone" if python else "were not vb's"
    return f"merge drivers {gone}: now {sys.executable}"


def _python_of(command: str) -> str | None:
    """The Python a driver command (this module's, or an older plain one) runs."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if "-m" in words:
        at = words.index("-m")
        return words[at - 1] if at > 0 else None
    return None


def install_drivers(repo: Any) -> bool:
    """Write the merge drivers into the clone's .git/config (git does not carry driver
    config with a clone); True when something changed."""
    wanted = []
    for name, kind in DRIVERS.items():
        section = f'merge "{name}"'
        wanted.append((section, "name", f"vault_brain {kind or 'generated file'} merge"))
        wanted.append((section, "driver", driver_command(kind) if kind else "true"))
    reader = repo.config_reader("repository")
    missing = [w for w in wanted if reader.get_value(w[0], w[1], default="") != w[2]]
    if not missing:
        return False
    with repo.config_writer("repository") as writer:
        for section, option, value in missing:
            writer.set_value(section, option, value)
    return True


def ensure_attributes(vault_root: Path) -> bool:
    """The vault's .gitattributes declares vb's drivers (added below the user's own lines
    when missing); True when the file was written."""
    path = vault_root / ".gitattributes"
    try:
        current = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        current = ""
    if ATTRIBUTES_HEADER in current:
        missing = [
            line
            for line in ATTRIBUTES.splitlines()
            if line and not line.startswith("#") and line not in current.splitlines()
        ]
        if not missing:
            return False
        atomic_write(path, current.rstrip("\n") + "\n" + "\n".join(missing) + "\n")
        return True
    lines = [
        line
        for line in current.splitlines()
        if not line.startswith(("logs/*.jsonl merge=union", "sessions/*.jsonl merge=union"))
        and not line.startswith("# Append-only logs and transcripts: lines added on two")
    ]
    kept = "\n".join(lines).strip("\n")
    atomic_write(path, (kept + "\n\n" if kept else "") + ATTRIBUTES)
    return True


def last_writer(top: Path, other: str, path: str) -> str | None:
    """The machine (`domain.sync.merge.machine_of`) of the newest commit `other` has and HEAD
    has not that changed `path` (relative to `top`, the repository's); None when git finds
    none. A plain git process: git's per-file merge driver calls it too."""
    proc = subprocess.run(
        ["git", "log", "-1", "--format=%an%x00%B", f"HEAD..{other}", "--", path],
        capture_output=True,
        cwd=top,
        check=False,
    )
    author, sep, message = proc.stdout.decode("utf-8", "replace").partition("\0")
    if proc.returncode != 0 or not sep:
        return None
    return machine_of(message, author)


def merge_kinds(repo: Any, paths: list[str]) -> dict[str, str | None]:
    """The vb merge kind of each path from its `merge` attribute ('' for none of vb's)."""
    if not paths:
        return {}
    proc = subprocess.run(
        ["git", "check-attr", "-z", "--stdin", "merge"],
        input=b"\0".join(p.encode() for p in paths) + b"\0",
        capture_output=True,
        cwd=top(repo),
        check=False,
    )
    if proc.returncode != 0:
        raise GitError(f"git check-attr failed: {proc.stderr.decode().strip()}")
    parts = proc.stdout.decode().split("\0")
    out: dict[str, str | None] = {}
    for i in range(0, len(parts) - 2, 3):
        value = parts[i + 2]
        out[parts[i]] = DRIVERS.get(value, "")
    return out


# --------------------------------------------------------------------------- state


def merge_in_progress(repo: Any) -> bool:
    return (Path(repo.git_dir) / "MERGE_HEAD").exists()


def branch(repo: Any) -> str:
    try:
        return str(repo.active_branch.name)
    except TypeError:
        raise GitError(
            "the vault's repository has no branch checked out (detached HEAD)",
            hint="check out a branch (git switch main), then sync",
        ) from None


def remote_ref(repo: Any, remote: str, name: str) -> str | None:
    ref = f"refs/remotes/{remote}/{name}"
    try:
        repo.git.rev_parse("--verify", "--quiet", ref)
        return ref
    except Exception:
        return None


def ahead_behind(repo: Any, ref: str) -> tuple[int, int]:
    out = repo.git.rev_list("--left-right", "--count", f"HEAD...{ref}")
    ahead, behind = out.split()
    return int(ahead), int(behind)


def commit_count(repo: Any) -> int:
    """Commits on HEAD (what a first push to an empty remote sends)."""
    return int(repo.git.rev_list("--count", "HEAD"))


@dataclass
class Incoming:
    commits: int
    """Commits `ref` has that HEAD has not."""
    paths: list[str]
    """The files they changed (relative to the repository's top)."""


def incoming(repo: Any, ref: str) -> Incoming:
    """What merging `ref` brings: its commits HEAD lacks and the files they changed."""
    commits = int(repo.git.rev_list("--count", f"HEAD..{ref}"))
    out = repo.git(c="core.quotePath=false").diff("--name-only", "-z", f"HEAD...{ref}")
    return Incoming(commits, [p for p in out.split("\0") if p])


def check_remote(repo: Any, remote: str) -> None:
    if remote not in [r.name for r in repo.remotes]:
        raise GitError(
            f"the vault's repository has no remote named {remote!r}",
            hint=f"add it: git -C {top(repo)} remote add {remote} URL (or pass --remote NAME)",
        )


# --------------------------------------------------------------------------- steps


def staged_changes(repo: Any, rel: str) -> list[tuple[str, str, str | None]]:
    """(status, path, renamed_to) of what is staged under `rel`, paths relative to it."""
    out = repo.git.diff("--cached", "--name-status", "-M", "-z", "--", rel)
    return parse_name_status(out, rel)


def parse_name_status(out: str, rel: str = ".") -> list[tuple[str, str, str | None]]:
    parts = out.split("\0")
    entries: list[tuple[str, str, str | None]] = []
    i = 0
    prefix = "" if rel in (".", "") else rel.rstrip("/") + "/"
    while i < len(parts) and parts[i]:
        status = parts[i]
        if status[0] in "RC":
            entries.append((status, parts[i + 1][len(prefix) :], parts[i + 2][len(prefix) :]))
            i += 3
        else:
            entries.append((status, parts[i + 1][len(prefix) :], None))
            i += 2
    return entries


def stage_all(repo: Any, rel: str) -> None:
    """Stage the vault's changes: never a write in progress, and never the vault's
    machine-local `.vb/` (even when a synced .gitignore no longer ignores it). In a sparse
    clone (`vb clone`), new files outside the checkout are staged too, and records
    appended to a transcript it left out are merged into the whole file first
    (`sparse.keep_unchecked_writes`)."""
    sparse_clone = sparse.is_sparse(top(repo), Path(repo.git_dir))
    if sparse_clone:  # (--sparse: a new file outside the checkout, an archived note, is staged)
        sparse.keep_unchecked_writes(top(repo), lambda p, c, w: _appended(repo, p, c, w))
    flags = ["--all", "--sparse"] if sparse_clone else ["--all"]
    repo.git.add(*flags, "--", rel, f":(exclude)*{TEMP_SUFFIX}")
    vb = ".vb" if rel in (".", "") else f"{rel.rstrip('/')}/.vb"
    repo.git.rm("-r", "--cached", "--quiet", "--ignore-unmatch", "--", vb)


def _appended(repo: Any, path: str, committed: bytes, written: bytes) -> bytes | None:
    """The committed records and those written since, for an append-only file (else None:
    the write stays out of the commits)."""
    from vault_brain.storage.notes.merge import merge_bytes  # lazy: a sparse clone's only

    if merge_kinds(repo, [path]).get(path) != "jsonl":
        return None
    return merge_bytes("jsonl", b"", committed, written, path).data


def fetch(repo: Any, remote: str) -> None:
    repo.git.fetch(remote, env=network_env())


@dataclass
class Push:
    ok: bool
    rejected: bool = False
    reason: str = ""


# What a remote says when another push updated the branch while this one was received (the
# old value it was sent against is gone, or the ref was locked): a race lost, tried again.
# Any other refusal (a hook declined, a protected branch) would be refused again.
RACE_LOST = re.compile(r"failed to update ref|cannot lock ref|incorrect old value|stale info")


def push(repo: Any, remote: str, name: str) -> Push:
    """Push the branch; a rejection because the remote moved (`rejected`: fetch, merge and
    push again), another refusal and an unreachable remote are told apart by PushInfo
    flags (and, for a remote's refusal, by what it says: `RACE_LOST`)."""
    import git  # lazy

    # GitPython logs a rejected push's stderr as a warning ("Error lines received while
    # pushing") on a logger nobody configured, so Python prints it: vb reports the outcome
    logging.getLogger("git.remote").setLevel(logging.ERROR)
    try:
        infos = repo.remote(remote).push(
            refspec=f"HEAD:refs/heads/{name}", env=network_env(), set_upstream=True
        )
    except git.GitCommandError as exc:
        return Push(False, reason=detail(exc))
    bad = git.PushInfo.ERROR | git.PushInfo.REJECTED | git.PushInfo.REMOTE_REJECTED
    bad |= git.PushInfo.REMOTE_FAILURE
    if not infos:
        return Push(False, reason="git push reported nothing")
    for info in infos:
        summary = info.summary.strip()
        raced = info.flags & git.PushInfo.REJECTED or (
            info.flags & git.PushInfo.REMOTE_REJECTED and RACE_LOST.search(summary)
        )
        if raced:
            return Push(False, rejected=True, reason=summary or "rejected")
        if info.flags & bad:
            return Push(False, reason=info.summary.strip() or "push failed")
    return Push(True)


@dataclass
class BothChanged:
    """A file both sides changed since the merge base, where the merge put it."""

    path: str
    base: str | None
    ours: str | None
    theirs: str | None


@dataclass
class MergeStart:
    base: str
    both: list[BothChanged] = field(default_factory=list)
    bases: list[str] = field(default_factory=list)
    """Every merge base: more than one after a criss-cross (two machines that merged each
    other's commits); then `both` holds every file that differs between the two sides, and
    each file's ancestor is `base_blob` of them."""
    unmerged: dict[str, dict[int, str]] = field(default_factory=dict)
    """path -> {stage: blob sha} for what git left conflicted (1 base, 2 ours, 3 theirs)."""


def _changes(repo: Any, base: str, head: str) -> dict[str, str]:
    """old path -> new path of every file changed between base and head (renames followed;
    an added file maps to itself)."""
    out = repo.git.diff("--name-status", "-M", "-z", base, head)
    changes: dict[str, str] = {}
    for _status, path, new in parse_name_status(out):
        changes[path] = new or path
    return changes


def tree(repo: Any, commit: str) -> dict[str, Entry]:
    """Every file of `commit`'s tree (path -> mode and blob)."""
    out = repo.git.ls_tree("-r", "-z", "--full-tree", commit)
    entries: dict[str, Entry] = {}
    for item in out.split("\0"):
        if item:
            meta, _, path = item.partition("\t")
            mode, kind, sha = meta.split()
            if kind in ("blob", "commit"):  # a file, a symlink, or a submodule's commit
                entries[path] = Entry(mode, sha)
    return entries


def _tree(repo: Any, commit: str) -> dict[str, str]:
    return {path: entry.sha for path, entry in tree(repo, commit).items()}


def start_merge(repo: Any, ref: str) -> None:
    """`git merge --no-commit` of `ref` with vb's drivers set to keep ours (vb then merges
    those files itself, in-process, from the blobs: one process instead of one per file)."""
    import git  # lazy

    config = [f"merge.{name}.driver=true" for name in DRIVERS]
    try:
        repo.git(c=config).merge(
            "--no-commit", "--no-ff", "--no-edit", ref, env={"GIT_MERGE_AUTOEDIT": "no"}
        )
    except git.GitCommandError as exc:
        if not merge_in_progress(repo):
            raise GitError(
                f"git merge failed: {detail(exc)}", hint="commit or stash the change it names"
            ) from None


def merge_state(repo: Any, other: str = "MERGE_HEAD", base: str | None = None) -> MergeStart:
    """What the merge of `other` in progress left for vb: the files both sides changed since
    `base` (default: their merge base; a cherry-pick: the picked commit's parent)."""
    bases = [base] if base else repo.git.merge_base("--all", "HEAD", other).split()
    base = bases[0]
    unmerged: dict[str, dict[int, str]] = {}
    for line in repo.git.ls_files("-u", "-z").split("\0"):
        if line:
            meta, _, path = line.partition("\t")
            _mode, sha, stage = meta.split()
            unmerged.setdefault(path, {})[int(stage)] = sha
    state = MergeStart(base, unmerged=unmerged, bases=bases)
    if len(bases) > 1:  # a criss-cross: every file the sides hold differently, and every
        # note both hold alike that differs from an ancestor (their counters: see
        # `merge_light.one_sided`)
        head, there = _tree(repo, "HEAD"), _tree(repo, other)
        ancestors = [_tree(repo, b) for b in bases]
        for path in sorted(set(head) & set(there)):
            if path in unmerged:
                continue
            alike = head[path] == there[path]
            if not alike or (
                path.endswith(".md") and any(a.get(path) != head[path] for a in ancestors)
            ):
                state.both.append(BothChanged(path, None, head[path], there[path]))
        return state
    ours, theirs = _changes(repo, base, "HEAD"), _changes(repo, base, other)
    trees = {c: _tree(repo, c) for c in (base, "HEAD", other)}
    for old in sorted(set(ours) & set(theirs)):
        mine, their_path = ours[old], theirs[old]
        path = mine if mine != old else their_path
        ours_blob, theirs_blob = trees["HEAD"].get(mine), trees[other].get(their_path)
        if path in unmerged or ours_blob is None or theirs_blob is None:
            continue  # git's conflict (resolved from its stages), or deleted on both sides
        state.both.append(BothChanged(path, trees[base].get(old), ours_blob, theirs_blob))
    return state


class Ancestors:
    """The ancestor of a file for a merge with several merge bases, built the way git's
    recursive strategy builds its virtual ancestor: the bases merged (with vb's merge of that
    kind of file) against their own merge bases, recursively. One per merge: trees and merge
    bases are cached."""

    def __init__(self, repo: Any, bases: list[str]) -> None:
        self.repo, self.bases = repo, bases
        self._trees: dict[str, dict[str, str]] = {}
        self._bases: dict[tuple[str, str], list[str]] = {}

    def blob(self, path: str, merge: Any, commits: list[str] | None = None) -> bytes:
        """`merge(base, ours, theirs) -> bytes` merges two versions of `path`."""
        commits = commits or self.bases
        data = self._at(commits[0], path)
        for other in commits[1:]:
            key = (commits[0], other)
            if key not in self._bases:
                self._bases[key] = self.repo.git.merge_base("--all", *key).split()
            inner = self._bases[key]
            ancestor = self.blob(path, merge, inner) if inner else b""
            data = merge(ancestor, data, self._at(other, path))
        return data

    def _at(self, commit: str, path: str) -> bytes:
        if commit not in self._trees:
            self._trees[commit] = _tree(self.repo, commit)
        return blob(self.repo, self._trees[commit].get(path))


def blob(repo: Any, sha: str | None) -> bytes:
    if sha is None:
        return b""
    data: bytes = repo.odb.stream(bytes.fromhex(sha)).read()
    return data


def add_paths(repo: Any, paths: list[str]) -> None:
    """Stage what a merge wrote. In a sparse clone, a file it wrote where a path was left out
    of the checkout (a note archived here that the remote changed) is checked out first, so
    that git stages it (`sparse.check_out_written`)."""
    flags = ["--all"]
    if sparse.is_sparse(top(repo), Path(repo.git_dir)):
        sparse.check_out_written(top(repo), paths)
        flags.append("--sparse")
    for i in range(0, len(paths), 500):
        repo.git.add(*flags, "--", *paths[i : i + 500])


def commit(
    repo: Any,
    message: str,
    identity: dict[str, str],
    machine: str,
    copies: Sequence[tuple[str, str]] = (),
) -> str:
    """Commit what is staged, with vb's trailers (`domain.sync.merge.with_trailers`)."""
    repo.git.commit("--no-verify", "-m", with_trailers(message, machine, copies), env=identity)
    return str(repo.head.commit.hexsha)
