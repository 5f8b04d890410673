"""Claude Code hooks: `vb hook <event>` reads the harness's JSON payload on stdin, does vb's
part and returns the JSON Claude Code reads from stdout.

- SessionStart: regenerate MEMORY.md and inject it (`additionalContext`).
- UserPromptSubmit: record the prompt in vb's session for this Claude session
  (`claude-<session_id>`), retrieve the memories for it (recorded for credit) and inject them.
- PreCompact: import what is new in Claude Code's own transcript into vb's session, then run
  vb's flush, so durable memories are kept before Claude compacts its context away.
- SessionEnd: import the rest of the transcript, flush, and commit the vault with git (only
  when it is a repository; a git problem is a warning, never a failed hook).

Payloads (Claude Code's hooks reference): every event carries `session_id`,
`transcript_path`, `cwd` and `hook_event_name`; SessionStart adds `source`
(startup|resume|clear|compact), UserPromptSubmit `prompt`, PreCompact `trigger` (manual|auto)
and `custom_instructions`, SessionEnd `reason` (clear|logout|prompt_input_exit|other).

Claude Code's transcript is JSONL: records of `type` user or assistant hold `message.content`
as a string or a list of blocks (text, tool_use, tool_result, thinking, ...); other record
types (summary, system, file-history-snapshot, ...) and malformed lines are skipped and
counted. Each import appends one `import` record with the byte offset reached, so the next
import reads only what is new; a torn last line is left for the next import.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vault_brain.core import Vault
from vault_brain.errors import LockedError, VaultBrainError

HARNESS = "claude-code"
# `vb hook <slug>` for each Claude Code event this integration handles.
EVENTS = {
    "session-start": "SessionStart",
    "user-prompt-submit": "UserPromptSubmit",
    "pre-compact": "PreCompact",
    "session-end": "SessionEnd",
}
# Claude Code shows longer hook context only as a preview; stay under it.
MAX_CONTEXT_CHARS = 9_500
# Tool output can be whole files; the vault keeps a bounded excerpt (Claude keeps the rest).
MAX_TOOL_TEXT = 4_000
_COMMAND_WRAPPER = re.compile(r"^\s*<(command-name|command-message|local-command-\w+)>")
_SLASH_ONLY = re.compile(r"^\s*/\S+\s*$")


# --------------------------------------------------------------------------- payloads


@dataclass
class Payload:
    event: str  # Claude Code's name, e.g. "SessionStart"
    session_id: str
    data: dict[str, Any]

    @property
    def vb_session(self) -> str:
        """vb's session for this Claude Code session."""
        return f"claude-{self.session_id}"

    def text(self, key: str) -> str | None:
        value = self.data.get(key)
        return value if isinstance(value, str) else None

    @property
    def transcript(self) -> Path | None:
        value = self.text("transcript_path")
        return Path(value).expanduser() if value else None


def parse_payload(raw: str, slug: str) -> Payload:
    """The harness's JSON payload for `vb hook <slug>`, checked before anything is written."""
    from vault_brain.sessions.transcript import check_session_id

    name = EVENTS[slug]
    hint = f"Claude Code sends the {name} payload on stdin; see `vb hooks claude-code`"
    try:
        data = json.loads(raw)
    except ValueError as exc:
        detail = getattr(exc, "msg", str(exc))
        raise VaultBrainError(f"the {name} payload on stdin is not JSON ({detail})", hint) from None
    if not isinstance(data, dict):
        raise VaultBrainError(f"the {name} payload is not a JSON object", hint)
    given = data.get("hook_event_name")
    if given is not None and given != name:
        raise VaultBrainError(
            f"got a {given!r} payload on `vb hook {slug}` (expects {name})",
            hint="check the hook commands in .claude/settings.json (`vb hooks claude-code`)",
        )
    session_id = data.get("session_id")
    if not isinstance(session_id, str) or not session_id.strip():
        raise VaultBrainError(f"the {name} payload has no session_id", hint)
    payload = Payload(name, session_id.strip(), data)
    check_session_id(payload.vb_session)  # a bad id fails here, before anything is written
    if name == "UserPromptSubmit" and not isinstance(data.get("prompt"), str):
        raise VaultBrainError("the UserPromptSubmit payload has no prompt", hint)
    if name in ("PreCompact", "SessionEnd") and not payload.text("transcript_path"):
        raise VaultBrainError(f"the {name} payload has no transcript_path", hint)
    return payload


# --------------------------------------------------------------------------- transcripts


def _clip(text: str, limit: int = MAX_TOOL_TEXT) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[… {len(text) - limit} more characters in Claude Code's transcript]"


def _block_text(content: Any) -> str:
    """A tool result's content: a string, or a list of blocks of which text is kept."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            elif isinstance(block, dict):
                parts.append(f"[{block.get('type', 'block')}]")
        return "\n".join(parts)
    return "" if content is None else json.dumps(content, ensure_ascii=False)


def _clip_arguments(value: Any) -> Any:
    if isinstance(value, str):
        return _clip(value)
    if isinstance(value, dict):
        return {str(k): _clip_arguments(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clip_arguments(v) for v in value]
    return value


def convert_record(record: dict[str, Any]) -> tuple[list[dict[str, Any]], str | None]:
    """One Claude Code transcript record -> vb transcript records, or why it was skipped."""
    kind = record.get("type")
    if kind not in ("user", "assistant"):
        return [], f"type {kind}" if isinstance(kind, str) else "no type"
    for flag, reason in (
        ("isSidechain", "sidechain"),
        ("isMeta", "meta"),
        ("isCompactSummary", "compact summary"),
    ):
        if record.get(flag):
            return [], reason
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        blocks: list[Any] = [{"type": "text", "text": content}]
    elif isinstance(content, list):
        blocks = content
    else:
        return [], "malformed"
    tag: dict[str, Any] = {"harness": HARNESS}
    if isinstance(record.get("uuid"), str):
        tag["harness_uuid"] = record["uuid"]
    out: list[dict[str, Any]] = []
    texts: list[str] = []
    dropped: set[str] = set()

    def flush_text() -> None:
        text = "\n\n".join(t for t in texts if t.strip()).strip()
        texts.clear()
        if kind == "user" and _COMMAND_WRAPPER.match(text):
            dropped.add("command")  # a slash command's echo, not a message
        elif text:
            out.append({"type": kind, "content": text, **tag})

    for block in blocks:
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        if btype == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif btype == "tool_use" and kind == "assistant":
            flush_text()
            arguments = block.get("input")
            out.append(
                {
                    "type": "tool_call",
                    "name": str(block.get("name") or "?"),
                    "call_id": block.get("id"),
                    "arguments": _clip_arguments(arguments if isinstance(arguments, dict) else {}),
                    **tag,
                }
            )
        elif btype == "tool_result":
            flush_text()
            result = {
                "type": "tool_result",
                "call_id": block.get("tool_use_id"),
                "content": _clip(_block_text(block.get("content"))),
                **tag,
            }
            if block.get("is_error"):
                result["is_error"] = True
            out.append(result)
        else:  # thinking, redacted_thinking, images and unknown blocks are not kept
            dropped.add(str(btype) if btype in ("thinking", "redacted_thinking") else "other")
    flush_text()
    if out:
        return out, None
    return [], " and ".join(sorted(dropped)) or "empty"


@dataclass
class TranscriptChunk:
    records: list[dict[str, Any]] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    offset: int = 0


def read_claude_transcript(path: Path, offset: int = 0) -> TranscriptChunk:
    """The vb records in Claude Code's transcript after byte `offset`. Malformed lines and
    unknown record types are skipped and counted; a torn last line is not consumed."""
    chunk = TranscriptChunk(offset=offset)
    with open(path, "rb") as handle:
        handle.seek(offset)
        data = handle.read()
    end = data.rfind(b"\n") + 1  # complete lines only
    if end < len(data):
        chunk.skipped["incomplete last line"] += 1
    for line in data[:end].splitlines():
        if not line.strip():
            continue
        try:
            record = json.loads(line.decode("utf-8", errors="replace"))
        except ValueError:
            chunk.skipped["malformed"] += 1
            continue
        if not isinstance(record, dict):
            chunk.skipped["malformed"] += 1
            continue
        converted, reason = convert_record(record)
        if reason:
            chunk.skipped[reason] += 1
        chunk.records += converted
    chunk.offset = offset + end
    return chunk


@dataclass
class ImportResult:
    transcript: str
    imported: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    offset: int = 0
    missing: bool = False


def import_transcript(vault: Vault, session: str, source: Path) -> ImportResult:
    """Append what is new in Claude Code's transcript to vb's session, once: prompts the
    UserPromptSubmit hook already recorded are not added again."""
    from vault_brain.sessions.transcript import append, read_records, transcript_path
    from vault_brain.vault.store import vault_lock

    result = ImportResult(str(source))
    if not source.is_file():
        result.missing = True
        return result
    with vault_lock(vault.paths):
        records = list(read_records(transcript_path(vault.paths, session)))
        offset, pending = _import_state(records, str(source))
        if offset > source.stat().st_size:
            offset = 0  # the transcript was replaced: start over
        chunk = read_claude_transcript(source, offset)
        kept = []
        for record in chunk.records:
            text = record.get("content")
            if record["type"] == "user" and isinstance(text, str) and text.strip() in pending:
                pending.remove(text.strip())
                chunk.skipped["already recorded"] += 1
                continue
            kept.append(record)
        result.imported, result.offset = len(kept), chunk.offset
        result.skipped = dict(sorted(chunk.skipped.items()))
        if chunk.offset != offset or kept:
            marker = {
                "type": "import",
                "harness": HARNESS,
                "transcript": str(source),
                "offset": chunk.offset,
                "records": len(kept),
                "skipped": result.skipped,
            }
            append(vault.paths, session, [*kept, marker], locked=True)
    return result


def _import_state(records: list[dict[str, Any]], source: str) -> tuple[int, list[str]]:
    """Byte offset already imported from `source`, and the prompts the hook recorded since."""
    offset, pending = 0, list[str]()
    for record in records:
        if record.get("type") == "import" and record.get("transcript") == source:
            offset, pending = int(record.get("offset") or 0), []
        elif record.get("type") == "user" and record.get("via") == "hook":
            pending.append(str(record.get("content", "")).strip())
    return offset, pending


# --------------------------------------------------------------------------- events


@dataclass
class HookResult:
    output: dict[str, Any]
    warnings: list[str] = field(default_factory=list)


def memory_context(vault: Vault) -> str:
    """MEMORY.md, regenerated (or built in memory when another writer holds the vault), cut
    down to what a hook may inject."""
    from vault_brain.lifecycle.memory_file import build_memory_file, write_memory_file

    try:
        memory = write_memory_file(vault)
    except LockedError:
        memory = build_memory_file(vault)
    text, budget = memory.text, memory.budget
    for _ in range(4):
        if len(text) <= MAX_CONTEXT_CHARS or budget <= 50:
            break
        budget = int(budget * MAX_CONTEXT_CHARS / len(text) * 0.9)
        text = build_memory_file(vault, budget).text
    head = (
        "Long-term memory from vault_brain (the best memories by credit; search for more with "
        "the vault-brain MCP tools when they are connected).\n\n"
    )
    return head + text[:MAX_CONTEXT_CHARS]


def session_start(vault: Vault, payload: Payload) -> HookResult:
    vault.reconcile()
    context = memory_context(vault)
    return HookResult(
        {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context}}
    )


def user_prompt_submit(vault: Vault, payload: Payload) -> HookResult:
    from vault_brain.lifecycle.feedback import record_retrieval

    prompt = str(payload.data["prompt"])
    session = payload.vb_session
    result = HookResult({})
    if not prompt.strip():
        return result
    try:
        message_id = _record_prompt(vault, session, prompt.strip(), payload.transcript, result)
    except LockedError as exc:  # the prompt still gets its memories, unrecorded
        result.warnings.append(f"prompt not recorded: {exc.message}")
        message_id = None
    if _SLASH_ONLY.match(prompt):
        return result
    vault.reconcile()
    hits = vault.searcher.search(prompt, k=int(vault.policy["retrieval_limit"]))
    if not hits:
        return result
    rows = [{"id": h.id, "title": h.title, "path": h.path, "snippet": h.snippet} for h in hits]
    if message_id is not None:  # (a vault locked a moment ago is not waited for twice)
        try:
            extra = {"for_message": message_id, "results": rows}
            record_retrieval(vault, session, prompt, hits, source=HARNESS, extra=extra)
        except LockedError as exc:
            result.warnings.append(f"retrieval not recorded for credit: {exc.message}")
    lines = ["Memories from vault_brain that may help with this prompt:"]
    lines += [f"- **{r['title']}** `{r['id']}` ({r['path']}): {r['snippet']}" for r in rows]
    result.output = {
        "hookSpecificOutput": {
            "hookEventName": "UserPromptSubmit",
            "additionalContext": "\n".join(lines)[:MAX_CONTEXT_CHARS],
        }
    }
    return result


def _record_prompt(
    vault: Vault, session: str, prompt: str, source: Path | None, result: HookResult
) -> str | None:
    """Import what is new in Claude Code's transcript, then append the prompt (unless the
    transcript already ended with it); returns the prompt's message id."""
    from vault_brain.sessions.transcript import append, read_records, record_kind, transcript_path

    if source is not None:
        imported = import_transcript(vault, session, source)
        if imported.missing:
            result.warnings.append(f"transcript {source} not found; prompt recorded without it")
    messages = [
        r
        for r in read_records(transcript_path(vault.paths, session))
        if record_kind(r) in ("user", "assistant", "tool_call", "tool_result")
    ]
    if messages and messages[-1].get("type") == "user" and messages[-1].get("content") == prompt:
        return str(messages[-1].get("id"))
    record = {"type": "user", "content": prompt, "harness": HARNESS, "via": "hook"}
    return str(append(vault.paths, session, [record])[0].get("id"))


def _import_and_flush(vault: Vault, payload: Payload, result: HookResult) -> tuple[int, int]:
    """(records imported, memory notes written) for PreCompact and SessionEnd."""
    from vault_brain.llm.adapter import LLM
    from vault_brain.sessions.flush import flush

    source = payload.transcript
    assert source is not None  # checked by parse_payload
    imported = import_transcript(vault, payload.vb_session, source)
    if imported.missing:
        result.warnings.append(f"transcript {source} not found; nothing imported")
    flushed = flush(vault, payload.vb_session, llm=LLM.from_config())
    return imported.imported, len(flushed.plan.actions)


def pre_compact(vault: Vault, payload: Payload) -> HookResult:
    result = HookResult({})
    _imported, notes = _import_and_flush(vault, payload, result)
    if notes:
        result.output = {
            "systemMessage": f"vault_brain: saved durable memories to {notes} note(s) "
            "before compaction"
        }
    return result


def session_end(vault: Vault, payload: Payload) -> HookResult:
    result = HookResult({})
    _import_and_flush(vault, payload, result)
    reason = payload.text("reason") or "other"
    outcome = commit_vault(vault, f"vb: Claude Code session {payload.session_id} ended ({reason})")
    if outcome.startswith("git "):
        result.warnings.append(outcome)
    return result


HANDLERS = {
    "SessionStart": session_start,
    "UserPromptSubmit": user_prompt_submit,
    "PreCompact": pre_compact,
    "SessionEnd": session_end,
}


def run_hook(vault: Vault, slug: str, raw: str) -> HookResult:
    payload = parse_payload(raw, slug)
    return HANDLERS[payload.event](vault, payload)


# --------------------------------------------------------------------------- git


def commit_vault(vault: Vault, message: str) -> str:
    """Commit the vault's changes (only its own paths, even inside a larger repository).
    Never raises: returns 'committed <sha>', 'nothing to commit', 'not a git repository', or
    'git ...' describing what went wrong."""
    try:
        import git
    except ImportError as exc:  # pragma: no cover - GitPython is a dependency
        return f"git unavailable: {exc}"
    root = vault.paths.root
    try:
        repo = git.Repo(root, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return "not a git repository"
    try:
        from vault_brain.vault.store import vault_lock

        top = Path(repo.working_tree_dir or root)
        rel = os.path.relpath(root, top)
        with vault_lock(vault.paths):
            repo.git.add("--all", "--", rel)
            if not repo.git.diff("--cached", "--name-only", "--", rel).strip():
                return "nothing to commit"
            repo.git.commit("-m", message, "--", rel, env=_identity(repo))
        return f"committed {repo.head.commit.hexsha[:12]}"
    except LockedError as exc:
        return f"git commit skipped: {exc.message}"
    except (git.GitCommandError, git.GitError, OSError, ValueError) as exc:
        detail = getattr(exc, "stderr", "") or str(exc)
        return f"git commit failed: {' '.join(str(detail).split())}"


def _identity(repo: Any) -> dict[str, str]:
    """vb's identity for the commit only when git has none configured."""
    reader = repo.config_reader()
    if reader.get_value("user", "email", default="") and reader.get_value(
        "user", "name", default=""
    ):
        return {}
    name, email = "vault_brain", "vault-brain@localhost"
    return {
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
    }


# --------------------------------------------------------------------------- settings


def hook_commands(command: list[str], vault_root: Path) -> dict[str, str]:
    """Claude Code event -> the shell command that runs `vb hook <slug>` on this vault."""
    base = [*command, "--vault", str(vault_root), "hook"]
    return {name: shlex.join([*base, slug]) for slug, name in EVENTS.items()}


def settings_snippet(commands: dict[str, str]) -> dict[str, Any]:
    return {
        "hooks": {
            name: [{"hooks": [{"type": "command", "command": cmd}]}]
            for name, cmd in commands.items()
        }
    }


def _is_vb_hook(command: Any, slug: str) -> bool:
    if not isinstance(command, str):
        return False
    try:
        tokens = shlex.split(command)
    except ValueError:
        return False
    runs_vb = any(Path(t).name in ("vb", "vb.exe") or t == "vault_brain" for t in tokens)
    return runs_vb and tokens[-2:] == ["hook", slug]


def _entries(groups: list[Any]) -> Iterator[dict[str, Any]]:
    for group in groups:
        if isinstance(group, dict) and isinstance(group.get("hooks"), list):
            yield from (h for h in group["hooks"] if isinstance(h, dict))


def merge_settings(
    settings: dict[str, Any], commands: dict[str, str]
) -> tuple[dict[str, Any], dict[str, str]]:
    """`settings` with vb's hooks added or updated in place; every other key and hook kept.
    Returns the merged settings and, per event, 'added', 'updated' or 'unchanged'."""
    merged = json.loads(json.dumps(settings))
    hooks = merged.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise VaultBrainError(
            '"hooks" in the settings is not an object', hint="fix the settings file by hand"
        )
    status: dict[str, str] = {}
    slugs = {name: slug for slug, name in EVENTS.items()}
    for name, command in commands.items():
        groups = hooks.setdefault(name, [])
        if not isinstance(groups, list):
            raise VaultBrainError(
                f'"hooks.{name}" in the settings is not a list',
                hint="fix the settings file by hand",
            )
        ours = [h for h in _entries(groups) if _is_vb_hook(h.get("command"), slugs[name])]
        if not ours:
            groups.append({"hooks": [{"type": "command", "command": command}]})
            status[name] = "added"
        elif all(h.get("command") == command for h in ours):
            status[name] = "unchanged"
        else:
            for h in ours:
                h["command"] = command
            status[name] = "updated"
    return merged, status


def install_settings(path: Path, commands: dict[str, str]) -> dict[str, str]:
    """Merge vb's hooks into a Claude Code settings file (created if missing); written only
    when something changes."""
    from vault_brain.vault.store import atomic_write

    settings: Any = {}
    if path.exists():
        try:
            settings = json.loads(path.read_text(encoding="utf-8") or "{}")
        except ValueError as exc:
            raise VaultBrainError(
                f"{path} is not valid JSON ({getattr(exc, 'msg', exc)}); nothing changed",
                hint="fix the file, or pass --settings to write another one",
            ) from None
        if not isinstance(settings, dict):
            raise VaultBrainError(f"{path} is not a JSON object; nothing changed")
    merged, status = merge_settings(settings, commands)
    if any(s != "unchanged" for s in status.values()):
        atomic_write(path, json.dumps(merged, indent=2, ensure_ascii=False) + "\n")
    return status
