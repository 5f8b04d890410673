"""`vb export`: the vault's notes as one JSON document (a versioned schema) or one Markdown
file readable on its own. Pure formatting: the notes come in, text goes out."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from vault_brain.domain.notes.model import Note
from vault_brain.domain.text import json_safe

EXPORT_VERSION = 1
"""The version of the JSON export's schema (raised when a field changes meaning or goes)."""


@dataclass
class ExportNote:
    id: str
    path: str
    type: str
    category: str
    title: str
    tags: list[str]
    scope: str
    credit: float | None
    archived: bool
    created: str | None
    updated: str | None
    body: str
    history: list[dict[str, Any]] | None = field(default=None)
    """The note's changes from git, newest first (only with --history)."""


def export_note(note: Note, history: list[dict[str, Any]] | None = None) -> ExportNote:
    return ExportNote(
        id=note.id,
        path=note.path,
        type=note.type,
        category=note.category,
        title=note.title,
        tags=list(note.tags),
        scope=note.scope,
        credit=note.credit,
        archived=note.archived,
        created=note.created,
        updated=note.updated,
        body=note.body,
        history=history,
    )


def to_json_text(notes: list[ExportNote], persona: str | None, exported: str) -> str:
    docs = []
    for n in notes:
        doc = asdict(n)
        if doc["history"] is None:
            del doc["history"]
        docs.append(doc)
    document = {
        "version": EXPORT_VERSION,
        "exported": exported,
        "persona": persona,
        "count": len(docs),
        "notes": docs,
    }
    return json.dumps(json_safe(document), ensure_ascii=False, indent=1) + "\n"


def _history_lines(history: list[dict[str, Any]]) -> list[str]:
    lines = ["", "#### History", ""]
    for e in history:
        keys = ", ".join(k["key"] for k in e.get("keys", []))
        lines.append(
            f"- {e['when']} `{str(e['commit'])[:10]}` {e['operation']}: "
            f"+{e['lines_added']} -{e['lines_removed']} lines" + (f"; keys: {keys}" if keys else "")
        )
    return lines


def _demote(body: str) -> str:
    """A note's own headings two levels down, so each note stays under its own heading."""
    out = []
    fenced = False
    for line in body.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        if not fenced and line.startswith("#"):
            hashes = len(line) - len(line.lstrip("#"))
            if line[hashes : hashes + 1] in (" ", ""):
                line = "#" * min(hashes + 2, 6) + line[hashes:]
        out.append(line)
    return "\n".join(out).strip()


def to_markdown(notes: list[ExportNote], persona: str | None, exported: str) -> str:
    title = f"Memory export ({persona})" if persona else "Memory export"
    lines = [f"# {title}", "", f"{len(notes)} notes, exported {exported}.", ""]
    for n in notes:
        lines.append(f"## {n.title}")
        lines.append("")
        facts = [f"`{n.id}`", n.type + (f"/{n.category}" if n.category else ""), f"scope {n.scope}"]
        if n.credit is not None:
            facts.append(f"credit {n.credit:g}")
        if n.archived:
            facts.append("archived")
        if n.tags:
            facts.append("tags " + ", ".join(f"#{t}" for t in n.tags))
        lines.append(f"*{' · '.join(facts)}* (`{n.path}`)")
        lines.append("")
        body = _demote(n.body)
        if body:
            lines += [body, ""]
        if n.history:
            lines += [*_history_lines(n.history), ""]
    return "\n".join(lines).rstrip() + "\n"
