"""Credit: the update rule's properties, and feedback written to front matter and logs."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from vault_brain.app.memory.credit import judged_turn
from vault_brain.domain.notes.credit import effective_score, shared_reward, update_score
from vault_brain.domain.policy.settings import DEFAULT_POLICY

REWARDS = DEFAULT_POLICY.rewards
STRONGEST = max(abs(r) for r in REWARDS.values())
ALPHA = DEFAULT_POLICY.alpha
scores = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
signals = st.sampled_from(sorted(REWARDS))
retrieved = st.integers(min_value=1, max_value=50)


def step(score: float, signal: str, n: int = 1) -> float:
    return update_score(score, shared_reward(REWARDS[signal], n), ALPHA, STRONGEST)


@given(scores, signals, retrieved)
def test_scores_stay_in_unit_interval(score: float, signal: str, n: int) -> None:
    assert 0.0 <= step(score, signal, n) <= 1.0


@given(
    st.floats(min_value=0.0, max_value=0.999),
    st.sampled_from([s for s, r in REWARDS.items() if r > 0]),
    retrieved,
)
def test_one_positive_signal_raises_the_score(score: float, signal: str, n: int) -> None:
    assert step(score, signal, n) > score


@given(
    st.floats(min_value=0.001, max_value=1.0),
    st.sampled_from([s for s, r in REWARDS.items() if r < 0]),
    retrieved,
)
def test_one_negative_signal_lowers_the_score(score: float, signal: str, n: int) -> None:
    assert step(score, signal, n) < score


@given(scores, retrieved)
def test_repeated_good_feedback_passes_promotion_threshold(score: float, n: int) -> None:
    for _ in range(40 * math.ceil(math.sqrt(n))):
        score = step(score, "positive_feedback", n)
    assert score > DEFAULT_POLICY.promotion_threshold


@given(scores, retrieved)
def test_repeated_corrections_drop_below_prune_threshold(score: float, n: int) -> None:
    for _ in range(40 * math.ceil(math.sqrt(n))):
        score = step(score, "user_correction", n)
    assert score < DEFAULT_POLICY.prune_threshold


def test_fresh_score_after_five_good_signals_alone() -> None:
    """A concrete trajectory, so the documented pace does not drift unnoticed."""
    score = DEFAULT_POLICY.initial_score
    for _ in range(5):
        score = step(score, "positive_feedback")
    assert 0.62 < score < 0.64  # 1 - 0.5 * 0.94**5


@given(scores, st.floats(min_value=0, max_value=3650), st.floats(min_value=0, max_value=0.5))
def test_decay_never_raises_and_is_identity_at_zero_days(
    score: float, days: float, rate: float
) -> None:
    assert effective_score(score, days, rate) <= score + 1e-12
    assert effective_score(score, 0, rate) == score


def test_shared_reward_divides_by_sqrt_n() -> None:
    assert shared_reward(0.3, 4) == 0.15
    assert shared_reward(0.3, 0) == 0.0


def test_last_turn_takes_latest_turn_with_retrievals() -> None:
    records: list[dict[str, Any]] = [
        {"type": "retrieval", "ids": ["a"], "paths": ["x/a.md"]},
        {"type": "user", "content": "hi"},
        {"type": "retrieval", "ids": ["b", "c"], "paths": ["x/b.md", "x/c.md"]},
        {"type": "retrieval", "ids": ["c", "d"]},
        {"type": "user", "content": "/good"},
    ]
    assert judged_turn(records)[0] == [("b", "x/b.md"), ("c", "x/c.md"), ("d", None)]


def test_feedback_changes_only_credit_lines_and_logs(vault: Path, cli: Any) -> None:
    note = vault / "entities/preferences/tea.md"
    note.parent.mkdir(parents=True, exist_ok=True)
    original = (
        "---\n# my tea note\ntitle: Tea\ncustom: {a: 1}\ncredit: 0.5\n---\nLikes oolong tea.\n"
    )
    note.write_text(original, encoding="utf-8")
    cli("--vault", str(vault), "search", "oolong", "--session", "t1")
    after_access = note.read_text(encoding="utf-8")
    assert after_access.startswith("---\n# my tea note\ntitle: Tea\ncustom: {a: 1}\ncredit: 0.5\n")
    assert "access_count: 1\n" in after_access and "last_accessed: " in after_access

    res = cli("--vault", str(vault), "feedback", "good", "--session", "t1", "--json")
    assert res.exit_code == 0, res.stderr
    change = res.json()["changes"][0]
    assert change["old"] == 0.5 and change["new"] > 0.5
    final = note.read_text(encoding="utf-8").splitlines()
    before = after_access.splitlines()
    differing = [(a, b) for a, b in zip(before, final, strict=True) if a != b]
    assert differing == [("credit: 0.5", f"credit: {change['new']}")]

    log = [json.loads(x) for x in (vault / "logs/credit.jsonl").read_text().splitlines()]
    assert (
        log[-1]["signal"] == "positive_feedback" and log[-1]["changes"][0]["new"] == change["new"]
    )


def test_feedback_on_unknown_session_is_a_clear_error(vault: Path, cli: Any) -> None:
    res = cli("--vault", str(vault), "feedback", "good", "--session", "nope")
    assert res.exit_code == 3 and "nothing was retrieved in session 'nope'" in res.stderr


def test_credit_report_orders_by_effective_score(vault: Path, cli: Any) -> None:
    for name, credit in (("hi", 0.9), ("mid", 0.5), ("lo", 0.1)):
        path = vault / f"entities/projects/{name}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\ncredit: {credit}\n---\nbody\n", encoding="utf-8")
    data = cli("--vault", str(vault), "credit", "report", "--top", "1", "--json").json()
    assert [r["id"] for r in data["highest"]] == ["entity-projects-hi"]
    assert [r["id"] for r in data["lowest"]] == ["entity-projects-lo"]


def test_feedback_closes_a_turn_without_user_messages() -> None:
    """An MCP session has no user messages: each feedback ends the turn it judged."""
    records: list[dict[str, Any]] = [
        {"type": "retrieval", "ids": ["a"]},
        {"type": "feedback", "signal": "positive_feedback"},
        {"type": "retrieval", "ids": ["b"]},
    ]
    assert judged_turn(records)[0] == [("b", None)]
    assert judged_turn(records[:2])[0] == [("a", None)]  # a second signal judges the same turn
