"""The built-in agent's tools: memory tools (the memory API, on the host, as the MCP server
offers them) and workspace tools (in the session's container, through `docker exec`).

The memory tools run with the session's grant (`domain.policy.grants.session_grant`), as `vb mcp
--confined` does for OpenCode: the session's scopes (global), no other scope's notes; the
host's own calls on the same API (the REPL's /good and /bad, the outcome signals) keep the
person's full access.

Each tool returns text for the model; a failure is text too (the model reads what went
wrong), except a sandbox that is gone, which ends the session (`SandboxGone`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vault_brain.app.memory.results import to_json
from vault_brain.domain.errors import VaultBrainError
from vault_brain.domain.notes.model import Filters
from vault_brain.domain.policy.grants import session_grant

if TYPE_CHECKING:
    from vault_brain.app.api import MemoryAPI
    from vault_brain.storage.sandbox.container import Sandbox

MAX_RESULT_CHARS = 16_000


class SandboxGone(VaultBrainError):
    """The session's container stopped (Docker stopped, the container crashed or was killed)."""

    reason = "container stopped"

    def notice(self) -> str:
        return f"the sandbox stopped: {self.one_line()}"


class DockerGone(SandboxGone):
    """The Docker daemon stopped answering (stopped, crashed, hung): its containers with it."""

    reason = "Docker stopped"

    def notice(self) -> str:
        return self.one_line()


def gone(exc: Exception) -> SandboxGone:
    """What ends the session when the sandbox failed: Docker stopped, crashed or hung
    (`DockerGone`), or the container itself is gone, stopped or out of memory."""
    from vault_brain.storage.sandbox.engine import EngineGone  # lazy: start-up

    if isinstance(exc, EngineGone):
        return DockerGone(
            f"{exc.message}; the session ends here, saved",
            hint=f"{exc.hint}; the next vb session removes this one's container",
        )
    return SandboxGone(str(getattr(exc, "message", exc)), hint=getattr(exc, "hint", None))


def _fn(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


_STR = {"type": "string"}
SPECS = [
    _fn(
        "memory_search",
        "Search long-term memory (notes about people, projects, preferences, past sessions). "
        "Do this before answering questions about them.",
        {"query": _STR, "limit": {"type": "integer", "minimum": 1, "maximum": 20}},
        ["query"],
    ),
    _fn(
        "memory_retrieve",
        "Read one memory in full by the id a search returned.",
        {"id": _STR},
        ["id"],
    ),
    _fn(
        "memory_store",
        "Store a durable fact as a memory (never secrets, commands or code).",
        {
            "title": _STR,
            "content": _STR,
            "category": {"type": "string", "enum": ["people", "projects", "preferences"]},
        },
        ["title", "content", "category"],
    ),
    _fn(
        "memory_update",
        "Replace the body of a memory (by id) with corrected content.",
        {"id": _STR, "content": _STR},
        ["id", "content"],
    ),
    _fn(
        "run_command",
        "Run a shell command in the workspace (/workspace, no network); returns its exit "
        "code and output.",
        {"command": _STR, "timeout_seconds": {"type": "integer", "minimum": 1, "maximum": 600}},
        ["command"],
    ),
    _fn("read_file", "Read a text file of the workspace.", {"path": _STR}, ["path"]),
    _fn(
        "write_file",
        "Write a text file in the workspace (folders are created).",
        {"path": _STR, "content": _STR},
        ["path", "content"],
    ),
    _fn("list_files", "List a folder of the workspace.", {"path": _STR}, []),
]
WORKSPACE_TOOLS = frozenset({"run_command", "read_file", "write_file", "list_files"})
WRITING_TOOLS = frozenset({"memory_store", "memory_update"})


@dataclass
class Outcome:
    text: str
    ok: bool


def _json(result: Any) -> str:
    return json.dumps(to_json(result), ensure_ascii=False)


class Tools:
    def __init__(self, api: MemoryAPI, sandbox: Sandbox) -> None:
        self.api, self.sandbox = api, sandbox
        self.stale_view = False  # a memory tool wrote a note since /vault was refreshed
        self.grant = session_grant(str(api.session), ())  # the agent's: its session's scopes
        self._memory: dict[str, Callable[[dict[str, Any]], str]] = {
            "memory_search": lambda a: _json(
                self.api.search(str(a["query"]), int(a.get("limit") or 5), Filters())
            ),
            "memory_retrieve": lambda a: _json(self.api.retrieve(str(a["id"]))),
            "memory_store": lambda a: _json(
                self.api.add("entity", str(a["title"]), str(a["content"]), a.get("category"))
            ),
            "memory_update": lambda a: _json(
                self.api.update(str(a["id"]), content=str(a["content"]))
            ),
        }

    def call(self, name: str, arguments: dict[str, Any]) -> Outcome:
        """Run one tool call; what it returned (or why it failed), for the model."""
        from vault_brain.storage.sandbox.engine import SandboxError, WorkspaceError  # lazy

        try:
            if name in self._memory:
                with self._as_agent():
                    text = self._memory[name](arguments)
                self.stale_view |= name in WRITING_TOOLS
                return Outcome(_clip(text), True)
            if name in WORKSPACE_TOOLS:
                if self.stale_view:  # the note just stored is in /vault for this command
                    self.sandbox.refresh_view()
                    self.stale_view = False
                return self._workspace(name, arguments)
            return Outcome(f"error: no tool named {name!r}", False)
        except WorkspaceError as exc:  # the agent's mistake (no such file, outside /workspace)
            return Outcome(f"error: {exc.one_line()}", False)
        except SandboxError as exc:  # Docker or the sandbox itself: the session ends
            raise gone(exc) from None
        except VaultBrainError as exc:
            return Outcome(f"error: {exc.one_line()}", False)
        except (KeyError, TypeError, ValueError) as exc:
            return Outcome(f"error: bad arguments for {name}: {exc}", False)

    @contextmanager
    def _as_agent(self) -> Iterator[None]:
        """The API checks the agent's grant during one memory tool call (on the session's
        one thread: the host's calls come between tool calls, never during one)."""
        saved, self.api.grant = self.api.grant, self.grant
        try:
            yield
        finally:
            self.api.grant = saved

    def _workspace(self, name: str, a: dict[str, Any]) -> Outcome:
        box = self.sandbox
        if name == "run_command":
            timeout = float(a.get("timeout_seconds") or 60)
            run = box.run_shell(str(a["command"]), timeout=timeout)
            note = " (timed out)" if run.timed_out else ""
            return Outcome(
                _clip(f"exit code {run.exit_code}{note}\n{run.output}"), run.exit_code == 0
            )
        if name == "read_file":
            return Outcome(_clip(box.read_file(str(a["path"]))), True)
        if name == "write_file":
            box.write_file(str(a["path"]), str(a["content"]))
            return Outcome(f"wrote {a['path']}", True)
        return Outcome("\n".join(box.list_dir(str(a.get("path") or "."))) or "(empty)", True)


def _clip(text: str) -> str:
    if len(text) <= MAX_RESULT_CHARS:
        return text
    return text[:MAX_RESULT_CHARS] + f"\n[... {len(text) - MAX_RESULT_CHARS} more characters]"
