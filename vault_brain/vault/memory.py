"""Memory operations on files: add, show, update, delete (archive), restore, list.

Each returns plain data; the CLI prints it. Writes go through `vault.store` under the
vault lock, and the index is refreshed for exactly the paths that changed.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

from vault_brain.core import Vault
from vault_brain.errors import NotFoundError, VaultBrainError
from vault_brain.paths import VaultPaths
from vault_brain.vault.frontmatter import (
    edit_front_matter,
    parse_text,
    replace_body,
    strip_front_matter_block,
)
from vault_brain.vault.notes import (
    ARCHIVE,
    Note,
    load_note,
    normalize_tag,
    original_relpath,
    slugify,
)
from vault_brain.vault.store import Transaction, note_path, now_iso, safe_relpath, transaction

LIST_KEYS = (
    *("id", "path", "title", "type", "category", "tags", "pinned", "credit"),
    *("access_count", "updated", "archived", "problem"),
)
ARCHIVE_KEYS = ("archived", "archive_reason", "archived_from", "archive_added_front_matter")


def _clean_tags(tags: list[str] | None) -> list[str]:
    out: list[str] = []
    for raw in tags or []:
        for part in raw.split(","):
            tag = normalize_tag(part)
            if tag and tag not in out:
                out.append(tag)
    return out


def resolve(vault: Vault, ref: str, include_archive: bool = True) -> str:
    """An id or a vault-relative path -> the note's relative path."""
    if "/" in ref or "\\" in ref or ref.lower().endswith(".md"):
        rel = safe_relpath(vault.paths, ref)
        if not (vault.paths.root / PurePosixPath(rel)).is_file():
            raise NotFoundError(f"no note at {rel!r}", hint="check the path with `vb list`")
        return rel
    vault.reconcile()
    stored = vault.index.stored_by_id(ref, include_archive=include_archive)
    if stored is None:
        raise NotFoundError(
            f"no note with id {ref!r}", hint="find ids with `vb list` or `vb search`"
        )
    return str(stored["path"])


def _unique_target(
    vault: Vault, folder: str, base_slug: str, type_: str, category: str
) -> tuple[str, str]:
    n = 1
    while True:
        slug = base_slug if n == 1 else f"{base_slug}-{n}"
        rel = f"{folder}/{slug}.md"
        note_id = f"{type_}-{category}-{slug}"
        exists = (vault.paths.root / rel).exists() or (vault.paths.archive_dir / rel).exists()
        if not exists and vault.index.stored_by_id(note_id) is None:
            return rel, note_id
        n += 1


def add(
    vault: Vault,
    type_: str,
    name: str,
    content: str,
    category: str | None = None,
    tags: list[str] | None = None,
    pinned: bool = False,
) -> Note:
    type_ = type_.strip().lower()
    if type_ not in ("entity", "episode"):
        raise VaultBrainError(f"unknown type {type_!r}", hint="use --type entity or --type episode")
    if not name.strip():
        raise VaultBrainError("a memory needs a name", hint="pass --name 'Short title'")
    if not content.strip():
        raise VaultBrainError(
            "a memory needs content", hint="pass the content as an argument or on stdin"
        )
    if type_ == "entity" and not category:
        raise VaultBrainError(
            "an entity needs a category", hint="pass --category people|projects|preferences"
        )
    cat = slugify(category or "general")
    now = now_iso()
    folder = f"entities/{cat}" if type_ == "entity" else f"episodes/{now[:7]}"
    vault.reconcile()
    with transaction(vault.paths) as tx:
        rel, note_id = _unique_target(vault, folder, slugify(name), type_, cat)
        meta: dict[str, Any] = {
            "id": note_id,
            "type": type_,
            "category": cat,
            "title": name.strip(),
            "tags": _clean_tags(tags),
            "created": now,
            "updated": now,
            "credit": vault.policy["initial_score"],
        }
        if pinned:
            meta["pinned"] = True
        body = content.strip() + "\n"
        raw = edit_front_matter(b"", meta) + body.encode("utf-8")
        full = vault.paths.root / rel
        if full.exists():  # lost a race with a hand-made file of the same name
            raise VaultBrainError(
                f"{rel} appeared while adding; nothing written", hint="run the command again"
            )
        tx.create(full, raw)
        vault.index.refresh([rel])
    return load_note(vault.paths.root, rel)


def show(vault: Vault, ref: str) -> Note:
    return load_note(vault.paths.root, resolve(vault, ref))


def update(
    vault: Vault,
    ref: str,
    content: str | None = None,
    tags: list[str] | None = None,
    pinned: bool | None = None,
    append: bool = False,
) -> Note:
    if content is None and tags is None and pinned is None:
        raise VaultBrainError("nothing to update", hint="pass --content, --tag or --pin/--unpin")
    rel = resolve(vault, ref)
    with transaction(vault.paths) as tx:
        full = note_path(vault.paths, rel)
        raw = full.read_bytes()
        changes: dict[str, Any] = {"updated": now_iso()}
        if tags is not None:
            changes["tags"] = _clean_tags(tags)
        if pinned is not None:
            changes["pinned"] = pinned
        new = edit_front_matter(raw, changes, where=rel)
        if content is not None:
            body = parse_text(raw).body
            text = (
                body.rstrip("\n") + "\n\n" + content.strip() + "\n"
                if append
                else content.strip() + "\n"
            )
            new = replace_body(new, text)
        tx.write(full, new)
        vault.index.refresh([rel])
    return load_note(vault.paths.root, rel)


def archive_into(
    tx: Transaction, paths: VaultPaths, rel: str, reason: str, extra: dict[str, Any] | None = None
) -> str:
    """Within a transaction: move `rel` to archive/ with reason and date; returns the new path."""
    src = note_path(paths, rel)
    raw = src.read_bytes()
    dest_rel = f"{ARCHIVE}/{rel}"
    n = 2
    while (paths.root / dest_rel).exists():
        p = PurePosixPath(rel)
        dest_rel = f"{ARCHIVE}/{p.with_name(f'{p.stem}-{n}{p.suffix}').as_posix()}"
        n += 1
    changes: dict[str, Any] = {
        "archived": now_iso(),
        "archive_reason": reason,
        "archived_from": rel,
    }
    changes.update(extra or {})
    if not parse_text(raw).has_front_matter:
        changes["archive_added_front_matter"] = True
    tx.move(src, paths.root / PurePosixPath(dest_rel), edit_front_matter(raw, changes, where=rel))
    return dest_rel


def restore_from(tx: Transaction, paths: VaultPaths, rel: str) -> str:
    """Within a transaction: move an archived note back, as it was before archiving."""
    src = note_path(paths, rel)
    raw = src.read_bytes()
    meta = parse_text(raw).meta
    target = safe_relpath(paths, str(meta.get("archived_from") or original_relpath(rel)))
    if PurePosixPath(target).parts[0] == ARCHIVE:
        target = original_relpath(target)
    dest = paths.root / PurePosixPath(target)
    if dest.exists():
        raise VaultBrainError(
            f"cannot restore {rel}: {target} exists",
            hint="rename or archive the note at that path first",
        )
    new = edit_front_matter(raw, remove=[*ARCHIVE_KEYS, "merged_into"], where=rel)
    if meta.get("archive_added_front_matter"):
        new = strip_front_matter_block(new)
    tx.move(src, dest, new)
    return target


def archive(vault: Vault, ref: str, reason: str) -> tuple[Note, str]:
    """Move a note to archive/ (same relative path) with the reason and date in front matter."""
    rel = resolve(vault, ref)
    if PurePosixPath(rel).parts[0] == ARCHIVE:
        raise VaultBrainError(f"{rel} is already archived", hint="`vb restore` brings it back")
    with transaction(vault.paths) as tx:
        dest_rel = archive_into(tx, vault.paths, rel, reason)
        vault.index.refresh([rel, dest_rel])
    return load_note(vault.paths.root, dest_rel), rel


def restore(vault: Vault, ref: str) -> tuple[Note, str]:
    """Bring an archived note back to where it was, byte for byte as it was archived."""
    rel = resolve(vault, ref)
    if PurePosixPath(rel).parts[0] != ARCHIVE:
        raise VaultBrainError(
            f"{rel} is not archived", hint="only notes under archive/ can be restored"
        )
    with transaction(vault.paths) as tx:
        target = restore_from(tx, vault.paths, rel)
        vault.index.refresh([rel, target])
    return load_note(vault.paths.root, target), rel


def list_notes(
    vault: Vault,
    type_: str | None = None,
    category: str | None = None,
    tag: str | None = None,
    include_archive: bool = False,
    archived_only: bool = False,
    problems_only: bool = False,
) -> list[dict[str, Any]]:
    from whoosh.query import And, Every, Term

    vault.reconcile()
    parts: list[Any] = []
    if type_:
        parts.append(Term("type", type_))
    if category:
        parts.append(Term("category", slugify(category)))
    if tag:
        parts.append(Term("tags", normalize_tag(tag)))
    if archived_only:
        parts.append(Term("archived", True))
    elif not include_archive:
        parts.append(Term("archived", False))
    if problems_only:
        parts.append(Term("problem", True))
    query = And(parts) if parts else Every()
    rows: list[dict[str, Any]] = [
        {k: row.get(k) for k in LIST_KEYS} for row in vault.index.rows_for(query)
    ]
    rows.sort(key=lambda r: str(r["path"]))
    return rows
