"""Plan, then apply: lifecycle operations produce a plan of file actions with reasons;
`--dry-run` prints it, apply executes exactly those actions under the vault lock with
rollback on failure, and logs one line per action to `logs/lifecycle.jsonl`."""

from __future__ import annotations

import json
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import PurePosixPath
from typing import Any

from vault_brain.core import Vault
from vault_brain.errors import VaultBrainError
from vault_brain.vault.frontmatter import edit_front_matter, parse_text, replace_body
from vault_brain.vault.store import append_jsonl, note_path, now_iso, transaction

LIFECYCLE_LOG = "lifecycle.jsonl"
OPERATIONS = ("consolidate", "promote", "prune")


@dataclass
class Action:
    """One file change. `op` is create | archive | set | append."""

    op: str
    path: str
    why: str
    keys: dict[str, Any] = field(default_factory=dict)
    content: str | None = None  # create: the whole file; append: text added to the body
    id: str | None = None

    def describe(self) -> str:
        if self.op == "create":
            return f"create  {self.path}  ({self.why})"
        if self.op == "archive":
            return f"archive {self.path} -> archive/{self.path}  ({self.why})"
        if self.op == "append":
            return f"append  {self.path}  ({self.why})"
        keys = ", ".join(f"{k}={v}" for k, v in self.keys.items())
        return f"set     {self.path}: {keys}  ({self.why})"


@dataclass
class Plan:
    operation: str
    actions: list[Action] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what was considered and skipped, and why
    method: str = "offline"

    def to_json(self) -> dict[str, Any]:
        return {
            "operation": self.operation,
            "method": self.method,
            "actions": [asdict(a) for a in self.actions],
            "notes": self.notes,
        }

    def render(self) -> str:
        head = f"{self.operation}: {len(self.actions)} action(s)"
        if self.method != "offline":
            head += f" [{self.method}]"
        lines = [head] + [f"  {a.describe()}" for a in self.actions]
        lines += [f"  - {n}" for n in self.notes]
        return "\n".join(lines)


@dataclass
class ApplyResult:
    plan: Plan
    run_id: str
    applied: int

    def to_json(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "applied": self.applied, **self.plan.to_json()}


def apply_plan(vault: Vault, plan: Plan) -> ApplyResult:
    """Execute every action or none: a failure rolls back the files already changed."""
    try:
        return _apply(vault, plan)
    except FileNotFoundError as exc:
        raise VaultBrainError(
            f"{plan.operation}: {exc.filename} changed since the plan was made; nothing changed",
            hint=f"run `vb {plan.operation}` again",
        ) from None


def _apply(vault: Vault, plan: Plan) -> ApplyResult:
    from vault_brain.vault.memory import archive_into

    run_id = uuid.uuid4().hex[:12]
    stamp = now_iso()
    touched: list[str] = []
    order = {"create": 0, "append": 1, "set": 2, "archive": 3}
    actions = sorted(plan.actions, key=lambda a: order[a.op])
    with transaction(vault.paths) as tx:
        for action in actions:
            full = note_path(vault.paths, action.path)
            if action.op == "create":
                tx.create(full, action.content or "")
            elif action.op == "archive":
                dest = archive_into(tx, vault.paths, action.path, action.why, action.keys)
                touched.append(dest)
            elif action.op in ("set", "append"):
                raw = full.read_bytes()
                new = edit_front_matter(raw, action.keys, where=action.path)
                if action.op == "append" and action.content:
                    body = parse_text(raw).body.rstrip("\n")
                    new = replace_body(new, f"{body}\n\n{action.content.strip()}\n")
                tx.write(full, new)
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
        append_jsonl(vault.paths.logs_dir / LIFECYCLE_LOG, records)
        vault.index.refresh(touched)
    return ApplyResult(plan, run_id, len(actions))


def last_runs(vault: Vault) -> dict[str, str]:
    """Operation -> timestamp of its latest run, read from the end of the lifecycle log."""
    path = vault.paths.logs_dir / LIFECYCLE_LOG
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
    return parse_text((vault.paths.root / PurePosixPath(rel)).read_bytes()).body
