"""`vb persona`: personas as git branches of the vault (seed 001's branches as personas).

A persona is a branch: its own notes, credit and logs. Switching commits what is pending
first (a commit whose message says so), then checks the branch out; merging a persona or
cherry-picking one of its commits resolves vb's files with the same code as `vb sync`
(`app.sync.remote.Merger`: counters added, conflict copies instead of markers, log records merged
once each, tasks by id). A merge or cherry-pick vb could not finish is undone: never
conflict markers, never a half state. A persona merge is undone by reverting its merge
commit (`undo-merge`): a new commit, history is never rewritten; counters go back
arithmetically (what the merge added is taken off, later reads stay). After each, the index
follows the files.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import field
from pathlib import Path
from typing import Any

from vault_brain.app.memory.results import Result, result
from vault_brain.app.memory.vault import Vault
from vault_brain.app.sync.remote import Merger
from vault_brain.domain.errors import UsageError, VaultBrainError
from vault_brain.storage.files import vault_lock
from vault_brain.storage.git import persona as pg
from vault_brain.storage.git import sync as g
from vault_brain.storage.notes.merge import MergeError

ACTIONS = ("list", "create", "switch", "merge", "cherry-pick", "undo-merge")
Say = Callable[[str], None]


@result
class Persona(Result):
    name: str
    current: bool
    commit: str
    when: str
    """The date of the persona's last commit (ISO 8601)."""
    subject: str
    """Its last commit's message, first line."""


@result
class PersonaResult(Result):
    action: str
    """list, create, switch, merge or cherry-pick."""
    current: str | None
    """The persona checked out after the action (None: a detached HEAD)."""
    persona: str | None = None
    """The persona acted on (create, switch, merge)."""
    previous: str | None = None
    """switch: the persona before."""
    commit: str | None = None
    """The vault's commit after the action."""
    committed: str | None = None
    """The commit of the changes that were pending (switch, merge, cherry-pick)."""
    message: str = ""
    """What happened, in a sentence."""
    outcome: str = ""
    """merge: up to date, fast-forward or merged; cherry-pick: picked or empty; undo: undone."""
    merged_files: int = 0
    """Files vb merged itself (notes, logs, transcripts, tasks.json)."""
    conflict_copies: list[str] = field(default_factory=list)
    personas: list[Persona] = field(default_factory=list)
    """Every persona after the action."""
    notices: list[str] = field(default_factory=list)
    """What vb repaired first (a stale .git/index.lock removed)."""


def persona(
    vault: Vault,
    action: str,
    name: str | None = None,
    start: str | None = None,
    say: Say | None = None,
) -> PersonaResult:
    if action not in ACTIONS:
        raise UsageError(f"unknown persona action {action!r}", hint=f"one of {', '.join(ACTIONS)}")
    if action != "list" and not name:
        what = "a commit" if action == "cherry-pick" else "a persona name"
        raise UsageError(f"persona {action} needs {what}", hint="see `vb persona --help`")
    repo = g.open_repo(vault.root)
    try:
        notices: list[str] = []
        if action != "list":  # every other action writes the index: the rule of `vb sync`
            from vault_brain.storage.git.lock import clear_stale_index_lock  # lazy

            clear_stale_index_lock(Path(repo.git_dir), g.top(repo), notices.append)
        with _git_errors():
            out = _act(vault, repo, action, name or "", start, say or (lambda _t: None))
        out.notices = notices
        out.current = pg.current(repo)
        out.commit = str(repo.head.commit.hexsha) if repo.head.is_valid() else None
        out.personas = [
            Persona(b.name, b.name == out.current, b.commit, b.when, b.subject)
            for b in pg.branches(repo)
        ]
        return out
    finally:
        repo.close()


@contextlib.contextmanager
def _git_errors() -> Iterator[None]:
    """A git failure as one line with a hint (vb's own errors pass through)."""
    import git  # lazy

    try:
        yield
    except git.GitCommandError as exc:
        raise g.GitError(
            f"git stopped the persona command: {g.detail(exc)}",
            hint="`vb --debug persona ...` shows the git command",
        ) from None


def _act(vault: Vault, repo: Any, action: str, name: str, start: str | None, say: Say) -> Any:
    if action == "list":
        return PersonaResult(action, None, message=f"{len(pg.branches(repo))} personas")
    if action == "create":
        pg.create(repo, name, start)
        return PersonaResult(
            action, None, persona=name, message=f"created persona {name!r} from {start or 'HEAD'}"
        )
    merger = Merger(vault, repo, say, label="vb persona")
    if action == "switch":
        return _switch(vault, repo, merger, name)
    if g.merge_in_progress(repo):
        raise VaultBrainError(
            "the vault's repository is in the middle of a merge",
            hint="finish it with `vb sync` (or git merge --abort), then retry",
        )
    if action == "merge":
        return _merge(vault, repo, merger, name)
    if action == "undo-merge":
        return _undo_merge(vault, repo, merger, name)
    return _cherry_pick(vault, repo, merger, name)


def _switch(vault: Vault, repo: Any, merger: Merger, name: str) -> PersonaResult:
    pg.require(repo, name)
    before = pg.current(repo)
    if before == name:
        return PersonaResult(
            "switch", name, persona=name, previous=before, message=f"already on persona {name!r}"
        )
    committed, summary = merger.commit_pending(f"committed before switching to {name}")
    with vault_lock(vault.paths):
        pg.switch(repo, name)
    vault.reconcile(force=True)
    message = f"switched to persona {name!r}" + (
        f" (pending changes committed first: {summary})" if committed else ""
    )
    return PersonaResult(
        "switch", name, persona=name, previous=before, committed=committed, message=message
    )


def _resolving(vault: Vault, repo: Any, merger: Merger, run: Callable[[], str]) -> str:
    """Run a merge or cherry-pick; one vb could not finish is undone (no half state)."""
    try:
        return run()
    except (g.GitError, MergeError, OSError, ValueError) as exc:
        pg.undo(repo)
        vault.reconcile(force=True)
        raise VaultBrainError(
            f"the persona merge stopped and was undone: {g.detail(exc)}",
            hint="nothing changed; `vb --debug persona ...` shows why",
        ) from None


def _merge(vault: Vault, repo: Any, merger: Merger, name: str) -> PersonaResult:
    pg.require(repo, name)
    if pg.current(repo) == name:
        raise UsageError(f"persona {name!r} is the one checked out", hint=pg.LIST_HINT)
    committed, _summary = merger.commit_pending(f"committed before merging {name}")
    outcome = _resolving(vault, repo, merger, lambda: merger.merge(f"refs/heads/{name}", name))
    vault.reconcile(force=True)
    return PersonaResult(
        "merge",
        None,
        persona=name,
        committed=committed,
        message=f"merged persona {name!r}: {outcome}",
        outcome=outcome,
        merged_files=merger.merged_files,
        conflict_copies=merger.copies,
    )


def _cherry_pick(vault: Vault, repo: Any, merger: Merger, ref: str) -> PersonaResult:
    sha, parents, subject = pg.resolve_commit(repo, ref)
    if len(parents) != 1:
        raise UsageError(
            f"commit {sha[:10]} is a {'merge' if parents else 'root commit'}: nothing to pick",
            hint="pick one of the commits it merged (`vb log` lists them), or merge the persona",
        )
    committed, _summary = merger.commit_pending(f"committed before cherry-picking {sha[:10]}")

    def run() -> str:
        pg.start_cherry_pick(repo, sha)
        if pg.nothing_staged(repo) and not repo.git.ls_files("-u"):
            pg.undo(repo)
            return "empty"
        merger.finish_merge(f"cherry-pick {sha[:10]} ({subject})", theirs=sha, base=parents[0])
        return "picked"

    outcome = _resolving(vault, repo, merger, run)
    vault.reconcile(force=True)
    text = "already here, nothing to pick" if outcome == "empty" else "picked"
    return PersonaResult(
        "cherry-pick",
        None,
        committed=committed,
        message=f"{sha[:10]} ({subject}): {text}",
        outcome=outcome,
        merged_files=merger.merged_files,
        conflict_copies=merger.copies,
    )


def _undo_merge(vault: Vault, repo: Any, merger: Merger, name: str) -> PersonaResult:
    """Revert the newest merge of persona `name` into the current one (a new commit)."""
    found = pg.last_merge_of(repo, name)
    if found is None:
        raise UsageError(
            f"no merge commit of persona {name!r} on the current persona to undo",
            hint="a merge that fast-forwarded made no merge commit: revert the commits it "
            "brought with `git revert` (`vb log` lists them)",
        )
    sha, parents = found
    committed, _summary = merger.commit_pending(f"committed before undoing the merge of {name}")

    def run() -> str:
        pg.start_revert(repo, sha)
        if pg.nothing_staged(repo) and not repo.git.ls_files("-u"):
            pg.undo(repo)
            return "empty"
        merger.finish_merge(f"undo merge {name} (revert {sha[:10]})", theirs=parents[0], base=sha)
        return "undone"

    outcome = _resolving(vault, repo, merger, run)
    vault.reconcile(force=True)
    text = "nothing left to undo" if outcome == "empty" else f"reverted {sha[:10]}"
    return PersonaResult(
        "undo-merge",
        None,
        persona=name,
        committed=committed,
        message=f"undid the merge of persona {name!r}: {text}",
        outcome=outcome,
        merged_files=merger.merged_files,
        conflict_copies=merger.copies,
    )
