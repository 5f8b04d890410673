"""vb's commits carry the person's git identity when one is configured (here through
GIT_CONFIG_GLOBAL, as git reads it), and vb's own only when none is."""

from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import run_vb


def git_env(tmp_path: Path, config: str) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    (home / "gitconfig").write_text(config, encoding="utf-8")
    return {
        "GIT_CONFIG_GLOBAL": str(home / "gitconfig"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home),
    }


def test_commits_carry_the_configured_identity(tmp_path: Path) -> None:
    env = git_env(tmp_path, "[user]\n\tname = Ada Lovelace\n\temail = ada@example.org\n")
    vault = tmp_path / "vault"
    assert run_vb("init", str(vault), env=env).exit_code == 0
    added = run_vb(
        "--vault", str(vault), "add", "The build uses helm charts.", "-c", "projects",
        "-n", "Build", env=env,
    )  # fmt: skip
    assert added.exit_code == 0, added.stderr
    synced = run_vb("--vault", str(vault), "sync", env=env)
    assert synced.exit_code == 0, synced.stderr
    lines = subprocess.run(
        ["git", "-C", str(vault), "log", "--format=%an <%ae>|%cn <%ce>"],
        capture_output=True, text=True, check=True,
    ).stdout.splitlines()  # fmt: skip
    assert len(lines) >= 2  # vb init's commit, then vb add's (commit_on: command) or vb sync's
    assert set(lines) == {"Ada Lovelace <ada@example.org>|Ada Lovelace <ada@example.org>"}


def test_without_an_identity_vb_signs(tmp_path: Path) -> None:
    env = git_env(tmp_path, "")
    vault = tmp_path / "vault"
    assert run_vb("init", str(vault), env=env).exit_code == 0
    lines = subprocess.run(
        ["git", "-C", str(vault), "log", "--format=%an <%ae>"],
        capture_output=True, text=True, check=True, env={"PATH": "/usr/bin:/bin", **env},
    ).stdout.splitlines()  # fmt: skip
    assert lines == ["vault_brain <vault-brain@localhost>"]
