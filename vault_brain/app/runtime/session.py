"""`vb session`: a person talks to an agent that remembers, on the host, with the agent's
workspace tools in a Docker sandbox that holds no key and has no network.

Before: Docker and the model endpoint are checked (one clear line each), a container left
behind by a host that died is removed and its session flushed and committed, MEMORY.md is
regenerated, and pending vault changes are committed.

During (the built-in agent): each line the person types is a turn through the loop stages --
intake (the user message is in the transcript before the model is called), context (MEMORY.md,
retrieved memories, the conversation), the model with tool calling, persist (every tool call,
its result and the reply, as they happen). `/good` `/bad` `/status` `/compact` `/quit` `/help`
are the host's.

After (on /quit, end of input, timeout, Ctrl-C, a model that keeps failing, or a container
that stopped, alike): the outcome signal (task_completed when the agent answered,
session_abandoned when it never did), a flush, the session's commit with a one-line summary
(its writes, credits, access counters and flush, before maintenance, whose passes commit on
their own), due maintenance, and the container removed.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vault_brain.app.runtime.session_tools import (
    SPECS,
    WORKSPACE_TOOLS,
    DockerGone,
    SandboxGone,
    Tools,
)
from vault_brain.domain.errors import LLMError, VaultBrainError
from vault_brain.domain.gate import redact
from vault_brain.domain.text import clip, counted

if TYPE_CHECKING:
    from vault_brain.app.api import MemoryAPI
    from vault_brain.app.memory.vault import Vault
    from vault_brain.storage.llm.client import LLM
    from vault_brain.storage.sandbox.container import Sandbox

MAX_STEPS = 12  # model calls per turn (tool rounds); then the turn ends with a note
MAX_MODEL_FAILURES = 3  # turns in a row the model failed: the session ends

Say = Callable[[str], None]
ReadLine = Callable[[float | None], str | None]  # (seconds left) -> a line, or None at the end

HELP = """\
/good     the last answer helped: its memories gain credit
/bad      the last answer was wrong: its memories lose credit
/status   memories, average credit, last consolidation, this session's id
/compact  consolidate and prune memory now
/quit     end the session (also: end of input, Ctrl-C, --timeout)
/help     this list"""


class ModelMissing(VaultBrainError):
    """No model endpoint is configured."""


def check_model(vault: Vault) -> LLM:
    """The vault's model endpoint, or `ModelMissing` (told before Docker is asked for
    anything: a missing setting is the user's to fix, and no image is built for nothing)."""
    llm = vault.llm()
    if llm is None:
        raise ModelMissing(
            "vb session needs a model: no OpenAI-compatible endpoint is configured",
            hint="set VB_LLM_BASE_URL, VB_LLM_MODEL and VB_LLM_API_KEY (or a local server's "
            "URL and model), or the [llm] table of vb's config file",
        )
    return llm


@dataclass
class Turn:
    """What one turn did, for outcome signals and the per-turn overhead benchmark."""

    reply: str = ""
    tools_ok: int = 0
    retrieved: int = 0
    model_seconds: float = 0.0
    sandbox_seconds: float = 0.0
    """Time the workspace tools ran in the container (`docker exec`)."""
    seconds: float = 0.0


@dataclass
class SessionReport:
    session: str
    reason: str
    turns: int
    answered: bool
    commit: str = ""
    flushed: int = 0
    overheads: list[float] = field(default_factory=list)
    """Host time per turn, the model's and the container's excluded (seconds)."""


class SessionRunner:
    def __init__(
        self, api: MemoryAPI, llm: LLM, sandbox: Sandbox, session: str, say: Say,
        warn: Say | None = None, write: Say | None = None,
    ) -> None:  # fmt: skip
        self.api, self.llm, self.sandbox, self.session, self.say = api, llm, sandbox, session, say
        self.warn = warn or say  # what ends or spoils the session (the CLI's stderr)
        self.write = write  # the reply's text as it streams in (no newline added); None: whole
        self.gone: SandboxGone | None = None
        self.tools = Tools(api, sandbox)
        self.turns = 0
        self.answered = False
        self.overheads: list[float] = []
        self.maintained: list[str] = []  # the passes at its end that changed something

    # -- the REPL ------------------------------------------------------------------------
    def run(self, read_line: ReadLine, timeout: float | None = None) -> SessionReport:
        """Read and answer lines until the session ends; then close it (see module doc)."""
        deadline = time.monotonic() + timeout if timeout else None
        reason = "quit"
        failures = 0
        try:
            while True:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    reason = "timeout"
                    break
                line = read_line(left)
                if line is None:
                    reason = "timeout" if deadline and time.monotonic() >= deadline else "end"
                    break
                line = line.strip()
                if not line:
                    continue
                try:
                    if line.startswith("/"):
                        if not self.command(line):
                            break
                        continue
                    self.turn(line)
                    failures = 0
                except LLMError as exc:
                    failures += 1
                    self.say(f"vb: the model failed: {exc.one_line()}")
                    if failures >= MAX_MODEL_FAILURES:
                        reason = "model failing"
                        break
                except SandboxGone:
                    raise
                except VaultBrainError as exc:  # one bad turn or command: say so, go on
                    self.say(f"vb: {exc.one_line()}")
        except KeyboardInterrupt:
            reason = "interrupted"
        except SandboxGone as exc:
            reason, self.gone = exc.reason, exc
            self.warn(f"vb: {exc.notice()}")
        return self.close(reason)

    def command(self, line: str) -> bool:
        """A host command; False to end the session."""
        name = line.split()[0].lower()
        if name in ("/quit", "/exit"):
            return False
        if name in ("/good", "/bad"):
            result = self.api.feedback(name[1:], self.session)
            moved = counted(len(result.changes), "memory")
            self.say(f"vb: {result.signal}: the credit of {moved} moved")
        elif name == "/status":
            self.say(self.status())
        elif name == "/compact":
            self._commit_before_lifecycle("before /compact")
            done = self.api.compact_memory()
            self.say(
                f"vb: {counted(done.consolidated, 'episode')} consolidated, "
                f"{counted(done.pruned, 'note')} pruned"
            )
        elif name == "/help":
            self.say(HELP)
        else:
            self.say(f"vb: unknown command {name} (/help lists them)")
        return True

    def status(self) -> str:
        from vault_brain.app.memory.apply import last_runs  # lazy: start-up

        notes = self.api.list_notes().notes
        credits = [n.credit for n in notes if n.credit is not None]
        average = sum(credits) / len(credits) if credits else 0.0
        last = last_runs(self.api.vault).get("consolidate") or "never"
        return (
            f"memories: {len(notes)}, average credit {average:.2f}, last consolidation "
            f"{last}, session {self.session}"
        )

    # -- one turn ------------------------------------------------------------------------
    def turn(self, text: str) -> Turn:
        """One turn through the loop stages, tool rounds included."""
        started = time.perf_counter()
        turn = Turn()
        self.sandbox.refresh_view()  # /vault as the vault is now (a failure: no turn)
        self.api.intake(self.session, text)
        self.turns += 1
        for _ in range(MAX_STEPS):
            context = self.api.context(self.session)
            turn.retrieved = max(turn.retrieved, len(context.retrieved))
            asked = time.perf_counter()
            shown: list[str] = []
            reply = self.llm.chat(
                context.messages_openai, tools=SPECS, on_text=self._streamer(shown)
            )
            turn.model_seconds += time.perf_counter() - asked
            if shown:
                self._write("\n")
            if reply.text.strip():
                turn.reply = reply.text
                if not shown:
                    self.say(reply.text)
            if not reply.tool_calls:
                if reply.text.strip():
                    self.api.persist(self.session, [{"type": "assistant", "content": reply.text}])
                    self.answered = True
                break
            self._tool_round(reply, turn)
        else:
            self.say(f"vb: the agent used {MAX_STEPS} model calls without answering; ask again")
        if turn.tools_ok and turn.retrieved:
            with contextlib.suppress(VaultBrainError):
                self.api.feedback("tool-success", self.session)
        turn.seconds = time.perf_counter() - started
        self.overheads.append(turn.seconds - turn.model_seconds - turn.sandbox_seconds)
        return turn

    def _streamer(self, shown: list[str]) -> Callable[[str], None] | None:
        """What gets the reply's text as it streams in: the person's screen (from the first
        piece that is not blank), `shown` keeping what went there."""
        if self.write is None:
            return None

        def piece(text: str) -> None:
            if shown or text.strip():
                shown.append(text)
                self._write(text)

        return piece

    def show_tool(self, name: str, arguments: Any, note: str = "") -> None:
        """One line for a tool call: its name and its first argument, clipped."""
        first = next(iter(arguments.values()), "") if isinstance(arguments, dict) else ""
        self.say(f"  [{name}] {clip(str(first), 100)}{note}")

    def _write(self, text: str) -> None:
        if self.write is not None:
            self.write(text)

    def _tool_round(self, reply: Any, turn: Turn) -> None:
        records: list[dict[str, Any]] = []
        if reply.text.strip():
            records.append({"type": "assistant", "content": reply.text})
        for call in reply.tool_calls:
            records.append(
                {"type": "tool_call", "name": call.name, "arguments": call.arguments,
                 "call_id": call.id}
            )  # fmt: skip
        self.api.persist(self.session, records)  # the calls are recorded before they run
        for call in reply.tool_calls:
            self.show_tool(call.name, call.arguments)
            ran = time.perf_counter()
            outcome = self.tools.call(call.name, call.arguments)
            if call.name in WORKSPACE_TOOLS:
                turn.sandbox_seconds += time.perf_counter() - ran
            turn.tools_ok += outcome.ok
            self.api.persist(
                self.session,
                [{"type": "tool_result", "call_id": call.id, "content": outcome.text}],
            )

    # -- the end -------------------------------------------------------------------------
    def close(self, reason: str) -> SessionReport:
        """Outcome signal, flush, due maintenance, one commit, the container removed: each
        step runs even when an earlier one failed (and says so). The session is one commit
        whose message names it and the maintenance passes that changed something at its end
        (when `commit_on` has `session`; else the passes commit at `lifecycle` as anywhere)."""
        report = SessionReport(self.session, reason, self.turns, self.answered)
        report.overheads = self.overheads
        steps: list[tuple[str, Callable[[], Any]]] = [
            ("outcome", self._outcome),
            ("flush", lambda: setattr(report, "flushed", self._flush())),
            ("maintenance", self._maintain),
            ("commit", lambda: setattr(report, "commit", self._commit(reason))),
        ]
        if not isinstance(self.gone, DockerGone):  # else Docker is away: the next start does it
            steps.append(("container", self.sandbox.remove))
        else:  # (but the view's copies of the notes go now)
            steps.append(("container", self.sandbox.remove_view))
        for name, step in steps:
            try:
                step()
            except (VaultBrainError, OSError) as exc:
                why = exc.one_line() if isinstance(exc, VaultBrainError) else str(exc)
                self.warn(f"vb: {name} after the session failed: {why}")
        return report

    def _commit(self, reason: str) -> str:
        done = self.api.commit(self._summary(reason), "session")
        return done or "not committed (commit_on in STRATEGY.md has no session)"

    def _commit_before_lifecycle(self, why: str) -> None:
        """The session's changes so far in a commit of its own, before a lifecycle pass that
        commits (and would take them into its commit)."""
        if "lifecycle" in self.api.vault.policy.commit_on:
            self.api.commit(f"vb session {self.session}: {why}", "session")

    def _maintain(self) -> None:
        """Due maintenance; its passes go into the session's commit when the session commits
        (a pass that commits would take the session's changes into its own commit)."""
        own = "session" not in self.api.vault.policy.commit_on
        result = self.api.maintain(commit=own)
        self.maintained = [
            f"{run.operation} {len(run.actions)}" for run in result.runs if run.actions
        ]

    def _outcome(self) -> None:
        if not self.turns:
            return  # no transcript: nothing was retrieved, nothing to credit
        self.api.feedback("completed" if self.answered else "abandoned", self.session)

    def _flush(self) -> int:
        return len(self.api.flush(self.session).plan.actions)

    def _summary(self, reason: str) -> str:
        title = ""
        with contextlib.suppress(VaultBrainError):
            for info in self.api.sessions().sessions:
                if info.id == self.session:
                    title = info.title
        words = redact(clip(title, 60))[0] if title else "no messages"
        turns = f"{self.turns} turn{'s' if self.turns != 1 else ''}"
        passes = f"; maintenance: {', '.join(self.maintained)}" if self.maintained else ""
        return f"vb session {self.session}: {words} ({turns}, ended: {reason}){passes}"


def recover(api: MemoryAPI, client: Any, vault: Path, say: Say) -> list[str]:
    """Containers a dead host left behind: removed, and their sessions flushed and committed;
    access counters it had not written yet, written. Returns the sessions recovered."""
    from vault_brain.storage.sandbox.container import leftovers, remove_container  # lazy

    for session in api.recover_counters():
        say(f"vb: wrote the access counters interrupted session {session} had not written")
    recovered = []
    for container_id, session in leftovers(client, vault):
        remove_container(client, container_id)
        from vault_brain.app.runtime.session_host import remove_leftover_folders  # lazy
        from vault_brain.storage.sandbox.view import remove_leftovers

        remove_leftover_folders(session)  # (an OpenCode session's sockets and logs)
        remove_leftovers(session)  # (its view of the vault)
        try:
            api.flush(session)
        except VaultBrainError as exc:
            say(f"vb: could not flush interrupted session {session}: {exc.one_line()}")
        api.commit(f"vb session {session}: recovered after the host stopped", "session")
        say(f"vb: recovered session {session} (its container removed, its transcript flushed)")
        recovered.append(session)
    return recovered
