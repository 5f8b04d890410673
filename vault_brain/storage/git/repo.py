"""The vault as a git repository (GitPython): create it, commit its changes.

A git problem is reported, never raised past the caller that asked for a commit: memory
that is written is kept whether or not it could be committed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from vault_brain.domain.errors import LockedError, VaultBrainError
from vault_brain.domain.sync.merge import with_trailers
from vault_brain.storage.files import vault_lock
from vault_brain.storage.git.lock import clear_stale_index_lock
from vault_brain.storage.git.sync import stage_all
from vault_brain.storage.paths import VaultPaths, machine_name

VB_NAME, VB_EMAIL = "vault_brain", "vault-brain@localhost"


def init_repo(target: Path, commit: bool, adopt: bool) -> str:
    """A new vault is its own repository; an adopted vault keeps the repository it is in."""
    import git  # GitPython takes ~0.1 s to import: only commands that use git pay for it

    try:
        git.Repo(target, search_parent_directories=adopt)
        return "existing"
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        pass
    try:
        repo = git.Repo.init(target)
        if commit:
            repo.git.add(A=True)
            message = with_trailers("vb init: new vault from template", machine_name())
            repo.git.commit("--no-verify", "-m", message, env=commit_identity(repo))
            return "initialised"
    except git.GitCommandError as exc:
        raise VaultBrainError(
            f"git failed while creating the vault: {exc.stderr.strip()}",
            hint="check that git is installed and the folder is writable",
        ) from None
    return "initialised (no commit)"


def commit_vault(paths: VaultPaths, message: str) -> str:
    """Commit the vault's changes (only its own paths, even inside a larger repository).
    Never raises: returns 'committed <sha>', 'nothing to commit', 'not a git repository', or
    'git ...' describing what went wrong."""
    import git  # GitPython takes ~0.1 s to import: only commands that use git pay for it

    root = paths.root
    try:
        repo = git.Repo(root, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return "not a git repository"
    try:
        top = Path(repo.working_tree_dir or root)
        rel = os.path.relpath(root, top)
        notices: list[str] = []
        clear_stale_index_lock(Path(repo.git_dir), top, notices.append)
        if (Path(repo.git_dir) / "MERGE_HEAD").exists():  # a person's merge, half done
            unmerged = sorted(set(repo.git.diff("--name-only", "--diff-filter=U").split()))
            return (
                "git commit skipped: the repository is in the middle of a merge"
                f"{' (unmerged: ' + ', '.join(unmerged[:5]) + ')' if unmerged else ''}; "
                "finish it (git add, git commit) or abort it (git merge --abort): the changes "
                "stay in the files, and vb commits them next time"
            )
        with vault_lock(paths):
            stage_all(repo, rel)  # never .vb/, nor a write in progress
            if not repo.git.diff("--cached", "--name-only", "--", rel).strip():
                return "nothing to commit"
            message = with_trailers(message, machine_name())
            # A vault inside a larger repository commits only its own paths; a vault that is
            # the repository commits the index just staged (the same changes: a path limit
            # makes git rebuild a temporary index, ~40 ms at 10k notes)
            only = () if rel == "." else ("--", rel)
            repo.git.commit("-m", message, *only, env=commit_identity(repo))
        return "; ".join([*notices, f"committed {repo.head.commit.hexsha[:12]}"])
    except (LockedError, VaultBrainError) as exc:
        return f"git commit skipped: {exc.message}"
    except (git.GitCommandError, git.GitError, OSError, ValueError) as exc:
        detail = getattr(exc, "stderr", "") or str(exc)
        return f"git commit failed: {' '.join(str(detail).split())}"


def commit_identity(repo: Any) -> dict[str, str]:
    """vb's identity for the commit only when git has none configured: the person's own
    `user.name` and `user.email`, as git itself reads them (the repository's config, the
    global one wherever GIT_CONFIG_GLOBAL or XDG puts it, includes), sign vb's commits."""
    if _configured(repo, "user.email") and _configured(repo, "user.name"):
        return {}
    return {
        "GIT_AUTHOR_NAME": VB_NAME,
        "GIT_AUTHOR_EMAIL": VB_EMAIL,
        "GIT_COMMITTER_NAME": VB_NAME,
        "GIT_COMMITTER_EMAIL": VB_EMAIL,
    }


def _configured(repo: Any, key: str) -> bool:
    import git  # (loaded already by whoever has a repository)

    try:
        return bool(repo.git.config("--get", key).strip())
    except git.GitCommandError:  # (exit 1: not set)
        return False
