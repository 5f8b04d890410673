"""A git remote is another machine, trusted with notes and nothing else (issue 22, findings
1-3), with real git: a bare repository as the remote (`remote` of test_sync, pushed by
machine `a`), this machine's clone `b`, and a clone `h` playing the hostile machine that
commits with plain git and pushes.

- only this machine approves: tracked files under .vb/ or a tracked .vb stop the sync before
  the merge; an approval record is signed with this machine's key, so a copied one approves
  nothing;
- no symlink crosses the vault's edge: a symlink out of the vault, or among vb's own files,
  stops the sync before the merge; vb's reads of its own files refuse one;
- vb's merge rules win over a remote's .gitattributes, which `vb sync` and `vb status` report.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from test_sync import NOTES, clone, conflict_copies, edit_line, remote, sync

from conftest import git
from vault_brain.domain.errors import VaultBrainError
from vault_brain.storage.paths import VaultPaths

__all__ = ["remote"]  # the fixture, shared with test_sync

RULE = 'prune: "true"\n'


@pytest.fixture(autouse=True)
def config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This machine's config folder (where its approval key lives), outside every vault."""
    home = tmp_path / "config-b"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    return home


def hostile(remote: Path) -> Path:
    """A clone that commits with plain git (no vb: nothing checked) and pushes."""
    target = remote.parent / "h"
    git("clone", "-q", str(remote), str(target), cwd=remote.parent)
    return target


def push(h: Path, message: str) -> None:
    git("commit", "-qm", message, cwd=h)
    git("push", "-q", "origin", "HEAD:main", cwd=h)


def git_state(root: Path) -> tuple[str, str, str, str]:
    """HEAD, the index, the work tree's status and the files' bytes: what a refused sync
    must leave exactly as it was."""
    files = {
        p.relative_to(root).as_posix(): (
            p.readlink().as_posix() if p.is_symlink() else p.read_bytes().hex()
        )
        for p in sorted(root.rglob("*"))
        if (p.is_file() or p.is_symlink()) and p.relative_to(root).parts[0] not in (".git", ".vb")
    }
    return (
        git("rev-parse", "HEAD", cwd=root),
        git("ls-files", "-s", cwd=root),
        git("status", "--porcelain", "--ignored", cwd=root),
        json.dumps(files, sort_keys=True),
    )


def refused_sync(cli: Any, root: Path, *expected: str) -> str:
    """`vb sync` stops before the merge with one line naming what the remote tried, and
    leaves HEAD, index and work tree as they were (no merge in progress)."""
    before = git_state(root)
    res = cli("--vault", str(root), "sync")
    assert res.exit_code != 0, res.stdout
    first = res.stderr.strip().splitlines()[0]
    assert "sync stopped before merging origin/main: the remote" in first, res.stderr
    for text in expected:
        assert text in first, res.stderr
    assert "hint:" in res.stderr and "Traceback" not in res.stderr
    assert not (root / ".git" / "MERGE_HEAD").exists()
    assert git_state(root) == before
    return first


# --------------------------------------------------------------------------- finding 1


def test_a_remote_tracking_vb_state_is_refused_before_the_merge(
    remote: Path, cli: Any, config_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The remote force-adds its own `.vb/policy-approved.json` beside a rule that prunes
    everything: the sync stops before merging, and this machine's .vb/ stays as it
    was. Merged by hand (what an older vb did), `vb status` reports it and the record, signed
    on the other machine, approves nothing."""
    b = clone(remote, "b", cli)
    h = hostile(remote)
    (h / "policy").mkdir(exist_ok=True)
    (h / "policy" / "rules.yaml").write_text(RULE)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(remote.parent / "config-h"))  # the other machine
    assert cli("--vault", str(h), "policy", "approve").exit_code == 0
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config_home))
    git("add", "policy/rules.yaml", cwd=h)
    git("add", "-f", ".vb/policy-approved.json", cwd=h)
    push(h, "approve my own rule")
    pending = b / ".vb" / "state-of-this-machine.json"
    pending.write_text("{}")

    refused_sync(cli, b, ".vb/policy-approved.json", "machine-local")
    assert pending.read_text() == "{}" and not (b / "policy" / "rules.yaml").exists()

    git("merge", "-q", "--no-edit", "origin/main", cwd=b)  # what vb did before it checked
    status = cli("--vault", str(b), "status", "--json").json()
    assert any(".vb/policy-approved.json" in line for line in status["trust"]), status["trust"]
    assert (
        "trust:   the commit checked out tracks .vb/policy-approved.json"
        in cli("--vault", str(b), "status").stdout
    )
    diff = cli("--vault", str(b), "policy", "diff", "--json").json()
    assert diff["changed"] is True and diff["active_rules"] == {}
    assert "not made on this machine" in diff["approval_problem"]
    plan = cli("--vault", str(b), "prune", "--dry-run", "--json").json()
    assert len(plan["actions"]) < NOTES
    assert not any("approved policy rule" in note for note in plan.get("notes", []))


def test_a_remote_committing_vb_as_a_symlink_is_refused(
    remote: Path, cli: Any, tmp_path: Path
) -> None:
    b = clone(remote, "b", cli)
    h = hostile(remote)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (h / ".vb").symlink_to(outside)
    git("add", "-f", ".vb", cwd=h)
    push(h, "vb state elsewhere")
    own = b / ".vb" / "state-of-this-machine.json"
    own.write_text("{}")
    refused_sync(cli, b, f"tracks a symlink .vb -> {outside}")
    assert (b / ".vb").is_dir() and not (b / ".vb").is_symlink()
    assert own.read_text() == "{}"
    assert list(outside.iterdir()) == []


def test_a_remote_that_stops_ignoring_vb_never_gets_this_machines_state(
    remote: Path, cli: Any
) -> None:
    """The remote drops `.vb/` from .gitignore: this machine's next syncs (and vb's own
    commits) still never stage .vb/, so nothing of it is pushed."""
    b = clone(remote, "b", cli)
    h = hostile(remote)
    ignore = h / ".gitignore"
    ignore.write_text(ignore.read_text().replace(".vb/\n", ""))
    git("add", ".gitignore", cwd=h)
    push(h, "show me your state")
    sync(cli, b)
    (b / ".vb" / "state-of-this-machine.json").write_text("{}")
    assert (
        cli("--vault", str(b), "add", "-n", "Tea", "-c", "preferences", "Ada drinks tea.").exit_code
        == 0
    )  # (committed at once, by vb: the .vb/ file stays out)
    assert git("log", "-1", "--format=%s", cwd=b).strip() == "vb add: Tea"
    assert git("show", "--name-only", "--format=", "HEAD", cwd=b).split() == [
        "entities/preferences/tea.md"
    ]
    assert (
        cli(
            "--vault", str(b), "add", "-n", "Cake", "-c", "preferences", "Ada bakes cake."
        ).exit_code
        == 0
    )
    assert sync(cli, b)["pushed"] is True
    pushed = git("ls-tree", "-r", "--name-only", "main", cwd=remote)
    assert "tea.md" in pushed and "cake.md" in pushed and ".vb/" not in pushed


def test_an_approval_copied_from_another_machine_approves_nothing(
    remote: Path, cli: Any, config_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the rule travels through git; its approval, made on the other machine, is copied
    into this machine's .vb/ (however it got there): `vb policy diff` shows the remote's
    rule as unapproved and `vb prune` runs vb's defaults. Approved here, it runs."""
    b = clone(remote, "b", cli)
    h = clone(remote, "h", cli)
    before = cli("--vault", str(b), "prune", "--dry-run", "--json").json()["actions"]
    (h / "policy").mkdir(exist_ok=True)
    (h / "policy" / "rules.yaml").write_text(RULE)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(remote.parent / "config-h"))
    assert cli("--vault", str(h), "policy", "approve").exit_code == 0
    assert len(cli("--vault", str(h), "prune", "--dry-run", "--json").json()["actions"]) == NOTES
    sync(cli, h)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config_home))
    sync(cli, b)
    shutil.copy(h / ".vb" / "policy-approved.json", b / ".vb" / "policy-approved.json")

    diff = cli("--vault", str(b), "policy", "diff")
    assert "policy/ changed since approval (never approved): added policy/rules.yaml" in (
        diff.stdout
    )
    assert '+prune: "true"' in diff.stdout and "not made on this machine" in diff.stdout
    status = cli("--vault", str(b), "status", "--json").json()
    assert "not approved on this machine" in status["policy_warning"]
    assert cli("--vault", str(b), "prune", "--dry-run", "--json").json()["actions"] == before
    assert cli("--vault", str(b), "prune", "--json").exit_code == 0
    assert len(list((b / "entities").rglob("*.md"))) >= NOTES - len(before)

    assert cli("--vault", str(b), "policy", "approve").exit_code == 0  # this machine's word
    assert cli("--vault", str(b), "policy", "diff", "--json").json()["changed"] is False
    key = config_home / "vault_brain" / "machine.key"
    assert key.stat().st_mode & 0o777 == 0o600
    assert not str(key).startswith(str(b))


def test_an_approval_recorded_before_signing_must_be_given_again(vault: Path, cli: Any) -> None:
    """Migration: a version-1 record (unsigned: a remote could have written it) approves
    nothing; the diff says why and `vb policy approve` records a signed one."""
    from vault_brain.storage.policy.store import policy_hash

    (vault / "policy").mkdir(exist_ok=True)
    (vault / "policy" / "rules.yaml").write_text(RULE)
    old = {
        "version": 1,
        "hash": policy_hash({"rules.yaml": RULE.encode()}),
        "approved_at": "2026-01-01T00:00:00+00:00",
        "files": {"rules.yaml": RULE},
    }
    (vault / ".vb" / "policy-approved.json").write_text(json.dumps(old))
    diff = cli("--vault", str(vault), "policy", "diff", "--json").json()
    assert diff["changed"] is True and diff["active_rules"] == {}
    assert "before vb bound approvals" in diff["approval_problem"]
    assert "run `vb policy approve`" in cli("--vault", str(vault), "policy", "diff").stdout
    assert cli("--vault", str(vault), "policy", "approve").exit_code == 0
    diff = cli("--vault", str(vault), "policy", "diff", "--json").json()
    assert diff["changed"] is False and diff["active_rules"] == {"prune": "true"}


# --------------------------------------------------------------------------- finding 2


def test_a_symlinked_transcript_out_of_the_vault_is_refused_and_never_read(
    remote: Path, cli: Any, tmp_path: Path
) -> None:
    b = clone(remote, "b", cli)
    h = hostile(remote)
    secret = tmp_path / "private" / "notes.jsonl"
    secret.parent.mkdir()
    line = {"type": "user", "id": "m0001", "content": "my bank PIN is 4711"}
    secret.write_text(json.dumps(line) + "\n")
    (h / "sessions" / "x.jsonl").symlink_to(secret)
    git("add", "sessions/x.jsonl", cwd=h)
    push(h, "a transcript")
    refused_sync(cli, b, f"adds a symlink sessions/x.jsonl -> {secret}")

    # the symlink present all the same (made by hand): vb never reads through it
    from vault_brain.storage.sessions.transcript import SessionIndex, read_records

    (b / "sessions" / "x.jsonl").symlink_to(secret)
    paths = VaultPaths(b)
    assert [info.id for info in SessionIndex(paths).all()] == []
    with pytest.raises(VaultBrainError, match="symlink"):
        list(read_records(paths.transcript("x")))
    listing = cli("--vault", str(b), "sessions", "list", "--json")
    assert "4711" not in listing.stdout + listing.stderr


@pytest.mark.parametrize("name", ["STRATEGY.md", "tasks.json", "MEMORY.md"])
def test_a_symlinked_vb_file_from_the_remote_is_refused(
    remote: Path, cli: Any, tmp_path: Path, name: str
) -> None:
    b = clone(remote, "b", cli)
    h = hostile(remote)
    outside = tmp_path / f"outside-{name}"
    outside.write_bytes((h / name).read_bytes() if (h / name).exists() else b"{}")
    (h / name).unlink(missing_ok=True)
    (h / name).symlink_to(outside)
    git("add", name, cwd=h)
    push(h, f"{name} elsewhere")
    refused_sync(cli, b, f"adds a symlink {name} -> {outside}", "among vb's own files")


def test_a_symlink_leading_out_anywhere_is_refused_and_one_inside_is_merged(
    remote: Path, cli: Any
) -> None:
    b = clone(remote, "b", cli)
    h = hostile(remote)
    (h / "entities" / "projects" / "alias.md").symlink_to("topic-3.md")
    git("add", "entities/projects/alias.md", cwd=h)
    push(h, "an alias inside the vault")
    assert sync(cli, b)["merged"] + 1 > 0 and (b / "entities/projects/alias.md").is_symlink()

    (h / "entities" / "up").symlink_to("projects/../../..")  # relative, but out
    (h / "entities" / "hop").symlink_to("up/x")  # through another link
    git("add", "entities/up", "entities/hop", cwd=h)
    push(h, "links out")
    first = refused_sync(cli, b, "leads outside the vault")
    assert "(and 1 more)" in first


def test_vb_refuses_to_read_its_files_through_a_symlink_out_of_the_vault(
    vault: Path, cli: Any, tmp_path: Path
) -> None:
    """STRATEGY.md, tasks.json and MEMORY.md are read only inside the vault: the commands
    that read them stop with one line, and nothing of the outside file gets into the vault."""
    outside = tmp_path / "outside"
    outside.mkdir()
    for name, command in [
        ("tasks.json", ("tasks", "list")),
        ("MEMORY.md", ("memory-file",)),
        ("STRATEGY.md", ("strategy",)),
    ]:
        target = outside / name
        shutil.move(vault / name, target)
        (vault / name).symlink_to(target)
        before = target.read_bytes()
        res = cli("--vault", str(vault), *command)
        assert res.exit_code != 0, (name, res.stdout)
        assert f"refusing to read {name}: it leads outside the vault" in res.stderr, res.stderr
        assert target.read_bytes() == before
        (vault / name).unlink()
        shutil.move(target, vault / name)


# --------------------------------------------------------------------------- finding 3


def test_a_remote_gitattributes_cannot_drop_this_machines_edits(remote: Path, cli: Any) -> None:
    """The remote appends `*.md merge=vb-ours` and edits the same lines of three notes as
    this machine: vb's rules (in .git/info/attributes, installed on the next sync even in a
    clone made before) win, so each note gets a conflict copy; `vb sync` and `vb status`
    report the line."""
    b = clone(remote, "b", cli)
    info = b / ".git" / "info" / "attributes"
    info.unlink(missing_ok=True)  # a clone made before vb wrote it
    h = hostile(remote)
    with (h / ".gitattributes").open("a") as handle:
        handle.write("*.md merge=vb-ours\n")
    notes = [f"entities/projects/topic-{i}.md" for i in (1, 2, 3)]
    for rel in notes:
        edit_line(h, rel, "Line 4 of", "Line four as the remote wrote it, of")
        edit_line(b, rel, "Line 4 of", "Line four as this machine wrote it, of")
    git("add", "-A", cwd=h)
    push(h, "mine wins")

    res = cli("--vault", str(b), "sync")
    assert res.exit_code == 0, res.stderr
    assert "warning: .gitattributes: `*.md merge=vb-ours` would change how vb merges" in res.stdout
    assert "*.md merge=vb-note" in info.read_text().splitlines()
    for rel in notes:
        assert "as this machine wrote it" in (b / rel).read_text()
    copies = conflict_copies(b)
    assert len(copies) == 3
    assert all("as the remote wrote it" in next(b.rglob(c)).read_text() for c in copies)
    status = cli("--vault", str(b), "status", "--json").json()
    assert any("`*.md merge=vb-ours`" in line for line in status["trust"])
    assert (
        "trust:   .gitattributes: `*.md merge=vb-ours`" in cli("--vault", str(b), "status").stdout
    )
    doc = sync(cli, b)
    assert doc["warnings"] == [] and doc["merged"] == 0  # reported once, when it arrived


def test_vb_merge_lines_in_info_attributes_are_installed_once_and_anchored(
    tmp_path: Path,
) -> None:
    """Idempotent, beside the person's own lines, anchored at the vault's folder when the
    vault is a folder of a larger repository."""
    from vault_brain.storage.git.guard import install_info_attributes
    from vault_brain.storage.git.sync import open_repo

    top = tmp_path / "repo"
    git("init", "-q", str(top), cwd=tmp_path)
    info = top / ".git" / "info" / "attributes"
    info.parent.mkdir(parents=True, exist_ok=True)
    info.write_text("*.bin binary\n")
    (top / "notes" / "vault").mkdir(parents=True)
    repo = open_repo(top)
    try:
        assert install_info_attributes(repo, top / "notes" / "vault") is True
        assert install_info_attributes(repo, top / "notes" / "vault") is False
    finally:
        repo.close()
    text = info.read_text()
    assert text.startswith("*.bin binary\n")
    assert "notes/vault/**/*.md merge=vb-note" in text
    assert "notes/vault/sessions/*.jsonl merge=vb-jsonl" in text
    check = git("check-attr", "merge", "--", "notes/vault/a/b.md", "other.md", cwd=top)
    assert "notes/vault/a/b.md: merge: vb-note" in check and "other.md: merge: unspecified" in check


# ------------------------------------------------------------- STRATEGY.md from a remote

HOSTILE_SETTINGS = "prune_threshold: 1.0\nprune_min_age_days: 0\nprune_skip_categories: []\n"


def with_settings(text: str, settings: str) -> str:
    """STRATEGY.md with `settings` added at the top of its front matter."""
    assert text.startswith("---\n")
    return "---\n" + settings + text[4:]


def test_strategy_settings_from_a_remote_wait_for_approval_here(remote: Path, cli: Any) -> None:
    """The remote sets STRATEGY.md's prune thresholds so that every note would be archived:
    after the sync this machine keeps its own values (prune plans nothing), says so in the
    sync, `vb status` and `vb policy diff`, and the settings take effect once approved here.
    A person's own edit of STRATEGY.md takes effect at once, as before."""
    b = clone(remote, "b", cli)
    h = hostile(remote)
    v = ("--vault", str(b))
    assert cli(*v, "prune", "--dry-run", "--json").json()["actions"] == []
    strategy = h / "STRATEGY.md"
    strategy.write_text(with_settings(strategy.read_text(), HOSTILE_SETTINGS))
    git("add", "STRATEGY.md", cwd=h)
    push(h, "prune everything")
    assert len(cli("--vault", str(h), "prune", "--dry-run", "--json").json()["actions"]) == NOTES

    done = sync(cli, b)
    (line,) = [w for w in done["warnings"] if "STRATEGY.md settings" in w]
    assert "prune_threshold: 1.0 from the remote, unset kept here" in line, line
    assert "vb policy approve" in line
    assert "prune_threshold: 1.0" in (b / "STRATEGY.md").read_text()  # the file is merged
    assert cli(*v, "prune", "--dry-run", "--json").json()["actions"] == []
    diff = cli(*v, "policy", "diff", "--json").json()
    assert diff["changed"] is True
    assert sorted(s.split(":")[0] for s in diff["held_settings"]) == [
        "prune_min_age_days",
        "prune_skip_categories",
        "prune_threshold",
    ]
    assert "STRATEGY.md settings changed by a remote" in cli(*v, "status").stdout
    rows = {r["key"]: r for r in cli(*v, "strategy", "--json").json()["settings"]}
    assert rows["prune_threshold"]["value"] == 0.2
    assert rows["prune_threshold"]["source"].startswith("this machine's")
    # a second sync with nothing new holds the same, and says nothing more
    assert [w for w in sync(cli, b)["warnings"] if "STRATEGY.md" in w] == []
    assert cli(*v, "prune", "--dry-run", "--json").json()["actions"] == []

    approved = cli(*v, "policy", "approve", "--json").json()
    assert approved["approved"] is True and len(approved["settings"]) == 3
    assert len(cli(*v, "prune", "--dry-run", "--json").json()["actions"]) == NOTES
    assert cli(*v, "policy", "diff", "--json").json()["held_settings"] == []


def test_a_persons_own_strategy_edit_takes_effect_at_once(remote: Path, cli: Any) -> None:
    b = clone(remote, "b", cli)
    strategy = b / "STRATEGY.md"
    strategy.write_text(with_settings(strategy.read_text(), HOSTILE_SETTINGS))
    v = ("--vault", str(b))
    assert len(cli(*v, "prune", "--dry-run", "--json").json()["actions"]) == NOTES
    assert cli(*v, "policy", "diff", "--json").json()["held_settings"] == []
    # and a sync that brings nothing new from the remote holds nothing of it
    assert [w for w in sync(cli, b)["warnings"] if "STRATEGY.md" in w] == []
    assert len(cli(*v, "prune", "--dry-run", "--json").json()["actions"]) == NOTES
