"""Memory operations on note files: add, show, update, archive, restore, list.

Writes go through one transaction under the vault lock; the index is refreshed for exactly
the paths that changed after the files are committed, and a failure there never undoes or
fails the write (the next read reconciles).
"""

from __future__ import annotations

import contextlib
import unicodedata
from pathlib import PurePosixPath
from typing import Any

from vault_brain.app.memory.vault import Vault
from vault_brain.domain.clock import now_iso
from vault_brain.domain.errors import LockedError, NotFoundError, VaultBrainError
from vault_brain.domain.notes.model import (
    ARCHIVE,
    PERSON,
    Filters,
    Note,
    id_key,
    is_vb_source,
    merged_source,
    note_source,
    original_relpath,
)
from vault_brain.domain.policy.scopes import GLOBAL
from vault_brain.domain.text import check_category, check_choice, clean_tags, slugify
from vault_brain.storage.files import note_path, safe_relpath
from vault_brain.storage.index.renames import follow
from vault_brain.storage.index.scan import is_ignored_rel
from vault_brain.storage.notes.frontmatter import parse_text
from vault_brain.storage.notes.frontmatter_edit import (
    edit_front_matter,
    replace_body,
    strip_front_matter_block,
)
from vault_brain.storage.notes.read import load_note
from vault_brain.storage.paths import VaultPaths, episode_folder
from vault_brain.storage.transaction import Transaction

ARCHIVE_KEYS = ("archived", "archive_reason", "archived_from", "archive_added_front_matter")
WRITABLE_TYPES = ("entity", "episode")


def resolve(
    vault: Vault,
    ref: str,
    include_archive: bool = True,
    memory_only: bool = False,
    notices: list[str] | None = None,
) -> str:
    """An id or a vault-relative path -> the note's relative path. `memory_only` refuses
    paths that are not memory notes (STRATEGY.md, MEMORY.md, transcripts, logs, .vb/). An
    old id or path of a note the index saw renamed finds the note where it is now, and adds
    a one-line notice saying so to `notices`."""
    ref = _as_stored(vault, ref)
    if "/" in ref or "\\" in ref or ref.lower().endswith(".md"):
        rel = safe_relpath(vault.paths, ref)
        if memory_only and is_ignored_rel(rel):
            raise NotFoundError(
                f"{ref!r} is not a memory note",
                hint="give a note id from `vb search`, or a note path like "
                "entities/people/alice.md",
            )
        if not vault.paths.note(rel).is_file():
            with contextlib.suppress(LockedError):
                vault.reconcile()  # (a rename made just now is seen by it)
            moved = renamed(vault, rel, include_archive, notices)
            if moved is None:
                raise NotFoundError(f"no note at {rel!r}", hint="check the path with `vb list`")
            return moved
        return rel
    try:
        vault.reconcile()
    except LockedError:  # another process holds the index: read it as it is, plus the files
        found = _find_unindexed(vault, ref, include_archive)  # changed since (no index write)
        if found is None:
            found = renamed(vault, ref, include_archive, notices)
        if found is None:
            raise
        return found
    stored = vault.index.stored_by_id(ref, include_archive=include_archive)
    if stored is None:
        moved = renamed(vault, ref, include_archive, notices)
        if moved is None:
            raise NotFoundError(
                f"no note with id {ref!r}", hint="find ids with `vb list` or `vb search`"
            )
        return moved
    return str(stored["path"])


def renamed(
    vault: Vault, ref: str, include_archive: bool = True, notices: list[str] | None = None
) -> str | None:
    """Where the note an old id or path (`ref`) named is now, if the index saw it renamed
    or moved (storage/index/renames.py) and it is still there; a notice in `notices`."""
    move = follow(vault.paths, ref)
    if move is None or not vault.paths.note(move.new_path).is_file():
        return None
    rel = move.new_path
    if not include_archive and PurePosixPath(rel).parts[0] == ARCHIVE:
        return None
    note = load_note(vault.paths.root, rel)
    if notices is not None:
        now = f"{rel}" if note.id == ref else f"{rel} (id {note.id})"
        how = "renamed" if _folder(move.old_path) == _folder(rel) else "moved"
        notices.append(f"{ref} was {how}: the note is now {now}")
    return rel


def _folder(rel: str) -> str:
    return PurePosixPath(rel).parent.as_posix()


def _as_stored(vault: Vault, ref: str) -> str:
    """`ref` in the Unicode form the vault uses (an id or path typed in decomposed form, as
    some keyboards and macOS produce, finds the note written in composed form)."""
    composed = unicodedata.normalize("NFC", ref)
    if composed == ref:
        return ref
    if "/" in ref or ref.lower().endswith(".md"):
        return composed if not vault.paths.note(ref).exists() else ref
    return composed


def _find_unindexed(vault: Vault, ref: str, include_archive: bool) -> str | None:
    """The note with id `ref` when the index cannot be updated now: the notes changed since
    the last reconcile are read from their files, the rest is taken from the index."""
    if not vault.index.exists():
        return None
    diff = vault.index.pending()
    for rel in diff.added + diff.updated:
        note = load_note(vault.paths.root, rel)
        if note.id == ref and (include_archive or not note.archived):
            return rel
    stored = vault.index.stored_by_id(ref, include_archive=include_archive)
    if stored is None or str(stored["path"]) in diff.removed + diff.updated:
        return None
    return str(stored["path"])


def unique_path(
    paths: VaultPaths, folder: str, slug: str, taken: set[str] | None = None
) -> tuple[str, str]:
    """A free `folder/<slug>[-n].md` (free in the vault, in archive/ and in `taken`), and the
    slug it got. The one way vb picks a name for a new note."""
    n = 1
    while True:
        name = slug if n == 1 else f"{slug}-{n}"
        rel = f"{folder}/{name}.md"
        used = (taken is not None and rel in taken) or paths.note(rel).exists()
        if not used and not (paths.archive_dir / rel).exists():
            if taken is not None:
                taken.add(rel)
            return rel, name
        n += 1


def new_note_bytes(meta: dict[str, Any], body: str) -> bytes:
    """A new note: front matter with `meta`, then the body (one trailing newline)."""
    return edit_front_matter(b"", meta) + (body.strip() + "\n").encode("utf-8")


def check_new(type_: str, name: str, content: str, category: str | None) -> str:
    """The arguments of a new memory checked; returns its type, normalised."""
    type_ = check_choice(type_, WRITABLE_TYPES, "type")
    if not name.strip():
        raise VaultBrainError("a memory needs a name", hint="pass --name 'Short title'")
    if not content.strip():
        raise VaultBrainError(
            "a memory needs content", hint="pass the content as an argument or on stdin"
        )
    if type_ == "entity" and not (category or "").strip():
        raise VaultBrainError(
            "an entity needs a category", hint="pass --category people|projects|preferences"
        )
    return type_


def add(
    vault: Vault,
    type_: str,
    name: str,
    content: str,
    category: str | None = None,
    tags: list[str] | None = None,
    pinned: bool = False,
    scope: str = GLOBAL,
    *,
    private: bool = False,
    source: str = PERSON,
) -> Note:
    """A new note; `private` (stored with --allow-secret) marks it `private: true`; `source`
    says who wrote it (`domain.notes.model.SOURCES`)."""
    type_ = check_new(type_, name, content, category)
    cat = slugify(check_category(category or "general"))
    now = now_iso()
    folder = f"entities/{cat}" if type_ == "entity" else episode_folder(vault.paths, now)
    with vault.transaction() as tx:
        rel, slug = _free_target(vault, folder, slugify(name), type_, cat)
        meta: dict[str, Any] = {
            "id": f"{type_}-{cat}-{slug}",
            "type": type_,
            "category": cat,
            "title": name.strip(),
            "tags": clean_tags(tags),
            "created": now,
            "updated": now,
            "credit": vault.policy.initial_score,
            "source": source,
        }
        if pinned:
            meta["pinned"] = True
        if scope != GLOBAL:
            meta["scope"] = scope
        if private:
            meta["private"] = True
        tx.create(vault.paths.note(rel), new_note_bytes(meta, content))
    vault.refresh([rel])
    return load_note(vault.paths.root, rel)


def _free_target(
    vault: Vault, folder: str, slug: str, type_: str, category: str
) -> tuple[str, str]:
    """A free path whose id no other note (e.g. a hand-made one elsewhere) already uses. The
    index is reconciled only if no other process holds it: a cache never stalls a write."""
    with contextlib.suppress(LockedError):
        vault.reconcile(timeout=0)
    taken: set[str] = set()
    while True:
        rel, name = unique_path(vault.paths, folder, slug, taken)
        if (
            not vault.index.exists()
            or vault.index.stored_by_id(f"{type_}-{category}-{name}") is None
        ):
            return rel, name


def show(vault: Vault, ref: str, notices: list[str] | None = None) -> Note:
    return load_note(vault.paths.root, resolve(vault, ref, notices=notices))


def update(
    vault: Vault,
    ref: str,
    content: str | None = None,
    tags: list[str] | None = None,
    pinned: bool | None = None,
    append: bool = False,
    *,
    private: bool = False,
    source: str = PERSON,
) -> Note:
    """`private` (new content stored with --allow-secret) marks the note `private: true`;
    a note once private stays so (a person removes the key by hand). New content records
    its writer in `source` (`domain.notes.model.merged_source`), unless the key is the person's
    own (a clipping's URL)."""
    if content is None and tags is None and pinned is None:
        raise VaultBrainError("nothing to update", hint="pass --content, --tag or --pin/--unpin")
    if content is not None and not content.strip():
        raise VaultBrainError("the new content is empty", hint="give the note's new text")
    rel = resolve(vault, ref)
    changes: dict[str, Any] = {"updated": now_iso()}
    if tags is not None:
        changes["tags"] = clean_tags(tags)
    if pinned is not None:
        changes["pinned"] = pinned
    if private:
        changes["private"] = True

    def change(raw: bytes) -> bytes:
        keys = {**id_key(rel, parse_text(raw).meta), **changes}
        if content is not None:
            keys.update(_source_change(parse_text(raw).meta.get("source"), source, append))
        new = edit_front_matter(raw, keys, where=rel)
        if content is None:
            return new
        if append:
            body = parse_text(raw).body.rstrip("\n") + "\n\n" + content.strip() + "\n"
            return replace_body(new, body)
        return replace_body(new, content.strip() + "\n")

    with vault.transaction() as tx:
        tx.edit(note_path(vault.paths, rel), change)
    vault.refresh([rel])
    return load_note(vault.paths.root, rel)


def _source_change(old: Any, writer: str, append: bool) -> dict[str, Any]:
    """The `source` key after `writer` changes a note's text ({} when it stays as it is)."""
    if not is_vb_source(old):
        return {}  # the person's own key (e.g. a clipping's URL): theirs, never overwritten
    now = merged_source(note_source(old), writer, append=append)
    return {} if now == note_source(old) and (old or now == PERSON) else {"source": now}


def archive_into(
    tx: Transaction, paths: VaultPaths, rel: str, reason: str, extra: dict[str, Any] | None = None
) -> str:
    """Within a transaction: move `rel` to archive/ with reason and date; returns the new path."""
    src = note_path(paths, rel)
    raw = tx.read(src)
    dest_rel = f"{ARCHIVE}/{rel}"
    if tx.exists(paths.note(dest_rel)):
        parent = PurePosixPath(dest_rel).parent.as_posix()
        dest_rel, _ = unique_path(paths, parent, PurePosixPath(rel).stem)
    changes: dict[str, Any] = {
        "archived": now_iso(),
        "archive_reason": reason,
        "archived_from": rel,
    }
    changes.update(extra or {})
    if not parse_text(raw).has_front_matter:
        changes["archive_added_front_matter"] = True
    tx.move(src, paths.note(dest_rel), edit_front_matter(raw, changes, where=rel))
    return dest_rel


def restore_from(tx: Transaction, paths: VaultPaths, rel: str) -> str:
    """Within a transaction: move an archived note back, as it was before archiving."""
    src = note_path(paths, rel)
    raw = tx.read(src)
    meta = parse_text(raw).meta
    target = safe_relpath(paths, str(meta.get("archived_from") or original_relpath(rel)))
    if PurePosixPath(target).parts[0] == ARCHIVE:
        target = original_relpath(target)
    if tx.exists(paths.note(target)):
        raise VaultBrainError(
            f"cannot restore {rel}: {target} exists",
            hint="rename or archive the note at that path first",
        )
    new = edit_front_matter(raw, remove=[*ARCHIVE_KEYS, "merged_into"], where=rel)
    if meta.get("archive_added_front_matter"):
        new = strip_front_matter_block(new)
    tx.move(src, paths.note(target), new)
    return target


def archive(vault: Vault, ref: str, reason: str) -> tuple[Note, str]:
    """Move a note to archive/ (same relative path) with the reason and date in front matter."""
    rel = resolve(vault, ref)
    if PurePosixPath(rel).parts[0] == ARCHIVE:
        raise VaultBrainError(f"{rel} is already archived", hint="`vb restore` brings it back")
    with vault.transaction() as tx:
        dest_rel = archive_into(tx, vault.paths, rel, reason)
    vault.refresh([rel, dest_rel])
    return load_note(vault.paths.root, dest_rel), rel


def restore(vault: Vault, ref: str) -> tuple[Note, str]:
    """Bring an archived note back to where it was, byte for byte as it was archived."""
    rel = resolve(vault, ref)
    if PurePosixPath(rel).parts[0] != ARCHIVE:
        raise VaultBrainError(
            f"{rel} is not archived", hint="only notes under archive/ can be restored"
        )
    with vault.transaction() as tx:
        target = restore_from(tx, vault.paths, rel)
    vault.refresh([rel, target])
    return load_note(vault.paths.root, target), rel


def list_rows(vault: Vault, filters: Filters) -> list[dict[str, Any]]:
    vault.reconcile()
    return vault.index.list_rows(filters.normalized())
