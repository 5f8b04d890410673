"""`vb graph`: Mermaid diagrams of the vault, as Markdown notes Obsidian renders. Pure
formatting: personas and commits, notes and their [[wikilinks]], memory activity per day."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import PurePosixPath

KINDS = ("branches", "links", "timeline")
WIKILINK = re.compile(r"\[\[([^\]|#^\n]+)(?:[#^][^\]|\n]*)?(?:\|[^\]\n]*)?\]\]")
MAX_LABEL = 48


def label(text: str) -> str:
    """Text safe inside a Mermaid node label `["..."]`."""
    text = " ".join(text.split())
    if len(text) > MAX_LABEL:
        text = text[: MAX_LABEL - 1] + "…"
    for char, entity in (("#", "#35;"), ('"', "#quot;"), ("<", "#lt;"), (">", "#gt;")):
        text = text.replace(char, entity)
    return text


def wikilinks(body: str) -> list[str]:
    """The targets of a note's [[wikilinks]] (without heading, block or alias parts)."""
    return [m.group(1).strip() for m in WIKILINK.finditer(body)]


@dataclass
class CommitNode:
    sha: str
    parents: list[str]
    subject: str


@dataclass
class LinkNote:
    path: str
    title: str
    aliases: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)


def note_page(title: str, intro: str, diagram: str) -> str:
    return f"# {title}\n\n{intro}\n\n```mermaid\n{diagram.rstrip()}\n```\n"


def branches_diagram(heads: dict[str, str], commits: list[CommitNode], current: str | None) -> str:
    """Personas (branches) pointing at their last commit, commits linked to their parents."""
    known = {c.sha for c in commits}
    lines = ["flowchart RL"]
    for c in commits:
        lines.append(f'  c{c.sha[:10]}["{c.sha[:7]} {label(c.subject)}"]')
    for c in commits:
        for p in c.parents:
            if p in known:
                lines.append(f"  c{c.sha[:10]} --> c{p[:10]}")
    for i, (name, sha) in enumerate(sorted(heads.items())):
        mark = " (current)" if name == current else ""
        lines.append(f'  p{i}(["persona {label(name)}{mark}"])')
        if sha in known:
            lines.append(f"  p{i} -.-> c{sha[:10]}")
    return "\n".join(lines)


def _keys(note: LinkNote) -> list[str]:
    path = PurePosixPath(note.path)
    return [
        k.lower()
        for k in (note.path, str(path.with_suffix("")), path.stem, note.title, *note.aliases)
    ]


def links_diagram(notes: list[LinkNote]) -> str:
    """Notes and the [[wikilinks]] between them (links to missing notes shown dashed)."""
    lookup: dict[str, int] = {}
    for i, n in enumerate(notes):
        for key in _keys(n):
            lookup.setdefault(key, i)
    lines = ["flowchart LR"]
    edges: list[str] = []
    used: set[int] = set()
    missing: dict[str, int] = {}
    for i, n in enumerate(notes):
        for target in dict.fromkeys(n.links):
            j = lookup.get(target.lower())
            if j is None:
                k = missing.setdefault(target, len(missing))
                edges.append(f"  n{i} -.-> m{k}")
            elif j != i:
                edges.append(f"  n{i} --> n{j}")
                used.add(j)
            else:
                continue
            used.add(i)
    for i in sorted(used):
        lines.append(f'  n{i}["{label(notes[i].title)}"]')
    for target, k in missing.items():
        lines.append(f'  m{k}["{label(target)} (no note)"]')
    return "\n".join(lines + edges)


def timeline_diagram(days: dict[str, dict[str, int]]) -> str:
    """Memory activity per day: `day : n what` rows of a Mermaid timeline."""
    lines = ["timeline", "  title Memory activity per day"]
    for day in sorted(days):
        events = [f"{n} {what}" for what, n in sorted(days[day].items()) if n]
        if events:
            lines.append(f"  {day} : " + " : ".join(events))
    return "\n".join(lines)


def count_days(pairs: Iterable[tuple[str | None, str]]) -> dict[str, dict[str, int]]:
    """(ISO time, what) pairs -> day -> what -> count."""
    days: dict[str, dict[str, int]] = {}
    for when, what in pairs:
        if when and len(when) >= 10:
            day = days.setdefault(when[:10], {})
            day[what] = day.get(what, 0) + 1
    return days
