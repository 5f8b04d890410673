"""The one gate: whether a piece of text may become memory or context.

(Being written: this first version gives `prose_sentences`, the interface capture uses, over
the rules capture had.)
"""

from __future__ import annotations

import re
from collections import Counter

MIN_CHARS = 15
MAX_CHARS = 400
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")

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


def prose_sentences(content: str) -> tuple[list[str], Counter[str]]:
    """The prose sentences of a message that may become memory, in order, and how many
    pieces were refused, by reason (code, injection, secret, command, ...)."""
    sentences, fences = split_sentences(content)
    dropped: Counter[str] = Counter()
    dropped["code"] += fences
    kept: list[str] = []
    for sentence in sentences:
        reason = safety_reason(sentence)
        if reason:
            dropped[reason] += 1
        else:
            kept.append(sentence)
    return kept, dropped
