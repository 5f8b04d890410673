"""Memory flush: durable memories from a session's messages, before they are compacted away.

Offline: capture (the gate's safety filters, clause rules per kind, a cap per message)
routes each statement to its entity note (the user's identity, decisions and plans to
`entities/people/user.md`, their preferences to `entities/preferences/user.md`, a named
person's facts to `entities/people/<name>.md`, a project's to
`entities/projects/<name>.md`) and writes one episode note for the span, with the summary
and the decisions. With an LLM: the model reconciles the captured statements against the
nearest existing notes (ADD / UPDATE / DELETE / NONE). A span with no decision, fact or
open question writes no episode (nothing from nothing). Every capture
names its session and message ids; flushed spans are recorded in the transcript, so flushing
the same messages twice writes nothing new.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import field, replace
from pathlib import PurePosixPath
from typing import Any

from vault_brain.app.memory.apply import apply_plan
from vault_brain.app.memory.entities import EntityFeed, fact_key, new_note_text
from vault_brain.app.memory.guard import screen
from vault_brain.app.memory.results import Result, result
from vault_brain.app.memory.supersession import older_statements, superseding_actions
from vault_brain.app.memory.vault import Vault
from vault_brain.domain.capture.conversation import Candidate, capture
from vault_brain.domain.capture.facts import Fact, facts_of
from vault_brain.domain.capture.supersede import statement_of
from vault_brain.domain.clock import now_iso
from vault_brain.domain.engine import METHOD_LLM, JSONChat
from vault_brain.domain.errors import LLMError
from vault_brain.domain.gate import REASONS, prose_sentences
from vault_brain.domain.notes.model import Filters
from vault_brain.domain.policy.plan import Action, Plan
from vault_brain.domain.policy.scopes import GLOBAL, scope_for, session_scopes
from vault_brain.domain.sessions.records import MESSAGE_TYPES, record_kind, seq_of
from vault_brain.domain.sessions.summarize import Summary, summarize
from vault_brain.domain.text import clip_words, slugify
from vault_brain.storage.events import emit, refused
from vault_brain.storage.notes.frontmatter_edit import edit_front_matter
from vault_brain.storage.paths import episode_folder, episode_places
from vault_brain.storage.sessions.transcript import append, read_records

RECONCILE_SYSTEM = (
    "You keep an agent's long-term memory. For each new fact, compare it with the existing "
    "notes and choose one operation: ADD (new information), UPDATE (an existing note says "
    "something this fact corrects or refines; give its id and the sentence it replaces), "
    "DELETE (an existing note is now false; give its id), or NONE (already known or not "
    'worth keeping). Answer with JSON: {"operations": [{"fact": int, "op": "ADD|UPDATE|'
    'DELETE|NONE", "id": "note id or null", "old": "replaced sentence or null", '
    '"reason": "short"}]}.'
)


@result
class FlushResult(Result):
    session: str
    first: str | None = None
    """The first message flushed (none when there was nothing new)."""
    last: str | None = None
    plan: Plan = field(default_factory=lambda: Plan("flush"))
    """The notes written (or, with a dry run, that would be)."""
    captured: list[dict[str, Any]] = field(default_factory=list)
    """Each captured statement: kind, text, message id and the note it went to."""
    dropped: dict[str, int] = field(default_factory=dict)
    """What was not kept, by reason."""
    applied: bool = False


def flushed_through(records: list[dict[str, Any]]) -> int:
    return max(
        (int(r.get("through") or 0) for r in records if record_kind(r) == "flush"), default=0
    )


def flush(
    vault: Vault,
    session: str,
    *,
    through: int | None = None,
    dry_run: bool = False,
    llm: JSONChat | None = None,
    now: dt.datetime | None = None,
) -> FlushResult:
    """Flush the messages after the last flushed one, up to `through` (default: all)."""
    path = vault.paths.transcript(session)
    records = list(read_records(path))
    done = flushed_through(records)
    messages = [
        r
        for r in records
        if record_kind(r) in MESSAGE_TYPES
        and done < seq_of(r.get("id")) <= (through if through is not None else 10**9)
    ]
    result = FlushResult(session)
    if not messages:
        return result
    result.first, result.last = str(messages[0]["id"]), str(messages[-1]["id"])
    report = capture(messages)
    hostile = screen(vault, [c.text for c in report.candidates])
    for candidate in report.candidates:
        if candidate.text in hostile:
            report.dropped[hostile[candidate.text]] += 1
    report.candidates = [c for c in report.candidates if c.text not in hostile]
    result.dropped = {k: v for k, v in report.dropped.items() if v}
    vault.reconcile()
    feed = EntityFeed(vault, vault.policy.initial_score)
    updated: dict[str, tuple[str, str, str]] = {}  # episodes the model says a fact updates
    if llm is not None:
        candidates = _reconcile_with_llm(
            vault, llm, report.candidates, feed, result, session, updated
        )
    else:
        candidates = report.candidates
    named = {c.subject for c in candidates if c.subject != "user"}
    people = {n for n in named if vault.paths.note(f"entities/people/{slugify(n)}.md").exists()}
    scopes = session_scopes(records)
    user_kinds = vault.policy.scope_user_kinds
    written = []  # the facts written, for supersession across notes
    facts = facts_of(candidates, session, people)
    found: dict[Candidate, Fact] = {}
    if llm is None:
        found = _changes_of_known(vault, feed, report.changes, session, result.dropped)
        candidates, facts = [*candidates, *found], [*facts, *found.values()]
    feed.prepare(facts)
    for candidate, fact in zip(candidates, facts, strict=True):
        fact = replace(fact, scope=scope_for(candidate.kind, scopes, user_kinds))
        fresh = feed.fresh([fact], f"from session {session}, {candidate.message_id}", session)
        written += [fact] if fresh else []
        for rel, lines in fresh.items():
            feed.accept(rel, lines, f"{session}/{candidate.message_id}")
            result.captured.append(
                {
                    "kind": candidate.kind,
                    "text": candidate.text,
                    "message": candidate.message_id,
                    "note": rel,
                }
            )
        if not fresh:
            result.dropped["known"] = result.dropped.get("known", 0) + 1
    result.plan.actions += feed.actions()
    episode_scope = scope_for("episode", scopes, user_kinds)
    captured = bool(report.candidates)
    episode = _episode_action(
        vault, session, messages, llm, now, episode_scope, captured, [c.text for c in found], result
    )
    if episode is not None and episode.id and episode.content is not None:
        # an older episode stating what a fact of this span replaces is superseded by this
        # one: the model decided which (UPDATE), or without one (or when it failed) the rules
        skip = {a.path for a in result.plan.actions}
        replaced = {statement_of(line): old for line, old in feed.replacing.items()}
        older = (
            {}
            if result.plan.method == "llm"
            else older_statements(vault, written, skip, replaced, feed.judge)
        )
        marks, ids = superseding_actions({**older, **updated}, episode.id)
        if ids:
            raw = edit_front_matter(episode.content.encode("utf-8"), {"supersedes": ids})
            episode.content = raw.decode("utf-8")
        result.plan.actions += marks
    if episode is not None:
        result.plan.actions.append(episode)
    if dry_run:
        return result
    record = {
        "type": "flush",
        "first": result.first,
        "last": result.last,
        "through": seq_of(result.last),
        "notes": [a.path for a in result.plan.actions],
        "captured": len(result.captured),
        "dropped": result.dropped,
    }
    # the notes and the transcript's flush record land together, or neither does
    apply_plan(vault, result.plan, then=lambda tx: append(vault.paths, session, [record], tx=tx))
    result.applied = True
    refused(vault.paths, "flush", {k: v for k, v in result.dropped.items() if k in REASONS})
    emit(
        vault.paths,
        "flush",
        {
            "session": session,
            "through": result.last,
            "notes": [a.path for a in result.plan.actions],
        },
    )
    return result


def _changes_of_known(
    vault: Vault,
    feed: EntityFeed,
    changes: list[Candidate],
    session: str,
    dropped: dict[str, int],
) -> dict[Candidate, Fact]:
    """The user's clauses that say they are a change but gave no fact ("these days I take
    the bus to work"), kept as facts of the note holding a line they give a new value to,
    as the learned judge sees it (a change of something remembered is worth remembering;
    anything else stays dropped). Those it keeps pass the gate, as every candidate does."""
    found: dict[Candidate, Fact] = {}
    for candidate, fact in zip(changes, facts_of(changes, session), strict=True):
        home = feed.home_of_change(fact)
        if home is not None:
            found[candidate] = replace(fact, category=PurePosixPath(home).parts[1])
    hostile = screen(vault, [c.text for c in found]) if found else {}
    found = {c: f for c, f in found.items() if c.text not in hostile}  # (counted: no fact)
    if found:
        dropped["no_fact"] -= len(found)
        if not dropped["no_fact"]:
            del dropped["no_fact"]
    return found


def _protected(vault: Vault, rel: str) -> str | None:
    """Why a model may not archive this note (the rules prune obeys), or None."""
    row = vault.index.row_for_path(rel) or {}
    policy = vault.policy
    if row.get("pinned") and policy.prune_skip_pinned:
        return "pinned notes are never archived by vb"
    if row.get("category") in set(policy.prune_skip_categories):
        return f"notes in {row.get('category')} are never archived by vb"
    return None


def _episode_action(
    vault: Vault,
    session: str,
    messages: list[dict[str, Any]],
    llm: JSONChat | None,
    now: dt.datetime | None,
    scope: str,
    captured: bool,
    changes: list[str],
    result: FlushResult,
) -> Action | None:
    """The span's episode note, or None: flushed before, or nothing durable in it (no
    decision, fact or open question: nothing from nothing; the transcript keeps the words).
    `changes`: what the flush kept of clauses capture gave no fact (they are facts of the
    episode too)."""
    first, last = str(messages[0]["id"]), str(messages[-1]["id"])
    moment = (now or dt.datetime.now().astimezone()).date().isoformat()
    name = f"session-{slugify(session)}-{first}-{last}.md"
    for place in episode_places(moment, name):
        if vault.paths.note(place).exists() or (vault.paths.archive_dir / place).exists():
            return None  # this span was flushed before (its record may have been lost in a crash)
    rel = f"{episode_folder(vault.paths, moment)}/{name}"
    summary = summarize(messages, llm).with_facts(changes)
    hostile = screen(vault, summary.screenable())
    summary = summary.without(hostile)
    for reason in hostile.values():
        result.dropped[reason] = result.dropped.get(reason, 0) + 1
    if not durable(summary, captured or bool(changes)):
        result.plan.notes.append(
            f"no episode for {first}–{last}: no decisions, facts or open questions"
        )
        return None
    body = [f"Session `{session}`, messages {first}–{last}.", "", summary.text.strip()]
    title = _title(summary, messages, f"{first}–{last}")
    title = clip_words(f"{first}–{last}" if screen(vault, [title]) else title, TITLE_LIMIT)
    note_id = f"episode-general-session-{slugify(session)}-{first}-{last}"
    meta: dict[str, Any] = {
        "id": note_id,
        "type": "episode",
        "category": "general",
        "title": f"Session {session}: {title}",
        "tags": ["session"],
        "created": now_iso(),
        "updated": now_iso(),
        "credit": vault.policy.initial_score,
        "source": "conversation",
        "session": session,
        "messages": [first, last],
    }
    if scope != GLOBAL:
        meta["scope"] = scope
    why = f"episode of session {session} {first}–{last} ({summary.method})"
    return Action("create", rel, why, content=new_note_text(meta, "\n".join(body)), id=note_id)


TITLE_LIMIT = 70


def _title(summary: Summary, messages: list[dict[str, Any]], default: str) -> str:
    """What an episode is about: its first decision or fact (what the note itself holds;
    a greeting or a message whose facts went to entity notes says less), else the first
    sentence a user wrote."""
    for item in (*summary.decisions, *summary.facts):
        if item.strip():
            return item.strip().rstrip(".")
    safe = (
        sentence
        for m in messages
        if record_kind(m) == "user"
        for sentence in prose_sentences(str(m.get("content") or ""))[0]
    )
    return next(safe, default)


def durable(summary: Summary, captured: bool) -> bool:
    """Whether a span says anything worth an episode: a decision or an open question, a fact
    the capture rules kept (`captured`), or the model's facts. (The offline summary's fact
    list is a loose pick, any sentence with a verb like "is"; alone it makes no note.)"""
    if summary.decisions or summary.open_questions or captured:
        return True
    return summary.method == METHOD_LLM and bool(summary.facts)


def _reconcile_with_llm(
    vault: Vault,
    llm: JSONChat,
    candidates: list[Candidate],
    feed: EntityFeed,
    result: FlushResult,
    session: str,
    superseded: dict[str, tuple[str, str, str]],
) -> list[Candidate]:
    """Ask the model, per batch of candidates, what to do against the nearest notes.

    ADD keeps the candidate; UPDATE appends the corrected fact, records what it supersedes
    and moves the replaced line under the note's "## Previously" heading (as the rules do
    offline); DELETE archives the contradicted note; NONE drops the candidate."""
    facts = list(candidates)
    if not facts:
        return candidates
    searcher = vault.searcher
    vault.reconcile()
    nearest: dict[str, dict[str, Any]] = {}
    lines = []
    for n, cand in enumerate(facts):
        hits = searcher.search(cand.text, k=3, filters=Filters(current_only=True))
        for hit in hits:
            nearest[hit.id] = {
                "id": hit.id,
                "title": hit.title,
                "path": hit.path,
                "text": hit.snippet,
            }
        lines.append({"fact": n, "text": cand.text, "nearest": [h.id for h in hits]})
    user = json.dumps({"facts": lines, "notes": list(nearest.values())}, ensure_ascii=False)
    try:
        answer = llm.chat_json(RECONCILE_SYSTEM, user, reply="reconcile")
    except LLMError as exc:
        result.plan.notes.append(f"LLM reconciliation failed ({exc.message}); kept every fact")
        return candidates
    result.plan.method = "llm"
    keep: list[Candidate] = []
    decided: set[int] = set()
    for op in answer.get("operations") or []:
        if not isinstance(op, dict) or not isinstance(op.get("fact"), int):
            continue
        index = op["fact"]
        if not 0 <= index < len(facts) or index in decided:
            continue
        decided.add(index)
        cand, kind = facts[index], str(op.get("op", "ADD")).upper()
        target = nearest.get(str(op.get("id") or ""))
        reason = str(op.get("reason") or "")
        if kind == "NONE":
            result.dropped["llm_none"] = result.dropped.get("llm_none", 0) + 1
        elif kind == "DELETE" and target is not None:
            protected = _protected(vault, target["path"])
            if protected:
                result.plan.notes.append(
                    f"kept {target['id']}: the model asked to archive it, but {protected}"
                )
            else:
                why = f"contradicted by session {session} {cand.message_id}: {cand.text} {reason}"
                result.plan.actions.append(
                    Action("archive", target["path"], why.strip(), id=target["id"])
                )
            keep.append(cand)
        elif kind == "UPDATE" and target is not None and target["path"].startswith("episodes/"):
            # an older episode the fact updates: superseded by this span's episode
            old = str(op.get("old") or "").strip() or target["title"]
            superseded[target["path"]] = (target["id"], old, cand.text)
            keep.append(cand)
        elif kind == "UPDATE" and target is not None and target["path"].startswith("entities/"):
            old = str(op.get("old") or "").strip()
            line = f"- {cand.text} (from session {session}, {cand.message_id})"
            why = f"updates {target['id']}: {reason or 'refined by the session'}"
            extend = {"supersedes": [old]} if old else {}
            entity = feed.target(target["path"])
            keys = {"updated": now_iso(), **(entity["source"] if entity else {})}
            # the line vb wrote for the replaced sentence moves under "## Previously"
            retired = {old: cand.text} if old else {}
            result.plan.actions.append(
                Action("append", target["path"], why, keys, line, target["id"], extend, retired)
            )
            if entity is not None:
                entity["known"].add(fact_key(line))
            result.captured.append(
                {
                    "kind": "update",
                    "text": cand.text,
                    "message": cand.message_id,
                    "note": target["path"],
                }
            )
        else:
            keep.append(cand)
    keep += [c for n, c in enumerate(facts) if n not in decided]
    return keep
