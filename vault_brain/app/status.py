"""`vb status`: what the vault holds and how healthy its cache is, without changing anything."""

from __future__ import annotations

from collections import Counter
from dataclasses import field
from typing import Any

from vault_brain.app.knowledge.extract import ProjectState, project_states
from vault_brain.app.lifecycle.policy_review import policy_warning
from vault_brain.app.memory.results import Result, result
from vault_brain.app.memory.vault import Vault
from vault_brain.app.sync.clone import LeftOut, left_out
from vault_brain.app.sync.remote import SyncState, sync_state, trust_problems
from vault_brain.storage.events import counts as event_counts
from vault_brain.storage.events import last_of
from vault_brain.storage.index.scan import diff_manifest, scan
from vault_brain.storage.index.watch import read_status
from vault_brain.storage.tokens import get_counter
from vault_brain.storage.warm import ask


@result
class NoteCounts(Result):
    total: int
    archived: int
    by_type: dict[str, int]
    by_category: dict[str, int]
    """Keyed type/category, e.g. entity/people."""


@result
class IndexState(Result):
    exists: bool
    indexed: int
    on_disk: int
    fresh: bool
    stale: list[str]
    """Up to 100 notes the index has not caught up with (the next command reconciles)."""
    stale_count: int
    location: str = ""
    """The folder the index is kept in: the vault's .vb/, or, for a vault vb cannot write,
    a folder of the user's cache directory."""


@result
class Problem(Result):
    path: str
    problem: str


@result
class StatusReport(Result):
    vault: str
    notes: NoteCounts
    index: IndexState
    problems: list[Problem]
    watcher: dict[str, Any]
    """The watcher's status file, with `alive`; `warm`: whether a `vb watch` answers
    searches on its socket (`alive`, `socket`, `searches` answered), else they run
    in-process, and which path answered the last search (`last_search`)."""
    token_counter: dict[str, Any]
    events: dict[str, int] = field(default_factory=dict)
    """Memory events by kind (read, write, flush, compact, search, refused)."""
    refused: dict[str, int] = field(default_factory=dict)
    """What the gate refused to store or inject, by reason (injection, secret, code, ...)."""
    projects: list[ProjectState] = field(default_factory=list)
    """Projects extracted into this vault (vb extract): items, stale sources."""
    sync: SyncState | None = None
    """The git remote (None in it: no remote yet), ahead/behind (as of the last fetch), last
    sync, a pending push, live conflict copies, merge drivers repaired. None for a vault
    that is not in git."""
    policy_warning: str | None = None
    """One line when policy/ (the lifecycle rules) has changes not approved on this
    machine: the lifecycle then runs the last approved rules (see `vb policy diff`)."""
    trust: list[str] = field(default_factory=list)
    """What the vault's git tree holds that this machine does not trust and vb ignores or
    refuses: a tracked .vb, symlinks out of the vault or among vb's own files,
    .gitattributes lines that would change how vb's files merge."""
    left_out: LeftOut | None = None
    """A sparse clone (`vb clone`): what it did not check out (`vb fetch-old` brings it).
    None: everything is checked out."""


def vault_status(vault: Vault) -> StatusReport:
    disk = scan(vault.paths)
    exists = vault.index.exists()
    by_type: Counter[str] = Counter()
    by_category: Counter[str] = Counter()
    archived = 0
    problems: list[Problem] = []
    indexed = 0
    copies: list[str] = []
    if exists:
        for _, row in vault.index.rows(include_archived=True):
            indexed += 1
            if row.get("archived"):
                archived += 1
                continue
            if row.get("conflict_of"):
                copies.append(row["path"])
            by_type[row.get("type", "")] += 1
            by_category[f"{row.get('type', '')}/{row.get('category', '')}"] += 1
            if row.get("problem"):
                problems.append(Problem(row["path"], row["problem"]))
        diff = diff_manifest(disk, vault.index.load_manifest() or {})
        stale = sorted(diff.added + diff.updated + diff.removed)
    else:
        stale = sorted(disk)
    counter = get_counter()
    events, refused = event_counts(vault.paths)
    return StatusReport(
        vault=str(vault.paths.root),
        notes=NoteCounts(
            total=sum(by_type.values()),
            archived=archived,
            by_type=dict(sorted(by_type.items())),
            by_category=dict(sorted(by_category.items())),
        ),
        index=IndexState(
            exists=exists,
            indexed=indexed,
            on_disk=len(disk),
            fresh=exists and not stale,
            stale=stale[:100],
            stale_count=len(stale),
            location=str(vault.paths.cache_dir),
        ),
        problems=sorted(problems, key=lambda p: p.path),
        watcher={**read_status(vault.paths), "warm": warm_state(vault)},
        token_counter={"name": counter.name, "exact": counter.exact},
        events=events,
        refused=refused,
        projects=project_states(vault),
        sync=sync_state(vault, copies),
        policy_warning=policy_warning(vault),
        trust=trust_problems(vault),
        left_out=left_out(vault),
    )


def warm_state(vault: Vault) -> dict[str, Any]:
    """Whether a `vb watch` answers searches on the vault's socket (`alive`: then `vb search`
    is answered by it, else in-process), how many it has answered, and which path answered
    the last search the event log holds (`last_search`: warm, in-process, or None)."""
    answer = ask(vault.paths.warm_socket, {"op": "ping"}, timeout=2.0)
    last = (last_of(vault.paths, "search") or {}).get("answered")
    if answer is None:
        return {"alive": False, "socket": None, "searches": 0, "last_search": last}
    socket = str(vault.paths.warm_socket)
    searches = answer.get("searches", 0)
    return {"alive": True, "socket": socket, "searches": searches, "last_search": last}
