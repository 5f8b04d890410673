"""`vb doctor`: the notes vb manufactured before it learnt not to, found and repaired as a
plan (shown first, applied only when asked).

- An episode vb wrote from a conversation (`session:`) or merged (`merged_from:`) whose
  body says nothing of its own ("No decisions, facts or open questions in 4 messages",
  headings, links): archived.
- An entity note vb wrote entirely (every line a fact line with vb's provenance, or a
  link) that holds no fact, only links or episode titles an older promotion copied:
  archived.
- A note vb made whose credit is above what outcomes gave it (feedback on it, on the
  episodes merged into it, on the episodes promoted into it): its `credit:` lowered to that,
  the only line that changes.

A note a person wrote (no vb markers, or a line of their own) is never touched, nor a pinned
one. Nothing is deleted: archived notes go to archive/ and `vb restore` brings them back.
"""

from __future__ import annotations

from typing import Any

from vault_brain.app.lifecycle.plans import run_plan
from vault_brain.app.memory.apply import PlanResult
from vault_brain.app.memory.credit import credit_rows
from vault_brain.app.memory.memory_file import write_memory_file
from vault_brain.app.memory.vault import Vault
from vault_brain.domain.notes.substance import copied_titles, has_own_content, vb_entity_lines
from vault_brain.domain.policy.plan import Action, Plan
from vault_brain.storage.notes.frontmatter import parse_text
from vault_brain.storage.sessions.transcript import read_records

# credit above what outcomes justify by less than this is rounding, not an overclaim
TOLERANCE = 0.005


def _number(value: object) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def outcome_gains(vault: Vault) -> dict[str, float]:
    """What outcome signals (`vb feedback`, logged in logs/credit.jsonl) moved each note's
    credit by, in sum, by note id."""
    gains: dict[str, float] = {}
    for record in read_records(vault.paths.credit_log):
        if record.get("event") != "feedback":
            continue
        for change in record.get("changes") or []:
            if not isinstance(change, dict) or not isinstance(change.get("id"), str):
                continue
            old, new = _number(change.get("old")), _number(change.get("new"))
            if old is not None and new is not None:
                gains[change["id"]] = gains.get(change["id"], 0.0) + new - old
    return gains


def promotion_sources(vault: Vault) -> dict[str, set[str]]:
    """The episodes each entity note received promoted facts (and credit) from, by the runs
    of `vb promote` in logs/lifecycle.jsonl."""
    runs: dict[str, tuple[set[str], set[str]]] = {}
    for record in read_records(vault.paths.lifecycle_log):
        if record.get("operation") != "promote" or not isinstance(record.get("id"), str):
            continue
        episodes, entities = runs.setdefault(str(record.get("run")), (set(), set()))
        (episodes if record.get("op") == "set" else entities).add(record["id"])
    sources: dict[str, set[str]] = {}
    for episodes, entities in runs.values():
        for entity in entities:
            sources.setdefault(entity, set()).update(episodes)
    return sources


class _Lineage:
    """What outcomes earned a note: its own feedback, plus its merged parts', plus the
    positive part of the episodes promoted into it (an upper bound: doctor only lowers)."""

    def __init__(self, vault: Vault) -> None:
        self.vault = vault
        self.gains = outcome_gains(vault)
        self.sources = promotion_sources(vault)
        self.memo: dict[str, float] = {}

    def merged_from(self, note_id: str) -> list[str]:
        found = self.vault.index.stored_by_id(note_id)
        if not found:
            return []
        try:
            meta = parse_text(self.vault.paths.note(str(found["path"])).read_bytes()).meta
        except (OSError, ValueError):
            return []
        parts = meta.get("merged_from")
        return [str(p) for p in parts] if isinstance(parts, list) else []

    def earned(self, note_id: str, seen: frozenset[str] = frozenset()) -> float:
        if note_id in self.memo:
            return self.memo[note_id]
        if note_id in seen:
            return 0.0  # a cycle in hand-edited keys: counted once
        seen = seen | {note_id}
        total = self.gains.get(note_id, 0.0)
        total += sum(self.earned(part, seen) for part in self.merged_from(note_id))
        total += sum(max(0.0, self.earned(src, seen)) for src in self.sources.get(note_id, ()))
        self.memo[note_id] = total
        return total


def _vb_episode(meta: dict[str, Any]) -> bool:
    """An episode vb wrote: from a conversation's flush, or merged by consolidation."""
    note_id = str(meta.get("id") or "")
    if not note_id.startswith("episode-"):
        return False
    return bool(meta.get("merged_from")) or ("session" in meta and "-session-" in note_id)


def plan_doctor(vault: Vault) -> Plan:
    """The repairs, as a plan (nothing is written here)."""
    plan = Plan("doctor")
    initial = vault.policy.initial_score
    lineage = _Lineage(vault)
    for row in sorted(credit_rows(vault), key=lambda r: r["path"]):
        if row["pinned"] or row["problem"] or row["type"] not in ("episode", "entity"):
            continue
        try:
            parsed = parse_text(vault.paths.note(row["path"]).read_bytes())
        except OSError:
            continue
        if parsed.error:
            continue
        meta, body = parsed.meta, parsed.body
        made_by_vb = False
        if row["type"] == "episode" and _vb_episode(meta):
            made_by_vb = True
            if not has_own_content(body):
                why = "manufactured: an episode with no decisions, facts or open questions"
                plan.actions.append(Action("archive", row["path"], why, id=row["id"]))
                continue
        elif row["type"] == "entity" and str(meta.get("id") or "").startswith("entity-"):
            lines = vb_entity_lines(body)
            if lines is not None:
                made_by_vb = True
                copies = copied_titles(lines)
                if not has_own_content(body) or len(copies) == len(
                    [ln for ln in lines if has_own_content(ln)]
                ):
                    why = "manufactured: an entity note of links or episode titles, no fact"
                    plan.actions.append(Action("archive", row["path"], why, id=row["id"]))
                    continue
                if copies:
                    plan.notes.append(
                        f"{row['id']}: {len(copies)} line(s) are episode titles, not facts "
                        "(vb does not rewrite a body; edit them by hand)"
                    )
        if not made_by_vb or not row["scored"]:
            continue
        justified = round(min(1.0, max(0.0, initial + lineage.earned(row["id"]))), 4)
        if row["credit"] > justified + TOLERANCE:
            why = f"credit {row['credit']:.2f} above what outcomes gave it ({justified:.2f})"
            plan.actions.append(
                Action("set", row["path"], why, {"credit": justified}, id=row["id"])
            )
    return plan


def doctor(vault: Vault, fix: bool = False) -> PlanResult:
    """The plan (a dry run), or applied and committed, then MEMORY.md regenerated (what was
    archived leaves it now)."""
    result = run_plan(vault, plan_doctor(vault), dry_run=not fix)
    if result.applied and vault.paths.memory_md.exists():
        write_memory_file(vault)
    return result
