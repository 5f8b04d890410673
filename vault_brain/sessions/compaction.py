"""Compaction: when a session's context passes its token threshold, everything but the last
`compaction_keep_recent` messages is summarised into one `compaction` record appended to the
transcript. The raw lines stay; context building starts from the latest summary."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vault_brain.core import Vault
from vault_brain.errors import NotFoundError
from vault_brain.sessions.transcript import (
    MESSAGE_TYPES,
    SessionIndex,
    append,
    message_text,
    read_records,
    record_kind,
    seq_of,
    transcript_path,
)
from vault_brain.tokens import get_counter


@dataclass
class CompactionResult:
    session: str
    needed: bool
    tokens_before: int
    tokens_after: int = 0
    summarized: int = 0
    first: str | None = None
    last: str | None = None
    method: str = ""
    summary: str = ""
    applied: bool = False
    flush: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


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


def compact(
    vault: Vault,
    session: str,
    *,
    dry_run: bool = False,
    force: bool = False,
    llm: Any = None,
) -> CompactionResult:
    from vault_brain.llm.tasks import summarize

    path = transcript_path(vault.paths, session)
    info = SessionIndex(vault.paths).info(session)
    if info is None:
        raise NotFoundError(f"no session {session!r}", hint="list sessions with `vb sessions list`")
    policy = vault.policy
    records = list(read_records(path))
    live = live_messages(records)
    keep = int(policy["compaction_keep_recent"])
    result = CompactionResult(session, False, info.context_tokens)
    over = info.context_tokens > int(policy["compaction_threshold"])
    older = live[: max(0, len(live) - keep)]
    if not older or not (over or force):
        return result
    result.needed = True
    result.first, result.last = str(older[0]["id"]), str(older[-1]["id"])
    result.summarized = len(older)
    previous = latest_compaction(records)
    source = older
    if previous and previous.get("summary"):
        source = [
            {"type": "assistant", "id": previous.get("last"), "content": previous["summary"]},
            *older,
        ]
    counter = get_counter()
    if dry_run:
        result.tokens_after = info.context_tokens - sum(
            counter.count(message_text(m)) for m in older
        )
        return result
    if policy["flush_before_compaction"]:
        from vault_brain.sessions.flush import flush

        result.flush = flush(vault, session, through=seq_of(result.last), llm=llm).to_json()
    summary = summarize(source, llm, max_words=400)
    kept = live[len(older) :]
    result.summary = summary.text
    result.method = summary.method
    result.tokens_after = counter.count(summary.text) + sum(
        counter.count(message_text(m)) for m in kept
    )
    append(
        vault.paths,
        session,
        [
            {
                "type": "compaction",
                "first": result.first,
                "last": result.last,
                "through": seq_of(result.last),
                "summary": summary.text,
                "method": summary.method,
                "decisions": summary.decisions,
                "open_questions": summary.open_questions,
                "names": summary.names,
                "tokens_before": result.tokens_before,
                "tokens_after": result.tokens_after,
            }
        ],
    )
    result.applied = True
    from vault_brain.events import emit

    emit(
        vault.paths,
        "compact",
        {
            "session": session,
            "before": result.tokens_before,
            "after": result.tokens_after,
            "through": result.last,
        },
    )
    return result
