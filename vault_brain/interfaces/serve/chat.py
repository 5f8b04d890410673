"""Chat Completions requests and replies as the proxy reads and shapes them.

Requests: vb's own fields (`memory_top_k`, `memory_session`, `memory_scope`, `memory_hits`,
or the `X-VB-*` headers) are taken out; the memories go in as one user-role message of quoted
reference data just before the latest user message (never in the system role); nothing else
changes. Replies: the assistant's text and tool calls, from one JSON body or from the stream's
chunks, become transcript records in the `vb loop` format. Every message shape is read: string
content, lists of parts, `content: null` with tool calls, tool results.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from vault_brain.domain.errors import VaultBrainError
from vault_brain.domain.policy.scopes import parse_scopes
from vault_brain.domain.sessions.records import check_session_id

# vb's fields in a request body, and the header each may come as instead
FIELDS = {
    "memory_top_k": "x-vb-top-k",
    "memory_session": "x-vb-session",
    "memory_scope": "x-vb-scope",
    "memory_hits": "x-vb-memory-hits",
}
MAX_TOP_K = 50
_LEADING = ("system", "developer")
_TRUE = ("1", "true", "yes", "on")


@dataclass(frozen=True)
class Options:
    top_k: int | None = None
    session: str | None = None
    scopes: tuple[str, ...] = ()
    hits: bool = False


def take_options(body: dict[str, Any], headers: Mapping[str, str]) -> Options:
    """Remove vb's fields from `body` (a body field wins over its header); a bad value is a
    VaultBrainError naming the field."""
    raw = {name: body.pop(name, None) for name in FIELDS}
    for name, header in FIELDS.items():
        if raw[name] is None and headers.get(header) is not None:
            raw[name] = headers[header]
    top_k = raw["memory_top_k"]
    if top_k is not None:
        try:
            if isinstance(top_k, bool) or float(top_k) != int(top_k):
                raise ValueError
            top_k = int(top_k)
        except (TypeError, ValueError):
            top_k = -1
        if not 0 <= top_k <= MAX_TOP_K:
            given = raw["memory_top_k"]
            raise VaultBrainError(
                f"memory_top_k must be a whole number from 0 to {MAX_TOP_K}, not {given!r}",
                hint="0 adds no memories; leave it out for the vault's retrieval_limit",
            )
    session = raw["memory_session"]
    if session is not None:
        session = check_session_id(str(session))
    scopes = tuple(parse_scopes(raw["memory_scope"], "memory_scope"))
    hits = raw["memory_hits"]
    wants_hits = hits is True or (isinstance(hits, str) and hits.strip().lower() in _TRUE)
    return Options(top_k, session, scopes, wants_hits)


def text_of(content: Any) -> str:
    """A message's text: string content as it is, the text parts of a list (other parts as
    `[image_url]`-style markers), nothing for `null`."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict):
                kind = str(part.get("type") or "")
                text = part.get("text")
                if isinstance(text, str) and kind in ("text", "input_text", ""):
                    parts.append(text)
                elif kind:
                    parts.append(f"[{kind}]")
        return "\n".join(p for p in parts if p)
    return ""


def _messages(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    messages = body.get("messages")
    if not isinstance(messages, list):
        return []
    return [m for m in messages if isinstance(m, dict)]


def user_texts(body: Mapping[str, Any]) -> list[str]:
    return [text_of(m.get("content")) for m in _messages(body) if m.get("role") == "user"]


def with_memory(body: dict[str, Any], message: str) -> None:
    """Insert the memories (a quoted data block, `domain.gate.quoting`) as a user-role message of
    their own just before the latest user message: never in the system role (a memory has
    no authority over the model), next to the turn they were retrieved for, and after the
    history, so the conversation's prefix stays the same from turn to turn (prompt caches
    keep it). Without a user message: after the client's leading system messages."""
    messages = body.get("messages")
    if not message or not isinstance(messages, list):
        return
    users = [n for n, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "user"]
    at = users[-1] if users else 0
    while not users and at < len(messages) and isinstance(messages[at], dict):
        if messages[at].get("role") not in _LEADING:
            break
        at += 1
    body["messages"] = [*messages[:at], {"role": "user", "content": message}, *messages[at:]]


def request_key(session: str, body: Mapping[str, Any]) -> str:
    """Identifies a request (its conversation and messages): a retry is recorded once."""
    canonical = json.dumps(
        [session, body.get("messages")], sort_keys=True, ensure_ascii=False, default=str
    )
    return "serve-" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:24]


def input_records(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The request's new messages (after its last assistant message) as transcript records."""
    messages = _messages(body)
    last = max((n for n, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
    out: list[dict[str, Any]] = []
    for message in messages[last + 1 :]:
        role = message.get("role")
        if role == "user":
            out.append({"type": "user", "content": text_of(message.get("content"))})
        elif role in ("tool", "function"):
            call = message.get("tool_call_id") or message.get("name")
            out.append(
                {
                    "type": "tool_result",
                    "call_id": str(call or ""),
                    "content": text_of(message.get("content")),
                }
            )
    return out


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw) if isinstance(raw, str) and raw.strip() else {}
    except (ValueError, RecursionError):
        return {"raw": raw}
    return value if isinstance(value, dict) else {"value": value}


def reply_records(
    text: str, calls: list[dict[str, Any]], incomplete: bool = False
) -> list[dict[str, Any]]:
    """An assistant reply as records: its text (kept when it has tool calls only if there
    is some), then one `tool_call` per call."""
    out: list[dict[str, Any]] = []
    if text or not calls or incomplete:
        record: dict[str, Any] = {"type": "assistant", "content": text}
        if incomplete:
            record["incomplete"] = True
        out.append(record)
    for call in calls:
        function = call.get("function") or {}
        out.append(
            {
                "type": "tool_call",
                "call_id": str(call.get("id") or ""),
                "name": str(function.get("name") or ""),
                "arguments": _arguments(function.get("arguments")),
            }
        )
    return out


def completion_reply(data: Any) -> tuple[str, list[dict[str, Any]]]:
    """The first choice's text and tool calls of a non-streaming response body."""
    try:
        message = data["choices"][0]["message"]
    except (KeyError, IndexError, TypeError):
        return "", []
    if not isinstance(message, dict):
        return "", []
    calls = message.get("tool_calls")
    return text_of(message.get("content")), [c for c in calls or [] if isinstance(c, dict)]


@dataclass
class StreamReader:
    """Reads a Chat Completions event stream as it passes: the first choice's text and tool
    calls, put together from their deltas. The bytes themselves pass on untouched."""

    text: list[str] = field(default_factory=list)
    calls: dict[int, dict[str, Any]] = field(default_factory=dict)
    done: bool = False
    """The reply is whole: its finish reason or the stream's `[DONE]` has passed."""
    _pending: bytes = b""

    def feed(self, chunk: bytes) -> None:
        self._pending += chunk
        *lines, self._pending = self._pending.split(b"\n")
        for line in lines:
            self._line(line.strip())

    def _line(self, line: bytes) -> None:
        if not line.startswith(b"data:"):
            return
        data = line[5:].strip()
        if data == b"[DONE]":
            self.done = True
            return
        try:
            event = json.loads(data)
            choices = event.get("choices") or []
        except (ValueError, AttributeError, RecursionError):  # (not JSON, or too deep)
            return
        for choice in choices:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            if choice.get("finish_reason"):
                self.done = True
            delta = choice.get("delta") or {}
            if isinstance(delta.get("content"), str):
                self.text.append(delta["content"])
            for part in delta.get("tool_calls") or []:
                if isinstance(part, dict):
                    self._call(part)

    def _call(self, part: dict[str, Any]) -> None:
        index = part.get("index", 0)
        call = self.calls.setdefault(
            index if isinstance(index, int) else 0, {"id": "", "function": {"name": ""}}
        )
        if part.get("id"):
            call["id"] = part["id"]
        function = part.get("function") or {}
        if function.get("name"):
            call["function"]["name"] += function["name"]
        if isinstance(function.get("arguments"), str):
            call["function"]["arguments"] = (
                call["function"].get("arguments", "") + function["arguments"]
            )

    def records(self, incomplete: bool) -> list[dict[str, Any]]:
        calls = [self.calls[i] for i in sorted(self.calls)]
        return reply_records("".join(self.text), calls, incomplete)
