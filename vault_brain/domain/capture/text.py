"""The sentences of a conversation for offline capture: each message through the gate
(`gate.prose_sentences`, the one judge of hostile text), normalised, without the lines it
quotes (">": someone else's text), and in user messages the names a lowercase chat leaves
uncapitalised written as the assistant writes them ("btw im ana" after "Hi Ana!").
"""

from __future__ import annotations

import re
from collections import Counter

from vault_brain.domain.capture import clauses as clauses
from vault_brain.domain.capture.words import NOT_NAMES
from vault_brain.domain.gate import prose_sentences


def gated(contents: list[str], roles: list[str]) -> list[tuple[list[str], Counter[str]]]:
    """Per message (its content and role, "user" or "assistant"): its sentences, and what the
    gate refused."""
    out = [_sentences(content) for content in contents]
    proper = _proper_nouns([s for s, _ in out], roles)
    return [
        (_recased(s, proper), refused) if role == "user" else (s, refused)
        for role, (s, refused) in zip(roles, out, strict=True)
    ]


def _sentences(content: str) -> tuple[list[str], Counter[str]]:
    """The gate's prose sentences of a message, normalised, and what it refused; a line
    quoted with ">" is someone else's text, not the user's statement."""
    sentences, refused = prose_sentences(content)
    quoted = [q.group(1) for q in _QUOTED.finditer(content)]
    return [
        clauses.normalise(s)
        for s in clauses.rejoin(sentences, content)
        if not any(s.strip() in line for line in quoted)
    ], refused


_QUOTED = re.compile(r"^[ \t]*>[ \t]*(.+)$", re.MULTILINE)
# A capitalised word inside a sentence (not its first word): a proper noun.
_PROPER = re.compile(r"(?<=[\w,;] )[A-Z][a-z]{2,}\b(?!['’]\w)")
_LOWER = re.compile(r"\b[a-z][a-z]{2,}\b")
_TITLED = re.compile(r"\b(mr|mrs|ms|dr|prof)(\.?\s+)([a-z][a-z'-]+)\b")


def _proper_nouns(messages: list[list[str]], roles: list[str]) -> dict[str, str]:
    """Lower case -> capitalised for the words the assistant writes capitalised inside a
    sentence and never in lower case: the names of people and places a lowercase chat leaves
    uncapitalised ("btw im ana" after the assistant's "Hi Ana!")."""
    capitalised: set[str] = set()
    lower: set[str] = set()
    for role, sentences in zip(roles, messages, strict=True):
        if role == "assistant":
            for sentence in sentences:
                capitalised.update(_PROPER.findall(sentence))
                lower.update(_LOWER.findall(sentence))
    return {w.lower(): w for w in capitalised if w.lower() not in lower and w not in NOT_NAMES}


def _recased(sentences: list[str], proper: dict[str, str]) -> list[str]:
    """User sentences with the conversation's proper nouns and a name after a title ("mr
    dunleavy") capitalised."""
    out = []
    for sentence in sentences:
        text = _TITLED.sub(lambda m: f"{m[1].title()}{m[2]}{m[3].title()}", sentence)
        if proper:
            text = _LOWER.sub(lambda m: proper.get(m.group(), m.group()), text)
        out.append(text)
    return out
