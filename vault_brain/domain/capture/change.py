"""Whether a newer statement changes what an older statement of the same subject said,
when no slot rule knows the attribute (pure): "Team lunch is every Friday at noon" then
"Team lunch has been moved to 1pm"; "I take my notes in Evernote" then "Notes are all in
Notion since March".

The two share what they are about (a content word that is no value: "lunch", "notes"),
each names a value the other does not (a name, a time, a known kind of thing), and the
newer says it is a change ("now", "moved", "since", "instead", ...). A statement naming
both the old and the new value is the newer's own business and changes nothing here."""

from __future__ import annotations

import re
from functools import lru_cache

from vault_brain.domain.capture.slots import (
    Filled,
    filled,
    left_values,
    lexicon_words,
    names_value,
    same_slot,
)
from vault_brain.domain.capture.statements import first_person
from vault_brain.domain.lazy_re import lazy
from vault_brain.domain.text import content_words

_CHANGE = lazy(
    r"\b(?:now|these days|nowadays|since|as of|moved|switched|changed|pushed|shifted"
    r"|rescheduled|replaced|instead|anymore|any more|no longer|joined|started|from next"
    r"|went|gone|relocated|swapped|migrated|became|become|retrained|promoted)\b",
    re.I,
)
_NAME = re.compile(r"\b[A-Z][\w&'’+-]*(?:\s+[A-Z0-9][\w&'’+-]*)*")
_TIME = lazy(
    r"\b(?:\d{1,2}(?::\d{2})?\s*(?:am|pm)|\d{1,2}:\d{2}|noon|midday|midnight)(?![\w:])", re.I
)
_NOT_VALUES = {"user", "i", "i'm", "i've", "i'd", "i'll", "my", "our", "we", "the"}
# words any two statements of a person share: no sign they are about the same thing
_GENERIC = {
    "user", "every", "day", "days", "week", "weeks", "time", "also", "usually", "really",
    "still", "just", "always", "new", "since", "moved", "switched", "changed", "now",
    "these", "nowadays", "all", "their", "they", "them", "got", "get", "has", "have", "had",
    "use", "uses", "used", "using", "work", "works", "month", "year", "years", "months",
}  # fmt: skip


def _values(text: str) -> list[str]:
    found = [m.group(0) for m in _NAME.finditer(text)]
    found += [m.group(0) for m in _TIME.finditer(text)]
    found += lexicon_words(text)
    return [v for v in found if v.lower() not in _NOT_VALUES]


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def may_change(new: str) -> bool:
    """Whether a statement says it is a change at all (most do not: no older one to look
    for)."""
    return _CHANGE.search(new) is not None


def changes(new: str, old: str) -> bool:
    """Whether statement `new` gives a new value to what `old` (an older statement of the
    same subject) is about."""
    if not _CHANGE.search(new):
        return False
    old_only = [v for v in _values(old) if not names_value(new, v)]
    new_only = [v for v in _values(new) if not names_value(old, v)]
    if not old_only or not new_only:
        return False
    differing = {_stem(w) for v in old_only + new_only for w in content_words(v)}
    about_old = {_stem(w) for w in content_words(old)} - differing - _GENERIC
    about_new = {_stem(w) for w in content_words(new)} - differing - _GENERIC
    return bool(about_old & about_new)


@lru_cache(maxsize=4096)
def _read(text: str) -> tuple[Filled | None, tuple[str, ...], tuple[str, ...], bool]:
    """What `signs` reads of one statement (a note's lines are compared with every new
    fact: each is read once): its slot, what it says was left, its values, a change cue."""
    core = first_person(text)
    return filled(core), tuple(left_values(core)), tuple(_values(text)), may_change(text)


def signs(new: str, old: str) -> tuple[float, ...]:
    """What the rules see in a newer and an older statement of the user's, as numbers for
    the learned judge of updates (`storage.index.updates`): the newer says it is a change;
    the slot table puts both in one slot with other values; the newer says the user left
    what the older names; `changes`; and each names a value the other does not."""
    (a, left_new, values_new, cue), (b, left_old, values_old, _) = _read(new), _read(old)
    slot = bool(a and b and same_slot(a.slot, b.slot) and a.value.lower() != b.value.lower())
    left = any(names_value(old, value) for value in left_new) and not left_old
    old_only = [v for v in values_old if not names_value(new, v)]
    new_only = [v for v in values_new if not names_value(old, v)]
    return (
        float(cue),
        float(slot),
        float(left),
        float(cue and changes(new, old)),
        float(bool(old_only and new_only)),
    )


def rules_say(found: tuple[float, ...]) -> bool:
    """Whether the rules find an update in a pair, from its `signs`: one slot, a value
    left, or `changes`."""
    return any(found[1:4])
