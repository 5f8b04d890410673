"""Knowledge items from a project's files (pure): Markdown parsed with markdown-it-py, whose
tokens carry line ranges, into typed items cited to the line, and into chunks for source
search.

An item's id is derived from its source file, type and text (plus which occurrence of that
text in the file it is), not from its line: text that does not change keeps its id when lines
are inserted above it, and only its `lineNumber` moves.
"""

from __future__ import annotations

import bisect
import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from vault_brain.domain.gate import judge, redact
from vault_brain.domain.knowledge.rules import (
    TYPES,
    Found,
    classify,
    front_matter_kind,
    plain,
    task,
    titled,
)
from vault_brain.domain.text import clip, flatten, split_sentences

CONTENT_CHARS = 600
CHUNK_CHARS = 1200
_HEADING_DECISION = re.compile(
    r"^(?:ADR[- ]?\d+|RFC[- ]?\d+|Decision(?:\s+\d+)?)\s*[:\-–—.]\s*(.+)$", re.I
)
_FM_KEY = re.compile(r"^([A-Za-z_][\w-]*)\s*:\s*(.*)$")
_FM_ENTRY = re.compile(r"^\s+-\s+(.+)$")


@dataclass(frozen=True)
class Draft:
    """An item found in one file, before it has an id and a time."""

    type: str
    title: str
    content: str
    line: int  # 1-based
    confidence: float
    section: str = ""
    status: str | None = None
    extractor: str = "offline"


@dataclass(frozen=True)
class Item:
    """One extracted item, as stored in items.json (`to_json` gives the file's keys)."""

    id: str
    type: str
    title: str
    content: str
    source_file: str
    line_number: int
    confidence: float
    extracted_at: str
    project: str
    section: str = ""
    status: str | None = None
    extractor: str = "offline"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id,
            "type": self.type,
            "title": self.title,
            "content": self.content,
            "sourceFile": self.source_file,
            "lineNumber": self.line_number,
            "confidence": self.confidence,
            "extractedAt": self.extracted_at,
            "project": self.project,
            "extractor": self.extractor,
        }
        if self.section:
            data["section"] = self.section
        if self.status:
            data["status"] = self.status
        return data

    @classmethod
    def from_json(cls, data: Any) -> Item | None:
        """An item read back from items.json (None for an entry that is not one)."""
        if not isinstance(data, dict):
            return None
        try:
            item = cls(
                id=str(data["id"]),
                type=str(data["type"]),
                title=str(data.get("title") or ""),
                content=str(data["content"]),
                source_file=str(data["sourceFile"]),
                line_number=int(data["lineNumber"]),
                confidence=float(data.get("confidence", 0.5)),
                extracted_at=str(data.get("extractedAt") or ""),
                project=str(data.get("project") or ""),
                section=str(data.get("section") or ""),
                status=str(data["status"]) if data.get("status") else None,
                extractor=str(data.get("extractor") or "offline"),
            )
        except (KeyError, TypeError, ValueError):
            return None
        return item if item.type in TYPES else None


@dataclass(frozen=True)
class Chunk:
    """A stretch of prose of a source file for source search: its first line and section."""

    line: int  # 1-based
    section: str
    text: str


@dataclass
class Document:
    """What one file yields: items, chunks, and what the gate kept out (by reason)."""

    drafts: list[Draft] = field(default_factory=list)
    chunks: list[Chunk] = field(default_factory=list)
    refused: Counter[str] = field(default_factory=Counter)


@lru_cache(maxsize=1)
def _markdown() -> Any:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table")  # tables parsed, to be skipped


# -- ids ---------------------------------------------------------------------------------
def item_id(source_file: str, type_: str, content: str, occurrence: int) -> str:
    key = "\0".join((source_file, type_, flatten(content).lower(), str(occurrence)))
    return "item_" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


def identify(
    drafts: Iterable[Draft], source_file: str, project: str, now: str, known: dict[str, Item]
) -> list[Item]:
    """Drafts of one file as items: ids from their text, `extractedAt` kept for an id that
    was already extracted (so unchanged text is unchanged in the file, but for its line)."""
    seen: Counter[tuple[str, str]] = Counter()
    items = []
    for draft in drafts:
        key = (draft.type, flatten(draft.content).lower())
        id_ = item_id(source_file, draft.type, draft.content, seen[key])
        seen[key] += 1
        old = known.get(id_)
        items.append(
            Item(
                id=id_,
                type=draft.type,
                title=draft.title,
                content=draft.content,
                source_file=source_file,
                line_number=draft.line,
                confidence=draft.confidence,
                extracted_at=old.extracted_at if old is not None and old.extracted_at else now,
                project=project,
                section=draft.section,
                status=draft.status,
                extractor=draft.extractor,
            )
        )
    return items


# -- parsing -------------------------------------------------------------------------------
def _front_matter(lines: list[str]) -> int:
    """How many lines the front matter block takes (0 when there is none)."""
    if not lines or lines[0].strip() != "---":
        return 0
    for n in range(1, min(len(lines), 400)):
        if lines[n].strip() in ("---", "..."):
            return n + 1
    return 0


def _front_matter_drafts(lines: list[str], end: int) -> Iterator[Draft]:
    """`decision: ...`, `todo: [a, b]`, `tasks:` followed by `- ...` lines, each cited to its
    own line."""
    kind = None
    for n in range(1, end - 1):
        line = lines[n]
        key = _FM_KEY.match(line)
        if key:
            kind = front_matter_kind(key.group(1))
            value = key.group(2).strip()
            if kind is None or not value or value[0] in "|>":
                continue
            values = value.strip("[]").split(",") if value.startswith("[") else [value]
            for text in values:
                yield _fm_draft(kind, text, n + 1)
        elif kind is not None and (entry := _FM_ENTRY.match(line)):
            yield _fm_draft(kind, entry.group(1), n + 1)
        elif kind is not None and line.startswith((" ", "\t")) and line.strip():
            yield _fm_draft(kind, line, n + 1)


def _fm_draft(kind: str, text: str, line: int) -> Draft:
    text = flatten(text).strip("'\"")
    found = titled(kind, text, 0.9)
    return Draft(kind, found.title, text, line, found.confidence, "front matter", found.status)


@dataclass
class _Block:
    first: int  # 0-based line of the block's first line
    lines: list[str]
    section: str
    in_list: bool


def _blocks(text: str) -> Iterator[tuple[str, _Block]]:
    """("heading" | "prose", block) for each heading and paragraph, with its section (the
    trail of headings above it); code, HTML and tables are not prose and are skipped."""
    trail: list[tuple[int, str]] = []
    lists = tables = heading = 0
    for token in _markdown().parse(text):
        kind = token.type
        if kind in ("table_open", "table_close"):
            tables += 1 if kind == "table_open" else -1
        elif kind in ("bullet_list_open", "ordered_list_open"):
            lists += 1
        elif kind in ("bullet_list_close", "ordered_list_close"):
            lists -= 1
        elif kind == "heading_open":
            heading = int(token.tag[1:])
        elif kind == "inline" and token.map is not None and not tables:
            lines = token.content.split("\n")
            if heading:
                title = plain(token.content)
                trail = [(level, t) for level, t in trail if level < heading] + [(heading, title)]
                heading = 0
                yield "heading", _Block(token.map[0], lines, _trail(trail), False)
            else:
                yield "prose", _Block(token.map[0], lines, _trail(trail), lists > 0)


def _trail(trail: list[tuple[int, str]]) -> str:
    return " > ".join(title for _, title in trail)


def _sentences(block: _Block) -> list[tuple[int, str]]:
    """(0-based line, sentence) of a block: the sentence's line is where it starts."""
    joined, starts, at = [], [], 0
    for line in block.lines:
        starts.append(at)
        joined.append(line.strip())
        at += len(joined[-1]) + 1
    text = " ".join(joined)
    out = []
    at = 0
    for sentence in split_sentences(text):
        offset = text.find(sentence, at)
        at = offset + len(sentence) if offset >= 0 else at
        row = bisect.bisect_right(starts, max(offset, 0)) - 1
        out.append((block.first + row, sentence))
    return out


def _drafts(block: _Block) -> Iterator[Draft]:
    whole = flatten(" ".join(block.lines))
    found = task(whole, block.in_list) if block.in_list else None
    if found is not None:  # a checklist item: the whole item
        yield _draft(found, whole, block.first, block.section)
        return
    rest: list[str] = []  # lines between `TODO:` lines, read as sentences
    for n, line in enumerate([*block.lines, ""]):
        found = task(line.strip(), False) if line.strip() else None
        if found is None and n < len(block.lines):
            rest.append(line)
            continue
        if rest:
            first = block.first + n - len(rest)
            yield from _sentence_drafts(_Block(first, rest, block.section, block.in_list))
            rest = []
        if found is not None:
            yield _draft(found, line.strip(), block.first + n, block.section)


def _sentence_drafts(block: _Block) -> Iterator[Draft]:
    sentences = _sentences(block)
    skip = -1
    for n, (row, sentence) in enumerate(sentences):
        if n == skip:
            continue
        found = classify(sentence, section=block.section, in_list=block.in_list, first=n == 0)
        if found is None:
            continue
        content = sentence
        if found.type == "decision" and n + 1 < len(sentences):
            after = sentences[n + 1][1]  # the reason usually follows a decision
            alone = classify(after, section=block.section, in_list=block.in_list, first=False)
            if alone is None and len(content) + len(after) < CONTENT_CHARS:
                content, skip = f"{content} {after}", n + 1
        yield _draft(found, content, row, block.section)


def _draft(found: Found, content: str, row: int, section: str) -> Draft:
    text = clip(content, CONTENT_CHARS)
    return Draft(found.type, found.title, text, row + 1, found.confidence, section, found.status)


def _heading_draft(block: _Block) -> Draft | None:
    title = flatten(" ".join(block.lines))
    match = _HEADING_DECISION.match(plain(title))
    if match is None:
        return None
    found = titled("decision", match.group(1), 0.85)
    return Draft("decision", found.title, plain(title), block.first + 1, 0.85, block.section)


def gated(drafts: Iterable[Draft], refused: Counter[str]) -> Iterator[Draft]:
    """Drafts the gate lets through: a secret inside an otherwise plain sentence is redacted
    out; anything else refused (an instruction, a command, code) drops the item."""
    for draft in drafts:
        verdict = judge(f"{draft.title}\n{draft.content}")
        if verdict.ok:
            yield draft
            continue
        refused[verdict.reasons[0]] += 1
        if set(verdict.reasons) == {"secret"}:
            title, content = redact(draft.title)[0], redact(draft.content)[0]
            if judge(f"{title}\n{content}").ok:
                yield replace(draft, title=title, content=content)


def parse_document(text: str, items: bool = True) -> Document:
    """Items (unless not wanted) and chunks of one Markdown (or plain text) file."""
    lines = text.split("\n")
    end = _front_matter(lines)
    doc = Document()
    found: list[Draft] = list(_front_matter_drafts(lines, end)) if end and items else []
    body = "\n" * end + "\n".join(lines[end:]) if end else text
    chunk: list[str] = []
    chunk_at = (0, "")
    for kind, block in _blocks(body):
        if kind == "heading" and items:
            heading = _heading_draft(block)
            if heading is not None:
                found.append(heading)
        elif items:
            found.extend(_drafts(block))
        content = flatten(" ".join(block.lines))
        if chunk and (kind == "heading" or sum(map(len, chunk)) + len(content) > CHUNK_CHARS):
            doc.chunks.append(Chunk(chunk_at[0] + 1, chunk_at[1], "\n".join(chunk)))
            chunk = []
        if not chunk:
            chunk_at = (block.first, block.section)
        chunk.append(content)
    if chunk:
        doc.chunks.append(Chunk(chunk_at[0] + 1, chunk_at[1], "\n".join(chunk)))
    doc.drafts = list(gated(found, doc.refused))
    return doc
