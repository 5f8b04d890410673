"""Claude Code hook payloads: `vb hook <event>` reads the harness's JSON payload on stdin.

Payloads (Claude Code's hooks reference): every event carries `session_id`,
`transcript_path`, `cwd` and `hook_event_name`; SessionStart adds `source`
(startup|resume|clear|compact), UserPromptSubmit `prompt`, PreCompact `trigger` (manual|auto)
and `custom_instructions`, SessionEnd `reason` (clear|logout|prompt_input_exit|other).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vault_brain.domain.errors import VaultBrainError
from vault_brain.domain.sessions.records import check_session_id

HARNESS = "claude-code"
# `vb hook <slug>` for each Claude Code event this integration handles.
EVENTS = {
    "session-start": "SessionStart",
    "user-prompt-submit": "UserPromptSubmit",
    "pre-compact": "PreCompact",
    "session-end": "SessionEnd",
}


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
