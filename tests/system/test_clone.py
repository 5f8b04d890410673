"""`vb clone` and `vb fetch-old` as real processes: a bare repository serving partial clones
over file:// as the remote, a full clone as another machine, and `vb sync` between them in
a sparse checkout."""

from __future__ import annotations

import datetime as dt
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from conftest import git, run_vb

OLD = "2025-01-02T10:00:00+00:00"
OLD_FLAT = "sessions/old-1.jsonl"  # a transcript last committed long ago
OLD_SHARD = "sessions/2025-01-02/old-2.jsonl"  # in an old day folder
NEW_FLAT = "sessions/new-1.jsonl"
ARCHIVED = "archive/entities/projects/zephyr-retired.md"


def record(n: int, text: str) -> str:
    return json.dumps({"ts": OLD, "id": f"m{n:04d}", "type": "user", "content": text}) + "\n"


def vb(*args: str) -> Any:
    res = run_vb(*args)
    assert res.exit_code == 0, res.stdout + res.stderr
    return res.json() if "--json" in args else res


@pytest.fixture
def remote(tmp_path: Path, git_env: dict[str, str]) -> Path:
    """A bare remote (uploadpack.allowFilter on) holding a vault pushed by machine `a`: two
    notes, an archived note, two old transcripts (committed a long time ago, one in a day
    folder) and a recent one."""
    bare = tmp_path / "remote.git"
    git("init", "--bare", "-q", "-b", "main", str(bare), cwd=tmp_path)
    git("config", "uploadpack.allowFilter", "true", cwd=bare)
    a = tmp_path / "a"
    vb("init", str(a))
    git("branch", "-M", "main", cwd=a)
    vb("--vault", str(a), "add", "-n", "Kestrel", "-c", "projects", "Kestrel ships the parser.")
    vb("--vault", str(a), "add", "-n", "Ada", "-c", "people", "Ada reviews the kestrel code.")
    (a / ARCHIVED).parent.mkdir(parents=True)
    (a / ARCHIVED).write_text("---\ntitle: Zephyr retired\n---\nZephyr was retired.\n")
    for rel in (OLD_FLAT, OLD_SHARD):
        (a / rel).parent.mkdir(parents=True, exist_ok=True)
        (a / rel).write_text(record(1, "an old question about zephyr"))
    git("add", "-A", cwd=a)
    old = {"GIT_AUTHOR_DATE": OLD, "GIT_COMMITTER_DATE": OLD}
    import subprocess

    subprocess.run(
        ["git", "commit", "-q", "-m", "old work"],
        cwd=a,
        check=True,
        env={**os.environ, **old},
    )
    (a / NEW_FLAT).write_text(record(1, "a recent question about kestrel"))
    git("remote", "add", "origin", str(bare), cwd=a)
    vb("--vault", str(a), "sync", "--json")
    return bare


def tracked(root: Path, rel: str) -> str:
    return git("show", f"HEAD:{rel}", cwd=root)


def test_clone_checks_out_the_notes_and_recent_transcripts_only(
    remote: Path, tmp_path: Path
) -> None:
    target = tmp_path / "b"
    doc = vb("clone", remote.as_uri(), str(target), "--json")
    assert doc["partial"] is True and doc["remote"] == remote.as_uri()
    assert doc["commit"] == git("rev-parse", "HEAD", cwd=remote).strip()
    assert (doc["notes"], doc["notes_left_out"]) == (2, 1)
    assert (doc["transcripts"], doc["transcripts_left_out"]) == (1, 2)
    assert doc["indexed"] == 2 and doc["bytes_fetched"] > 0
    for rel in ("STRATEGY.md", "MEMORY.md", "tasks.json", ".gitattributes", NEW_FLAT):
        assert (target / rel).is_file(), rel
    assert (target / "entities" / "projects" / "kestrel.md").is_file()
    for rel in (ARCHIVED, OLD_FLAT, OLD_SHARD):
        assert not (target / rel).exists(), rel
        assert tracked(target, rel)  # in git's tree all the same
    # a normal vault: vb's drivers installed, status and search work
    assert "vault_brain" in git("config", "merge.vb-note.name", cwd=target)
    assert "vb's merge rules" in (target / ".git" / "info" / "attributes").read_text()
    assert git("status", "--porcelain", cwd=target) == ""
    hits = vb("--vault", str(target), "search", "kestrel", "--json")["results"]
    assert [h["title"] for h in hits][:1] in (["Kestrel"], ["Ada"])
    status = vb("--vault", str(target), "status", "--json")
    assert status["index"]["indexed"] == 2
    assert status["left_out"]["notes"] == 1 and status["left_out"]["transcripts"] == 2
    text = vb("--vault", str(target), "status").stdout
    assert "checkout: sparse (vb clone): 1 note and 2 transcripts left out" in text


def test_a_longer_recent_window_takes_the_old_transcripts(remote: Path, tmp_path: Path) -> None:
    days = (dt.date.today() - dt.date(2025, 1, 1)).days
    doc = vb("clone", remote.as_uri(), str(tmp_path / "b"), "--recent", str(days), "--json")
    assert (doc["transcripts"], doc["transcripts_left_out"]) == (3, 0)


def test_a_local_path_is_cloned_as_a_file_url_and_stays_partial(
    remote: Path, tmp_path: Path
) -> None:
    doc = vb("clone", str(remote), str(tmp_path / "b"), "--json")
    assert doc["remote"] == remote.as_uri() and doc["partial"] is True
    assert git("remote", "get-url", "origin", cwd=tmp_path / "b").strip() == remote.as_uri()


def test_a_remote_without_filters_is_cloned_whole_and_says_so(remote: Path, tmp_path: Path) -> None:
    git("config", "uploadpack.allowFilter", "false", cwd=remote)
    res = run_vb("clone", remote.as_uri(), str(tmp_path / "b"))
    assert res.exit_code == 0, res.stderr
    assert "does not serve partial clones" in res.stderr
    assert not (tmp_path / "b" / ARCHIVED).exists()  # the checkout is sparse all the same


def test_fetch_old_checks_out_the_archive_and_old_transcripts(remote: Path, tmp_path: Path) -> None:
    target = tmp_path / "b"
    vb("clone", remote.as_uri(), str(target))
    found = vb("--vault", str(target), "search", "zephyr", "--include-archive", "--json")
    assert found["results"] == []
    doc = vb("--vault", str(target), "fetch-old", "archive", "--json")
    assert doc["files"] >= 1 and doc["notes_left_out"] == 0 and doc["indexed"] == 3
    assert (target / ARCHIVED).is_file()
    found = vb("--vault", str(target), "search", "zephyr", "--include-archive", "--json")
    assert [h["path"] for h in found["results"]] == [ARCHIVED]
    doc = vb("--vault", str(target), "fetch-old", "sessions", "--json")
    assert (target / OLD_SHARD).is_file() and (target / OLD_FLAT).is_file()
    assert doc["transcripts_left_out"] == 0 and doc["files"] == 2
    doc = vb("--vault", str(target), "fetch-old", "--all", "--json")
    assert doc["notes_left_out"] == doc["transcripts_left_out"] == doc["files"] == 0
    assert vb("--vault", str(target), "status", "--json")["left_out"] is None
    assert git("status", "--porcelain", cwd=target) == ""
    res = run_vb("--vault", str(target), "fetch-old", "archive")
    assert res.exit_code == 1 and "already checked out" in res.stderr


def test_fetch_old_takes_one_day_folder_or_one_file(remote: Path, tmp_path: Path) -> None:
    target = tmp_path / "b"
    vb("clone", remote.as_uri(), str(target))
    doc = vb("--vault", str(target), "fetch-old", "sessions/2025-01-02", "--json")
    assert (target / OLD_SHARD).is_file() and not (target / OLD_FLAT).exists()
    assert (doc["files"], doc["transcripts_left_out"]) == (1, 1)
    doc = vb("--vault", str(target), "fetch-old", OLD_FLAT, "--json")
    assert (target / OLD_FLAT).is_file() and doc["transcripts_left_out"] == 0


def test_fetch_old_names_what_the_vault_does_not_have(remote: Path, tmp_path: Path) -> None:
    target = tmp_path / "b"
    vb("clone", remote.as_uri(), str(target))
    res = run_vb("--vault", str(target), "fetch-old", "nowhere")
    assert res.exit_code == 1 and "has no nowhere" in res.stderr
    res = run_vb("--vault", str(target), "fetch-old")
    assert res.exit_code == 2 and "say what to fetch" in res.stderr


def full_clone(remote: Path, target: Path) -> Path:
    git("clone", "-q", str(remote), str(target), cwd=remote.parent)
    vb("--vault", str(target), "sync")
    return target


def test_a_note_added_in_the_clone_syncs_without_deleting_what_it_left_out(
    remote: Path, tmp_path: Path
) -> None:
    target = tmp_path / "b"
    vb("clone", remote.as_uri(), str(target))
    vb("--vault", str(target), "add", "-n", "Falcon", "-c", "projects", "Falcon is new.")
    doc = vb("--vault", str(target), "sync", "--json")
    assert doc["pushed"] is True
    names = git("ls-tree", "-r", "--name-only", "main", cwd=remote).split("\n")
    for rel in (ARCHIVED, OLD_FLAT, OLD_SHARD, NEW_FLAT, "entities/projects/falcon.md"):
        assert rel in names, rel
    other = full_clone(remote, tmp_path / "c")
    assert (other / "entities" / "projects" / "falcon.md").is_file()
    assert (other / ARCHIVED).is_file() and (other / OLD_FLAT).read_text() == record(
        1, "an old question about zephyr"
    )
    assert not (target / ARCHIVED).exists()


def test_a_remote_change_to_an_old_transcript_merges_without_loss(
    remote: Path, tmp_path: Path
) -> None:
    target = tmp_path / "b"
    vb("clone", remote.as_uri(), str(target))
    a = tmp_path / "a"
    with (a / OLD_FLAT).open("a") as out:
        out.write(record(2, "a later answer"))
    (a / ARCHIVED).write_text((a / ARCHIVED).read_text() + "It came back once.\n")
    vb("--vault", str(a), "sync")
    # the clone has a commit of its own: a true merge, with vb's merger
    vb("--vault", str(target), "add", "-n", "Falcon", "-c", "projects", "Falcon is new.")
    doc = vb("--vault", str(target), "sync", "--json")
    assert doc["merged"] == 1 and doc["pushed"] is True and doc["conflict_copies"] == []
    both = record(1, "an old question about zephyr") + record(2, "a later answer")
    assert tracked(target, OLD_FLAT) == both
    assert tracked(target, ARCHIVED).endswith("It came back once.\n")
    assert not (target / OLD_FLAT).exists() and not (target / ARCHIVED).exists()
    assert git("status", "--porcelain", cwd=target) == ""
    assert not (target / ".git" / "MERGE_HEAD").exists()
    vb("--vault", str(a), "sync")
    assert (a / OLD_FLAT).read_text() == both
    assert (a / "entities" / "projects" / "falcon.md").is_file()
    # and fetched on demand, it is the merged file
    vb("--vault", str(target), "fetch-old", OLD_FLAT)
    assert (target / OLD_FLAT).read_text() == both


def test_records_written_to_a_transcript_left_out_are_merged_into_it(
    remote: Path, tmp_path: Path
) -> None:
    """A write to a transcript that is not checked out (a resumed old session) starts a new
    file there: git keeps the path's skip-worktree bit (a commit never stages the partial
    file over the whole one), and vb's next commit merges the records into the whole
    transcript, checked out from then on."""
    target = tmp_path / "b"
    vb("clone", remote.as_uri(), str(target))
    (target / OLD_FLAT).write_text(record(2, "written in the clone"))
    assert git("status", "--porcelain", cwd=target) == ""
    vb("--vault", str(target), "sync")
    both = record(1, "an old question about zephyr") + record(2, "written in the clone")
    assert git("show", f"main:{OLD_FLAT}", cwd=remote) == both
    assert (target / OLD_FLAT).read_text() == both
    assert git("status", "--porcelain", cwd=target) == ""
    # a note written where the archive was left out is not a record to merge: it stays out
    (target / ARCHIVED).parent.mkdir(parents=True)
    (target / ARCHIVED).write_text("---\ntitle: Other\n---\nA different text.\n")
    vb("--vault", str(target), "add", "-n", "Falcon", "-c", "projects", "Falcon is new.")
    vb("--vault", str(target), "sync")
    assert git("show", f"main:{ARCHIVED}", cwd=remote).endswith("Zephyr was retired.\n")


# --------------------------------------------------------------------------- errors


def error(res: Any) -> str:
    assert res.exit_code != 0 and res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 2 and lines[0].startswith("vb: error: ") and "hint:" in lines[1]
    return lines[0]


def bare_of(work: Path, name: str) -> Path:
    """`work`'s files committed by plain git, as a bare repository beside it."""
    git("init", "-q", "-b", "main", cwd=work)
    git("add", "-A", cwd=work)
    git("commit", "-q", "-m", "plain git", cwd=work)
    bare = work.parent / name
    git("clone", "-q", "--bare", str(work), str(bare), cwd=work.parent)
    return bare


def plain_vault(
    tmp_path: Path, name: str, files: dict[str, str], links: dict[str, str] | None = None
) -> Path:
    """A vault made by plain git (STRATEGY.md, `files`, symlinks `links`), as a bare
    repository `name`."""
    work = tmp_path / "work"
    for rel, text in {"STRATEGY.md": "---\n---\n", **files}.items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text(text)
    for rel, to in (links or {}).items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).symlink_to(to)
    return bare_of(work, name)


def test_a_folder_that_is_not_empty_is_refused(remote: Path, tmp_path: Path) -> None:
    target = tmp_path / "b"
    target.mkdir()
    (target / "mine.txt").write_text("mine")
    assert "exists and is not empty" in error(run_vb("clone", remote.as_uri(), str(target)))
    assert [p.name for p in target.iterdir()] == ["mine.txt"]


def test_an_unreachable_remote_is_one_line(tmp_path: Path, git_env: dict[str, str]) -> None:
    target = tmp_path / "b"
    line = error(run_vb("clone", (tmp_path / "missing.git").as_uri(), str(target)))
    assert "cannot reach" in line and not target.exists()


def test_a_repository_that_is_not_a_vault_is_refused(
    tmp_path: Path, git_env: dict[str, str]
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "README.md").write_text("not a vault\n")
    bare = bare_of(work, "plain.git")
    target = tmp_path / "b"
    assert "is not a vault" in error(run_vb("clone", bare.as_uri(), str(target)))
    assert not target.exists()
    # a vault in a folder of a larger repository is named
    (work / "brain").mkdir()
    (work / "brain" / "STRATEGY.md").write_text("---\n---\n")
    git("add", "-A", cwd=work)
    git("commit", "-q", "-m", "vault below", cwd=work)
    git("push", "-q", str(bare), "main", cwd=work)
    assert "holds one in brain/" in error(run_vb("clone", bare.as_uri(), str(target)))
    empty = tmp_path / "empty.git"
    git("init", "--bare", "-q", str(empty), cwd=tmp_path)
    assert "empty repository" in error(run_vb("clone", empty.as_uri(), str(target)))


def test_what_a_sync_refuses_the_clone_refuses(tmp_path: Path, git_env: dict[str, str]) -> None:
    bare = plain_vault(tmp_path, "bad.git", {}, links={"entities/passwd.md": "/etc/passwd"})
    target = tmp_path / "b"
    assert "clone refused" in error(run_vb("clone", bare.as_uri(), str(target)))
    assert not target.exists()


def test_a_git_too_old_for_partial_clones_is_named(
    remote: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "bin"
    fake.mkdir()
    script = fake / "git"
    script.write_text('#!/bin/sh\n[ "$1" = --version ] && echo "git version 2.20.1" && exit 0\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")
    line = error(run_vb("clone", remote.as_uri(), str(tmp_path / "b")))
    assert "git 2.20 is too old" in line


def test_new_files_sync_both_ways_though_outside_what_was_checked_out(
    remote: Path, tmp_path: Path
) -> None:
    """A transcript started after the clone, here or on another machine, is in the checkout;
    a note archived here (archive/ is left out) is committed all the same."""
    target, a = tmp_path / "b", tmp_path / "a"
    vb("clone", remote.as_uri(), str(target))
    mine, archived = "sessions/2026-11-27/mine.jsonl", "archive/entities/people/bo.md"
    (target / mine).parent.mkdir(parents=True)
    (target / mine).write_text(record(1, "started in the clone"))
    (target / archived).parent.mkdir(parents=True)
    (target / archived).write_text("---\ntitle: Bo\n---\nBo left.\n")
    assert vb("--vault", str(target), "sync", "--json")["pushed"] is True
    theirs = "sessions/theirs.jsonl"
    (a / theirs).write_text(record(1, "started on a"))
    doc = vb("--vault", str(a), "sync", "--json")
    assert doc["pushed"] is True and (a / mine).is_file() and (a / archived).is_file()
    vb("--vault", str(target), "sync")
    assert (target / theirs).read_text() == record(1, "started on a")
    assert (target / mine).read_text() == record(1, "started in the clone")
    assert git("status", "--porcelain", cwd=target) == ""


def test_a_note_archived_in_the_clone_and_changed_elsewhere_keeps_both(
    remote: Path, tmp_path: Path
) -> None:
    """The clone archives a note (into archive/, which it left out) while machine `a`
    changes it: the merge follows the move and keeps a's change in the archived note."""
    target, a = tmp_path / "b", tmp_path / "a"
    vb("clone", remote.as_uri(), str(target))
    vb("--vault", str(target), "delete", "entities/projects/kestrel.md")
    note = a / "entities" / "projects" / "kestrel.md"
    note.write_text(note.read_text() + "\nKestrel moved to a new team.\n")
    vb("--vault", str(a), "sync")
    doc = vb("--vault", str(target), "sync", "--json")
    assert doc["pushed"] is True
    archived = "archive/entities/projects/kestrel.md"
    assert "Kestrel moved to a new team." in git("show", f"main:{archived}", cwd=remote)
    names = git("ls-tree", "-r", "--name-only", "main", cwd=remote).split("\n")
    assert archived in names and "entities/projects/kestrel.md" not in names
    assert git("status", "--porcelain", cwd=target) == ""


def test_a_vault_made_by_plain_git_clones_clean(tmp_path: Path, git_env: dict[str, str]) -> None:
    """No .gitignore, no .gitattributes in the remote: the index in .vb/ stays out of git, and
    vb's attributes are the one change waiting for the first commit."""
    heron = "---\ntitle: Heron\n---\nHeron nests.\n"
    bare = plain_vault(tmp_path, "plain.git", {"entities/heron.md": heron})
    target = tmp_path / "b"
    assert vb("clone", bare.as_uri(), str(target), "--json")["indexed"] == 1
    assert git("status", "--porcelain", cwd=target) == "?? .gitattributes\n"


def test_many_old_flat_transcripts_are_left_out_as_one_pattern(
    remote: Path, tmp_path: Path
) -> None:
    """More than FLAT_PATTERNS_MAX old flat transcripts: one pattern leaves them out, the
    recent one is taken back by name, and `vb fetch-old sessions` brings them all."""
    a = tmp_path / "a"
    many = [f"sessions/old-{i:03d}.jsonl" for i in range(2, 203)]
    for rel in many:
        (a / rel).write_text(record(1, rel))
    git("add", "-A", cwd=a)
    git("commit", "-q", "-m", "old sessions", cwd=a)
    git("push", "-q", "origin", "main", cwd=a)
    import subprocess

    # their commit dated long ago, on top of today's (a machine whose clock was behind):
    # the recent transcript below it still counts as recent
    subprocess.run(
        ["git", "commit", "-q", "--amend", "--no-edit", "--date", OLD],
        cwd=a,
        check=True,
        env={**os.environ, "GIT_COMMITTER_DATE": OLD},
    )
    git("push", "-q", "-f", "origin", "main", cwd=a)
    target = tmp_path / "b"
    doc = vb("clone", remote.as_uri(), str(target), "--json")
    assert (doc["transcripts"], doc["transcripts_left_out"]) == (1, 2 + len(many))
    assert (target / NEW_FLAT).is_file() and not (target / many[0]).exists()
    assert "!/sessions/*.jsonl" in git("sparse-checkout", "list", cwd=target)
    vb("--vault", str(target), "fetch-old", "sessions")
    assert all((target / rel).is_file() for rel in [*many, OLD_FLAT, OLD_SHARD])


def test_a_clone_checked_out_in_two_stages_ends_as_one_checked_out_at_once(
    remote: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A big clone checks a tenth of its files out first and indexes them while git fetches
    the rest (`first_stage`); here the threshold is lowered so this small vault does it."""
    from vault_brain.app.sync.clone import clone_vault
    from vault_brain.domain.sync import sparse as plan
    from vault_brain.storage.git import sparse as sp

    stages: list[list[list[str]]] = []
    widen = sp.Widening.__init__

    def seen(self: sp.Widening, root: Path, wanted: list[list[str]]) -> None:
        stages.append(wanted)
        widen(self, root, wanted)

    monkeypatch.setattr(sp.Widening, "__init__", seen)
    monkeypatch.setattr(plan, "STAGED_FROM", 1)
    staged = clone_vault(remote.as_uri(), tmp_path / "staged")
    monkeypatch.setattr(plan, "STAGED_FROM", 10**9)
    whole = clone_vault(remote.as_uri(), tmp_path / "whole")

    assert [len(s) for s in stages] == [2, 1]
    assert stages[0][0][:2] == plan.TOP_FILES and stages[0][0][2:]  # (some folder first)
    assert stages[0][1] == stages[1][0]
    for field in ("notes", "notes_left_out", "transcripts", "transcripts_left_out", "indexed"):
        assert getattr(staged, field) == getattr(whole, field), field
    for args in (["ls-files", "-t"], ["sparse-checkout", "list"], ["status", "--porcelain"]):
        assert git(*args, cwd=Path(staged.path)) == git(*args, cwd=Path(whole.path)), args
    hits = vb("--vault", staged.path, "search", "kestrel", "--json")["results"]
    assert {h["title"] for h in hits} == {"Kestrel", "Ada"}
