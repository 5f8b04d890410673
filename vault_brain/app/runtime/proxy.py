"""The memory proxy's operations (`vb serve`): the memories for a conversation's request, the
turn written after the response, and each conversation's rolling summary.

`ProxyAPI` is the memory API as the proxy holds it: live, for many conversations at once
(each call names its conversation). Its calls do not reconcile the index with the files
(at 10k notes the walk over the files takes longer than the search itself): an
`IndexKeeper` (`app.runtime.index_keeper`) watches the vault (watchdog, as `vb watch` does) and
indexes what changed on a thread of its own, and before each read it makes sure that
every change made to the files before the read began is indexed: a note edited by hand,
or by another vb process, is seen by the next request. The proxy's own writes (captured
memories, access counters) are indexed by their writer as they land and reach the reads
within `OWN_LAG` seconds.

The read path writes nothing: the retrieval is recorded (a `retrieval` line for credit)
with the turn, after the response, in one transaction with the user's and the assistant's
records; the notes' access counters follow in batches (`app.runtime.turns`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from vault_brain.app.api import MemoryAPI
from vault_brain.app.memory.agents import check_readable, load_agent, readable_filters
from vault_brain.app.memory.credit import record_retrieval
from vault_brain.app.memory.guard import for_agent, screened
from vault_brain.app.memory.memo import token_count
from vault_brain.app.memory.results import Result, result, to_json
from vault_brain.app.memory.vault import Vault
from vault_brain.domain.engine import METHOD_LLM, JSONChat
from vault_brain.domain.gate.quoting import Quoted, memory_block, quote
from vault_brain.domain.notes.model import Filters
from vault_brain.domain.notes.ranking import mmr
from vault_brain.domain.policy.grants import FULL, Grant
from vault_brain.domain.policy.scopes import Agent, layers
from vault_brain.domain.sessions.records import (
    MESSAGE_TYPES,
    check_session_id,
    owned_by,
    record_kind,
    seq_of,
)
from vault_brain.domain.sessions.summarize import summarize
from vault_brain.domain.text import content_words, unique
from vault_brain.storage.events import refused
from vault_brain.storage.index.scan import ReconcileResult
from vault_brain.storage.sessions.transcript import append, precount, read_records
from vault_brain.storage.tokens import get_counter

log = logging.getLogger("vault_brain.serve")

SOURCE = "serve"
OWN_LAG = 1.0  # seconds reads may go on without what only the proxy's own writes changed
POOL_FACTOR = 3  # search hits considered per memory injected (MMR picks among them)
SUMMARY_WORDS = 120

MEMORY_PREAMBLE = memory_block([Quoted("", "", "", "")])  # the block's own cost: framing, tags


@result
class MemoryHit(Result):
    id: str
    title: str
    """The note's title, redacted where the gate refuses a part."""
    path: str
    snippet: str
    """The text around the query's words, redacted where the gate refuses a part."""
    written_by: str = "person"
    """Who wrote the note (its `source`)."""


@result
class Recall(Result):
    query: str
    memories: list[MemoryHit]
    """What was injected, best first (after MMR), within the token budget."""
    message: str
    """The memories as one quoted data block (`domain.gate.quoting`), for a message of its own
    before the latest user turn ("" when there is nothing to add)."""
    tokens: int
    left_out: int = 0
    """Memories chosen but left out by the token budget."""


@dataclass
class Turn:
    """One request and its reply, as transcript records (the `vb loop` format)."""

    session: str
    key: str
    """Identifies the request: a retry of the same request is recorded once."""
    inputs: list[dict[str, Any]]
    """The request's new messages: user, tool_result (after the last assistant message)."""
    replies: list[dict[str, Any]]
    """The reply: assistant (marked incomplete when cut short), tool_call."""
    query: str = ""
    memories: list[MemoryHit] = field(default_factory=list)
    scopes: list[str] = field(default_factory=list)
    """The conversation's scopes (recorded with its user message, for capture)."""
    owner: str | None = None
    """The token the conversation belongs to (recorded as `grant` on each of its records);
    a transcript another party began is never written for it."""
    writes: bool = True
    """False for a skill agent's conversation: nothing is recorded."""


@result
class TurnResult(Result):
    session: str
    records: list[dict[str, Any]]
    """The records as written (empty when the turn was recorded before)."""
    repeated: bool = False


def recall(
    vault: Vault,
    query: str,
    k: int | None = None,
    scopes: list[str] | None = None,
    agent: Agent | None = None,
    also: Agent | None = None,
    private: bool = False,
) -> Recall:
    """Up to `k` (default `retrieval_limit`) memories for `query` from the conversation's
    `scopes` and global (what `agent`, and `also`, may read of them): the search's ranking,
    re-ranked by maximal marginal relevance (`mmr_lambda`) so that near-copies do not crowd
    out other memories, redacted by the gate by who wrote them, as one quoted data block
    under `proxy_memory_budget` tokens. Private notes (`private: true`, `private_paths`) never:
    the conversation goes to a model (`private` is for a caller that is a person, if any)."""
    policy = vault.policy
    k = policy.retrieval_limit if k is None else k
    if k <= 0 or not query.strip():
        return Recall(query, [], "", 0)
    searcher = vault.searcher
    filters = Filters(  # no superseded fact reaches the conversation
        scopes=tuple(layers(scopes or [])), private=private, current_only=True
    ).normalized()
    filters = readable_filters(agent, filters)
    filters = readable_filters(also, filters)
    hits = searcher.search(query, k=k * POOL_FACTOR, filters=filters, snippets=False)
    words = [content_words(f"{h.title} {h.summary}") for h in hits]
    order = mmr([h.score for h in hits], words, k, policy.mmr_lambda)
    searcher.add_snippets(query, [hits[i] for i in order])  # only for those kept
    # the gate's redaction and the token counts are remembered by text (`app.memory.memo`): an
    # unchanged note retrieved again is not judged and counted again (refusals still are)
    count = token_count
    budget = policy.proxy_memory_budget
    used = count(MEMORY_PREAMBLE)
    chosen: list[MemoryHit] = []
    lines: list[Quoted] = []
    left_out = 0
    for index in order:
        hit = hits[index]
        title = for_agent(vault, hit.title, SOURCE, hit.written_by, title=True)
        snippet = for_agent(vault, hit.snippet, SOURCE, hit.written_by)
        memory = MemoryHit(hit.id, title, hit.path, snippet, hit.written_by)
        line = Quoted(hit.id, hit.written_by, title, snippet)
        cost = count(quote(line)) + 1
        if used + cost > budget:
            left_out += 1  # a shorter one further down may still fit
            continue
        used += cost
        chosen.append(memory)
        lines.append(line)
    if not chosen:
        return Recall(query, [], "", 0, left_out)
    message = memory_block(lines)
    return Recall(query, chosen, message, used, left_out)


def record_turn(vault: Vault, turn: Turn, counters: bool = True) -> TurnResult:
    """Append the turn to the transcript: its input messages, the retrieval of the memories
    injected (a `retrieval` record, so feedback credits them, and with `counters` the
    notes' access counters), then the reply, in one transaction. A turn whose key the
    transcript holds is not written again."""
    check_session_id(turn.session)
    if not turn.writes:
        return TurnResult(turn.session, [])
    path = vault.paths.transcript(turn.session)
    records = list(read_records(path))
    if any(r.get("key") == turn.key for r in records):
        return TurnResult(turn.session, [], repeated=True)
    if turn.owner is not None and not owned_by(records, turn.owner):
        log.warning("a turn of token %s for a session it does not own was dropped", turn.owner)
        return TurnResult(turn.session, [])
    inputs = [
        {**r, "key": turn.key if n == 0 else f"{turn.key}-{n}"} for n, r in enumerate(turn.inputs)
    ]
    if turn.scopes:
        inputs = [{**r, "scope": turn.scopes} if record_kind(r) == "user" else r for r in inputs]
    replies = [{**r, "key": f"{turn.key}-r{n}"} for n, r in enumerate(turn.replies)]
    if turn.owner is not None:
        inputs = [{**r, "grant": turn.owner} for r in inputs]
        replies = [{**r, "grant": turn.owner} for r in replies]
    precount([*inputs, *replies])  # (long messages counted before the vault lock is taken)
    with vault.transaction() as tx:
        written = append(vault.paths, turn.session, inputs, tx=tx)
        if turn.memories:
            anchor = next((r["id"] for r in reversed(written) if record_kind(r) == "user"), None)
            extra: dict[str, Any] = {"results": [to_json(m) for m in turn.memories]}
            if anchor is not None:
                extra["for_message"] = anchor
            written.append(
                record_retrieval(
                    vault, turn.session, turn.query, turn.memories, SOURCE, extra, tx, counters
                )
            )
        written += append(vault.paths, turn.session, replies, tx=tx)
    # (counters written here reach the index through the IndexKeeper, which sees the files
    # change)
    return TurnResult(turn.session, written)


def latest_summary(records: list[dict[str, Any]]) -> dict[str, Any] | None:
    found = None
    for record in records:
        if record_kind(record) == "summary":
            found = record
    return found


def roll_summary(vault: Vault, session: str, llm: JSONChat | None) -> str | None:
    """Fold the messages since the last summary into the conversation's summary (a `summary`
    record) and return its query text (see `summary_query`). With a model: the previous
    summary and the new messages summarised again. Offline: the new messages' decisions,
    facts, open questions and names added to the previous ones, the oldest dropped past
    the word limit. Through the gate like every summary."""
    records = list(read_records(vault.paths.transcript(session)))
    previous = latest_summary(records) or {}
    through = int(previous.get("through") or 0)
    new = [r for r in records if record_kind(r) in MESSAGE_TYPES and seq_of(r.get("id")) > through]
    if not new:
        return summary_query(previous) if previous else None
    source = [{"role": _role(r), "content": str(r.get("content") or "")} for r in new]
    if llm is not None and previous.get("summary"):
        source.insert(0, {"role": "user", "content": f"(Summary so far: {previous['summary']})"})
    summary = screened(vault, summarize(source, llm, max_words=SUMMARY_WORDS))
    record: dict[str, Any] = {"type": "summary", "through": seq_of(new[-1].get("id"))}
    lists = ("decisions", "facts", "open_questions", "names")
    if summary.method == METHOD_LLM:
        record |= {"summary": summary.text, **{k: getattr(summary, k) for k in lists}}
    else:  # extractive: add to what the conversation said before
        merged = {k: unique([*_strings(previous.get(k)), *getattr(summary, k)]) for k in lists}
        budget = SUMMARY_WORDS
        for key in lists:
            kept: list[str] = []
            for item in reversed(merged[key]):  # the latest first
                budget -= len(str(item).split())
                if budget < 0:
                    break
                kept.insert(0, item)
            merged[key] = kept
        record |= {"summary": _render(merged), **merged}
    record["method"] = summary.method
    append(vault.paths, session, [record])
    refused(vault.paths, "summary", summary.refused)
    return summary_query(record)


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _render(lists: dict[str, list[str]]) -> str:
    titles = {"decisions": "Decisions", "facts": "Facts", "open_questions": "Open questions"}
    blocks = [
        "\n".join([f"{title}:", *(f"- {item}" for item in lists[key])])
        for key, title in titles.items()
        if lists[key]
    ]
    if lists["names"]:
        blocks.append("Names: " + ", ".join(lists["names"]))
    return "\n".join(blocks)


def summary_query(record: dict[str, Any]) -> str:
    """What a summary adds to the retrieval query: the model's prose, or the extracted
    decisions, facts, questions and names (never headings or "nothing found" text)."""
    if record.get("method") == METHOD_LLM:
        return str(record.get("summary") or "")
    parts = [record.get(k) or [] for k in ("decisions", "facts", "open_questions", "names")]
    return " ".join(str(item) for items in parts for item in items)


def _role(record: dict[str, Any]) -> str:
    kind = record_kind(record)
    return kind if kind in ("user", "assistant") else "tool"


def conversation_summary(vault: Vault, session: str) -> str:
    """The query text of the conversation's latest summary ("" when it has none)."""
    check_session_id(session)
    found = latest_summary(list(read_records(vault.paths.transcript(session))))
    return summary_query(found) if found else ""


class ProxyAPI(MemoryAPI):
    """The memory API for `vb serve`: live, no session of its own; the index is reconciled
    once per vault object (at warm-up, or after STRATEGY.md changed), then kept current by
    an `IndexKeeper`."""

    def __init__(self, vault: Vault) -> None:
        super().__init__(vault, session=None, source=SOURCE, live=True)
        self._changes_seen = -1

    def _reconcile(self, vault: Vault) -> None:
        vault.reconcile()

    def reconcile_now(self) -> ReconcileResult:
        with self._use("skip") as vault:
            return vault.reconcile(force=True)

    def reindex(self, rels: list[str]) -> ReconcileResult:
        """Index these paths again (those a watcher saw change)."""
        with self._use("skip") as vault:
            return vault.index.refresh(rels)

    def warm_up(self) -> None:
        """Reconcile, open the searcher and load the token counter before the first request."""
        super().warm_up()
        get_counter()

    def recall(
        self,
        query: str,
        k: int | None = None,
        scopes: list[str] | None = None,
        changes: int | None = None,
        agent: Agent | None = None,
        private: bool = True,
    ) -> Recall:
        """`recall`; given the count of the others' changes indexed so far (`IndexKeeper.
        changes`), the index searcher is reopened when that count moved, and otherwise
        may stay up to `OWN_LAG` seconds behind writes of the proxy's own (each reopen
        costs about as much as a search, and captures write several notes a second)."""
        with self._use("skip") as vault:
            vault.index.lag = 0.0
            if changes is not None:
                vault.index.lag = OWN_LAG if changes == self._changes_seen else 0.0
                self._changes_seen = changes
            private = private and self.grant.private  # (an agent path's grant: never)
            return recall(vault, query, k, scopes, self.agent, agent, private)

    def conversation_scopes(
        self, requested: list[str], grant: Grant = FULL, agent: Agent | None = None
    ) -> list[str]:
        """A request's scopes: those it names (each one the caller's `grant` holds), else
        the grant's own, else a project agent's own; each one the agent serving, and the
        grant's `agent`, may read and (a skill agent writes nothing) write."""
        scopes = grant.conversation_scopes(requested)
        for serving in (self.agent, agent):
            if serving is None:
                continue
            scopes = scopes or ([serving.own] if serving.role == "project" else [])
            for scope in scopes:
                check_readable(serving, scope, "this conversation")
                if serving.writable() != []:
                    serving.check_write(scope)
        return scopes

    def agent_named(self, name: str) -> Agent:
        """The agent a token names, as its definition says now."""
        with self._use("skip") as vault:
            return load_agent(vault, name)

    def session_owned(self, session: str, party: str, new: bool = True) -> bool:
        """The session belongs to `party` (a token's name); a session with no transcript
        counts only with `new`."""
        check_session_id(session)
        with self._use("skip") as vault:
            first = next(iter(read_records(vault.paths.transcript(session))), None)
        if first is None:
            return new
        return owned_by([first], party)

    def record_turn(self, turn: Turn, counters: bool = True) -> TurnResult:
        if self.agent is not None and self.agent.writable() == []:
            return TurnResult(turn.session, [])  # a skill agent writes nothing
        with self._use() as vault:
            return record_turn(vault, turn, counters)

    def record_access(self, accessed: dict[str, tuple[int, str]]) -> list[str]:
        """Add to the notes' access counters: path -> (how many retrievals, when the last
        was); returns the paths that could not be written (gone, or not editable)."""
        from vault_brain.app.memory.credit import record_access  # lazy: start-up

        with self._use() as vault:
            return record_access(vault, accessed)

    def commit_capture(self, session: str, written: int) -> str | None:
        """A conversation's capture (its flush, then its rolling summary) that wrote notes,
        committed with its own message when `commit_on` has `session` (a conversation through
        the proxy is a session); what happened (`commit`), or None."""
        if not written:
            return None
        notes = f"{written} note{'s' if written != 1 else ''}"
        return self.commit(f"vb serve: conversation {session} flushed: {notes}", "session")

    def roll_summary(self, session: str) -> str | None:
        with self._use() as vault:
            return roll_summary(vault, session, vault.llm())

    def conversation_summary(self, session: str) -> str:
        with self._use("skip") as vault:
            return conversation_summary(vault, session)
