"""Supersession across notes: when a flush writes a fact filling one of the user's slots
(domain/capture/slots.py) and an older episode states another value for that slot, the new
note records `supersedes: [old id]` and the old one gets `superseded_by: new id` (only that
key is added to it: storage/notes/frontmatter_edit.py). Search then ranks the old note low and
MEMORY.md and an agent's context leave it out."""

from __future__ import annotations

import re
from collections.abc import Iterable

from vault_brain.app.memory.vault import Vault
from vault_brain.domain.capture.candidates import filled_of
from vault_brain.domain.capture.change import changes, may_change
from vault_brain.domain.capture.facts import Fact
from vault_brain.domain.capture.slots import Filled, left_values, names_value, same_slot, slot_words
from vault_brain.domain.capture.supersede import current_text
from vault_brain.domain.notes.model import Filters
from vault_brain.domain.policy.plan import Action
from vault_brain.storage.notes.frontmatter import parse_text

CANDIDATES = 20  # older notes read per fact
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_SESSION_TITLE = re.compile(r"^Session [^:]+:\s*")


def _statements(vault: Vault, rel: str) -> list[str]:
    """The note's title and current text, sentence by sentence, bullets removed."""
    try:
        parsed = parse_text(vault.paths.note(rel).read_bytes())
    except OSError:
        return []
    title = str(parsed.meta.get("title") or "")
    text = f"{_SESSION_TITLE.sub('', title)}\n{current_text(parsed.body)}"
    return [s.strip().removeprefix("- ").strip() for s in _SENTENCE.split(text) if s.strip()]


def older_statements(
    vault: Vault, facts: Iterable[Fact], skip: set[str]
) -> dict[str, tuple[str, str, str]]:
    """Episodes (not in `skip`, not superseded yet) stating an older value of a slot one of
    `facts` fills: path -> (its id, the old statement, the new one)."""
    found: dict[str, tuple[str, str, str]] = {}
    for fact in facts:
        new = filled_of(fact.subject, fact.statement) if fact.slot else None
        left = left_values(fact.statement) if fact.subject == "user" else []
        if new is None and not left and not may_change(fact.statement):
            continue
        query = f"{fact.statement} {slot_words(new.slot) if new else ''}"
        filters = Filters(type="episode", current_only=True).normalized()
        for hit in vault.searcher.search(query, k=CANDIDATES, filters=filters, snippets=False):
            if hit.path in skip or hit.path in found:
                continue
            for sentence in _statements(vault, hit.path):
                if _states_older(sentence, new, left) or changes(fact.statement, sentence):
                    found[hit.path] = (hit.id, sentence, fact.statement)
                    break
    return found


def _states_older(sentence: str, new: Filled | None, left: list[str]) -> bool:
    """Whether an older sentence of the user's states another value of the new fact's slot,
    or names what the new fact says the user left ("dropped Visio")."""
    old = filled_of("user", sentence)
    if new and old and same_slot(old.slot, new.slot) and old.value.lower() != new.value.lower():
        return True
    return any(names_value(sentence, value) for value in left) and not left_values(sentence)


def superseding_actions(
    found: dict[str, tuple[str, str, str]], new_id: str
) -> tuple[list[Action], list[str]]:
    """The `superseded_by` key for each older note, and the ids the new note supersedes."""
    actions = [
        Action("set", rel, f"{old!r} superseded by {new!r}", {"superseded_by": new_id}, id=old_id)
        for rel, (old_id, old, new) in sorted(found.items())
    ]
    return actions, [old_id for old_id, _, _ in (found[rel] for rel in sorted(found))]
