"""Round-trip editing: when vb changes a key, that key's lines are the only change in the file."""

from __future__ import annotations

import difflib
import os
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from conftest import snapshot
from vault_brain.domain.errors import VaultBrainError
from vault_brain.storage.notes.frontmatter import parse_text
from vault_brain.storage.notes.frontmatter_edit import (
    edit_front_matter,
    replace_body,
    strip_front_matter_block,
)

BOM = "\ufeff"

# A note written by hand in Obsidian: comments, every quoting style, a nested mapping,
# a block scalar, blank lines and a trailing comment. `{nl}` is the line end.
HAND = (
    "---{nl}"
    "# Written by hand in Obsidian{nl}"
    "id: entity-people-alice{nl}"
    "title: 'Alice: the \"real\" one'{nl}"
    'aliases: [Ally, "A. Smith"]{nl}'
    "tags:{nl}"
    "  - friend{nl}"
    "  - '#work'{nl}"
    "{nl}"
    "credit: 0.5   # vb's score{nl}"
    'mood: "calm"{nl}'
    "address:{nl}"
    "  city: Zürich{nl}"
    "  zip: '8001'{nl}"
    "notes: |{nl}"
    "  line one{nl}"
    "  line two{nl}"
    "{nl}"
    "# end of my keys{nl}"
    "---{nl}"
    "# Alice{nl}{nl}Body text with a --- rule{nl}---{nl}and more.{nl}"
)

VARIANTS = {
    "lf": ("", "\n"),
    "crlf": ("", "\r\n"),
    "bom-lf": (BOM, "\n"),
    "bom-crlf": (BOM, "\r\n"),
}


def hand(variant: str) -> tuple[bytes, str, str]:
    bom, nl = VARIANTS[variant]
    return (bom + HAND.format(nl=nl)).encode("utf-8"), bom, nl


def line_diff(before: bytes, after: bytes) -> tuple[list[str], list[str]]:
    """(lines only in before, lines only in after), compared line by line with difflib."""
    a = before.decode("utf-8").splitlines(keepends=True)
    b = after.decode("utf-8").splitlines(keepends=True)
    removed: list[str] = []
    added: list[str] = []
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            removed += a[i1:i2]
            added += b[j1:j2]
    return removed, added


def body_of(raw: bytes) -> bytes:
    """The bytes after the closing --- line."""
    text = raw.decode("utf-8")
    lines = text.splitlines(keepends=True)
    close = next(i for i in range(1, len(lines)) if lines[i].rstrip("\r\n") == "---")
    return "".join(lines[close + 1 :]).encode("utf-8")


# ---------------------------------------------------------------------------
# Changing, adding and removing keys


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_changing_a_scalar_changes_only_its_line(variant: str) -> None:
    raw, bom, nl = hand(variant)
    out = edit_front_matter(raw, {"credit": 0.7})
    assert line_diff(raw, out) == ([f"credit: 0.5   # vb's score{nl}"], [f"credit: 0.7{nl}"])
    assert out.startswith(bom.encode("utf-8") + b"---")
    assert out.count(b"\r\n") == raw.count(b"\r\n")
    assert parse_text(out).meta["credit"] == 0.7


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_block_list_is_replaced_in_block_style_with_its_indent(variant: str) -> None:
    raw, _bom, nl = hand(variant)
    out = edit_front_matter(raw, {"tags": ["friend", "home", "a b"]})
    expected = raw.decode().replace(
        f"  - friend{nl}  - '#work'{nl}", f"  - friend{nl}  - home{nl}  - a b{nl}"
    )
    assert out.decode() == expected
    assert line_diff(raw, out) == ([f"  - '#work'{nl}"], [f"  - home{nl}", f"  - a b{nl}"])
    assert parse_text(out).meta["tags"] == ["friend", "home", "a b"]


def test_flush_block_list_keeps_its_zero_indent() -> None:
    raw = b"---\ntags:\n- a\n- b\nuser: x\n---\nbody\n"
    out = edit_front_matter(raw, {"tags": ["c"]})
    assert out == b"---\ntags:\n- c\nuser: x\n---\nbody\n"


def test_flow_list_stays_a_flow_list() -> None:
    raw, _, nl = hand("lf")
    out = edit_front_matter(raw, {"aliases": ["Ally", "Al"]})
    assert line_diff(raw, out) == (
        [f'aliases: [Ally, "A. Smith"]{nl}'],
        [f"aliases: [Ally, Al]{nl}"],
    )


def test_nested_mapping_and_block_scalar_are_replaced_whole() -> None:
    raw, _, nl = hand("crlf")
    out = edit_front_matter(raw, {"notes": "short", "address": "Bern"})
    removed, added = line_diff(raw, out)
    assert removed == [
        f"address:{nl}",
        f"  city: Zürich{nl}",
        f"  zip: '8001'{nl}",
        f"notes: |{nl}",
        f"  line one{nl}",
        f"  line two{nl}",
    ]
    assert added == [f"address: Bern{nl}", f"notes: short{nl}"]
    meta = parse_text(out).meta
    assert (meta["notes"], meta["address"], meta["mood"]) == ("short", "Bern", "calm")


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_new_keys_go_after_the_last_key_before_trailing_blank_lines_and_comments(
    variant: str,
) -> None:
    raw, _bom, nl = hand(variant)
    out = edit_front_matter(raw, {"pinned": True, "last_accessed": "2024-05-01T10:00:00+02:00"})
    expected = raw.decode().replace(
        f"  line two{nl}{nl}# end of my keys{nl}---{nl}",
        f"  line two{nl}pinned: true{nl}last_accessed: 2024-05-01T10:00:00+02:00{nl}"
        f"{nl}# end of my keys{nl}---{nl}",
    )
    assert out.decode() == expected
    meta = parse_text(out).meta
    assert meta["pinned"] is True
    assert meta["last_accessed"] == "2024-05-01T10:00:00+02:00"


def test_new_key_goes_right_before_the_closing_line_when_nothing_trails() -> None:
    raw = b"---\nuser: 1\n---"  # no body, no final newline
    assert edit_front_matter(raw, {"id": "x"}) == b"---\nuser: 1\nid: x\n---"


def test_removing_a_key_removes_only_its_lines() -> None:
    raw, _, nl = hand("lf")
    out = edit_front_matter(raw, remove=["tags", "not-there"])
    assert line_diff(raw, out) == ([f"tags:{nl}", f"  - friend{nl}", f"  - '#work'{nl}"], [])


def test_no_change_returns_the_same_bytes() -> None:
    for variant in VARIANTS:
        raw, _, _ = hand(variant)
        assert edit_front_matter(raw, {}) == raw
        assert edit_front_matter(raw, remove=["absent"]) == raw


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_removing_keys_that_were_appended_gives_back_the_original_bytes(variant: str) -> None:
    raw, _, _ = hand(variant)
    added = edit_front_matter(
        raw, {"archived": "2024-01-01T00:00:00+00:00", "archive_reason": "it's: done # really"}
    )
    assert parse_text(added).meta["archive_reason"] == "it's: done # really"
    assert edit_front_matter(added, remove=["archived", "archive_reason"]) == raw


@pytest.mark.parametrize(
    "raw",
    [
        b"---\n---\nbody\n",
        b"---\r\n---\r\nbody",
        b"---\nuser: 1\n---",
        b"---\nuser: 1\n\n\n---\n\nbody\n",
        b"\xef\xbb\xbf---\nuser: [a]\n# c\n---\n",
        b"---\nlist:\n  - a\n  - b\n---\nbody",
    ],
    ids=["empty", "empty-crlf", "no-body", "trailing-blanks", "bom-comment", "block-last"],
)
def test_add_then_remove_round_trips_for_odd_shapes(raw: bytes) -> None:
    added = edit_front_matter(raw, {"archived_from": "notes/x.md", "archive_added": True})
    assert added != raw
    assert body_of(added) == body_of(raw)
    assert edit_front_matter(added, remove=["archived_from", "archive_added"]) == raw


@pytest.mark.parametrize(
    ("bom", "nl", "body"),
    [
        ("", "\n", "# Plain\n\nA note written by hand.\n"),
        ("", "\r\n", "# Plain\r\n\r\nWindows line ends.\r\n"),
        (BOM, "\n", "BOM and no final newline"),
        ("", "\n", ""),
    ],
    ids=["lf", "crlf", "bom", "empty-file"],
)
def test_note_without_front_matter_gets_a_new_block_and_the_body_follows_unchanged(
    bom: str, nl: str, body: str
) -> None:
    raw = (bom + body).encode("utf-8")
    out = edit_front_matter(raw, {"archived": "2024-01-01", "archive_added_front_matter": True})
    block = f"---{nl}archived: 2024-01-01{nl}archive_added_front_matter: true{nl}---{nl}"
    assert out == (bom + block + body).encode("utf-8")
    parsed = parse_text(out)
    assert parsed.meta == {"archived": "2024-01-01", "archive_added_front_matter": True}
    removed = edit_front_matter(out, remove=["archived", "archive_added_front_matter"])
    assert removed == (bom + f"---{nl}---{nl}" + body).encode("utf-8")
    assert strip_front_matter_block(removed) == raw


def test_strip_front_matter_block_keeps_a_block_that_has_keys() -> None:
    raw = b"---\nuser: 1\n---\nbody\n"
    assert strip_front_matter_block(raw) == raw
    assert strip_front_matter_block(b"no block\n") == b"no block\n"


def test_key_quoted_by_hand_is_found_and_replaced() -> None:
    raw = b"---\n'my key': 1\nother: 2\n---\n"
    out = edit_front_matter(raw, {"my key": 3})
    assert parse_text(out).meta == {"my key": 3, "other": 2}
    assert out.count(b"my key") == 1


# ---------------------------------------------------------------------------
# Body replacement


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_replace_body_keeps_the_front_matter_bytes(variant: str) -> None:
    raw, bom, nl = hand(variant)
    out = replace_body(raw, "New body\nsecond line\n")
    head = raw[: len(raw) - len(body_of(raw))]
    assert out == head + f"New body{nl}second line{nl}".encode()
    assert out.startswith(bom.encode("utf-8") + b"---")


def test_replace_body_of_a_note_without_front_matter() -> None:
    assert replace_body(b"old\r\ntext\r\n", "new\ntext\n") == b"new\r\ntext\r\n"
    assert replace_body("\ufeffold".encode(), "new\n") == "\ufeffnew\n".encode()


# ---------------------------------------------------------------------------
# Malformed front matter is refused


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        (b"---\ntitle: [unclosed\n---\nbody\n", "not valid YAML"),
        (b"---\ncreated: {{date}}\n---\nbody\n", "not valid YAML"),
        (b"---\n- a\n- b\n---\nbody\n", "not valid YAML"),
        (b"---\ntitle: x\nbody without a closing line\n", "no closing --- line"),
    ],
    ids=["flow", "template-braces", "sequence", "unclosed"],
)
def test_malformed_front_matter_is_refused(raw: bytes, fragment: str) -> None:
    with pytest.raises(VaultBrainError) as info:
        edit_front_matter(raw, {"tags": ["x"]}, where="notes/bad.md")
    assert info.value.message.startswith("notes/bad.md: ")
    assert fragment in info.value.message
    assert "vb will not edit it" in info.value.message
    assert info.value.hint and "---" in info.value.hint


# ---------------------------------------------------------------------------
# Through the CLI


def test_vb_update_content_keeps_front_matter_bytes_except_updated(vault: Path, cli: Any) -> None:
    raw, _, nl = hand("crlf")
    raw = raw.replace(b"mood:", b"updated: 2020-01-01\r\nmood:")
    path = vault / "entities/people/alice.md"
    path.write_bytes(raw)
    res = cli(
        "--vault", str(vault), "update", "entity-people-alice", "--content", "Fresh body.\nTwo."
    )
    assert res.exit_code == 0, res.stderr
    out = path.read_bytes()
    removed, added = line_diff(
        raw[: len(raw) - len(body_of(raw))], out[: len(out) - len(body_of(out))]
    )
    assert removed == [f"updated: 2020-01-01{nl}"]
    assert len(added) == 1 and re.fullmatch(r"updated: \d{4}-\d\d-\d\dT[^\r\n]+\r\n", added[0])
    assert body_of(out) == b"Fresh body.\r\nTwo.\r\n"


def test_vb_update_appends_updated_to_a_note_without_it(vault: Path, cli: Any) -> None:
    raw, _, _ = hand("lf")
    path = vault / "entities/people/alice.md"
    path.write_bytes(raw)
    res = cli(
        "--vault", str(vault), "update", "entities/people/alice.md", "--append", "--content", "PS"
    )
    assert res.exit_code == 0, res.stderr
    out = path.read_bytes()
    removed, added = line_diff(raw, out)
    assert removed == []
    assert added[0].startswith("updated: ") and added[1:] == ["\n", "PS\n"]
    assert out.endswith(b"and more.\n\nPS\n")


def test_vb_update_tag_changes_only_the_tags_and_updated_lines(vault: Path, cli: Any) -> None:
    raw, _, nl = hand("bom-lf")
    path = vault / "entities/people/alice.md"
    path.write_bytes(raw)
    before = snapshot(vault)
    res = cli("--vault", str(vault), "update", "entity-people-alice", "--tag", "Friend,#family")
    assert res.exit_code == 0, res.stderr
    out = path.read_bytes()
    removed, added = line_diff(raw, out)
    assert removed == [f"  - '#work'{nl}"]
    assert len(added) == 2 and added[0] == f"  - family{nl}"
    assert added[1].startswith("updated: ")
    assert parse_text(out).meta["tags"] == ["friend", "family"]
    after = snapshot(vault)
    assert [k for k in after if after[k] != before.get(k)] == ["entities/people/alice.md"]


@pytest.mark.parametrize(
    "raw",
    [b"---\ntitle: [unclosed\n---\nbody\n", b"---\ntitle: x\nno closing line\n"],
    ids=["bad-yaml", "unclosed"],
)
def test_vb_update_refuses_malformed_yaml_and_leaves_the_file_untouched(
    vault: Path, cli: Any, raw: bytes
) -> None:
    path = vault / "notes" / "bad.md"
    path.parent.mkdir()
    path.write_bytes(raw)
    mtime = path.stat().st_mtime_ns
    res = cli("--vault", str(vault), "update", "notes/bad.md", "--tag", "x", "--content", "new")
    assert res.exit_code == 1
    assert res.stderr.startswith("vb: error: notes/bad.md: front matter ")
    assert "vb will not edit it" in res.stderr and "vb: hint: " in res.stderr
    assert path.read_bytes() == raw
    assert path.stat().st_mtime_ns == mtime
    assert sorted(os.listdir(path.parent)) == ["bad.md"]


# ---------------------------------------------------------------------------
# Values vb writes must read back as themselves


@pytest.mark.parametrize(
    "value",
    [
        "plain words",
        "it's: a # test",
        'say "hi"',
        "back\\slash",
        "two\nlines",
        "tab\there",
        "-leading dash",
        "yes",
        "Null",
        "123",
        "0x1F",
        "trailing space ",
        "[not a list]",
        "{not: a map}",
        "&anchor",
        "*alias",
        "!tag",
        "@at",
        "`tick",
        "%pct",
        "Zoë Ångström",
        "東京タワー",
        "2024-05-01",
        "2024-05-01T10:00:00+02:00",
    ],
)
def test_string_values_read_back_unchanged(value: str) -> None:
    out = edit_front_matter(b"---\nuser: 1\n---\nbody\n", {"k": value, "lst": [value, "b"]})
    parsed = parse_text(out)
    assert parsed.error is None
    assert parsed.meta == {"user": 1, "k": value, "lst": [value, "b"]}


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("bad\x1bchar", id="escape"),
        pytest.param("nul\x00byte", id="nul"),
        pytest.param("bell\x07", id="bell"),
        pytest.param("carriage\rreturn", id="cr"),
        pytest.param("next\x85line", id="nel"),
        pytest.param("line\u2028separator", id="u2028"),
        pytest.param("del\x7f", id="del"),
        pytest.param("non\uffffchar", id="uffff"),
    ],
)
def test_control_characters_in_values_read_back_unchanged(value: str) -> None:
    out = edit_front_matter(b"---\nuser: 1\n---\nbody\n", {"archive_reason": value})
    parsed = parse_text(out)
    assert parsed.error is None
    assert parsed.meta == {"user": 1, "archive_reason": value}


def test_date_like_string_that_is_not_a_date_reads_back_as_a_string() -> None:
    out = edit_front_matter(b"", {"title": "2023-02-30"})
    assert parse_text(out).meta == {"title": "2023-02-30"}


@pytest.mark.parametrize("value", [5e-05, 1e-06, 1e20])
def test_floats_vb_writes_read_back_as_numbers(value: float) -> None:
    out = edit_front_matter(b"---\n---\n", {"credit": value})
    assert parse_text(out).meta == {"credit": value}


# ---------------------------------------------------------------------------
# Property: any simple front matter, edited, reads back as expected; add+remove is identity

_RESERVED = {"yes", "no", "on", "off", "true", "false", "null", "y", "n", "none", "~"}
# (id, title and category are read verbatim as text, `id: 0` is "0": their own tests cover them)
KEYS = st.from_regex(r"[a-z][a-z0-9_]{0,7}", fullmatch=True).filter(
    lambda k: k not in _RESERVED and k not in ("id", "title", "category")
)
WORDS = (
    st.from_regex(r"[A-Za-z][A-Za-z0-9 ./_-]{0,14}", fullmatch=True)
    .map(str.strip)
    .filter(lambda s: s.lower() not in _RESERVED)
)
# values that vb writes: any printable text except line/paragraph separators, and not date-like
VALUE_TEXT = st.text(
    st.characters(blacklist_categories=("Cc", "Cs", "Co", "Cn", "Zl", "Zp")), max_size=30
).filter(lambda s: not re.match(r"\d{4}-\d", s))
SCALARS = st.one_of(
    st.integers(-(10**6), 10**6),
    st.booleans(),
    WORDS,
    st.none(),
    st.integers(1, 999).map(lambda n: n / 1000),
)
ITEMS = st.one_of(st.integers(-1000, 1000), st.booleans(), WORDS)
VALUES = st.one_of(SCALARS, st.lists(ITEMS, max_size=4))
NEW_VALUES = st.one_of(SCALARS, VALUE_TEXT, st.lists(st.one_of(ITEMS, VALUE_TEXT), max_size=4))


def _render(value: Any, style: int) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        # YAML 1.2 (as Obsidian reads it): only true/false spellings are booleans
        return ["true", "false", "True", "False", "TRUE", "FALSE"][(style % 3) * 2 + (not value)]
    if isinstance(value, int | float):
        return str(value)
    if style % 3 == 1:
        return "'" + value.replace("'", "''") + "'"
    if style % 3 == 2:
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return value


@st.composite
def documents(draw: Any) -> tuple[bytes, dict[str, Any], dict[str, tuple[int, int]]]:
    """A front matter block in hand-written styles: (bytes, expected meta, key -> line span)."""
    mapping = draw(st.dictionaries(KEYS, VALUES, max_size=6))
    nl = draw(st.sampled_from(["\n", "\r\n"]))
    bom = draw(st.sampled_from(["", BOM]))
    lines = ["---"]
    spans: dict[str, tuple[int, int]] = {}
    for key, value in mapping.items():
        if draw(st.booleans()):
            lines.append("# a comment about " + key)
        start = len(lines)
        if isinstance(value, list):
            if value and draw(st.booleans()):
                indent = draw(st.sampled_from(["", "  ", "    "]))
                lines.append(f"{key}:")
                lines += [f"{indent}- {_render(v, draw(st.integers(0, 5)))}" for v in value]
            else:
                items = ", ".join(_render(v, draw(st.integers(0, 5))) for v in value)
                lines.append(f"{key}: [{items}]")
        else:
            rendered = _render(value, draw(st.integers(0, 5)))
            comment = "  # trailing" if draw(st.booleans()) else ""
            lines.append(f"{key}:{' ' if rendered else ''}{rendered}{comment}")
        spans[key] = (start, len(lines))
        if draw(st.booleans()):
            lines.append("")
    if draw(st.booleans()):
        lines.append("# closing comment")
    lines.append("---")
    body = draw(st.text(max_size=80))
    raw = (bom + nl.join(lines) + nl + body).encode("utf-8")
    return raw, mapping, spans


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=documents(), key=KEYS, value=NEW_VALUES)
def test_property_set_one_key_reads_back_and_changes_nothing_else(
    doc: tuple[bytes, dict[str, Any], dict[str, tuple[int, int]]], key: str, value: Any
) -> None:
    raw, mapping, spans = doc
    parsed = parse_text(raw)
    assert parsed.error is None
    assert parsed.meta == mapping  # the generator renders what it claims

    out = edit_front_matter(raw, {key: value})
    assert parse_text(out).meta == {**mapping, key: value}
    assert body_of(out) == body_of(raw)

    old = raw.decode("utf-8").splitlines(keepends=True)
    new = out.decode("utf-8").splitlines(keepends=True)
    if key in spans:
        start, end = spans[key]
        old_rest = old[:start] + old[end:]
        new_len = len(new) - len(old) + (end - start)
        new_rest = new[:start] + new[start + new_len :]
        assert new_rest == old_rest
    else:
        removed, added = line_diff(raw, out)
        assert removed == [] and len(added) >= 1
        assert added[0].startswith(f"{key}:")
        assert edit_front_matter(out, remove=[key]) == raw


@settings(max_examples=200, deadline=None)
@given(doc=documents(), extra=st.dictionaries(KEYS, NEW_VALUES, min_size=1, max_size=3))
def test_property_adding_then_removing_new_keys_gives_back_the_original_bytes(
    doc: tuple[bytes, dict[str, Any], dict[str, tuple[int, int]]], extra: dict[str, Any]
) -> None:
    raw, mapping, _ = doc
    # id, title and category are read verbatim as text (`id: 0` is the id "0"), not as YAML
    verbatim = ("id", "title", "category")
    extra = {k: v for k, v in extra.items() if k not in mapping and k not in verbatim}
    added = edit_front_matter(raw, extra)
    assert parse_text(added).meta == {**mapping, **extra}
    assert edit_front_matter(added, remove=list(extra)) == raw


@settings(max_examples=200, deadline=None)
@given(
    body=st.text(max_size=120),
    nl=st.sampled_from(["\n", "\r\n"]),
    bom=st.sampled_from(["", BOM]),
    extra=st.dictionaries(KEYS, NEW_VALUES, min_size=1, max_size=3),
)
def test_property_a_block_added_to_a_plain_note_is_removed_without_a_trace(
    body: str, nl: str, bom: str, extra: dict[str, Any]
) -> None:
    assume(not body.startswith("---"))  # such a body already reads as front matter
    raw = (bom + body.replace("\n", nl) if nl != "\n" else bom + body).encode("utf-8")
    added = edit_front_matter(raw, extra)
    assert parse_text(added).meta == extra
    assert strip_front_matter_block(edit_front_matter(added, remove=list(extra))) == raw


# --------------------------------------------------------------------------- every style


@pytest.mark.parametrize(
    "front",
    [
        "{title: Flow note, tags: [a, b]}\n",
        '{"title": "JSON note", "tags": ["a", "b"]}\n',
        '{\n  "title": "Pretty JSON",\n  "tags": ["a"]\n}\n',
        "{title: Nested, meta: {x: 1, y: [2, 3]}}\n",
        "{}\n",
    ],
)
def test_flow_and_json_front_matter_is_edited_in_place(front: str) -> None:
    raw = f"---\n{front}---\nBody.\n".encode()
    before = parse_text(raw).meta
    changes = {"access_count": 3, "last_accessed": "2026-11-22T10:00:00+00:00", "credit": 0.55}
    out = edit_front_matter(raw, changes)
    after = parse_text(out)
    assert after.error is None
    assert after.meta == {**before, **changes} | {"last_accessed": after.meta["last_accessed"]}
    assert out.decode().endswith("---\nBody.\n")
    again = edit_front_matter(out, {"access_count": 4}, remove=["credit"])
    expected = {k: v for k, v in after.meta.items() if k != "credit"} | {"access_count": 4}
    assert parse_text(again).meta == expected


def test_an_agent_retrieval_of_a_flow_style_note_keeps_it_readable(vault: Path, cli: Any) -> None:
    path = vault / "entities/projects/flow.md"
    path.write_text("---\n{title: Flowing, tags: [river]}\n---\nThe river bends.\n")
    res = cli("--vault", str(vault), "search", "river", "--session", "s1", "--json")
    assert res.exit_code == 0
    meta = parse_text(path.read_bytes()).meta
    assert meta["title"] == "Flowing" and meta["tags"] == ["river"] and meta["access_count"] == 1
    assert (
        cli("--vault", str(vault), "update", "entities/projects/flow.md", "--tag", "lake").exit_code
        == 0
    )
    assert parse_text(path.read_bytes()).meta["tags"] == ["lake"]


def test_an_edit_that_would_break_an_anchor_is_refused_and_writes_nothing(
    vault: Path, cli: Any
) -> None:
    path = vault / "entities/projects/anchored.md"
    raw = b"---\ntitle: Anchored\ntags: &t [x]\nalso: *t\n---\nBody.\n"
    path.write_bytes(raw)
    res = cli("--vault", str(vault), "update", "entities/projects/anchored.md", "--tag", "y")
    assert res.exit_code == 1
    assert "setting id, tags" in res.stderr and "nothing was written" in res.stderr
    assert "block style" in res.stderr
    assert path.read_bytes() == raw


STYLES = st.sampled_from(
    [
        "title: {title}\ntags: [a]\n",
        "{{title: {title}, tags: [a]}}\n",
        '{{"title": "{title}", "tags": ["a"]}}\n',
        "title: {title}\ntags:\n  - a\n# comment\n",
        "title: &x {title}\nalias: *x\n",
        "title: |\n  {title}\ntags: [a]\n",
        "? title\n: {title}\n",
        "title: {title}\nnested: {{a: [1, {{b: 2}}]}}\n",
    ]
)


@settings(max_examples=150, deadline=None)
@given(
    style=STYLES,
    title=st.text(alphabet="abcxyz ", min_size=1, max_size=8).map(str.strip).filter(bool),
    changes=st.dictionaries(
        st.sampled_from(["access_count", "credit", "tags", "title", "updated", "extra"]),
        st.one_of(
            st.integers(0, 99), st.floats(0, 1), st.lists(st.sampled_from("pqr"), max_size=3)
        ),
        max_size=3,
    ),
    remove=st.lists(st.sampled_from(["tags", "alias", "nested"]), max_size=2),
)
def test_property_an_edit_is_exact_or_refused_never_corrupting(
    style: str, title: str, changes: dict[str, Any], remove: list[str]
) -> None:
    raw = f"---\n{style.format(title=title)}---\nBody.\n".encode()
    before = parse_text(raw)
    assume(before.error is None)
    try:
        out = edit_front_matter(raw, changes, remove)
    except VaultBrainError:
        return  # refused before anything was written
    after = parse_text(out)
    assert after.error is None
    expected = {k: v for k, v in before.meta.items() if k not in remove} | changes
    assert set(after.meta) == set(expected)
    for key, value in expected.items():
        if key == "title" and not isinstance(value, list):  # read verbatim, as text
            assert after.meta[key] == value or float(after.meta[key]) == pytest.approx(
                value, abs=1e-6
            )
        elif isinstance(value, float):
            assert after.meta[key] == pytest.approx(value, abs=1e-6)
        else:
            assert after.meta[key] == value
    assert out.decode().endswith("---\nBody.\n")
