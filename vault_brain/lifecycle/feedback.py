"""Access and outcome credit, written to the notes' front matter (no database).

An agent retrieval (`vb search --session`, the MCP server, the loop) bumps `access_count`
and `last_accessed` of the returned notes and records a `retrieval` line in the session
transcript, with ids and paths. `vb feedback` finds the memories retrieved in the session's
last turn and moves their `credit` by the signal's shared reward. Each note is written
once per event; each event is appended to `logs/credit.jsonl`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from vault_brain.core import Vault
from vault_brain.credit import SIGNALS, days_since, effective_score, shared_reward, update_score
from vault_brain.errors import NotFoundError, VaultBrainError
from vault_brain.sessions.transcript import append_record, read_records, transcript_path
from vault_brain.vault.frontmatter import UneditableNoteError, edit_front_matter, parse_text
from vault_brain.vault.store import Transaction, append_jsonl, now_iso, transaction

CREDIT_LOG = "credit.jsonl"


@dataclass
class CreditChange:
    id: str
    path: str
    old: float
    new: float


@dataclass
class FeedbackResult:
    session: str
    signal: str
    reward: float
    share: float
    changes: list[CreditChange] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "session": self.session,
            "signal": self.signal,
            "reward": self.reward,
            "share": round(self.share, 6),
            "changes": [c.__dict__ for c in self.changes],
            "skipped": self.skipped,
        }


def _edit_keys(tx: Transaction, vault: Vault, rel: str, changes: dict[str, Any]) -> str | None:
    """Set vb-owned keys on one note inside a transaction; returns a reason if skipped."""
    full = vault.paths.root / PurePosixPath(rel)
    try:
        raw = full.read_bytes()
    except FileNotFoundError:
        return "note no longer exists"
    try:
        tx.write(full, edit_front_matter(raw, changes, where=rel), durable=False)
    except UneditableNoteError as exc:
        return exc.message
    return None


def record_retrieval(
    vault: Vault,
    session: str,
    query: str,
    hits: Sequence[Any],
    source: str,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Record an agent retrieval: access counters on the notes, a line in the transcript."""
    transcript_path(vault.paths, session)  # validates the session id before anything is written
    stamp = now_iso()
    with transaction(vault.paths) as tx:
        for hit in hits:
            full = vault.paths.root / PurePosixPath(hit.path)
            try:
                count = parse_text(full.read_bytes()).meta.get("access_count", 0)
            except FileNotFoundError:
                continue
            count = count if isinstance(count, int) and not isinstance(count, bool) else 0
            _edit_keys(tx, vault, hit.path, {"access_count": count + 1, "last_accessed": stamp})
        record = append_record(
            vault.paths,
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


def last_turn(records: Iterable[dict[str, Any]]) -> list[tuple[str, str | None]]:
    """(id, path) of the memories retrieved in the last turn that retrieved any: turns are
    separated by user messages and by feedback, so feedback typed after a reply credits that
    reply's memories, and a second signal on the same turn credits them again."""
    turns: list[list[dict[str, Any]]] = [[]]
    for record in records:
        kind = record.get("type") or record.get("role")
        if kind in ("user", "feedback"):  # feedback closes a turn, e.g. in an MCP session
            turns.append([])
        elif kind == "retrieval":
            turns[-1].append(record)
    chosen: list[dict[str, Any]] = next((turn for turn in reversed(turns) if turn), [])
    seen: dict[str, str | None] = {}
    for record in chosen:
        ids = record.get("ids") or []
        paths = record.get("paths") or [None] * len(ids)
        for note_id, path in zip(ids, paths, strict=False):
            if isinstance(note_id, str) and note_id not in seen:
                seen[note_id] = path if isinstance(path, str) else None
    return list(seen.items())


def apply_feedback(vault: Vault, session: str, word: str) -> FeedbackResult:
    if word not in SIGNALS:
        raise VaultBrainError(
            f"unknown feedback {word!r}", hint=f"use one of: {', '.join(SIGNALS)}"
        )
    signal = SIGNALS[word]
    path = transcript_path(vault.paths, session)
    if not path.is_file():
        raise NotFoundError(
            f"no session {session!r} (no {path.relative_to(vault.paths.root)})",
            hint="feedback applies to memories retrieved with `vb search --session ID`",
        )
    policy = vault.policy
    reward = policy.rewards[signal]
    strongest = max(abs(r) for r in policy.rewards.values()) or 1.0
    retrieved = last_turn(read_records(path))
    share = shared_reward(reward, len(retrieved))
    result = FeedbackResult(session, signal, reward, share)
    stamp = now_iso()
    with transaction(vault.paths) as tx:
        for note_id, rel in retrieved:
            rel = _locate(vault, note_id, rel)
            if rel is None:
                result.skipped.append({"id": note_id, "reason": "not found"})
                continue
            meta = parse_text((vault.paths.root / PurePosixPath(rel)).read_bytes()).meta
            old = _score(meta.get("credit"), policy["initial_score"])
            new = round(update_score(old, share, policy["alpha"], strongest), 4)
            reason = _edit_keys(tx, vault, rel, {"credit": new})
            if reason:
                result.skipped.append({"id": note_id, "reason": reason})
                continue
            result.changes.append(CreditChange(note_id, rel, old, new))
        append_record(
            vault.paths, session, {"type": "feedback", "signal": signal, "reward": reward}
        )
        append_jsonl(
            vault.paths.logs_dir / CREDIT_LOG,
            {"ts": stamp, "event": "feedback", **result.to_json()},
        )
    return result


def _score(value: Any, default: float) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return min(1.0, max(0.0, float(value)))
    return default


def _locate(vault: Vault, note_id: str, rel: str | None) -> str | None:
    """The recorded path if the note is still there, else the index's answer for the id."""
    if rel and (vault.paths.root / PurePosixPath(rel)).is_file():
        return rel
    vault.reconcile()
    stored = vault.index.stored_by_id(note_id, include_archive=False)
    return str(stored["path"]) if stored else None


def credit_rows(vault: Vault, now: dt.datetime | None = None) -> list[dict[str, Any]]:
    """Every live note with its stored and effective credit, from the index's row column."""
    now_ts = (now or dt.datetime.now().astimezone()).timestamp()
    policy = vault.policy
    decay = policy["decay_rate"]
    vault.reconcile()
    rows = []
    for docnum, row in vault.index.rows():
        credit = row.get("credit")
        scored = isinstance(credit, int | float) and not isinstance(credit, bool)
        score = _score(credit, policy["initial_score"])
        row.update(
            docnum=docnum,
            pinned=bool(row.get("pinned")),
            scored=scored,
            credit=score,
            effective=round(
                effective_score(score, days_since(row.get("ref_ts"), now_ts), decay), 4
            ),
            access_count=int(row.get("access_count") or 0),
        )
        rows.append(row)
    return rows


def credit_report(vault: Vault, top: int = 10) -> dict[str, Any]:
    rows = sorted(credit_rows(vault), key=lambda r: (-r["effective"], r["path"]))
    keep = ("id", "title", "credit", "effective", "access_count", "last_accessed")
    slim = [{k: r[k] for k in keep} for r in rows]
    return {
        "count": len(rows),
        "highest": slim[:top],
        "lowest": list(reversed(slim[-top:])) if rows else [],
    }
