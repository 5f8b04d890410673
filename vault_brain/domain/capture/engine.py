"""The engine of the capture rule table (capture/table.py): it reads the table once, expands
its word classes, and answers which rules of a slot match a clause."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache

from vault_brain.domain.capture import words as words
from vault_brain.domain.capture.table import FRAGMENTS, RULES
from vault_brain.domain.lazy_re import lazy

_WORD_CLASSES = (
    "JOB NAME_SEQ NAME_WORD TITLE DEMONYM INSTRUMENT DEPARTMENT ORG_NOUN STYLE_NOUN RELATION"
)
_PLACEHOLDER = re.compile(r"\{([A-Z][A-Z_]*)\}")


@dataclass(frozen=True)
class Rule:
    slot: str  # "identity:role", "decision/not", ... (see capture/table.py)
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
    """The rules of a table written as capture/table.py describes."""
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
