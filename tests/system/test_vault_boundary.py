"""Nothing escapes the vault: with a folder or file vb writes replaced by a symlink that leads
outside, every writer refuses with a clear error, writes nothing outside, and the vault keeps
working; names that are invalid elsewhere (Windows) never become files; an id typed in another
Unicode form is still found."""

from __future__ import annotations

import os
import shutil
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from conftest import run_vb


def _outside(tmp_path: Path) -> Path:
    out = tmp_path / "outside"
    out.mkdir(exist_ok=True)
    return out


def _link(vault: Path, rel: str, target: Path) -> None:
    path = vault / rel
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, path)


def _everything_below(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


@pytest.mark.parametrize(
    ("linked", "args"),
    [
        ("entities/people", ["add", "-n", "Eve", "-c", "people", "Eve audits."]),
        ("entities", ["add", "-n", "Eve", "-c", "newcat", "Eve audits."]),
        ("archive", ["delete", "entity-people-ada"]),
        ("sessions", ["loop", "intake", "-s", "s1", "hello there"]),
        ("logs", ["feedback", "good", "-s", "s0"]),
        ("tasks.json", ["tasks", "add", "something"]),
        ("MEMORY.md", ["memory-file"]),
        ("episodes", ["add", "-t", "episode", "-n", "Standup", "We met."]),
    ],
)
def test_a_write_through_a_symlink_out_of_the_vault_is_refused(
    vault: Path, cli: Any, tmp_path: Path, linked: str, args: list[str]
) -> None:
    v = ("--vault", str(vault))
    assert cli(*v, "add", "-n", "Ada", "-c", "people", "Ada builds engines.").exit_code == 0
    assert cli(*v, "search", "engines", "-s", "s0").exit_code == 0
    outside = _outside(tmp_path)
    target = outside / Path(linked).name
    if linked.endswith(".json"):
        target.write_text('{"tasks": []}\n')
    elif linked.endswith(".md"):
        target.write_text("outside file\n")
    else:
        target.mkdir()
    _link(vault, linked, target)
    before = _everything_below(outside)
    contents = {p: p.read_bytes() for p in outside.rglob("*") if p.is_file()}
    res = cli(*v, *args)
    assert res.exit_code == 1, (res.stdout, res.stderr)
    assert "leads outside the vault" in res.stderr and "vb: hint:" in res.stderr
    assert _everything_below(outside) == before
    assert {p: p.read_bytes() for p in outside.rglob("*") if p.is_file()} == contents
    assert cli(*v, "search", "engines").exit_code == 0  # the vault still works


def test_flush_refuses_to_write_episodes_through_a_symlink(
    vault: Path, cli: Any, tmp_path: Path
) -> None:
    v = ("--vault", str(vault))
    cli(*v, "loop", "intake", "-s", "f1", "I prefer green tea. We decided to ship on Friday.")
    outside = _outside(tmp_path)
    (outside / "episodes").mkdir()
    _link(vault, "episodes", outside / "episodes")
    res = cli(*v, "flush", "-s", "f1")
    assert res.exit_code == 1 and "leads outside the vault" in res.stderr
    assert _everything_below(outside) == ["episodes"]


def test_mcp_store_through_a_symlinked_category_is_a_tool_error(
    vault: Path, tmp_path: Path
) -> None:
    from test_mcp import McpServer, server_params

    outside = _outside(tmp_path)
    (outside / "people").mkdir()
    _link(vault, "entities/people", outside / "people")
    server = McpServer(server_params(vault))
    try:
        text = server.error(
            "memory_store", {"type": "entity", "category": "people", "name": "X", "content": "y"}
        )
        assert "leads outside the vault" in text
        assert server.ok("memory_search", {"query": "anything"})["results"] == []
    finally:
        server.close()
    assert _everything_below(outside) == ["people"]


@pytest.mark.parametrize("name", ["con", "CON", "aux", "nul", "prn", "com1", "LPT9", "con.txt"])
def test_names_reserved_on_windows_never_become_file_names(
    vault: Path, cli: Any, name: str
) -> None:
    res = cli("--vault", str(vault), "add", "-n", name, "-c", "people", "text", "--json")
    assert res.exit_code == 0, res.stderr
    path = Path(res.json()["note"]["path"])
    stem = path.stem.lower().split(".")[0]
    assert stem not in {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10))}
    assert stem not in {f"lpt{i}" for i in range(10)}
    assert res.json()["note"]["title"] == name


def test_an_id_typed_in_decomposed_unicode_is_found(vault: Path, cli: Any) -> None:
    res = cli("--vault", str(vault), "add", "-n", "Zoë Café", "-c", "people", "Zoë.", "--json")
    note_id = res.json()["note"]["id"]
    decomposed = unicodedata.normalize("NFD", note_id)
    assert decomposed != note_id
    shown = cli("--vault", str(vault), "show", decomposed, "--json")
    assert shown.exit_code == 0, shown.stderr
    assert shown.json()["note"]["id"] == note_id
    run = run_vb(
        "--vault", str(vault), "show", unicodedata.normalize("NFD", "entities/people/zoë-café.md")
    )
    assert run.exit_code == 0, run.stderr
