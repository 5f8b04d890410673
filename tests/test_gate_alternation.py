"""The gate's alternations, in the fast form a busy process builds (`domain.gate.alternation`),
answer exactly as the plain alternation of the same parts (the form they start in):
`any_tested` patterns (yes/no) say yes for the same texts, `any_of` patterns find the same
matches at the same places. Checked on every text of the gate's and the capture corpus's
labelled sets (attacks and ordinary text), folded as the gate folds them, whole and cut at
every tenth character (a snippet starts mid-sentence)."""

from __future__ import annotations

import json
import re

import pytest

from conftest import REPO
from vault_brain.domain.gate import patterns
from vault_brain.domain.gate.alternation import (
    FAST_AFTER,
    Alternation,
    any_of,
    any_tested,
    build_fast_forms,
)
from vault_brain.domain.gate.normalize import fold

CORPORA = [
    *sorted((REPO / "tests" / "data" / "gate").glob("*.jsonl")),
    *sorted((REPO / "tests" / "data" / "capture").glob("*.jsonl")),
]
COMPILED = {
    name: value
    for name, value in vars(patterns).items()
    if isinstance(value, Alternation) and value.fast().pattern != value.plain().pattern
}


def texts() -> list[str]:
    found: list[str] = []
    for path in CORPORA:
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line) if line.strip() else {}
            for value in record.values():
                if isinstance(value, str) and len(value) > 20:
                    found += [value, fold(value), fold(value, keep_spacing=True)]
    cut = [t[i:] for t in found[::3] for i in range(10, len(t), 10)]
    return found + cut


TEXTS = texts()


def test_the_corpora_and_patterns_are_there() -> None:
    assert len(TEXTS) > 5000
    assert {"INJECTION", "SECRET", "COMMAND_ANYWHERE"} <= set(COMPILED)


@pytest.mark.parametrize("name", sorted(COMPILED))
def test_a_compiled_alternation_answers_as_the_plain_one(name: str) -> None:
    fast, slow, tested_only = COMPILED[name].fast(), COMPILED[name].plain(), COMPILED[name].tested
    hits = 0
    for text in TEXTS:
        if tested_only:
            found = bool(slow.search(text))
            assert bool(fast.search(text)) == found, (name, text)
        else:
            spans = [m.span() for m in slow.finditer(text)]
            assert [m.span() for m in fast.finditer(text)] == spans, (name, text)
            found = bool(spans)
        hits += found
    assert hits > 0, f"{name} matched nothing: the comparison said nothing"


def test_first_characters_that_cannot_be_worked_out_still_match() -> None:
    parts = (r"\b\w+ous\b", r"\b(?:x|y)?zeta\b", r"\b(?i:Alpha)\b", r"\bbeta\b", r"[0-9]{3}")
    tested, slow = any_tested(*parts).fast(), re.compile("|".join(f"(?:{p})" for p in parts))
    for text in ["famous", "zeta", "yzeta", "ALPHA", "beta", "x 123", "nothing", "alphabet"]:
        assert bool(tested.search(text)) == bool(slow.search(text)), text
    ordered = any_of(*parts).fast()
    for text in ["famous zeta ALPHA beta 123", "alphabet betas"]:
        assert [m.span() for m in ordered.finditer(text)] == [m.span() for m in slow.finditer(text)]


def test_the_fast_form_is_built_once_a_pattern_is_used_often() -> None:
    pattern = any_tested(r"\bignore\b", r"\bdisregard\b")
    for _ in range(FAST_AFTER):
        assert pattern.search("please ignore it")
    assert pattern._fast is None  # a one-shot command's few uses: the plain form only
    assert pattern.search("disregard that") and pattern._fast is not None
    assert pattern._fast.pattern != pattern.plain().pattern


def test_a_server_builds_every_fast_form_when_it_starts() -> None:
    fresh = any_tested(r"\bquokka\b", r"\bwombat\b")
    assert fresh._fast is None
    build_fast_forms()
    assert fresh._fast is not None and all(p._fast is not None for p in COMPILED.values())
