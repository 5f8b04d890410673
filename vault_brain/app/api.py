"""The memory API: one typed entry point for every interface.

The CLI, the MCP server, the Claude Code hooks and the proxy (`app.runtime.proxy.ProxyAPI`, with
its few methods of its own) call these methods; none holds business logic of its own.

Two ways to hold it:
- `MemoryAPI.open(...)`: one command. The index is reconciled once, on first use.
- `MemoryAPI.live(...)`: a long-running process. Calls are serialised, each reconciles the
  index with the files first (so hand edits are seen), a change to STRATEGY.md reloads the
  policy, and agent retrievals are recorded behind the answers (`access.AccessRecorder`).

With a `session`, the API acts for an agent: searches and retrievals are recorded in that
session's transcript and bump the notes' access counters, so feedback can credit them.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from vault_brain.app.knowledge.api import Knowledge, check_sources
from vault_brain.app.lifecycle.api import PolicyOps
from vault_brain.app.memory import notes
from vault_brain.app.memory.api_part import Keeper, Pending
from vault_brain.app.memory.commits import commit_write
from vault_brain.app.memory.grants import Access
from vault_brain.app.memory.guard import PERSON, admit, for_agent, written_by
from vault_brain.app.memory.results import (
    BatchLine,
    IndexResult,
    InitResult,
    MoveResult,
    NoteList,
    NoteResult,
    NoteRow,
    NoteView,
    SearchHit,
    SearchResult,
    SettingRow,
    StrategyResult,
)
from vault_brain.app.memory.vault import Vault
from vault_brain.app.sessions.api import SessionsAndTasks
from vault_brain.app.sync.api import GitOps
from vault_brain.domain.clock import now_iso
from vault_brain.domain.errors import ExistsError, LockedError, VaultBrainError
from vault_brain.domain.notes.model import Filters
from vault_brain.domain.policy.grants import Grant
from vault_brain.domain.policy.scopes import GLOBAL, Agent, check_scope
from vault_brain.domain.policy.settings import SETTINGS
from vault_brain.domain.sessions.records import check_session_id
from vault_brain.domain.text import slugify
from vault_brain.storage.env import Environment
from vault_brain.storage.events import emit
from vault_brain.storage.files import stamp as file_stamp
from vault_brain.storage.index.store import Progress
from vault_brain.storage.notes.read import load_note
from vault_brain.storage.paths import episode_folder

if TYPE_CHECKING:
    from vault_brain.app.lifecycle.plans import CompactResult, MaintainResult
    from vault_brain.app.memory.access import AccessRecorder
    from vault_brain.app.memory.apply import PlanResult
    from vault_brain.app.memory.credit import CreditReport, FeedbackResult
    from vault_brain.app.memory.memory_file import MemoryFileResult
    from vault_brain.app.status import StatusReport
    from vault_brain.domain.policy.plan import Plan
    from vault_brain.storage.index.search import Hit

# The modules behind the less frequent operations (credit, lifecycle, sessions, tasks,
# status, git, the watcher, access recording) are imported inside the methods that use them:
# a search or an add, which agents run on every turn, does not pay for them at start-up.


class MemoryAPI(Access, SessionsAndTasks, Knowledge, GitOps, PolicyOps):
    def __init__(
        self,
        vault: Vault,
        *,
        session: str | None = None,
        source: str = "cli",
        live: bool = False,
        command: bool = False,
    ) -> None:
        self._vault = vault
        self.session = check_session_id(session) if session is not None else None
        self.source = source
        self.command = command
        """A command a person runs at the terminal (the CLI): each of its note writes is
        committed at the `command` moment (`app.memory.commits`)."""
        self.agent: Agent | None = None  # set by `act_as`: the scopes it may read and write
        # set by `confine`: what the caller may do (`domain.policy.grants`)
        self.grant: Grant = self._grant_of(source)  # (an agent never reads private notes)
        self.is_live = live
        self._lock = threading.Lock()
        self._strategy = file_stamp(vault.paths.strategy)
        self.access: AccessRecorder | None = None
        self.keeper: Keeper | None = None
        """Set by `app.runtime.index_keeper.keep_index`: a watcher keeps the index current."""
        self.answers = "in-process"
        """Which path a search by this API is (`warm`: `vb watch`'s socket, `app.runtime.warm`);
        written with each search event, so `vb status` can tell which answered the last."""
        if live and self.session is not None:
            # lazy: long-lived processes only
            from vault_brain.app.memory.access import AccessRecorder

            # (each line in the transcript at once, the counters behind the answers)
            self.access = AccessRecorder(self.session, self._lock, lambda: self._vault, source)
            vault.index.merge_later = True  # (its small commits merge when it is quiet)

    @classmethod
    def open(
        cls,
        path: str | Path | None = None,
        env: Environment | None = None,
        *,
        session: str | None = None,
        source: str = "cli",
        command: bool = False,
    ) -> MemoryAPI:
        return cls(Vault.open(path, env), session=session, source=source, command=command)

    @classmethod
    def live(
        cls, vault: Vault, session: str | None, source: str, flush_delay: float | None = None
    ) -> MemoryAPI:
        api = cls(vault, session=session, source=source, live=True)
        if api.access is not None and flush_delay is not None:
            api.access.flush_delay = flush_delay
        return api

    @property
    def vault(self) -> Vault:
        return self._vault

    # -- the vault for one call -----------------------------------------------------------
    @contextlib.contextmanager
    def _use(self, pending: Pending = "wait", operation: str | None = None) -> Iterator[Vault]:
        """The vault for one call. Live: one call at a time, the policy reloaded when
        STRATEGY.md changed, retrievals still pending recorded first (`skip` for reads that
        do not depend on them, `try` for reports that should not wait on another writer,
        `wait` for writes and what reads credit, `lines` for what needs only their lines in
        the transcript: the loop's stages and feedback), and the index reconciled with the
        files. A write names its `operation` (what it did, to which note: "add: Ada"):
        committed after it when `commit_on` says so (`commits.commit_write`)."""
        if not self.is_live:
            yield self._vault
            self._commit_operation(operation)
            return
        with self._lock:
            self._reload_if_policy_changed()
            access = self.access
            if access is not None and pending not in ("skip", "lines"):
                access.record(self._vault, wait=pending != "try")
            self._reconcile(self._vault)
            yield self._vault
            self._commit_operation(operation)

    def _commit_operation(self, operation: str | None) -> None:
        if operation is not None:
            commit_write(self._vault, operation, self.source, self.command)

    def _reload_if_policy_changed(self) -> None:
        stamp = file_stamp(self._vault.paths.strategy)
        if stamp != self._strategy:
            old = self._vault
            if self.access is not None:
                self.access.record(old, wait=False)
            old.index.close()
            self._vault = old.reopened()
            self._strategy = stamp

    def _reconcile(self, vault: Vault) -> None:
        """Live: the index is brought up to date before each call, by the index keeper when
        there is one (`keep_index`), else by a walk over the files (`app.runtime.proxy` throttles
        it)."""
        if self.keeper is not None:
            self.keeper.settle()
        else:
            vault.reconcile(force=True)

    def warm_up(self) -> None:
        """Reconcile and open the searcher, and compile the gate's patterns, now (a
        server does this while its client connects)."""
        from vault_brain.domain.gate import judge

        with self._use("skip") as vault:
            vault.searcher.search("warm up", 1)
        judge("warm up: ignore nothing, `ls -l`\n- item")

    def close(self) -> None:
        """Record every retrieval still pending (waits for the vault lock); stop the keeper,
        once it has indexed every write made before (this API's own leave it to it)."""
        if self.access is not None:
            self.access.close()
        if self.keeper is not None:
            with contextlib.suppress(VaultBrainError, OSError):
                self.keeper.settle()
            self.keeper.close()

    def _memory_rel(self, vault: Vault, ref: str) -> str:
        """The path of a memory note (not STRATEGY.md, MEMORY.md, a transcript or a log)."""
        return notes.resolve(vault, ref, memory_only=True)

    def _record(self, vault: Vault, query: str, hits: list[Any], tool: str) -> None:
        """An agent retrieval: queued (live) or recorded now (one command)."""
        if self.session is None or not hits:
            return
        if self.access is not None:
            self.access.defer(vault, query, hits, tool)
        else:
            from vault_brain.app.memory.credit import record_retrieval  # lazy: agent searches only

            record_retrieval(vault, self.session, query, hits, source=self.source)

    # -- notes ------------------------------------------------------------------------------
    def add(
        self,
        type_: str,
        name: str,
        content: str,
        category: str | None = None,
        tags: list[str] | None = None,
        pinned: bool = False,
        *,
        allow_secret: bool = False,
        scope: str | None = None,
    ) -> NoteResult:
        """A new memory; what an agent stores passes the gate (see `guard.admit`). `scope`:
        whose memory it is (default global; an agent's own scope for a project agent)."""
        type_ = notes.check_new(type_, name, content, category)
        if scope:
            scope = check_scope(scope)
        elif self.grant.default_scope() is not None:
            scope = self.grant.default_scope()
        elif self.agent is not None:
            scope = self.agent.default_scope()
        self.grant.check_write(scope or GLOBAL)
        if self.agent is not None:
            self.agent.check_write(scope or GLOBAL)
        with self._use(operation=f"add: {name}") as vault:
            warnings = admit(
                vault,
                content,
                title=name,
                source=self.source,
                where="add",
                allow_secret=allow_secret,
            )
            self._check_name_free(vault, type_, name, category)
            note = notes.add(
                vault, type_, name, content, category, tags, pinned, scope or GLOBAL,
                private=allow_secret,  # (`private: true`: never in the session sandbox's /vault)
                source=written_by(self.source),
            )  # fmt: skip
        return NoteResult(NoteView.of(note), warnings)

    def _check_name_free(self, vault: Vault, type_: str, name: str, category: str | None) -> None:
        """A new memory does not take the name of a live note: a second note for one thing
        would split what is known of it, so the caller is told which note has the name. A
        note the caller may not read is never named (the new note gets the next free name)."""
        cat = slugify(category or "general")
        folder = f"entities/{cat}" if type_ == "entity" else episode_folder(vault.paths, now_iso())
        slug = slugify(name)
        rel: str | None = f"{folder}/{slug}.md"
        if not vault.paths.note(str(rel)).is_file():  # the id may be held by a moved note
            with contextlib.suppress(LockedError):
                vault.reconcile(timeout=0)
            note_id = f"{type_}-{cat}-{slug}"
            stored = (
                vault.index.stored_by_id(note_id, include_archive=False)
                if vault.index.exists()
                else None
            )
            rel = str(stored["path"]) if stored is not None else None
        if rel is None or not vault.paths.note(rel).is_file():
            return
        taken = load_note(vault.paths.root, rel)
        if taken.archived or not self._may_read(taken.scope, taken.private):
            return
        change = f"`vb update {taken.id}`" if self.source == PERSON else "memory_update"
        raise ExistsError(
            f"a note named {name.strip()!r} already exists: {taken.id} ({taken.path})",
            hint=f"change that note with {change}, or store this one under a name that tells "
            "the two apart",
        )

    def show(self, ref: str) -> NoteResult:
        with self._use("skip") as vault:
            found: list[str] = []  # (an old id of a renamed note: where it is now)
            return NoteResult(NoteView.of(notes.show(vault, ref, found)), notices=found)

    def retrieve(self, ref: str) -> NoteResult:
        """Read one memory in full; an agent's retrieval is recorded for credit, and what the
        agent is shown passes the gate."""
        with self._use("skip") as vault:
            rel = self._memory_rel(vault, ref)
            note = load_note(vault.paths.root, rel)
            self.grant.check_read(note.scope, ref, rel, self._private(vault, note))
            if self.agent is not None:
                from vault_brain.app.memory.agents import check_readable

                check_readable(self.agent, note.scope, ref)
            self._record(vault, ref, [note], "memory_retrieve")
            view = NoteView.of(note)
            if self.source != PERSON:
                view.body = for_agent(vault, view.body, "memory_retrieve", note.source)
                view.title = for_agent(
                    vault, view.title, "memory_retrieve", note.source, title=True
                )
        return NoteResult(view)

    def update(
        self,
        ref: str,
        content: str | None = None,
        tags: list[str] | None = None,
        pinned: bool | None = None,
        append: bool = False,
        *,
        allow_secret: bool = False,
    ) -> NoteResult:
        with self._use(operation=f"update: {ref}") as vault:
            rel = self._memory_rel(vault, ref)
            self._check_write(vault, rel, ref)
            if PurePosixPath(rel).parts[0] == "archive":  # (edited there, it stays forgotten)
                raise VaultBrainError(
                    f"{ref} is archived ({rel}): an archived note is not updated",
                    hint=f"restore it first (`vb restore {ref}`), or store a new memory",
                )
            warnings = []
            if content is not None:
                warnings = admit(
                    vault, content, source=self.source, where="update", allow_secret=allow_secret
                )
            private = allow_secret and content is not None
            note = notes.update(
                vault, rel, content, tags, pinned, append, private=private,
                source=written_by(self.source),
            )  # fmt: skip
        return NoteResult(NoteView.of(note), warnings)

    def archive(self, ref: str, reason: str) -> MoveResult:
        with self._use(operation=f"delete: {ref}") as vault:
            rel = self._memory_rel(vault, ref)
            self._check_write(vault, rel, ref)
            note, was = notes.archive(vault, rel, reason)
        return MoveResult(note.id, note.path, was, archived=True)

    def restore(self, ref: str) -> MoveResult:
        with self._use(operation=f"restore: {ref}") as vault:
            note, was = notes.restore(vault, ref)
        return MoveResult(note.id, note.path, was, archived=False)

    def list_notes(self, filters: Filters | None = None) -> NoteList:
        filters = self._readable(filters)
        with self._use("skip") as vault:
            rows = notes.list_rows(vault, filters)
        return NoteList([NoteRow.of(r) for r in rows], len(rows))

    # -- search -----------------------------------------------------------------------------
    def _hits(
        self, vault: Vault, query: str, k: int, filters: Filters, explain: bool = False
    ) -> list[Hit]:
        vault.reconcile()
        hits = vault.searcher.search(query, k, filters)
        if explain:
            vault.searcher.explain(query, hits)
        return hits

    def _shown(self, hits: list[Hit]) -> list[SearchHit]:
        """As the person at the CLI sees them, unless a session makes this an agent's."""
        person = self.source == PERSON and self.session is None
        return [SearchHit.of(h, person=person) for h in hits]

    def search(
        self,
        query: str,
        k: int = 10,
        filters: Filters | None = None,
        sources: str | Sequence[str] | None = None,
        explain: bool = False,
    ) -> SearchResult:
        """Notes for `query`, best first; an agent's search is recorded for credit. `sources`
        (default: `search_in` in STRATEGY.md) adds extracted items, project sources and
        transcripts, fused by rank (filters apply to notes); `explain` takes each note's
        score apart (`SearchHit.explain`)."""
        if k < 1:
            raise VaultBrainError(f"limit must be at least 1, not {k}", hint="pass -k 10")
        filters = self._readable(filters)
        with self._use("skip") as vault:
            where = check_sources(vault.policy.search_in if sources is None else sources)
            hits = self._hits(vault, query, k, filters, explain) if "memory" in where else []
            found = self._knowledge(vault, query, k, where, self._shown(hits))
            emit(
                vault.paths,
                "search",
                {
                    "query": query,
                    "results": [h.id for h in found],
                    "source": self.source,
                    "answered": self.answers,
                },
            )
            shown = {h.id for h in found if h.source == "memory"}
            self._record(vault, query, [h for h in hits if h.id in shown], "memory_search")
        return SearchResult(query, found)

    def search_batch(
        self, queries: Iterable[dict[str, Any]], k: int = 10, filters: Filters | None = None
    ) -> Iterator[BatchLine]:
        """Many queries in one process (benchmarks, agents): one line per query, in order."""
        filters = self._readable(filters)
        with self._use("skip") as vault:
            for item in queries:
                hits = self._hits(vault, item["query"], k, filters)
                yield BatchLine(item.get("id"), item["query"], self._shown(hits))

    # -- credit ------------------------------------------------------------------------------
    def feedback(self, signal: str, session: str | None = None) -> FeedbackResult:
        self.grant.check_feedback()
        session = self.grant.bound_session(session)
        if self.agent is not None:
            self.agent.check_write(self.agent.own)  # a skill agent changes no credit
        session = session or self.session
        if session is None:
            raise VaultBrainError(
                "feedback needs the session whose last turn it judges", hint="pass --session ID"
            )
        with self._use("lines", operation=f"feedback {signal}: {session}") as vault:
            from vault_brain.app.memory.credit import apply_feedback  # lazy: start-up

            return apply_feedback(vault, session, signal)

    def credit_report(self, top: int = 10) -> CreditReport:
        with self._use("try") as vault:
            from vault_brain.app.memory.credit import credit_report  # lazy: start-up

            return credit_report(vault, top, self._may_read if self._restricted() else None)

    # -- lifecycle ---------------------------------------------------------------------------
    def plan(
        self, operation: str, older_than_days: float | None = None, type_: str = "episode"
    ) -> Plan:
        from vault_brain.app.lifecycle import plans as lifecycle  # lazy: start-up

        with self._use() as vault:
            if operation == "prune" and older_than_days is not None:
                return lifecycle.plan_prune(vault, older_than_days=older_than_days, type_=type_)
            return lifecycle.make_plan(vault, operation)

    def run(self, plan: Plan, dry_run: bool) -> PlanResult:
        from vault_brain.app.lifecycle import plans as lifecycle  # lazy: start-up

        with self._use() as vault:
            return lifecycle.run_plan(vault, plan, dry_run)

    def maintain(self, dry_run: bool = False, commit: bool = True) -> MaintainResult:
        """Whatever consolidation, promotion and pruning is due; `commit` False leaves the
        passes' commits to the caller (a session's end commits them with the session)."""
        from vault_brain.app.lifecycle import plans as lifecycle  # lazy: start-up

        with self._use() as vault:
            return lifecycle.maintain(vault, dry_run=dry_run, commit=commit)

    def compact_memory(self) -> CompactResult:
        from vault_brain.app.lifecycle import plans as lifecycle  # lazy: start-up

        self.grant.check_vault_wide("compact memory")
        with self._use() as vault:
            return lifecycle.compact_memory(vault)

    def memory_file(self, budget: int | None = None, write: bool = True) -> MemoryFileResult:
        from vault_brain.app.memory.memory_file import build_memory_file, write_memory_file  # lazy

        with self._use("try") as vault:
            vault.reconcile()
            if write:
                return write_memory_file(vault, budget)
            return build_memory_file(vault, budget)

    def strategy(self) -> StrategyResult:
        from vault_brain.storage.policy.hold import read_held  # lazy: this command only

        policy = self._vault.policy
        held = {h.key for h in read_held(self._vault.paths)}
        waits = "this machine's (a remote's change waits for `vb policy approve`)"
        rows = [
            SettingRow(
                key=s.key,
                value=policy.get(s.key),
                source=waits if s.key in held else policy.sources.get(s.key, "default"),
                default=s.default,
                group=s.group,
                help=s.help,
            )
            for s in SETTINGS.values()
        ]
        return StrategyResult(rows, list(policy.unknown))

    # -- the vault ---------------------------------------------------------------------------
    def status(self) -> StatusReport:
        from vault_brain.app.status import vault_status  # lazy: start-up

        with self._use("skip") as vault:
            return vault_status(vault)

    def index(self, rebuild: bool = False, progress: Progress | None = None) -> IndexResult:
        started = time.perf_counter()
        with self._use("skip") as vault:
            result = (
                vault.index.rebuild(progress or vault.progress)
                if rebuild
                else vault.reconcile(progress, force=True)
            )
            vault.sync_embeddings(rebuild, progress)
        return IndexResult(
            added=len(result.added),
            updated=len(result.updated),
            removed=len(result.removed),
            total=result.total,
            rebuilt=result.rebuilt,
            seconds=round(time.perf_counter() - started, 3),
        )


def create_vault(target: Path, adopt: bool = False) -> InitResult:
    """A new vault from the template (its own git repository), or vb's files added to an
    existing folder (`adopt`: no existing file is changed)."""
    from vault_brain.storage.template import init_vault  # lazy: start-up

    made = init_vault(target, adopt=adopt)
    counters = ""
    if adopt:
        from vault_brain.storage.paths import VaultPaths
        from vault_brain.storage.policy.file import load_policy

        counters = counters_notice(load_policy(VaultPaths(made.root)).no_counters)
    return InitResult(str(made.root), made.created, made.kept, made.git, counters)


def counters_notice(no_counters: list[str]) -> str:
    """What `vb init --adopt` says vb will write into the notes it adopted (the default:
    counters on every note, so that ranking learns what helps), and how to say no."""
    which = (
        f"every note but those matching no_counters ({', '.join(no_counters)})"
        if no_counters
        else "every note (the default)"
    )
    return (
        f"on {which}. When an agent retrieves a note, vb adds access_count and "
        "last_accessed to its properties (credit after feedback, id the first time). To keep "
        "notes out: no_counters: [folder/] in STRATEGY.md, or vb: false in a note's properties"
    )
