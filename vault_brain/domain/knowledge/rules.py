"""What a sentence of a project's documentation is, if anything worth keeping: the offline
rules of `vb extract` (pure; `domain.knowledge.extract` walks the file and calls `classify`).

Each rule answers with an item type, a title and a confidence, or nothing. The rules are
deliberately conservative: a sentence becomes an item only when its own wording (or its
section's heading) says what it is; everything else stays searchable as a source chunk.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vault_brain.domain.text import clip, flatten

TYPES = ("decision", "claim", "task", "entity", "note")
TITLE_CHARS = 80

_TASK_BOX = re.compile(r"^\[( |x|X)\]\s+(.+)$", re.DOTALL)
_TASK_WORD = re.compile(
    r"^(?:TODO|FIXME|Action item|Follow[- ]up|Next step)s?\s*[:\-–—]\s*(.+)$", re.I
)
_DECISION_LEAD = re.compile(
    r"^(?:decision|decided|resolution|resolved|verdict|we chose|chosen)\s*[:\-–—]\s*(.+)$", re.I
)
_DECISION_PHRASE = re.compile(
    r"\b(?:we|i|the team|team|they|it was|everyone)\s+(?:have\s+|had\s+|then\s+|finally\s+)?"
    r"(?:decided|chose|choose|opted|agreed|settled|picked|selected|went with|are going with|"
    r"will go with|standardi[sz]ed on|switched to|moved to)\b"
    r"|\bdecided (?:to|that|on|against)\b"
    r"|\b(?:chosen|preferred|picked|selected) (?:over|instead of)\b"
    r"|\bthe decision (?:is|was) (?:to|that)\b"
    r"|\bwe (?:will|won't|will not|shall) (?:use|keep|adopt|drop|stop|not)\b",
    re.I,
)
_UNDECIDED = re.compile(
    r"(?:\bnot|n't|\bnever|\byet to|\bstill to)\s+(?:been\s+|yet\s+)?"
    r"(?:decided|chosen|agreed|settled)\b|\bundecided\b|\bopen question\b",
    re.I,
)
_DECISION_HEADING = re.compile(r"\b(?:decisions?|decided|adr|resolutions?|outcome|verdict)\b", re.I)
_NOTE_LEAD = re.compile(
    r"^(?:\[!(?:note|info|important|warning|caution|tip)\]\s*|"
    r"\**(?:note|nb|n\.b\.|important|warning|caution|caveat|heads up)\**\s*[:\-–—]\**\s*)(.+)$",
    re.I | re.DOTALL,
)
_DEFINITION = re.compile(
    r"^(?:\*\*|__|`)?(?P<term>[^\s*_`:][^*_`:]{0,60}?)(?:\*\*|__|`)?\s*(?::|\s[-–—]\s)\s*(?P<rest>\S.*)$",
    re.DOTALL,
)
_IS_A = re.compile(
    r"^(?:the\s+)?(?P<term>(?:`[^`]{1,40}`|[A-Z][\w.+#-]*(?:\s+[A-Z][\w.+#-]*){0,3}))"
    r"\s+(?:is|are|means|stands for|refers to)\s+(?:a|an|the|our|one of)\s+(?P<rest>.+)$",
)
_GLOSSARY_HEADING = re.compile(
    r"\b(?:glossary|terms|terminology|definitions|people|team|components)\b", re.I
)
_CLAIM = re.compile(
    r"\b(?:must|must not|never|always|only|guarantees?|ensures?|requires?|cannot|can't|"
    r"is faster|is slower|faster than|slower than|at most|at least|no more than|up to)\b"
    r"|\b\d+(?:[.,]\d+)?\s?(?:ms|s|sec|seconds|minutes|min|hours|h|kb|mb|gb|tb|%|x|k|"
    r"requests|notes|files|users|tokens|lines)\b",
    re.I,
)
_WORD = re.compile(r"\w+")
_MARKUP = re.compile(r"(\*\*|__|`|\[\[|\]\])")
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")


@dataclass(frozen=True)
class Found:
    type: str
    title: str
    confidence: float
    status: str | None = None  # tasks: open or done


def plain(text: str) -> str:
    """Markdown inline markup dropped ([label](url) -> label, **, `, [[ ]]), one line."""
    return flatten(_MARKUP.sub("", _LINK.sub(r"\1", text)))


def _title(text: str) -> str:
    text = plain(text).rstrip(".;:")
    return clip(text[:1].upper() + text[1:], TITLE_CHARS)


def _word_count(text: str) -> int:
    return len(_WORD.findall(text))


def task(text: str, in_list: bool) -> Found | None:
    """`- [ ] write the tests` (open), `- [x] ...` (done) in a list; `TODO: ...` anywhere."""
    box = _TASK_BOX.match(text) if in_list else None
    if box:
        done = box.group(1) != " "
        return Found("task", _title(box.group(2)), 0.95, "done" if done else "open")
    word = _TASK_WORD.match(text)
    if word and _word_count(word.group(1)) >= 2:
        return Found("task", _title(word.group(1)), 0.8, "open")
    return None


def classify(sentence: str, *, section: str, in_list: bool, first: bool) -> Found | None:
    """The item a sentence is, by its own words and its section's heading; `first`: the
    sentence opens its block (where leads such as "Decision:" and definitions stand)."""
    words = _word_count(sentence)
    if words < 3 or words > 80:
        return None
    lead = _DECISION_LEAD.match(sentence) if first else None
    if lead:
        return Found("decision", _title(lead.group(1)), 0.9)
    if _DECISION_PHRASE.search(sentence) and not _UNDECIDED.search(sentence):
        return Found("decision", _title(sentence), 0.85)
    note = _NOTE_LEAD.match(sentence) if first else None
    if note and _word_count(note.group(1)) >= 3:
        return Found("note", _title(note.group(1)), 0.8)
    if first:
        entity = _entity(sentence, section, in_list)
        if entity is not None:
            return entity
    if _DECISION_HEADING.search(section.rsplit(" > ", 1)[-1]) and words >= 4:
        return Found("decision", _title(sentence), 0.7)
    if _CLAIM.search(sentence) and 5 <= words <= 60:
        return Found("claim", _title(sentence), 0.6)
    return None


def _entity(sentence: str, section: str, in_list: bool) -> Found | None:
    """`**Term**: what it is` (in a list or a glossary), `Whoosh is a search library`."""
    glossary = bool(_GLOSSARY_HEADING.search(section.rsplit(" > ", 1)[-1]))
    match = _DEFINITION.match(sentence)
    if match and (in_list or glossary or sentence.startswith(("**", "__"))):
        term = plain(match.group("term")).strip()
        if 1 <= _word_count(term) <= 5 and _word_count(match.group("rest")) >= 3:
            return Found("entity", clip(term, TITLE_CHARS), 0.8 if glossary else 0.7)
    match = _IS_A.match(sentence)
    if match and _word_count(match.group("rest")) >= 2:
        return Found("entity", clip(plain(match.group("term")), TITLE_CHARS), 0.6)
    return None


def front_matter_kind(key: str) -> str | None:
    """The item type a front matter key carries (`decision: ...`, `todo: [...]`)."""
    key = key.strip().lower()
    if key in ("decision", "decisions", "decided"):
        return "decision"
    if key in ("todo", "todos", "tasks", "next", "next_steps", "action_items"):
        return "task"
    if key in ("summary", "description", "abstract", "tldr"):
        return "note"
    return None


def titled(type_: str, text: str, confidence: float) -> Found:
    return Found(type_, _title(text), confidence, "open" if type_ == "task" else None)
