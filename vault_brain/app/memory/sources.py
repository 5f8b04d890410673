"""Searching more than notes: extracted items, a project's source files and session
transcripts, through the knowledge index (`storage.index.knowledge`), kept current the way
the notes' index is: before each search, what changed since it was indexed is read again.

- items: each project's items.json (one group per file, replaced when its stamp changes);
- sources: the files of every project extracted on this machine, in chunks of prose with
  their first line (one group per file);
- sessions: user and assistant messages of `sessions/*.jsonl` (never tool calls or their
  output); a transcript only grows, so only its new lines are read.

What is shown passes the gate's redaction, as note snippets do.
"""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vault_brain.app.memory.results import SearchHit, shown
from vault_brain.domain.errors import VaultBrainError
from vault_brain.domain.knowledge.extract import Item, parse_document
from vault_brain.domain.sessions.records import record_kind
from vault_brain.storage.files import stamp as file_stamp
from vault_brain.storage.index.knowledge import KnowledgeHit, KnowledgeIndex
from vault_brain.storage.knowledge.items import Registry, read_items, registries
from vault_brain.storage.knowledge.project_files import vault_folders, walk

if TYPE_CHECKING:
    from vault_brain.app.memory.vault import Vault

log = logging.getLogger(__name__)
KINDS = ("items", "sessions", "sources")
_SESSION_MESSAGES = ("user", "assistant")

Docs = dict[str, tuple[Any, list[dict[str, Any]]]]


def items_files(vault: Vault) -> list[str]:
    """Every project's items file in the vault (relative), found by `items_path`."""
    pattern = vault.policy.items_path.replace("{project}", "*")
    with contextlib.suppress(OSError, ValueError):
        return sorted(p.relative_to(vault.root).as_posix() for p in vault.root.glob(pattern))
    return []


def _items(vault: Vault, state: dict[str, Any], replace: Docs, drop: list[str]) -> None:
    """An items file whose stamp changed is read; of its items, only those of the source
    files whose items changed are indexed again (one group per items file and source)."""
    present = set()
    for rel in items_files(vault):
        files = f"items:{rel}"  # the file's stamp, and the groups of its sources
        found = file_stamp(vault.root / rel)
        current = list(found) if found is not None else None  # as state.json holds it
        known = state.get(files)
        if current is None or (isinstance(known, dict) and known.get("stamp") == current):
            present.add(files)
            present.update(known.get("groups", []) if isinstance(known, dict) else [])
            continue
        try:
            items = read_items(vault.root / rel)[0]
        except VaultBrainError as exc:  # a broken items file: searchable again once fixed
            log.warning("%s", exc.one_line())
            items = []
        by_source: dict[str, list[Item]] = {}
        for item in items:
            by_source.setdefault(item.source_file, []).append(item)
        groups = [f"{files}:{source}" for source in sorted(by_source)]
        present.update([files, *groups])
        replace[files] = ({"stamp": current, "groups": groups}, [])
        for group, source in zip(groups, sorted(by_source), strict=True):
            digest = _digest(by_source[source])
            if state.get(group) != digest:
                replace[group] = (digest, [_item_doc(rel, i) for i in by_source[source]])
    drop.extend(g for g in state if g.startswith("items:") and g not in present)


def _digest(items: list[Item]) -> str:
    """What the index holds of a source's items: an id stands for its type and text."""
    import hashlib

    data = "\n".join(f"{i.id}\t{i.line_number}\t{i.title}\t{i.section}" for i in items)
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


def _item_doc(rel: str, item: Item) -> dict[str, Any]:
    return {
        "key": f"item:{rel}:{item.id}",
        "kind": "items",
        "project": item.project,
        "type": item.type,
        "path": item.source_file,
        "line": item.line_number,
        "title": item.title,
        "body": f"{item.content}\n{item.section}",
    }


def _sources(vault: Vault, state: dict[str, Any], replace: Docs, drop: list[str]) -> None:
    present = set()
    for registry in registries(vault.paths):
        for group, stamp, docs in _source_groups(vault, registry, state):
            present.add(group)
            if docs is not None:
                replace[group] = (stamp, docs)
    drop.extend(g for g in state if g.startswith("src:") and g not in present)


def _source_groups(
    vault: Vault, registry: Registry, state: dict[str, Any]
) -> list[tuple[str, Any, list[dict[str, Any]] | None]]:
    """(group, stamp, documents or None when unchanged) for each file of a project."""
    root = Path(registry.root)
    files, _ = walk(root, [Path(p) for p in registry.paths], vault_folders(vault.root))
    out: list[tuple[str, Any, list[dict[str, Any]] | None]] = []
    for source in files:
        group = f"src:{registry.project}:{source.rel}"
        stamp = [source.mtime_ns, source.size]
        if state.get(group) == stamp:
            out.append((group, stamp, None))
            continue
        try:
            text = source.path.read_text("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        docs = [
            {
                "key": f"{group}:{chunk.line}",
                "kind": "sources",
                "project": registry.project,
                "type": "source",
                "path": source.rel,
                "line": chunk.line,
                "title": chunk.section or source.rel,
                "body": chunk.text,
            }
            for chunk in parse_document(text, items=False).chunks
        ]
        out.append((group, stamp, docs))
    return out


def _sessions(
    vault: Vault, state: dict[str, Any], replace: Docs, drop: list[str], append: Docs
) -> None:
    present = set()
    for path in vault.paths.transcripts():
        session = path.stem
        group = f"ses:{session}"
        present.add(group)
        try:
            st = path.stat()
        except OSError:
            continue
        old = state.get(group)
        grows = isinstance(old, list) and len(old) == 2 and old[0] == st.st_ino
        start = int(old[1]) if grows and old is not None and old[1] <= st.st_size else 0
        if grows and start == st.st_size:
            continue
        docs, end = _messages(path, session, start)
        (append if start else replace)[group] = ([st.st_ino, end], docs)
    drop.extend(g for g in state if g.startswith("ses:") and g not in present)


def _messages(path: Path, session: str, start: int) -> tuple[list[dict[str, Any]], int]:
    """The messages of a transcript from byte `start` to its last complete line, and the
    offset after that line."""
    import json

    try:
        with open(path, "rb") as handle:
            handle.seek(start)
            data = handle.read()
    except OSError:
        return [], start
    complete = data[: data.rfind(b"\n") + 1]
    docs: list[dict[str, Any]] = []
    for line in complete.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict) or record_kind(record) not in _SESSION_MESSAGES:
            continue
        content = record.get("content")
        if not isinstance(content, str) or not content.strip():
            continue
        message = str(record.get("id") or "")
        docs.append(
            {
                "key": f"ses:{session}:{message or len(docs)}",
                "kind": "sessions",
                "project": "",
                "type": record_kind(record),
                "path": f"sessions/{path.name}",
                "session": session,
                "message": message,
                "title": f"{session} {message}".strip(),
                "body": content,
            }
        )
    return docs, start + len(complete)


def refresh(vault: Vault, kinds: tuple[str, ...] = KINDS) -> None:
    """Bring the knowledge index up to date with the files, for the kinds named."""
    index = KnowledgeIndex(vault.paths)
    state = index.state()
    replace: Docs = {}
    append: Docs = {}
    drop: list[str] = []
    if "items" in kinds:
        _items(vault, state, replace, drop)
    if "sources" in kinds:
        _sources(vault, state, replace, drop)
    if "sessions" in kinds:
        _sessions(vault, state, replace, drop, append)
    index.update(replace, drop, append)


def refresh_quietly(vault: Vault, kinds: tuple[str, ...] = ("items", "sources")) -> None:
    """`refresh` after a write: the files are the truth, so an index that cannot be
    updated now is only logged (the next search tries again)."""
    try:
        refresh(vault, kinds)
    except (VaultBrainError, OSError) as exc:
        log.warning("knowledge index not updated: %s", exc)


def search(vault: Vault, query: str, k: int, kinds: tuple[str, ...]) -> list[KnowledgeHit]:
    kinds = tuple(kind for kind in kinds if kind in KINDS)
    if not kinds:
        return []
    refresh(vault, kinds)
    return KnowledgeIndex(vault.paths).search(query, k, kinds)


def hit_of(hit: KnowledgeHit, score: float) -> SearchHit:
    """A knowledge result in the search vocabulary: where it came from, to the line (a
    transcript's text is a conversation's, the rest came by extraction from projects)."""
    written = "conversation" if hit.kind == "sessions" else "extraction"
    return SearchHit(
        id=hit.key.rsplit(":", 1)[-1] if hit.kind == "items" else hit.key,
        path=hit.path,
        title=shown(hit.title, written, title=True),
        type=hit.type,
        category=hit.project,
        score=round(score, 6),
        snippet=shown(hit.snippet, written),
        source=hit.kind,
        line=hit.line,
        session=hit.session,
        message=hit.message,
        written_by=written,
    )
