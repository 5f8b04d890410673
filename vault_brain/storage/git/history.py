"""The git side of `vb history` and `vb log` (GitPython): one note's commits, the log records
those commits added, and the vault's commits.

Each question is one git process however long the history is (`git log --follow --raw`
for a note, one `git show` for the records of all its commits); blobs are read through
GitPython's persistent `cat-file` process. A repository object lives for one command.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from vault_brain.storage.git.sync import GitError, detail

ZERO = "0" * 40
_HEADER = "%x01%H%x00%P%x00%aI%x00%an%x00%s"


@dataclass
class FileCommit:
    """One commit that changed one file, as `git log --follow --raw` reports it."""

    sha: str
    parents: list[str]
    when: str
    author: str
    subject: str
    status: str
    """A added, M modified, R renamed (from `old_path`), D deleted, T type changed."""
    path: str
    old_path: str | None
    old_blob: str | None
    new_blob: str | None


@dataclass
class VaultCommit:
    sha: str
    parents: list[str]
    when: str
    author: str
    subject: str
    files: list[str] = field(default_factory=list)


@contextlib.contextmanager
def reading(repo: Any, what: str) -> Iterator[None]:
    """Close `repo` after the block; a git failure inside it becomes one line."""
    import git  # lazy: GitPython takes ~0.1 s to import

    try:
        yield
    except git.GitCommandError as exc:
        raise GitError(
            f"git could not {what}: {detail(exc)}",
            hint="`vb --debug ...` shows the git command",
        ) from None
    finally:
        repo.close()


def _git(repo: Any) -> Any:
    """git with paths printed as they are (not octal-escaped)."""
    return repo.git(c="core.quotePath=false")


def _header(text: str) -> tuple[str, list[str], str, str, str]:
    sha, parents, when, author, subject = (text.split("\0") + [""] * 5)[:5]
    return sha, parents.split(), when, author, subject


def _blob(sha: str) -> str | None:
    return None if sha == ZERO else sha


def file_commits(repo: Any, path: str) -> list[FileCommit]:
    """Every commit that changed `path` (relative to the repository's top), newest first,
    following renames; a merge counts with what it brought in over its first parent."""
    out = _git(repo).log(
        "--follow",
        "-M",
        "--raw",
        "--no-abbrev",
        "--diff-merges=first-parent",
        f"--format={_HEADER}",
        "--",
        path,
    )
    found: list[FileCommit] = []
    for chunk in out.split("\x01")[1:]:
        head, _, rest = chunk.partition("\n")
        sha, parents, when, author, subject = _header(head)
        for line in rest.splitlines():
            if not line.startswith(":"):
                continue
            meta, *names = line.split("\t")
            _m1, _m2, old, new, status = meta[1:].split()
            old_path = names[0] if len(names) == 2 else None
            found.append(
                FileCommit(
                    sha,
                    parents,
                    when,
                    author,
                    subject,
                    status[0],
                    names[-1],
                    old_path,
                    _blob(old),
                    _blob(new),
                )
            )
    return found


def added_lines(
    repo: Any, shas: list[str], paths: list[str], needles: list[str]
) -> dict[str, list[str]]:
    """commit -> the lines it added to `paths` (append-only logs) that contain one of
    `needles`; merges are left out (their records were added by the commits merged)."""
    found: dict[str, list[str]] = {}
    if not shas or not paths:
        return found
    out = _git(repo).show("--diff-merges=off", "-U0", "--format=%x01%H", *shas, "--", *paths)
    for chunk in out.split("\x01")[1:]:
        sha, _, rest = chunk.partition("\n")
        lines = [
            line[1:]
            for line in rest.splitlines()
            if line.startswith("+")
            and not line.startswith("+++")
            and any(n in line for n in needles)
        ]
        if lines:
            found[sha.strip()] = lines
    return found


def vault_commits(repo: Any, rel: str, limit: int | None) -> list[VaultCommit]:
    """The commits that changed anything under `rel`, newest first, with the files each
    changed (a merge: what it brought in over its first parent)."""
    args = ["--name-only", "--diff-merges=first-parent", f"--format={_HEADER}"]
    if limit is not None:
        args.append(f"-n{limit}")
    out = _git(repo).log(*args, "--", rel)
    commits: list[VaultCommit] = []
    for chunk in out.split("\x01")[1:]:
        head, _, rest = chunk.partition("\n")
        sha, parents, when, author, subject = _header(head)
        files = [line for line in rest.splitlines() if line.strip()]
        commits.append(VaultCommit(sha, parents, when, author, subject, files))
    return commits


def has_commits(repo: Any) -> bool:
    try:
        repo.git.rev_parse("--verify", "--quiet", "HEAD")
        return True
    except Exception:
        return False
