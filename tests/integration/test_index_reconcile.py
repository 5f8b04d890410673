"""A reconcile's walk of the vault (`scan.walk`): it finds exactly the files the note rules
name (`is_note_path`, visible, regular, inside the vault), and a process that reconciles
again over an unchanged vault answers from its last walk, yet sees every kind of change a
person, a tool or another process makes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vault_brain.domain.sync.merge import is_note_path
from vault_brain.storage.files import visible_files
from vault_brain.storage.index import scan as scan_module
from vault_brain.storage.index.scan import scan, walk
from vault_brain.storage.index.store import Index
from vault_brain.storage.paths import IGNORED_DIRS, VaultPaths
from vault_brain.storage.template import init_vault


def write(root: Path, rel: str, text: str = "---\ntitle: T\n---\nbody\n") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("split_from", "kept_open"),
    [(scan_module.SPLIT_FROM, scan_module.KEPT_OPEN), (1, scan_module.KEPT_OPEN), (1, 0)],
    ids=["one-process", "half-in-a-child", "half-in-a-child-by-path"],
)
def test_the_walk_finds_exactly_what_the_note_rules_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, split_from: int, kept_open: int
) -> None:
    monkeypatch.setattr(scan_module, "SPLIT_FROM", split_from)
    monkeypatch.setattr(scan_module, "KEPT_OPEN", kept_open)
    root = tmp_path / "vault"
    init_vault(root)
    outside = write(tmp_path, "outside.md")
    for rel in [
        "top.md", "UPPER.MD", "Mixed.Md", "MEMORY.md", "STRATEGY.md", "notes.txt", "README",
        "entities/people/ada.md", "entities/people/ADA2.MD", "entities/people/.hidden.md",
        "entities/.secret/x.md", "deep/a/b/c/d.md", "deep/a/memory.md", "deep/MEMORY.md",
        "sessions/s1.md", "logs/l.md", "policy/p.md", ".obsidian/o.md", "archive/old.md",
        "episodes/2026-11/27/m1/e.md", "entities/x.md.tmp", "entities/x.md~",
    ]:  # fmt: skip
        write(root, rel)
    os.symlink(outside, root / "entities" / "link-out.md")
    os.symlink(root / "top.md", root / "entities" / "link-in.md")
    os.mkfifo(root / "entities" / "fifo.md")
    os.symlink(root / "deep", root / "entities" / "folder-link.md")

    expected = set()
    for entry, rel in visible_files(str(root), IGNORED_DIRS):
        full = root / rel
        inside = os.path.realpath(full).startswith(os.path.realpath(root) + os.sep)
        if is_note_path(rel) and full.is_file() and inside and entry.name != "fifo.md":
            expected.add(rel)
    found = scan(VaultPaths(root))
    assert set(found) == expected
    assert "entities/link-in.md" in found and "entities/link-out.md" not in found
    assert {"UPPER.MD", "Mixed.Md", "deep/MEMORY.md"} <= set(found)
    assert not {"MEMORY.md", "STRATEGY.md", "entities/fifo.md"} & set(found)
    st = (root / "deep/a/b/c/d.md").stat()
    assert found["deep/a/b/c/d.md"] == [st.st_mtime_ns, st.st_size]
    assert walk(VaultPaths(root), split_from=10**9).same_as(walk(VaultPaths(root)))


def test_a_walk_whose_child_fails_stats_its_half_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The child sends its stamps through `os.write`; made to fail there (in the child: the
    parent never writes), it exits non-zero and the parent stats the child's half."""
    root = tmp_path / "vault"
    init_vault(root)
    for n in range(40):
        write(root, f"entities/projects/p{n}.md", f"note {n}\n" * (n + 1))
    alone = walk(VaultPaths(root), split_from=10**9)

    def refuse(fd: int, data: bytes) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", refuse)
    split = walk(VaultPaths(root), split_from=1)
    assert len(split) == 40 and split.same_as(alone)


def test_a_note_removed_between_the_listing_and_its_stat_is_left_out(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    init_vault(root)
    for n in range(10):
        write(root, f"entities/projects/p{n}.md")
    folders: list[scan_module._Folder] = []
    scan_module._list(str(root), folders)
    (root / "entities/projects/p3.md").unlink()
    (root / "entities/projects/p7.md").unlink()
    os.mkfifo(root / "entities/projects/p7.md")  # (no longer a regular file)
    try:
        total = sum(len(f.names) for f in folders)
        stamps = scan_module._stamp(folders, 0, total // 2)
        stamps.extend(scan_module._ChildStamps(folders, total // 2, total).result())
    finally:
        for folder in folders:
            if folder.fd is not None:
                os.close(folder.fd)
    seen = scan_module._assemble(folders, stamps)
    assert sorted(seen.files()) == [
        f"entities/projects/p{n}.md" for n in range(10) if n not in (3, 7)
    ]


@pytest.fixture
def indexed(tmp_path: Path) -> tuple[Index, Path]:
    root = tmp_path / "vault"
    init_vault(root)
    for n in range(30):
        write(root, f"entities/projects/p{n}.md", f"---\ntitle: P{n}\n---\nnote {n}\n")
    index = Index(VaultPaths(root))
    index.reconcile()
    assert not index.reconcile().changed
    assert index._quiet is not None  # (the walk this process answers from while it matches)
    assert not index.reconcile().changed
    return index, root


def test_an_edit_in_place_that_keeps_the_size_is_seen(indexed: tuple[Index, Path]) -> None:
    index, root = indexed
    path = root / "entities/projects/p3.md"
    before = path.stat()
    with open(path, "r+b") as f:  # as an editor saving in place: same inode, same size
        f.seek(-3, os.SEEK_END)
        f.write(b"X3\n")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000))
    assert index.reconcile().updated == ["entities/projects/p3.md"]
    assert not index.reconcile().changed


def test_an_edit_that_restores_the_time_is_seen_by_its_size(
    indexed: tuple[Index, Path],
) -> None:
    index, root = indexed
    path = root / "entities/projects/p4.md"
    before = path.stat()
    path.write_text("---\ntitle: P4\n---\nnote 4, and more\n", encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # (rsync -t, a restore)
    assert index.reconcile().updated == ["entities/projects/p4.md"]


def test_a_rename_a_new_note_and_a_removal_are_seen(indexed: tuple[Index, Path]) -> None:
    index, root = indexed
    folder = root / "entities/projects"
    stamp = (folder / "p5.md").stat().st_mtime_ns
    os.rename(folder / "p5.md", folder / "q5.md")  # same folder, same count, same stamps
    os.utime(folder / "q5.md", ns=(stamp, stamp))
    result = index.reconcile()
    assert (result.added, result.removed) == (
        ["entities/projects/q5.md"],
        ["entities/projects/p5.md"],
    )
    write(root, "entities/projects/new.md")
    assert index.reconcile().added == ["entities/projects/new.md"]
    (folder / "p6.md").unlink()
    assert index.reconcile().removed == ["entities/projects/p6.md"]


def test_another_processs_index_write_is_not_hidden_by_the_last_walk(
    indexed: tuple[Index, Path],
) -> None:
    """Another process (here another Index over the same vault) rebuilds the index: this
    one's next reconcile reads the new manifest and still finds the vault unchanged."""
    index, root = indexed
    other = Index(VaultPaths(root))
    other.rebuild()
    result = index.reconcile()
    assert not result.changed and result.total == 30
    assert index.load_manifest() == other.load_manifest()
