"""Memory events (read, write, flush, compact, search, refused) appended to
`.vb/events.jsonl`.

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

EVENTS = ("read", "write", "flush", "compact", "search", "refused")


def emit(paths: VaultPaths, event: str, payload: dict[str, Any]) -> None:
    if not paths.cache_dir.is_dir():
        return
    with contextlib.suppress(VaultBrainError):
        record = {"ts": now_iso(), "event": event, **payload}
        append_jsonl(paths.events, record, durable=False)


def refused(paths: VaultPaths, where: str, reasons: dict[str, int]) -> None:
    """Count what the gate refused on one path (flush, mcp store, summary, ...)."""
    if any(reasons.values()):
        emit(paths, "refused", {"where": where, "reasons": {k: v for k, v in reasons.items() if v}})


def counts(paths: VaultPaths) -> tuple[dict[str, int], dict[str, int]]:
    """Events by kind, and the gate's refusals by reason."""
    found: Counter[str] = Counter({e: 0 for e in EVENTS})
    reasons: Counter[str] = Counter()
    try:
        with open(paths.events, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                try:
                    record = json.loads(line)
                    kind = record.get("event", "?")
                    if kind == "refused":
                        got = {str(k): int(v) for k, v in (record.get("reasons") or {}).items()}
                        reasons.update(got)
                        found[kind] += sum(got.values())
                    else:
                        found[kind] += 1
                except (ValueError, AttributeError, TypeError):
                    continue
    except OSError:
        pass
    return dict(found), dict(reasons)


def last_of(paths: VaultPaths, event: str, tail: int = 1 << 16) -> dict[str, Any] | None:
    """The latest `event` record among the log's last `tail` bytes (None: none there)."""
    try:
        with open(paths.events, "rb") as handle:
            handle.seek(0, 2)
            size = handle.tell()
            handle.seek(max(0, size - tail))
            data = handle.read()
    except OSError:
        return None
    for line in reversed(data.splitlines()):
        with contextlib.suppress(ValueError):
            record = json.loads(line)
            if isinstance(record, dict) and record.get("event") == event:
                return record
    return None
