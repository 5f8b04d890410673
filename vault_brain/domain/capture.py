"""Heuristic capture: which sentences of a conversation are worth keeping as memories.

Pure functions over message dicts. Safety filters drop prompt-injection-like text, code
fences and code-looking lines, bare shell commands, and sentences too short or too long;
what remains is scored (confidence: how surely it is a durable statement; importance: how
useful it would be later) and capped per message.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from vault_brain.domain.gate import prose_sentences

PREFERENCE = re.compile(
    r"\b(I|we|the user)\s+(really\s+)?(prefer|like|love|hate|dislike|enjoy|want|need|avoid"
    r"|always|never|usually|don't like|do not like|can't stand)\b"
    r"|\bmy (favou?rite|preferred)\b|\bplease (always|never)\b",
    re.IGNORECASE,
)
DECISION = re.compile(
    r"\b(we|I|they|the team)\s+(have\s+)?"
    r"(decided|agreed|chose|chosen|settled|committed|will go with)\b"
    r"|\b(decision|agreed)\s*:|\blet'?s go with\b|\bwe'?ll (use|ship|go with|switch to)\b",
    re.IGNORECASE,
)
FACT = re.compile(
    r"\b(is|are|was|works (at|on|for)|lives in|moved to|joined|leads|owns|manages|reports to"
    r"|is based in|deadline|due on|born|married|uses|runs on)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Candidate:
    kind: str  # preference | decision | fact
    text: str
    message_id: str
    role: str
    confidence: float
    importance: float


@dataclass
class CaptureReport:
    candidates: list[Candidate] = field(default_factory=list)
    dropped: Counter[str] = field(default_factory=Counter)


def classify(sentence: str) -> tuple[str, float, float] | None:
    """(kind, confidence, importance) for a sentence that states something durable."""
    if sentence.endswith("?"):
        return None
    words = len(sentence.split())
    if PREFERENCE.search(sentence):
        return "preference", 0.9, 0.8
    if DECISION.search(sentence):
        return "decision", 0.85, 0.9
    if FACT.search(sentence) and re.search(r"\b[A-Z][a-z]+", sentence[1:]) and words >= 4:
        # a fact about a named thing (a capital letter past the first word)
        return "fact", 0.8, 0.7
    return None


def capture(
    messages: Iterable[Mapping[str, Any]],
    *,
    roles: tuple[str, ...] = ("user",),
    decision_roles: tuple[str, ...] = ("user", "assistant"),
    min_confidence: float = 0.78,
    min_importance: float = 0.6,
    max_per_message: int = 4,
) -> CaptureReport:
    """Candidates from the messages, filtered and capped, with counts of what was dropped."""
    report = CaptureReport()
    seen: set[str] = set()
    for message in messages:
        role = str(message.get("type") or message.get("role") or "")
        content = message.get("content")
        if role not in set(roles) | set(decision_roles) or not isinstance(content, str):
            continue
        sentences, refused = prose_sentences(content)
        report.dropped.update(refused)
        kept = 0
        for sentence in sentences:
            found = classify(sentence)
            if found is None:
                continue
            kind, confidence, importance = found
            if role not in roles and not (kind == "decision" and role in decision_roles):
                continue
            if confidence < min_confidence or importance < min_importance:
                report.dropped["low_confidence"] += 1
                continue
            key = " ".join(sentence.lower().split())
            if key in seen:
                report.dropped["duplicate"] += 1
                continue
            if kept >= max_per_message:
                report.dropped["over_cap"] += 1
                continue
            seen.add(key)
            kept += 1
            report.candidates.append(
                Candidate(kind, sentence, str(message.get("id", "")), role, confidence, importance)
            )
    return report
