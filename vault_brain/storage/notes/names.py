"""The files of a vault as Obsidian sees them, for writing links it resolves."""

from __future__ import annotations

import os
from pathlib import Path

from vault_brain.domain.notes.links import LinkNames


def vault_files(root: Path) -> list[str]:
    """Every file of the vault (POSIX, vault-relative) Obsidian indexes: hidden files and
    folders (`.obsidian`, `.git`, `.vb`, ...) left out. One walk, no reads."""
    found: list[str] = []
    stack = [(str(root), "")]
    while stack:
        folder, prefix = stack.pop()
        try:
            entries = os.scandir(folder)
        except OSError:
            continue
        with entries:
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                try:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append((entry.path, f"{prefix}{entry.name}/"))
                    else:
                        found.append(prefix + entry.name)
                except OSError:
                    continue
    return found


def link_names(root: Path) -> LinkNames:
    """The vault's Markdown files by name, to write links as Obsidian would (see `LinkNames`)."""
    return LinkNames(vault_files(root))
