"""Claude Code hooks: `vb hook <event>` reads the harness's JSON payload on stdin, does vb's
part through the memory API and returns the JSON Claude Code reads from stdout.

- SessionStart: regenerate MEMORY.md and inject it (`additionalContext`).
- UserPromptSubmit: record the prompt in vb's session for this Claude session
  (`claude-<session_id>`), retrieve the memories for it (recorded for credit) and inject them.
Both inject memories as quoted reference data (`domain.gate.quoting`), never as instructions.
- PreCompact: import what is new in Claude Code's own transcript into vb's session, then run
  vb's flush, so durable memories are kept before Claude compacts its context away.
- SessionEnd: import the rest of the transcript, flush, and commit the vault with git (only
  when it is a repository; a git problem is a warning, never a failed hook).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vault_brain.app.api import MemoryAPI
from vault_brain.domain.errors import LockedError
from vault_brain.domain.gate.quoting import Quoted, memory_block, quote
from vault_brain.domain.sessions.records import MESSAGE_TYPES, record_kind
from vault_brain.interfaces.claude_code.payload import HARNESS, Payload, parse_payload
from vault_brain.interfaces.claude_code.transcript import import_transcript
from vault_brain.storage.sessions.transcript import append, read_records

# Claude Code shows longer hook context only as a preview; stay under it.
MAX_CONTEXT_CHARS = 9_500
_SLASH_ONLY = re.compile(r"^\s*/\S+\s*$")


@dataclass
class HookResult:
    output: dict[str, Any]
    warnings: list[str] = field(default_factory=list)


def memory_context(api: MemoryAPI) -> str:
    """MEMORY.md, regenerated (or built in memory when another writer holds the vault), cut
    down to what a hook may inject."""
    try:
        memory = api.memory_file()
    except LockedError:
        memory = api.memory_file(write=False)
    room = MAX_CONTEXT_CHARS - len(_memory_md("")) - 16  # (its line breaks, escapes)
    text, budget = memory.text, memory.budget
    for _ in range(4):
        if len(text) <= room or budget <= 50:
            break
        budget = int(budget * room / len(text) * 0.9)
        text = api.memory_file(budget, write=False).text
    return _memory_md(text[:room])


def _memory_md(text: str) -> str:
    """MEMORY.md quoted as reference data (`domain.gate.quoting`), never as instructions."""
    head = (
        "Long-term memory from vault_brain (the best memories by credit; search for more with "
        "the vault-brain MCP tools when they are connected).\n\n"
    )
    return head + memory_block([], [quote(Quoted("MEMORY.md", "vb", "", text))])


def session_start(api: MemoryAPI, payload: Payload) -> HookResult:
    context = memory_context(api)
    return HookResult(
        {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context}}
    )


def user_prompt_submit(api: MemoryAPI, payload: Payload) -> HookResult:
    prompt = str(payload.data["prompt"])
    session = payload.vb_session
    result = HookResult({})
    if not prompt.strip():
        return result
    try:
        message_id = _record_prompt(api, session, prompt.strip(), payload.transcript, result)
    except LockedError as exc:  # the prompt still gets its memories, unrecorded
        result.warnings.append(f"prompt not recorded: {exc.message}")
        message_id = None
    if _SLASH_ONLY.match(prompt):
        return result
    try:
        rows = api.memories_for_message(session, message_id, prompt, HARNESS)
    except LockedError as exc:  # (a vault locked a moment ago is not waited for twice)
        result.warnings.append(f"retrieval not recorded for credit: {exc.message}")
        rows = api.memories_for_message(session, None, prompt, HARNESS)
    if not rows:
        return result
    quoted: list[Quoted] = []
    for r in rows:  # quoted as reference data, as many as fit whole
        memory = Quoted(str(r["id"]), str(r.get("written_by") or "agent"), r["title"], r["snippet"])
        if len(memory_block([*quoted, memory])) > MAX_CONTEXT_CHARS:
            break
        quoted.append(memory)
    result.output = {
        "hookSpecificOutput": {
            "hookEventName": "UserPromptSubmit",
            "additionalContext": memory_block(quoted),
        }
    }
    return result


def _record_prompt(
    api: MemoryAPI, session: str, prompt: str, source: Path | None, result: HookResult
) -> str | None:
    """Import what is new in Claude Code's transcript, then append the prompt (unless the
    transcript already ended with it); returns the prompt's message id."""
    vault = api.vault
    if source is not None:
        imported = import_transcript(vault, session, source)
        if imported.missing:
            result.warnings.append(f"transcript {source} not found; prompt recorded without it")
    messages = [
        r for r in read_records(vault.paths.transcript(session)) if record_kind(r) in MESSAGE_TYPES
    ]
    if messages and messages[-1].get("type") == "user" and messages[-1].get("content") == prompt:
        return str(messages[-1].get("id"))
    record = {"type": "user", "content": prompt, "harness": HARNESS, "via": "hook"}
    return str(append(vault.paths, session, [record])[0].get("id"))


def _import_and_flush(api: MemoryAPI, payload: Payload, result: HookResult) -> int:
    """Import what is new in Claude Code's transcript and flush; the notes written."""
    source = payload.transcript
    assert source is not None  # checked by parse_payload
    imported = import_transcript(api.vault, payload.vb_session, source)
    if imported.missing:
        result.warnings.append(f"transcript {source} not found; nothing imported")
    return len(api.flush(payload.vb_session).plan.actions)


def pre_compact(api: MemoryAPI, payload: Payload) -> HookResult:
    result = HookResult({})
    notes = _import_and_flush(api, payload, result)
    if notes:
        result.output = {
            "systemMessage": f"vault_brain: saved durable memories to {notes} note(s) "
            "before compaction"
        }
    return result


def session_end(api: MemoryAPI, payload: Payload) -> HookResult:
    result = HookResult({})
    _import_and_flush(api, payload, result)
    reason = payload.text("reason") or "other"
    message = f"vb: Claude Code session {payload.session_id} ended ({reason})"
    outcome = api.commit(message, "session")
    if outcome and outcome.startswith("git "):
        result.warnings.append(outcome)
    return result


HANDLERS = {
    "SessionStart": session_start,
    "UserPromptSubmit": user_prompt_submit,
    "PreCompact": pre_compact,
    "SessionEnd": session_end,
}


def run_hook(api: MemoryAPI, slug: str, raw: str) -> HookResult:
    payload = parse_payload(raw, slug)
    return HANDLERS[payload.event](api, payload)
