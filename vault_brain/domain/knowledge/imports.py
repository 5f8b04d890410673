"""Memory files of other tools read as drafts of vb notes (pure: text in, drafts out).

Four kinds of source: an OpenClaw workspace (MEMORY.md, daily logs `memory/YYYY-MM-DD.md`),
Claude Code memory files (CLAUDE.md, MEMORY.md and its topic files), a basic-memory project
(notes with front matter, `## Observations` and `## Relations`) and a plain folder of Markdown.

- A fact file (MEMORY.md, CLAUDE.md, a topic file) gives one draft per bullet or paragraph: a
  search then finds the fact itself, credit and supersession judge each fact on its own, and
  the gate refuses one hostile line without losing its neighbours.
- A daily log (a file named by its date) gives one episode of that day.
- A basic-memory note, or a note of a plain folder, gives one note that keeps its title, tags
  and text; a relation's `[[Target]]` is a `Piece.target` the caller resolves.

Each draft carries a stable `key`, so an import run again finds what it made before: a fact's
key is its kind and its words (the same fact in two files is one memory), a daily log's its
kind and file name, a note's its kind, file name and title (or a basic-memory permalink).
Reading files, judging text and writing notes are the caller's.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from vault_brain.domain.text import clean_tags, clip_words, flatten, slugify, split_sentences

KINDS = ("openclaw", "claude-code", "basic-memory", "markdown")
LABELS = {
    "openclaw": "OpenClaw",
    "claude-code": "Claude Code",
    "basic-memory": "basic-memory",
    "markdown": "Markdown",
}
# basic-memory's `type` of a note -> the entity category vb keeps such notes in
TYPE_CATEGORIES = {
    "person": "people",
    "people": "people",
    "project": "projects",
    "preference": "preferences",
    "preferences": "preferences",
}
OPENCLAW_BOOT_FILES = ("AGENTS.md", "SOUL.md", "USER.md", "IDENTITY.md", "TOOLS.md", "HEARTBEAT.md")
CLAUDE_FILES = ("CLAUDE.md", "CLAUDE.local.md", ".claude/CLAUDE.md")
TITLE_CHARS = 70

_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:$|[-_ ])")
_FENCE = re.compile(r"^\s{0,3}(```+|~~~+)")
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^(\s*)(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?(.*)$")
_RULE = re.compile(r"^\s{0,3}(?:[-*_]\s*){3,}$")
_FILE_REF = re.compile(r"^@\S+$")  # Claude Code: `@path` pulls in another file
_RELATION = re.compile(r"^(\s*[-*+]\s+)(.*?)\s*\[\[([^\]|#]+)(?:[|#][^\]]*)?\]\](.*)$")
_EMPHASIS = re.compile(r"[*_`]+")


@dataclass(frozen=True)
class Piece:
    """A line (or a fenced block) of a note's body, judged by the gate on its own."""

    text: str
    line: int  # 1-based, in the source file
    target: str | None = None  # a relation's link target, written `[[target]]` in `text`


@dataclass
class Draft:
    """A vb note an import would make."""

    kind: str
    type: str  # entity | episode
    category: str
    title: str
    origin: str  # the source file, relative to the source's root
    line: int
    key: str
    pieces: list[Piece]
    tags: list[str] = field(default_factory=list)
    date: str | None = None  # YYYY-MM-DD: an episode's day
    skip: str | None = None  # why it is not imported (not a memory at all)

    @property
    def where(self) -> str:
        return f"{self.origin}#L{self.line}"


def key_of(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()[:16]


def log_date(rel: str) -> str | None:
    """The day a daily log is named by (`2026-03-14.md`, `2026-03-14-standup.md`), if real."""
    found = _DATE.match(PurePosixPath(rel).stem)
    if found is None:
        return None
    year, month, day = (int(g) for g in found.groups())
    if not (1 <= month <= 12 and 1 <= day <= 31 and 1970 <= year <= 9999):
        return None
    return f"{year:04d}-{month:02d}-{day:02d}"


def detect(rels: Iterable[str], permalinks: int = 0) -> tuple[str | None, str]:
    """Which kind of source holds these files (paths relative to its root), and why; None
    when it cannot tell. `permalinks`: how many of its notes have a basic-memory
    `permalink` in their front matter."""
    names = set(rels)
    if any(name in names for name in CLAUDE_FILES):
        return "claude-code", "it has a CLAUDE.md"
    logs = [r for r in names if r.startswith("memory/") and log_date(r)]
    if logs:
        return "openclaw", "it has daily logs in memory/"
    if "MEMORY.md" in names and any(name in names for name in OPENCLAW_BOOT_FILES):
        return "openclaw", "it has MEMORY.md beside OpenClaw's workspace files"
    if permalinks:
        return "basic-memory", f"{permalinks} notes have a basic-memory permalink"
    if "MEMORY.md" in names:
        return None, "a MEMORY.md alone is written by OpenClaw and by Claude Code alike"
    if any(r.lower().endswith(".md") for r in names):
        return "markdown", "it is a folder of Markdown files"
    return None, "it holds no Markdown file"


# -- fact files -------------------------------------------------------------------------------
def _plain(text: str) -> str:
    return flatten(_EMPHASIS.sub("", text))


def _fence_end(lines: list[str], start: int) -> int:
    """The index after the fenced block opening at `start` (to the end if never closed)."""
    mark = _FENCE.match(lines[start])
    assert mark is not None
    fence = mark.group(1)
    for i in range(start + 1, len(lines)):
        if lines[i].strip().startswith(fence[0] * len(fence)):
            return i + 1
    return len(lines)


def fact_drafts(kind: str, rel: str, text: str, first_line: int = 1) -> list[Draft]:
    """One entity draft per bullet (with its continuation lines) or paragraph of a fact
    file, tagged with its section's heading; a fenced block is a draft of its own (the gate
    refuses code). Claude Code's `@path` lines name other files and are passed over."""
    lines = text.split("\n")
    drafts: list[Draft] = []
    section = ""

    def add(start: int, chunk: list[str], fact: str) -> None:
        line = first_line + start
        tags = [kind, slugify(section)] if section else [kind]
        first = (split_sentences(_plain(fact)) or [""])[0]
        title = clip_words(first, TITLE_CHARS) or "untitled"
        draft = Draft(
            kind, "entity", kind, title, rel, line,
            key_of(kind, "fact", _plain(fact).lower()),
            [Piece("\n".join(chunk).strip("\n"), line)], clean_tags(tags),
        )  # fmt: skip
        if kind == "claude-code" and _FILE_REF.match(fact.strip()):
            draft.skip = "a reference to another file, not a fact"
        drafts.append(draft)

    i = 0
    while i < len(lines):
        raw = lines[i]
        if not raw.strip() or _RULE.match(raw) or raw.lstrip().startswith("<!--"):
            i += 1
            continue
        if _FENCE.match(raw):
            end = _fence_end(lines, i)
            block = lines[i:end]
            add(i, block, "\n".join(block))
            i = end
            continue
        heading = _HEADING.match(raw)
        if heading:
            section = _plain(heading.group(2))
            i += 1
            continue
        bullet = _BULLET.match(raw)
        start, chunk = i, [raw]
        fact = [bullet.group(2) if bullet else raw.strip()]
        indent = len(bullet.group(1)) if bullet else -1
        i += 1
        while i < len(lines) and lines[i].strip():
            nxt = lines[i]
            if _HEADING.match(nxt) or _FENCE.match(nxt) or _BULLET.match(nxt):
                break
            if bullet and len(nxt) - len(nxt.lstrip()) <= indent:
                break
            chunk.append(nxt)
            fact.append(nxt.strip())
            i += 1
        words = " ".join(fact).strip()
        if words:
            add(start, [words] if bullet else chunk, words)
    return drafts


# -- whole files ------------------------------------------------------------------------------
def body_pieces(body: str, first_line: int, relations: bool = False) -> list[Piece]:
    """A note's body as pieces: each line, a fenced block whole, blank lines kept as the
    separators they are. With `relations`, a list item naming a `[[Target]]` keeps the
    target for the caller to resolve (basic-memory's relations)."""
    lines = body.split("\n")
    pieces: list[Piece] = []
    i = 0
    while i < len(lines):
        raw = lines[i].rstrip()
        line = first_line + i
        if _FENCE.match(raw):
            end = _fence_end(lines, i)
            pieces.append(Piece("\n".join(lines[i:end]).rstrip(), line))
            i = end
            continue
        link = _RELATION.match(raw) if relations else None
        if link is not None:
            target = link.group(3).strip()
            text = f"{link.group(1)}{link.group(2)} [[{target}]]{link.group(4)}".rstrip()
            pieces.append(Piece(text, line, target))
        else:
            pieces.append(Piece(raw, line))
        i += 1
    while pieces and not pieces[-1].text.strip():
        pieces.pop()
    while pieces and not pieces[0].text.strip():
        pieces.pop(0)
    return pieces


def _title_of(meta: Mapping[str, Any], body: str, rel: str) -> str:
    title = meta.get("title")
    if isinstance(title, str) and title.strip():
        return flatten(title)
    for raw in body.split("\n"):
        heading = _HEADING.match(raw)
        if heading and heading.group(1) == "#":
            return _plain(heading.group(2))
        if raw.strip():
            break
    return PurePosixPath(rel).stem


def _tags_of(meta: Mapping[str, Any]) -> list[str]:
    value = meta.get("tags")
    if isinstance(value, str):
        return clean_tags(value.replace(",", " ").split())
    if isinstance(value, list | tuple):
        return clean_tags(str(v) for v in value if v is not None)
    return []


def log_draft(kind: str, rel: str, body: str, day: str, first_line: int = 1) -> Draft:
    """A daily log as one episode of its day."""
    title = f"{LABELS[kind]} log {day}"
    return Draft(
        kind, "episode", "general", title, rel, first_line,
        key_of(kind, "log", PurePosixPath(rel).stem),
        body_pieces(body, first_line), clean_tags([kind, "daily-log"]), date=day,
    )  # fmt: skip


def note_draft(
    kind: str, rel: str, meta: Mapping[str, Any], body: str, first_line: int = 1
) -> Draft:
    """A note as one entity note keeping its title and tags (basic-memory: its permalink
    is its key, its `type` picks the category, its relations keep their targets)."""
    title = _title_of(meta, body, rel)
    permalink = meta.get("permalink")
    # (by name and title, not path: the same file imported alone or with its folder is one)
    who = str(permalink) if kind == "basic-memory" and permalink else ""
    who = who or f"{PurePosixPath(rel).stem}\0{title.lower()}"
    category = kind
    if kind == "basic-memory":
        category = TYPE_CATEGORIES.get(str(meta.get("type") or "").strip().lower(), kind)
    return Draft(
        kind, "entity", category, title, rel, first_line, key_of(kind, "note", who),
        body_pieces(body, first_line, relations=kind == "basic-memory"),
        clean_tags([kind, *_tags_of(meta)]),
    )  # fmt: skip
