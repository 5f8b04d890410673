"""Access and outcome credit, written to the notes' front matter (no database).

An agent retrieval (`vb search --session`, the MCP server, the loop) bumps `access_count`
and `last_accessed` of the returned notes and records a `retrieval` line in the session
transcript, with ids and paths. `vb feedback` finds the memories retrieved in the session's
last turn and moves their `credit` by the signal's shared reward. Each note is written
once per event; each event is appended to `logs/credit.jsonl`.

A note that says `vb: false`, or whose path matches STRATEGY.md's `no_counters`, is never
written: it is still searched and retrieved, and feedback lists it as skipped, with why
(`domain.policy.exclusions.counters_refused`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import field
from typing import Any, Protocol

from vault_brain.app.memory.notes import renamed
from vault_brain.app.memory.results import Result, result, to_json
from vault_brain.app.memory.vault import Vault
from vault_brain.domain.clock import access_stamp, days_since, now, now_iso
from vault_brain.domain.errors import NotFoundError
from vault_brain.domain.notes.credit import (
    SIGNALS,
    effective_score,
    is_scored,
    shared_reward,
    stored_score,
    update_score,
)
from vault_brain.domain.notes.model import id_key
from vault_brain.domain.policy.exclusions import counters_refused
from vault_brain.domain.policy.scopes import note_scope
from vault_brain.domain.sessions.records import check_session_id, record_kind
from vault_brain.domain.text import check_choice
from vault_brain.storage.notes.frontmatter import parse_text
from vault_brain.storage.notes.frontmatter_edit import UneditableNoteError, edit_front_matter
from vault_brain.storage.sessions.transcript import append_record, read_records
from vault_brain.storage.transaction import Transaction


@result
class CreditChange(Result):
    id: str
    path: str
    old: float
    new: float


@result
class Skipped(Result):
    id: str
    reason: str


@result
class FeedbackResult(Result):
    session: str
    signal: str
    """The outcome signal, e.g. positive_feedback."""
    reward: float
    share: float
    """The reward each memory retrieved in the turn received: reward / sqrt(n)."""
    changes: list[CreditChange] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    repeated: bool = False
    """True when this exact feedback was already applied (a retry after a crash): nothing moved."""


@result
class CreditEntry(Result):
    id: str
    path: str
    title: str
    credit: float
    """Stored credit (0.5-like default for a note never scored)."""
    effective_credit: float
    """Stored credit decayed by the days since the last access."""
    access_count: int
    last_accessed: str | None


@result
class CreditReport(Result):
    count: int
    """Live notes in the vault."""
    highest: list[CreditEntry]
    lowest: list[CreditEntry]


class Retrieved(Protocol):
    """What recording a retrieval needs of each note returned."""

    @property
    def id(self) -> str: ...

    @property
    def path(self) -> str: ...


def _edit_keys(
    tx: Transaction, vault: Vault, rel: str, changes: Callable[[dict[str, Any]], dict[str, Any]]
) -> str | None:
    """Set vb-owned keys (counters, credit) on one note inside a transaction, computed from
    the note's current front matter (so that a re-apply at commit builds on a hand edit made
    meanwhile), and its `id` if the front matter has none (`id_key`); returns why the note
    was skipped, if it was. A note the person keeps out of counters (`vb: false`,
    `no_counters`) is left as it is (its `id` too)."""
    no_counters = vault.policy.no_counters
    refused: list[str] = []

    def change(raw: bytes) -> bytes:
        meta = parse_text(raw).meta
        reason = counters_refused(rel, meta, no_counters)
        if reason is not None:  # (the same bytes: nothing is written)
            refused.append(reason)
            return raw
        return edit_front_matter(raw, {**id_key(rel, meta), **changes(meta)}, where=rel)

    try:
        tx.edit(vault.paths.note(rel), change)
    except FileNotFoundError:
        return "note no longer exists"
    except UneditableNoteError as exc:
        return exc.message
    return f"no counters: {refused[0]}" if refused else None


def _count(meta: dict[str, Any]) -> int:
    value = meta.get("access_count", 0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def record_retrieval(
    vault: Vault,
    session: str,
    query: str,
    hits: Sequence[Retrieved],
    source: str,
    extra: dict[str, Any] | None = None,
    tx: Transaction | None = None,
    counters: bool = True,
) -> dict[str, Any]:
    """Record an agent retrieval: access counters on the notes (unless the caller records
    them itself, see `record_access`), a line in the transcript (within the caller's
    transaction `tx`, or one of its own)."""
    check_session_id(session)  # before anything is written
    if tx is None:
        with vault.transaction(durable=False) as own:  # counters: the line is the record
            return record_retrieval(vault, session, query, hits, source, extra, own, counters)
    stamp = access_stamp()
    for hit in hits if counters else ():
        _edit_keys(
            tx,
            vault,
            hit.path,
            lambda meta: {"access_count": _count(meta) + 1, "last_accessed": stamp},
        )
    record = append_record(
        tx,
        session,
        {
            "type": "retrieval",
            "source": source,
            "query": query,
            "ids": [h.id for h in hits],
            "paths": [h.path for h in hits],
            **(extra or {}),
        },
    )
    return record


def record_access(vault: Vault, accessed: Mapping[str, tuple[int, str]]) -> list[str]:
    """Access counters for retrievals recorded earlier without them (`record_retrieval`
    with `counters=False`), many at once: path -> (retrievals, when the last one was). The
    same keys as one retrieval at a time would have written, in one transaction; the notes
    are re-indexed after. Returns the paths skipped (gone, or not editable)."""
    with vault.transaction(durable=False) as tx:
        skipped = count_access(tx, vault, accessed)
    vault.refresh(sorted(set(accessed) - set(skipped)))
    return skipped


def count_access(
    tx: Transaction, vault: Vault, accessed: Mapping[str, tuple[int, str]]
) -> list[str]:
    """`record_access`'s edits, inside the caller's transaction; the paths skipped."""
    skipped: list[str] = []
    for rel, (times, stamp) in sorted(accessed.items()):

        def counted(meta: dict[str, Any], times: int = times, stamp: str = stamp) -> Any:
            return {"access_count": _count(meta) + times, "last_accessed": stamp}

        if _edit_keys(tx, vault, rel, counted):
            skipped.append(rel)
    return skipped


def judged_turn(
    records: Iterable[dict[str, Any]],
) -> tuple[list[tuple[str, str | None]], set[str]]:
    """The memories of the last turn that retrieved any, and the signals already given for
    that turn (a signal counts once per turn: a repeat, or a retry after a crash, is not
    applied again)."""
    turns: list[list[dict[str, Any]]] = [[]]
    given: list[set[str]] = [set()]
    for record in records:
        kind = record_kind(record)
        if kind == "feedback":  # feedback closes a turn, e.g. in an MCP session
            given[-1].add(str(record.get("signal")))
            turns.append([])
            given.append(set())
        elif kind == "user":
            turns.append([])
            given.append(set())
        elif kind == "retrieval":
            turns[-1].append(record)
    last = next((i for i in range(len(turns) - 1, -1, -1) if turns[i]), None)
    if last is None:
        return [], set()
    chosen = turns[last]
    # the signals given after this turn's retrievals, up to the next turn that retrieved
    signals = set().union(*given[last:])
    seen: dict[str, str | None] = {}
    for record in chosen:
        ids = record.get("ids") or []
        paths = record.get("paths") or [None] * len(ids)
        for note_id, path in zip(ids, paths, strict=False):
            if isinstance(note_id, str) and note_id not in seen:
                seen[note_id] = path if isinstance(path, str) else None
    return list(seen.items()), signals


def apply_feedback(vault: Vault, session: str, word: str) -> FeedbackResult:
    signal = SIGNALS[check_choice(word, SIGNALS, "feedback")]
    path = vault.paths.transcript(session)
    if not path.is_file():
        raise NotFoundError(
            f"nothing was retrieved in session {session!r} yet, so there is nothing to credit",
            hint="search or retrieve memories in that session first (`vb search --session ID` "
            "or the memory_search tool), then report the outcome",
        )
    policy = vault.policy
    reward = policy.rewards[signal]
    strongest = max(abs(r) for r in policy.rewards.values()) or 1.0
    stamp = now_iso()
    with vault.transaction() as tx:  # credits, transcript line and log: all or nothing
        retrieved, given = judged_turn(read_records(path))
        share = shared_reward(reward, len(retrieved))
        result = FeedbackResult(session, signal, reward, round(share, 6))
        if signal in given:
            result.repeated = True
            return result
        for note_id, rel in retrieved:
            found = _locate(vault, note_id, rel)
            if found is None:
                where = f" (was {rel})" if rel else ""
                result.skipped.append(Skipped(note_id, f"not found{where}: {GONE}"))
                continue
            rel = found
            full = vault.paths.note(rel)
            meta = parse_text(tx.read(full)).meta
            if meta.get("conflict_of"):  # another machine's text, until a person keeps one
                result.skipped.append(Skipped(note_id, "a conflict copy (see `vb conflicts`)"))
                continue
            old = stored_score(meta.get("credit"), policy.initial_score)

            def credited(meta: dict[str, Any]) -> dict[str, float]:
                score = stored_score(meta.get("credit"), policy.initial_score)
                return {"credit": round(update_score(score, share, policy.alpha, strongest), 4)}

            reason = _edit_keys(tx, vault, rel, credited)
            if reason:
                result.skipped.append(Skipped(note_id, reason))
                continue
            new = stored_score(parse_text(tx.read(full)).meta.get("credit"), old)
            result.changes.append(CreditChange(note_id, rel, old, new))
        missing = [s.id for s in result.skipped if s.reason.startswith("not found")]
        if missing and not result.changes:  # nothing written: the feedback can be given again
            raise NotFoundError(
                f"nothing credited: {_count_words(len(missing))} retrieved in the last turn "
                f"of session {session!r} cannot be found ({', '.join(missing)})",
                hint=f"{GONE}; if it was renamed, give it back its id in its properties "
                f"(`id: {missing[0]}`) and give the feedback again",
            )
        append_record(tx, session, {"type": "feedback", "signal": signal, "reward": reward})
        tx.append_jsonl(
            vault.paths.credit_log, [{"ts": stamp, "event": "feedback", **to_json(result)}]
        )
    vault.refresh([c.path for c in result.changes])
    return result


GONE = "deleted, or renamed and changed before vb saw it"


def _count_words(n: int) -> str:
    return "the note" if n == 1 else f"the {n} notes"


def _locate(vault: Vault, note_id: str, rel: str | None) -> str | None:
    """Where the note retrieved as `note_id` at `rel` is now: the recorded path if the
    note is still there, else the index's answer for the id, else where the index saw it
    renamed or moved to (by its old path, then its old id)."""
    if rel and vault.paths.note(rel).is_file():
        return rel
    vault.reconcile()
    stored = vault.index.stored_by_id(note_id, include_archive=False)
    if stored:
        return str(stored["path"])
    for old in (rel, note_id):
        moved = renamed(vault, old, include_archive=False) if old else None
        if moved is not None:
            return moved
    return None


def credit_rows(vault: Vault, at: dt.datetime | None = None) -> list[dict[str, Any]]:
    """Every live note with its stored and effective credit, from the index's row column."""
    now_ts = (at or now()).timestamp()
    initial, decay = vault.policy.initial_score, vault.policy.decay_rate  # (read once)
    vault.reconcile()
    rows = []
    for docnum, row in vault.index.rows():
        credit = row.get("credit")
        score = stored_score(credit, initial)
        row.update(
            docnum=docnum,
            pinned=bool(row.get("pinned")),
            scored=is_scored(credit),
            credit=score,
            effective=round(
                effective_score(score, days_since(row.get("ref_ts"), now_ts), decay), 4
            ),
            access_count=int(row.get("access_count") or 0),
        )
        rows.append(row)
    return rows


def credit_report(
    vault: Vault, top: int = 10, readable: Callable[[str, bool], bool] | None = None
) -> CreditReport:
    """The notes with the highest and lowest effective credit (only those `readable`
    accepts by scope and privacy, when given: a caller never learns of a note it may not
    read)."""
    rows = credit_rows(vault)
    if readable is not None:
        rows = [r for r in rows if readable(note_scope(r.get("scope")), bool(r.get("private")))]
    rows.sort(key=lambda r: (-r["effective"], r["path"]))
    entries = [
        CreditEntry(
            id=r["id"],
            path=r["path"],
            title=r["title"],
            credit=r["credit"],
            effective_credit=r["effective"],
            access_count=r["access_count"],
            last_accessed=r["last_accessed"],
        )
        for r in rows
    ]
    return CreditReport(
        count=len(rows),
        highest=entries[:top],
        lowest=list(reversed(entries[-top:])) if rows else [],
    )
