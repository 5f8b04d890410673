"""Note embeddings for hybrid search: a local WordLlama model and one vector per note.

The model (PyPI `wordllama`, MIT) ships its 256-dimension `l2_supercat` weights and its
tokenizer inside the wheel and is loaded from there with downloads disabled: it never
touches the network. Only `search_mode: hybrid` imports this module (numpy, wordllama),
so lexical search and `vb --help` never pay for it.

The vectors are a cache of the files, like the index: `.vb/embeddings.npz` holds the
matrix (unit rows, float32), each row's note path and the file stamp (mtime_ns, size) it
was embedded at, and the model it came from. `sync` brings it in line with the index's
manifest by embedding only the notes whose stamp changed; a file that does not load (torn,
damaged, another model or format) is rebuilt from the notes, never fatal.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from vault_brain.storage.files import write_cache

log = logging.getLogger("vault_brain.search")

MODEL_CONFIG, MODEL_DIM = "l2_supercat", 256
MODEL = f"wordllama/{MODEL_CONFIG}/{MODEL_DIM}"
# bump when the embedded text or the file layout changes: caches are rebuilt
FORMAT = 2  # 2: a note's "## Previously" section is not embedded
MAX_TOKENS = 512  # a note's first 512 tokens are embedded (the mean of their vectors)
BATCH = 64

_model: Any = None


class EmbeddingsMissing(ImportError):
    """The embeddings extra (numpy, wordllama) is not installed."""


@contextlib.contextmanager
def _root_logging_kept() -> Iterator[None]:
    """wordllama calls `logging.basicConfig(level=INFO)` when imported: whatever it adds to
    the root logger is taken back, so vb's stderr and the MCP server's logs stay as set."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        yield
    finally:
        for handler in root.handlers[:]:
            if handler not in handlers:
                root.removeHandler(handler)
        root.setLevel(level)


def model() -> Any:
    """The WordLlama model, loaded once per process from the files in its wheel."""
    global _model
    if _model is None:
        try:
            with _root_logging_kept():
                import wordllama
                from wordllama import WordLlama
        except ImportError as exc:
            raise EmbeddingsMissing(str(exc)) from exc
        # `cache_dir` names the package itself: its weights/ and tokenizers/ folders hold
        # the shipped files (wordllama 0.4 looks for the tokenizer in a `tokenizer/` folder
        # that does not exist and would download it otherwise).
        found = WordLlama.load(
            config=MODEL_CONFIG,
            dim=MODEL_DIM,
            cache_dir=Path(wordllama.__file__).parent,
            disable_download=True,
        )
        found.tokenizer.enable_truncation(MAX_TOKENS)
        _model = found
    return _model


def embed(texts: list[str]) -> Any:
    """Unit vectors (float32, one row per text); an empty text gets a zero row."""
    out = np.zeros((len(texts), MODEL_DIM), dtype=np.float32)
    if not texts:
        return out
    wl = model()
    # similar lengths in a batch: the tokenizer pads each batch to its longest text
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    for start in range(0, len(order), BATCH):
        part = order[start : start + BATCH]
        vecs = wl.embed([texts[i] for i in part], norm=False, batch_size=BATCH)
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        out[part] = np.divide(vecs, norms, out=np.zeros_like(vecs), where=norms > 0)
    return out


class Vectors:
    """One unit vector per note path, with the file stamp it was embedded at."""

    def __init__(
        self,
        rels: list[str] | None = None,
        stamps: list[list[int]] | None = None,
        matrix: Any = None,
    ) -> None:
        self._set(rels or [], stamps or [], matrix)
        self.damaged: str | None = None
        """Why the file could not be used (it is rebuilt), or None."""
        self.dirty = False
        """Changed since loaded or saved."""

    def _set(self, rels: list[str], stamps: list[list[int]], matrix: Any) -> None:
        self.rels = rels
        self.stamps = {rel: list(st) for rel, st in zip(rels, stamps, strict=True)}
        self.matrix = matrix if matrix is not None else np.zeros((0, MODEL_DIM), np.float32)
        self.row_of = {rel: n for n, rel in enumerate(rels)}

    @classmethod
    def load(cls, path: Path) -> Vectors:
        """The vectors saved at `path`; empty when there are none, and marked `damaged` (so
        every note is embedded again) when the file does not load or is another model's."""
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return cls()
        except OSError as exc:
            return cls._damaged(f"unreadable: {exc}")
        try:
            with np.load(io.BytesIO(raw), allow_pickle=False) as data:
                meta = json.loads(str(data["meta"]))
                rels = [str(r) for r in data["rels"].tolist()]
                stamps = data["stamps"].astype(np.int64).tolist()
                matrix = np.ascontiguousarray(data["matrix"], dtype=np.float32)
        except Exception as exc:  # a torn or foreign file is a cache miss, never fatal
            return cls._damaged(f"{type(exc).__name__}: {exc}")
        if meta != {"model": MODEL, "format": FORMAT}:
            return cls._damaged(f"made by {meta!r}")
        if matrix.shape != (len(rels), MODEL_DIM) or len(stamps) != len(rels):
            return cls._damaged(f"shape {matrix.shape} for {len(rels)} notes")
        if not np.isfinite(matrix).all() or len(set(rels)) != len(rels):
            return cls._damaged("invalid values")
        return cls(rels, stamps, matrix)

    @classmethod
    def _damaged(cls, why: str) -> Vectors:
        found = cls()
        found.damaged, found.dirty = why, True
        return found

    def save(self, path: Path) -> None:
        """Write the file atomically (best effort: a cache that is not written is rebuilt)."""
        buf = io.BytesIO()
        np.savez(
            buf,
            meta=np.array(json.dumps({"model": MODEL, "format": FORMAT})),
            rels=np.array(self.rels, dtype=str),
            stamps=np.array([self.stamps[r] for r in self.rels], dtype=np.int64).reshape(-1, 2),
            matrix=self.matrix,
        )
        write_cache(path, buf.getvalue())
        self.damaged, self.dirty = None, False

    def sync(
        self, files: Mapping[str, list[int]], text_of: Callable[[str], str | None]
    ) -> list[str]:
        """Embed the notes of `files` (path -> stamp, the index's manifest) whose stamp is
        not the one their vector was made at, drop the vectors of notes no longer there;
        returns the paths embedded. `text_of` reads a note's text (None: unreadable now,
        its vector is left out until the index sees it again)."""
        changed = sorted(rel for rel, st in files.items() if self.stamps.get(rel) != list(st))
        gone = [rel for rel in self.rels if rel not in files]
        if not changed and not gone:
            return []
        texts: dict[str, str] = {}
        for rel in changed:
            text = text_of(rel)
            if text is not None:
                texts[rel] = text
        fresh = list(texts)
        new = embed([texts[rel] for rel in fresh])
        keep = [rel for rel in self.rels if rel in files and rel not in texts]
        rels = keep + fresh
        kept = self.matrix[[self.row_of[rel] for rel in keep]] if keep else self.matrix[:0]
        stamps = [self.stamps[rel] for rel in keep] + [list(files[rel]) for rel in fresh]
        self._set(rels, stamps, np.concatenate([kept, new]))
        self.dirty = True
        return fresh

    def similarity(self, query: str) -> Any:
        """The cosine similarity of `query` to every note (in `rels` order)."""
        vec = embed([query])[0]
        return self.matrix @ vec
