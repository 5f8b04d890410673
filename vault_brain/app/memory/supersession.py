"""Supersession across notes: when a flush writes a fact filling one of the user's slots
(domain/capture/slots.py) and an older episode states another value for that slot, the new
note records `supersedes: [old id]` and the old one gets `superseded_by: new id` (only that
key is added to it: storage/notes/frontmatter_edit.py). Search then ranks the old note low and
MEMORY.md and an agent's context leave it out."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from vault_brain.app.memory.entities import says_nothing_new
from vault_brain.app.memory.updates import Unavailable, UpdateJudge, readable
from vault_brain.app.memory.vault import Vault
from vault_brain.domain.capture.candidates import filled_of
from vault_brain.domain.capture.change import changes, may_change
from vault_brain.domain.capture.facts import Fact
from vault_brain.domain.capture.slots import Filled, left_values, names_value, same_slot, slot_words
from vault_brain.domain.capture.supersede import current_text, statement_of
from vault_brain.domain.notes.model import Filters
from vault_brain.domain.policy.plan import Action
from vault_brain.domain.text import content_words
from vault_brain.storage.notes.frontmatter import parse_text

CANDIDATES = 20  # older notes read per fact
RULED_PER_NOTE = 1  # the first sentence of one the rules find, for the learned judge to confirm
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
    vault: Vault,
    facts: Iterable[Fact],
    skip: set[str],
    replaced: Mapping[str, str] | None = None,
    judge: UpdateJudge | None = None,
) -> dict[str, tuple[str, str, str]]:
    """Episodes (not in `skip`, not superseded yet) stating an older value of what one of
    `facts` states: path -> (its id, the old statement, the new one). Two ways: an episode
    stating the older statement a fact replaced in an entity note (`replaced`: the new
    statement as its line says it -> the old one, as the entity feed decided), and, for a
    fact the rules see may be a change, an episode stating what the rules find is an older
    value (which the learned `judge`, where it runs, confirms: only those sentences are
    embedded)."""
    found: dict[str, tuple[str, str, str]] = {}
    ruled: list[tuple[str, str, str, str]] = []  # (path, id, older sentence, new statement)
    filters = Filters(type="episode", current_only=True).normalized()
    for fact in facts:
        old = (replaced or {}).get(statement_of(fact.statement))  # (as the feed keys it)
        if old is not None:
            for hit in vault.searcher.search(old, k=CANDIDATES, filters=filters, snippets=False):
                if hit.path not in skip and hit.path not in found:
                    same = [s for s in _statements(vault, hit.path) if _restates(s, old)]
                    if same:
                        found[hit.path] = (hit.id, same[0], fact.statement)
        new = filled_of(fact.subject, fact.statement) if fact.slot else None
        left = left_values(fact.statement) if fact.subject == "user" else []
        if new is None and not left and not may_change(fact.statement):
            continue  # (an episode is searched for where a fact may be a change)
        query = f"{fact.statement} {slot_words(new.slot) if new else ''}"
        for hit in vault.searcher.search(query, k=CANDIDATES, filters=filters, snippets=False):
            if hit.path in skip or hit.path in found:
                continue
            older = [
                sentence
                for sentence in _statements(vault, hit.path)
                if _states_older(sentence, new, left) or changes(fact.statement, sentence)
            ]
            ruled += [(hit.path, hit.id, o, fact.statement) for o in older[:RULED_PER_NOTE]]
    return _confirmed(ruled, judge) | found


def _confirmed(
    ruled: list[tuple[str, str, str, str]], judge: UpdateJudge | None
) -> dict[str, tuple[str, str, str]]:
    """Of the (path, id, older sentence, new statement) the rules found, per path the
    first the learned judge confirms (all of them where it cannot run, and the sentences too
    long for it); what it judges is embedded in one batch."""
    judged = {(old, new) for _, _, old, new in ruled if readable(old) and readable(new)}
    if judge is not None and judged:
        try:
            judge.prepare([t for pair in judged for t in pair])
        except Unavailable:
            judge = None
    found: dict[str, tuple[str, str, str]] = {}
    for path, note_id, old, new in ruled:
        if path in found:
            continue
        if judge is not None and (old, new) in judged and judge.older(new, [old]) is None:
            continue  # the model overrules the rules
        found[path] = (note_id, old, new)
    return found


def _restates(sentence: str, statement: str) -> bool:
    """Whether an episode's sentence states `statement` (the same content words, or nearly:
    an episode lists a fact as the person said it, an entity note as reworded: "I take the
    ferry" there is "User takes the ferry" here)."""
    words, said = _stems(statement), _stems(sentence)
    return bool(words) and (words <= said or says_nothing_new(said, words))


def _stems(text: str) -> set[str]:
    """Content words without the rewording's "User" and with a plural's or third person's
    final s (takes, take)."""
    found = content_words(text) - {"user", "user's"}
    return {w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in found}


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
