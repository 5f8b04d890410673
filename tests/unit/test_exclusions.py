"""The two predicates that keep a person's notes from agents (`private`) and from vb's
counters (`vb: false`), with STRATEGY.md's folder and glob patterns."""

from __future__ import annotations

import pytest

from vault_brain.domain.errors import VaultBrainError
from vault_brain.domain.policy.exclusions import (
    check_pattern,
    counters_refused,
    is_private,
    path_matches,
)
from vault_brain.domain.policy.settings import build_policy

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("rel", "pattern", "matches"),
    [
        ("journal/2024-01-01.md", "journal/", True),
        ("journal/deep/down/x.md", "journal/", True),
        ("notes/journal/x.md", "journal/", False),  # a folder is from the vault's top
        ("journal.md", "journal/", False),
        ("projects/a/private/x.md", "projects/*/private/", True),
        ("projects/a/b/private/x.md", "projects/*/private/", False),
        ("people/bank.secret.md", "**/*.secret.md", True),
        ("bank.secret.md", "**/*.secret.md", True),  # `**/` is any number of folders, none too
        ("a/b/c/bank.secret.md", "*.secret.md", True),  # no `/`: the file name, anywhere
        ("a/bank.secret.md.bak", "*.secret.md", False),
        ("people/ann.md", "people/ann.md", True),
        ("people/anne.md", "people/ann.md", False),
        ("people/x/ann.md", "people/*.md", False),  # `*` stays within one folder name
        ("Journal/x.md", "journal/", False),  # case counts
        ("archive/journal/old.md", "journal/", True),  # archived: by the path it had
    ],
)
def test_a_pattern_matches_what_its_doc_says(rel: str, pattern: str, matches: bool) -> None:
    assert (path_matches(rel, [pattern]) == pattern) is matches


def test_private_by_front_matter_or_path() -> None:
    assert is_private("a.md", {"private": True}, [])
    assert is_private("a.md", {"private": "yes"}, [])
    assert is_private("a.md", {"private": "maybe"}, [])  # unclear: kept out (fail closed)
    assert not is_private("a.md", {"private": "false"}, [])
    assert not is_private("a.md", {}, ["journal/"])
    assert is_private("journal/a.md", {"private": False}, ["journal/"])  # the person's setting


def test_counters_refused_by_vb_false_or_path_with_a_reason() -> None:
    assert counters_refused("a.md", {}, []) is None
    assert counters_refused("a.md", {"vb": True}, []) is None
    assert "vb: false" in str(counters_refused("a.md", {"vb": False}, []))
    assert "vb: false" in str(counters_refused("a.md", {"vb": "no"}, []))
    said = counters_refused("docs/a.md", {}, ["docs/"])
    assert said is not None and "'docs/'" in said and "no_counters" in said


@pytest.mark.parametrize("bad", ["", "/", "/etc/", "../x/", "a\\b.md", "a/../b/"])
def test_a_pattern_that_names_no_note_or_leaves_the_vault_is_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        check_pattern(bad)
    with pytest.raises(VaultBrainError, match="private_paths"):
        build_policy({"private_paths": [bad]})


def test_the_settings_take_a_list_or_one_pattern() -> None:
    policy = build_policy({"private_paths": "journal/", "no_counters": ["docs/", "*.log.md"]})
    assert policy.private_paths == ["journal/"]
    assert policy.no_counters == ["docs/", "*.log.md"]
    assert build_policy({}).private_paths == [] and build_policy({}).no_counters == []
    with pytest.raises(VaultBrainError, match="no_counters"):
        build_policy({"no_counters": [1]})
