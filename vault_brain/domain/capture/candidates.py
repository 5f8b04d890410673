"""What capture returns: candidates with their kind, subject, slot and confidence, one per
statement and subject, at most a few per message (the surest first)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from vault_brain.domain.capture import rules as rules
from vault_brain.domain.capture import statements as says
from vault_brain.domain.capture.names import states_relation
from vault_brain.domain.capture.slots import Filled, filled, slot_of_statement
from vault_brain.domain.text import clip, flatten

KINDS = ("identity", "person", "preference", "decision", "event", "project")
MAX_TEXT = 300
# When one clause gives the same statement about the same subject twice, the first kind
# here names it.
_PRIORITY = ("identity", "decision", "preference", "event", "project", "person")
_CONFIDENCE = {
    "identity": 0.85,
    "person": 0.8,
    "preference": 0.8,
    "decision": 0.75,
    "event": 0.75,
    "project": 0.7,
}


@dataclass(frozen=True)
class Candidate:
    kind: str  # one of KINDS
    subject: str  # "user", or the person's or project's name as a note title
    text: str  # one line, <= 300 characters, in the message's own words
    message_id: str
    role: str  # "user" or "assistant"
    confidence: float
    slot: str | None = None  # "identity:name", "person:<subject>:relation", ... or None


@dataclass
class CaptureReport:
    candidates: list[Candidate] = field(default_factory=list)
    dropped: Counter[str] = field(default_factory=Counter)
    changes: list[Candidate] = field(default_factory=list)
    """The user's clauses that gave no fact yet say they are a change ("these days I take
    the bus"), counted in `dropped` as no_fact: a statement only when it gives a new value
    to something already remembered, which the caller, who can read the notes, decides."""


@dataclass
class Found:
    """A statement while capture works on it (text not yet clipped)."""

    kind: str
    subject: str
    text: str


def slot_of(kind: str, subject: str, text: str) -> str | None:
    """The slot of an already stored statement (the same rules as capture), so a later fact
    with the same slot can supersede it: the user's attributes (where they live and work,
    the tools they use, their habits, their meetings' times) by one table
    (domain/capture/slots.py), then the rules of each kind."""
    if subject == "user":
        found = slot_of_statement(says.first_person(text))
        if found is not None:
            return found
    if kind == "identity":
        return rules.identity_slot(says.first_person(text))
    if kind == "person" and subject != "user" and states_relation(text, subject):
        return f"person:{subject}:relation"
    return None


def filled_of(subject: str, text: str) -> Filled | None:
    """The user's slot a stored statement fills and its value ("User lives in Lisbon" ->
    identity:location = Lisbon), or None."""
    return filled(says.first_person(text)) if subject == "user" else None


def keep(
    found: list[Found],
    message_id: str,
    role: str,
    report: CaptureReport,
    seen: set[tuple[str, str]],
    max_per_message: int,
) -> None:
    """Candidates of one message: one per subject and statement, new to the conversation,
    at most `max_per_message` (the surest first)."""
    best: dict[tuple[str, str], Found] = {}
    for item in found:
        text = clip(flatten(item.text).strip(" ,;—–-"), MAX_TEXT)
        text = text[:1].upper() + text[1:]
        key = (item.subject.lower(), text.lower())
        current = best.get(key)
        if current is None or _PRIORITY.index(item.kind) < _PRIORITY.index(current.kind):
            best[key] = Found(item.kind, item.subject, text)
    fresh: list[Found] = []
    for key, item in best.items():
        if key in seen:
            report.dropped["duplicate"] += 1
        else:
            seen.add(key)
            fresh.append(item)
    ranked = sorted(fresh, key=lambda f: -_CONFIDENCE[f.kind])[:max_per_message]
    report.dropped["over_cap"] += len(fresh) - len(ranked)
    for item in fresh:
        if any(item is kept for kept in ranked):
            report.candidates.append(
                Candidate(
                    item.kind,
                    item.subject,
                    item.text,
                    message_id,
                    role,
                    _CONFIDENCE[item.kind],
                    slot_of(item.kind, item.subject, item.text),
                )
            )
