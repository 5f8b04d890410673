"""Hostile remotes and files the first trust tests did not try (issue 22, findings 1, 2 and 7),
with real git (a bare repository as the remote, this machine's clone `b`, a clone `h` that
commits with plain git and pushes; fixtures of test_sync and test_trust_sync) and the real
sandbox view (`VaultView`, no Docker needed).

- a symlink that stays inside the vault but leads to where no note lives (`.git`, `.vb`,
  `sessions/`, `logs/`) is refused like one out of the vault: `note.md -> ../../.git/config`
  was merged, searched, rewritten with its access counters and pushed back, carrying this
  machine's git config (a remote URL's credentials) to the remote;
- a tracked `.GIT/...` or `.VB/...` is refused before git (or a case-insensitive file system)
  gets to it;
- front matter that spells `private` or `scope` through a YAML escape, hides it behind a
  line that only looks like the closing `---`, or puts it past the view's first 64 KB keeps
  the note out of the sandbox's view (keys stay case-sensitive, as everywhere in vb).
"""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest
from test_sync import clone, remote, sync
from test_trust_sync import config_home, hostile, push, refused_sync

from conftest import git
from vault_brain.storage.sandbox.view import VaultView, shown

__all__ = ["config_home", "remote"]  # the fixtures, shared with test_sync / test_trust_sync

CREDENTIAL = "hunter2-horse-battery"


def _remote_holds(b: Path, text: str) -> bool:
    """Whether any file of the remote's branch (as `b` last fetched it) holds `text`."""
    git("fetch", "-q", "origin", cwd=b)
    found = subprocess.run(
        ["git", "grep", "-l", "-F", text, "origin/main"], cwd=b, capture_output=True, text=True
    )
    return found.returncode == 0


# --------------------------------------------------------------------------- sync


@pytest.mark.parametrize(
    ("link", "target", "into"),
    [
        ("entities/projects/leak.md", "../../.git/config", ".git"),
        ("entities/projects/state.md", "../../.vb/sync.json", ".vb"),
        ("entities/projects/typed.md", "../../sessions/s1.jsonl", "sessions"),
        ("entities/people", "../.git", ".git"),  # a folder: vb's notes would be written there
        ("entities/projects/hop.md", "../top/.git/config", ".git"),  # through a link
    ],
)
def test_a_symlink_into_git_vb_or_transcripts_is_refused_before_the_merge(
    remote: Path, cli: Any, link: str, target: str, into: str
) -> None:
    b = clone(remote, "b", cli)
    h = hostile(remote)
    if "top" in target:  # a link to the vault's top (allowed), then one through it
        (h / "entities" / "top").symlink_to("..")
        git("add", "entities/top", cwd=h)
    if link == "entities/people":
        git("rm", "-rq", "--ignore-unmatch", "entities/people", cwd=h)
        (h / link).unlink(missing_ok=True)
    (h / link).symlink_to(target)
    git("add", link, cwd=h)
    push(h, "a link inside the vault")
    refused_sync(cli, b, f"adds a symlink {link} -> {target} that leads into {into}/")


def test_a_note_linked_to_git_config_is_never_read_nor_synced_back(remote: Path, cli: Any) -> None:
    """A link already in the vault (merged by an older vb, or made by hand) is no note:
    search does not read it, so no access counter rewrites it into a file, and the next sync
    pushes none of this machine's git config; `vb status` reports the link."""
    b = clone(remote, "b", cli)
    git("config", "credential.helper", f"store --file=/tmp/{CREDENTIAL}", cwd=b)
    h = hostile(remote)
    (h / "entities" / "projects" / "leak.md").symlink_to("../../.git/config")
    git("add", "entities/projects/leak.md", cwd=h)
    push(h, "a note")
    git("fetch", "-q", "origin", cwd=b)
    git("merge", "-q", "--no-edit", "origin/main", cwd=b)  # what vb did before it checked
    assert CREDENTIAL in (b / "entities/projects/leak.md").read_text()

    res = cli("--vault", str(b), "search", "credential helper store", "--session", "s1")
    assert res.exit_code == 0, res.stderr
    assert "leak" not in res.stdout and CREDENTIAL not in res.stdout
    assert (b / "entities/projects/leak.md").is_symlink()
    sync(cli, b)
    assert not _remote_holds(b, CREDENTIAL)
    status = cli("--vault", str(b), "status", "--json").json()
    assert any("leak.md -> ../../.git/config" in line for line in status["trust"])


@pytest.mark.parametrize("folder", [".GIT/hooks/post-merge", ".VB/policy-approved.json"])
def test_a_tracked_git_or_vb_folder_in_another_case_is_refused(
    remote: Path, cli: Any, folder: str
) -> None:
    """Made with git's plumbing (git add refuses `.GIT`); on a case-insensitive file system
    `.VB/` is this machine's `.vb/`."""
    b = clone(remote, "b", cli)
    h = hostile(remote)

    def run(*args: str, stdin: str = "") -> str:
        return subprocess.run(
            ["git", *args], cwd=h, input=stdin, capture_output=True, text=True, check=True
        ).stdout.strip()

    top, inner, name = folder.split("/") if folder.count("/") == 2 else (*folder.split("/"), "")
    sha = run("hash-object", "-w", "--stdin", stdin="#!/bin/sh\necho hostile\n")
    tree = run("mktree", stdin=f"100755 blob {sha}\t{name or inner}\n")
    if name:
        tree = run("mktree", stdin=f"040000 tree {tree}\t{inner}\n")
    entries = run("ls-tree", "HEAD") + f"\n040000 tree {tree}\t{top}\n"
    commit = run("commit-tree", run("mktree", stdin=entries), "-p", "HEAD", "-m", "hostile")
    run("push", "-q", "origin", f"{commit}:refs/heads/main")
    refused_sync(cli, b, f"tracks {folder}")


# --------------------------------------------------------------------------- sandbox view


HIDDEN = {
    "an escaped key": '"priv\\x61te": true\n',
    "a unicode escape": '"\\u0070rivate": true\n',
    "an escaped line break": '? "pri\\\n  vate"\n: true\n',
    "an escaped scope": '"sc\\x6fpe": user:alice\n',
    "a line that looks like the end": "---x: 1\nprivate: true\n",
    "a key past the first 64 KB": 'title: "' + "\u00e9" * 33_000 + '"\nprivate: true\n',
}


@pytest.mark.parametrize("front_matter", list(HIDDEN.values()), ids=list(HIDDEN))
def test_front_matter_tricks_keep_a_private_note_out_of_the_view(front_matter: str) -> None:
    raw = f"---\ntitle: Bank\n{front_matter}---\nMy PIN is 4711.\n".encode()
    assert shown(raw) is False
    assert shown(b"---\ntitle: Bank\nnote: a \\ backslash\n---\nTea.\n") is True  # (parsed)


def test_the_view_leaves_out_a_note_whose_private_key_is_escaped(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / "entities" / "people").mkdir(parents=True)
    (vault / "entities" / "people" / "pin.md").write_text(
        '---\ntitle: PIN\n"priv\\x61te": true\n---\nMy PIN is 4711.\n'
    )
    (vault / "entities" / "people" / "tea.md").write_text("---\ntitle: Tea\n---\nAda: tea.\n")
    view = VaultView.create(vault, f"t-{uuid.uuid4().hex[:8]}")
    try:
        files = {p.relative_to(view.folder).as_posix() for p in view.folder.rglob("*.md")}
        assert files == {"entities/people/tea.md"}
    finally:
        view.remove()
