"""The index's analyzer: a field indexed in one loop gives exactly the terms of Whoosh's own
StemmingAnalyzer chain (stop words, lowercase, Porter stems, Unicode, dotted numbers), and
every other use (queries) runs that chain."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from whoosh.analysis import StemmingAnalyzer

from vault_brain.storage.index.schema import STOP_WORDS, NoteAnalyzer, analyzer

DATA = Path(__file__).resolve().parents[1] / "data"
SAMPLES = [
    "Hello World, the quick brown foxes jumped over 3.14 and v1.2.3!",
    "İstanbul STRASSE straße Ünïcödé naïve café ΣΊΣΥΦΟΣ",
    "",
    "   \n\t ",
    "a an the of them they'd you're",
    "emoji 😀 test_underscore foo.bar. end. trailing.",
    "Running runs ran RUNNER's generously conditional relational",
    "日本語のテキスト 中文 한국어 العربية",
]


def chain() -> StemmingAnalyzer:
    return StemmingAnalyzer(stoplist=STOP_WORDS, minsize=1, cachesize=200_000)


def terms(ana: object, text: str, **kwargs: object) -> list[tuple[str, float]]:
    return [(t.text, t.boost) for t in ana(text, **kwargs)]  # type: ignore[operator]


def corpus() -> list[str]:
    texts = list(SAMPLES)
    for path in sorted(DATA.rglob("*.md"))[:400]:
        texts.append(path.read_text(encoding="utf-8", errors="replace"))
    words = " ".join(texts).split()
    rng = random.Random(5)
    texts += [" ".join(rng.choices(words, k=rng.randint(1, 60))) for _ in range(300)]
    return texts


def test_indexing_gives_the_terms_of_whoosh_s_own_chain() -> None:
    ours, theirs = analyzer(), chain()
    assert isinstance(ours, NoteAnalyzer)
    texts = corpus()
    assert len(texts) > 300
    for text in texts:
        assert terms(ours, text, mode="index", boosts=True) == terms(
            theirs, text, mode="index", boosts=True
        ), text[:80]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"mode": "query"},
        {"mode": "index", "positions": True, "chars": True},
        {"mode": "index", "removestops": False},
        {"mode": "index", "no_morph": True},
        {"mode": "index", "tokenize": False},
    ],
)
def test_every_other_use_runs_the_chain(kwargs: dict[str, object]) -> None:
    ours, theirs = analyzer(), chain()
    for text in SAMPLES:
        mine = [(t.text, t.stopped, getattr(t, "pos", None)) for t in ours(text, **kwargs)]
        whoosh = [(t.text, t.stopped, getattr(t, "pos", None)) for t in theirs(text, **kwargs)]
        assert mine == whoosh
