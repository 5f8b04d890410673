"""How a vault's folder is found, and where its machine-local cache goes: the standard
library only, so `vb search`'s warm path (`interfaces.cli.warm`) can find the socket of a
running `vb watch` without loading the rest of the storage layer. `paths.find_vault` builds
on it (and says what is wrong when no vault is found)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

MARKER = "STRATEGY.md"
SOCKET_NAME = "search.sock"  # in the cache folder (.vb/): `VaultPaths.warm_socket`


def is_vault(folder: Path) -> bool:
    """A folder vb made or adopted: it holds STRATEGY.md (or vb's cache folder `.vb/`, which
    vb itself made there). A person's plain folder of notes is not one until
    `vb init --adopt`."""
    return (folder / MARKER).is_file() or (folder / ".vb").is_dir()


def locate(explicit: str | None, from_env: str | None, cwd: Path | None = None) -> Path | None:
    """The vault's folder: `--vault`, else `VB_VAULT`, else the nearest parent with
    STRATEGY.md; None when the folder given does not exist or is not a vault, or no parent
    has it."""
    given = explicit if explicit is not None else from_env or None
    if given is not None:
        root = Path(given).expanduser()
        return root.resolve() if root.is_dir() and is_vault(root) else None
    here = (cwd or Path.cwd()).resolve()
    return next((f for f in (here, *here.parents) if (f / MARKER).is_file()), None)


def warm_socket(root: Path, cache_home: str | None = None) -> Path:
    """Where a running `vb watch` answers searches for the vault at `root`."""
    return (machine_cache(root, cache_home) or root / ".vb") / SOCKET_NAME


def machine_cache(root: Path, cache_home: str | None = None) -> Path | None:
    """None when the vault's own `.vb/` can hold the cache. For a vault vb cannot write (a
    read-only mount, a shared folder), a folder of the user's cache directory
    (`$XDG_CACHE_HOME`, else ~/.cache) named after the vault, so it can still be searched."""
    vb = root / ".vb"
    if os.access(vb if vb.is_dir() else root, os.W_OK):
        return None
    base = Path(cache_home).expanduser() if cache_home else Path.home() / ".cache"
    digest = hashlib.sha256(str(root).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return base / "vault-brain" / f"{root.name or 'vault'}-{digest}"
