"""`vb extract`: knowledge items from a project's files into `<project>/items.json`.

1. Walk the project's Markdown and text files; a file whose stamp (mtime, size) or digest is
   unchanged since the last extraction on this machine is not read again.
2. Parse each changed file offline (`domain.knowledge.extract`), and with a model configured ask
   it for more (`app.knowledge.extract_llm`); every item passes the gate.
3. In one transaction: the changed files' items replace theirs (unchanged text keeps its id
   and `extractedAt`), the items of files that are gone expire, and everything that leaves
   items.json is appended to its archive (`archive/items/<project>/items.expired.jsonl`).
   Items of other files are not touched.
4. The registry (`.vb/projects/<project>.json`) remembers the stamps; the knowledge index
   catches up (best effort: the files are the truth).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vault_brain.app.memory.results import Result, result
from vault_brain.domain.clock import now_iso
from vault_brain.domain.errors import VaultBrainError
from vault_brain.domain.knowledge.extract import Item, identify, parse_document
from vault_brain.domain.text import slugify
from vault_brain.storage.knowledge.items import (
    Registry,
    Stamp,
    digest,
    items_rel,
    load_registry,
    read_items,
    registries,
    save_items,
    save_registry,
)
from vault_brain.storage.knowledge.project_files import (
    SourceFile,
    common_root,
    relative,
    resolve_paths,
    vault_folders,
    walk,
)
from vault_brain.storage.regular import read_regular

if TYPE_CHECKING:
    from vault_brain.app.memory.vault import Vault

Progress = Callable[[int, int], None]


@result
class ItemChange(Result):
    """One item that `vb extract` adds, moves, replaces or expires."""

    action: str
    """added | moved (its line changed) | replaced (its text changed or vanished) | expired
    (its file is gone)."""
    id: str
    type: str
    title: str
    sourceFile: str
    lineNumber: int


@result
class ExtractResult(Result):
    project: str
    items_file: str
    """Where the project's items are, relative to the vault."""
    root: str
    """The project's folder; each item's sourceFile is relative to it."""
    files: int
    changed: list[str]
    """Files read and extracted again (new or changed since the last extraction)."""
    gone: list[str]
    """Files extracted before that no longer exist: their items expired."""
    items: int
    """Items in the project after this extraction."""
    changes: list[ItemChange]
    refused: dict[str, int]
    """Items the gate kept out, by reason (their text is not stored anywhere)."""
    skipped: list[str] = field(default_factory=list)
    """Files passed over, with why (too big, not a regular file, not UTF-8)."""
    extractor: str = "offline"
    """offline, or llm (a model extracted more, beside the offline rules)."""
    dry_run: bool = False
    seconds: float = 0.0


def check_project(name: str) -> str:
    slug = slugify(name, 64)
    if not name.strip() or (slug == "untitled" and name.strip().lower() != "untitled"):
        raise VaultBrainError(f"invalid project name {name!r}", hint="use letters, digits and '-'")
    return slug


def _plan_files(
    vault: Vault, given: list[str], project: str | None
) -> tuple[Registry, list[Path], bool]:
    """The project's registry (new or loaded), the folders and files to walk, and whether
    those are every path of the project (nothing given: all of them)."""
    paths = resolve_paths(given)
    name = check_project(project or (common_root(paths).name if paths else ""))
    registry = load_registry(vault.paths, name)
    if not paths:
        if registry is None:
            raise VaultBrainError(
                f"project {name!r} has not been extracted on this machine",
                hint="give its folder: vb extract PATH --project NAME",
            )
        return registry, [Path(p) for p in registry.paths], True
    if registry is None:
        registry = Registry(name, str(common_root(paths)))
    root = Path(registry.root)
    for path in paths:
        if relative(root, path) is None:
            raise VaultBrainError(
                f"{path} lies outside project {name!r}, whose folder is {root}",
                hint="extract it into another project (--project OTHER)",
            )
    return registry, paths, False


def _in_scope(rel: str, root: Path, walked: list[Path]) -> bool:
    """Whether a file known to the project lies under one of the paths walked now."""
    full = root / rel
    return any(full == p or p in full.parents for p in walked)


def extract(
    vault: Vault,
    given: list[str],
    project: str | None = None,
    *,
    dry_run: bool = False,
    progress: Progress | None = None,
) -> ExtractResult:
    started = time.perf_counter()
    registry, walked, everything = _plan_files(vault, given, project)
    root = Path(registry.root)
    rel = items_rel(vault.policy.items_path, registry.project)
    old_items, raw = read_items(vault.paths.root / rel)
    # items.json changed since this machine wrote it (a pull, a hand edit): read every file
    trusted = raw is not None and digest(raw) == registry.items_digest
    known = {item.id: item for item in old_items}
    sources, passed = walk(root, walked, vault_folders(vault.paths.root))
    skipped = [f"{r} ({why})" for r, why in passed.items()]
    stamps: dict[str, Stamp] = {}
    changed: dict[str, list[Item]] = {}
    refused: Counter[str] = Counter()
    now = now_iso()
    llm = vault.llm()
    for n, source in enumerate(sources, 1):
        if progress is not None:  # (the files done so far)
            progress(n - 1, len(sources))
        old = registry.files.get(source.rel)
        if trusted and old is not None and old[:2] == (source.mtime_ns, source.size):
            stamps[source.rel] = old
            continue
        data = _read(source, skipped)
        if data is None:
            continue
        stamp = (source.mtime_ns, source.size, digest(data))
        stamps[source.rel] = stamp
        if trusted and old is not None and old[2] == stamp[2]:
            continue
        text = data.decode("utf-8")
        doc = parse_document(text)
        drafts = doc.drafts
        refused.update(doc.refused)
        if llm is not None:
            # lazy: a model is configured
            from vault_brain.app.knowledge.extract_llm import more_drafts

            drafts = drafts + more_drafts(llm, text, source.rel, drafts, refused)
        changed[source.rel] = identify(drafts, source.rel, registry.project, now, known)
    if progress is not None:
        progress(len(sources), len(sources))
    present = {s.rel for s in sources} | set(passed)  # a file passed over keeps its items
    gone = sorted(
        r
        for r in {i.source_file for i in old_items} | set(registry.files)
        if r not in present and (everything or _in_scope(r, root, walked))
    )

    def change(current: list[Item]) -> tuple[list[Item], list[dict[str, Any]]]:
        return _replace(current, changed, set(gone), now)

    new_items = change(old_items)[0]
    changes = _changes(old_items, new_items, set(gone))
    if not dry_run:
        if changes or raw is None:
            save_items(vault.paths, rel, change)
            raw = (vault.paths.root / rel).read_bytes()
        registry.paths = sorted({*registry.paths, *(str(p) for p in walked)})
        registry.files = {r: s for r, s in {**registry.files, **stamps}.items() if r not in gone}
        registry.items_digest = digest(raw)
        registry.extracted_at = now
        save_registry(vault.paths, registry)
        _refresh_index(vault)
    return ExtractResult(
        project=registry.project,
        items_file=rel,
        root=str(root),
        files=len(sources),
        changed=sorted(changed),
        gone=gone,
        items=len(new_items),
        changes=changes,
        refused=dict(refused),
        skipped=skipped,
        extractor="offline" if llm is None else "llm",
        dry_run=dry_run,
        seconds=round(time.perf_counter() - started, 3),
    )


def _read(source: SourceFile, skipped: list[str]) -> bytes | None:
    try:
        data = read_regular(source.path)  # (a FIFO swapped in since the walk: refused)
        data.decode("utf-8")
    except UnicodeDecodeError:
        skipped.append(f"{source.rel} (not UTF-8 text)")
        return None
    except OSError as exc:
        skipped.append(f"{source.rel} ({exc.strerror or exc})")
        return None
    return data


def _replace(
    current: list[Item], changed: dict[str, list[Item]], gone: set[str], now: str
) -> tuple[list[Item], list[dict[str, Any]]]:
    """`current` with the changed files' items replaced and the gone files' items expired;
    every item that leaves, as an archive record."""
    kept = [i for i in current if i.source_file not in changed and i.source_file not in gone]
    fresh = [i for items in changed.values() for i in items]
    new_ids = {i.id for i in fresh}
    archived = [
        {**i.to_json(), "archivedAt": now, "reason": "source gone"}
        for i in current
        if i.source_file in gone
    ] + [
        {**i.to_json(), "archivedAt": now, "reason": "replaced"}
        for i in current
        if i.source_file in changed and i.id not in new_ids
    ]
    merged = sorted(kept + fresh, key=lambda i: (i.source_file, i.line_number, i.id))
    return merged, archived


def _changes(old: list[Item], new: list[Item], gone: set[str]) -> list[ItemChange]:
    before = {i.id: i for i in old}
    after = {i.id: i for i in new}
    out = []
    for item in new:
        was = before.get(item.id)
        if was is None:
            out.append(_change("added", item))
        elif was.line_number != item.line_number:
            out.append(_change("moved", item))
    for item in old:
        if item.id not in after:
            out.append(_change("expired" if item.source_file in gone else "replaced", item))
    return out


def _change(action: str, item: Item) -> ItemChange:
    return ItemChange(action, item.id, item.type, item.title, item.source_file, item.line_number)


def _refresh_index(vault: Vault) -> None:
    """The knowledge index catches up now (best effort; the next search would anyway)."""
    from vault_brain.app.memory.sources import refresh_quietly  # lazy

    refresh_quietly(vault)


@result
class ProjectState(Result):
    """A project extracted into this vault, for vb status."""

    project: str
    items_file: str
    items: int
    root: str | None
    """Its folder on this machine (None: extracted elsewhere, e.g. on another machine)."""
    extracted_at: str | None
    stale: list[str]
    """Files changed, added or gone since the last extraction on this machine (at most 20):
    `vb extract --project NAME` (or a running vb watch) brings their items up to date."""
    stale_count: int


def project_states(vault: Vault) -> list[ProjectState]:
    from vault_brain.app.memory.sources import items_files  # lazy: the knowledge index

    known = {r.project: r for r in registries(vault.paths)}
    found: dict[str, ProjectState] = {}
    for rel in items_files(vault):
        try:
            items = read_items(vault.root / rel)[0]
        except VaultBrainError:
            items = []
        project = items[0].project if items else Path(rel).parent.name
        found[project] = ProjectState(project, rel, len(items), None, None, [], 0)
    for project, registry in known.items():
        state = found.setdefault(
            project,
            ProjectState(
                project, items_rel(vault.policy.items_path, project), 0, None, None, [], 0
            ),
        )
        state.root, state.extracted_at = registry.root, registry.extracted_at
        files, _ = walk(
            Path(registry.root), [Path(p) for p in registry.paths], vault_folders(vault.root)
        )
        now = {f.rel: (f.mtime_ns, f.size) for f in files}
        stale = sorted(
            {r for r, stamp in now.items() if registry.files.get(r, (0, 0, ""))[:2] != stamp}
            | {r for r in registry.files if r not in now}
        )
        state.stale, state.stale_count = stale[:20], len(stale)
    return sorted(found.values(), key=lambda s: s.project)
