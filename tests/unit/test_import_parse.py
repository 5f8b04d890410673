"""Other tools' memory files read as drafts of notes (`domain.knowledge.imports`): pure."""

from __future__ import annotations

from vault_brain.domain.knowledge.imports import (
    body_pieces,
    detect,
    fact_drafts,
    log_date,
    log_draft,
    note_draft,
)

MEMORY = """\
# Memory

## Preferences

- Likes **green** tea,
  but only before noon.
- Walks the dog at six.
  - The dog is called Pip.

Lives in a flat above the
old bakery.

```python
print("hello")
```
@notes/more.md
"""


def test_a_fact_file_gives_one_draft_per_bullet_or_paragraph() -> None:
    drafts = fact_drafts("claude-code", "CLAUDE.md", MEMORY)
    texts = [d.pieces[0].text for d in drafts]
    assert texts[0] == "Likes **green** tea, but only before noon."
    assert drafts[0].title == "Likes green tea, but only before noon."
    assert drafts[0].line == 5 and drafts[0].where == "CLAUDE.md#L5"
    assert texts[1] == "Walks the dog at six." and texts[2] == "The dog is called Pip."
    assert texts[3] == "Lives in a flat above the\nold bakery."
    assert texts[4].startswith("```python") and texts[4].endswith("```")  # whole, for the gate
    assert drafts[5].skip is not None  # Claude Code's `@path` names another file
    assert all(d.type == "entity" and d.category == "claude-code" for d in drafts)
    assert drafts[0].tags == ["claude-code", "preferences"]


def test_a_fact_keeps_its_key_wherever_it_moves() -> None:
    one = fact_drafts("openclaw", "MEMORY.md", "- Walks the dog at six.\n")[0]
    two = fact_drafts("openclaw", "memory/notes.md", "# Habits\n\n* Walks the  dog at six.\n")[0]
    other = fact_drafts("claude-code", "MEMORY.md", "- Walks the dog at six.\n")[0]
    assert one.key == two.key != other.key


def test_a_daily_log_is_an_episode_of_its_day() -> None:
    assert log_date("memory/2026-03-14.md") == "2026-03-14"
    assert log_date("memory/2026-03-14-standup.md") == "2026-03-14"
    assert log_date("memory/2026-13-40.md") is None and log_date("memory/notes.md") is None
    draft = log_draft("openclaw", "memory/2026-03-14.md", "\n- Rowed.\n\n- Ate.\n", "2026-03-14")
    assert draft.type == "episode" and draft.date == "2026-03-14"
    assert [p.text for p in draft.pieces] == ["- Rowed.", "", "- Ate."]
    assert [p.line for p in draft.pieces] == [2, 3, 4]


def test_a_basic_memory_note_keeps_title_tags_and_relation_targets() -> None:
    meta = {"title": "Ansel", "type": "person", "permalink": "people/ansel", "tags": ["harbour"]}
    body = "# Ansel\n\n## Relations\n\n- works_at [[East Pier|the pier]]\n- knows Bryn\n"
    draft = note_draft("basic-memory", "people/ansel.md", meta, body, first_line=7)
    assert draft.title == "Ansel" and draft.category == "people"
    assert draft.tags == ["basic-memory", "harbour"]
    linked = [p for p in draft.pieces if p.target is not None]
    assert [(p.text, p.target, p.line) for p in linked] == [
        ("- works_at [[East Pier]]", "East Pier", 11)
    ]
    moved = note_draft("basic-memory", "elsewhere/ansel.md", meta, body)
    assert moved.key == draft.key  # the permalink is the key


def test_plain_notes_keep_no_relation_and_are_titled_by_heading_or_name() -> None:
    pieces = body_pieces("- see [[Other]]\n", 1)
    assert pieces[0].target is None
    assert note_draft("markdown", "a/b.md", {}, "# Heading\ntext\n").title == "Heading"
    assert note_draft("markdown", "a/b.md", {}, "text\n").title == "b"


def test_the_kind_is_told_by_the_names() -> None:
    assert detect(["CLAUDE.md", "README.md"])[0] == "claude-code"
    assert detect([".claude/CLAUDE.md"])[0] == "claude-code"
    assert detect(["MEMORY.md", "memory/2026-01-02.md"])[0] == "openclaw"
    assert detect(["MEMORY.md", "SOUL.md"])[0] == "openclaw"
    assert detect(["a.md", "b.md"], permalinks=2)[0] == "basic-memory"
    assert detect(["MEMORY.md"]) == (
        None,
        "a MEMORY.md alone is written by OpenClaw and by Claude Code alike",
    )
    assert detect(["notes/a.md"])[0] == "markdown"
    assert detect(["a.txt"])[0] is None
