"""The git side of what a remote may not bring (the rules are `domain.sync.trust`): the tree
of a commit about to be merged, its symlinks' targets and tracked .gitattributes files, and
vb's merge rules in `.git/info/attributes` (never synced, and above every .gitattributes).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from vault_brain.domain.errors import VaultBrainError
from vault_brain.domain.sync.trust import (
    LINK_MODE,
    Entry,
    merge_overrides,
    refused_entries,
    vault_rel,
)
from vault_brain.storage.files import atomic_write
from vault_brain.storage.git.sync import (
    ATTRIBUTES,
    GitError,
    ensure_attributes,
    install_drivers,
    open_repo,
    top,
    tree,
)

INFO_BEGIN = "# vb's merge rules (written by vb sync; they win over any .gitattributes)"
INFO_END = "# end of vb's merge rules"
MAX_LINK = 4096
MAX_ATTRIBUTES = 1 << 20
MAX_STRATEGY = 1 << 20  # bytes of STRATEGY.md read from a commit


def prefix_of(repo: Any, vault_root: Path) -> str:
    """The vault's folder relative to the repository's top ('' when it is the top)."""
    rel = Path(os.path.relpath(os.path.realpath(vault_root), os.path.realpath(top(repo))))
    posix = rel.as_posix()
    return "" if posix == "." else posix


def _blob(repo: Any, sha: str, limit: int) -> bytes:
    data: bytes = repo.odb.stream(bytes.fromhex(sha)).read(limit)
    return data


def _targets(repo: Any, *trees: dict[str, Entry]) -> dict[str, str]:
    targets: dict[str, str] = {}
    for entries in trees:
        for path, entry in entries.items():
            if entry.mode == LINK_MODE and path not in targets:
                raw = _blob(repo, entry.sha, MAX_LINK)
                targets[path] = raw.decode("utf-8", errors="replace")
    return targets


def refused(repo: Any, vault_root: Path, commit: str, against: str | None = "HEAD") -> list[str]:
    """What of `commit`'s tree (the entries that differ from `against`'s) this machine
    refuses: tracked .vb, symlinks out of the vault or among vb's own files."""
    incoming = tree(repo, commit)
    present = tree(repo, against) if against else {}
    prefix = prefix_of(repo, vault_root)
    targets = _targets(repo, incoming, present)  # a new link may pass through an old one
    return refused_entries(incoming, present, targets, prefix, os.path.realpath(vault_root))


def settings_at(repo: Any, vault_root: Path, commit: str) -> dict[str, Any]:
    """STRATEGY.md's front matter as `commit` has it ({} when it has no STRATEGY.md, or
    front matter vb cannot read)."""
    import git  # lazy

    from vault_brain.storage.notes.frontmatter import parse_text

    prefix = prefix_of(repo, vault_root)
    path = f"{prefix}/STRATEGY.md" if prefix else "STRATEGY.md"
    try:
        sha = repo.git.rev_parse(f"{commit}:{path}")
    except git.GitCommandError:
        return {}
    parsed = parse_text(_blob(repo, sha, MAX_STRATEGY))
    return {} if parsed.error else {str(k): v for k, v in parsed.meta.items()}


def overrides(repo: Any, vault_root: Path, commit: str) -> list[str]:
    """The tracked .gitattributes lines of `commit` that would change how vb merges."""
    prefix = prefix_of(repo, vault_root)
    files: dict[str, str] = {}
    for path, entry in tree(repo, commit).items():
        if path.rsplit("/", 1)[-1] != ".gitattributes" or not entry.mode.startswith("100"):
            continue
        folder = path.rsplit("/", 1)[0] if "/" in path else ""
        if (
            prefix
            and vault_rel(path, prefix) is None
            and not (prefix + "/").startswith(folder + "/" if folder else "")
        ):
            continue  # beside the vault, not above it: applies to none of its files
        files[path] = _blob(repo, entry.sha, MAX_ATTRIBUTES).decode("utf-8", errors="replace")
    return merge_overrides(files, prefix, ATTRIBUTES)


def info_attributes_text(prefix: str) -> str:
    """vb's merge lines, anchored at the vault's folder, as `.git/info/attributes` holds
    them (patterns there are relative to the repository's top)."""
    lines = [INFO_BEGIN]
    for raw in ATTRIBUTES.splitlines():
        if not raw or raw.startswith("#"):
            continue
        pattern, _, attrs = raw.partition(" ")
        if prefix:
            pattern = f"{prefix}/{pattern}" if "/" in pattern else f"{prefix}/**/{pattern}"
        lines.append(f"{pattern} {attrs}")
    lines.append(INFO_END)
    return "\n".join(lines) + "\n"


def set_up_merging(repo: Any, vault_root: Path) -> None:
    """What a clone needs to merge vb's files vb's way: the vault's .gitattributes declares
    vb's drivers, the clone's .git/config runs them and its .git/info/attributes pins them
    (`vb sync` and `vb clone`)."""
    ensure_attributes(vault_root)
    install_drivers(repo)
    install_info_attributes(repo, vault_root)


def install_info_attributes(repo: Any, vault_root: Path) -> bool:
    """Write vb's merge lines into `.git/info/attributes` (git reads it before every
    .gitattributes and never syncs it); the person's own lines there stay. True when the
    file was written."""
    path = Path(repo.common_dir) / "info" / "attributes"
    try:
        current = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        current = ""
    block = info_attributes_text(prefix_of(repo, vault_root))
    if block in current:
        return False
    kept: list[str] = []
    inside = False
    for line in current.splitlines():
        if line == INFO_BEGIN:
            inside = True
        elif inside and line == INFO_END:
            inside = False
        elif not inside:
            kept.append(line)
    text = "\n".join(kept).strip("\n")
    atomic_write(path, (text + "\n\n" if text else "") + block)
    return True


def install_drivers_at(root: Path) -> bool:
    """`install_drivers` for the repository holding `root`; False (and nothing done) when it
    is not in one or git refused."""
    import git  # lazy

    try:
        repo = open_repo(root)
    except GitError:
        return False
    try:
        changed = install_drivers(repo)
        return install_info_attributes(repo, root) or changed
    except (git.GitError, OSError, ValueError, VaultBrainError):
        return False
    finally:
        repo.close()
