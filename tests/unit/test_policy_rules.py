"""The lifecycle rules' restricted evaluator: every construct outside the whitelist is refused
before anything is evaluated, and the allowed ones evaluate as Python would."""

from __future__ import annotations

from typing import Any

import pytest

from vault_brain.domain.policy.rules import (
    FIELDS,
    FUNCTIONS,
    MAX_CHARS,
    SAMPLE_NOTE,
    RuleError,
    note_fields,
    parse_rule,
    parse_rules,
)

NOTE: dict[str, Any] = {
    **SAMPLE_NOTE,
    "title": "Weekly Standup",
    "tags": ["meeting", "Apollo"],
    "effective": 0.12,
    "credit": 0.3,
    "access_count": 4,
    "age_days": 40.0,
}


@pytest.mark.parametrize(
    ("source", "problem"),
    [
        ("__import__('os').system('x')", "attribute access (.system)"),
        ("__import__('os')", "the call __import__()"),
        ("open('/etc/passwd') == ''", "the call open()"),
        ("title.lower() == 'x'", "attribute access (.lower)"),
        ("().__class__ == 1", "attribute access (.__class__)"),
        ("(lambda: True)()", "a call"),
        ("lambda: True", "lambda"),
        ("[t for t in tags] == []", "comprehensions"),
        ("any(t == 'x' for t in tags)", "the call any()"),
        ("tags[0] == 'x'", "subscripts"),
        ("effective ** 2 < 1", "the operator **"),
        ("access_count // 2 == 1", "the operator //"),
        ("(x := 1) == 1", "assignment (:=)"),
        ("True if pinned else False", "if/else"),
        ("f'{id}' == 'x'", "f-strings"),
        ("pinned is True", "is / is not"),
        ("~access_count == 1", "~"),
        ("secret == 1", "names 'secret'"),
        ("globals() == 1", "the call globals()"),
        ("{1, 2} == {1}", "Set"),
        ("{'a': 1} == {}", "Dict"),
        ("b'x' == title", "the constant b'x'"),
        ("... == 1", "the constant Ellipsis"),
        ("len(tags, 1) == 1", "calls len() with 2 argument(s)"),
        ("len(*tags) == 1", "keyword or * arguments"),
        ("max(a=1) == 1", "keyword or * arguments"),
        ("effective <", "not a valid expression"),
        ("import os", "not a valid expression"),
        ("x = 1", "not a valid expression"),
        ("effective", "gave 0.5, not true or false"),
        ("title > 1", "cannot order"),
        ("tags + 1 == 2", "numbers only"),
        ("'a' * 1000000 == 'b'", "numbers only"),
        ("+".join(["1"] * 100) + " > 0", "too complex"),
        ("pinned or " + "x" * MAX_CHARS, "characters long"),
        ("", "expected an expression"),
        ("(" * 240 + "pinned" + ")" * 240, "not a valid expression"),
        ("not " * 100 + "pinned", "too complex"),
        ("[*tags] == []", "Starred"),
    ],
)
def test_disallowed_constructs_are_refused_before_evaluation(source: str, problem: str) -> None:
    with pytest.raises(RuleError) as caught:
        parse_rule("prune", source)
    assert problem in str(caught.value)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("effective < 0.15 and age_days > 21 and 'keep' not in tags", True),
        ("effective < 0.15 and 'meeting' not in tags", False),
        ("'meeting' in tags or pinned", True),
        ("not pinned and scored", True),
        ("0.1 < effective < 0.2", True),
        ("0.1 < effective < 0.11", False),
        ("credit - effective > 0.1", True),
        ("credit * 2 + access_count / 4 == 1.6", True),
        ("access_count % 3 == 1", True),
        ("-effective < 0", True),
        ("len(tags) == 2 and len(title) > 5", True),
        ("'apollo' in lower(tags)", True),
        ("'standup' in lower(title)", True),
        ("max(effective, 0.5) == 0.5 and min(1, 2, 3) == 1 and abs(-2) == 2", True),
        ("category in ['general', 'projects']", True),
        ("type == 'entity'", False),
        ("scope == 'global' and path != ''", True),
        ("true and not false", True),
        ("False", False),
        ("access_count >= 4 and id != None", True),
    ],
)
def test_allowed_expressions_evaluate_as_written(source: str, expected: bool) -> None:
    assert parse_rule("prune", source).matches(NOTE) is expected


def test_a_division_by_zero_fails_on_that_note_only() -> None:
    rule = parse_rule("prune", "effective / (access_count - 1) > 0.1")  # fine on the sample
    assert rule.matches({**NOTE, "access_count": 3}) is False
    with pytest.raises(RuleError, match="divides by zero"):
        rule.matches({**NOTE, "access_count": 1})


def test_rules_name_their_step_and_refuse_unknown_steps() -> None:
    rules = parse_rules({"prune": "pinned", "promote": "effective > 0.6", "version": 1})
    assert sorted(rules.rules) == ["promote", "prune"]
    assert rules.get("consolidate") is None
    with pytest.raises(RuleError, match=r"^delete: unknown step 'delete'"):
        parse_rules({"delete": "True"})
    with pytest.raises(RuleError, match=r"^promote: .*attribute access"):
        parse_rules({"prune": "True", "promote": "id.upper() == 'X'"})
    with pytest.raises(RuleError, match="expected an expression in quotes"):
        parse_rules({"prune": True})  # YAML `prune: True`, unquoted: a bool, not a rule
    with pytest.raises(RuleError, match="expected a mapping"):
        parse_rules(["prune"])


def test_note_fields_cover_every_documented_field() -> None:
    fields = note_fields({"id": "x", "tags": ["a"], "pinned": 1}, 3.0)
    assert set(fields) == set(FIELDS) == set(SAMPLE_NOTE)
    assert fields["pinned"] is True and fields["age_days"] == 3.0 and fields["scope"] == "global"
    assert {type(v) for k, v in fields.items() if FIELDS[k][0] is str} == {str}


def test_the_policy_help_names_every_field_and_function() -> None:
    from vault_brain.interfaces.cli.policy import policy_app

    help_text = str(policy_app.info.help)
    for name in [*FIELDS, *FUNCTIONS]:
        assert name in help_text, name
