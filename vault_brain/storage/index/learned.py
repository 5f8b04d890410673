"""What the learned checks share: the encoder their weights were trained on, loaded only
when it is the one those weights name (`hostile`: hostile text; `updates`: a statement that
updates an older one)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


class Unavailable(Exception):
    """A learned check cannot run here: no embeddings extra, weights that do not load, or an
    encoder whose files are not the ones checked, or not the one the weights were trained
    on."""


def encoder_for(name: str, model_id: str, state_dir: Path | None, weights: str) -> Any:
    """The `vectors` module once encoder `name` is loaded and is `model_id` (the one the
    weights file `weights` was trained on); `Unavailable` otherwise."""
    try:
        from vault_brain.storage.index import vectors
    except ImportError as exc:  # (numpy, with the rest of the extra, is not installed)
        raise Unavailable(str(exc)) from exc
    try:
        enc = vectors.encoder(name, state_dir)
    except (vectors.EmbeddingsMissing, vectors.ModelMismatch) as exc:
        raise Unavailable(str(exc)) from exc
    if enc.model_id != model_id:
        raise Unavailable(f"its weights ({weights}) are for {model_id}, not {enc.model_id}")
    return vectors
