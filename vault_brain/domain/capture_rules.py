"""The engine of the capture rule table (capture_table.py), and the questions capture asks it:
which identity slot a clause fills, whether it states a preference, a decision or a dated
plan. Each question is a thin function over the table's slots; the patterns, their examples
and counter-examples are all in the table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache

from vault_brain.domain import capture_words as words
from vault_brain.domain.capture_clauses import strip_fillers, strip_label
from vault_brain.domain.capture_table import FRAGMENTS, RULES
from vault_brain.domain.lazy_re import lazy

_WORD_CLASSES = "JOB NAME_SEQ NAME_WORD TITLE DEMONYM INSTRUMENT DEPARTMENT ORG_NOUN STYLE_NOUN"
_PLACEHOLDER = re.compile(r"\{([A-Z][A-Z_]*)\}")


@dataclass(frozen=True)
class Rule:
    slot: str  # "identity:role", "decision/not", ... (see capture_table.py)
    source: str  # the pattern, word classes expanded
    anchored: bool  # matched at the clause's start, else searched anywhere
    examples: tuple[str, ...]
    counters: tuple[str, ...]
    flags: int = 0
    regex: re.Pattern[str] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "regex", lazy(self.source, self.flags))

    def find(self, text: str) -> re.Match[str] | None:
        return self.regex.match(text) if self.anchored else self.regex.search(text)


def _expand(pattern: str, classes: dict[str, str]) -> str:
    while _PLACEHOLDER.search(pattern):
        pattern = _PLACEHOLDER.sub(lambda m: classes[m.group(1)], pattern)
    return pattern


def parse(rules: str, fragments: str) -> tuple[Rule, ...]:
    """The rules of a table written as capture_table.py describes."""
    classes = {name: getattr(words, name) for name in _WORD_CLASSES.split()}
    classes["DATE"] = words.DATE.pattern
    for line in fragments.strip().splitlines():
        name, _, pattern = line.partition(" = ")
        classes[name] = pattern
    out: list[Rule] = []
    lines = [line for line in rules.splitlines() if line.strip() and not line.startswith("#")]
    for header, pattern in zip(lines[::2], lines[1::2], strict=True):
        spec, _, said = header[1:].partition("  ")
        slot, *options = spec.split(",")
        examples, _, counters = said.partition(" || ")
        out.append(
            Rule(
                slot,
                _expand(pattern, classes),
                "match" in options,
                tuple(e.strip() for e in examples.split(" | ") if e.strip()),
                tuple(c.strip() for c in counters.split(" | ") if c.strip()),
                re.IGNORECASE if "i" in options else 0,
            )
        )
    return tuple(out)


@cache
def table() -> dict[str, tuple[Rule, ...]]:
    """The table's rules by slot, in table order (read once)."""
    by_slot: dict[str, list[Rule]] = {}
    for rule in parse(RULES, FRAGMENTS):
        by_slot.setdefault(rule.slot, []).append(rule)
    return {slot: tuple(rules) for slot, rules in by_slot.items()}


def find(slot: str, text: str) -> re.Match[str] | None:
    """The leftmost match of a rule of the slot (the earlier rule at the same place)."""
    found = [m for m in (rule.find(text) for rule in table()[slot]) if m is not None]
    return min(found, key=lambda m: m.start()) if found else None


def hits(slot: str, text: str) -> bool:
    return any(rule.find(text) for rule in table()[slot])


def value(match: re.Match[str]) -> str:
    """What a match extracts: the first named group it filled."""
    return next((v for v in match.groupdict().values() if v), match.group())


# ---------------------------------------------------------------------------------------
# identity


def is_identity(core: str) -> bool:
    """Whether a clause says who the user is: a slot below, or a nationality."""
    return identity_slot(core) is not None or hits("identity:nationality", core)


def identity_slot(core: str) -> str | None:
    """Which identity slot a clause about the user fills: name, role, employer or location
    (None for an identity fact that is not exclusive, such as a nationality)."""
    if hits("identity:nationality", core):
        return None
    name = find("identity:name", core)
    if name and _real_name(value(name)):
        return "identity:name"
    if hits("identity:role", core) or (
        hits("identity:role/bare", core) and len(core.split()) <= 14
    ):
        return "identity:role"
    if hits("identity:employer", core):
        return "identity:employer"
    if hits("identity:location", core) and not hits("identity:location/not", core):
        return "identity:location"
    return None


def business(core: str) -> str | None:
    """The name of a business the clause says the user runs or owns, if any."""
    match = find("identity:business", core)
    if match is None:
        return None
    name = value(match)
    return name if _real_name(name) else None


_JOB_WORD = lazy(rf"(?i:{words.JOB})s?")


def _real_name(raw: str) -> bool:
    """Not a function word, and not a job ("Chef here" is a role, not a name)."""
    parts = raw.split()
    return (
        bool(parts)
        and parts[0] not in words.NOT_NAMES
        and parts[-1] not in words.NOT_NAMES
        and not (len(parts) == 1 and _JOB_WORD.fullmatch(parts[0]))
    )


# ---------------------------------------------------------------------------------------
# preferences


def is_preference(core: str) -> bool:
    """A stable like, dislike, habit, diet or way the user wants answers written."""
    if hits("preference/not", core):
        return False
    if hits("preference", core):
        return True
    style = hits("preference/style", core)
    if style and hits("preference/style-only", core):
        return True
    if hits("preference/diet", core) and hits("preference/first-person", core):
        return True
    if hits("preference/no-style", core):
        return True
    durable = hits("preference/durable", core)
    if hits("preference/one-off", core) and not durable:
        return False
    if style and hits("preference/standing", core):
        return True
    return ((style or durable) and hits("preference/ask", core)) or (style and durable)


def is_style_request(clause: str) -> bool:
    """ "Could you write in bigger letters?": a question that states a working preference."""
    if hits("preference/not", clause):
        return False
    if hits("preference/one-off", clause) and not hits("preference/durable", clause):
        return False
    return (
        hits("preference/style", clause)
        and hits("preference/ask", clause)
        and not hits("preference/wh", clause)
    )


# ---------------------------------------------------------------------------------------
# decisions and dated events


def is_decision(clause: str) -> bool:
    """A choice taken or agreed ("we decided...", "let's...", "X it is", "no X at Y")."""
    core = strip_label(strip_fillers(clause))
    if len(core.split()) < 2 or hits("decision/not", clause):
        return False
    if hits("decision/short", core):
        return True
    if len(core.split()) < 3:
        return False
    return hits("decision", clause) or hits("decision/it-is", core) or hits("decision/rule", core)


def decides_about_other(core: str) -> bool:
    """A relative-clause decision whose subject is the thing named before "which"."""
    return hits("decision/about-other", core)


def has_date(clause: str) -> bool:
    """A calendar reference that dates a plan or an event (not "last year ...": a story, nor
    "I'll book it tomorrow": a to-do about the thing at hand)."""
    return (
        hits("event", clause)
        and not hits("event/past", clause)
        and not hits("event/todo", strip_fillers(clause))
    )
