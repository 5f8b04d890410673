"""Compaction: when a session's context passes its token threshold, everything but the last
`compaction_keep_recent` messages is summarised into one `compaction` record appended to the
transcript. The raw lines stay; context building starts from the latest summary."""

from __future__ import annotations

from vault_brain.app.memory.guard import screened
from vault_brain.app.memory.results import Result, result
from vault_brain.app.memory.vault import Vault
from vault_brain.app.sessions.flush import FlushResult, flush
from vault_brain.domain.engine import JSONChat
from vault_brain.domain.errors import NotFoundError
from vault_brain.domain.sessions.records import (
    latest_compaction,
    live_messages,
    message_text,
    seq_of,
)
from vault_brain.domain.sessions.summarize import summarize
from vault_brain.storage.events import emit, refused
from vault_brain.storage.sessions.transcript import SessionIndex, append, read_records
from vault_brain.storage.tokens import get_counter


@result
class CompactionResult(Result):
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
    flush: FlushResult | None = None
    """The flush that ran first (flush_before_compaction), if any."""


def compact(
    vault: Vault,
    session: str,
    *,
    dry_run: bool = False,
    force: bool = False,
    llm: JSONChat | None = None,
) -> CompactionResult:
    path = vault.paths.transcript(session)
    info = SessionIndex(vault.paths).info(session)
    if info is None:
        raise NotFoundError(f"no session {session!r}", hint="list sessions with `vb sessions list`")
    policy = vault.policy
    records = list(read_records(path))
    live = live_messages(records)
    keep = policy.compaction_keep_recent
    result = CompactionResult(session, False, info.context_tokens)
    over = info.context_tokens > policy.compaction_threshold
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
    if policy.flush_before_compaction:
        result.flush = flush(vault, session, through=seq_of(result.last), llm=llm)
    summary = screened(vault, summarize(source, llm, max_words=400))
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
    refused(vault.paths, "compaction", summary.refused)
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
