"""Which older statement a new fact updates, as the learned judge sees it
(`storage.index.updates`): the older statement it most likely gives a new value to, when
the model's probability reaches its threshold. Vectors are remembered by text for the life
of the process, the latest 8,192 (each flush compares new facts with the same older lines).

`Unavailable` where the model cannot run (no embeddings extra, files not the ones checked)
or the policy turns it off (`learned_updates`): the caller's rules decide then."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from vault_brain.app.memory.vault import Vault
from vault_brain.domain.capture.change import signs
from vault_brain.storage.index.learned import Unavailable

__all__ = ["MAX_CHARS", "Unavailable", "UpdateJudge", "readable"]


MAX_REMEMBERED = 8192
# the longest statement it judges (its training pairs: at most 235 characters, 99% under
# 170): a longer text is a paragraph, not a fact, and is left to the rules
MAX_CHARS = 240
_vectors: OrderedDict[str, Any] = OrderedDict()  # text -> vector, for the process's life


def readable(text: str) -> bool:
    """Whether the judge reads `text`: a statement, not empty nor longer than `MAX_CHARS`."""
    return bool(text.strip()) and len(text) <= MAX_CHARS


class UpdateJudge:
    def __init__(self, vault: Vault) -> None:
        self.vault = vault

    def prepare(self, texts: Sequence[str]) -> dict[str, Any]:
        """The vectors of `texts`, those not remembered embedded now in one batch (the
        statements of a flush, the lines of a note)."""
        from vault_brain.storage.index import updates

        if not self.vault.policy.learned_updates:
            raise Unavailable("off in STRATEGY.md (learned_updates)")
        fresh = [t for t in dict.fromkeys(texts) if t.strip() and t not in _vectors]
        if fresh:
            _vectors.update(
                zip(fresh, updates.vectors_of(fresh, self.vault.paths.cache_dir), strict=True)
            )
        found = {}
        for text in texts:
            if text in _vectors:
                _vectors.move_to_end(text)
                found[text] = _vectors[text]
        while len(_vectors) > MAX_REMEMBERED:
            _vectors.popitem(last=False)
        return found

    def older(
        self, new: str, olds: Sequence[str], among: Sequence[str] | None = None
    ) -> str | None:
        """Of `olds` (oldest first) it reads, the one `new` updates, or None. `among`: all
        the lines of the note(s) `olds` come from; the one nearest in meaning to a change
        is held to a lower bar when it is one of `olds` (None: rule candidates from
        elsewhere, each judged on its own)."""
        from vault_brain.storage.index import updates

        olds = [o for o in dict.fromkeys(olds) if readable(o) and o != new]
        lines = [o for o in dict.fromkeys([*olds, *(among or ())]) if readable(o) and o != new]
        vectors = self.prepare([new, *lines])
        if not olds or new not in vectors:
            return None
        said = [signs(new, o) for o in olds]
        found = updates.probabilities([vectors[o] for o in olds], [vectors[new]] * len(olds), said)
        near = lines[updates.nearest(vectors[new], [vectors[o] for o in lines])]
        model = updates.model()
        chosen = [
            i
            for i in range(len(olds))
            if model.updates(found[i], said[i], among is not None and olds[i] == near)
        ]
        if not chosen:
            return None
        return olds[max(chosen, key=lambda i: (found[i], i))]  # ties: the latest
