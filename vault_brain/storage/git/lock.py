"""git's `.git/index.lock` left behind by a kill inside `git add` or `git commit`.

git creates the lock, writes the new index beside it and renames it into place; a process
killed in between leaves the lock, and every later git command that writes the index fails.
Rule: the lock is stale -- removed, with a one-line notice -- when it is older than
`STALE_AFTER` seconds (a git command of vb's holds it for well under a second, a person's
`git add` of a whole vault for a few) and no live git process works in this repository
(checked through /proc where the system has one: a process named git whose working folder
is inside the repository, not one this process started itself, such as GitPython's
long-lived `git cat-file --batch` readers, which never take the lock). Otherwise a git may
still hold it: a true one-line error with a hint, and the lock is left alone.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

from vault_brain.domain.errors import VaultBrainError

STALE_AFTER = 30.0


def live_git_in(top: Path) -> bool:
    """A running git process whose working folder is inside `top` (False where there is no
    /proc to ask: then the lock's age decides alone)."""
    proc = Path("/proc")
    if not proc.is_dir():
        return False
    top_s = str(top.resolve())
    own = str(os.getpid())
    for entry in proc.iterdir():
        if not entry.name.isdigit() or entry.name == own:
            continue
        try:
            if (entry / "comm").read_text().strip() != "git":
                continue
            cwd = os.readlink(entry / "cwd")
            if _parent(entry) == own:
                continue  # this process's own readers (GitPython's `git cat-file --batch`)
        except OSError:
            continue
        if cwd == top_s or cwd.startswith(top_s + os.sep):
            return True
    return False


def _parent(entry: Path) -> str:
    for line in (entry / "status").read_text().splitlines():
        if line.startswith("PPid:"):
            return line.split(":", 1)[1].strip()
    return ""


def clear_stale_index_lock(git_dir: Path, top: Path, say: Callable[[str], None]) -> bool:
    """Remove a stale `index.lock` (True when one was removed); raise when a live git may
    hold it."""
    lock = git_dir / "index.lock"
    try:
        age = time.time() - lock.stat().st_mtime
    except FileNotFoundError:
        return False
    if age >= STALE_AFTER and not live_git_in(top):
        try:
            lock.unlink()
        except FileNotFoundError:
            return False
        say(f"removed a stale {lock} ({age:.0f} s old, no git running in {top})")
        return True
    why = "a git process is running there" if age >= STALE_AFTER else f"it is {age:.0f} s old"
    raise VaultBrainError(
        f"another git command holds {lock} ({why})",
        hint="wait for it to finish and retry; if no git is running, delete that file",
    )
