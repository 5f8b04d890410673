"""Journaled transactions and the lock-free compare-and-swap they replace files with."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vault_brain.storage import files
from vault_brain.storage.files import replace_unless_changed
from vault_brain.storage.paths import VaultPaths
from vault_brain.storage.transaction import (
    ChangedMeanwhile,
    pending_journals,
    recover,
    transaction,
)


def _upper_tail(data: bytes) -> bytes:
    """A key edit: append a marker line."""
    return data + b"vb: edited\n"


@pytest.fixture(params=["exchange", "fallback"])
def swap_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run each swap test with the atomic exchange and with the check-then-replace used
    where the system has no `renameat2`."""
    if request.param == "fallback":
        monkeypatch.setattr(files, "_renameat2", None)
    elif files._renameat2 is None:
        pytest.skip("this system has no renameat2")
    return str(request.param)


def test_replace_when_unchanged(tmp_path: Path, swap_mode: str) -> None:
    path = tmp_path / "note.md"
    path.write_bytes(b"old\n")
    assert replace_unless_changed(path, b"new\n", b"old\n")
    assert path.read_bytes() == b"new\n"
    assert [p.name for p in tmp_path.iterdir()] == ["note.md"]  # no temp left


def test_a_strangers_content_gets_the_edit_on_top(tmp_path: Path, swap_mode: str) -> None:
    # vb read "old" and computed its edit; an editor replaced the file before vb's swap.
    path = tmp_path / "note.md"
    path.write_bytes(b"person wrote this\n")
    assert replace_unless_changed(path, _upper_tail(b"old\n"), b"old\n", _upper_tail)
    assert path.read_bytes() == b"person wrote this\nvb: edited\n"


def _stranger_writes_during_the_swap(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    """An editor's rename lands between vb's last read and its replace (the race window,
    made certain here by writing right after vb's temp file is made)."""
    make_temp = files._temp_beside
    pending = [b"person wrote this just now\n"]

    def temp_then_stranger(target: Path, payload: bytes, durable: bool) -> str:
        tmp = make_temp(target, payload, durable)
        if pending:
            path.write_bytes(pending.pop())
        return tmp

    monkeypatch.setattr(files, "_temp_beside", temp_then_stranger)


def test_a_write_racing_the_swap_gets_the_edit_on_top(
    tmp_path: Path, swap_mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "note.md"
    path.write_bytes(b"old\n")
    _stranger_writes_during_the_swap(monkeypatch, path)
    done = replace_unless_changed(path, _upper_tail(b"old\n"), b"old\n", _upper_tail)
    if swap_mode == "fallback":  # no atomic swap: the window this test hits stays open
        assert done and path.read_bytes() == b"old\nvb: edited\n"
        return
    assert done
    assert path.read_bytes() == b"person wrote this just now\nvb: edited\n"


def test_a_write_racing_the_swap_is_put_back_without_a_rebase(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if files._renameat2 is None:
        pytest.skip("this system has no renameat2")
    path = tmp_path / "note.md"
    path.write_bytes(b"old\n")
    _stranger_writes_during_the_swap(monkeypatch, path)
    assert not replace_unless_changed(path, b"vb's whole new file\n", b"old\n")
    assert path.read_bytes() == b"person wrote this just now\n"
    assert [p.name for p in tmp_path.iterdir()] == ["note.md"]


def test_without_a_rebase_the_strangers_content_stays(tmp_path: Path, swap_mode: str) -> None:
    path = tmp_path / "note.md"
    path.write_bytes(b"person wrote this\n")
    assert not replace_unless_changed(path, b"vb's whole new file\n", b"old\n")
    assert path.read_bytes() == b"person wrote this\n"
    assert [p.name for p in tmp_path.iterdir()] == ["note.md"]


def test_create_never_replaces_a_file_that_appeared(tmp_path: Path, swap_mode: str) -> None:
    path = tmp_path / "new.md"
    path.write_bytes(b"made by hand first\n")
    assert not replace_unless_changed(path, b"vb's\n", None)
    assert path.read_bytes() == b"made by hand first\n"
    other = tmp_path / "other.md"
    assert replace_unless_changed(other, b"vb's\n", None)
    assert other.read_bytes() == b"vb's\n"


def test_a_file_deleted_meanwhile_stays_deleted(tmp_path: Path, swap_mode: str) -> None:
    path = tmp_path / "gone.md"
    assert not replace_unless_changed(path, b"new\n", b"old\n", _upper_tail)
    assert not path.exists()


def test_the_file_mode_is_kept(tmp_path: Path, swap_mode: str) -> None:
    path = tmp_path / "note.md"
    path.write_bytes(b"old\n")
    path.chmod(0o600)
    assert replace_unless_changed(path, b"new\n", b"old\n")
    assert path.stat().st_mode & 0o777 == 0o600


@pytest.fixture
def paths(tmp_path: Path) -> VaultPaths:
    root = tmp_path / "vault"
    root.mkdir()
    (root / ".vb").mkdir()
    return VaultPaths(root)


def test_a_key_edit_is_reapplied_to_a_file_changed_before_commit(paths: VaultPaths) -> None:
    note = paths.root / "a.md"
    note.write_bytes(b"one\n")
    with transaction(paths) as tx:
        tx.edit(note, _upper_tail)
        note.write_bytes(b"one\ntwo, typed by a person\n")  # an editor that takes no lock
    assert note.read_bytes() == b"one\ntwo, typed by a person\nvb: edited\n"
    assert pending_journals(paths) == []


def test_a_whole_file_write_over_a_change_is_refused(paths: VaultPaths) -> None:
    note = paths.root / "a.md"
    note.write_bytes(b"one\n")
    changed = pytest.raises(ChangedMeanwhile, match="changed while vb was working")
    with changed, transaction(paths) as tx:
        tx.read(note)
        tx.write(note, b"replaced\n")
        note.write_bytes(b"typed by a person\n")
    assert note.read_bytes() == b"typed by a person\n"


def test_an_exception_in_the_block_changes_nothing(paths: VaultPaths) -> None:
    note = paths.root / "a.md"
    note.write_bytes(b"one\n")
    with pytest.raises(RuntimeError), transaction(paths) as tx:
        tx.edit(note, _upper_tail)
        tx.create(paths.root / "b.md", b"new\n")
        raise RuntimeError("boom")
    assert note.read_bytes() == b"one\n"
    assert not (paths.root / "b.md").exists()


def _journal(paths: VaultPaths, ops: list[dict[str, object]]) -> None:
    """A journal as a commit killed right after writing it leaves."""
    import base64
    import hashlib

    for op in ops:
        if "data" in op:
            op["data"] = base64.b64encode(op["data"]).decode()  # type: ignore[arg-type]
        if isinstance(op.get("pre"), bytes):
            op["pre"] = hashlib.sha256(op["pre"]).hexdigest()  # type: ignore[arg-type]
    paths.journal_dir.mkdir(parents=True, exist_ok=True)
    (paths.journal_dir / "1-test.json").write_text(json.dumps({"version": 1, "ops": ops}))


def test_recovery_finishes_a_journaled_change(paths: VaultPaths) -> None:
    (paths.root / "a.md").write_bytes(b"one\n")
    (paths.root / "old.md").write_bytes(b"moving\n")
    _journal(
        paths,
        [
            {"op": "put", "path": "a.md", "pre": b"one\n", "data": b"two\n"},
            {"op": "put", "path": "archive/old.md", "pre": None, "data": b"moving\n"},
            {"op": "delete", "path": "old.md", "pre": b"moving\n"},
            {"op": "append", "path": "log.jsonl", "size": 0, "data": b'{"n":1}\n'},
        ],
    )
    report = recover(paths)
    assert (report.redone, report.kept) == (1, [])
    assert (paths.root / "a.md").read_bytes() == b"two\n"
    assert (paths.root / "archive" / "old.md").read_bytes() == b"moving\n"
    assert not (paths.root / "old.md").exists()
    assert (paths.root / "log.jsonl").read_bytes() == b'{"n":1}\n'
    assert pending_journals(paths) == []
    # A second redo of the same change does nothing more (the append is not doubled).
    _journal(paths, [{"op": "append", "path": "log.jsonl", "size": 0, "data": b'{"n":1}\n'}])
    recover(paths)
    assert (paths.root / "log.jsonl").read_bytes() == b'{"n":1}\n'


def test_recovery_keeps_a_hand_edit_made_after_the_crash(paths: VaultPaths) -> None:
    (paths.root / "a.md").write_bytes(b"edited by hand after the crash\n")
    _journal(paths, [{"op": "put", "path": "a.md", "pre": b"one\n", "data": b"two\n"}])
    report = recover(paths)
    assert report.kept == ["a.md"]
    assert (paths.root / "a.md").read_bytes() == b"edited by hand after the crash\n"


def test_recovery_discards_a_torn_journal(paths: VaultPaths) -> None:
    (paths.root / "a.md").write_bytes(b"one\n")
    paths.journal_dir.mkdir(parents=True)
    (paths.journal_dir / "1-torn.json").write_text('{"version": 1, "ops": [{"op": "pu')
    assert recover(paths).redone == 0
    assert (paths.root / "a.md").read_bytes() == b"one\n"
    assert pending_journals(paths) == []
