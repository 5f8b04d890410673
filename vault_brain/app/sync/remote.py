"""`vb sync`: the vault shared through a git remote, without conflicts from vb's own writes.

One sync: finish a merge a kill interrupted; commit what is pending (one commit whose message
counts what changed); fetch; merge the remote's branch (never a rebase); push (never forced).
A push the remote rejects because another machine pushed first is followed, after a jittered
pause that doubles each time (`backoff`, so many writers on one remote spread out instead of
colliding again in step), by another fetch and merge, until the push lands or `retry_for`
seconds have passed: then the result says the push is pending, and the vault holds a
finished merge of everything fetched (never a merge in progress). An unreachable remote is
not an error either: the commit stays local and the result says the push is pending. One
sync of a clone runs at a time (`paths.sync_lock`).

Merging: git merges the files vb has no driver for; the files vb has a driver for (notes,
transcripts and logs, tasks.json; see `storage.git.sync.ATTRIBUTES`) git leaves as ours, and
vb merges them here, in this process, from the three blobs with the same code the per-file
driver (`vb merge-driver`, for a person's own `git merge`) runs. Generated files (MEMORY.md,
sessions/sessions.json) are regenerated after the merge. The merge is committed only when
every file is resolved: a kill before that leaves MERGE_HEAD, and the next sync resolves the
same files again from the same blobs (the result is the same) and commits.
"""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Callable
from dataclasses import field
from pathlib import Path
from typing import Any

from vault_brain.app.memory.results import Result, result
from vault_brain.app.memory.vault import Vault
from vault_brain.app.sync.merge_driver import write_conflict_copy
from vault_brain.domain.clock import now_iso
from vault_brain.domain.sync.merge import count_changes, describe_changes, is_note_path
from vault_brain.domain.text import plural
from vault_brain.storage.files import atomic_write, file_lock, vault_lock, write_cache
from vault_brain.storage.git import guard as guard
from vault_brain.storage.git import sync as g
from vault_brain.storage.git.repo import commit_identity
from vault_brain.storage.notes.merge import Merged, MergeError, merge_bytes
from vault_brain.storage.paths import VaultPaths, machine_name

RETRY_FOR = 60.0  # seconds a sync keeps retrying pushes the remote rejected (it moved)
FIRST_PAUSE, LONGEST_PAUSE = 0.25, 8.0  # the backoff between them, before jitter
STATE_FILE = "sync.json"
Say = Callable[[str], None]


@result
class SyncResult(Result):
    remote: str | None
    """None: the vault's repository has no remote (the commit stays here)."""
    branch: str
    committed: str | None
    """The commit of this machine's pending changes (None: nothing was pending)."""
    message: str
    """What that commit's message says changed."""
    received: int
    """Commits the remote had that this machine did not (merged or fast-forwarded)."""
    received_notes: list[str]
    """The notes those commits changed (vault-relative paths)."""
    merged: int
    """Merges of the remote's commits made (0: the remote had nothing new)."""
    merged_files: int
    """Files vb merged itself (notes, transcripts, logs, tasks.json)."""
    conflict_copies: list[str]
    """Conflict copies written beside notes both machines changed on the same lines."""
    pushed: bool
    """The remote now has this machine's commits (False: nothing to push, or pending)."""
    pushed_commits: int
    """Commits the push sent (0: the remote had them all: nothing to push)."""
    push_pending: str | None
    """Why the push did not happen (the commits are kept locally; the next sync pushes)."""
    attempts: int
    """Pushes tried (fetch, merge, push rounds); each one after the first followed a push the
    remote rejected because another machine had pushed first."""
    waited: float
    """Seconds spent in the pauses between those rounds."""
    resumed: bool
    """A sync a kill interrupted was finished first."""
    ahead: int
    behind: int
    seconds: float
    regenerated: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    """What vb repaired before syncing (a stale .git/index.lock removed)."""
    warnings: list[str] = field(default_factory=list)
    """What the remote tried that vb ignored: .gitattributes lines that would change how
    vb's files merge (vb's rules in .git/info/attributes win)."""


@result
class SyncState(Result):
    remote: str | None
    """None: the vault's repository has no remote yet (`vb sync` commits locally)."""
    branch: str
    ahead: int | None
    """Commits here the remote does not have (as of the last fetch)."""
    behind: int | None
    """Commits on the remote not merged here (as of the last fetch)."""
    last_sync: str | None
    push_pending: str | None
    conflict_copies: list[str]
    drivers: str | None = None
    """What `vb status` repaired in vb's merge drivers (None: they were right)."""


def _rel(repo: Any, path: Path) -> str:
    return Path(os.path.relpath(path, g.top(repo))).as_posix()


class Merger:
    """Merge another commit into HEAD and resolve vb's files: what `vb sync` does with the
    remote's branch and `vb persona merge | cherry-pick` with a persona's commits."""

    def __init__(self, vault: Vault, repo: Any, say: Say, label: str = "vb sync") -> None:
        self.vault, self.repo, self.say = vault, repo, say
        self.label = label  # how the commits this makes begin (`vb sync`, `vb persona`)
        self.machine = machine_name()
        self.identity = commit_identity(repo)
        self.merged_files = 0
        self.merges = 0
        self.copy_of: list[tuple[str, str]] = []
        """(note, copy) of each conflict copy written, paths relative to the repository."""
        self.regenerated: set[str] = set()
        self.theirs = "MERGE_HEAD"  # what is being merged (a commit, for a cherry-pick)

    @property
    def copies(self) -> list[str]:
        """The conflict copies written (paths relative to the repository)."""
        return [copy for _note, copy in self.copy_of]

    # -- merging ---------------------------------------------------------------------------
    def finish_merge(self, what: str, theirs: str = "MERGE_HEAD", base: str | None = None) -> str:
        """Resolve vb's files of the merge (or cherry-pick) in progress, regenerate the
        generated files, and commit; returns the commit."""
        self.theirs = theirs
        state = g.merge_state(self.repo, theirs, base)
        with vault_lock(self.vault.paths):
            touched = self._resolve(state)
        touched += self._regenerate()
        g.add_paths(self.repo, sorted(set(touched) | set(self.copies)))
        files = f"{len(touched)} {plural(len(touched), 'file')}"
        message = f"{self.label} ({self.machine}): {what}; {files} merged by vb" + (
            f", {len(self.copies)} {plural(len(self.copies), 'conflict copy')}"
            if self.copies
            else ""
        )
        sha = g.commit(self.repo, message, self.identity, self.machine, self.copy_of)
        self.merges += 1
        return sha

    def merge(self, ref: str, what: str) -> str:
        """Merge `ref` into HEAD: 'up to date', 'fast-forward' or 'merged'."""
        if self.repo.is_ancestor(ref, "HEAD"):
            return "up to date"
        if self.repo.is_ancestor("HEAD", ref):
            self.say(f"fast-forward to {what}")
            self.repo.git.merge("--ff-only", ref)
            self.vault.reconcile(force=True)
            return "fast-forward"
        self.say(f"merging {what}")
        g.start_merge(self.repo, ref)
        self.finish_merge(f"merge {what}")
        return "merged"

    def _resolve(self, state: g.MergeStart) -> list[str]:
        repo, root = self.repo, g.top(self.repo)
        kinds = g.merge_kinds(repo, [b.path for b in state.both] + list(state.unmerged))
        touched: list[str] = []
        ancestors = g.Ancestors(repo, state.bases) if len(state.bases) > 1 else None
        for item in state.both:
            kind = kinds.get(item.path, "")
            if not kind:  # git merged it (no vb driver), or a generated file (regenerated)
                continue
            o, t = g.blob(repo, item.ours), g.blob(repo, item.theirs)
            if ancestors is None:
                b = g.blob(repo, item.base)
            else:  # a criss-cross: the bases merged, as git's virtual ancestor

                def merge(
                    x: bytes, y: bytes, z: bytes, kind: str = kind, p: str = item.path
                ) -> bytes:
                    return merge_bytes(kind, x, y, z, p).data

                b = ancestors.blob(item.path, merge)
            self._write(item.path, kind, merge_bytes(kind, b, o, t, item.path))
            touched.append(item.path)
        for path, stages in state.unmerged.items():
            kind = kinds.get(path) or ""
            blobs = {stage: g.blob(repo, sha) for stage, sha in stages.items()}
            if 2 in blobs and 3 in blobs:
                if kind:
                    merged = merge_bytes(kind, blobs.get(1, b""), blobs[2], blobs[3], path)
                else:
                    merged = merge_bytes("ours", b"", blobs[2], b"", path)
                    merged.conflict = blobs[3]
                self._write(path, kind or "other", merged)
            elif 3 in blobs or 2 in blobs:  # deleted on one side, changed on the other: kept
                atomic_write(root / path, blobs.get(2, blobs.get(3, b"")), inside=self._edge(path))
            else:
                (root / path).unlink(missing_ok=True)
            touched.append(path)
        self.merged_files += len(touched)
        return touched

    def _edge(self, path: str) -> VaultPaths:
        """The folder a write of `path` (relative to the repository) must stay inside: the
        vault for its files, else the repository's work tree."""
        full = g.top(self.repo) / path
        if full.is_relative_to(self.vault.root):
            return self.vault.paths
        return VaultPaths(g.top(self.repo))

    def _write(self, path: str, kind: str, merged: Merged) -> None:
        root = g.top(self.repo)
        edge = self._edge(path)
        atomic_write(root / path, merged.data, inside=edge)
        if merged.conflict is not None:  # named after the machine whose text it holds
            machine = g.last_writer(root, self.theirs, path) or "theirs"
            copy = write_conflict_copy(root, path, kind, merged, machine, inside=edge)
            self.copy_of.append((path, copy))

    def _regenerate(self) -> list[str]:
        """MEMORY.md and the session index from the merged files, not merged themselves."""
        from vault_brain.app.memory.memory_file import write_memory_file  # lazy
        from vault_brain.storage.sessions.transcript import SessionIndex, is_transcript

        paths = self.vault.paths
        out: list[str] = []
        if paths.sessions_index.exists() or any(paths.transcripts()):
            # a row whose transcript has the size and time it counted is kept; the others
            # (the transcripts the merge wrote or brought) are counted again
            index = SessionIndex(paths)
            rows = index.load()
            infos = {
                p.stem: info
                for p in paths.transcripts()
                if is_transcript(p) and (info := index.info(p.stem, rows, p)) is not None
            }
            index.save(infos)
            out.append(_rel(self.repo, paths.sessions_index))
        if paths.memory_md.exists():
            self.vault.reconcile(force=True)
            write_memory_file(self.vault)
            out.append(_rel(self.repo, paths.memory_md))
        self.regenerated.update(out)
        return out

    # -- the steps ---------------------------------------------------------------------------
    def commit_pending(self, why: str = "") -> tuple[str | None, str]:
        """Commit what is pending in the vault (one commit whose message counts it, after
        `why` when given); (None, 'nothing to commit') when nothing is."""
        rel = _rel(self.repo, self.vault.root)
        with vault_lock(self.vault.paths):
            g.stage_all(self.repo, rel)
            entries = g.staged_changes(self.repo, rel)
            if not entries:
                return None, "nothing to commit"
            summary = describe_changes(count_changes(entries))
            prefix = f"{self.label} ({self.machine}): {why + ': ' if why else ''}"
            sha = g.commit(self.repo, prefix + summary, self.identity, self.machine)
        return sha, summary


class Syncer(Merger):
    def __init__(self, vault: Vault, repo: Any, remote: str, say: Say) -> None:
        self.branch = g.branch(repo)
        super().__init__(vault, repo, say)
        self.remote = remote
        self.warnings: list[str] = []
        self.received = 0
        self.received_notes: list[str] = []

    def merge_remote(self) -> None:
        ref = g.remote_ref(self.repo, self.remote, self.branch)
        if ref is None or self.repo.is_ancestor(ref, "HEAD"):
            return
        what = f"{self.remote}/{self.branch}"
        self.refuse_untrusted(ref, what)
        received = g.incoming(self.repo, ref)
        self.received += received.commits
        prefix = _rel(self.repo, self.vault.root)
        prefix = "" if prefix == "." else prefix + "/"
        notes = [p.removeprefix(prefix) for p in received.paths if p.startswith(prefix)]
        for rel in notes:
            if is_note_path(rel) and rel not in self.received_notes:
                self.received_notes.append(rel)
        for line in guard.overrides(self.repo, self.vault.root, ref):
            if line not in self.warnings:
                self.warnings.append(line)
        before = self.repo.head.commit.hexsha
        self.merge(ref, what)
        self.hold_settings(before)

    def hold_settings(self, before: str) -> None:
        """The STRATEGY.md settings the merge changed keep this machine's values until
        `vb policy approve` here (`storage.policy.hold`)."""
        from vault_brain.storage.policy.hold import hold_changes  # lazy: merges only

        ours = guard.settings_at(self.repo, self.vault.root, before)
        merged = guard.settings_at(self.repo, self.vault.root, "HEAD")
        held = hold_changes(self.vault.paths, ours, merged, now_iso())
        if held:
            self.warnings.append(
                "the remote changed STRATEGY.md settings ("
                + "; ".join(s.describe() for s in held)
                + "): this machine keeps its own values until you approve them here "
                "(`vb policy diff`, then `vb policy approve`)"
            )

    def refuse_untrusted(self, ref: str, what: str) -> None:
        """Stop before merging `ref` when it brings what this machine never takes from a
        remote (see `domain.sync.trust`); the work tree, index and HEAD stay as they are."""
        refused = guard.refused(self.repo, self.vault.root, ref)
        if not refused:
            return
        more = f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""
        fix = (
            "on the machine that pushed it, remove it from git (git rm --cached PATH, "
            "commit, push), then run `vb sync` again"
        )
        hint = f"nothing was merged; {fix}"
        if ref == "MERGE_HEAD":
            hint = f"abort that merge (git merge --abort); {fix}"
        raise g.GitError(
            f"sync stopped before merging {what}: the remote {refused[0]}{more}", hint=hint
        )


def backoff(attempt: int, rng: random.Random | None = None) -> float:
    """The pause after the `attempt`-th rejected push: uniform between half and all of
    FIRST_PAUSE * 2^(attempt-1), at most LONGEST_PAUSE ("equal jitter": never zero, so a
    loser always yields, and never in step with the other losers)."""
    ceiling = min(LONGEST_PAUSE, FIRST_PAUSE * 2 ** max(attempt - 1, 0))
    return (rng or random).uniform(ceiling / 2, ceiling)


def sync(
    vault: Vault,
    remote: str = "origin",
    say: Say | None = None,
    retry_for: float = RETRY_FOR,
) -> SyncResult:
    started = time.perf_counter()
    with file_lock(vault.paths.sync_lock, "sync", vault.paths.lock_timeout + retry_for):
        repo = g.open_repo(vault.root)
        try:
            return _sync(vault, repo, remote, say or (lambda _text: None), started, retry_for)
        finally:
            repo.close()


def _sync(
    vault: Vault, repo: Any, remote: str, say: Say, started: float, retry_for: float
) -> SyncResult:
    import git  # lazy

    from vault_brain.storage.git.lock import clear_stale_index_lock  # lazy

    local = not repo.remotes and remote == "origin"  # no remote yet: the commit stays here
    if not local:
        g.check_remote(repo, remote)
    notices: list[str] = []
    clear_stale_index_lock(Path(repo.git_dir), g.top(repo), notices.append)
    s = Syncer(vault, repo, remote, say)
    guard.set_up_merging(repo, vault.root)
    resumed = g.merge_in_progress(repo)
    if resumed:  # left by a kill, or by a vb that did not check what it merged
        s.refuse_untrusted("MERGE_HEAD", "the interrupted merge")
    try:
        if resumed:
            say("finishing an interrupted merge")
            s.finish_merge("merge interrupted by a kill, finished")
        sha, summary = s.commit_pending()
        pending: str | None = None
        pushed = False
        pushed_commits = 0
        attempts = 0
        waited = 0.0
        while not local:
            attempts += 1
            say(f"fetching {remote}")
            try:
                g.fetch(repo, remote)
            except git.GitCommandError as exc:
                pending = f"cannot reach {remote}: {g.detail(exc)}"
                break
            s.merge_remote()
            ref = g.remote_ref(repo, remote, s.branch)
            to_push = g.ahead_behind(repo, ref)[0] if ref else g.commit_count(repo)
            if to_push == 0:
                pending = None
                break
            say(f"pushing {to_push} {plural(to_push, 'commit')} to {remote}")
            outcome = g.push(repo, remote, s.branch)
            if outcome.ok:
                pushed, pending, pushed_commits = True, None, to_push
                break
            pending = outcome.reason
            if not outcome.rejected:
                pending = f"cannot push to {remote}: {outcome.reason}"
                break
            pending = (
                f"{remote} kept moving: {attempts} {plural(attempts, 'push')} rejected in "
                f"{time.perf_counter() - started:.0f} s ({outcome.reason}); this machine's "
                "commits are merged with everything fetched and wait for the next sync"
            )
            pause = backoff(attempts)
            if time.perf_counter() - started + pause > retry_for:
                break
            say(f"{remote} moved meanwhile: fetching again in {pause:.1f} s")
            time.sleep(pause)
            waited += pause
    except (git.GitCommandError, MergeError) as exc:
        raise g.GitError(
            f"sync stopped: {g.detail(exc)}",
            hint="run `vb sync` again to finish it (nothing is lost); "
            "`vb --debug sync` shows the git command",
        ) from None
    if s.merges:  # (a fast-forward reconciled when it moved)
        vault.reconcile(force=True)
    ref = None if local else g.remote_ref(repo, remote, s.branch)
    ahead, behind = g.ahead_behind(repo, ref) if ref else (0, 0)
    if not local:
        _save_state(vault, remote, s.branch, pending)
    return SyncResult(
        remote=None if local else remote,
        branch=s.branch,
        committed=sha,
        message=summary,
        received=s.received,
        received_notes=s.received_notes,
        merged=s.merges,
        merged_files=s.merged_files,
        conflict_copies=s.copies,
        pushed=pushed,
        pushed_commits=pushed_commits,
        push_pending=pending,
        attempts=attempts,
        waited=round(waited, 3),
        resumed=resumed,
        ahead=ahead,
        behind=behind,
        seconds=round(time.perf_counter() - started, 3),
        regenerated=sorted(s.regenerated),
        notices=notices,
        warnings=s.warnings,
    )


# --------------------------------------------------------------------------- state


def _state_path(vault: Vault) -> Path:
    return vault.paths.vb_dir / STATE_FILE


def _save_state(vault: Vault, remote: str, branch: str, pending: str | None) -> None:
    previous = _load_state(vault)
    state = {
        "remote": remote,
        "branch": branch,
        "last_attempt": now_iso(),
        "last_sync": now_iso() if pending is None else previous.get("last_sync"),
        "push_pending": pending,
    }
    write_cache(_state_path(vault), json.dumps(state, indent=1) + "\n")


def _load_state(vault: Vault) -> dict[str, Any]:
    try:
        data = json.loads(_state_path(vault).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def trust_problems(vault: Vault) -> list[str]:
    """For `vb status`: what the vault holds that another machine may have put there and vb
    does not trust (a tracked .vb, symlinks out of the vault or among vb's own files,
    .gitattributes lines that would change how vb merges), one line each; never raises."""
    import git  # lazy

    out: list[str] = []
    vb_dir = vault.paths.vb_dir
    if vb_dir.is_symlink():
        out.append(f".vb is a symlink (to {os.path.realpath(vb_dir)}): vb's machine-local state")
    try:
        repo = g.open_repo(vault.root)
    except g.GitError:
        return out
    try:
        if not repo.head.is_valid():
            return out
        out += [
            f"the commit checked out {line}"
            for line in guard.refused(repo, vault.root, "HEAD", None)
        ]
        out += guard.overrides(repo, vault.root, "HEAD")
    except (git.GitError, OSError, ValueError) as exc:
        out.append(f"cannot inspect the vault's git tree: {g.detail(exc)}")
    finally:
        repo.close()
    return out


def sync_state(vault: Vault, copies: list[str]) -> SyncState | None:
    """For `vb status`: the remote (None: none yet), ahead/behind as of the last fetch, the
    last sync, a pending push, the live conflict copies (`copies`, from the index, plus tasks
    copies at the top), and the merge drivers checked (rewritten when they name a Python that
    is gone, e.g. after the environment moved). None when the vault is not in git."""
    if not (vault.root / ".git").exists() and not _load_state(vault):
        return None
    try:
        repo = g.open_repo(vault.root)
    except g.GitError:
        return None
    try:
        state = _load_state(vault)
        try:
            branch = g.branch(repo)
        except g.GitError:
            branch = ""
        copies = copies + [p.name for p in vault.root.glob("tasks (conflict *).json")]
        drivers = g.repair_drivers(repo)
        if not repo.remotes:
            return SyncState(None, branch, None, None, None, None, sorted(copies), drivers)
        remote = str(state.get("remote") or "origin")
        if remote not in [r.name for r in repo.remotes]:
            remote = repo.remotes[0].name
        ref = g.remote_ref(repo, remote, branch) if branch else None
        ahead, behind = g.ahead_behind(repo, ref) if ref else (None, None)
        return SyncState(
            remote=remote,
            branch=branch,
            ahead=ahead,
            behind=behind,
            last_sync=state.get("last_sync"),
            push_pending=state.get("push_pending"),
            conflict_copies=sorted(copies),
            drivers=drivers,
        )
    finally:
        repo.close()
