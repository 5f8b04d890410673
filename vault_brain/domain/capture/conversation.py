"""Offline capture: the durable facts of a conversation, without a model.

Each user message goes through the gate (`gate.prose_sentences`, the one judge of hostile
text); its sentences are split into clauses (capture/clauses.py), and a clause is kept only
when a general pattern of chat English says it states something lasting: who the user is
(identity), a named person and their relation (person), a stable like or working preference
(preference), a choice taken (decision), a dated plan (event) or a fact about a named
project (project). Questions, hypotheticals, passing states and requests are dropped. A
short reply to the assistant's question about the user ("Where are you based?") is read as
the answer. Assistant messages give a decision only when they confirm a proposal the user
just accepted without restating it.

Every candidate is one short statement in the message's own words (a first-person opening
put in the third person, a pronoun replaced by the name it stands for), with the subject that
would title its note and the slot it fills, so a later contradicting fact can supersede it.
A "we" decision, plan or milestone in a conversation about a business the user runs names
that business; a "we" plan in a conversation about a named project is the project's. The
sentences come from capture/text.py (gate, quoted lines, recasing); the rules for the user's
identity, preferences, decisions and dates are in the rule table (capture/table.py, run by
capture/rules.py), for people in capture/names.py, for projects in capture/projects.py, for
statements and whose event a clause is in capture/statements.py, for clauses and answers to
the assistant's questions in capture/clauses.py, the word classes in capture/words.py.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from vault_brain.domain.capture import clauses as clauses
from vault_brain.domain.capture import rules as rules
from vault_brain.domain.capture import statements as says
from vault_brain.domain.capture import text as capture_text
from vault_brain.domain.capture.candidates import (
    KINDS,
    MAX_TEXT,
    Candidate,
    CaptureReport,
    keep,
    slot_of,
)
from vault_brain.domain.capture.candidates import Found as _Found
from vault_brain.domain.capture.change import may_change
from vault_brain.domain.capture.clauses import strip_label
from vault_brain.domain.capture.names import (
    continues_person,
    leading_person,
    passing_state,
    people,
    related,
    said_of_related,
    segments,
    with_relation,
    without_opinion,
)
from vault_brain.domain.capture.projects import has_content, namings, project_heads
from vault_brain.domain.capture.slots import capture_kind, filled, moved_there
from vault_brain.domain.capture.words import NAME_WORD, NOT_NAMES
from vault_brain.domain.text import clip

__all__ = ["KINDS", "Candidate", "CaptureReport", "capture", "slot_of"]


def capture(messages: Iterable[Mapping[str, Any]], *, max_per_message: int = 6) -> CaptureReport:
    """messages: dicts with "role" (or "type") user/assistant, "content" (str) and "id"."""
    report = CaptureReport()
    items = [m for m in messages if isinstance(m.get("content"), str) and _role(m)]
    gated = capture_text.gated([str(m["content"]) for m in items], [_role(m) for m in items])
    user_sentences = [s for m, (s, _) in zip(items, gated, strict=True) if _role(m) == "user"]
    conversation = _Conversation(heads=project_heads(user_sentences))
    seen: set[tuple[str, str]] = set()
    accepted = False  # the user's last message only accepted the assistant's proposal
    asked: list[str] = []  # the slots the assistant just asked about
    for message, (sentences, refused) in zip(items, gated, strict=True):
        report.dropped.update(refused)
        if _role(message) == "user":
            changes: list[str] = []
            found = _user_facts(sentences, conversation, asked, report.dropped, changes)
            said = (clip(says.third_person(c), MAX_TEXT) for c in changes)
            report.changes += [
                Candidate("identity", "user", text, str(message.get("id", "")), "user", _CHANGE)
                for text in dict.fromkeys(t[:1].upper() + t[1:] for t in said)
            ]
            accepted = not found and clauses.only_acceptance(sentences)
            asked = []
        else:
            found = _confirmed(sentences, conversation) if accepted else []
            report.dropped["assistant"] += len(sentences) - len(found)
            accepted, asked = False, clauses.asked(sentences)
        keep(found, str(message.get("id", "")), _role(message), report, seen, max_per_message)
    return report


@dataclass
class _Conversation:
    """What the conversation has introduced so far."""

    heads: dict[str, str]  # every project named anywhere in it -> the noun it names
    people: list[str] = field(default_factory=list)  # named so far, the latest last
    relations: dict[str, str] = field(default_factory=dict)  # "sister" -> "Ana"
    projects: list[str] = field(default_factory=list)  # named so far, the latest last
    business: str | None = None  # a business the user said they run or own, by name

    @property
    def active(self) -> str | None:
        return self.projects[-1] if self.projects else None

    def add_project(self, name: str) -> None:
        if name in self.projects:
            self.projects.remove(name)
        self.projects.append(name)

    def project_in(self, clause: str) -> str | None:
        """The project a clause mentions by name, or by its noun when only one project has
        that noun ("the EP" for the EP named later on)."""
        for name in self.heads:
            if re.search(rf"(?<!\w){re.escape(name)}(?!\w)", clause):
                return name
        for name, head in self.heads.items():
            same = [n for n, h in self.heads.items() if h == head]
            if head and len(same) == 1 and re.search(rf"\bthe\s+{head}\b", clause, re.I):
                return name
        return None


@dataclass
class _MessageState:
    previous: str = ""  # the clause before, fillers stripped
    topic: str | None = None  # the project this message is talking about
    person: _Found | None = None  # the person fact of the clause before, for "she's a..."
    people: list[str] = field(default_factory=list)  # people named in this message
    lone: str | None = None  # the clause before was only a name ("Also, Ana — she's ...")
    named_with: str | None = None  # the project whose naming took in the clause after it


def _role(message: Mapping[str, Any]) -> str:
    role = str(message.get("role") or message.get("type") or "")
    return role if role in ("user", "assistant") else ""


def _user_facts(
    sentences: list[str],
    conversation: _Conversation,
    asked: list[str],
    dropped: Counter[str],
    changes: list[str],
) -> list[_Found]:
    """The facts of one user message, clause by clause. After the assistant asked for
    several things at once, a reply of short fragments ("Ana Lee. Nurse, Leeds.") answers
    them fragment by fragment. A clause stated as so that gives no fact but says it is a
    change goes to `changes`."""
    pieces = clauses.merge_anaphoric([c for s in sentences for c in clauses.split_clauses(s)])
    found: list[_Found] = []
    state = _MessageState()
    terse = len(asked) > 1 and all(len(p.split()) <= 6 for p in pieces)
    for index, clause in enumerate(pieces):
        core = clauses.strip_fillers(clause)
        lone, state.lone = state.lone, None
        if not terse and _LONE_NAME.fullmatch(core) and core.split()[0] not in NOT_NAMES:
            state.lone = core  # "Also, Ana — she's our vet": the clause after is about Ana
        if len(core.split()) < (1 if terse else 2):
            continue
        if clauses.is_question(core) and not rules.is_style_request(core):
            dropped["question"] += 1
            state.previous = core
            continue
        core = moved_there(clauses.without_tag(core), state.previous)
        following = clauses.strip_fillers(pieces[index + 1]) if index + 1 < len(pieces) else ""
        before, named = len(found), len(state.people)
        found += _people_of(core, conversation, state)
        if len(found) == before and continues_person(core):
            if lone is not None and lone not in conversation.heads:  # "Ana — she's our vet"
                state.person = _Found("person", lone, _about(lone, core))
                found.append(state.person)
                state.people.append(lone)
                conversation.people.append(lone)
                continue
            if state.person is not None:
                state.person.text = f"{state.person.text} — {core}"
                continue
            if not state.people and conversation.people:  # "She's a vet" about the last one
                name = conversation.people[-1]
                state.person = _Found("person", name, _about(name, core))
                found.append(state.person)
                continue
        if len(found) == before:
            state.person = None
        said: bool | None = False  # the clause says something as so (not hypothetical, not passing)
        if clauses.is_hypothetical(core):
            dropped["hypothetical"] += 1
            said = None  # (not even where someone lives)
        elif (
            clauses.is_transient(core)
            and not rules.is_decision(clause)
            and rules.identity_slot(core) not in ("identity:role", "identity:employer")
        ):
            dropped["transient"] += 1
        else:
            said = True
            found += _own_facts(clause, core, following, conversation, state)
            if (index == 0 or terse) and asked and len(found) == before:
                found += _answer(core, _unfilled(asked, found), conversation)
        if len(found) == before and len(state.people) == named:
            found += _fallback(clause, core, conversation, state)
        if said is not None:  # "living in X at the moment" still says where they live
            found[before:] = _slotted(core, found[before:], identity_only=not said)
        if len(found) == before:
            dropped["no_fact"] += 1
            if said and may_change(core) and not state.people:
                changes.append(core)
        state.previous = core
    return [_resolved(f, state.people) for f in found]


def _slotted(core: str, found: list[_Found], identity_only: bool = False) -> list[_Found]:
    """A clause filling one of the user's slots (domain/capture/slots.py: "I moved to Lisbon",
    "standup moved to 10") is kept once, under the kind of that slot, so an older and a newer
    statement of the slot reach the same note and the newer can supersede the older."""
    slot = filled(core)
    if slot is None or (identity_only and not slot.slot.startswith("identity:")):
        return found
    kind = capture_kind(slot.slot)
    own = [f for f in found if f.subject == "user"]
    # the value is no one's subject ("My editor is Emacs" is no fact about an "Emacs")
    others = [f for f in found if f.subject.lower() not in ("user", slot.value.lower())]
    same = [f for f in own if f.kind == kind]
    return [*others, *(same[:1] or [_Found(kind, "user", says.third_person(strip_label(core)))])]


_ANSWER_LABELS = {
    "identity:name": "Name",
    "identity:employer": "Employer",
    "identity:location": "Location",
}


def _unfilled(asked: list[str], found: list[_Found]) -> list[str]:
    """The asked slots no identity fact of this message has filled yet."""
    filled = {rules.identity_slot(says.first_person(f.text)) for f in found}
    return [slot for slot in asked if slot not in filled]


def _answer(core: str, asked: list[str], conversation: _Conversation) -> list[_Found]:
    """A short reply read as the answer to the assistant's question; an identity answer is
    labelled ("Location: near Keswick") so the stored statement says which slot it fills."""
    slot = clauses.answer_slot(core, asked)
    if slot is None:
        return []
    kind = slot.split(":")[0]
    if kind == "decision":
        subject = _decision_subject(core, conversation)
        return [_Found(kind, subject, _about(subject, says.third_person(core)))]
    label = _ANSWER_LABELS.get(slot)
    return [_Found(kind, "user", f"{label}: {core}" if label else says.third_person(core))]


def _people_of(core: str, conversation: _Conversation, state: _MessageState) -> list[_Found]:
    mentions = people(core, conversation.people, list(conversation.heads), state.previous)
    found = [
        _Found("person", mention.name, with_relation(mention, without_opinion(text, mention.name)))
        for mention, text in zip(mentions, segments(core, mentions), strict=True)
        if not passing_state(text, mention.name)
    ]
    for mention in mentions:
        if mention.name in conversation.people:
            conversation.people.remove(mention.name)
        conversation.people.append(mention.name)  # the latest named last
        state.people.append(mention.name)
        if mention.relation:
            conversation.relations[mention.relation] = mention.name
    if not found:
        name = said_of_related(core, conversation.relations)
        if name:
            found.append(_Found("person", name, _about(name, core)))
    if found:
        state.person = found[-1] if len(found) == 1 else None
    return found


def _own_facts(
    clause: str, core: str, following: str, conversation: _Conversation, state: _MessageState
) -> list[_Found]:
    """Identity, preference, decision, event and project facts of one clause."""
    found: list[_Found] = []
    project = _project_fact(core, following, conversation, state)
    if project is not None:
        found.append(project)
    plain = clauses.strip_label(core)
    request = clauses.is_request(core)
    if not request and rules.is_identity(core):
        found.append(_Found("identity", "user", says.third_person(plain)))
    if not request:
        conversation.business = rules.business(core) or conversation.business
    if rules.is_preference(core) or rules.is_style_request(core):
        found.append(_Found("preference", "user", says.third_person(plain)))
    if rules.is_decision(clause):
        subject = _decision_subject(core, conversation)
        text = _about(subject, says.third_person(core))
        text = _at_business(subject, core, text, conversation, decided=True)
        found.append(_Found("decision", subject, text))
    if rules.has_date(core) and not request:
        subject = _event_subject(core, conversation, state)
        text = _about(subject, says.third_person(plain))
        found.append(
            _Found("event", subject, _at_business(subject, core, text, conversation, dated=True))
        )
    return found


def _at_business(
    subject: str,
    core: str,
    text: str,
    conversation: _Conversation,
    *,
    decided: bool = False,
    dated: bool = False,
) -> str:
    """A "we" decision or an unowned milestone of the user's, named with the business the
    user runs ("Saltmarsh: We've decided to drop tuna"), so its note says where it holds."""
    name = conversation.business
    if subject != "user" or not name or name.lower() in text.lower():
        return text
    if says.starts_singular(core) or not (
        says.starts_first_person(core)
        or says.is_milestone(core)
        or decided
        or (dated and not re.match(r"(?:my|his|her|their)\b", strip_label(core), re.I))
        or rules.is_decision(core)
        or re.search(r"\b(?:we|our|us)\b", core, re.I)
    ):
        return text
    return f"{name}: {text}"


def _project_fact(
    core: str, following: str, conversation: _Conversation, state: _MessageState
) -> _Found | None:
    """A fact about a named project: the clause naming it (with its description when the
    naming says nothing else), a clause mentioning it, or "it ..." right after."""
    named = namings(core, state.previous)
    absorbed, state.named_with = state.named_with, None
    for naming in named:
        conversation.add_project(naming.name)
        state.topic = naming.name
    if named:
        name = named[0].name
        if has_content(core, name):
            return _Found("project", name, core)
        said = f"{state.previous} — " if named[0].anaphoric and state.previous else ""
        if following and says.continues_subject(following):  # "I call it X — it's a ..."
            state.named_with = name
            return _Found(
                "project", name, f"{name}: {said}{following}" if said else f"{core} — {following}"
            )
        if said:
            return _Found("project", name, f"{name}: {state.previous}")
        return _Found("project", name, f"{core} — {following}" if following else core)
    if clauses.is_request(core):
        return None
    mentioned = conversation.project_in(core)
    if mentioned in conversation.projects and re.search(re.escape(str(mentioned)), core):
        state.topic = mentioned
        return _Found("project", str(mentioned), core)
    if state.topic and says.continues_subject(core):
        if absorbed == state.topic:
            return None
        return _Found("project", state.topic, says.with_subject(core, state.topic))
    if (
        state.topic
        and says.starts_first_person(core)
        and (says.is_project_status(core) or re.search(r"\bit\b", core))
    ):
        return _Found("project", state.topic, f"{state.topic}: {says.third_person(core)}")
    active = conversation.active
    if (
        active
        and says.is_stack_or_status(core)
        and not says.starts_first_person(core)
        and len(core.split()) > 2
    ):
        return _Found("project", active, _about(active, core))
    return None


def _decision_subject(core: str, conversation: _Conversation) -> str:
    """A decision belongs to the project it names, else to the user when "I" took it or it
    is about something else named before "which", else to the project the conversation is
    about (if any)."""
    mentioned = conversation.project_in(core)
    if mentioned:
        return mentioned
    if says.starts_singular(core) or rules.decides_about_other(core):
        return "user"
    return conversation.active or "user"


# below any kind's: a change of something remembered, kept only when it gives one a new value
_CHANGE = 0.6
_LONE_NAME = re.compile(rf"{NAME_WORD}(?:\s+{NAME_WORD})?")
_WITH_ME = re.compile(r"\bwith\s+(?:me|us)\b", re.IGNORECASE)


def _event_subject(core: str, conversation: _Conversation, state: _MessageState) -> str:
    """Who or what an event is about: the project it names; the user when the user is its
    subject; the person it starts with (by name, by a relation already named, as in "my
    sister's wedding", or "he"/"she" after the name), unless that person wants the user
    somewhere, or asks for work by a date (the conversation's project, else the user); the
    conversation's project for a milestone or "it"; else the user."""
    mentioned = conversation.project_in(core)
    if mentioned:
        return mentioned
    if says.starts_first_person(core):
        plural = re.match(r"(?:we|we're|we've|we'll|our|let's)\b", strip_label(core), re.I)
        return conversation.active if plural and conversation.active else "user"
    person = related(core, conversation.relations) or leading_person(
        core, state.people, conversation.people
    )
    if person:
        if says.wants_user(core) or _WITH_ME.search(core):  # "wants me at the fair on 6 May"
            return "user"
        if says.asks_by_date(core):
            return conversation.active or "user"  # the user's work, due by a date
        return person
    if conversation.active and (
        says.is_milestone(core) or re.match(r"it\b", core, re.I) or says.starts_with_date(core)
    ):
        return conversation.active
    return "user"


def _about(subject: str, text: str) -> str:
    """The statement, naming its subject when it is a person or project the text leaves out."""
    if subject == "user" or subject.lower() in text.lower():
        return text
    return f"{subject}: {text}"


def _resolved(found: _Found, named: list[str]) -> _Found:
    """ "him"/"her", and "he"/"she" after the opening, replaced by the one person the message
    named, in non-person facts ("we agreed he covers Saturdays")."""
    if found.kind == "person" or len(set(named)) != 1:
        return found
    text = re.sub(
        r"\b(?:him|her)\b(?=\s+(?:from|to|for|with|about|on|at|by|in|now)\b|\W*$)",
        named[0],
        found.text,
    )
    text = re.sub(r"(?<=\w )\b(?:he|she)\b(?=(?:'s)?\s+[a-z])", named[0], text)
    return _Found(found.kind, found.subject, text)


def _confirmed(sentences: list[str], conversation: _Conversation) -> list[_Found]:
    """The decision an assistant confirms right after the user accepted its proposal."""
    decision = clauses.confirmation(sentences[0]) if sentences else None
    if not decision:
        return []
    subject = conversation.project_in(decision) or conversation.active or "user"
    return [_Found("decision", subject, _about(subject, decision))]


# A proper name inside a clause (not its first word): what makes an unclassified statement
# worth keeping ("Our IT provider is Severn Byte").
_NAMED = re.compile(r"(?<!^)(?<![.!?]\s)\b(?!I\b|I['’])[A-Z][\w'’-]+")
_ONCE = re.compile(r"\b(?:last (?:year|week|month|summer|winter|night|time)|yesterday|ago)\b", re.I)


def _fallback(
    clause: str, core: str, conversation: _Conversation, state: _MessageState
) -> list[_Found]:
    """A statement none of the rules classified and naming no person, kept when it names
    something or gives a date, and is not a request, a question, a hypothesis, a passing
    state or a past one-off: about the project it names or the message is about, else about
    the user."""
    if (
        len(core.split()) < 3
        or clauses.is_request(clause)
        or clauses.is_request(core)
        or _ONCE.search(core)
        or clauses.is_question(core)
        or clauses.is_transient(core)
        or clauses.is_hypothetical(core)
        or not (_NAMED.search(core) or rules.has_date(core))
    ):
        return []
    plain = clauses.strip_label(core)
    if rules.has_date(core):
        subject = _event_subject(core, conversation, state)
        return [_Found("event", subject, _about(subject, says.third_person(plain)))]
    topic = conversation.project_in(core) or state.topic
    if not topic and not re.search(r"\b(?:i|i'm|my|me)\b", core, re.I):
        topic = conversation.business  # not about the user: about the business they run
    if topic:
        return [_Found("project", topic, _about(topic, says.third_person(plain)))]
    return [_Found("identity", "user", says.third_person(plain))]
