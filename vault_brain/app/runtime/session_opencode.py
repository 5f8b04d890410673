"""`vb session --agent opencode`: OpenCode in the sandbox, driven turn by turn from the host.

Each line the person types (that is not one of vb's commands) is one `opencode run` in the
container: `--format json` (its events, read as they come: text is shown, tool calls are
listed and counted), `--session` (the conversation goes on from the last turn) and `--auto`
(OpenCode asks permission for every edit and command; the sandbox, with no network, no key,
only the session's read-only view of the vault at /vault -- refreshed before each turn -- and
host services confined to the session, is what makes approving them safe). Why `opencode run`
per turn and not its terminal UI: the host keeps the REPL, so `/good` `/bad` `/status`
`/compact` `/quit` stay vb's, and the events say what the agent did, for the outcome signals.
(`opencode run --attach` to an `opencode serve` in the container would save OpenCode's
start-up each turn, but it subscribes to events after it sends the prompt: a reply that
comes fast is missed and the turn shows nothing.)

OpenCode's model is `vb serve` on the host and its memory tools are `vb mcp` on the host, both
through sockets (`session_host`); its transcript is the one `vb serve` writes for the session,
so the end of the session (outcome, flush, maintenance, commit) is the built-in agent's.
"""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vault_brain.app.runtime.session import Say, SessionReport, SessionRunner, Turn
from vault_brain.app.runtime.session_host import MCP_SOCKET, MOUNTED, HostServices
from vault_brain.app.runtime.session_tools import gone
from vault_brain.domain.errors import LLMError, VaultBrainError
from vault_brain.domain.text import clip
from vault_brain.storage.sessions.transcript import read_records

if TYPE_CHECKING:
    from vault_brain.app.api import MemoryAPI
    from vault_brain.storage.llm.client import LLM
    from vault_brain.storage.sandbox.container import Sandbox

PORT = 4000  # inside the container: the bridge's port for the model socket
TURN_TIMEOUT = 1800.0  # seconds one turn may run (tool calls included)
BRIDGE = "/usr/local/lib/vb/bridge.py"
PROVIDER = "vb"
MEMORY_INSTRUCTIONS = "/vault/MEMORY.md"
MEMORY = "2g"  # OpenCode (a Bun program) with its tools needs more than the built-in sandbox


def container_command() -> list[str]:
    """The container's main process: the bridge from 127.0.0.1:PORT to `vb serve`."""
    return ["python3", "-I", "-S", BRIDGE, "tcp", str(PORT), f"{MOUNTED}/model.sock"]


def opencode_config(model: str, session: str) -> dict[str, Any]:
    """OpenCode's configuration for the session (at /run/vb/opencode.json): no key anywhere;
    the provider's only header names the session for `vb serve`."""
    return {
        "$schema": "https://opencode.ai/config.json",
        "model": f"{PROVIDER}/{model}",
        "small_model": f"{PROVIDER}/{model}",
        "autoupdate": False,
        "share": "disabled",
        "instructions": [MEMORY_INSTRUCTIONS],
        # titles would be model calls of their own, recorded in the session's transcript
        "agent": {"title": {"disable": True}},
        "permission": {"webfetch": "deny"},
        "provider": {
            PROVIDER: {
                "npm": "@ai-sdk/openai-compatible",
                "name": "vault_brain (vb serve on the host)",
                "options": {
                    "baseURL": f"http://127.0.0.1:{PORT}/v1",
                    "headers": {"X-VB-Session": session},
                },
                "models": {model: {"name": model}},
            }
        },
        "mcp": {
            "vb": {
                "type": "local",
                "command": ["python3", "-I", "-S", BRIDGE, "stdio", f"{MOUNTED}/{MCP_SOCKET}"],
                "enabled": True,
            }
        },
    }


class OpenCodeRunner(SessionRunner):
    def __init__(
        self,
        api: MemoryAPI,
        llm: LLM,
        sandbox: Sandbox,
        session: str,
        services: HostServices,
        say: Say,
        warn: Say | None = None,
    ) -> None:
        super().__init__(api, llm, sandbox, session, say, warn=warn)
        self.services = services
        self.opencode_session: str | None = None
        self._pending: tuple[str, int] | None = None  # the last line, and where its turn began

    def _record_pending(self) -> None:
        """The last line typed is in the transcript: `vb serve` writes it with the model's
        reply; a turn that never reached the model, or whose reply never came (OpenCode or
        the container died), has it written here instead. Checked when the next turn starts
        and at the end, once `vb serve` has written what it held."""
        if self._pending is None:
            return
        text, before = self._pending
        self._pending = None
        records = list(read_records(self.api.vault.paths.transcript(self.session)))[before:]
        if not any(r.get("type") == "user" and text in str(r.get("content")) for r in records):
            self.api.intake(self.session, text)

    def turn(self, text: str) -> Turn:
        started = time.perf_counter()
        turn = Turn()
        self.sandbox.refresh_view()  # /vault as the vault is now (a failure: no turn)
        self.turns += 1
        if not self.services.serve_alive():
            self.warn("vb: vb serve (the model provider) had stopped: starting it again")
            self.services.start_serve()
        self._record_pending()
        transcript = self.api.vault.paths.transcript(self.session)
        before = len(list(read_records(transcript)))
        self._pending = (text, before)
        argv = ["opencode", "run", "--format", "json", "--auto"]
        if self.opencode_session:
            argv += ["--session", self.opencode_session]
        # `opencode run` joins its arguments with spaces, quoting each that holds one: words
        # (split at spaces only) come back as typed
        stream = self.sandbox.stream([*argv, "--", *text.split(" ")], timeout=TURN_TIMEOUT)
        ran = time.perf_counter()
        steps, errors = 0, []
        try:
            for line in stream.lines():
                event = _event(line)
                if event is None:
                    continue
                self.opencode_session = event.get("sessionID") or self.opencode_session
                kind, part = event.get("type"), event.get("part") or {}
                if kind == "step_start":
                    steps += 1
                elif kind == "text" and str(part.get("text") or "").strip():
                    turn.reply += ("\n" if turn.reply else "") + str(part["text"])
                    self.say(str(part["text"]))
                elif kind == "tool_use":
                    turn.tools_ok += self._tool(part)
                elif kind == "error":
                    errors.append(_error_text(event.get("error")))
            if not turn.reply.strip():  # nothing said: was it the container that ended?
                self.sandbox.check()
        except VaultBrainError as exc:
            if _is_sandbox(exc):
                raise gone(exc) from None
            raise
        turn.sandbox_seconds = time.perf_counter() - ran  # OpenCode's own time, model included
        if not steps:  # no model call: vb serve never saw the line
            self._record_pending()
        if turn.reply.strip():
            self.answered = True
        new = list(read_records(transcript))[before:]
        turn.retrieved = sum(1 for r in new if r.get("type") == "retrieval")
        if turn.tools_ok and turn.retrieved:
            with contextlib.suppress(VaultBrainError):
                self.api.feedback("tool-success", self.session)
        turn.seconds = time.perf_counter() - started
        self.overheads.append(turn.seconds - turn.sandbox_seconds)
        if errors:
            raise LLMError(f"OpenCode: {errors[-1]}")
        if stream.exit_code != 0 and not turn.reply:
            detail = clip(" ".join(stream.stderr.split()[-40:]), 200) or "no output"
            raise VaultBrainError(
                f"OpenCode ended with exit code {stream.exit_code}: {detail}",
                hint="ask again; /quit ends the session",
            )
        return turn

    def _tool(self, part: dict[str, Any]) -> bool:
        state = part.get("state") or {}
        status = str(state.get("status") or "")
        name = str(part.get("tool") or "tool")
        note = "" if status == "completed" else f" ({status or 'unknown'})"
        self.show_tool(name, state.get("input"), note)
        return status == "completed"

    def close(self, reason: str) -> SessionReport:
        """The services stop first: vb serve records what it still holds before the flush."""
        try:
            self.services.stop()
            self._record_pending()
        except (OSError, VaultBrainError) as exc:
            self.warn(f"vb: stopping vb serve and the memory tools failed: {exc}")
        return super().close(reason)


def _event(line: str) -> dict[str, Any] | None:
    try:
        event = json.loads(line)
    except ValueError:
        return None
    return event if isinstance(event, dict) else None


def _error_text(error: Any) -> str:
    if isinstance(error, dict):
        data = error.get("data")
        data = data if isinstance(data, dict) else {}
        return clip(str(data.get("message") or error.get("name") or error), 200)
    return clip(str(error), 200)


def _is_sandbox(exc: VaultBrainError) -> bool:
    from vault_brain.storage.sandbox.engine import SandboxError, WorkspaceError  # lazy: start-up

    return isinstance(exc, SandboxError) and not isinstance(exc, WorkspaceError)


def start_opencode(
    api: MemoryAPI,
    llm: LLM,
    client: Any,
    image: str,
    *,
    workspace: Path,
    policy_rw: bool,
    say: Say,
    warn: Say,
) -> OpenCodeRunner:
    """The host services, OpenCode's configuration and the container, started together (and
    stopped together when one of them fails)."""
    from vault_brain.storage.sandbox.container import Sandbox  # lazy: start-up
    from vault_brain.storage.sandbox.mounts import prepare_workspace

    session = str(api.session)
    services = HostServices(api.vault.root, session, dict(api.vault.env.values), warn)
    config = services.sockets / "opencode.json"
    config.write_text(json.dumps(opencode_config(llm.model, session), indent=2) + "\n")
    config.chmod(0o644)
    sandbox = None
    try:
        uid, _, gid = prepare_workspace(workspace).partition(":")  # the container's user
        services.start((int(uid), int(gid)))
        sandbox = Sandbox.start(
            client, image, workspace=workspace, vault=api.vault.root, session=session,
            policy_rw=policy_rw, command=container_command(), memory=MEMORY,
            read_only={MOUNTED: services.sockets},
            private_paths=tuple(api.vault.policy.private_paths),
        )  # fmt: skip
    except BaseException:
        services.stop()
        if sandbox is not None:
            sandbox.remove()
        raise
    return OpenCodeRunner(api, llm, sandbox, session, services, say, warn)
