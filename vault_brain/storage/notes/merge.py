"""Three-way merges of the vault's files, bytes in and bytes out (the merge drivers' work).

- note: tags, aliases and vb's scalar keys both sides changed merged by rule
  (`domain.sync.merge.merge_keys`) and written into all three versions; counters merged
  by `domain.sync.merge.merge_counters` and written with the front
  matter editor where `counter_places` says (a key the ancestor has into all three
  versions, so those lines agree; a key it lacks into ours only, so it is written once and
  never clashes), then the rest merged line by line by `git merge-file`. Lines both sides
  changed: ours is the result and theirs comes back as `conflict` (for a conflict copy
  beside the note); a result never holds conflict markers.
- jsonl: record by record (`merge_records`).
- tasks: by task id (`merge_tasks`); tasks both sides changed come back as `conflict`.
- items: a project's items.json by item id (`merge_items`).
- ours: our version (a generated file, regenerated after the merge).

Anything unreadable raises `MergeError`: the driver exits non-zero and git reports the
file as conflicted, never half-merged.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from typing import Any

from vault_brain.domain.errors import VaultBrainError
from vault_brain.domain.sync.merge import (
    merge_items,
    merge_keys,
    merge_records,
    merge_tasks,
)
from vault_brain.storage.notes import merge_light
from vault_brain.storage.notes.frontmatter import parse_text
from vault_brain.storage.notes.frontmatter_edit import edit_front_matter
from vault_brain.storage.notes.merge_light import one_sided, place_counters, trivial

KINDS = ("note", "jsonl", "tasks", "items", "ours")


class MergeError(VaultBrainError):
    """A file the merge driver cannot merge (git then reports it as a conflict)."""


@dataclass
class Merged:
    data: bytes
    conflict: bytes | None = None
    """Theirs' text (or theirs' conflicting tasks) to keep in a conflict copy."""


def merge_bytes(kind: str, base: bytes, ours: bytes, theirs: bytes, where: str) -> Merged:
    if kind == "note":
        return merge_note(base, ours, theirs, where)
    if kind == "jsonl":
        return merge_jsonl(base, ours, theirs)
    if kind == "tasks":
        return merge_tasks_file(base, ours, theirs, where)
    if kind == "items":
        return merge_items_file(base, ours, theirs, where)
    if kind == "ours":
        return Merged(ours)
    raise MergeError(f"unknown merge kind {kind!r}", hint=f"one of: {', '.join(KINDS)}")


# --------------------------------------------------------------------------- notes


def merge_note(base: bytes, ours: bytes, theirs: bytes, where: str = "note") -> Merged:
    done = one_sided(base, ours, theirs)
    if done is not None:
        return Merged(done)
    raws = (base, ours, theirs)
    parsed = [parse_text(v) for v in raws]
    if any(p.error for p in parsed):
        return _lines_or_copy(base, ours, theirs)

    def write(i: int, values: dict[str, Any], drop: tuple[str, ...]) -> str | None:
        """Side `i` with the counters set to `values` and `drop` removed (only the lines
        that differ change)."""
        meta = parsed[i].meta
        changes = {k: v for k, v in values.items() if k not in meta or meta[k] != v}
        drop = tuple(k for k in drop if k in meta)
        try:
            raw = (
                edit_front_matter(raws[i], changes, drop, where=where)
                if changes or drop
                else raws[i]
            )
            return raw.decode("utf-8")
        except (VaultBrainError, UnicodeDecodeError):
            return None

    texts = place_counters([p.meta for p in parsed], write)
    if texts is None:
        return _lines_or_copy(base, ours, theirs)
    keys, drop = merge_keys(*(p.meta for p in parsed))
    if keys or drop:  # the same values in all three: those lines never clash
        with contextlib.suppress(VaultBrainError):  # (else the line merge decides)
            texts = [edit_front_matter(t, keys, drop, where=where) for t in texts]
    done = trivial(*texts)
    if done is not None:
        return Merged(done)
    merged = merge_lines(*texts)
    if merged is None or parse_text(merged).error:
        return Merged(texts[1], conflict=theirs)
    return Merged(merged)


def _lines_or_copy(base: bytes, ours: bytes, theirs: bytes) -> Merged:
    merged = merge_lines(base, ours, theirs)
    return Merged(merged) if merged is not None else Merged(ours, conflict=theirs)


def merge_lines(base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
    """`git merge-file`: the line-by-line three-way merge, or None when both sides changed
    the same lines (the same call the light merge of git's driver makes)."""
    try:
        return merge_light.merge_lines(base, ours, theirs)
    except OSError as exc:
        raise MergeError(
            f"cannot run git merge-file: {exc.strerror or exc}", hint="install git"
        ) from None
    except merge_light.MergeFileError as exc:
        raise MergeError(
            f"git merge-file failed: {exc}", hint="check that git is installed"
        ) from None


def conflict_copy_bytes(theirs: bytes, rel: str, suffix: str) -> bytes:
    """Theirs' note as a conflict copy: its own id (so the index holds both) and
    `conflict_of` naming the note; the text as it was."""
    parsed = parse_text(theirs)
    if parsed.error:
        return theirs
    changes: dict[str, Any] = {"conflict_of": rel}
    if parsed.meta.get("id"):
        changes["id"] = f"{parsed.meta['id']}-{suffix}"
    try:
        return edit_front_matter(theirs, changes, where=rel)
    except VaultBrainError:
        return theirs


# --------------------------------------------------------------------------- records


def _lines(data: bytes) -> list[str]:
    return data.decode("utf-8", "surrogateescape").splitlines(keepends=True)


def merge_jsonl(base: bytes, ours: bytes, theirs: bytes) -> Merged:
    if ours == theirs:
        return Merged(ours)
    merged = merge_records(_lines(base), _lines(ours), _lines(theirs))
    return Merged("".join(merged).encode("utf-8", "surrogateescape"))


# --------------------------------------------------------------------------- tasks


def _json(data: bytes, where: str, shape: type) -> Any:
    """The JSON document of a file being merged: an object or an array (`shape`), empty for
    an empty file; anything else a MergeError."""
    if not data.strip():
        return shape()
    try:
        doc = json.loads(data)
    except ValueError as exc:
        raise MergeError(
            f"{where} is not valid JSON ({exc})", hint="fix the file, then merge again"
        ) from None
    if not isinstance(doc, shape):
        what = "an object" if shape is dict else "an array"
        raise MergeError(f"{where} is not JSON {what}", hint="fix the file, then merge again")
    return doc


def merge_tasks_file(base: bytes, ours: bytes, theirs: bytes, where: str = "tasks.json") -> Merged:
    done = trivial(base, ours, theirs)
    if done is not None:
        return Merged(done)
    result = merge_tasks(*(_json(side, where, dict) for side in (base, ours, theirs)))
    data = (json.dumps(result.document, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    conflict = None
    if result.conflicts:
        doc = {"tasks": result.conflicts, "conflict_of": where}
        conflict = (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    return Merged(data, conflict)


# --------------------------------------------------------------------------- items


def merge_items_file(base: bytes, ours: bytes, theirs: bytes, where: str = "items.json") -> Merged:
    from vault_brain.storage.knowledge.items import rows_bytes  # lazy: only items files

    done = trivial(base, ours, theirs)
    if done is not None:
        return Merged(done)
    merged = merge_items(*(_json(side, where, list) for side in (base, ours, theirs)))
    return Merged(rows_bytes(merged))
