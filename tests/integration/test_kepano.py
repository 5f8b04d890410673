"""A real hand-made Obsidian vault (a vendored subset of kepano's): vb adopts it and never
rewrites it. The copy in tests/data is never touched; every test works on its own copy.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import stat
from pathlib import Path, PurePosixPath
from typing import Any

import pytest

from conftest import KEPANO, KEPANO_NOTES, snapshot
from vault_brain.entry import main
from vault_brain.storage.notes.frontmatter import parse_text

EVERGREEN = "Notes/Evergreen notes turn ideas into objects that you can manipulate.md"
EVERGREEN_ID = "note-notes-evergreen-notes-turn-ideas-into-objects-that-you-can-manipulate"


def copy_kepano(dest: Path) -> Path:
    """A writable copy (made writable even when the source files are read-only)."""
    shutil.copytree(KEPANO, dest, symlinks=True)
    for folder, dirs, files in os.walk(dest):
        for name in [*dirs, *files]:
            path = Path(folder, name)
            path.chmod(path.stat().st_mode | stat.S_IWUSR)
    dest.chmod(dest.stat().st_mode | stat.S_IWUSR)
    return dest


def mtimes(root: Path, rels: list[str]) -> dict[str, int]:
    return {rel: (root / rel).stat().st_mtime_ns for rel in rels}


@pytest.fixture(scope="module")
def adopted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """kepano's vault adopted by vb and indexed once per module (copied per test)."""
    root = copy_kepano(tmp_path_factory.mktemp("kepano-adopted") / "vault")
    for args in (("init", "--adopt", str(root)), ("--vault", str(root), "index")):
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            assert main(list(args)) == 0
    return root


@pytest.fixture
def kv(adopted: Path, tmp_path: Path) -> Path:
    """This test's own copy of the adopted vault (index included; mtimes kept, so it is fresh)."""
    return Path(shutil.copytree(adopted, tmp_path / "kepano", symlinks=True))


@pytest.fixture(scope="module")
def original() -> dict[str, bytes]:
    snap = snapshot(KEPANO)
    assert len([p for p in snap if p.endswith(".md")]) == KEPANO_NOTES > 50
    return snap


def vb(cli: Any, root: Path, *args: str) -> Any:
    res = cli("--vault", str(root), *args)
    assert res.exit_code == 0, res.stderr
    return res


def first_ids(cli: Any, root: Path, *args: str) -> list[str]:
    return [r["id"] for r in vb(cli, root, "search", *args, "--json").json()["results"]]


# ---------------------------------------------------------------------------
# Adopting


def test_adopt_adds_vb_files_and_changes_no_existing_file(
    tmp_path: Path, cli: Any, original: dict[str, bytes]
) -> None:
    root = copy_kepano(tmp_path / "kepano")
    before_mtimes = mtimes(root, list(original))
    res = cli("init", "--adopt", str(root), "--json")
    assert res.exit_code == 0, res.stderr
    report = res.json()
    after = snapshot(root)

    assert {rel: after[rel] for rel in original} == original
    assert mtimes(root, list(original)) == before_mtimes
    new = sorted(set(after) - set(original))
    assert new == sorted(report["created"])
    assert "STRATEGY.md" in new and "MEMORY.md" in new
    assert not set(report["created"]) & set(original)
    assert report["kept"] == []
    assert (root / ".vb").is_dir()


def test_adopted_vault_indexes_every_note_with_a_unique_id(kv: Path, cli: Any) -> None:
    rebuilt = vb(cli, kv, "index", "--rebuild", "--json").json()
    assert (rebuilt["total"], rebuilt["rebuilt"]) == (KEPANO_NOTES, True)
    notes = vb(cli, kv, "list", "--json").json()["notes"]
    assert len(notes) == KEPANO_NOTES
    assert len({n["id"] for n in notes}) == KEPANO_NOTES
    assert {n["type"] for n in notes} == {"note"}
    on_disk = {p.relative_to(kv).as_posix() for p in kv.rglob("*.md")}
    assert {n["path"] for n in notes} == on_disk - {"STRATEGY.md", "MEMORY.md"}


def test_template_placeholders_are_problems_and_nothing_else_is(kv: Path, cli: Any) -> None:
    """`created: {{date}}` in Obsidian templates is not valid YAML: reported, still indexed."""
    with_placeholder = sorted(
        p.relative_to(kv).as_posix()
        for p in (kv / "Templates").glob("*.md")
        if parse_text(p.read_bytes()).error is not None
    )
    assert len(with_placeholder) >= 10
    assert all("{{" in (kv / rel).read_text() for rel in with_placeholder)
    problems = vb(cli, kv, "status", "--json").json()["problems"]
    assert [p["path"] for p in problems] == with_placeholder
    listed = vb(cli, kv, "list", "--problems", "--json").json()["notes"]
    assert [n["path"] for n in listed] == with_placeholder
    assert "note-templates-book-template" in first_ids(cli, kv, "Book Template")[:3]


# ---------------------------------------------------------------------------
# Reading changes nothing


def test_index_search_list_status_show_change_no_byte(kv: Path, cli: Any) -> None:
    before = snapshot(kv)
    notes = [rel for rel in before if rel.endswith(".md")]
    before_mtimes = mtimes(kv, notes)

    vb(cli, kv, "index", "--rebuild")
    vb(cli, kv, "index")
    for query in ("Kyoto", "cost per use", "evergreen", "meeting", "東京", "template date"):
        vb(cli, kv, "search", query)
        vb(cli, kv, "search", query, "--json", "--include-archive", "-k", "50")
    vb(cli, kv, "list")
    vb(cli, kv, "list", "--problems", "--json")
    vb(cli, kv, "list", "--tag", "categories")
    vb(cli, kv, "status")
    vb(cli, kv, "status", "--json")
    for ref in (
        "note-references-kyoto",
        "Notes/Product usage analysis.md",
        "note-readme",
        "Templates/Book Template.md",
        EVERGREEN_ID,
    ):
        vb(cli, kv, "show", ref)
        vb(cli, kv, "show", ref, "--json")

    assert snapshot(kv) == before
    assert mtimes(kv, notes) == before_mtimes


# ---------------------------------------------------------------------------
# Search quality on real notes


@pytest.mark.parametrize(
    ("query", "expected_first"),
    [
        ("Buy wisely", "note-clippings-buy-wisely"),
        ("Steph Ango", "note-references-steph-ango"),
        ("The Machine Stops", "note-references-the-machine-stops"),
        ("Brown butter nectarine tart", "note-references-brown-butter-nectarine-tart"),
        ("68 Bits of Unsolicited Advice", "note-clippings-68-bits-of-unsolicited-advice"),
        ("Fushimi Inari", "note-references-fushimi-inari"),
        ("Japan trip", "note-notes-2023-japan-trip"),
        ("Zelda", "note-references-the-legend-of-zelda-breath-of-the-wild"),
        ("Minimal Theme", "note-notes-minimal-theme"),
        ("wool socks", "note-clippings-buy-wisely"),  # body text only
        ("preheat oven", "note-references-brown-butter-nectarine-tart"),  # body text only
        ("cost per use", "note-notes-product-usage-analysis"),  # a note without front matter
    ],
)
def test_searches_find_the_expected_note_first(
    kv: Path, cli: Any, query: str, expected_first: str
) -> None:
    hits = vb(cli, kv, "search", query, "--json").json()["results"]
    assert hits and hits[0]["id"] == expected_first
    assert all(h["path"].endswith(".md") and not h["path"].startswith("archive/") for h in hits)


def test_tags_and_folders_filter_real_notes(kv: Path, cli: Any) -> None:
    cats = vb(cli, kv, "list", "--tag", "categories", "--json").json()["notes"]
    assert len(cats) == 21 and all(n["path"].startswith("Categories/") for n in cats)
    assert first_ids(cli, kv, "meetings", "--tag", "categories") == ["note-categories-meetings"]
    evergreen = vb(cli, kv, "list", "--tag", "0🌲", "--json").json()["notes"]
    assert [n["path"] for n in evergreen] == [EVERGREEN]
    daily = vb(cli, kv, "list", "--category", "daily", "--json").json()["notes"]
    assert [n["path"] for n in daily] == ["Daily/2023-09-12.md", "Daily/2023-09-30.md"]


def _stem_queries(kv: Path, cli: Any, tmp_path: Path) -> list[dict[str, Any]]:
    notes = vb(cli, kv, "list", "--json").json()["notes"]
    queries = tmp_path / "queries.jsonl"
    queries.write_text(
        "\n".join(
            json.dumps({"id": n["id"], "query": PurePosixPath(n["path"]).stem}, ensure_ascii=False)
            for n in notes
        ),
        encoding="utf-8",
    )
    out = vb(cli, kv, "search", "--queries", str(queries), "-k", "5").stdout
    return [json.loads(line) for line in out.splitlines()]


def test_every_note_is_in_the_top_5_for_its_own_file_name(
    kv: Path, cli: Any, tmp_path: Path
) -> None:
    answers = _stem_queries(kv, cli, tmp_path)
    assert len(answers) == KEPANO_NOTES
    missed = [a["id"] for a in answers if a["id"] not in [h["id"] for h in a["results"]]]
    assert missed == []
    firsts = sum(1 for a in answers if a["results"] and a["results"][0]["id"] == a["id"])
    assert firsts >= 0.68 * KEPANO_NOTES  # 70 of the full 103 at the time of writing


def test_note_is_found_by_its_file_name_when_its_body_has_a_later_h1(kv: Path, cli: Any) -> None:
    shown = vb(cli, kv, "show", "References/Kevin Kelly.md", "--json").json()["note"]
    hits = first_ids(cli, kv, "Kevin Kelly")
    assert "note-references-kevin-kelly" in hits[:3]
    assert shown["title"] == "Kevin Kelly"


# ---------------------------------------------------------------------------
# Writing one note touches only that note's changed lines


def test_update_tag_changes_only_the_tags_lines_of_that_note(kv: Path, cli: Any) -> None:
    before = snapshot(kv)
    vb(cli, kv, "update", EVERGREEN_ID, "--tag", "x")
    after = snapshot(kv)
    assert [rel for rel in after if after[rel] != before.get(rel)] == [EVERGREEN]

    old = before[EVERGREEN].decode().splitlines(keepends=True)
    new = after[EVERGREEN].decode().splitlines(keepends=True)
    tags_at = old.index("tags:\n")
    close = old.index("---\n", 1)
    assert old[tags_at + 1] == "  - 0🌲\n"
    updated = new[close + 1]
    assert updated.startswith("updated: ")
    # block style and indent kept; the id the note has (vb's first edit) and vb's `updated`
    # line appended before the closing ---
    assert new == [
        *old[: tags_at + 1],
        "  - x\n",
        *old[tags_at + 2 : close],
        f"id: {EVERGREEN_ID}\n",
        updated,
        *old[close:],
    ]
    meta = parse_text(after[EVERGREEN]).meta
    assert meta["tags"] == ["x"] and meta["id"] == EVERGREEN_ID
    assert vb(cli, kv, "list", "--tag", "x", "--json").json()["notes"][0]["path"] == EVERGREEN


def test_update_tag_on_a_note_without_tags_appends_one_flow_line(kv: Path, cli: Any) -> None:
    rel = "Notes/Minimal Theme.md"
    before = snapshot(kv)
    vb(cli, kv, "update", "note-notes-minimal-theme", "--tag", "theme")
    after = snapshot(kv)
    assert [r for r in after if after[r] != before.get(r)] == [rel]
    old = before[rel].decode().splitlines(keepends=True)
    new = after[rel].decode().splitlines(keepends=True)
    close = old.index("---\n", 1)
    assert new[:close] == old[:close]
    assert new[close] == "id: note-notes-minimal-theme\n"  # vb's first edit keeps the id
    assert new[close + 1].startswith("updated: ")  # vb's changes are appended in their order
    assert new[close + 2] == "tags: [theme]\n"
    assert new[close + 3 :] == old[close:]


@pytest.mark.parametrize(
    "rel",
    [
        "Notes/Product usage analysis.md",  # no front matter, no final newline
        "Readme.md",  # no front matter, at the vault root
        "Daily/2023-09-30.md",  # no front matter
        "References/Kyoto.md",  # front matter
        EVERGREEN,  # front matter with block-style tags
        "Categories/Meetings.md",  # front matter, tiny body
    ],
)
def test_delete_then_restore_gives_back_identical_bytes(kv: Path, cli: Any, rel: str) -> None:
    before = snapshot(kv)
    had_front_matter = before[rel].startswith(b"---")
    note_id = vb(cli, kv, "show", rel, "--json").json()["note"]["id"]

    vb(cli, kv, "delete", note_id, "--reason", "kepano test")
    archived = kv / "archive" / rel
    assert not (kv / rel).exists() and archived.is_file()
    meta = parse_text(archived.read_bytes()).meta
    assert meta["archive_reason"] == "kepano test" and meta["archived_from"] == rel
    assert bool(meta.get("archive_added_front_matter")) is not had_front_matter
    assert note_id not in first_ids(cli, kv, PurePosixPath(rel).stem)

    vb(cli, kv, "restore", note_id)
    after = snapshot(kv)
    assert not archived.exists()
    assert {r: b for r, b in after.items() if not r.startswith("logs/")} == {
        r: b for r, b in before.items() if not r.startswith("logs/")
    }
    assert note_id in first_ids(cli, kv, PurePosixPath(rel).stem)


def test_deleting_a_note_with_malformed_front_matter_is_refused_and_nothing_moves(
    kv: Path, cli: Any
) -> None:
    before = snapshot(kv)
    res = cli("--vault", str(kv), "delete", "Templates/Book Template.md")
    assert res.exit_code == 1
    assert "front matter is not valid YAML" in res.stderr and "vb: hint:" in res.stderr
    assert snapshot(kv) == before
