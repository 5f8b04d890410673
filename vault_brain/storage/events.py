"""Memory events (read, write, flush, compact, search) appended to `.vb/events.jsonl`.

The log is machine-local (like the index) and best effort: an event that cannot be
written never fails the operation it describes. `vb status` counts them.
"""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from typing import Any

from vault_brain.domain.clock import now_iso
from vault_brain.domain.errors import VaultBrainError
from vault_brain.storage.files import append_jsonl
from vault_brain.storage.paths import VaultPaths

EVENTS = ("read", "write", "flush", "compact", "search")


def emit(paths: VaultPaths, event: str, payload: dict[str, Any]) -> None:
    if not paths.cache_dir.is_dir():
        return
    with contextlib.suppress(VaultBrainError):
        record = {"ts": now_iso(), "event": event, **payload}
        append_jsonl(paths.events, record, durable=False)


def counts(paths: VaultPaths) -> dict[str, int]:
    found: Counter[str] = Counter({e: 0 for e in EVENTS})
    try:
        with open(paths.events, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                try:
                    found[json.loads(line).get("event", "?")] += 1
                except (ValueError, AttributeError):
                    continue
    except OSError:
        pass
    return dict(found)
