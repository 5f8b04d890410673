"""Which dropped and added paths are one note renamed (`domain.notes.renames.moves_between`),
and the id vb writes with its first edit of a note (`domain.notes.model.id_key`)."""

from __future__ import annotations

from vault_brain.domain.notes.model import id_key
from vault_brain.domain.notes.renames import moves_between


def test_moves_pair_by_id_then_by_a_body_no_other_note_shares() -> None:
    gone = {"a.md": ("note-a", "h1"), "b.md": ("kept-id", "h2"), "c.md": ("note-c", "h3")}
    came = {
        "x.md": ("note-x", "h1"),
        "y.md": ("kept-id", "h9"),  # the same id: the same note, whatever its body now
        "z.md": ("note-z", "h3"),  # h3 twice among the added: no telling which
        "w.md": ("note-w", "h3"),
    }
    moves = moves_between(gone, came)
    assert [(m.old_id, m.old_path, m.new_id, m.new_path) for m in moves] == [
        ("note-a", "a.md", "note-x", "x.md"),
        ("kept-id", "b.md", "kept-id", "y.md"),
    ]


def test_a_body_two_dropped_notes_share_pairs_nothing() -> None:
    gone = {"a.md": ("note-a", "h"), "b.md": ("note-b", "h")}
    assert moves_between(gone, {"x.md": ("note-x", "h")}) == []


def test_id_key_is_the_id_the_note_has_now_and_only_when_it_has_none() -> None:
    assert id_key("References/Blade Runner.md", {}) == {"id": "note-references-blade-runner"}
    assert id_key("entities/people/ada.md", {"title": "Ada"}) == {"id": "entity-people-ada"}
    assert id_key("archive/notes/old.md", {}) == {"id": "note-notes-old"}
    assert id_key("notes/x.md", {"id": "mine"}) == {}
