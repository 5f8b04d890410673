"""The note model: what vb reads from any Markdown file in the vault.

A note may have no front matter, empty or malformed front matter, CRLF line ends,
a BOM, non-ASCII text and paths. Missing vb keys are derived (id from the path,
type and category from the folder, title from the first heading or file name)
without writing anything.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from vault_brain.vault.frontmatter import parse_text

TYPES = ("entity", "episode", "note")
ENTITY_CATEGORIES = ("people", "projects", "preferences")
ARCHIVE = "archive"
_H1 = re.compile(r"#\s+(.+?)\s*#*\s*$", re.MULTILINE)


def slugify(text: str, max_len: int = 80) -> str:
    """A file-system and id safe slug; keeps letters of any script, never empty or dotted."""
    norm = unicodedata.normalize("NFKC", text).lower()
    out = []
    for ch in norm:
        if ch.isalnum():
            out.append(ch)
        elif out and out[-1] != "-":
            out.append("-")
    slug = "".join(out).strip("-")[:max_len].strip("-")
    return slug or "untitled"


def _as_list(value: Any) -> list[str]:
    """aliases/tags may be a list, a comma or space separated string, or empty."""
    if value is None or value == "":
        return []
    if isinstance(value, str):
        parts = re.split(r"[,\n]", value) if "," in value or "\n" in value else value.split()
        return [p.strip() for p in parts if p.strip()]
    if isinstance(value, list | tuple):
        return [str(v).strip() for v in value if v is not None and str(v).strip()]
    return [str(value)]


def _as_aliases(value: Any) -> list[str]:
    """Aliases: a list, or one string (several only when separated by commas)."""
    if isinstance(value, str):
        return [a.strip() for a in value.split(",") if a.strip()]
    return _as_list(value)


def normalize_tag(tag: str) -> str:
    return tag.strip().lstrip("#").strip().lower()


def _as_float(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _as_int(value: Any) -> int:
    if isinstance(value, bool):
        return 0
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _as_bool(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("true", "yes", "1", "on")
    return bool(value)


def _as_str(value: Any) -> str | None:
    if value is None or value == "":
        return None
    return str(value)


def original_relpath(rel: str) -> str:
    """Where a note lives (or lived, if archived) outside archive/."""
    parts = PurePosixPath(rel).parts
    return (
        PurePosixPath(*parts[1:]).as_posix()
        if parts and parts[0] == ARCHIVE and len(parts) > 1
        else rel
    )


def derive_location(rel: str) -> tuple[str, str]:
    """(type, category) implied by a note's folder."""
    parts = PurePosixPath(original_relpath(rel)).parts
    if len(parts) >= 3 and parts[0] == "entities":
        return "entity", slugify(parts[1])
    if parts and parts[0] == "episodes":
        return "episode", "general"
    if len(parts) >= 2:
        return "note", slugify(parts[0])
    return "note", "general"


def derive_id(rel: str, type_: str, category: str) -> str:
    """The id of a note with no `id` key: stable for as long as the note keeps its path."""
    path = PurePosixPath(original_relpath(rel))
    stem = slugify(path.stem)
    if type_ in ("entity", "episode") and path.parts and path.parts[0] in ("entities", "episodes"):
        return f"{type_}-{category}-{stem}"
    return "note-" + "-".join(slugify(p) for p in (*path.parts[:-1], path.stem))


@dataclass
class Note:
    id: str
    path: str  # POSIX, relative to the vault root
    title: str
    type: str
    category: str
    tags: list[str]
    aliases: list[str]
    body: str
    meta: dict[str, Any]
    created: str | None = None
    updated: str | None = None
    pinned: bool = False
    credit: float | None = None
    access_count: int = 0
    last_accessed: str | None = None
    archived: bool = False
    problem: str | None = None
    has_front_matter: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self, with_body: bool = True) -> dict[str, Any]:
        data = asdict(self)
        data.pop("extra")
        if not with_body:
            data.pop("body")
        return data


def note_from_bytes(rel: str, raw: bytes) -> Note:
    parsed = parse_text(raw)
    meta = parsed.meta
    d_type, d_category = derive_location(rel)
    type_ = str(meta.get("type") or d_type).strip().lower()
    if type_ not in TYPES:
        type_ = d_type
    category = slugify(str(meta["category"])) if meta.get("category") else d_category
    note_id = _as_str(meta.get("id")) or derive_id(rel, type_, category)
    title = _as_str(meta.get("title"))
    if not title:
        # Obsidian names a note by its file; a heading counts only when it opens the body
        heading = _H1.match(parsed.body.lstrip("\n"))
        title = heading.group(1) if heading else PurePosixPath(rel).stem
    tags = []
    for tag in _as_list(meta.get("tags")):
        norm = normalize_tag(tag)
        if norm and norm not in tags:
            tags.append(norm)
    problem = f"malformed front matter: {parsed.error}" if parsed.error else None
    return Note(
        id=note_id,
        path=rel,
        title=title,
        type=type_,
        category=category,
        tags=tags,
        aliases=_as_aliases(meta.get("aliases")),
        body=parsed.body,
        meta=meta,
        created=_as_str(meta.get("created")),
        updated=_as_str(meta.get("updated")),
        pinned=_as_bool(meta.get("pinned", False)),
        credit=_as_float(meta.get("credit")),
        access_count=_as_int(meta.get("access_count")),
        last_accessed=_as_str(meta.get("last_accessed")),
        archived=PurePosixPath(rel).parts[0] == ARCHIVE,
        problem=problem,
        has_front_matter=parsed.has_front_matter,
    )


def load_note(root: Path, rel: str) -> Note:
    return note_from_bytes(rel, (root / PurePosixPath(rel)).read_bytes())
