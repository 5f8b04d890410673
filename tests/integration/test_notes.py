"""Reading every note a person may write: vb derives what is missing and never writes the file."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import snapshot
from vault_brain.domain.notes.model import derive_id, derive_location
from vault_brain.domain.text import slugify
from vault_brain.storage.notes.frontmatter import parse_text
from vault_brain.storage.notes.read import note_from_bytes

BOM = b"\xef\xbb\xbf"


def put(vault: Path, rel: str, raw: bytes) -> Path:
    path = vault / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(raw)
    return path


def vb(cli: Any, vault: Path, *args: str) -> Any:
    res = cli("--vault", str(vault), *args)
    assert res.exit_code == 0, res.stderr
    return res


def search_ids(cli: Any, vault: Path, *args: str) -> list[str]:
    return [r["id"] for r in vb(cli, vault, "search", *args, "--json").json()["results"]]


def list_paths(cli: Any, vault: Path, *args: str) -> list[str]:
    return [n["path"] for n in vb(cli, vault, "list", *args, "--json").json()["notes"]]


# ---------------------------------------------------------------------------
# Shapes of front matter


def test_note_without_front_matter_gets_title_from_heading_and_id_from_path() -> None:
    raw = b"# Green tea\n\nAlice drinks it every morning.\n"
    note = note_from_bytes("entities/preferences/tea.md", raw)
    assert note.has_front_matter is False
    assert note.meta == {}
    assert note.body == raw.decode()
    assert note.title == "Green tea"
    assert (note.id, note.type, note.category) == (
        "entity-preferences-tea",
        "entity",
        "preferences",
    )
    assert note.problem is None


def test_note_without_heading_or_title_is_titled_by_its_file_name() -> None:
    note = note_from_bytes("notes/Meeting notes.md", b"just text\n")
    assert note.title == "Meeting notes"
    assert note.id == "note-notes-meeting-notes"


def test_empty_front_matter_block_is_front_matter_with_no_keys() -> None:
    note = note_from_bytes("notes/e.md", b"---\n---\nbody text\n")
    assert note.has_front_matter is True
    assert note.meta == {}
    assert note.body == "body text\n"
    assert note.problem is None
    assert note.id == "note-notes-e"


@pytest.mark.parametrize(
    "raw",
    [
        b"---\nid: x1\ntags: [a, b]\n---\nline one\nline two\n",
        b"---\r\nid: x1\r\ntags: [a, b]\r\n---\r\nline one\r\nline two\r\n",
        BOM + b"---\nid: x1\ntags: [a, b]\n---\nline one\nline two\n",
        BOM + b"---\r\nid: x1\r\ntags: [a, b]\r\n---\r\nline one\r\nline two\r\n",
    ],
    ids=["lf", "crlf", "bom-lf", "bom-crlf"],
)
def test_crlf_and_bom_notes_read_like_plain_lf_notes(raw: bytes) -> None:
    note = note_from_bytes("notes/x.md", raw)
    assert note.meta == {"id": "x1", "tags": ["a", "b"]}
    assert note.id == "x1"
    assert note.tags == ["a", "b"]
    assert note.body == "line one\nline two\n"
    assert "\r" not in note.body and "\ufeff" not in note.body
    assert note.has_front_matter is True


@pytest.mark.parametrize(
    "raw", [b"---\r\n---\r\nbody\r\n", BOM + b"---\n---\nbody\n"], ids=["crlf", "bom"]
)
def test_empty_front_matter_with_crlf_or_bom(raw: bytes) -> None:
    parsed = parse_text(raw)
    assert (parsed.meta, parsed.body, parsed.has_front_matter, parsed.error) == (
        {},
        "body\n",
        True,
        None,
    )


@pytest.mark.parametrize(
    ("aliases_yaml", "expected"),
    [
        ("aliases: [Ally, 'A. Smith']", ["Ally", "A. Smith"]),
        ("aliases:\n  - Ally\n  - A. Smith", ["Ally", "A. Smith"]),
        ("aliases: Ally", ["Ally"]),
        ("aliases: Ally, A. Smith", ["Ally", "A. Smith"]),
        ("aliases:", []),
        ("aliases: []", []),
        ('aliases: ""', []),
    ],
    ids=["flow", "block", "string", "comma-string", "empty", "empty-list", "empty-string"],
)
def test_aliases_as_list_string_or_empty(aliases_yaml: str, expected: list[str]) -> None:
    note = note_from_bytes("notes/a.md", f"---\n{aliases_yaml}\n---\nbody\n".encode())
    assert note.aliases == expected
    assert note.problem is None


def test_single_alias_string_with_a_space_is_one_alias() -> None:
    note = note_from_bytes("notes/a.md", "---\naliases: Dr Zoë\n---\nbody\n".encode())
    assert note.aliases == ["Dr Zoë"]


@pytest.mark.parametrize(
    ("tags_yaml", "expected"),
    [
        ("tags: [alpha, Beta]", ["alpha", "beta"]),
        ("tags:\n  - alpha\n  - Beta", ["alpha", "beta"]),
        ("tags:\n- alpha\n- Beta", ["alpha", "beta"]),
        ("tags: alpha", ["alpha"]),
        ("tags: alpha, beta", ["alpha", "beta"]),
        ("tags: alpha beta", ["alpha", "beta"]),
        ("tags: ['#alpha', '#project/Alpha']", ["alpha", "project/alpha"]),
        ('tags:\n  - "#alpha"\n  - project/alpha', ["alpha", "project/alpha"]),
        ('tags: "#alpha #beta"', ["alpha", "beta"]),
        ("tags: [alpha, alpha, '#ALPHA']", ["alpha"]),
        ("tags:", []),
        ("tags: []", []),
    ],
    ids=[
        "flow",
        "block-indented",
        "block-flush",
        "string",
        "comma-string",
        "space-string",
        "hash-flow",
        "hash-block",
        "hash-string",
        "duplicates",
        "empty",
        "empty-list",
    ],
)
def test_tags_in_every_style_normalise_to_lowercase_without_hash(
    tags_yaml: str, expected: list[str]
) -> None:
    note = note_from_bytes("notes/t.md", f"---\n{tags_yaml}\n---\nbody\n".encode())
    assert note.tags == expected


def test_hierarchical_tag_is_found_by_its_parent_in_search_and_list(vault: Path, cli: Any) -> None:
    put(vault, "notes/alpha.md", b"---\ntags: ['#project/alpha']\n---\nquokka plans for alpha\n")
    put(vault, "notes/other.md", b"---\ntags: [projection, misc]\n---\nquokka unrelated note\n")
    put(vault, "notes/plain.md", b"quokka without tags\n")

    assert sorted(search_ids(cli, vault, "quokka")) == [
        "note-notes-alpha",
        "note-notes-other",
        "note-notes-plain",
    ]
    assert search_ids(cli, vault, "quokka", "--tag", "project") == ["note-notes-alpha"]
    assert search_ids(cli, vault, "quokka", "--tag", "project/alpha") == ["note-notes-alpha"]
    assert search_ids(cli, vault, "quokka", "--tag", "#Project") == ["note-notes-alpha"]
    assert search_ids(cli, vault, "quokka", "--tag", "alpha") == []
    assert list_paths(cli, vault, "--tag", "project") == ["notes/alpha.md"]
    assert list_paths(cli, vault, "--tag", "project/alpha") == ["notes/alpha.md"]
    assert list_paths(cli, vault, "--tag", "#project") == ["notes/alpha.md"]
    assert list_paths(cli, vault, "--tag", "proj") == []


# ---------------------------------------------------------------------------
# Non-ASCII text and paths


def test_non_ascii_path_and_title_are_searchable_and_shown_by_id_and_path(
    vault: Path, cli: Any
) -> None:
    rel = "entities/people/zoë-ångström.md"
    put(
        vault,
        rel,
        "---\ntitle: Zoë Ångström\n---\nZoë measures wavelengths in ångström.\n".encode(),
    )
    jp_rel = "notes/東京.md"
    put(
        vault,
        jp_rel,
        "---\ntitle: 東京タワー\ntags: [旅行]\n---\n東京タワー に 行った。\n".encode(),
    )

    hits = vb(cli, vault, "search", "Ångström", "--json").json()["results"]
    assert [(h["id"], h["path"], h["title"]) for h in hits] == [
        ("entity-people-zoë-ångström", rel, "Zoë Ångström")
    ]
    jp = vb(cli, vault, "search", "東京タワー", "--json").json()["results"]
    assert [(h["id"], h["path"], h["title"]) for h in jp] == [
        ("note-notes-東京", jp_rel, "東京タワー")
    ]
    assert list_paths(cli, vault, "--tag", "旅行") == [jp_rel]

    by_id = vb(cli, vault, "show", "entity-people-zoë-ångström", "--json").json()["note"]
    by_path = vb(cli, vault, "show", rel, "--json").json()["note"]
    assert by_id == by_path
    assert by_id["path"] == rel
    assert by_id["body"] == "Zoë measures wavelengths in ångström.\n"
    assert (by_id["type"], by_id["category"]) == ("entity", "people")

    human = vb(cli, vault, "show", "note-notes-東京").stdout
    assert "東京タワー に 行った。" in human
    assert f"path:      {jp_rel}" in human


def test_a_note_that_is_not_utf8_is_still_read_and_searchable(vault: Path, cli: Any) -> None:
    put(vault, "notes/latin.md", b"---\ntitle: caf\xe9\n---\nlatin1 body with caf\xe9 au lait\n")
    assert search_ids(cli, vault, "latin1") == ["note-notes-latin"]
    note = vb(cli, vault, "show", "notes/latin.md", "--json").json()["note"]
    assert note["title"] == "caf\ufffd"  # undecodable byte shown as U+FFFD, never a crash


# ---------------------------------------------------------------------------
# Malformed YAML


MALFORMED = b"---\ntitle: [unclosed\nuser: x\n---\nThe wombat digs at night.\n"


def test_malformed_front_matter_is_reported_not_raised() -> None:
    note = note_from_bytes("notes/bad.md", MALFORMED)
    assert note.problem is not None and note.problem.startswith("malformed front matter:")
    assert note.meta == {}
    assert note.body == "The wombat digs at night.\n"
    assert note.id == "note-notes-bad"


def test_front_matter_without_closing_line_is_a_problem() -> None:
    note = note_from_bytes("notes/open.md", b"---\ntitle: x\nbody without end\n")
    assert note.problem == "malformed front matter: front matter has no closing --- line"


@pytest.mark.parametrize("raw", [b"---\n- a\n- b\n---\nbody\n", b"---\njust words\n---\nbody\n"])
def test_front_matter_that_is_not_a_mapping_is_a_problem(raw: bytes) -> None:
    note = note_from_bytes("notes/seq.md", raw)
    assert note.problem == "malformed front matter: front matter is not a mapping of keys to values"
    assert note.body == "body\n"


def test_malformed_note_is_searchable_and_listed_as_a_problem(vault: Path, cli: Any) -> None:
    put(vault, "notes/bad.md", MALFORMED)
    put(vault, "notes/good.md", b"---\ntitle: Good\n---\nThe wombat sleeps by day.\n")

    assert sorted(search_ids(cli, vault, "wombat")) == ["note-notes-bad", "note-notes-good"]
    status = vb(cli, vault, "status", "--json").json()
    assert [p["path"] for p in status["problems"]] == ["notes/bad.md"]
    assert status["problems"][0]["problem"].startswith("malformed front matter:")
    assert list_paths(cli, vault, "--problems") == ["notes/bad.md"]
    shown = vb(cli, vault, "show", "notes/bad.md", "--json").json()["note"]
    assert shown["problem"].startswith("malformed front matter:")
    assert "problem:   malformed front matter" in vb(cli, vault, "show", "notes/bad.md").stdout


def test_fixing_a_malformed_note_clears_the_problem(vault: Path, cli: Any) -> None:
    path = put(vault, "notes/bad.md", MALFORMED)
    assert list_paths(cli, vault, "--problems") == ["notes/bad.md"]
    path.write_bytes(b"---\ntitle: Fixed\n---\nThe wombat digs at night, more.\n")
    assert list_paths(cli, vault, "--problems") == []
    assert vb(cli, vault, "status", "--json").json()["problems"] == []


def test_impossible_calendar_date_is_a_problem_not_a_crash(vault: Path, cli: Any) -> None:
    put(vault, "notes/feb.md", b"---\ncreated: 2023-02-30\n---\nfebruary thirtieth platypus\n")
    assert search_ids(cli, vault, "platypus") == ["note-notes-feb"]
    assert list_paths(cli, vault, "--problems") == ["notes/feb.md"]


# ---------------------------------------------------------------------------
# Derived ids, and no write for reading


def test_note_without_id_is_never_written_by_reading_commands(vault: Path, cli: Any) -> None:
    rel = "entities/projects/Hand Made.md"
    raw = b"---\r\n# my own note\r\nstatus: draft\r\n---\r\nThe capybara project, by hand.\r\n"
    path = put(vault, rel, raw)
    bare = put(vault, "notes/bare.md", b"capybara with no front matter at all")
    old = os.stat(path).st_mtime_ns - 10_000_000_000  # well in the past: any write would show
    os.utime(path, ns=(old, old))
    os.utime(bare, ns=(old, old))
    before = snapshot(vault)

    assert sorted(search_ids(cli, vault, "capybara")) == [
        "entity-projects-hand-made",
        "note-notes-bare",
    ]
    vb(cli, vault, "index")
    vb(cli, vault, "index", "--rebuild")
    shown = vb(cli, vault, "show", "entity-projects-hand-made", "--json").json()["note"]
    assert shown["id"] == "entity-projects-hand-made"
    assert shown["meta"] == {"status": "draft"}
    vb(cli, vault, "show", rel)
    vb(cli, vault, "show", "note-notes-bare")
    vb(cli, vault, "list")
    vb(cli, vault, "status")

    assert path.read_bytes() == raw
    assert bare.read_bytes() == b"capybara with no front matter at all"
    assert os.stat(path).st_mtime_ns == old
    assert os.stat(bare).st_mtime_ns == old
    assert snapshot(vault) == before


def test_agent_search_on_a_hand_made_note_only_appends_its_id_and_the_access_keys(
    vault: Path, cli: Any
) -> None:
    """An agent's retrieval records access (vb-owned keys) and, with vb's first edit, the id
    the note has (so that it keeps it when renamed); nothing else in the note changes."""
    rel = "notes/Hand Made.md"
    raw = b"---\r\n# mine\r\nstatus: 'draft'\r\n\r\n---\r\nThe capybara project.\r\n"
    path = put(vault, rel, raw)
    vb(cli, vault, "search", "capybara", "--session", "s1")
    out = path.read_bytes()
    lines = out.split(b"\r\n")
    assert lines[:3] == [b"---", b"# mine", b"status: 'draft'"]
    assert lines[3] == b"id: note-notes-hand-made"
    assert lines[4] == b"access_count: 1"
    # (to the microsecond: two machines' reads in one second must not write identical files)
    assert re.fullmatch(rb"last_accessed: \d{4}-\d\d-\d\dT[\d:]+(\.\d{6})?[+-]\d\d:\d\d", lines[5])
    assert lines[6:] == [b"", b"---", b"The capybara project.", b""]
    assert out.count(b"\n") == out.count(b"\r\n")
    vb(cli, vault, "search", "capybara", "--session", "s1")
    assert path.read_bytes().count(b"\nid: ") == 1  # written once


def test_show_by_id_and_by_path_return_the_same_note(vault: Path, cli: Any) -> None:
    added = vb(
        cli, vault, "add", "--name", "Bob Jones", "-c", "people", "--json", "Bob likes chess."
    )
    note = added.json()["note"]
    by_id = vb(cli, vault, "show", note["id"], "--json").json()
    by_path = vb(cli, vault, "show", note["path"], "--json").json()
    assert by_id == by_path
    assert by_id["version"] == 2
    assert by_id["note"]["body"] == "Bob likes chess.\n"
    assert by_id["note"]["title"] == "Bob Jones"


def test_explicit_id_in_front_matter_wins_over_the_path(vault: Path, cli: Any) -> None:
    put(vault, "notes/renamed file.md", b"---\nid: my-stable-id\n---\nstable id body\n")
    shown = vb(cli, vault, "show", "my-stable-id", "--json").json()["note"]
    assert shown["path"] == "notes/renamed file.md"
    assert search_ids(cli, vault, "stable") == ["my-stable-id"]


@pytest.mark.parametrize(
    ("rel", "expected"),
    [
        ("entities/people/Alice Smith.md", ("entity", "people", "entity-people-alice-smith")),
        ("episodes/2024-05/Standup.md", ("episode", "general", "episode-general-standup")),
        ("Notes/Minimal Theme.md", ("note", "notes", "note-notes-minimal-theme")),
        ("Readme.md", ("note", "general", "note-readme")),
        (
            "archive/entities/people/Alice Smith.md",
            ("entity", "people", "entity-people-alice-smith"),
        ),
    ],
)
def test_derived_location_and_id(rel: str, expected: tuple[str, str, str]) -> None:
    type_, category = derive_location(rel)
    assert (type_, category, derive_id(rel, type_, category)) == expected
    assert note_from_bytes(rel, b"x").id == expected[2]


@pytest.mark.parametrize(
    ("text", "slug"),
    [
        ("Zoë Ångström", "zoë-ångström"),
        ("東京 タワー", "東京-タワー"),
        ("..", "untitled"),
        ("../../etc/passwd", "etc-passwd"),
        ("  --  ", "untitled"),
        ("Ｆｕｌｌｗｉｄｔｈ", "fullwidth"),
    ],
)
def test_slugify_examples(text: str, slug: str) -> None:
    assert slugify(text) == slug


@given(st.text(max_size=200))
def test_slugify_is_never_empty_dotted_or_a_path(text: str) -> None:
    slug = slugify(text)
    assert slug
    assert all(ch.isalnum() for ch in slug.split("-")[0]), slug
    assert all(part and all(ch.isalnum() for ch in part) for part in slug.split("-")), slug
    assert len(slug) <= 80


@pytest.mark.parametrize(
    ("yaml_text", "key", "expected"),
    [
        ("id: 013", "id", "013"),  # YAML 1.1 would read the octal number 11
        ("id: 0x1F", "id", "0x1F"),
        ("title: 12:30", "title", "12:30"),  # YAML 1.1 would read 750 (sexagesimal)
        ("flag: yes", "flag", "yes"),  # only true/false are booleans, as in Obsidian
        ("flag: true", "flag", True),
        ("count: 012", "count", 12),
        ("ratio: 0.25", "ratio", 0.25),
    ],
)
def test_front_matter_scalars_read_as_obsidian_reads_them(
    yaml_text: str, key: str, expected: object
) -> None:
    from vault_brain.storage.notes.frontmatter import parse_text

    meta = parse_text(f"---\n{yaml_text}\n---\nbody\n".encode()).meta
    assert meta[key] == expected and type(meta[key]) is type(expected)
