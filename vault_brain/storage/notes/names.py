"""The files of a vault as Obsidian sees them, for writing links it resolves."""

from __future__ import annotations

from pathlib import Path

from vault_brain.domain.notes.links import LinkNames
from vault_brain.storage.files import visible_files


def vault_files(root: Path) -> list[str]:
    """Every file of the vault (POSIX, vault-relative) Obsidian indexes: hidden files and
    folders (`.obsidian`, `.git`, `.vb`, ...) left out. One walk, no reads."""
    return [rel for _entry, rel in visible_files(str(root))]


def link_names(root: Path) -> LinkNames:
    """The vault's Markdown files by name, to write links as Obsidian would (see `LinkNames`)."""
    return LinkNames(vault_files(root))
