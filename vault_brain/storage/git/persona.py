"""The git side of `vb persona` (GitPython): the vault's branches, creating and switching
them, and starting a cherry-pick that vb then resolves (`app.sync.remote.Merger`).

A repository object lives for one command; GitPython is imported inside the functions.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vault_brain.domain.errors import NotFoundError, UsageError
from vault_brain.storage.git.sync import DRIVERS, GitError, detail, top

LIST_HINT = "`vb persona list` shows them; `vb persona create NAME` makes one"


@dataclass
class Branch:
    name: str
    commit: str
    when: str
    subject: str


def branches(repo: Any) -> list[Branch]:
    """The local branches, by name."""
    out = repo.git.for_each_ref(
        "refs/heads",
        "--sort=refname",
        "--format=%(refname:short)%00%(objectname)%00%(committerdate:iso-strict)%00%(subject)",
    )
    found = []
    for line in out.splitlines():
        name, sha, when, subject = (line.split("\0") + [""] * 4)[:4]
        found.append(Branch(name, sha, when, subject))
    return found


def current(repo: Any) -> str | None:
    """The branch checked out (None: detached HEAD or no commit yet)."""
    try:
        return str(repo.active_branch.name)
    except TypeError:
        return None


def check_name(repo: Any, name: str) -> None:
    proc = subprocess.run(
        ["git", "check-ref-format", "--branch", name],
        capture_output=True,
        cwd=top(repo),
        check=False,
    )
    if proc.returncode != 0 or name.startswith("-"):
        raise UsageError(
            f"{name!r} is not a valid persona name",
            hint="use letters, digits, '-', '_' or '/' (a git branch name), e.g. work-assistant",
        )


def require(repo: Any, name: str) -> Branch:
    for b in branches(repo):
        if b.name == name:
            return b
    raise NotFoundError(f"no persona named {name!r}", hint=LIST_HINT)


def create(repo: Any, name: str, start: str | None) -> None:
    import git  # lazy

    check_name(repo, name)
    if any(b.name == name for b in branches(repo)):
        raise UsageError(
            f"persona {name!r} exists already", hint=f"switch to it: vb persona switch {name}"
        )
    try:
        repo.git.branch(name, *([start] if start else []))
    except git.GitCommandError as exc:
        raise NotFoundError(
            f"cannot create persona {name!r} from {start or 'HEAD'!r}: {detail(exc)}",
            hint=LIST_HINT if start else "commit the vault first: `vb sync` or git commit",
        ) from None


def switch(repo: Any, name: str) -> None:
    import git  # lazy

    try:
        repo.git.checkout(name)
    except git.GitCommandError as exc:
        raise GitError(
            f"git could not switch to {name!r}: {detail(exc)}",
            hint="move or commit the files it names (outside the vault), then switch again",
        ) from None


def resolve_commit(repo: Any, ref: str) -> tuple[str, list[str], str]:
    """(sha, parents, subject) of a commit given by any name git knows."""
    import git  # lazy

    try:
        out = repo.git.log("-1", "--format=%H%x00%P%x00%s", f"{ref}^{{commit}}", "--")
    except git.GitCommandError:
        raise NotFoundError(
            f"no commit {ref!r} in the vault's repository",
            hint="`vb log --oneline` lists the commits (of every persona: git log --all)",
        ) from None
    sha, parents, subject = (out.strip().split("\0") + [""] * 3)[:3]
    return sha, parents.split(), subject


def start_cherry_pick(repo: Any, sha: str) -> None:
    """`git cherry-pick --no-commit` with vb's drivers set to keep ours (vb merges those
    files itself from the blobs); raises when git stopped for any other reason."""
    _with_drivers_keeping_ours(repo, "cherry-pick", "--no-commit", sha)


def start_revert(repo: Any, sha: str) -> None:
    """`git revert --no-commit -m 1` of a merge commit, with vb's drivers set to keep ours
    (vb merges those files itself, as for a cherry-pick)."""
    _with_drivers_keeping_ours(repo, "revert", "--no-commit", "-m", "1", sha)


def _with_drivers_keeping_ours(repo: Any, command: str, *args: str) -> None:
    import git  # lazy

    config = [f"merge.{name}.driver=true" for name in DRIVERS]
    try:
        getattr(repo.git(c=config), command.replace("-", "_"))(*args)
    except git.GitCommandError as exc:
        if not repo.git.ls_files("-u"):
            raise GitError(
                f"git {command} failed: {detail(exc)}",
                hint="move or commit the files it names (outside the vault), then retry",
            ) from None


def last_merge_of(repo: Any, name: str) -> tuple[str, list[str]] | None:
    """(sha, parents) of the newest commit on the current persona's own line that merged
    persona `name` (made by `vb persona merge`), or None."""
    out = repo.git.log("--first-parent", "--merges", "--format=%H%x00%P%x00%s", "HEAD")
    for line in out.splitlines():
        sha, parents, subject = (line.split("\0") + [""] * 3)[:3]
        if subject.startswith("vb persona (") and f"): merge {name};" in subject:
            return sha, parents.split()
    return None


def nothing_staged(repo: Any) -> bool:
    import git  # lazy

    try:
        repo.git.diff("--cached", "--quiet")
        return True
    except git.GitCommandError:
        return False


def undo(repo: Any) -> None:
    """Back to HEAD after a merge or cherry-pick vb could not finish (no half state)."""
    repo.git.reset("--merge")
    if (Path(repo.git_dir) / "CHERRY_PICK_HEAD").exists():
        repo.git.cherry_pick("--quit")
    if (Path(repo.git_dir) / "REVERT_HEAD").exists():
        repo.git.revert("--quit")


def files_at(repo: Any, ref: str, prefix: str) -> dict[str, bytes]:
    """Every file under `prefix` (the vault's folder in the repository, '' or 'x/') as the
    persona or commit `ref` has it: vault-relative path -> bytes."""
    from vault_brain.storage.git.sync import _tree, blob

    sha, _parents, _subject = resolve_commit(repo, ref)
    return {
        path[len(prefix) :]: blob(repo, obj)
        for path, obj in _tree(repo, sha).items()
        if path.startswith(prefix)
    }


def recent_commits(repo: Any, limit: int) -> list[tuple[str, list[str], str]]:
    """(sha, parents, subject) of the last `limit` commits of every persona, newest first."""
    out = repo.git.log("--branches", "--topo-order", f"-n{limit}", "--format=%H%x00%P%x00%s")
    found = []
    for line in out.splitlines():
        sha, parents, subject = (line.split("\0") + [""] * 3)[:3]
        found.append((sha, parents.split(), subject))
    return found
