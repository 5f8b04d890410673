"""Maximal marginal relevance (domain.ranking.mmr): a pure function, tested as one."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from vault_brain.domain.notes.ranking import jaccard, mmr
from vault_brain.domain.text import content_words

TEA = content_words("The user prefers green tea over coffee in the morning.")
TEA_AGAIN = content_words("The user prefers green tea over coffee every morning.")
BIKE = content_words("The user cycles to the office on Tuesdays.")


def test_a_near_copy_waits_behind_a_different_memory() -> None:
    relevance = [1.0, 0.95, 0.8]
    words = [TEA, TEA_AGAIN, BIKE]
    assert jaccard(TEA, TEA_AGAIN) > 0.7 and jaccard(TEA, BIKE) < 0.2
    assert mmr(relevance, words, 2, 0.7) == [0, 2]  # the copy is passed over
    assert mmr(relevance, words, 3, 0.7) == [0, 2, 1]
    assert mmr(relevance, words, 2, 1.0) == [0, 1]  # lambda 1: the ranking as it is


def test_edge_cases() -> None:
    assert mmr([], [], 5, 0.7) == []
    assert mmr([0.0, 0.0], [set(), set()], 5, 0.5) == [0, 1]  # ties keep the order
    assert jaccard(set(), set()) == 0.0


@given(
    st.lists(
        st.tuples(
            st.floats(0, 100, allow_nan=False),
            st.frozensets(st.sampled_from("abcdefgh"), max_size=5),
        ),
        max_size=12,
    ),
    st.integers(0, 15),
    st.floats(0.01, 1),
)
def test_mmr_picks_distinct_items_best_first(
    items: list[tuple[float, frozenset[str]]], k: int, lam: float
) -> None:
    relevance = [r for r, _ in items]
    order = mmr(relevance, [w for _, w in items], k, lam)
    assert len(order) == min(k, len(items)) and len(set(order)) == len(order)
    if order:  # the first pick is always the most relevant (the earliest on a tie)
        assert order[0] == relevance.index(max(relevance))  # (lambda > 0)
