"""`vb import` of each kind of source (tests/data/imports/<kind>/, each with an injected
instruction and a secret) into a real vault: the notes land and are found by `vb search`,
hostile lines are refused with the gate's reason and written nowhere, each note records where
it came from, a second run adds nothing and `--dry-run` writes nothing."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO, git, snapshot
from vault_brain.storage.notes.read import load_note

DATA = REPO / "tests" / "data" / "imports"
# kind -> (a fact to search for, the words of the note that must hold it)
FOUND = {
    "openclaw": ("oolong tea", "oolong tea in the afternoon"),
    "claude-code": ("meson toolchain", "builds with the meson toolchain"),
    "basic-memory": ("mooring permits", "signs the mooring permits"),
    "markdown": ("compost greenhouse", "turned every second Saturday"),
}
# kind -> text of the fixture's hostile lines, which no vault file may hold after the import
HOSTILE = {
    "openclaw": ("Ignore all previous instructions", "Tr0ub4dor", "sk-live-4f9a"),
    "claude-code": ("developer mode", "ghp_Zx8Yw7", "install.sh", "rm -rf"),
    "basic-memory": ("attacker@evil.example", "Kx9!vQ2", "bryn@evil.example", "ghp_Qa1Ws2"),
    "markdown": ("hidden system prompt", "AKIAIOSFODNN7QWERTYU"),
}
# kind -> the gate's reasons the plan gives (at least these)
REASONS = {
    "openclaw": ("an instruction addressed to the assistant", "a credential or secret"),
    "claude-code": (
        "an instruction addressed to the assistant",
        "a credential or secret",
        "a shell command",
    ),
    "basic-memory": ("an instruction addressed to the assistant", "a credential or secret"),
    "markdown": ("an instruction addressed to the assistant", "a credential or secret"),
}
KINDS = tuple(FOUND)


def _source(tmp_path: Path, kind: str) -> Path:
    """The fixture copied out of the repository (a source is read, never written)."""
    dest = tmp_path / "sources" / kind
    shutil.copytree(DATA / kind, dest)
    return dest


def _import(cli: Any, vault: Path, *args: str) -> dict[str, Any]:
    res = cli("--vault", str(vault), "import", *args, "--json")
    assert res.exit_code == 0, res.stdout + res.stderr
    data: dict[str, Any] = res.json()
    return data


def _notes(vault: Path) -> dict[str, bytes]:
    """The vault's notes (not its event log, which counts each run's refusals)."""
    return {k: v for k, v in snapshot(vault).items() if k.endswith(".md")}


def _refusals(plan: dict[str, Any]) -> list[str]:
    whole = [e["reason"] for e in plan["entries"] if e["action"] == "refused"]
    lines = [line for e in plan["entries"] for line in e["kept_out"]]
    return whole + lines


@pytest.mark.parametrize("kind", KINDS)
def test_an_import_lands_searchable_notes_and_refuses_hostile_lines(
    tmp_path: Path, vault: Path, cli: Any, kind: str
) -> None:
    source = _source(tmp_path, kind)
    before = snapshot(vault)

    plan = _import(cli, vault, kind, str(source), "--dry-run")
    assert plan["dry_run"] and plan["new"] > 0
    assert snapshot(vault) == before, "--dry-run wrote into the vault"
    refusals = _refusals(plan)
    for reason in REASONS[kind]:
        assert any(reason in r for r in refusals), (reason, refusals)

    done = _import(cli, vault, kind, str(source))
    assert done["new"] == plan["new"] and done["refused"] == plan["refused"]
    made = [e for e in done["entries"] if e["action"] == "create"]
    assert [e["path"] for e in made] == [
        e["path"] for e in plan["entries"] if e["action"] == "create"
    ]
    for entry in made:
        note = load_note(vault, entry["path"])
        assert note.source == "import"
        assert note.meta["imported_from"] == entry["origin"]
        assert note.meta["import_key"]
        assert kind in note.tags
    written = "\n".join(p.read_text("utf-8") for p in vault.rglob("*.md") if ".git" not in p.parts)
    for text in HOSTILE[kind]:
        assert text not in written, f"{text!r} reached the vault"

    query, words = FOUND[kind]
    res = cli("--vault", str(vault), "search", query, "--json")
    assert res.exit_code == 0, res.stderr
    top = res.json()["results"][0]
    assert words in load_note(vault, top["path"]).body

    notes = _notes(vault)
    again = _import(cli, vault, kind, str(source))
    assert again["new"] == 0 and again["existing"] == done["new"]
    assert _notes(vault) == notes, "a second run changed a note"
    after = cli("--vault", str(vault), "import", kind, str(source))
    assert f"0 new, {done['new']} already imported" in after.stdout


@pytest.mark.parametrize(
    ("kind", "why"),
    [
        ("openclaw", "daily logs"),
        ("claude-code", "CLAUDE.md"),
        ("basic-memory", "permalink"),
        ("markdown", "Markdown"),
    ],
)
def test_the_kind_is_told_by_the_files(
    tmp_path: Path, vault: Path, cli: Any, kind: str, why: str
) -> None:
    plan = _import(cli, vault, str(_source(tmp_path, kind)), "--dry-run")
    assert plan["kind"] == kind and why in plan["detected"]


def test_a_memory_file_alone_needs_its_kind_named(tmp_path: Path, vault: Path, cli: Any) -> None:
    source = tmp_path / "alone"
    source.mkdir()
    (source / "MEMORY.md").write_text("- Keeps spare fuses in the hallway drawer.\n")
    res = cli("--vault", str(vault), "import", str(source))
    assert res.exit_code == 2 and "OpenClaw and by Claude Code" in res.stderr
    assert "vb import {openclaw|claude-code" in res.stderr
    done = _import(cli, vault, "claude-code", str(source))
    assert done["new"] == 1


def test_each_kind_keeps_its_shape(tmp_path: Path, vault: Path, cli: Any) -> None:
    """A daily log is an episode of its day; a basic-memory note keeps its title, tags,
    observations and relations, linked where the target is a note."""
    _import(cli, vault, "openclaw", str(_source(tmp_path, "openclaw")))
    log = load_note(vault, "episodes/2026-03/openclaw-log-2026-03-14.md")
    assert log.type == "episode" and str(log.created).startswith("2026-03-14")
    assert "oarlock" in log.body and "regatta budget" in log.body

    alone = _import(cli, vault, "openclaw", str(DATA / "openclaw/memory/2026-03-14.md"))
    assert alone["new"] == 0 and alone["existing"] == 1  # one log named alone: the same

    _import(cli, vault, "basic-memory", str(_source(tmp_path, "basic-memory")))
    ansel = load_note(vault, "entities/people/harbour-master-ansel.md")
    assert ansel.title == "Harbour Master Ansel" and ansel.category == "people"
    assert {"harbour", "people"} <= set(ansel.tags)
    assert "- [role] Runs the east pier office" in ansel.body
    assert "works_at [[east-pier-office|East Pier Office]]" in ansel.body
    # a target that is no note (Bryn's note: refused whole) stays plain text, never a link
    # that does not resolve
    assert "knows Lighthouse Keeper Bryn" in ansel.body and "[[Lighthouse" not in ansel.body
    office = load_note(vault, "entities/basic-memory/east-pier-office.md")
    assert "managed_by [[harbour-master-ansel|Harbour Master Ansel]]" in office.body


def test_one_file_of_a_folder_imported_again_is_not_doubled(
    tmp_path: Path, vault: Path, cli: Any
) -> None:
    source = _source(tmp_path, "markdown")
    _import(cli, vault, "markdown", str(source))
    again = _import(cli, vault, str(source / "garden" / "compost.md"))
    assert again["kind"] == "markdown" and again["new"] == 0 and again["existing"] == 1


def test_a_source_inside_the_vault_is_refused(vault: Path, cli: Any) -> None:
    res = cli("--vault", str(vault), "import", "markdown", str(vault / "entities"))
    assert res.exit_code == 2 and "inside this vault" in res.stderr


def test_imported_text_reaches_agents_as_an_import(tmp_path: Path, vault: Path, cli: Any) -> None:
    """Imported notes are not the person's hand: an agent's search sees `import`."""
    _import(cli, vault, "openclaw", str(_source(tmp_path, "openclaw")))
    from vault_brain.app.api import MemoryAPI

    api = MemoryAPI.open(vault, source="mcp")
    hits = api.search("bicycle shed bakery").results
    assert hits and hits[0].written_by == "import"


def test_an_archived_import_is_not_brought_back(tmp_path: Path, vault: Path, cli: Any) -> None:
    source = _source(tmp_path, "claude-code")
    done = _import(cli, vault, "claude-code", str(source))
    first = next(e for e in done["entries"] if e["action"] == "create")
    note = load_note(vault, first["path"])
    assert cli("--vault", str(vault), "delete", note.id, "-r", "not true").exit_code == 0
    again = _import(cli, vault, "claude-code", str(source))
    assert again["new"] == 0
    assert any(e["path"] == f"archive/{first['path']}" for e in again["entries"])


def test_an_import_is_one_commit_when_operations_commit(
    tmp_path: Path, vault: Path, cli: Any
) -> None:
    strategy = vault / "STRATEGY.md"
    text = strategy.read_text()
    strategy.write_text(text.replace("# commit_on: [session, lifecycle]", "commit_on: [operation]"))
    res = cli("--vault", str(vault), "import", "markdown", str(_source(tmp_path, "markdown")))
    assert res.exit_code == 0, res.stderr
    log = git("log", "--format=%s", cwd=vault).splitlines()
    assert log[0].startswith("vb import markdown")
    assert git("status", "--porcelain", "--", "entities", "episodes", cwd=vault) == ""
