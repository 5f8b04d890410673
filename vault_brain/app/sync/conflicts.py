"""`vb conflicts`: the conflict copies a merge wrote, listed and resolved.

A copy (`<note> (conflict <machine> <date>).md`, with `conflict_of: <note>`) holds the text
another machine had for a note both machines changed on the same lines; the note kept this
machine's text. Until it is resolved, a copy reaches no agent and earns no credit (the index
counts it as not current). Each resolution is a commit of its own:

- keep mine | theirs: "mine" is the text this machine wrote: the note's on the machine
  that merged, the copy's on the machine the copy is named after. Keeping the note's text
  leaves the note as it is; keeping the copy's gives the note the copy's text, with the
  note's id, counters, tags and aliases kept (the reads, credit and tags both machines gave
  were merged into it). The copy is archived either way.
- merge: both texts in the note, one after the other under a heading each, for the person
  to edit into one; the copy is archived.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from vault_brain.app.memory.notes import archive_into, resolve
from vault_brain.app.memory.results import Result, result
from vault_brain.app.memory.vault import Vault
from vault_brain.domain.errors import NotFoundError, UsageError, VaultBrainError
from vault_brain.domain.notes.model import Filters
from vault_brain.domain.sync.counters import COUNTER_KEYS, LIST_KEYS
from vault_brain.domain.sync.merge import RESOLVED_SUBJECT, copy_origin, is_conflict_copy
from vault_brain.storage.files import note_path
from vault_brain.storage.git.repo import commit_vault
from vault_brain.storage.notes.frontmatter import parse_text
from vault_brain.storage.notes.frontmatter_edit import edit_front_matter, replace_body
from vault_brain.storage.paths import machine_name

SIDES = ("mine", "theirs", "merge")
KEPT_FROM_NOTE = ("id", "created", *COUNTER_KEYS, *LIST_KEYS)
"""What `keep theirs` keeps of the note: its identity, the merged counters, the union of
tags and aliases."""


@result
class ConflictCopy(Result):
    copy: str
    """The copy's path (vault-relative)."""
    note: str
    """The note it holds another machine's text of."""
    machine: str | None
    """The machine whose text the copy holds (from its name)."""
    day: str | None
    """The day the merge wrote it (YYYY-MM-DD)."""


@result
class ConflictList(Result):
    copies: list[ConflictCopy]
    tasks: list[str]
    """tasks.json conflict copies (tasks both machines changed; merge them with `vb tasks`)."""


@result
class ConflictResolved(Result):
    note: str
    copy: str
    kept: str
    """mine, theirs or merge."""
    archived: str
    """Where the copy went (under archive/)."""
    commit: str
    """What git did ('committed <sha>', or why not)."""


def _entry(copy: str, note: str) -> ConflictCopy:
    origin = copy_origin(copy)
    machine, day = origin if origin else (None, None)
    return ConflictCopy(copy=copy, note=note, machine=machine, day=day)


def list_conflicts(vault: Vault) -> ConflictList:
    """The live conflict copies (from the index: no walk over the vault)."""
    vault.reconcile()
    rows = vault.index.list_rows(Filters().normalized())
    copies = [_entry(r["path"], str(r["conflict_of"])) for r in rows if r.get("conflict_of")]
    tasks = sorted(p.name for p in vault.root.glob("tasks (conflict *).json"))
    return ConflictList(copies, tasks)


def _pair(vault: Vault, ref: str) -> tuple[str, str]:
    """(note, copy) that `ref` (either of them) names."""
    rel = resolve(vault, ref, include_archive=False)
    meta = parse_text(note_path(vault.paths, rel).read_bytes()).meta
    if meta.get("conflict_of") or is_conflict_copy(rel):
        note = meta.get("conflict_of")
        if not isinstance(note, str) or not note:
            raise VaultBrainError(
                f"{rel} is named as a conflict copy but has no conflict_of key",
                hint="add `conflict_of: <the note's path>` to its front matter, or rename it",
            )
        if not note_path(vault.paths, note).exists():
            raise NotFoundError(
                f"{rel} is a conflict copy of {note}, which no longer exists",
                hint=f"rename the copy to {PurePosixPath(note).name} to keep its text",
            )
        return note, rel
    copies = [c for c in list_conflicts(vault).copies if c.note == rel]
    if not copies:
        raise NotFoundError(
            f"{rel} has no conflict copy", hint="`vb conflicts` lists the notes that have one"
        )
    if len(copies) > 1:
        raise UsageError(
            f"{rel} has {len(copies)} conflict copies: {', '.join(c.copy for c in copies)}",
            hint="name the copy to resolve (its path) instead of the note",
        )
    return rel, copies[0].copy


def keep(vault: Vault, side: str, ref: str) -> ConflictResolved:
    """Resolve one conflict copy (see the module's docstring), as a commit of its own."""
    if side not in SIDES:
        raise UsageError(f"cannot keep {side!r}", hint=f"one of: {', '.join(SIDES)}")
    note, copy = _pair(vault, ref)
    origin = copy_origin(copy)
    copy_is_mine = origin is not None and origin[0] == machine_name()
    take_copy = side == ("mine" if copy_is_mine else "theirs")
    with vault.transaction() as tx:
        note_file, copy_file = note_path(vault.paths, note), note_path(vault.paths, copy)
        kept, other = tx.read(note_file), tx.read(copy_file)
        if take_copy:
            tx.write(note_file, _copy_with_note_keys(kept, other, note))
        elif side == "merge":
            tx.write(note_file, _both(kept, other, copy))
        archived = archive_into(tx, vault.paths, copy, f"conflict resolved: kept {side}")
    vault.refresh([note, copy, archived])
    if side == "merge":
        what = "both texts in the note, to edit into one"
    else:
        what = f"kept {'the copy' if take_copy else 'the note'}'s text ({side})"
    message = f"{RESOLVED_SUBJECT}{note}: {what}"
    return ConflictResolved(note, copy, side, archived, commit_vault(vault.paths, message))


def _copy_with_note_keys(kept: bytes, copy: bytes, note: str) -> bytes:
    """The copy's text with the note's id, counters, tags and aliases, no `conflict_of`."""
    meta = parse_text(kept).meta
    keys = {k: meta[k] for k in KEPT_FROM_NOTE if k in meta}
    copy_meta = parse_text(copy).meta
    drop = ["conflict_of", *(k for k in KEPT_FROM_NOTE if k in copy_meta and k not in meta)]
    return edit_front_matter(copy, keys, drop, where=note)


def _both(kept: bytes, copy: bytes, copy_rel: str) -> bytes:
    """The note with both bodies, each under a heading saying whose it is."""
    origin = copy_origin(copy_rel)
    other = f"The text in {copy_rel}"
    if origin:
        here = " (this machine)" if origin[0] == machine_name() else ""
        other = f"{origin[0]}'s text{here}, from the conflict copy of {origin[1]}"
    body = (
        "> [!warning] Two versions of this note\n"
        "> Edit the note into the text you want, then delete this box and both headings.\n\n"
        "## The text the note kept\n\n"
        f"{parse_text(kept).body.strip()}\n\n"
        f"## {other}\n\n"
        f"{parse_text(copy).body.strip()}\n"
    )
    return replace_body(kept, body)
