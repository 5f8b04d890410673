"""Applying plans: every action or none, under the vault lock, logged to
`logs/lifecycle.jsonl`; the index catches up after the files are written."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

from vault_brain.app.memory.notes import archive_into
from vault_brain.app.memory.results import Result, result
from vault_brain.app.memory.vault import Vault
from vault_brain.domain.capture.supersede import retire
from vault_brain.domain.clock import now_iso
from vault_brain.domain.errors import VaultBrainError
from vault_brain.domain.policy.plan import OPERATIONS, Action, Plan
from vault_brain.storage.files import note_path
from vault_brain.storage.notes.frontmatter import parse_text
from vault_brain.storage.notes.frontmatter_edit import edit_front_matter, replace_body
from vault_brain.storage.transaction import Transaction


@result
class PlanResult(Result):
    operation: str
    method: str
    """offline, llm, or offline (llm failed: ...)."""
    dry_run: bool
    actions: list[Action]
    notes: list[str]
    """What was considered and skipped, and why."""
    run_id: str | None = None
    applied: int = 0


def plan_result(plan: Plan, dry_run: bool = True) -> PlanResult:
    return PlanResult(plan.operation, plan.method, dry_run, list(plan.actions), list(plan.notes))


def apply_plan(
    vault: Vault, plan: Plan, then: Callable[[Transaction], object] | None = None
) -> PlanResult:
    """Execute every action or none (one transaction, journaled); `then` adds more changes
    to the same transaction (e.g. the record that says the plan ran)."""
    try:
        return _apply(vault, plan, then)
    except FileNotFoundError as exc:
        raise VaultBrainError(
            f"{plan.operation}: {exc.filename} changed since the plan was made; nothing changed",
            hint=f"run `vb {plan.operation}` again",
        ) from None


def _apply(vault: Vault, plan: Plan, then: Callable[[Transaction], object] | None) -> PlanResult:
    run_id = uuid.uuid4().hex[:12]
    stamp = now_iso()
    touched: list[str] = []
    order = {"create": 0, "append": 1, "set": 2, "archive": 3}
    actions = sorted(plan.actions, key=lambda a: order[a.op])
    with vault.transaction() as tx:
        for action in actions:
            full = note_path(vault.paths, action.path)
            if action.op == "create":
                tx.create(full, action.content or "")
            elif action.op == "archive":
                dest = archive_into(tx, vault.paths, action.path, action.why, action.keys)
                touched.append(dest)
            elif action.op in ("set", "append"):
                tx.edit(full, _change(action))
            else:  # pragma: no cover - plans are built in this package
                raise VaultBrainError(f"unknown action {action.op!r}")
            touched.append(action.path)
        records: list[dict[str, Any]] = [
            {
                "ts": stamp,
                "run": run_id,
                "operation": plan.operation,
                "op": a.op,
                "path": a.path,
                "id": a.id,
                "why": a.why,
                "keys": a.keys,
            }
            for a in actions
        ]
        records.append(
            {
                "ts": stamp,
                "run": run_id,
                "event": "run",
                "operation": plan.operation,
                "actions": len(actions),
                "method": plan.method,
            }
        )
        if actions or plan.operation in OPERATIONS:  # a lifecycle run is logged even if idle
            tx.append_jsonl(vault.paths.lifecycle_log, records)
        if then is not None:
            then(tx)
    vault.refresh(touched)
    result = plan_result(plan, dry_run=False)
    result.run_id, result.applied = run_id, len(actions)
    return result


def _change(action: Action) -> Callable[[bytes], bytes]:
    """A set or append action as an edit of the note's bytes (re-applied at commit if the
    note changed meanwhile)."""

    def change(raw: bytes) -> bytes:
        keys = dict(action.keys)
        if action.extend:
            meta = parse_text(raw).meta
            for key, items in action.extend.items():
                current = meta.get(key)
                have = list(current) if isinstance(current, list) else []
                have = have or ([current] if isinstance(current, str) and current else [])
                keys[key] = have + [x for x in items if x not in have]
        new = edit_front_matter(raw, keys, where=action.path)
        if action.op == "append" and action.retire:
            body = retire(parse_text(raw).body, action.retire, action.content or "", now_iso()[:10])
            new = replace_body(new, body)
        elif action.op == "append" and action.content:
            body = parse_text(raw).body.rstrip("\n")
            new = replace_body(new, f"{body}\n\n{action.content.strip()}\n")
        return new

    return change


def last_runs(vault: Vault) -> dict[str, str]:
    """Operation -> timestamp of its latest run, read from the end of the lifecycle log."""
    path = vault.paths.lifecycle_log
    found: dict[str, str] = {}
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return found
    chunk = 64 * 1024
    with open(path, "rb") as handle:
        while True:
            start = max(0, size - chunk)
            handle.seek(start)
            data = handle.read(size - start)
            lines = data.split(b"\n")
            if start > 0:
                lines = lines[1:]  # the first line may be cut
            for line in reversed(lines):
                if b'"event":"run"' not in line.replace(b" ", b""):
                    continue
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                op = record.get("operation")
                if op in OPERATIONS and op not in found and isinstance(record.get("ts"), str):
                    found[op] = record["ts"]
            if len(found) == len(OPERATIONS) or start == 0:
                return found
            chunk *= 4


def note_body(vault: Vault, rel: str) -> str:
    return parse_text(vault.paths.note(rel).read_bytes()).body
