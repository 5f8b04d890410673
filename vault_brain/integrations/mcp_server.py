"""`vb mcp`: the vault's memory tools for any MCP client, over stdio, on the official SDK.

Only protocol messages reach stdout (the SDK's stdio transport also points fd 1 at stderr
while it serves); logs go to stderr or `--log-file`. The SDK runs each tool on a worker
thread; one lock serialises the calls in this process (a vault's index reader is not
thread-safe) and every call reconciles the index with the files first, so a note edited by
hand between two calls is seen by the next. Writes take the vault lock like every vb writer,
so the server, the CLI, the watcher and sessions can run at once.

Retrievals (memory_retrieve, memory_search) are recorded in the server's session
(`VB_SESSION_ID`, else `mcp-<time>-<pid>`), so memory_feedback credits the memories this
agent actually used. Recording writes front matter (access_count, last_accessed), which the
index must then re-read; to keep reads fast it is done behind the answer: after a second
without calls, before any other tool runs (so feedback, reports and writes see it), and when
the server stops. A `VaultBrainError` comes back as a tool error with its message and hint.
"""

# No `from __future__ import annotations` here: the SDK reads the tools' annotations at
# registration, and plain annotations are what it resolves most reliably.

import contextlib
import datetime as dt
import json
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

from vault_brain import __version__
from vault_brain.core import Vault
from vault_brain.errors import LockedError, NotFoundError, VaultBrainError
from vault_brain.integrations import WarmVault, error_text, file_stamp
from vault_brain.vault.store import now_iso

log = logging.getLogger("vault_brain.mcp")

INSTRUCTIONS = """\
Long-term memory kept as a Markdown vault (vault_brain). Search it before answering
questions about people, projects, preferences or earlier work (memory_search), read a note
in full with memory_retrieve, save durable facts with memory_store (type entity, category
people/projects/preferences) and summaries of what happened as episodes. After a task, report
how it went with memory_feedback (good, bad, completed, abandoned, tool-success): the memories
you retrieved gain or lose credit, and credit decides what is remembered first."""


# --------------------------------------------------------------------------- results


class StoreResult(BaseModel):
    id: str = Field(description="The new note's id (use it with the other tools).")
    path: str = Field(description="Where the note was written, relative to the vault.")


class RetrieveResult(BaseModel):
    id: str
    path: str
    content: str = Field(description="The note's Markdown body.")
    credit_score: float | None = Field(
        description="Stored credit in [0, 1] (null for a hand-written note never scored)."
    )
    metadata: dict[str, Any] = Field(description="Front matter plus id, path, title, type.")


class SearchHit(BaseModel):
    id: str
    name: str = Field(description="The note's title.")
    path: str
    snippet: str
    score: float = Field(description="BM25 blended with effective credit and recency.")


class SearchResult(BaseModel):
    results: list[SearchHit]


class UpdateResult(BaseModel):
    id: str
    updated: bool
    path: str


class DeleteResult(BaseModel):
    id: str
    archived: bool
    path: str = Field(description="The note's new path under archive/.")
    original_path: str = Field(description="Where it was; `vb restore ID` moves it back.")


class CreditEntry(BaseModel):
    id: str
    name: str
    score: float = Field(description="Effective credit: stored credit decayed since last access.")
    credit: float = Field(description="Stored credit.")
    access_count: int
    last_accessed: str | None


class CreditReportResult(BaseModel):
    entries: list[CreditEntry] = Field(description="Highest effective credit first.")
    lowest: list[CreditEntry] = Field(description="Lowest effective credit first.")
    count: int = Field(description="Live notes in the vault.")


class CompactResult(BaseModel):
    consolidated: int = Field(description="Episodes merged into consolidated notes.")
    pruned: int = Field(description="Low-credit notes moved to archive/.")
    created: list[str] = Field(description="Paths of the consolidated notes.")
    archived: list[str] = Field(description="Paths archived by consolidation and pruning.")


class CreditChange(BaseModel):
    id: str
    path: str
    old: float
    new: float


class FeedbackResult(BaseModel):
    session: str
    signal: str
    reward: float
    share: float = Field(description="The reward each retrieved memory received.")
    changes: list[CreditChange]
    skipped: list[dict[str, str]]


# --------------------------------------------------------------------------- the service


@dataclass(frozen=True)
class _Ref:
    """What `record_retrieval` needs of a retrieved note."""

    id: str
    path: str


# Pending retrievals are recorded after this many seconds without calls, or at once when
# this many are pending or the oldest has waited this long.
FLUSH_DELAY = 1.0
MAX_PENDING = 16
MAX_PENDING_SECONDS = 5.0


def default_session() -> str:
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return f"mcp-{stamp}-{os.getpid()}"


def _json_safe(value: Any) -> Any:
    """Front matter as JSON (YAML dates and other scalars become strings)."""
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))


class MemoryService:
    """The tools' behaviour over one vault; raises `VaultBrainError`, knows nothing of MCP."""

    def __init__(
        self,
        root: Path,
        session: str,
        flush_delay: float = FLUSH_DELAY,
        warm: WarmVault | None = None,
    ) -> None:
        from vault_brain.sessions.transcript import check_session_id

        self.root = root
        self.session = check_session_id(session)
        self.flush_delay = flush_delay
        self._lock = threading.Lock()
        self._warm = warm
        self._vault: Vault | None = None
        self._strategy: tuple[int, int] | None = None
        self._pending: list[tuple[str, list[_Ref], dict[str, Any]]] = []
        self._pending_since = 0.0
        self._timer: threading.Timer | None = None

    @contextlib.contextmanager
    def use(self, pending: Literal["skip", "try", "wait"] = "wait") -> Iterator[Vault]:
        """One call at a time, on a vault reconciled with the files (and rebuilt when
        STRATEGY.md changed, so a long-running server follows policy edits). The accesses
        still pending are recorded first: retrievals `skip` that, reports `try` (not waiting
        for another writer), and writes and feedback `wait` for the vault lock like any write."""
        with self._lock:
            vault = self._current_vault()
            if pending != "skip":
                self._record_pending(vault, wait=pending == "wait")
            vault.reconcile(force=True)
            yield vault

    def _current_vault(self) -> Vault:
        if self._warm is not None:
            warm, self._warm = self._warm, None
            # a failed warm-up is retried below, which raises the error if it persists
            with contextlib.suppress(Exception):
                self._vault, self._strategy = warm.result()
        strategy = file_stamp(self.root / "STRATEGY.md")
        if self._vault is None or strategy != self._strategy:
            if self._vault is not None:
                self._record_pending(self._vault, wait=False)
                self._vault.index.close()
            self._vault = Vault.open(self.root)
            self._strategy = strategy
        return self._vault

    # -- access recording, behind the answers ----------------------------------------
    def _defer(self, vault: Vault, query: str, refs: Sequence[Any], tool: str) -> None:
        """Queue a retrieval for recording; a long queue (an agent that never pauses) is
        recorded at once, so little is pending when the server stops."""
        if not refs:
            return
        extra = {"tool": tool, "called": now_iso()}
        self._pending.append((query, [_Ref(r.id, r.path) for r in refs], extra))
        if len(self._pending) == 1:
            self._pending_since = time.monotonic()
        if (
            len(self._pending) >= MAX_PENDING
            or time.monotonic() - self._pending_since >= MAX_PENDING_SECONDS
        ):
            self._record_pending(vault, wait=False)
        else:
            self._schedule()

    def _schedule(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = threading.Timer(self.flush_delay, self.record_pending)
        self._timer.daemon = True
        self._timer.start()

    def record_pending(self, wait: bool = False) -> None:
        """Record the retrievals not recorded yet: from the idle timer, which never waits
        for another writer's lock, and at shutdown (`wait`)."""
        with self._lock:
            if self._vault is not None:
                self._record_pending(self._vault, wait)

    def _record_pending(self, vault: Vault, wait: bool) -> None:
        """Access counters on the notes and retrieval lines in the transcript, then the index
        re-reads those notes once. Without `wait`, a vault locked by another writer keeps
        them pending for a later try instead of delaying the answer."""
        from vault_brain.lifecycle.feedback import record_retrieval
        from vault_brain.vault.store import vault_lock

        if not self._pending:
            return
        if not wait:
            try:
                with vault_lock(vault.paths, timeout=0):
                    pass
            except LockedError:
                self._schedule()
                return
        done, touched = 0, set[str]()
        try:
            for query, refs, extra in self._pending:
                record_retrieval(vault, self.session, query, refs, source="mcp", extra=extra)
                done += 1
                touched.update(r.path for r in refs)
        except LockedError as exc:
            log.warning("access not recorded yet (will retry): %s", exc.message)
            self._schedule()
        except VaultBrainError as exc:  # e.g. a disk error: drop what cannot be written
            log.error("access not recorded: %s", exc.message)
            done = len(self._pending)
        finally:
            del self._pending[:done]
        if touched:
            with contextlib.suppress(VaultBrainError):  # the next reconcile catches up
                vault.index.refresh(sorted(touched))

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self.record_pending(wait=True)

    def _note_rel(self, vault: Vault, ref: str) -> str:
        from vault_brain.index.store import is_ignored_rel
        from vault_brain.vault.memory import resolve

        rel = resolve(vault, ref)
        if is_ignored_rel(rel):
            raise NotFoundError(
                f"{ref!r} is not a memory note",
                hint="give a note id from memory_search, or a note path like "
                "entities/people/alice.md",
            )
        return rel

    # -- tools ------------------------------------------------------------------
    def store(
        self, type_: str, category: str, name: str, content: str, tags: list[str] | None
    ) -> StoreResult:
        from vault_brain.vault import memory

        with self.use() as vault:
            note = memory.add(vault, type_, name, content, category.strip() or None, tags)
        return StoreResult(id=note.id, path=note.path)

    def retrieve(self, ref: str) -> RetrieveResult:
        from vault_brain.vault.notes import load_note

        with self.use(pending="skip") as vault:
            note = load_note(vault.paths.root, self._note_rel(vault, ref))
            self._defer(vault, ref, [_Ref(note.id, note.path)], "memory_retrieve")
        metadata = {
            **_json_safe(note.meta),
            "id": note.id,
            "path": note.path,
            "title": note.title,
            "type": note.type,
            "category": note.category,
            "tags": note.tags,
            "archived": note.archived,
        }
        return RetrieveResult(
            id=note.id,
            path=note.path,
            content=note.body,
            credit_score=note.credit,
            metadata=metadata,
        )

    def search(self, query: str, type_: str | None, limit: int) -> SearchResult:
        from vault_brain.events import emit
        from vault_brain.index.search import Filters

        with self.use(pending="skip") as vault:
            hits = vault.searcher.search(query, limit, Filters(type=type_))
            emit(
                vault.paths,
                "search",
                {"query": query, "results": [h.id for h in hits], "source": "mcp"},
            )
            self._defer(vault, query, hits, "memory_search")
        results = [
            SearchHit(
                id=h.id, name=h.title, path=h.path, snippet=h.snippet, score=round(h.score, 6)
            )
            for h in hits
        ]
        return SearchResult(results=results)

    def update(self, ref: str, content: str) -> UpdateResult:
        from vault_brain.vault import memory

        with self.use() as vault:
            note = memory.update(vault, self._note_rel(vault, ref), content=content)
        return UpdateResult(id=note.id, updated=True, path=note.path)

    def delete(self, ref: str, reason: str | None) -> DeleteResult:
        from vault_brain.vault import memory

        with self.use() as vault:
            rel = self._note_rel(vault, ref)
            note, was = memory.archive(vault, rel, reason or "deleted by an agent (memory_delete)")
        return DeleteResult(id=note.id, archived=True, path=note.path, original_path=was)

    def credit_report(self, top_n: int) -> CreditReportResult:
        from vault_brain.lifecycle.feedback import credit_report

        with self.use(pending="try") as vault:
            data = credit_report(vault, top_n)

        def entry(row: dict[str, Any]) -> CreditEntry:
            return CreditEntry(
                id=row["id"],
                name=row["title"],
                score=row["effective"],
                credit=row["credit"],
                access_count=row["access_count"],
                last_accessed=row["last_accessed"],
            )

        return CreditReportResult(
            entries=[entry(r) for r in data["highest"]],
            lowest=[entry(r) for r in data["lowest"]],
            count=data["count"],
        )

    def compact(self) -> CompactResult:
        from vault_brain.lifecycle.operations import make_plan
        from vault_brain.lifecycle.plan import apply_plan

        result = CompactResult(consolidated=0, pruned=0, created=[], archived=[])
        with self.use() as vault:
            for operation in ("consolidate", "prune"):
                plan = make_plan(vault, operation)
                apply_plan(vault, plan)
                archived = [a.path for a in plan.actions if a.op == "archive"]
                result.created += [a.path for a in plan.actions if a.op == "create"]
                result.archived += archived
                if operation == "consolidate":
                    result.consolidated = len(archived)
                else:
                    result.pruned = len(archived)
        return result

    def feedback(self, signal: str) -> FeedbackResult:
        from vault_brain.lifecycle.feedback import apply_feedback
        from vault_brain.sessions.transcript import transcript_path

        with self.use() as vault:
            if not transcript_path(vault.paths, self.session).is_file():
                raise VaultBrainError(
                    f"nothing was retrieved in session {self.session} yet, "
                    "so there is nothing to credit",
                    hint="call memory_search or memory_retrieve first, then report the outcome",
                )
            result = apply_feedback(vault, self.session, signal)
        return FeedbackResult(
            session=result.session,
            signal=result.signal,
            reward=result.reward,
            share=round(result.share, 6),
            changes=[CreditChange(**c.__dict__) for c in result.changes],
            skipped=result.skipped,
        )


# --------------------------------------------------------------------------- MCP


@contextlib.contextmanager
def _as_tool_errors() -> Iterator[None]:
    """A user-facing error becomes a tool error the model can read; the server keeps going."""
    try:
        yield
    except VaultBrainError as exc:
        raise ToolError(error_text(exc)) from None
    except OSError as exc:
        from vault_brain.vault.store import io_error

        raise ToolError(error_text(io_error(exc, exc.filename or "a file"))) from None


# Parameter types, at module level so the SDK resolves them when it reads the signatures.
NoteType = Annotated[
    Literal["entity", "episode"],
    Field(description="entity: a durable fact (person, project, preference); episode: an event."),
]
Category = Annotated[
    str,
    Field(
        max_length=80,
        description="For entities: people, projects, preferences or your own; episodes may "
        "leave it empty.",
    ),
]
Name = Annotated[
    str, Field(min_length=1, max_length=200, description="Short title; also the file name.")
]
Content = Annotated[str, Field(min_length=1, description="The memory, in Markdown.")]
Tags = Annotated[list[str] | None, Field(description="Tags without '#', e.g. ['work', 'q3'].")]
NoteRef = Annotated[
    str,
    Field(min_length=1, max_length=500, description="A note id (from memory_search) or its path."),
]
Query = Annotated[str, Field(min_length=1, max_length=2000, description="Words to find.")]
SearchType = Annotated[
    Literal["entity", "episode", "note"] | None,
    Field(description="Only this type (note: hand-made notes outside entities/ and episodes/)."),
]
Limit = Annotated[int, Field(ge=1, le=100, description="How many results.")]
TopN = Annotated[int, Field(ge=1, le=100, description="How many from each end.")]
Reason = Annotated[str | None, Field(max_length=300, description="Why; kept in the note.")]
Signal = Annotated[
    Literal["good", "bad", "completed", "abandoned", "tool-success"],
    Field(
        description="good: the memories helped; bad: the user corrected you; completed: the "
        "task succeeded; abandoned: it was given up; tool-success: a tool call worked."
    ),
]

# Retrieve and search change no note's content (they only bump access counters), so clients
# may run them without asking; everything that moves or rewrites notes is marked destructive.
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)


def _writes(destructive: bool, idempotent: bool) -> ToolAnnotations:
    return ToolAnnotations(
        read_only_hint=False,
        destructive_hint=destructive,
        idempotent_hint=idempotent,
        open_world_hint=False,
    )


def build_server(service: MemoryService) -> MCPServer:
    server: MCPServer = MCPServer(
        name="vault-brain", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING"
    )

    def memory_store(
        type: NoteType, category: Category, name: Name, content: Content, tags: Tags = None
    ) -> StoreResult:
        """Save a new memory as a Markdown note (entities/<category>/ or episodes/<month>/)."""
        with _as_tool_errors():
            return service.store(type, category, name, content, tags)

    def memory_retrieve(id: NoteRef) -> RetrieveResult:
        """Read one memory in full: body, credit and front matter. Changes no note's content;
        the access is recorded (within a second) so feedback can credit it."""
        with _as_tool_errors():
            return service.retrieve(id)

    def memory_search(query: Query, type: SearchType = None, limit: Limit = 10) -> SearchResult:
        """Find memories by words; ranking blends BM25 with credit and recency. Changes no
        note's content; the returned ids are recorded (within a second) so feedback can
        credit them."""
        with _as_tool_errors():
            return service.search(query, type, limit)

    def memory_update(id: NoteRef, content: Content) -> UpdateResult:
        """Replace a memory's body; its front matter keeps everything but `updated`."""
        with _as_tool_errors():
            return service.update(id, content)

    def memory_delete(id: NoteRef, reason: Reason = None) -> DeleteResult:
        """Move a memory to archive/ (never a hard delete; `vb restore` brings it back)."""
        with _as_tool_errors():
            return service.delete(id, reason)

    def credit_report(top_n: TopN = 10) -> CreditReportResult:
        """The memories with the highest and the lowest effective credit."""
        with _as_tool_errors():
            return service.credit_report(top_n)

    def memory_compact() -> CompactResult:
        """Consolidate same-day episodes and archive low-credit notes now (both logged)."""
        with _as_tool_errors():
            return service.compact()

    def memory_feedback(signal: Signal) -> FeedbackResult:
        """Report an outcome: the memories retrieved in this session's last turn share its
        reward, and their credit moves up or down."""
        with _as_tool_errors():
            return service.feedback(signal)

    tools: list[tuple[Any, ToolAnnotations]] = [
        (memory_store, _writes(destructive=False, idempotent=False)),
        (memory_retrieve, READ_ONLY),
        (memory_search, READ_ONLY),
        (memory_update, _writes(destructive=True, idempotent=False)),
        (memory_delete, _writes(destructive=True, idempotent=True)),
        (credit_report, READ_ONLY),
        (memory_compact, _writes(destructive=True, idempotent=False)),
        (memory_feedback, _writes(destructive=False, idempotent=False)),
    ]
    for fn, annotations in tools:
        server.add_tool(fn, annotations=annotations, structured_output=True)
    return server


def configure_logging(log_file: Path | None, level: str) -> None:
    """Logs to stderr or a file, never stdout (stdout carries the protocol)."""
    handler: logging.Handler = (
        logging.FileHandler(log_file, encoding="utf-8")
        if log_file is not None
        else logging.StreamHandler(sys.stderr)
    )
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())


def serve(root: Path, session: str | None = None, warm: WarmVault | None = None) -> None:
    """Run the server on stdin/stdout until the client closes the connection. Retrievals
    are recorded in `session`, else in a new `mcp-<time>-<pid>` session."""
    service = MemoryService(root, session or default_session(), warm=warm)
    log.info("vb mcp: vault %s, session %s", root, service.session)

    def stop(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)  # unwinds through `finally`: pending accesses recorded

    signal.signal(signal.SIGTERM, stop)
    try:
        build_server(service).run("stdio")
    finally:
        service.close()
