"""End-to-end through the CLI: add, search, archive, restore on a real vault."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import run_vb, snapshot


def test_add_search_delete_restore_round_trip(vault: Path, cli: Any) -> None:
    added = cli(
        "--vault",
        str(vault),
        "add",
        "--name",
        "Alice Smith",
        "-c",
        "people",
        "--tag",
        "friend",
        "--json",
        "Alice prefers green tea.",
    )
    assert added.exit_code == 0, added.stderr
    note = added.json()["note"]
    assert note["id"] == "entity-people-alice-smith"
    assert note["path"] == "entities/people/alice-smith.md"
    before = (vault / note["path"]).read_bytes()

    found = cli("--vault", str(vault), "search", "tea", "--json").json()
    assert found["version"] == 2
    assert [r["id"] for r in found["results"]] == [note["id"]]

    assert cli("--vault", str(vault), "delete", note["id"], "--reason", "test").exit_code == 0
    assert not (vault / note["path"]).exists()
    assert (vault / "archive" / note["path"]).exists()
    assert cli("--vault", str(vault), "search", "tea", "--json").json()["results"] == []
    archived = cli("--vault", str(vault), "search", "tea", "--include-archive", "--json").json()
    assert [r["path"] for r in archived["results"]] == ["archive/" + note["path"]]

    assert cli("--vault", str(vault), "restore", note["id"]).exit_code == 0
    assert (vault / note["path"]).read_bytes() == before


def test_subprocess_entry_point_reports_missing_vault(tmp_path: Path) -> None:
    res = run_vb("--vault", str(tmp_path / "nope"), "search", "x")
    assert res.exit_code == 5
    assert "does not exist" in res.stderr and "hint:" in res.stderr
    assert res.stdout == ""
    assert snapshot(tmp_path) == {}
