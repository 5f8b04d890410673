"""A second opinion on hostile text, from its meaning: a linear model over the e5-small
vector of the text (the encoder hybrid search uses, `vectors`).

The gate's rules (`domain.gate`) recognise wordings: on a set written blind, without sight
of them, they refused half of the hostile texts. A text's multilingual e5 vector carries
what it asks for whatever the wording or language, and a logistic regression over it,
trained (`scripts/train_gate.py`) on the project's labelled hostile and benign texts,
caught 174 of the 276 hostile texts the rules miss among those (5-fold cross-validation)
while scoring 1% of the benign ones that look risky hostile.

It is used where an agent stores a memory (`app.memory.guard.admit`) and on what a
conversation leaves in memory or context (`guard.screen`: captured statements, summaries),
after the rules pass a text; it needs the embeddings extra, and without it the rules alone
decide. The weights (`hostile-e5.json`) name the encoder they were trained on: another one is
never scored. A disguised text (letters spaced apart, invisible characters, look-alikes,
fullwidth letters) is shown to the model as a person reads it (`normalize.readable`): the
model was trained on texts as written, most with no disguise, and reads an encoder's pieces
of "a s s i s t a n t" as noise.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from vault_brain.domain.gate.normalize import readable
from vault_brain.storage.index.learned import Unavailable, encoder_for

__all__ = ["Model", "Unavailable", "kinds", "model"]


@dataclass(frozen=True)
class Model:
    encoder: str  # the `vectors` encoder name and model id the weights belong to
    model_id: str
    classes: tuple[str, ...]  # the first is "benign"
    bias: tuple[float, ...]
    weights: tuple[tuple[float, ...], ...]  # one row per class
    threshold: float  # hostile when the probability of "benign" is below it

    def kind(self, vector: list[float]) -> str | None:
        scores = [
            bias + math.fsum(w * x for w, x in zip(row, vector, strict=True))
            for bias, row in zip(self.bias, self.weights, strict=True)
        ]
        top = max(scores)
        exps = [math.exp(s - top) for s in scores]
        if exps[0] / math.fsum(exps) >= self.threshold:
            return None
        return self.classes[max(range(1, len(exps)), key=exps.__getitem__)]


@cache
def model() -> Model:
    meta = json.loads(
        resources.files(__package__).joinpath("hostile-e5.json").read_text(encoding="utf-8")
    )
    return Model(
        meta["encoder"],
        meta["model_id"],
        tuple(meta["classes"]),
        tuple(meta["bias"]),
        tuple(tuple(row) for row in meta["weights"]),
        float(meta["threshold"]),
    )


def kinds(texts: list[str], state_dir: Path | None) -> list[str | None]:
    """The hostile kind ("injection", "exfiltration", "secret") the model gives each text,
    or None; `Unavailable` where it cannot run. One batch through the encoder."""
    try:
        learned = model()
    except (OSError, ValueError, KeyError, TypeError) as exc:  # (a damaged install)
        raise Unavailable(f"its weights (hostile-e5.json) do not load: {exc}") from exc
    vectors = encoder_for(learned.encoder, learned.model_id, state_dir, "hostile-e5.json")
    shown = [readable(text) for text in texts]
    found = vectors.embed(shown, learned.encoder, state_dir, queries=True)
    return [learned.kind(vector.tolist()) for vector in found]
