"""The lifecycle operations as plans: consolidation, promotion, pruning (and what is due).

Each `plan_*` reads the index's stored fields (bodies only for the few notes it merges or
mines), decides, and returns a Plan; nothing is written until `apply_plan`.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import PurePosixPath
from typing import Any

from vault_brain.app.lifecycle.policy_review import approved_rules
from vault_brain.app.memory.apply import PlanResult, apply_plan, last_runs, note_body, plan_result
from vault_brain.app.memory.commits import commit_at
from vault_brain.app.memory.credit import credit_rows
from vault_brain.app.memory.entities import EntityFeed, new_note_text
from vault_brain.app.memory.notes import unique_path
from vault_brain.app.memory.results import Result, result
from vault_brain.app.memory.vault import Vault
from vault_brain.domain.capture.facts import extract_facts
from vault_brain.domain.clock import days_between, now_iso, parse_time
from vault_brain.domain.engine import JSONChat
from vault_brain.domain.notes.credit import earned_transfer, merged_score
from vault_brain.domain.notes.links import LinkNames
from vault_brain.domain.notes.merge import merge_episodes
from vault_brain.domain.notes.model import ARCHIVE
from vault_brain.domain.notes.substance import has_own_content, own_text
from vault_brain.domain.policy.plan import Action, Plan
from vault_brain.domain.policy.rules import Rule, RuleError, note_fields
from vault_brain.domain.policy.scopes import GLOBAL
from vault_brain.domain.text import plural, slugify
from vault_brain.storage.notes.frontmatter import parse_text
from vault_brain.storage.notes.names import link_names
from vault_brain.storage.paths import episode_folder

_PARENS = re.compile(r"[()]+")


@result
class DueState(Result):
    due: bool
    last_run: str | None
    interval_hours: float
    enabled: bool


@result
class MaintainResult(Result):
    dry_run: bool
    due: dict[str, DueState]
    runs: list[PlanResult]


@result
class CompactResult(Result):
    consolidated: int
    """Episodes merged into consolidated notes."""
    pruned: int
    """Low-credit notes moved to archive/."""
    created: list[str]
    archived: list[str]


def _now(now: dt.datetime | None) -> dt.datetime:
    return now or dt.datetime.now().astimezone()


def _rule(vault: Vault, plan: Plan) -> Rule | None:
    """The approved policy rule of the plan's step, if any (noted in the plan)."""
    rule = approved_rules(vault).get(plan.operation)
    if rule is not None:
        plan.notes.append(f"approved policy rule chooses the notes: {rule.source}")
    return rule


def _rule_takes(plan: Plan, rule: Rule, row: dict[str, Any], now: dt.datetime) -> bool:
    """Whether the rule takes this note; a rule that fails on it takes nothing (noted)."""
    born = parse_time(row["created"] or row["updated"])
    age = days_between(born, now) if born is not None else None
    try:
        return rule.matches(note_fields(row, age))
    except RuleError as exc:
        plan.notes.append(f"{row['id']}: the policy rule {exc}; not taken")
        return False


def _method(methods: Sequence[str]) -> str:
    distinct = sorted(set(methods))
    return ", ".join(distinct) if distinct else "offline"


# --------------------------------------------------------------------------- consolidation


def plan_consolidate(
    vault: Vault, now: dt.datetime | None = None, llm: JSONChat | None = None
) -> Plan:
    """Same-day episodes of one scope with overlapping tags merge into one episode (of that
    scope); its credit is the initial score plus what outcomes gave or took from each part
    (domain.credit.merged_score). Episodes that say nothing of their own (vb's "no
    decisions, facts or open questions") are not merged: nothing from nothing.
    An approved policy rule `consolidate` chooses which of those episodes (unpinned, dated,
    tagged) may merge; without one, all may."""
    now = _now(now)
    plan = Plan("consolidate")
    rule = _rule(vault, plan)
    by_day: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in credit_rows(vault, now):
        if row["type"] != "episode" or row["pinned"] or row["problem"]:
            continue
        if row.get("superseded"):  # its fact was replaced: merged, it would be current again
            continue
        created = parse_time(row["created"])
        if created is None or not row["tags"]:
            continue
        if rule is not None and not _rule_takes(plan, rule, row, now):
            continue
        key = (created.date().isoformat(), row.get("scope") or GLOBAL)
        by_day.setdefault(key, []).append(row)
    taken: set[str] = set()
    methods: list[str] = []
    names: LinkNames | None = None  # the vault's files by name, read once, only if needed
    for (day, scope), rows in sorted(by_day.items()):
        for group in _tag_components(rows):
            if len(group) < 2:
                continue
            group.sort(key=lambda r: (r["created"] or "", r["path"]))
            bodies = {r["path"]: note_body(vault, r["path"]) for r in group}
            empty = [r for r in group if not has_own_content(bodies[r["path"]])]
            for r in empty:
                why = "says nothing of its own; not merged (`vb doctor` archives such notes)"
                plan.notes.append(f"{r['id']}: {why}")
            group = [r for r in group if r not in empty]
            if len(group) < 2:
                continue
            names = names or link_names(vault.paths.root)
            archived = {r["path"]: _archived_as(vault, r["path"], taken) for r in group}
            for old, new in archived.items():
                names.move(old, new)
            episodes = [
                {
                    "id": r["id"],
                    "title": r["title"],
                    "body": bodies[r["path"]],
                    "tags": r["tags"],
                    "created": r["created"],
                    # the source as Obsidian finds it once this plan archived it
                    "link": names.link(archived[r["path"]], r["title"]),
                }
                for r in group
            ]
            merged = merge_episodes(episodes, llm)
            methods.append(merged.method)
            categories = {r["category"] for r in group}
            category = categories.pop() if len(categories) == 1 else "general"
            rel, slug = unique_path(
                vault.paths, episode_folder(vault.paths, day), slugify(merged.title), taken
            )
            names.add(rel)
            new_id = f"episode-{category}-{slug}"
            tags = sorted({t for r in group for t in r["tags"]})
            shared = sorted(set.intersection(*(set(r["tags"]) for r in group)) or set(tags))
            credit = merged_score((r["credit"] for r in group), vault.policy.initial_score)
            meta = {
                "id": new_id,
                "type": "episode",
                "category": category,
                "title": merged.title,
                "tags": tags,
                "created": min(r["created"] for r in group),
                "updated": now_iso(),
                "credit": round(credit, 4),
                "access_count": sum(r["access_count"] for r in group),
                "merged_from": [r["id"] for r in group],
                "source": "merge",
            }
            if scope != GLOBAL:
                meta["scope"] = scope
            why = f"{len(group)} episodes of {day} sharing tags {', '.join(shared)}"
            plan.actions.append(
                Action("create", rel, why, content=new_note_text(meta, merged.body), id=new_id)
            )
            for r in group:
                plan.actions.append(
                    Action(
                        "archive",
                        r["path"],
                        f"merged into {new_id}",
                        {"merged_into": new_id},
                        id=r["id"],
                    )
                )
    plan.method = _method(methods)
    return plan


def _archived_as(vault: Vault, rel: str, taken: set[str]) -> str:
    """Where archiving `rel` will put it (as `archive_into` does): `archive/<rel>`, or a free
    name beside it when that is taken."""
    dest = f"{ARCHIVE}/{rel}"
    if dest not in taken and not vault.paths.note(dest).exists():
        taken.add(dest)
        return dest
    parent = PurePosixPath(dest).parent.as_posix()
    return unique_path(vault.paths, parent, PurePosixPath(rel).stem, taken)[0]


def _tag_components(rows: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Groups of episodes connected by at least one shared tag (union-find)."""
    parent = list(range(len(rows)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first_with: dict[str, int] = {}
    for i, row in enumerate(rows):
        for tag in row["tags"]:
            if tag in first_with:
                parent[find(i)] = find(first_with[tag])
            else:
                first_with[tag] = i
    groups: dict[int, list[dict[str, Any]]] = {}
    for i, row in enumerate(rows):
        groups.setdefault(find(i), []).append(row)
    return list(groups.values())


# --------------------------------------------------------------------------- promotion


def plan_promote(vault: Vault, now: dt.datetime | None = None, llm: JSONChat | None = None) -> Plan:
    """Episodes above the promotion threshold feed their entity-like facts to entity notes.
    An approved policy rule `promote` replaces the threshold test: it chooses which
    episodes (not yet promoted) are mined for facts."""
    now = _now(now)
    policy = vault.policy
    plan = Plan("promote")
    rule = _rule(vault, plan)
    threshold = policy.promotion_threshold
    transfer = policy.promotion_transfer
    rows = {r["path"]: r for r in credit_rows(vault, now)}
    feed = EntityFeed(vault, policy.initial_score, rows, writer="merge")
    methods: list[str] = []
    names: LinkNames | None = None  # the vault's files by name, read once, only if needed
    for row in sorted(rows.values(), key=lambda r: (-r["effective"], r["path"])):
        if row["type"] != "episode" or row["problem"] or row.get("superseded"):
            continue  # (a superseded episode's facts were replaced: never fed again)
        if rule is None and row["effective"] <= threshold:
            continue
        if rule is not None and not _rule_takes(plan, rule, row, now):
            continue
        meta = parse_text(vault.paths.note(row["path"]).read_bytes()).meta
        if meta.get("promoted"):
            continue
        scope = row.get("scope") or GLOBAL  # an episode's facts stay in its scope
        # only what the episode says itself: never its headings, links or provenance
        text = own_text(note_body(vault, row["path"]))
        facts = (
            [replace(f, scope=scope) for f in extract_facts(text, row["id"], llm)] if text else []
        )
        methods += [f.method for f in facts]
        if not facts:
            plan.notes.append(
                f"{row['id']}: credit {row['effective']:.2f} but no entity-like facts"
            )
            continue
        names = names or link_names(vault.paths.root)
        # (no parentheses in the shown title: the provenance is read back as "(from ...)")
        link = names.link(row["path"], _PARENS.sub(" ", row["title"]))
        fresh = feed.fresh(facts, f"from {link}", row["id"])
        accepted = sum(len(v) for v in fresh.values())
        if not accepted:
            plan.notes.append(f"{row['id']}: its facts are already in the entity notes")
            continue
        # what outcomes earned the episode above the initial score, shared by the targets
        # in proportion to their facts (an episode no outcome scored transfers nothing)
        moved = earned_transfer(row["credit"], policy.initial_score, transfer)
        for rel, lines in fresh.items():
            feed.accept(rel, lines, row["id"], gain=moved * len(lines) / accepted)
        why = f"at credit {row['effective']:.2f} > {threshold}" if rule is None else "by the rule"
        plan.actions.append(
            Action(
                "set",
                row["path"],
                f"promoted {accepted} fact(s) {why}",
                {"credit": round(row["credit"] - moved, 4), "promoted": now_iso()}
                if moved
                else {"promoted": now_iso()},
                id=row["id"],
            )
        )
    plan.actions += feed.actions()
    plan.method = _method(methods)
    return plan


# --------------------------------------------------------------------------- pruning


def plan_prune(
    vault: Vault,
    now: dt.datetime | None = None,
    older_than_days: float | None = None,
    type_: str | None = None,
) -> Plan:
    """Archive notes whose effective credit fell below the threshold (and are old enough), or,
    with `older_than_days`, notes of one type older than that; never pinned notes or the
    protected categories (people by default). Then each scope over `scope_max_notes` loses
    its oldest notes to the archive until it fits.

    An approved policy rule `prune` replaces the credit test (low effective credit, old
    enough, scored): it chooses among the notes pruning may take, and never takes a pinned
    note or a `people` note, whatever STRATEGY.md says. `older_than_days` (a person's
    explicit retention) and the scope cap ignore the rule."""
    now = _now(now)
    policy = vault.policy
    plan = Plan("prune")
    rule = _rule(vault, plan) if older_than_days is None else None
    skip_categories = set(policy.prune_skip_categories)
    if rule is not None:
        skip_categories.add("people")
    rows = credit_rows(vault, now)
    for row in sorted(rows, key=lambda r: r["path"]):
        if row["pinned"] and (policy.prune_skip_pinned or rule is not None):
            continue
        if row["category"] in skip_categories or row["problem"]:
            continue
        born = parse_time(row["created"] or row["updated"])
        if born is None:
            continue  # unknown age: never pruned
        age = days_between(born, now)
        if older_than_days is not None:
            if row["type"] == (type_ or "episode") and age > older_than_days:
                why = f"{row['type']} older than {older_than_days:g} days ({age:.0f} days)"
                plan.actions.append(Action("archive", row["path"], why, id=row["id"]))
            continue
        if rule is not None:
            if _rule_takes(plan, rule, row, now):
                why = f"the approved policy rule: {rule.source}"
                plan.actions.append(Action("archive", row["path"], why, id=row["id"]))
            continue
        if not row["scored"] or age <= policy.prune_min_age_days:
            continue  # notes no outcome has scored are never pruned by credit
        if row["effective"] < policy.prune_threshold:
            why = (
                f"effective credit {row['effective']:.3f} < {policy.prune_threshold} "
                f"and {age:.0f} days old"
            )
            plan.actions.append(Action("archive", row["path"], why, id=row["id"]))
    if older_than_days is None and policy.scope_max_notes > 0:
        _evict(plan, rows, policy.scope_max_notes, skip_categories, policy.prune_skip_pinned)
    return plan


def _evict(
    plan: Plan, rows: list[dict[str, Any]], cap: int, skip: set[str], keep_pinned: bool
) -> None:
    """Per scope (global excepted): archive the oldest notes that may go until at most `cap`
    remain (seed: a capped store of captured facts)."""
    going = {a.path for a in plan.actions}
    by_scope: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        scope = row.get("scope") or GLOBAL
        if scope != GLOBAL and row["path"] not in going:
            by_scope.setdefault(scope, []).append(row)
    for scope, members in sorted(by_scope.items()):
        over = len(members) - cap
        movable = [
            r
            for r in members
            if not (r["pinned"] and keep_pinned) and r["category"] not in skip and not r["problem"]
        ]
        movable.sort(key=lambda r: (r["created"] or r["updated"] or "", r["path"]))
        for row in movable[: max(0, over)]:
            why = f"scope {scope} holds {len(members)} notes, over scope_max_notes {cap}"
            plan.actions.append(Action("archive", row["path"], why, id=row["id"]))


# --------------------------------------------------------------------------- scheduling


def due_operations(vault: Vault, now: dt.datetime | None = None) -> dict[str, DueState]:
    """Which operations are due, from the last run times in logs/lifecycle.jsonl."""
    now = _now(now)
    policy = vault.policy
    last = last_runs(vault)
    out: dict[str, DueState] = {}
    for op, interval_key, enabled_key in (
        ("consolidate", "consolidation_interval", "consolidation_enabled"),
        ("promote", "promotion_interval", "promotion_enabled"),
        ("prune", "prune_interval", "prune_enabled"),
    ):
        hours = policy.hours(interval_key)
        previous = parse_time(last.get(op))
        waited = None if previous is None else days_between(previous, now) * 24
        enabled = bool(policy.get(enabled_key))
        due = enabled and (waited is None or waited >= hours)
        out[op] = DueState(due, last.get(op), hours, enabled)
    return out


def make_plan(vault: Vault, operation: str, now: dt.datetime | None = None) -> Plan:
    """The plan of one operation, with the LLM when one is configured."""
    if operation == "consolidate":
        return plan_consolidate(vault, now, vault.llm())
    if operation == "promote":
        return plan_promote(vault, now, vault.llm())
    return plan_prune(vault, now)


def run_plan(vault: Vault, plan: Plan, dry_run: bool, commit: bool = True) -> PlanResult:
    """The plan as a result (dry run), or applied exactly as planned (and committed when
    `commit_on` names lifecycle passes, unless the caller commits it: `commit` False)."""
    if dry_run:
        return plan_result(plan)
    result = apply_plan(vault, plan)
    if commit:
        _commit_pass(vault, plan)
    return result


def _commit_pass(vault: Vault, plan: Plan) -> None:
    if plan.actions:
        count = f"{len(plan.actions)} {plural(len(plan.actions), 'change')}"
        commit_at(vault, "lifecycle", f"vb {plan.operation}: {count}")


def maintain(
    vault: Vault, dry_run: bool = False, now: dt.datetime | None = None, commit: bool = True
) -> MaintainResult:
    """Run whatever is due (consolidation, promotion, pruning, in that order); each pass is
    committed as `run_plan` says (`commit` False: the caller commits them)."""
    due = due_operations(vault, now)
    runs = [
        run_plan(vault, make_plan(vault, operation, now), dry_run, commit)
        for operation, state in due.items()
        if state.due
    ]
    return MaintainResult(dry_run, due, runs)


def compact_memory(vault: Vault) -> CompactResult:
    """Consolidate same-day episodes and prune low-credit notes now (MCP's memory_compact)."""
    result = CompactResult(consolidated=0, pruned=0, created=[], archived=[])
    for operation in ("consolidate", "prune"):
        plan = make_plan(vault, operation)
        apply_plan(vault, plan)
        _commit_pass(vault, plan)
        archived = [a.path for a in plan.actions if a.op == "archive"]
        result.created += [a.path for a in plan.actions if a.op == "create"]
        result.archived += archived
        if operation == "consolidate":
            result.consolidated = len(archived)
        else:
            result.pruned = len(archived)
    return result
