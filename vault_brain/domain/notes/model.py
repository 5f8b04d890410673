"""The note model: what vb reads from any Markdown file in the vault.

Pure rules over a note's path and parsed front matter: missing vb keys are derived (id
from the path, type and category from the folder, title from the first heading or file
name) without writing anything. Reading the file is the storage layer's job.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from vault_brain.domain.policy.scopes import ALL, note_scope, parse_scopes
from vault_brain.domain.text import check_category, check_choice, normalize_tag, slugify, unique

TYPES = ("entity", "episode", "note")
ENTITY_CATEGORIES = ("people", "projects", "preferences")
ARCHIVE = "archive"
# Where a note's text came from (its `source` key): a person's hand (also every note without
# the key: hand-written in Obsidian, an adopted vault), an agent's tool call, capture from a
# conversation, project extraction, a merge of other notes (consolidate, promote), or another
# tool's memory files brought in by `vb import`.
PERSON = "person"
SOURCES = (PERSON, "agent", "conversation", "extraction", "merge", "import")
_H1 = re.compile(r"#\s+(.+?)\s*#*\s*$", re.MULTILINE)


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


def _as_float(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def _as_int(value: Any) -> int:
    number = _as_float(value)
    return int(number) if number is not None and abs(number) < 2**53 else 0


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


@dataclass(eq=False)  # compared by id and path where needed, never field by field
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
    scope: str = "global"  # whose memory it is (domain/policy/scopes.py)
    private: bool = False  # `private: true`: kept from every caller that may not see secrets
    source: str = PERSON  # who wrote its text (`SOURCES`); a note without the key: a person


def note_source(value: Any) -> str:
    """A note's `source` key as one of `SOURCES`. None, and any value that is not one of
    vb's (Obsidian's web clipper writes `source: https://...`), mean a person's hand."""
    text = str(value).strip().lower() if isinstance(value, str) else ""
    return text if text in SOURCES else PERSON


def is_vb_source(value: Any) -> bool:
    """Whether a `source` key holds one of vb's values (else it is the person's own key,
    which vb never overwrites), or is absent."""
    return value is None or value == "" or (isinstance(value, str) and value in SOURCES)


def merged_source(old: str, new: str, *, append: bool) -> str:
    """A note's source after `new` writes into it: replaced text is the writer's; appended
    text mixes the two, and a mix is judged as its least trusted writer (a person's note
    that vb appends captured facts to is no longer only the person's hand)."""
    if not append or old == new:
        return new
    return new if old == PERSON else old


MAX_TAGS = 1000


def note_from_parsed(
    rel: str,
    meta: dict[str, Any],
    body: str,
    has_front_matter: bool,
    error: str | None,
    issues: list[str] | None = None,
) -> Note:
    """The note at `rel` (POSIX, relative to the vault) from its parsed front matter. What
    cannot be used as written (malformed YAML, a non-number credit, thousands of tags) is
    the note's `problem`; everything readable is still read."""
    issues = list(issues or [])
    d_type, d_category = derive_location(rel)
    type_ = str(meta.get("type") or d_type).strip().lower()
    if type_ not in TYPES:
        type_ = d_type
    category = slugify(str(meta["category"])) if meta.get("category") else d_category
    note_id = _as_str(meta.get("id")) or derive_id(rel, type_, category)
    title = _as_str(meta.get("title"))
    if not title:
        # Obsidian names a note by its file; a heading counts only when it opens the body
        heading = _H1.match(body.lstrip("\n"))
        title = heading.group(1) if heading else PurePosixPath(rel).stem
    tags = unique(norm for tag in _as_list(meta.get("tags")) if (norm := normalize_tag(tag)))
    if len(tags) > MAX_TAGS:
        issues.append(f"{len(tags)} tags: only the first {MAX_TAGS} are used")
        tags = tags[:MAX_TAGS]
    for key in ("credit", "access_count"):
        value = meta.get(key)
        if value not in (None, "") and _as_float(value) is None:
            issues.append(f"{key} {value!r} is not a number")
    problem = f"malformed front matter: {error}" if error else "; ".join(issues) or None
    return Note(
        id=note_id,
        path=rel,
        title=title,
        type=type_,
        category=category,
        tags=tags,
        aliases=_as_aliases(meta.get("aliases")),
        body=body,
        meta=meta,
        created=_as_str(meta.get("created")),
        updated=_as_str(meta.get("updated")),
        pinned=_as_bool(meta.get("pinned", False)),
        credit=_as_float(meta.get("credit")),
        access_count=_as_int(meta.get("access_count")),
        last_accessed=_as_str(meta.get("last_accessed")),
        archived=PurePosixPath(rel).parts[0] == ARCHIVE,
        problem=problem,
        scope=note_scope(meta.get("scope")),
        private=_as_bool(meta.get("private", False)),
        source=note_source(meta.get("source")),
        has_front_matter=has_front_matter,
    )


def id_key(rel: str, meta: dict[str, Any]) -> dict[str, str]:
    """`{"id": <the id the note has now>}` for a note whose front matter has no `id` yet, else
    {}: vb writes it with its first edit of the note, so the id stays when the note is
    renamed or moved (in Obsidian or anywhere else)."""
    if _as_str(meta.get("id")):
        return {}
    return {"id": note_from_parsed(rel, meta, "", has_front_matter=True, error=None).id}


def _scopes(given: tuple[str, ...]) -> tuple[str, ...]:
    """Scope filters as given ("user:ana,global", ...), checked; () when any scope will do."""
    parts = [part.strip() for item in given for part in str(item).split(",") if part.strip()]
    return () if ALL in parts else tuple(parse_scopes(parts))


@dataclass(frozen=True)
class Filters:
    """Which notes a listing or a search covers. `normalized()` is the one place a filter
    given by a person or an agent is checked and brought to the index's form."""

    type: str | None = None
    category: str | None = None
    tag: str | None = None
    include_archive: bool = False
    archived_only: bool = False
    problems_only: bool = False
    scopes: tuple[str, ...] = ()  # these scopes, each maybe comma-separated (none, all: any)
    private: bool = True  # notes marked `private: true` too (False for a confined caller)
    current_only: bool = False  # leave out superseded notes (what reaches an agent's context)

    def normalized(self) -> Filters:
        return Filters(
            type=check_choice(self.type, TYPES, "type") if self.type else None,
            category=slugify(check_category(self.category)) if self.category else None,
            tag=normalize_tag(self.tag) or None if self.tag else None,
            include_archive=self.include_archive or self.archived_only,
            archived_only=self.archived_only,
            problems_only=self.problems_only,
            scopes=_scopes(self.scopes),
            private=self.private,
            current_only=self.current_only,
        )

    @classmethod
    def of_search(cls, options: dict[str, Any]) -> Filters:
        """`vb search`'s filter options (type, category, tag, include_archive, scope: as the
        command line gives them, in-process or to the warm server), checked and normalized."""
        scope = options["scope"]
        return cls(
            options["type"],
            options["category"],
            options["tag"],
            bool(options["include_archive"]),
            scopes=(scope,) if scope else (),
        ).normalized()
