"""A project's own files, read (never written) for extraction and source search: which files
count, where the project's root is, and each file's stamp."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

from vault_brain.domain.errors import VaultBrainError
from vault_brain.storage.regular import NOT_REGULAR, is_regular

SUFFIXES = frozenset({".md", ".markdown", ".mdx", ".txt"})
SKIP_DIRS = frozenset({"node_modules", "__pycache__", "venv", "site-packages", "dist", "build"})
MAX_BYTES = 1_000_000


@dataclass(frozen=True)
class SourceFile:
    rel: str  # relative to the project's root, with '/'
    path: Path
    mtime_ns: int
    size: int


def resolve_paths(given: list[str]) -> list[Path]:
    """The PATHs a person named, absolute; each must exist."""
    out = []
    for raw in given:
        path = Path(raw).expanduser()
        if not path.exists():
            raise VaultBrainError(
                f"no such file or folder: {raw}", hint="give the project's folder or its files"
            )
        out.append(path.resolve())
    return out


def common_root(paths: list[Path]) -> Path:
    """The folder every path lies in (a file's own folder when it is alone)."""
    folders = [p if p.is_dir() else p.parent for p in paths]
    return Path(os.path.commonpath([str(f) for f in folders]))


def relative(root: Path, path: Path) -> str | None:
    """`path` relative to `root`, or None when it lies outside."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return None


def _walks_into(name: str) -> bool:
    return not name.startswith(".") and name not in SKIP_DIRS


def _counts(name: str) -> bool:
    return Path(name).suffix.lower() in SUFFIXES and not name.startswith(".")


def walk(
    root: Path, paths: list[Path], skip: list[Path]
) -> tuple[list[SourceFile], dict[str, str]]:
    """The Markdown and text files under `paths` (hidden folders, dependency and build
    folders, symlinks and anything under `skip` left out), and the files passed over, with
    why: too big, or not a regular file (a FIFO named `p.md` is never opened: reading it would
    wait forever). Files named explicitly count whatever their suffix."""
    found: dict[str, SourceFile] = {}
    passed: dict[str, str] = {}
    skipped = {str(s) for s in skip}
    base = str(root).rstrip(os.sep) + os.sep

    def add(path: str, st: os.stat_result) -> None:
        if not path.startswith(base):
            return
        rel = path[len(base) :].replace(os.sep, "/")
        if not is_regular(st):
            passed[rel] = NOT_REGULAR
        elif st.st_size > MAX_BYTES:
            passed[rel] = "over 1 MB"
        else:
            found[rel] = SourceFile(rel, Path(path), st.st_mtime_ns, st.st_size)

    def scan(folder: str) -> None:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            return
        for entry in entries:
            try:
                if entry.is_symlink():
                    continue
                if entry.is_dir():
                    if _walks_into(entry.name) and entry.path not in skipped:
                        scan(entry.path)
                elif _counts(entry.name):
                    add(entry.path, entry.stat())
            except OSError:
                continue

    for start in paths:
        if start.is_dir():
            scan(str(start))
        elif not start.is_symlink():
            with contextlib.suppress(OSError):
                add(str(start), start.stat())
    return [found[rel] for rel in sorted(found)], dict(sorted(passed.items()))


def vault_folders(root: Path) -> list[Path]:
    """A vault's folders that are never a project's sources (archive, transcripts, logs)."""
    return [root / "archive", root / "sessions", root / "logs"]
