"""Durable facts from text: people, projects and preferences, each naming its source;
offline heuristics or the model."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vault_brain.domain.engine import METHOD_LLM, METHOD_OFFLINE, JSONChat, run_with_fallback
from vault_brain.domain.errors import LLMError
from vault_brain.domain.gate import judge, prose_sentences
from vault_brain.domain.notes import ENTITY_CATEGORIES
from vault_brain.domain.text import wordset

_MAX_FACT_TEXT_CHARS = 12000

FACTS_SYSTEM = (
    "You extract durable facts for an AI agent's long-term memory. Reply with a JSON object: "
    '{"facts": [{"subject": str, "category": "people" | "projects" | "preferences", '
    '"statement": str, "confidence": number from 0 to 1}]}. Keep only facts that will matter in '
    "later conversations: who people are and where they work, project status, decisions and "
    'deadlines, stable preferences. Use the subject "user" for the user\'s own preferences. '
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


_MIN_FACT_WORDS = 4
_MAX_FACT_WORDS = 40
_MAX_FACT_CHARS = 280
_NAME = r"[A-Z][a-zA-Z'’-]+(?:\s+[A-Z][a-zA-Z'’-]+)?"
_ADVERB = r"(?:(?:really|strongly|usually|generally|also|definitely|still|much|absolutely)\s+)?"
_FIRST_PERSON_PREF = re.compile(
    rf"^I\s+(?P<adverb>{_ADVERB})(?P<verb>prefer|like|love|hate|dislike|want|enjoy|always|never|usually|"
    r"don't like|do not like|can't stand|cannot stand)\b(?P<rest>.*)$",
    re.DOTALL,
)
_FAVOURITE = re.compile(r"^My\s+(?P<rest>(?:favou?rite|preferred)\b.*)$", re.DOTALL)
_THIRD_PERSON_PREF = re.compile(
    rf"^(?P<subj>{_NAME})\s+{_ADVERB}(?:prefers|likes|loves|hates|dislikes|wants|enjoys|always|"
    r"never|can't stand|doesn't like|does not like)\b"
)
_PERSON_VERB = re.compile(
    rf"^(?P<subj>{_NAME})\s+(?:works (?:at|for|on|as|with)|lives in|moved to|joined|leads|"
    r"manages|reports to|is based in|was born|studied|speaks|is married|started at)\b"
)
_PERSON_IS = re.compile(rf"^(?P<subj>{_NAME})\s+(?:is|was)\s+(?P<rest>.*)$", re.DOTALL)
_PERSON_MARKER = re.compile(
    r"\b(?:engineer|developer|designer|manager|lead|founder|co-founder|ceo|cto|cfo|coo|vp|"
    r"director|head|colleague|coworker|co-worker|friend|boss|client|contractor|intern|teammate|"
    r"wife|husband|partner|sister|brother|mother|father|mom|dad|son|daughter|cousin|uncle|aunt|"
    r"allergic|vegetarian|vegan|years old|birthday|on vacation|on leave|out of office|"
    r"based in|scientist|researcher|analyst|architect|consultant|recruiter|student|"
    r"professor|doctor|nurse|teacher|writer|owner|maintainer|reviewer)\b",
    re.IGNORECASE,
)
_PROJECT_NAMES = (
    re.compile(r"\b[Pp]roject\s+(?P<name>[A-Z][\w-]+)"),
    re.compile(r"\b(?P<name>[A-Z][\w-]+)\s+project\b"),
    re.compile(r"\b(?P<name>[A-Z][\w-]+)\s*\(project\)"),
)
_PROJECT_MARKER = re.compile(
    r"\b(?:project|deadline|due|launch(?:es|ed)?|release[sd]?|ships?|shipped|milestone|status|"
    r"decid\w*|decision|blocked|sprint|scope|budget|priority|on track|behind schedule|delayed|"
    r"postponed|kick-?off|demo|roadmap|v\d[\w.]*)\b",
    re.IGNORECASE,
)
_NOT_SUBJECTS = wordset(
    """The This That These Those It He She They We You There Here What When Where Why How Who
    Which Everyone Everybody Nobody Someone Somebody Anyone Each Every Our My Your Their His Her
    Its One Some Many Most All Both Neither Either If But And So Then Also Yes No Maybe User"""
)
_IRREGULAR = {"have": "has", "do": "does", "go": "goes", "be": "is", "am": "is", "can": "can"}
_PRONOUNS = (
    (r"\bmy\b", "their"),
    (r"\bMy\b", "Their"),
    (r"\bme\b", "them"),
    (r"\bmyself\b", "themselves"),
    (r"\bI'm\b", "they're"),
    (r"\bI\b", "they"),
)


def _third_person(verb: str) -> str:
    lower = verb.lower()
    if lower in _IRREGULAR:
        return _IRREGULAR[lower]
    if re.search(r"(?:s|sh|ch|x|z|o)$", lower):
        return verb + "es"
    if re.search(r"[^aeiou]y$", lower):
        return verb[:-1] + "ies"
    return verb + "s"


def _user_statement(match: re.Match[str]) -> str:
    verb = match.group("verb")
    adverb = match.group("adverb")
    rest = match.group("rest")
    for pattern, repl in _PRONOUNS:
        rest = re.sub(pattern, repl, rest)
    conjugated = {
        "don't like": "doesn't like",
        "do not like": "does not like",
        "can't stand": "can't stand",
        "cannot stand": "cannot stand",
    }.get(verb)
    if conjugated is None and verb in ("always", "never", "usually"):
        follow = re.match(r"(\s+)([a-z]+)(.*)$", rest, re.DOTALL)
        if follow:
            rest = f"{follow.group(1)}{_third_person(follow.group(2))}{follow.group(3)}"
        conjugated = verb
    return f"User {adverb}{conjugated or _third_person(verb)}{rest}"


def _fact_candidate(sentence: str) -> bool:
    words = sentence.split()
    return (
        _MIN_FACT_WORDS <= len(words) <= _MAX_FACT_WORDS
        and len(sentence) <= _MAX_FACT_CHARS
        and not sentence.rstrip().endswith("?")
    )


def _subject(name: str) -> str | None:
    name = re.sub(r"['’]s$", "", name.strip())
    first = name.split()[0]
    if first in _NOT_SUBJECTS:
        return None
    return name


def _classify_fact(sentence: str, projects: list[str]) -> tuple[str, str, str, float] | None:
    """(subject, category, statement, confidence) for one sentence, or None."""
    match = _FIRST_PERSON_PREF.match(sentence)
    if match:
        return "user", "preferences", _user_statement(match), 0.8
    match = _FAVOURITE.match(sentence)
    if match:
        return "user", "preferences", f"User's {match.group('rest')}", 0.8
    match = _THIRD_PERSON_PREF.match(sentence)
    subject = _subject(match.group("subj")) if match else None
    if subject and subject not in projects:
        return subject, "preferences", sentence, 0.6
    for project in projects:
        if re.search(rf"\b{re.escape(project)}\b", sentence) and _PROJECT_MARKER.search(sentence):
            return project, "projects", sentence, 0.6
    match = _PERSON_VERB.match(sentence)
    subject = _subject(match.group("subj")) if match else None
    if subject:
        return subject, "people", sentence, 0.6
    match = _PERSON_IS.match(sentence)
    subject = _subject(match.group("subj")) if match else None
    if match and subject and _PERSON_MARKER.search(match.group("rest")):
        return subject, "people", sentence, 0.5
    return None


def extract_facts_offline(text: str, source_id: str, method: str = METHOD_OFFLINE) -> list[Fact]:
    """Heuristic capture: preferences, people and project facts, in order of appearance."""
    prose, _ = prose_sentences(text)
    projects: list[str] = []
    for sentence in prose:
        for pattern in _PROJECT_NAMES:
            for found in pattern.finditer(sentence):
                name = found.group("name")
                if name not in projects and name not in _NOT_SUBJECTS and name != "The":
                    projects.append(name)
    facts: list[Fact] = []
    seen: set[tuple[str, str, str]] = set()
    for sentence in prose:
        if not _fact_candidate(sentence):
            continue
        found_fact = _classify_fact(sentence, projects)
        if found_fact is None:
            continue
        subject, category, statement, confidence = found_fact
        key = (category, subject.lower(), " ".join(statement.lower().split()))
        if key in seen:
            continue
        seen.add(key)
        facts.append(Fact(subject, category, statement, confidence, source_id, method))
    return facts


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
