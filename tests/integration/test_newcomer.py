"""Small things a newcomer hit: `--vault` on a folder that is not a vault, a category that
is a path, counts worded right."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import run_vb, snapshot
from vault_brain.domain.errors import UsageError
from vault_brain.domain.text import check_category, counted, plural


def plain_folder(tmp_path: Path) -> Path:
    """A person's Obsidian folder that vb never adopted."""
    root = tmp_path / "Obsidian"
    (root / ".obsidian").mkdir(parents=True)
    (root / ".obsidian" / "app.json").write_text("{}", encoding="utf-8")
    (root / "Daily").mkdir()
    (root / "Daily" / "2026-01-02.md").write_text("# Today\n\nHelm charts.\n", encoding="utf-8")
    return root


@pytest.mark.parametrize("argv", [["search", "helm"], ["list"], ["add", "x", "-n", "y"]])
def test_vault_flag_on_a_plain_folder_is_refused(cli: Any, tmp_path: Path, argv: list[str]) -> None:
    root = plain_folder(tmp_path)
    before = snapshot(root)
    res = cli("--vault", str(root), *argv)
    assert res.exit_code == 5, res
    assert "is not a vault" in res.stderr and "vb init --adopt" in res.stderr
    assert len([line for line in res.stderr.splitlines() if line.startswith("vb: error")]) == 1
    assert snapshot(root) == before
    assert not (root / ".vb").exists()


@pytest.mark.system
def test_vault_flag_on_a_plain_folder_as_a_process(tmp_path: Path) -> None:
    root = plain_folder(tmp_path)
    res = run_vb("--vault", str(root), "search", "helm")  # (the fast search path)
    assert res.exit_code == 5 and res.stdout == ""
    assert "is not a vault" in res.stderr and "vb init --adopt" in res.stderr
    assert not (root / ".vb").exists()
    doc = json.loads(run_vb("search", "helm", "--json", env={"VB_VAULT": str(root)}).stdout)
    assert doc["error"]["code"] == "no_vault" and "VB_VAULT" in doc["error"]["message"]
    assert not (root / ".vb").exists()
    # adopted, it is a vault
    assert run_vb("init", "--adopt", str(root)).exit_code == 0
    assert run_vb("--vault", str(root), "search", "helm").exit_code == 0


@pytest.mark.parametrize("category", ["../../etc", "a/b", "..", "a\\b"])
def test_a_category_that_is_a_path_is_refused(cli: Any, vault: Path, category: str) -> None:
    before = snapshot(vault)
    res = cli("--vault", str(vault), "add", "The deploy uses helm.", "-n", "Deploy", "-c", category)
    assert res.exit_code == 2 and "is a path" in res.stderr, res
    assert snapshot(vault) == before
    assert not (vault / "etc").exists() and not (vault / "entities" / "etc").exists()
    res = cli("--vault", str(vault), "search", "helm", "--category", category)
    assert res.exit_code == 2 and "is a path" in res.stderr


def test_check_category() -> None:
    assert check_category("projects") == "projects"
    with pytest.raises(UsageError):
        check_category("../../etc")


def test_counts_are_worded() -> None:
    assert counted(1, "note") == "1 note"
    assert counted(2, "note") == "2 notes"
    assert counted(0, "memory") == "0 memories"
    assert plural(3, "conflict copy") == "conflict copies"
    assert plural(2, "day") == "days"


def test_one_note_listed(cli: Any, vault: Path) -> None:
    added = cli(
        "--vault", str(vault), "add", "Helm charts deploy it.", "-n", "Deploy", "-c", "projects"
    )
    assert added.exit_code == 0, added.stderr
    listed = cli("--vault", str(vault), "list", "--type", "entity")
    assert listed.stdout.rstrip().endswith("\n1 note"), listed.stdout
