"""How an LLM-backed step runs: the model when one is given, else (or when it fails) a
deterministic offline method. Every result says which method produced it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from vault_brain.domain.errors import VaultBrainError

METHOD_OFFLINE = "offline"
METHOD_LLM = "llm"


class JSONChat(Protocol):
    """What the steps need from an LLM (the storage layer's `LLM` provides it)."""

    def chat_json(self, system: str, user: str, *, reply: str | None = None) -> dict[str, Any]:
        """A JSON object from the model; `reply` names the shape it must have (facts,
        summary, merge, reconcile), checked before it is returned."""
        ...


_T = TypeVar("_T")


def run_with_fallback(
    llm: JSONChat | None,
    with_llm: Callable[[JSONChat], _T],
    offline: Callable[[str], _T],
    fallback: bool,
) -> _T:
    """`with_llm(llm)`, or `offline(method)` when there is no model or (with `fallback`) the
    model failed with a user-facing error; `method` then names the failure."""
    if llm is None:
        return offline(METHOD_OFFLINE)
    try:
        return with_llm(llm)
    except VaultBrainError as exc:
        if not fallback:
            raise
        return offline(f"{METHOD_OFFLINE} (llm failed: {exc.message})")
