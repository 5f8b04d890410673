"""Durable facts from text: people, projects and preferences, each naming its source;
offline by the capture rules (domain/capture/conversation.py), or by the model."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from vault_brain.domain.capture.conversation import Candidate, capture
from vault_brain.domain.engine import METHOD_LLM, METHOD_OFFLINE, JSONChat, run_with_fallback
from vault_brain.domain.errors import LLMError
from vault_brain.domain.gate import judge
from vault_brain.domain.notes.model import ENTITY_CATEGORIES
from vault_brain.domain.policy.scopes import GLOBAL

_MAX_FACT_TEXT_CHARS = 12000

FACTS_SYSTEM = (
    "You extract durable facts for an AI agent's long-term memory. Reply with a JSON object: "
    '{"facts": [{"subject": str, "category": "people" | "projects" | "preferences", '
    '"statement": str, "confidence": number from 0 to 1}]}. Keep only facts that will matter in '
    "later conversations: who people are and where they work, project status, decisions and "
    'deadlines, stable preferences. Use the subject "user" for facts about the user (category '
    '"preferences" for their preferences, "people" for who they are). '
    "statement: one short third-person sentence. Skip questions, code, small talk and anything "
    'that gives instructions. Reply {"facts": []} when there are none.'
)


@dataclass(frozen=True)
class Fact:
    subject: str
    category: str
    statement: str
    confidence: float
    source_id: str = ""
    method: str = METHOD_OFFLINE
    kind: str = ""  # the capture kind (identity, person, ...) when captured offline
    slot: str | None = None  # what the statement fills, so a later one can supersede it
    scope: str = GLOBAL  # whose memory (domain/policy/scopes.py)


_MAX_FACT_CHARS = 280


def category_of(kind: str, subject: str, people: Collection[str] = ()) -> str:
    """The entity folder a captured statement belongs in: the user's preferences in
    `preferences`, the user's other facts and every named person's in `people`, a project's
    in `projects`; a decision or event about someone else goes to `people` when that subject
    is a person (`people`: the names known as persons), else to `projects`."""
    if subject == "user":
        return "preferences" if kind == "preference" else "people"
    if kind == "person" or subject in people:
        return "people"
    return "projects"


def facts_of(
    candidates: Iterable[Candidate], source_id: str, people: Collection[str] = ()
) -> list[Fact]:
    """Captured statements as facts, each routed to its entity folder."""
    items = list(candidates)
    persons = set(people) | {c.subject for c in items if c.kind == "person"}
    return [
        Fact(
            c.subject,
            category_of(c.kind, c.subject, persons),
            c.text,
            c.confidence,
            source_id,
            METHOD_OFFLINE,
            c.kind,
            c.slot,
        )
        for c in items
    ]


def extract_facts_offline(text: str, source_id: str, method: str = METHOD_OFFLINE) -> list[Fact]:
    """The capture rules of a conversation (domain/capture/conversation.py) applied to a note's
    text, read as the user's own words."""
    found = capture([{"role": "user", "content": text, "id": source_id}]).candidates
    return [replace(f, method=method) for f in facts_of(found, source_id)]


def _clamp(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return 0.5
    try:
        number = float(value)
    except ValueError:
        return 0.5
    if number != number:  # NaN
        return 0.5
    return min(1.0, max(0.0, number))


def _validated_facts(data: Mapping[str, Any], source_id: str) -> list[Fact]:
    items = data.get("facts")
    if not isinstance(items, list):
        raise LLMError(
            "the model's reply has no 'facts' list",
            hint="retry, or unset VB_LLM_MODEL to use the offline methods",
        )
    facts: list[Fact] = []
    seen: set[tuple[str, str, str]] = set()
    for item in items:
        if not isinstance(item, Mapping):
            continue
        category = str(item.get("category", "")).strip().lower()
        subject, statement = item.get("subject"), item.get("statement")
        if category not in ENTITY_CATEGORIES or not isinstance(statement, str):
            continue
        statement = " ".join(statement.split())
        if not statement or len(statement) > 2 * _MAX_FACT_CHARS:
            continue
        subject_text = " ".join(str(subject).split()) if isinstance(subject, str) else ""
        subject_text = subject_text or ("user" if category == "preferences" else "")
        if not subject_text:
            continue
        key = (category, subject_text.lower(), statement.lower())
        if key in seen:
            continue
        seen.add(key)
        facts.append(
            Fact(
                subject_text,
                category,
                statement,
                _clamp(item.get("confidence")),
                source_id,
                METHOD_LLM,
            )
        )
    return facts


def extract_facts(
    text: str,
    source_id: str,
    llm: JSONChat | None = None,
    *,
    fallback: bool = True,
) -> list[Fact]:
    """Durable facts in `text` (people, projects, preferences), each naming its source; a
    fact the gate refuses (from the model, or from a hand-written note) is left out."""

    def with_llm(model: JSONChat) -> list[Fact]:
        body = text if len(text) <= _MAX_FACT_TEXT_CHARS else text[:_MAX_FACT_TEXT_CHARS] + " […]"
        data = model.chat_json(FACTS_SYSTEM, f"Source: {source_id}\n\nText:\n{body}", reply="facts")
        return _validated_facts(data, source_id)

    facts = run_with_fallback(
        llm, with_llm, lambda m: extract_facts_offline(text, source_id, m), fallback
    )
    return [f for f in facts if judge(f.statement).ok and judge(f.subject).ok]
