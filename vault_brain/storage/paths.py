"""Where things live in a vault, and how the vault is found.

`VaultPaths` owns the location of every file vb reads or writes; no other module builds a
path inside `.vb/`, `logs/` or `sessions/`. It never creates anything on disk by itself.
"""

from __future__ import annotations

import datetime as dt
import os
import socket
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from vault_brain.domain.clock import day_of_folder
from vault_brain.domain.errors import VaultMissingError
from vault_brain.domain.sessions.records import check_session_id
from vault_brain.domain.sync.merge import is_note_path, machine_label
from vault_brain.storage.vault_root import MARKER, SOCKET_NAME, locate, machine_cache

__all__ = ["MARKER", "VaultPaths", "find_vault", "is_note_path", "machine_cache"]

# Folders that never hold memories: vb's own cache, git, Obsidian settings, trash,
# transcripts and logs (JSONL, not notes).
# policy/ holds lifecycle rules (`vb policy`), never notes: no memory tool writes there.
IGNORED_DIRS = frozenset({".vb", ".git", ".obsidian", ".trash", "sessions", "logs", "policy"})
# Generated or policy files at the vault root that are not memories.
ROOT_NON_NOTES = frozenset({"MEMORY.md", "STRATEGY.md"})


SHARD_AT = 2000
"""Entries a folder of transcripts or of one month's episodes holds before new ones go to
dated subfolders (`sessions/2026-11-27/`, `episodes/2026-11/27/`): a team of agents writes
thousands a month, and git, Obsidian and file systems slow down in folders that large.
Nothing moves: a file stays where it was written, and is found there."""


def _entries(folder: Path) -> tuple[list[str], int]:
    """(names of the day shards in `folder`, newest first; how many entries it holds).
    A symlinked shard is not one (never followed)."""
    shards: list[str] = []
    count = 0
    try:
        with os.scandir(folder) as it:
            for entry in it:
                count += 1
                if day_of_folder(entry.name) and entry.is_dir(follow_symlinks=False):
                    shards.append(entry.name)
    except OSError:
        pass
    return sorted(shards, reverse=True), count


def machine_name() -> str:
    """This machine in commit trailers, conflict copy names and shard folders: $VB_MACHINE,
    else the host name (read here, not through `storage.env`: git's merge driver runs it in
    a process of its own)."""
    return machine_label(os.environ.get("VB_MACHINE") or socket.gethostname())


def _episode_folders(moment: str) -> list[str]:
    month, day = f"episodes/{moment[:7]}", moment[8:10]
    if not day.isdigit():
        return [month]
    return [month, f"{month}/{day}", f"{month}/{day}/{machine_name()}"]


def episode_folder(paths: VaultPaths, moment: str) -> str:
    """The folder (vault-relative) a new episode of `moment` (an ISO date or datetime) is
    written to: `episodes/YYYY-MM`; once that holds SHARD_AT entries, the day's subfolder
    `episodes/YYYY-MM/DD`; once that does too, this machine's `episodes/YYYY-MM/DD/<machine>`."""
    folders = _episode_folders(moment)
    for folder in folders[:-1]:
        if _entries(paths.root / folder)[1] < SHARD_AT:
            return folder
    return folders[-1]


def episode_places(moment: str, name: str) -> list[str]:
    """Where an episode named `name` of `moment` may have been written (vault-relative)."""
    return [f"{folder}/{name}" for folder in _episode_folders(moment)]


@dataclass(frozen=True)
class VaultPaths:
    root: Path
    # How long a writer waits for another writer's vault lock (VB_LOCK_TIMEOUT).
    lock_timeout: float = field(default=10.0, compare=False)
    # Where the machine-local cache lives when the vault's own .vb/ cannot be written (a
    # read-only vault): see `machine_cache`. None: in .vb/.
    cache: Path | None = field(default=None, compare=False)

    # -- the vault's own files ---------------------------------------------------------
    @property
    def strategy(self) -> Path:
        return self.root / MARKER

    @property
    def memory_md(self) -> Path:
        return self.root / "MEMORY.md"

    @property
    def tasks(self) -> Path:
        return self.root / "tasks.json"

    @property
    def archive_dir(self) -> Path:
        return self.root / "archive"

    @property
    def sessions_dir(self) -> Path:
        return self.root / "sessions"

    @property
    def sessions_index(self) -> Path:
        return self.sessions_dir / "sessions.json"

    def transcript(self, session_id: str) -> Path:
        """`sessions/<id>.jsonl`, or `sessions/<day>/<id>.jsonl` where it was written once
        sessions/ held SHARD_AT entries (a new one goes to today's shard then); the id is
        checked first, so it can never name another file."""
        name = f"{check_session_id(session_id)}.jsonl"
        flat = self.sessions_dir / name
        today = self.sessions_dir / dt.date.today().isoformat() / name
        if flat.exists() or today.exists():  # (no listing of sessions/ for a live session)
            return flat if flat.exists() else today
        shards, count = _entries(self.sessions_dir)
        for shard in shards:
            if (self.sessions_dir / shard / name).exists():
                return self.sessions_dir / shard / name
        return flat if count < SHARD_AT else today

    def transcripts(self) -> Iterator[Path]:
        """Every `*.jsonl` in sessions/ and its day shards (sorted within each folder; not
        yet checked to be a transcript vb may read: see `is_transcript`)."""
        yield from sorted(self.sessions_dir.glob("*.jsonl"))
        for shard in _entries(self.sessions_dir)[0][::-1]:
            yield from sorted((self.sessions_dir / shard).glob("*.jsonl"))

    @property
    def logs_dir(self) -> Path:
        return self.root / "logs"

    @property
    def credit_log(self) -> Path:
        return self.logs_dir / "credit.jsonl"

    @property
    def lifecycle_log(self) -> Path:
        return self.logs_dir / "lifecycle.jsonl"

    @property
    def policy_dir(self) -> Path:
        """Lifecycle rules as code (`policy/rules.yaml`), run only once a person approved them."""
        return self.root / "policy"

    def note(self, rel: str) -> Path:
        """The file of a note path that is already known to be safe (see `files.safe_relpath`)."""
        return self.root / PurePosixPath(rel)

    # -- machine-local state (.vb/, ignored by git) -------------------------------------
    @property
    def vb_dir(self) -> Path:
        return self.root / ".vb"

    @property
    def vault_lock(self) -> Path:
        return self.vb_dir / "vault.lock"

    @property
    def sync_lock(self) -> Path:
        """Held for a whole `vb sync`: one sync of a clone at a time (a scheduled one and a
        person's would otherwise race for git's index)."""
        return self.vb_dir / "sync.lock"

    @property
    def policy_approval(self) -> Path:
        """What a person approved of policy/ (`vb policy approve`): its hash and a copy of
        every file. Machine-local, and read-only inside the session sandbox."""
        return self.vb_dir / "policy-approved.json"

    # -- the cache: in .vb/, or outside a read-only vault ---------------------------------
    @property
    def cache_dir(self) -> Path:
        return self.cache or self.vb_dir

    def index_dir(self, name: str) -> Path:
        """One generation of the search index (a rebuild makes a new one beside the old)."""
        return self.cache_dir / name

    @property
    def manifest(self) -> Path:
        """Which index generation is current, and the files it holds (path -> mtime, size)."""
        return self.cache_dir / "manifest.json"

    @property
    def embeddings(self) -> Path:
        """Hybrid search's note embeddings (one vector per indexed file), a cache like the index."""
        return self.cache_dir / "embeddings.npz"

    @property
    def index_lock(self) -> Path:
        return self.cache_dir / "index.lock"

    @property
    def rebuild_lock(self) -> Path:
        return self.cache_dir / "rebuild.lock"

    @property
    def watch_status(self) -> Path:
        return self.cache_dir / "watch.json"

    @property
    def warm_socket(self) -> Path:
        """The unix socket on which a running `vb watch` answers searches (`storage.warm`)."""
        return self.cache_dir / SOCKET_NAME

    @property
    def events(self) -> Path:
        return self.cache_dir / "events.jsonl"

    @property
    def policy_cache(self) -> Path:
        return self.cache_dir / "policy.json"

    @property
    def access_dir(self) -> Path:
        return self.vb_dir / "access"

    def access_marker(self, session_id: str) -> Path:
        """A session's retrievals whose access counters are not in the notes yet: where in
        its transcript they begin, and which process will write them (`app.memory.access`)."""
        return self.access_dir / f"{check_session_id(session_id)}.json"

    @property
    def journal_dir(self) -> Path:
        """Journals of changes being committed (a kill leaves one; the next command redoes it)."""
        return self.vb_dir / "journal"


def find_vault(
    explicit: str | None = None,
    from_env: str | None = None,
    cwd: Path | None = None,
    lock_timeout: float = 10.0,
    cache_home: str | None = None,
) -> VaultPaths:
    """Resolve the vault: `--vault`, else `VB_VAULT`, else the nearest parent with STRATEGY.md."""
    root = locate(explicit, from_env, cwd)
    if root is not None:
        return VaultPaths(root, lock_timeout, machine_cache(root, cache_home))
    given = explicit if explicit is not None else from_env or None
    if given is not None:
        folder = Path(given).expanduser()
        source = "--vault" if explicit is not None else "VB_VAULT"
        if folder.is_dir():
            raise VaultMissingError(
                f"{str(folder)!r} (from {source}) is not a vault: it has no {MARKER}",
                hint=f"to use this folder of notes with vb, run `vb init --adopt {folder}` "
                "(it changes no existing file)",
            )
        raise VaultMissingError(
            f"vault folder {str(folder)!r} (from {source}) does not exist",
            hint=f"create it with `vb init {folder}` or point {source} at an existing vault",
        )
    here = (cwd or Path.cwd()).resolve()
    raise VaultMissingError(
        f"no vault found in {here} or any parent folder (looked for {MARKER})",
        hint="run `vb init` here, pass `--vault PATH`, or set VB_VAULT",
    )
