"""`vb clone URL DIR`: join a vault fast, and `vb fetch-old`: bring what it left out.

A clone is partial (git fetches commits and trees, and each file's blob when something
needs it) with a sparse checkout of what vb and the person use: every top-level file
(MEMORY.md, STRATEGY.md, tasks.json, .gitattributes), every folder (the notes' folders,
policy/, logs/) but `archive/`, and of `sessions/` only `sessions.json` and the recent
transcripts: those a commit of the last `--recent` days changed, or whose day folder
(`sessions/<YYYY-MM-DD>/`) is that recent (`domain.sync.sparse`). Then it is set up as
`vb sync` sets a vault up (vb's merge drivers and attributes), after refusing what a sync
refuses from a remote. The files at the top are checked out first; while git fetches and
writes the rest, the index is built from them as they appear (`Index.rebuild(arriving=...)`),
so the index build, most of a big clone's time, starts before the checkout ends.

git keeps what was left out in the repository's tree (skip-worktree): a commit made here
never deletes it, and a merge of the remote's changes to it updates the tree without
checking it out. `vb fetch-old` adds paths to the checkout (git fetches their blobs) and
indexes them.
"""

from __future__ import annotations

import datetime as dt
import shutil
import time
from collections.abc import Callable
from dataclasses import field
from pathlib import Path

from vault_brain.app.memory.results import Result, result
from vault_brain.app.memory.vault import Vault
from vault_brain.domain.errors import UsageError, VaultBrainError
from vault_brain.domain.sync import sparse as plan
from vault_brain.domain.sync.merge import is_note_path
from vault_brain.storage.env import Environment
from vault_brain.storage.git import guard
from vault_brain.storage.git import sparse as sp
from vault_brain.storage.git import sync as g
from vault_brain.storage.template import hide_machine_state

Say = Callable[[str], None]
Progress = Callable[[int, int], None]
DEFAULT_RECENT_DAYS = 30


@result
class CloneResult(Result):
    path: str
    """The vault's folder."""
    remote: str
    """The URL cloned (a local folder as a file:// URL); the clone's `origin`."""
    branch: str
    commit: str
    """The commit checked out."""
    partial: bool
    """False: the remote does not serve partial clones, so every blob was fetched."""
    recent_days: int
    notes: int
    """Notes checked out."""
    notes_left_out: int
    """Notes not checked out (archive/); `vb fetch-old archive` brings them."""
    transcripts: int
    """Transcripts checked out (the recent ones)."""
    transcripts_left_out: int
    """Older transcripts, not checked out; `vb fetch-old sessions` brings them."""
    bytes_fetched: int
    """The size of .git/objects after the clone and checkout."""
    indexed: int
    """Notes in the search index."""
    index_seconds: float
    """Of `seconds`, the index build's, which runs while git fetches and writes the files."""
    seconds: float
    warnings: list[str] = field(default_factory=list)


@result
class FetchOldResult(Result):
    path: str
    added: list[str]
    """The sparse-checkout patterns added (`all`: the sparse checkout was turned off)."""
    files: int
    """Files checked out by this command."""
    notes_left_out: int
    transcripts_left_out: int
    bytes_fetched: int
    """How much .git/objects grew (the blobs fetched)."""
    indexed: int
    """Notes in the search index afterwards."""
    seconds: float


@result
class LeftOut(Result):
    """What a sparse clone (`vb clone`) did not check out; `vb fetch-old` brings it."""

    notes: int
    transcripts: int
    files: int
    """Every file left out (the notes and transcripts among them)."""


def left_out(vault: Vault) -> LeftOut | None:
    """For `vb status`: what the vault's sparse checkout leaves out (None: everything is
    checked out, or the vault is not a repository of its own); never raises."""
    root = vault.root
    if not (root / ".git").is_dir() or not sp.is_sparse(root, root / ".git"):
        return None
    try:
        absent = sp.checkout_state(root).absent
    except VaultBrainError:
        return None
    notes, transcripts = _counts(absent)
    return LeftOut(notes, transcripts, len(absent))


def _counts(paths: list[str]) -> tuple[int, int]:
    notes = sum(1 for p in paths if is_note_path(p))
    transcripts = sum(1 for p in paths if plan.is_transcript(p))
    return notes, transcripts


def clone_vault(
    url: str,
    target: Path,
    recent_days: int = DEFAULT_RECENT_DAYS,
    env: Environment | None = None,
    say: Say | None = None,
    progress: Progress | None = None,
    today: dt.date | None = None,
) -> CloneResult:
    """Clone the vault at `url` into `target` (a new or empty folder); see the module."""
    started = time.perf_counter()
    tell = say or (lambda _text: None)
    if recent_days < 0:
        raise UsageError("--recent takes a number of days (0 or more)", hint="e.g. --recent 30")
    target = target.expanduser().absolute()
    sp.refuse_target(target)
    sp.check_git()
    source = sp.clone_url(url)
    warnings: list[str] = []
    tell(f"asking {source}")
    branch = sp.remote_head(source, g.network_env())
    if branch is None:
        raise VaultBrainError(
            f"{url} is an empty repository, not a vault",
            hint="push a vault there first (`vb init`, git remote add origin URL, `vb sync`)",
        )
    made = not target.exists()
    try:
        tell(f"cloning {source} (commits and trees; blobs on demand)")
        cloned = sp.partial_clone(source, target, branch, g.network_env())
        if not cloned.partial:
            warnings.append(
                "the remote does not serve partial clones (uploadpack.allowFilter), so every "
                "file's blob was fetched; only the checkout is sparse"
            )
        _check_vault(target, url)
        _check_trusted(target)
        cutoff = plan.days_ago(today or dt.date.today(), recent_days)
        files = sp.files_under(target, ".")
        transcripts = [p for p in files if plan.is_transcript(p)]
        recent = plan.recent_transcripts(
            transcripts, sp.committed_since(target, recent_days), cutoff
        )
        sp.set_patterns(target, plan.TOP_FILES)
        sp.checkout(target, branch)
        tell(f"checking out the notes and {len(recent)} recent transcripts, indexing them")
        stages = [plan.checkout_patterns(transcripts, recent)]
        if first := plan.first_stage(files):
            stages.insert(0, first)
        with sp.widening(target, stages) as checkout:
            indexing = time.perf_counter()
            indexed, failed = _index(target, env, progress, checkout.running)
            index_seconds = round(time.perf_counter() - indexing, 3)
        warnings += _set_up(target)
    except BaseException:
        _remove(target, made)
        raise
    if failed is not None:  # (the clone is whole: its index is a cache, rebuilt when read)
        raise failed
    state = sp.checkout_state(target)
    notes, transcripts_in = _counts(state.present)
    notes_out, transcripts_out = _counts(state.absent)
    commit = sp.head(target)
    return CloneResult(
        path=str(target),
        remote=source,
        branch=branch,
        commit=commit,
        partial=cloned.partial,
        recent_days=recent_days,
        notes=notes,
        notes_left_out=notes_out,
        transcripts=transcripts_in,
        transcripts_left_out=transcripts_out,
        bytes_fetched=sp.objects_bytes(target),
        indexed=indexed,
        index_seconds=index_seconds,
        seconds=round(time.perf_counter() - started, 3),
        warnings=warnings,
    )


def _index(
    root: Path, env: Environment | None, progress: Progress | None, arriving: Callable[[], bool]
) -> tuple[int, VaultBrainError | OSError | None]:
    """Build the index while the checkout writes the files (the build follows them): the
    notes indexed, or the error that stopped it (the checkout goes on)."""
    try:
        vault = Vault.open(root, env)
        return vault.index.rebuild(progress or vault.progress, arriving).total, None
    except (VaultBrainError, OSError) as exc:
        return 0, exc


def _check_vault(root: Path, url: str) -> None:
    """The remote's top is a vault (it has STRATEGY.md); a vault in a folder of a larger
    repository is named in the error."""
    if sp.top_entries(root).get("STRATEGY.md") == "blob":
        return
    below = sp.vaults_below(root)
    if below:
        raise VaultBrainError(
            f"{url} is not a vault at its top: it holds one in {below[0]}/"
            + (f" (and {len(below) - 1} more)" if len(below) > 1 else ""),
            hint="vb clone takes a repository that is a vault; clone this one whole "
            f"(git clone URL DIR) and use `vb --vault DIR/{below[0]} sync`",
        )
    raise VaultBrainError(
        f"{url} is not a vault (its default branch has no STRATEGY.md)",
        hint="give the URL of a vault's repository (one `vb init` made and `vb sync` pushed)",
    )


def _check_trusted(root: Path) -> None:
    """What `vb sync` refuses to merge from a remote, a clone refuses to check out."""
    repo = g.open_repo(root)
    try:
        refused = guard.refused(repo, root, "HEAD", None)
    finally:
        repo.close()
    if refused:
        more = f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""
        raise sp.GitError(
            f"clone refused: the remote {refused[0]}{more}",
            hint="on a machine that has the vault, remove it from git (git rm --cached PATH, "
            "commit, `vb sync`), then clone again; nothing was kept here",
        )


def _set_up(root: Path) -> list[str]:
    """vb's merge drivers and attributes, as `vb sync` installs them; what the remote's
    .gitattributes would change (vb's rules win) as warnings."""
    hide_machine_state(root)
    repo = g.open_repo(root)
    try:
        guard.set_up_merging(repo, root)
        return guard.overrides(repo, root, "HEAD")
    finally:
        repo.close()


def _remove(target: Path, made: bool) -> None:
    """Leave the folder as it was: removed when the clone made it, else emptied."""
    if made:
        shutil.rmtree(target, ignore_errors=True)
    elif target.is_dir():
        for child in target.iterdir():
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child, ignore_errors=True)
            else:
                child.unlink(missing_ok=True)


# --------------------------------------------------------------------------- fetch-old


def fetch_old(
    vault: Vault, what: list[str], everything: bool = False, progress: Progress | None = None
) -> FetchOldResult:
    """Add `what` (vault-relative folders or files: `archive`, `sessions`,
    `sessions/2025-03-01`, ...) to the checkout, or everything; then index."""
    started = time.perf_counter()
    root = vault.root
    repo = g.open_repo(root)
    try:
        top = g.top(repo)
    finally:
        repo.close()
    if top.resolve() != root.resolve():
        raise VaultBrainError(
            "this vault is a folder of a larger repository, not a clone of vb clone",
            hint="its repository's checkout is git's to change (git sparse-checkout)",
        )
    if not sp.is_sparse(root):
        raise VaultBrainError(
            "everything is already checked out (this vault is not a sparse clone)",
            hint="nothing to fetch; `vb clone` makes a clone that leaves old files out",
        )
    if not what and not everything:
        raise UsageError(
            "say what to fetch: archive, sessions, a folder or file of the vault, or --all",
            hint="e.g. `vb fetch-old archive`, `vb fetch-old sessions/2025-03-01`",
        )
    before_state = sp.checkout_state(root)
    before_bytes = sp.objects_bytes(root)
    if everything:
        sp.disable(root)
        added = ["all"]
    else:
        added = [_pattern(root, rel) for rel in what]
        sp.add_patterns(root, added)
    after = sp.checkout_state(root)
    notes_out, transcripts_out = _counts(after.absent)
    indexed = vault.reconcile(progress, force=True).total
    return FetchOldResult(
        path=str(root),
        added=added,
        files=len(after.present) - len(before_state.present),
        notes_left_out=notes_out,
        transcripts_left_out=transcripts_out,
        bytes_fetched=sp.objects_bytes(root) - before_bytes,
        indexed=indexed,
        seconds=round(time.perf_counter() - started, 3),
    )


def _pattern(root: Path, rel: str) -> str:
    rel = rel.strip().strip("/")
    if not rel or rel.startswith("..") or "/../" in f"/{rel}/" or Path(rel).is_absolute():
        raise UsageError(f"{rel!r} is not a path inside the vault", hint="e.g. archive, sessions")
    kind = sp.kind_of(root, rel)
    if kind is None:
        raise VaultBrainError(
            f"the vault's commit has no {rel}",
            hint="name a folder or file of the vault (`git ls-tree HEAD` lists them)",
        )
    return plan.fetch_pattern(rel, kind == "tree")
