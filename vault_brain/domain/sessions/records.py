"""Session transcript records: their kinds, ids and text (pure helpers; the file is storage's)."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
from collections.abc import Iterable
from typing import Any

from vault_brain.domain.errors import VaultBrainError

_SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
MESSAGE_TYPES = ("user", "assistant", "tool_call", "tool_result")


def check_session_id(session_id: str) -> str:
    if (
        not isinstance(session_id, str)
        or not _SESSION_ID.fullmatch(session_id)  # (`$` would let "abc\n" through)
        or ".." in session_id
    ):
        raise VaultBrainError(
            f"invalid session id {session_id!r}",
            hint="use letters, digits, '.', '_' or '-' (at most 128 characters, no '..')",
        )
    return session_id


def new_session_id(prefix: str) -> str:
    """A fresh session id for a process that was given none: `<prefix>-<time>-<pid>`."""
    return f"{prefix}-{dt.datetime.now().strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"


def conversation_id(
    first_message: str,
    prefix: str = "serve",
    party: str | None = None,
    scopes: Iterable[str] = (),
) -> str:
    """A stable session id for a conversation that names none: `<prefix>-<16 hex digits>`
    from who is talking (`party`: a token's name), the conversation's scopes and its first
    user message, so every request of the conversation lands in the same transcript
    (clients resend the whole conversation each turn) and two parties who open with the
    same words never share one. (No party and no scope: the first message alone, as ids
    were before parties had names.)"""
    text = " ".join(first_message.split())
    keyed = sorted(set(scopes))
    if party is not None or keyed:
        text = json.dumps([party, keyed, text], ensure_ascii=False)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return f"{prefix}-{digest[:16]}"


def owned_by(records: Iterable[dict[str, Any]], party: str) -> bool:
    """A transcript belongs to `party` (a token's name) when the first record written to it
    was written for that party (its `grant`); a transcript without records is no one's
    yet. A transcript the person began (no `grant`) belongs to no token."""
    for record in records:
        return record.get("grant") == party
    return True


def record_kind(record: dict[str, Any]) -> str:
    return str(record.get("type") or record.get("role") or "")


def seq_of(message_id: Any) -> int:
    """m0042 -> 42 (0 for anything else)."""
    if isinstance(message_id, str) and message_id.startswith("m") and message_id[1:].isdigit():
        return int(message_id[1:])
    return 0


def message_text(record: dict[str, Any]) -> str:
    """What a message contributes to the context: its content, or its tool arguments."""
    text = record.get("content")
    if isinstance(text, str):
        return text
    value = record.get("content") or record.get("arguments") or ""
    return json.dumps(value, ensure_ascii=False)


def latest_compaction(records: list[dict[str, Any]]) -> dict[str, Any] | None:
    found = None
    for record in records:
        if record_kind(record) == "compaction":
            found = record
    return found


def live_messages(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages after the latest compaction summary."""
    summary = latest_compaction(records)
    through = int(summary.get("through") or 0) if summary else 0
    return [r for r in records if record_kind(r) in MESSAGE_TYPES and seq_of(r.get("id")) > through]
