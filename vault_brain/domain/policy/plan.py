"""Plans: what a lifecycle operation (or a flush) would change, as file actions with reasons.

Planning decides; applying (the application layer) executes exactly the plan under the vault
lock with rollback, and `--dry-run` prints it instead."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

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
    extend: dict[str, list[str]] = field(default_factory=dict)
    """List keys that gain these items (those not yet there), read when the note is written."""
    retire: dict[str, str] = field(default_factory=dict)
    """append: old statement -> the statement replacing it; the line vb wrote for the old one
    moves under the note's "## Previously" heading (domain/capture/supersede.py)."""

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
