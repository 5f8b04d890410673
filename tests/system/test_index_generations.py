"""The index is a cache that never stands in the way: a rebuild is built beside the index in
use and swapped in; a rebuild cut short leaves the old one; a read-only vault is searched
with its cache kept elsewhere."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import index_dir, run_vb
from faults import run_failed_at, start_paused_at, vb_command, write_points


def _manifest(root: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((root / ".vb" / "manifest.json").read_text())
    return data


def _generations(root: Path) -> set[str]:
    return {p.name for p in (root / ".vb").glob("index*") if p.is_dir()}


def _ids(res: Any) -> list[str]:
    return [h["id"] for h in res.json()["results"]]


@pytest.fixture
def indexed(vault: Path, cli: Any) -> Path:
    for name, text in (("Ada", "Ada builds engines."), ("Mill", "The mill turns slowly.")):
        assert cli("--vault", str(vault), "add", "-n", name, "-c", "people", text).exit_code == 0
    assert cli("--vault", str(vault), "index").exit_code == 0
    return vault


def test_searches_and_writes_go_on_while_a_rebuild_runs(indexed: Path) -> None:
    v = ("--vault", str(indexed))
    cmd = vb_command(*v, "index", "--rebuild")
    points = write_points(cmd)  # (this probe rebuilds once, to the end)
    first_write_in_new = next(
        n for n, p in enumerate(points, 1) if "mkdir(" in p and "/.vb/index-" in p
    )
    before = _manifest(indexed)["index"]
    rebuild = start_paused_at(cmd, points, first_write_in_new + 1, seconds=4)
    try:
        deadline = time.monotonic() + 10
        while len(_generations(indexed)) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(_generations(indexed)) == 2, "the rebuild never started its new generation"
        quick = {"VB_LOCK_TIMEOUT": "1"}
        found = run_vb(*v, "search", "engines", "--json", env=quick)
        assert found.exit_code == 0, found.stderr
        assert _ids(found) == ["entity-people-ada"]
        added = run_vb(*v, "add", "-n", "Late", "-c", "people", "Late arrives.", env=quick)
        assert added.exit_code == 0, added.stderr
        late = run_vb(*v, "search", "arrives", "--json", env=quick)
        assert _ids(late) == ["entity-people-late"]  # written into the index in use
        assert rebuild.poll() is None, "the rebuild finished early: nothing was shown"
        _, err = rebuild.communicate(timeout=60)
        assert rebuild.returncode == 0, err
    finally:
        with contextlib.suppress(ProcessLookupError):
            rebuild.kill()
    manifest = _manifest(indexed)
    assert manifest["index"] != before
    assert before in manifest["retired"]  # kept a minute for readers still using it
    # The note written during the rebuild was caught up before the swap.
    assert "entities/people/late.md" in manifest["files"]
    res = run_vb(*v, "search", "arrives", "--json")
    assert _ids(res) == ["entity-people-late"]


def test_replaced_and_abandoned_generations_are_removed(indexed: Path, cli: Any) -> None:
    manifest = _manifest(indexed)
    current = manifest["index"]
    old, recent, abandoned, building = (f"index-{c * 16}" for c in "abcd")
    for name in (old, recent, abandoned, building):
        (indexed / ".vb" / name).mkdir()
        (indexed / ".vb" / name / "_MAIN_1.toc").write_bytes(b"x")
    hour_ago = time.time() - 3600
    os.utime(indexed / ".vb" / abandoned, (hour_ago, hour_ago))  # a killed rebuild's
    manifest["retired"] = {old: hour_ago, recent: time.time()}
    (indexed / ".vb" / "manifest.json").write_text(json.dumps(manifest))
    v = ("--vault", str(indexed))
    assert cli(*v, "add", "-n", "New", "-c", "people", "Anything new.").exit_code == 0
    assert cli(*v, "search", "anything").exit_code == 0  # a write to the index sweeps
    # (`building`, written a moment ago, may be another process's first index in progress)
    assert _generations(indexed) == {current, recent, building}
    assert set(_manifest(indexed)["retired"]) == {recent}


def test_a_rebuild_that_runs_out_of_disk_keeps_the_old_index(indexed: Path) -> None:
    v = ("--vault", str(indexed))
    cmd = vb_command(*v, "index", "--rebuild")
    probe = indexed.parent / "probe"
    shutil.copytree(indexed, probe)
    points = write_points(vb_command("--vault", str(probe), "index", "--rebuild"))
    in_new = [n for n, p in enumerate(points, 1) if "/.vb/index-" in p and "rename(" in p]
    before = _manifest(indexed)["index"]
    run = run_failed_at(cmd, points, in_new[-1], "ENOSPC")
    assert run.returncode == 1
    assert run.stderr.startswith("vb: error: disk full while writing")
    assert "the index was not rebuilt, searches use the previous one" in run.stderr
    assert _manifest(indexed)["index"] == before
    assert _generations(indexed) == {before}  # the half-built one removed
    res = run_vb(*v, "search", "engines", "--json")
    assert _ids(res) == ["entity-people-ada"]


def test_a_damaged_current_generation_is_rebuilt(indexed: Path) -> None:
    for seg in index_dir(indexed).iterdir():
        seg.write_bytes(b"garbage")
    res = run_vb("--vault", str(indexed), "search", "engines", "--json")
    assert res.exit_code == 0, res.stderr
    assert _ids(res) == ["entity-people-ada"]


# -- a read-only vault -------------------------------------------------------------------


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[Path]:
    """`folder` seen through a read-only view: a read-only bind mount where this process may
    mount (root), else the folder with its write permissions removed."""
    view = folder.parent / f"{folder.name}-ro"
    if os.geteuid() != 0:
        for path in [folder, *folder.rglob("*")]:
            path.chmod(path.stat().st_mode & ~0o222)
        try:
            yield folder
        finally:
            for path in [folder, *folder.rglob("*")]:
                path.chmod(path.stat().st_mode | 0o200)
        return
    view.mkdir()
    mounted = subprocess.run(["mount", "--bind", str(folder), str(view)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot bind-mount here: {mounted.stderr.decode().strip()}")
    try:
        remount = ["mount", "-o", "remount,ro,bind", str(view)]
        if subprocess.run(remount, capture_output=True).returncode != 0:
            pytest.skip("cannot remount read-only here")
        yield view
    finally:
        subprocess.run(["umount", str(view)], check=True)


def test_a_read_only_vault_is_searched_with_its_cache_elsewhere(
    indexed: Path, tmp_path: Path
) -> None:
    # The index is stale (a note changed) and then missing altogether: both need writing.
    note = indexed / "entities" / "people" / "ada.md"
    note.write_text(note.read_text() + "Ada also sails.\n")
    shutil.rmtree(indexed / ".vb")
    cache = tmp_path / "cache"
    env = {"XDG_CACHE_HOME": str(cache)}
    with read_only(indexed) as view:
        res = run_vb("--vault", str(view), "search", "sails", "--json", env=env)
        assert res.exit_code == 0, res.stderr
        assert _ids(res) == ["entity-people-ada"]
        status = run_vb("--vault", str(view), "status", "--json", env=env)
        location = Path(status.json()["index"]["location"])
        assert location.parent == cache / "vault-brain"
        assert status.json()["index"]["fresh"] is True
        # A write is refused with a true error, and nothing is half-done.
        add = run_vb("--vault", str(view), "add", "-n", "X", "-c", "people", "x", env=env)
        assert add.exit_code == 1
        assert "read-only" in add.stderr.lower() or "permission" in add.stderr.lower()
    assert not (indexed / ".vb").exists()  # nothing was written into the vault
