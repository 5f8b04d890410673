"""Where the memory flush puts what it captures: the user's own note, a person's note, a
project's note; with its provenance, once, and with contradicted facts superseded (the old
line moved under "## Previously", never lost), through the real CLI on a real vault."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vault_brain.storage.notes.frontmatter import parse_text


def _say(cli: Any, vault: Path, session: str, *texts: str) -> dict[str, Any]:
    v = ("--vault", str(vault))
    for text in texts:
        cli(*v, "loop", "intake", "-s", session, text)
    result: dict[str, Any] = cli(*v, "flush", "-s", session, "--json").json()
    return result


def _note(vault: Path, rel: str) -> tuple[dict[str, Any], str]:
    parsed = parse_text((vault / rel).read_bytes())
    return parsed.meta, parsed.body


def _lines(vault: Path, rel: str, *words: str) -> list[str]:
    return [
        line
        for line in _note(vault, rel)[1].splitlines()
        if all(w.lower() in line.lower() for w in words)
    ]


def test_each_fact_goes_to_the_note_of_its_subject_with_its_message(vault: Path, cli: Any) -> None:
    result = _say(
        cli,
        vault,
        "intro",
        "Hi, I'm Priya Raman, a structural engineer at Arup in Bristol.",
        "My sister Leela is a paediatrician in Chennai.",
        "I prefer short answers with bullet points.",
        "Project Kestrel is our bridge retrofit and it ships in March.",
    )
    routed = {(c["kind"], c["note"]) for c in result["captured"]}
    assert ("identity", "entities/people/user.md") in routed
    assert ("person", "entities/people/leela.md") in routed
    assert ("preference", "entities/preferences/user.md") in routed
    assert any(note == "entities/projects/kestrel.md" for _, note in routed)

    assert _lines(vault, "entities/people/user.md", "Arup", "(from session intro, m0001)")
    assert _lines(vault, "entities/people/leela.md", "paediatrician", "from session intro, m0002")
    assert _lines(vault, "entities/preferences/user.md", "bullet points", "m0003")
    assert _lines(vault, "entities/projects/kestrel.md", "March", "m0004")
    meta, _ = _note(vault, "entities/people/leela.md")
    assert meta["type"] == "entity" and meta["category"] == "people"


def test_a_near_duplicate_in_a_later_session_is_not_written_again(vault: Path, cli: Any) -> None:
    _say(cli, vault, "one", "I'm a pharmacist at Boots in Norwich.")
    before = (vault / "entities/people/user.md").read_text(encoding="utf-8")

    again = _say(cli, vault, "two", "i'm a pharmacist at boots in norwich")
    assert (vault / "entities/people/user.md").read_text(encoding="utf-8") == before
    assert again["dropped"].get("known", 0) >= 1


def test_a_contradicting_fact_moves_the_old_line_under_previously(vault: Path, cli: Any) -> None:
    _say(cli, vault, "early", "I live in Leeds.")
    (old,) = _lines(vault, "entities/people/user.md", "Leeds")

    _say(cli, vault, "later", "I live in York now.")

    meta, body = _note(vault, "entities/people/user.md")
    current, previously = body.split("## Previously\n", 1)
    assert "Leeds" not in current  # the current part states the current fact only
    (new,) = _lines(vault, "entities/people/user.md", "York", "from session later")
    assert new in current and "supersedes" not in new
    today = meta["updated"][:10]
    assert old[:-1] + f"; until {today}; superseded by: User lives in York now)" in previously
    assert any("Leeds" in item for item in meta["supersedes"])


def test_superseding_extends_a_supersedes_list_a_person_wrote(vault: Path, cli: Any) -> None:
    _say(cli, vault, "early", "I work at Initech.")
    path = vault / "entities/people/user.md"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("---\n", "---\nsupersedes:\n- my old job\n", 1), "utf-8")

    _say(cli, vault, "later", "I work at Globex now.")

    meta, body = _note(vault, "entities/people/user.md")
    assert meta["supersedes"][0] == "my old job"
    assert any("Initech" in item for item in meta["supersedes"][1:])
    assert "Initech" in body and "Globex" in body
