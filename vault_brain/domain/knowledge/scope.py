"""What a search covers (memory, extracted items, session transcripts, project source
files), and how results from several of them become one list (pure).

Scores from different indexes are not comparable (a note's score blends BM25 with credit and
recency; an item's is BM25 alone), so lists are fused by rank: reciprocal rank fusion, each
result scoring 1 / (RRF_K + its rank) in its own list, rank 1 first. One source searched
alone keeps its own scores and order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TypeVar

SOURCES = ("memory", "items", "sessions", "sources")
RRF_K = 60

T = TypeVar("T")


def parse_sources(value: str | Iterable[str]) -> tuple[str, ...]:
    """`memory,items` (or a list of names, or `all`) -> the sources in canonical order;
    ValueError naming the valid ones otherwise."""
    names = value.split(",") if isinstance(value, str) else [str(v) for v in value]
    wanted = {n.strip().lower() for n in names if n.strip()}
    if "all" in wanted:
        return SOURCES
    unknown = sorted(wanted - set(SOURCES))
    if unknown:
        raise ValueError(
            f"unknown search source {unknown[0]!r}: choose from {', '.join(SOURCES)} or all"
        )
    if not wanted:
        raise ValueError(f"name at least one source: {', '.join(SOURCES)} or all")
    return tuple(s for s in SOURCES if s in wanted)


def fuse(lists: Sequence[tuple[str, Sequence[T]]], k: int) -> list[tuple[str, float, T]]:
    """(source, fused score, result) for the best `k` across `lists` of (source, results
    best first). Ties keep source order, then rank."""
    scored = [
        (1.0 / (RRF_K + rank), order, rank, source, found)
        for order, (source, results) in enumerate(lists)
        for rank, found in enumerate(results, 1)
    ]
    scored.sort(key=lambda row: (-row[0], row[2], row[1]))
    return [(source, round(score, 6), found) for score, _, _, source, found in scored[:k]]
