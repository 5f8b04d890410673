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

MIN_CHARS = 15
MAX_CHARS = 400

_INJECTION = re.compile(
    r"ignore (all |any |the )?(previous|prior|above|earlier) (instructions|messages|rules)"
    r"|disregard (all |the )?(previous|prior|above)|you are now "
    r"|act as (an? )?(unrestricted|jailbroken)|system prompt|developer mode|jailbreak"
    r"|do anything now|\bDAN\b|<\s*/?\s*(system|assistant)\s*>|new instructions:"
    r"|override (your|the) (rules|instructions)|reveal (your|the) (instructions|prompt)"
    r"|forget (everything|all) (you|previous)|from now on,? you (will|must|are)",
    re.IGNORECASE,
)
_COMMAND = re.compile(
    r"^\s*(\$|#|>>>|PS>|C:\\)|^\s*(sudo|git|pip|npm|yarn|cd|ls|cat|rm|mv|cp|curl|wget|make|docker"
    r"|kubectl|python3?|node|bash|sh|chmod|chown|echo|export|apt(-get)?|brew|ssh|scp|vb)\s+\S",
)
_CODE_LINE = re.compile(
    r"[{};]\s*$|^\s*(def|class|import|from|return|function|const|let|var|public|private|#include)\b"
    r"|=>|::|\)\s*\{|^\s*[\w.]+\(.*\)\s*$|</?\w+[^>]*>"
)
_URL_ONLY = re.compile(r"^\s*(https?://\S+)\s*$")

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
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")


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


def safety_reason(text: str) -> str | None:
    """Why a sentence must never become a memory, or None if it may."""
    stripped = text.strip()
    if len(stripped) < MIN_CHARS:
        return "too_short"
    if len(stripped) > MAX_CHARS:
        return "too_long"
    if _INJECTION.search(stripped):
        return "injection"
    if _COMMAND.search(stripped) or _URL_ONLY.match(stripped):
        return "command"
    if _CODE_LINE.search(stripped) or (stripped.count("`") >= 2 and len(stripped.split()) < 6):
        return "code"
    return None


def _prose_blocks(content: str) -> tuple[list[str], int]:
    """Paragraph lines outside code fences, and how many fenced blocks were dropped."""
    lines: list[str] = []
    fences = 0
    inside = False
    for line in content.splitlines():
        if line.strip().startswith(("```", "~~~")):
            inside = not inside
            fences += int(inside)
            continue
        if not inside and line.strip():
            lines.append(line.strip().lstrip("-*> ").strip())
    return lines, fences


def split_sentences(content: str) -> tuple[list[str], int]:
    lines, fences = _prose_blocks(content)
    out: list[str] = []
    for line in lines:
        out += [s.strip() for s in _SENTENCE_SPLIT.split(line) if s.strip()]
    return out, fences


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
        sentences, fences = split_sentences(content)
        report.dropped["code"] += fences
        kept = 0
        for sentence in sentences:
            reason = safety_reason(sentence)
            if reason:
                report.dropped[reason] += 1
                continue
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
