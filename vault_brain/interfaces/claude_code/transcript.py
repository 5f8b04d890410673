"""Claude Code's own transcript, imported into vb's session for that Claude session.

Claude Code's transcript is JSONL: records of `type` user or assistant hold `message.content`
as a string or a list of blocks (text, tool_use, tool_result, thinking, ...); other record
types (summary, system, file-history-snapshot, ...) and malformed lines are skipped and
counted. Each import appends one `import` record with the byte offset reached, so the next
import reads only what is new; a torn last line is left for the next import.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vault_brain.app.memory.vault import Vault
from vault_brain.interfaces.claude_code.payload import HARNESS
from vault_brain.storage.sessions.transcript import append, read_records

# Tool output can be whole files; the vault keeps a bounded excerpt (Claude keeps the rest).
MAX_TOOL_TEXT = 4_000
_COMMAND_WRAPPER = re.compile(r"^\s*<(command-name|command-message|local-command-\w+)>")


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
    result = ImportResult(str(source))
    if not source.is_file():
        result.missing = True
        return result
    with vault.transaction() as tx:
        records = list(read_records(vault.paths.transcript(session)))
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
            append(vault.paths, session, [*kept, marker], tx=tx)
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
