"""What the slot rules see in a pair of statements (`domain.capture.change.signs`), the
numbers the learned judge of updates reads beside the statements' vectors, and how its two
thresholds combine with them (`storage.index.updates.Model.updates`)."""

from __future__ import annotations

import pytest

from vault_brain.domain.capture.change import rules_say, signs
from vault_brain.storage.index.updates import Model


@pytest.mark.parametrize(
    ("new", "old", "expected"),
    [
        # a change cue; one slot (where the user lives), other values; nothing left by name
        ("User moved to Lisbon last month", "User lives in Berlin", (1, 1, 0, 0, 1)),
        # the newer names what the user left (so the older names no value the newer does not)
        ("I dropped Visio for Figma", "We draw our diagrams in Visio", (0, 0, 1, 0, 0)),
        # no slot rule knows the attribute: `changes` reads it
        ("Team lunch has been moved to 1pm", "Team lunch is every Friday at noon", (1, 0, 0, 1, 1)),
        # the same value again: no sign of a change
        ("I still live in Berlin", "User lives in Berlin", (0, 0, 0, 0, 0)),
    ],
)
def test_signs_read_a_change_a_slot_a_value_left_and_other_values(
    new: str, old: str, expected: tuple[int, ...]
) -> None:
    assert signs(new, old) == tuple(float(x) for x in expected)
    assert rules_say(signs(new, old)) == any(expected[1:4])


def test_the_rules_lower_the_bar_and_never_decide_alone() -> None:
    model = Model("e5-small", "m", 0.0, (), threshold=0.9, ruled=0.6, nearest=0.5)
    ruled, unruled = (1.0, 1.0, 0.0, 0.0, 1.0), (1.0, 0.0, 0.0, 0.0, 1.0)
    assert model.updates(0.95, unruled, False) and model.updates(0.95, ruled, False)
    assert model.updates(0.7, ruled, False) and not model.updates(0.7, unruled, False)
    assert not model.updates(0.5, ruled, False)  # the model overrules the rules


def test_the_nearest_line_of_a_change_has_a_lower_bar() -> None:
    model = Model("e5-small", "m", 0.0, (), threshold=0.9, ruled=0.8, nearest=0.5)
    change, no_change = (1.0, 0.0, 0.0, 0.0, 1.0), (0.0, 0.0, 0.0, 0.0, 1.0)
    assert model.updates(0.6, change, True)
    assert not model.updates(0.6, change, False)  # not the nearest line
    assert not model.updates(0.6, no_change, True)  # the newer does not say it is a change
    assert not model.updates(0.4, change, True)
