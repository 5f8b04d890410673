"""When vb commits the vault: `commit_on` in STRATEGY.md (session, lifecycle, operation), on a
real vault with git."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from conftest import git


def subjects(vault: Path) -> list[str]:
    return git("log", "--format=%s", cwd=vault).splitlines()


def set_policy(vault: Path, line: str) -> None:
    strategy = vault / "STRATEGY.md"
    text = strategy.read_text()
    strategy.write_text(text.replace("# commit_on: [session, lifecycle]", line))
    git("add", "-A", cwd=vault)
    git("commit", "-qm", "policy", cwd=vault)


def low_credit_note(vault: Path) -> None:
    (vault / "entities/projects/low.md").write_text(
        "---\ntitle: Low\ncreated: 2025-01-01\ncredit: 0.05\n---\nA fading memory.\n"
    )


def test_by_default_lifecycle_passes_commit_and_single_writes_do_not(
    vault: Path, cli: Any, git_env: dict[str, str]
) -> None:
    v = ("--vault", str(vault))
    before = subjects(vault)
    assert cli(*v, "add", "Ships on Fridays.", "-n", "Release", "-c", "projects").exit_code == 0
    assert subjects(vault) == before
    low_credit_note(vault)
    assert cli(*v, "prune").exit_code == 0
    assert subjects(vault)[0] == "vb prune: 1 change"
    assert git("status", "--porcelain", cwd=vault) == ""  # the note added before went in too
    assert cli(*v, "prune").exit_code == 0  # nothing to do: no commit
    assert subjects(vault)[0] == "vb prune: 1 change" and len(subjects(vault)) == len(before) + 1


def test_per_operation_commits_each_write_and_lifecycle_passes_then_do_not(
    vault: Path, cli: Any, git_env: dict[str, str]
) -> None:
    v = ("--vault", str(vault))
    set_policy(vault, "commit_on: [operation]")
    assert cli(*v, "add", "Ships on Fridays.", "-n", "Release", "-c", "projects").exit_code == 0
    assert subjects(vault)[0] == "vb add Release (cli)"
    assert (
        cli(*v, "update", "entity-projects-release", "--content", "Ships on Mondays.").exit_code
        == 0
    )
    assert subjects(vault)[0] == "vb update entity-projects-release (cli)"
    low_credit_note(vault)
    assert cli(*v, "prune").exit_code == 0
    assert not subjects(vault)[0].startswith("vb prune")
    assert git("status", "--porcelain", cwd=vault) != ""  # left for the next commit


def test_an_unknown_moment_is_refused_with_the_choices(vault: Path, cli: Any) -> None:
    strategy = vault / "STRATEGY.md"
    strategy.write_text(
        strategy.read_text().replace("# commit_on: [session, lifecycle]", "commit_on: [hourly]")
    )
    res = cli("--vault", str(vault), "strategy")
    assert res.exit_code != 0 and "session, lifecycle, operation" in res.stderr


def test_a_merge_half_done_is_never_committed_by_vb(
    vault: Path, cli: Any, git_env: dict[str, str]
) -> None:
    """A person's merge stopped on a conflict: vb stages nothing (the file with the conflict
    markers stays unmerged) and says what to do; its own changes wait in the files."""
    from vault_brain.storage.git.repo import commit_vault
    from vault_brain.storage.paths import VaultPaths

    (vault / "plain.txt").write_text("hello\n")
    git("add", "plain.txt", cwd=vault)
    git("commit", "-qm", "plain", cwd=vault)
    git("checkout", "-qb", "other", cwd=vault)
    (vault / "plain.txt").write_text("one\n")
    git("commit", "-qam", "one", cwd=vault)
    git("checkout", "-q", "-", cwd=vault)
    (vault / "plain.txt").write_text("two\n")
    git("commit", "-qam", "two", cwd=vault)
    merged = subprocess.run(["git", "merge", "other"], cwd=vault, capture_output=True)
    assert merged.returncode != 0  # the conflict
    v = ("--vault", str(vault))
    assert cli(*v, "add", "Ships on Fridays.", "-n", "Release", "-c", "projects").exit_code == 0
    done = commit_vault(VaultPaths(vault), "vb: test")
    assert done.startswith("git commit skipped: the repository is in the middle of a merge")
    assert "(unmerged: plain.txt)" in done and "git merge --abort" in done
    assert git("diff", "--name-only", "--diff-filter=U", cwd=vault).split() == ["plain.txt"]
    assert subjects(vault)[0] == "two"
