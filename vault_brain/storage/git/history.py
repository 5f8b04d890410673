"""The git side of `vb history` and `vb log` (GitPython): one note's commits, the log records
those commits added, and the vault's commits.

Each question is one git process however long the history is (`git log --follow --raw`
for a note, one `git show` for the records of all its commits); blobs, the messages of a
merge's parents and a note's version in a parent are read through GitPython's persistent
`cat-file` process. A repository object lives for one command.

A note's log walks the whole graph (`--follow` keeps every side of a merge) and prints a
merge once per parent the note differs from (`--diff-merges=separate`), in parent order, so
a merge that kept one side's text and replaced the other's is there on every machine that
holds it, whichever side its first parent is.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from vault_brain.storage.git.sync import GitError, detail

ZERO = "0" * 40
_HEADER = "%x01%H%x00%P%x00%aI%x00%an%x00%s%x00%B%x02"


@dataclass
class FileCommit:
    """One commit that changed one file, as `git log --follow --raw` reports it (a merge:
    once per parent the file differs from, in parent order)."""

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
    message: str = ""
    """The whole commit message (its trailers name the machine and any conflict copies)."""


@dataclass
class VaultCommit:
    sha: str
    parents: list[str]
    when: str
    author: str
    subject: str
    files: list[str] = field(default_factory=list)
    message: str = ""


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


@dataclass
class _Header:
    sha: str
    parents: list[str]
    when: str
    author: str
    subject: str
    message: str


def _chunks(out: str) -> Iterator[tuple[_Header, str]]:
    """Each commit of a `git log --format={_HEADER}` output: its header, then what git
    printed after it (raw lines or names)."""
    for chunk in out.split("\x01")[1:]:
        head, _, rest = chunk.partition("\x02")
        sha, parents, when, author, subject, message = (head.split("\0", 5) + [""] * 6)[:6]
        yield _Header(sha, parents.split(), when, author, subject, message), rest


def _blob(sha: str) -> str | None:
    return None if sha == ZERO else sha


def file_commits(repo: Any, path: str) -> list[FileCommit]:
    """Every commit that changed `path` (relative to the repository's top), newest first,
    following renames, on every side of every merge; a merge once per parent the file
    differs from, in parent order."""
    out = _git(repo).log(
        "--follow",
        "-M",
        "--raw",
        "--no-abbrev",
        "--diff-merges=separate",
        f"--format={_HEADER}",
        "--",
        path,
    )
    found: list[FileCommit] = []
    for h, rest in _chunks(out):
        for line in rest.splitlines():
            if not line.startswith(":"):
                continue
            meta, *names = line.split("\t")
            _m1, _m2, old, new, status = meta[1:].split()
            old_path = names[0] if len(names) == 2 else None
            found.append(
                FileCommit(
                    h.sha,
                    h.parents,
                    h.when,
                    h.author,
                    h.subject,
                    status[0],
                    names[-1],
                    old_path,
                    _blob(old),
                    _blob(new),
                    h.message,
                )
            )
    return found


def blob_at(repo: Any, commit: str, path: str) -> str | None:
    """The blob `path` (relative to the repository's top) has in `commit`; None when the
    commit has no such file (read through cat-file, no git process of its own)."""
    try:
        item = repo.commit(commit).tree / path
    except KeyError:
        return None
    return str(item.hexsha) if item.type == "blob" else None


def read_blob(repo: Any, sha: str) -> bytes:
    """A blob's bytes (through GitPython's persistent cat-file)."""
    data: bytes = repo.odb.stream(bytes.fromhex(sha)).read()
    return data


def message(repo: Any, commit: str) -> str:
    """A commit's whole message (through cat-file)."""
    text = repo.commit(commit).message
    return text if isinstance(text, str) else text.decode("utf-8", "replace")


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
    for h, rest in _chunks(out):
        files = [line for line in rest.splitlines() if line.strip()]
        commits.append(VaultCommit(h.sha, h.parents, h.when, h.author, h.subject, files, h.message))
    return commits


def has_commits(repo: Any) -> bool:
    try:
        repo.git.rev_parse("--verify", "--quiet", "HEAD")
        return True
    except Exception:
        return False
