"""Print the JSON Schema of every result `vb ... --json` prints and the MCP tools return.

`make docs` writes it to docs/schema.json; a test fails when the checked-in file is stale.
The schemas come from the result dataclasses themselves (pydantic reads their fields, types
and field docstrings), so the document cannot drift from the code.
"""

from __future__ import annotations

import json
from typing import Any

from vault_brain.app.lifecycle.plans import CompactResult, MaintainResult
from vault_brain.app.lifecycle.policy_review import PolicyApproval, PolicyDiff
from vault_brain.app.memory import results
from vault_brain.app.memory.apply import PlanResult
from vault_brain.app.memory.credit import CreditReport, FeedbackResult
from vault_brain.app.memory.memory_file import MemoryFileResult
from vault_brain.app.memory.tokens import TokenAdded, TokenList, TokenRevoked
from vault_brain.app.sessions.compaction import CompactionResult
from vault_brain.app.sessions.flush import FlushResult
from vault_brain.app.sessions.loop import ContextResult, IntakeResult, PersistResult
from vault_brain.app.sessions.retention import SessionList, SessionsArchived
from vault_brain.app.sessions.tasks import TaskChange, TaskList
from vault_brain.app.status import StatusReport
from vault_brain.app.sync.clone import CloneResult, FetchOldResult
from vault_brain.app.sync.graph import GraphResult
from vault_brain.app.sync.history import HistoryResult, LogResult
from vault_brain.app.sync.persona import PersonaResult
from vault_brain.app.sync.remote import SyncResult
from vault_brain.interfaces.claude_code.settings import HookSettings
from vault_brain.interfaces.clients import ClientConfig

# result name -> (class, where it comes from)
RESULTS: dict[str, tuple[type, str]] = {
    "note": (
        results.NoteResult,
        "vb add|show|update",
    ),
    "move": (results.MoveResult, "vb delete|restore"),
    "note_list": (results.NoteList, "vb list"),
    "search": (results.SearchResult, "vb search"),
    "search_batch_line": (results.BatchLine, "each line of vb search --queries"),
    "feedback": (FeedbackResult, "vb feedback; memory_feedback"),
    "credit_report": (CreditReport, "vb credit report"),
    "plan": (PlanResult, "vb consolidate|promote|prune"),
    "maintain": (MaintainResult, "vb maintain"),
    "compact_memory": (CompactResult, "memory_compact (empty lists left out)"),
    "memory_file": (MemoryFileResult, "vb memory-file"),
    "index": (results.IndexResult, "vb index"),
    "strategy": (results.StrategyResult, "vb strategy"),
    "policy_diff": (PolicyDiff, "vb policy diff"),
    "policy_approval": (PolicyApproval, "vb policy approve"),
    "init": (results.InitResult, "vb init"),
    "status": (StatusReport, "vb status"),
    "sync": (SyncResult, "vb sync"),
    "clone": (CloneResult, "vb clone"),
    "fetch_old": (FetchOldResult, "vb fetch-old"),
    "history": (HistoryResult, "vb history"),
    "log": (LogResult, "vb log"),
    "persona": (PersonaResult, "vb persona; memory_persona"),
    "graph": (GraphResult, "vb graph"),
    "intake": (IntakeResult, "vb loop intake"),
    "context": (ContextResult, "vb loop context --json"),
    "persist": (PersistResult, "vb loop persist"),
    "flush": (FlushResult, "vb flush"),
    "compaction": (CompactionResult, "vb compact"),
    "sessions": (SessionList, "vb sessions list"),
    "sessions_archived": (SessionsArchived, "vb sessions archive"),
    "tasks": (TaskList, "vb tasks list"),
    "task_change": (TaskChange, "vb tasks add|update|done|block"),
    "token_added": (TokenAdded, "vb token add"),
    "token_list": (TokenList, "vb token list"),
    "token_revoked": (TokenRevoked, "vb token revoke"),
    "client_config": (ClientConfig, "vb mcp --print-config"),
    "hook_settings": (HookSettings, "vb hooks claude-code"),
}

ERROR = {
    "type": "object",
    "description": "What `vb ... --json` prints on stdout when the command fails.",
    "properties": {
        "version": {"const": results.SCHEMA_VERSION},
        "error": {
            "type": "object",
            "properties": {
                "code": {
                    "enum": ["invalid_input", "usage", "not_found", "locked", "no_vault", "llm"]
                },
                "message": {"type": "string"},
                "hint": {"type": ["string", "null"]},
                "exit_code": {"type": "integer"},
            },
            "required": ["code", "message", "hint", "exit_code"],
        },
    },
    "required": ["version", "error"],
}


def render() -> str:
    from pydantic import TypeAdapter

    out: dict[str, Any] = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "vault_brain results",
        "description": (
            f"Every `vb ... --json` document is {{'version': {results.SCHEMA_VERSION}, "
            "...fields of one result below}; the MCP tools answer compact documents made "
            "from these (their fields and output schemas: docs/agents.md and tools/list)."
        ),
        "version": results.SCHEMA_VERSION,
        "results": {},
        "error": ERROR,
    }
    for name, (cls, used_by) in RESULTS.items():
        schema = TypeAdapter(cls).json_schema(mode="serialization")
        out["results"][name] = {"used_by": used_by, "schema": schema}
    return json.dumps(out, indent=2, ensure_ascii=False, sort_keys=False) + "\n"


if __name__ == "__main__":
    print(render(), end="")
