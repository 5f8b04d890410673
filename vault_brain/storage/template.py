"""Creating a vault from the template, or adopting an existing Obsidian vault."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from vault_brain.domain.errors import VaultBrainError
from vault_brain.storage.files import atomic_write
from vault_brain.storage.git.guard import install_drivers_at
from vault_brain.storage.git.repo import init_repo
from vault_brain.storage.paths import MARKER


def template_root() -> Path:
    """`vault-template/` from a source checkout, or the copy packaged into the wheel."""
    packaged = Path(str(resources.files("vault_brain"))) / "_template"
    if packaged.is_dir():
        return packaged
    source = Path(__file__).resolve().parents[2] / "vault-template"
    if source.is_dir():
        return source
    raise VaultBrainError(
        "the vault template is missing from this installation", hint="reinstall vault-brain"
    )


@dataclass
class InitResult:
    root: Path
    created: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    git: str = "existing"


def init_vault(target: Path, adopt: bool = False) -> InitResult:
    target = target.expanduser().resolve()
    if target.exists() and not target.is_dir():
        raise VaultBrainError(
            f"{target} is a file, not a folder", hint="give a folder for the vault"
        )
    existing = (
        [p for p in target.iterdir() if p.name not in (".git", ".DS_Store")]
        if target.is_dir()
        else []
    )
    if (target / MARKER).exists() and not adopt:
        raise VaultBrainError(
            f"{target} is already a vault (it has {MARKER})",
            hint="use it as it is, or `vb init --adopt` to add what is missing",
        )
    if existing and not adopt:
        raise VaultBrainError(
            f"{target} is not empty",
            hint="use `vb init --adopt` to add vb's files to an existing vault "
            "without changing any file in it",
        )
    result = InitResult(target)
    source = template_root()
    for dirpath, _dirnames, filenames in os.walk(source):
        folder = Path(dirpath)
        rel_folder = folder.relative_to(source)
        if "__pycache__" in rel_folder.parts:
            continue
        (target / rel_folder).mkdir(parents=True, exist_ok=True)
        for name in sorted(filenames):
            rel = (rel_folder / name).as_posix()
            dest = target / rel
            if name == ".gitkeep" and any(
                p for p in (target / rel_folder).iterdir() if p.name != ".gitkeep"
            ):
                continue
            if dest.exists():
                result.kept.append(rel)
                continue
            atomic_write(dest, (folder / name).read_bytes())
            result.created.append(rel)
    hide_machine_state(target)
    result.git = init_repo(target, commit=not existing, adopt=adopt)
    install_drivers_at(target)
    return result


def hide_machine_state(root: Path) -> None:
    """`.vb/` ignores itself, so git never sees the cache (the index, the locks) whatever the
    vault's .gitignore says: one an adopted folder kept, or one a remote brought."""
    atomic_write(root / ".vb" / ".gitignore", "*\n")
