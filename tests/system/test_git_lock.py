"""A stale `.git/index.lock` is removed unless a git process may hold it; the git readers a
vb process keeps open itself (GitPython's `git cat-file --batch`) never hold it and never
keep it from being removed. Real git processes, read through /proc."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from vault_brain.domain.errors import VaultBrainError
from vault_brain.storage.git.lock import clear_stale_index_lock

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    return tmp_path


def _stale_lock(repo: Path) -> Path:
    lock = repo / ".git" / "index.lock"
    lock.write_bytes(b"")
    old = time.time() - 120
    os.utime(lock, (old, old))
    return lock


def _reader(command: list[str], repo: Path) -> Iterator[subprocess.Popen[bytes]]:
    reader = subprocess.Popen(command, cwd=repo, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        time.sleep(0.2)  # (the process is named git once it has started)
        yield reader
    finally:
        reader.kill()
        reader.wait()


def test_this_processs_own_git_reader_does_not_keep_a_stale_lock(repo: Path) -> None:
    lock = _stale_lock(repo)
    for _ in _reader(["git", "cat-file", "--batch"], repo):
        said: list[str] = []
        assert clear_stale_index_lock(repo / ".git", repo, said.append)
        assert not lock.exists() and said[0].startswith("removed a stale ")


def test_another_processs_git_keeps_the_lock_and_says_so(repo: Path) -> None:
    lock = _stale_lock(repo)
    # git started by another process (a shell that waits for it), as a person's git would be
    other = ["sh", "-c", "git cat-file --batch; true"]
    for _ in _reader(other, repo):
        with pytest.raises(VaultBrainError, match="a git process is running there"):
            clear_stale_index_lock(repo / ".git", repo, print)
        assert lock.exists()
