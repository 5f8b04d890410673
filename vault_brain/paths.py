"""Where things live in a vault, and how the vault is found.

`VaultPaths` is built once per command and passed down; it never creates
anything on disk by itself.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from vault_brain.errors import VaultMissingError

MARKER = "STRATEGY.md"

# Folders that never hold memories: vb's own cache, git, Obsidian settings, trash,
# transcripts and logs (JSONL, not notes).
IGNORED_DIRS = frozenset({".vb", ".git", ".obsidian", ".trash", "sessions", "logs"})
# Generated or policy files at the vault root that are not memories.
ROOT_NON_NOTES = frozenset({"MEMORY.md", "STRATEGY.md"})


@dataclass(frozen=True)
class VaultPaths:
    root: Path

    @property
    def vb_dir(self) -> Path:
        return self.root / ".vb"

    @property
    def index_dir(self) -> Path:
        return self.vb_dir / "index"

    @property
    def manifest(self) -> Path:
        return self.vb_dir / "manifest.json"

    @property
    def vault_lock(self) -> Path:
        return self.vb_dir / "vault.lock"

    @property
    def index_lock(self) -> Path:
        return self.vb_dir / "index.lock"

    @property
    def watch_status(self) -> Path:
        return self.vb_dir / "watch.json"

    @property
    def strategy(self) -> Path:
        return self.root / "STRATEGY.md"

    @property
    def memory_md(self) -> Path:
        return self.root / "MEMORY.md"

    @property
    def tasks(self) -> Path:
        return self.root / "tasks.json"

    @property
    def sessions_dir(self) -> Path:
        return self.root / "sessions"

    @property
    def logs_dir(self) -> Path:
        return self.root / "logs"

    @property
    def archive_dir(self) -> Path:
        return self.root / "archive"


def find_vault(
    explicit: str | os.PathLike[str] | None = None, cwd: Path | None = None
) -> VaultPaths:
    """Resolve the vault: `--vault`, else `VB_VAULT`, else the nearest parent with STRATEGY.md."""
    given = explicit if explicit is not None else os.environ.get("VB_VAULT") or None
    if given is not None:
        root = Path(given).expanduser()
        source = "--vault" if explicit is not None else "VB_VAULT"
        if not root.is_dir():
            raise VaultMissingError(
                f"vault folder {str(root)!r} (from {source}) does not exist",
                hint=f"create it with `vb init {root}` or point {source} at an existing vault",
            )
        return VaultPaths(root.resolve())
    here = (cwd or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / MARKER).is_file():
            return VaultPaths(folder)
    raise VaultMissingError(
        f"no vault found in {here} or any parent folder (looked for {MARKER})",
        hint="run `vb init` here, pass `--vault PATH`, or set VB_VAULT",
    )
