"""MEMORY.md: ordered by effective credit, pinned first, sectioned, never over its token budget
(counted with the real cl100k_base tokenizer), built from the index's stored fields."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from vault_brain.app.memory.credit import credit_rows
from vault_brain.app.memory.memory_file import build_memory_file
from vault_brain.app.memory.vault import Vault
from vault_brain.storage import tokens


def make_notes(vault: Path, count: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    words = [
        "alpha",
        "beta",
        "gamma",
        "delta",
        "tea",
        "coffee",
        "project",
        "launch",
        "budget",
        "review",
        "meeting",
        "Zoë",
        "東京",
    ]
    cats = ["people", "projects", "preferences"]
    for i in range(count):
        kind = "entities/" + cats[i % 3] if i % 4 else "episodes/2026-03"
        path = vault / kind / f"n{i}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        body = " ".join(rng.choice(words) for _ in range(rng.randint(5, 120)))
        pinned = "pinned: true\n" if i % 17 == 0 else ""
        path.write_text(
            f"---\ntitle: Note {i}\ncredit: {rng.random():.3f}\n{pinned}---\n{body}\n",
            encoding="utf-8",
        )


def test_real_tokenizer_is_used_in_tests() -> None:
    """CI exercises tiktoken itself (its encoding file comes from the bpe-openai dev package)."""
    counter = tokens.get_counter()
    assert counter.exact and counter.name == "tiktoken cl100k_base"
    assert counter.count("hello world") == 2


@pytest.mark.parametrize("budget", [40, 150, 600, 2000, 5000])
def test_never_exceeds_budget_with_real_tokenizer(vault: Path, budget: int) -> None:
    make_notes(vault, 120)
    result = build_memory_file(Vault.open(vault), budget)
    counter = tokens.get_counter()
    assert counter.exact
    assert counter.count(result.text) == result.tokens <= budget
    if budget >= 600:
        assert result.included and result.omitted > 0
        assert f"{result.omitted} more memories are not shown" in result.text
        assert "vb search" in result.text


def test_order_pinned_first_then_effective_score(vault: Path, cli: Any) -> None:
    make_notes(vault, 40)
    result = build_memory_file(Vault.open(vault), 5000)
    rows = {r["id"]: r for r in credit_rows(Vault.open(vault))}
    chosen = [rows[i] for i in result.included]
    pinned = [r for r in chosen if r["pinned"]]
    assert pinned and chosen[: len(pinned)] == pinned
    rest = [r["effective"] for r in chosen[len(pinned) :]]
    assert rest == sorted(rest, reverse=True)
    text = result.text
    assert text.index("## People") < text.index("## Projects") < text.index("## Preferences")
    assert text.index("## Preferences") < text.index("## Recent episodes")
    assert text.count("<!-- score: ") == len(result.included)


def test_built_from_index_without_parsing_notes(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_notes(vault, 30)
    v = Vault.open(vault)
    v.reconcile()
    assert v.policy  # STRATEGY.md is read before the check; notes must not be

    def no_parsing(*_: object, **__: object) -> None:
        raise AssertionError("MEMORY.md must be built from the index, not by parsing notes")

    monkeypatch.setattr("vault_brain.storage.notes.frontmatter.parse_text", no_parsing)
    monkeypatch.setattr("vault_brain.storage.notes.read.parse_text", no_parsing)
    assert build_memory_file(v, 3000).included


def test_write_only_when_changed(vault: Path, cli: Any) -> None:
    make_notes(vault, 10)
    first = cli("--vault", str(vault), "memory-file", "--json").json()
    assert first["written"] is True and first["tokens"] <= first["budget"] == 5000
    mtime = (vault / "MEMORY.md").stat().st_mtime_ns
    second = cli("--vault", str(vault), "memory-file", "--json").json()
    assert second["written"] is False
    assert (vault / "MEMORY.md").stat().st_mtime_ns == mtime


def test_estimate_when_encoding_unavailable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "empty"))
    monkeypatch.setattr(tokens, "fill_cache_from_bpe_openai", lambda: False)
    tokens.get_counter.cache_clear()
    try:
        counter = tokens.get_counter()
        assert not counter.exact and counter.name.startswith("estimate")
        assert counter.count("x" * 325) == 100
    finally:
        tokens.get_counter.cache_clear()


def test_an_entity_entry_lists_vbs_facts_the_latest_first_in_whole_items(vault: Path) -> None:
    facts = [
        f"User's fact number {i} is about something else entirely, said at length"
        for i in range(1, 17)
    ]
    lines = [f"- {fact} (from session s{i}, m0001)" for i, fact in enumerate(facts, 1)]
    path = vault / "entities/people/user.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    body = "Written by the person.\n\n" + "\n".join(lines) + "\n\n## Previously\n\n- Gone\n"
    path.write_text(f"---\ntitle: User\ntype: entity\ncredit: 0.9\n---\n{body}", encoding="utf-8")

    text = build_memory_file(Vault.open(vault), 5000).text
    entry = next(line for line in text.splitlines() if line.startswith("- **User**"))
    summary = entry.split(": ", 1)[1].split(" <!--")[0]
    # the person's text as it stands, then the latest fact first
    assert summary.startswith(f"Written by the person. - {facts[-1]} - {facts[-2]}")
    assert "Gone" not in summary and "(from session" not in summary
    # cut after a whole item: every item shown is a whole fact
    assert summary.endswith("…")
    shown = summary.removesuffix("…").split(" - ")[1:]
    assert shown and all(item in facts for item in shown)
    assert facts[0] not in summary
    # most of them: a person's entry is the one that gathers facts (at 300 characters the
    # user's showed three of these)
    assert len(shown) >= 10
