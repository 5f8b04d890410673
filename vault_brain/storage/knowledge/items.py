"""Extracted items on disk: a project's items.json (a JSON array in the seed's format), the
archive of items that expired or were replaced, and the machine-local registry of what was
extracted from where (`.vb/projects/<project>.json`).

Only the extraction pipeline writes items.json, in a transaction under the vault lock; the
registry is a cache: losing it costs one full re-read of the project's files, nothing more.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from vault_brain.domain.errors import VaultBrainError
from vault_brain.domain.knowledge.extract import Item
from vault_brain.storage.files import ensure_inside, write_cache
from vault_brain.storage.paths import VaultPaths
from vault_brain.storage.transaction import transaction

# A file's stamp: (mtime_ns, size, sha256 of its bytes).
Stamp = tuple[int, int, str]


def items_rel(template: str, project: str) -> str:
    """Where a project's items live in the vault (`items_path` in STRATEGY.md)."""
    rel = template.replace("{project}", project)
    pure = PurePosixPath(rel)
    if pure.is_absolute() or ".." in pure.parts or not rel.endswith(".json"):
        raise VaultBrainError(
            f"STRATEGY.md: items_path {template!r} must be a relative .json path inside the vault",
            hint="for example items_path: items/{project}/items.json",
        )
    return pure.as_posix()


def archive_rel(items_rel: str) -> str:
    """The archive of a project's expired and replaced items: JSON lines, append-only."""
    return f"archive/{items_rel.removesuffix('.json')}.expired.jsonl"


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# The items of the last items.json bytes parsed or written, by digest: one extraction reads
# the file, re-reads it under the lock and indexes it; it is parsed once.
_PARSED: dict[str, list[Item]] = {}
_ENCODE = json.JSONEncoder(ensure_ascii=False).encode  # one encoder: json.dumps makes one a call


def parse_items(raw: bytes, where: str) -> list[Item]:
    """The items of an items.json; entries that are not items are skipped."""
    key = digest(raw)
    if key in _PARSED:
        return list(_PARSED[key])
    items = _parse(raw, where)
    _remember(key, items)
    return list(items)


def _remember(key: str, items: list[Item]) -> None:
    _PARSED.clear()
    _PARSED[key] = list(items)


def _parse(raw: bytes, where: str) -> list[Item]:
    try:
        data = json.loads(raw.decode("utf-8")) if raw.strip() else []
    except (UnicodeDecodeError, ValueError) as exc:
        raise VaultBrainError(
            f"{where} is not valid JSON ({exc})",
            hint="restore it from git (git checkout -- FILE) or delete it and run vb extract again",
        ) from None
    if not isinstance(data, list):
        raise VaultBrainError(
            f"{where} should hold a JSON array of items",
            hint="restore it from git or delete it and run vb extract again",
        )
    return [item for entry in data if (item := Item.from_json(entry)) is not None]


def items_bytes(items: Iterable[Item]) -> bytes:
    """A JSON array with one item per line: a change to one item is a one-line diff (for
    git and for people), and the compact encoder is several times faster than `indent`."""
    items = list(items)
    data = rows_bytes([item.to_json() for item in items])
    _remember(digest(data), items)
    return data


def rows_bytes(rows: Iterable[Mapping[str, Any]]) -> bytes:
    """JSON objects as an items.json array, one per line."""
    lines = [_ENCODE(row) for row in rows]
    return ("[\n" + ",\n".join(lines) + "\n]\n").encode("utf-8") if lines else b"[]\n"


def read_items(path: Path) -> tuple[list[Item], bytes | None]:
    """The items of `path` and its bytes (no file: none, None)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return [], None
    except OSError as exc:
        raise VaultBrainError(
            f"cannot read {path}: {exc.strerror or exc}", hint="check the file's permissions"
        ) from None
    return parse_items(raw, str(path)), raw


def save_items(
    paths: VaultPaths,
    rel: str,
    change: Callable[[list[Item]], tuple[list[Item], list[dict[str, Any]]]],
) -> bool:
    """Apply `change` (current items -> new items, archive records) to items.json in one
    transaction: the archive records appended, the file replaced. Reads the file under the
    lock, so a change made since the extraction started is the base (and a hand edit landing
    in the last instant is re-based by the transaction). Returns whether anything changed."""
    path = paths.root / rel
    ensure_inside(paths, path)
    with transaction(paths) as tx:
        raw = tx.read(path) if tx.exists(path) else None
        new, archived = change(parse_items(raw, rel) if raw is not None else [])
        data = items_bytes(new)
        if data == raw:
            return False
        if archived:
            archive = paths.root / archive_rel(rel)
            ensure_inside(paths, archive)
            tx.append_jsonl(archive, archived)
        if raw is None:
            tx.create(path, data)
        else:  # re-applied to a hand edit that lands before the commit
            tx.edit(path, lambda now: data if now == raw else _rebased(now, rel, change))
    return True


def _rebased(raw: bytes, rel: str, change: Callable[[list[Item]], tuple[list[Item], Any]]) -> bytes:
    return items_bytes(change(parse_items(raw, rel))[0])


# -- the registry (machine-local) ------------------------------------------------------------
@dataclass
class Registry:
    """What vb knows of a project on this machine: its root, the paths extracted from it,
    each file's stamp, and the digest of the items.json it last wrote."""

    project: str
    root: str
    paths: list[str] = field(default_factory=list)
    files: dict[str, Stamp] = field(default_factory=dict)
    items_digest: str = ""
    extracted_at: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "project": self.project,
            "root": self.root,
            "paths": self.paths,
            "files": {rel: list(stamp) for rel, stamp in sorted(self.files.items())},
            "items_digest": self.items_digest,
            "extracted_at": self.extracted_at,
        }


def registry_dir(paths: VaultPaths) -> Path:
    return paths.cache_dir / "projects"


def load_registry(paths: VaultPaths, project: str) -> Registry | None:
    try:
        data = json.loads((registry_dir(paths) / f"{project}.json").read_text("utf-8"))
        files = {
            str(rel): (int(s[0]), int(s[1]), str(s[2])) for rel, s in dict(data["files"]).items()
        }
        return Registry(
            str(data["project"]),
            str(data["root"]),
            [str(p) for p in data.get("paths", [])],
            files,
            str(data.get("items_digest", "")),
            str(data.get("extracted_at", "")),
        )
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None  # a cache: missing or damaged means "read everything again"


def save_registry(paths: VaultPaths, registry: Registry) -> None:
    write_cache(
        registry_dir(paths) / f"{registry.project}.json",
        json.dumps(registry.to_json(), ensure_ascii=False, indent=1),
    )


def registries(paths: VaultPaths) -> list[Registry]:
    """Every project extracted on this machine."""
    found = []
    with contextlib.suppress(OSError):
        for file in sorted(registry_dir(paths).glob("*.json")):
            registry = load_registry(paths, file.stem)
            if registry is not None:
                found.append(registry)
    return found
