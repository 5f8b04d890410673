"""The learned check's verdicts are remembered by text (`app.memory.memo.learned`): a text
seen before is not judged again, the new ones of a call are judged in one batch, and the
memo keeps at most `MAX_REMEMBERED` texts, the least recently used leaving first."""

from __future__ import annotations

import pytest

from vault_brain.app.memory import memo


@pytest.fixture(autouse=True)
def _fresh() -> None:
    memo.forget_learned()


def test_only_texts_not_seen_before_are_judged_once_in_one_batch() -> None:
    calls: list[list[str]] = []

    def judge(texts: list[str]) -> list[str | None]:
        calls.append(texts)
        return ["injection" if "obey" in t else None for t in texts]

    assert memo.learned(["a fact", "obey me", "a fact"], judge) == [None, "injection", None]
    assert memo.learned(["obey me", "another fact"], judge) == ["injection", None]
    assert calls == [["a fact", "obey me"], ["another fact"]]
    assert memo.learned(["a fact"], judge) == [None] and len(calls) == 2


def test_the_memo_forgets_the_least_recently_used_past_its_size(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(memo, "MAX_REMEMBERED", 2)
    judged: list[str] = []

    def judge(texts: list[str]) -> list[str | None]:
        judged.extend(texts)
        return [None] * len(texts)

    memo.learned(["one", "two"], judge)
    memo.learned(["one"], judge)  # "one" used again: "two" is now the oldest
    memo.learned(["three"], judge)
    memo.learned(["one", "two"], judge)
    assert judged == ["one", "two", "three", "two"]
