"""The capture rule table (vault_brain/domain/capture/table.py): every rule's examples match
it and its counter-examples do not, and the examples of the rules that fill a slot are
classified into that slot by the functions capture calls. One test per example, generated
from the table."""

from __future__ import annotations

import pytest

from vault_brain.domain.capture import rules as rules
from vault_brain.domain.capture.engine import Rule, parse, table


def _all() -> list[tuple[str, Rule]]:
    return [
        (f"{slot}#{n}", rule) for slot, group in table().items() for n, rule in enumerate(group)
    ]


_ARGS = ("rule", "text")
_EXAMPLES = [(f"{name}:{text}", rule, text) for name, rule in _all() for text in rule.examples]
_COUNTERS = [(f"{name}:{text}", rule, text) for name, rule in _all() for text in rule.counters]
# What capture asks for each slot that states a fact, as the functions callers use.
_FILLS = {
    "identity:name": lambda t: rules.identity_slot(t) == "identity:name",
    "identity:role": lambda t: rules.identity_slot(t) == "identity:role",
    "identity:employer": lambda t: rules.is_identity(t),
    "identity:location": lambda t: rules.is_identity(t),
    "identity:nationality": lambda t: rules.is_identity(t),
    "identity:business": lambda t: rules.business(t) is not None,
    "preference": lambda t: rules.is_preference(t),
    "decision": lambda t: rules.is_decision(t),
    "event": lambda t: rules.has_date(t),
}


def test_every_rule_has_an_example_and_the_table_is_read_once() -> None:
    assert len(_all()) > 100
    assert all(rule.examples for _, rule in _all())
    assert table() is table()


@pytest.mark.parametrize(
    ("rule", "text"), [e[1:] for e in _EXAMPLES], ids=[e[0] for e in _EXAMPLES]
)
def test_a_rule_matches_its_examples(rule: Rule, text: str) -> None:
    assert rule.find(text), f"{rule.slot} does not match {text!r}"


@pytest.mark.parametrize(
    ("rule", "text"), [c[1:] for c in _COUNTERS], ids=[c[0] for c in _COUNTERS]
)
def test_a_rule_does_not_match_its_counter_examples(rule: Rule, text: str) -> None:
    assert not rule.find(text), f"{rule.slot} matches {text!r}"


_FILLING = [e for e in _EXAMPLES if e[1].slot in _FILLS]


@pytest.mark.parametrize(_ARGS, [x[1:] for x in _FILLING], ids=[x[0] for x in _FILLING])
def test_the_example_of_a_slot_rule_is_classified_into_its_slot(rule: Rule, text: str) -> None:
    assert _FILLS[rule.slot](text), f"{text!r} is not classified as {rule.slot}"


def test_a_table_is_parsed_with_word_classes_options_and_counter_examples() -> None:
    fragments = "GREETING = (?:hi|hello)"
    (rule,) = parse(
        "@identity:name,match,i  Hi Ana || hey Ana\n{GREETING}\\s+{NAME_WORD}", fragments
    )
    assert (rule.slot, rule.anchored, rule.examples, rule.counters) == (
        "identity:name",
        True,
        ("Hi Ana",),
        ("hey Ana",),
    )
    assert rule.find("HELLO Théo") and not rule.find("well hello Ana")
