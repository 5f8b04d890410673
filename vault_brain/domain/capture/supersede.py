"""Superseded facts inside one note: the line vb wrote for an old fact moves under a
"## Previously" heading with the date it stopped holding and what replaced it, so the
note's current part states only current facts, and what it used to say is still there to
read (pure).

Moved, not struck through: a struck line (~~...~~) stays among the current ones, so search
snippets, MEMORY.md and an agent's context would still quote it; a section can be left
out of all three by one rule (`current_text`), and reads as history in Obsidian."""

from __future__ import annotations

import re
from collections.abc import Mapping

PREVIOUSLY = "## Previously"
_PREVIOUSLY = re.compile(r"^##\s+previously\s*$", re.IGNORECASE)
_SECTION_END = re.compile(r"^#{1,2}\s")  # a heading of the same level or above ends it
PROVENANCE = " (from "


def statement_of(line: str) -> str:
    """A fact line without its bullet and provenance."""
    text = line.strip().removeprefix("- ")
    return " ".join(text.split(PROVENANCE, 1)[0].split()).rstrip(".")


def _bounds(lines: list[str]) -> tuple[int, int] | None:
    """The Previously section as (heading line, end line exclusive), or None."""
    for start, line in enumerate(lines):
        if _PREVIOUSLY.match(line.strip()):
            end = start + 1
            while end < len(lines) and not _SECTION_END.match(lines[end]):
                end += 1
            return start, end
    return None


def split_previously(body: str) -> tuple[str, str]:
    """A note body as (its current text, the text of its Previously section)."""
    if "revious" not in body:  # (most notes: no line to look at)
        return body, ""
    lines = body.splitlines(keepends=True)
    found = _bounds(lines)
    if found is None:
        return body, ""
    start, end = found
    return "".join(lines[:start] + lines[end:]), "".join(lines[start + 1 : end])


def current_text(body: str) -> str:
    """A note body without its Previously section (what search snippets, MEMORY.md and an
    agent's context quote)."""
    return split_previously(body)[0]


def _retired_line(line: str, new: str, date: str) -> str:
    text = line.rstrip("\n").rstrip()
    note = f"until {date}; superseded by: {new}"
    if text.endswith(")") and PROVENANCE in text:
        return f"{text[:-1]}; {note})"
    return f"{text} ({note})"


def vb_statement(line: str) -> str | None:
    """The statement of a bullet vb wrote (it names its provenance), lower case, or None."""
    stripped = line.strip()
    if not stripped.startswith("- ") or PROVENANCE not in stripped:
        return None
    return statement_of(stripped).lower()


def _which(lines: list[str], replaced: Mapping[str, str]) -> dict[int, str]:
    """Line index -> the old statement it states: the line stating it exactly, else (a
    model may quote part of a line: "lives in Leeds") the one line whose statement holds it
    or is held by it; an old statement no vb line states moves nothing."""
    new = {statement_of(n).lower() for n in replaced.values()}
    said = {i: s for i, line in enumerate(lines) if (s := vb_statement(line)) and s not in new}
    out: dict[int, str] = {}
    for old in replaced:
        key = statement_of(old).lower()
        if not key:
            continue
        exact = [i for i, s in said.items() if s == key and i not in out]
        near = [i for i, s in said.items() if (key in s or s in key) and i not in out]
        chosen = exact[:1] or (near if len(near) == 1 else [])
        out.update({i: old for i in chosen})
    return out


def retire(body: str, replaced: Mapping[str, str], added: str, date: str) -> str:
    """`body` with `added` appended to its current part (before a Previously section) and
    each line vb wrote for an old statement (`replaced`: old statement -> the statement
    replacing it) moved to the end of the Previously section, which is created at the end
    of the note when missing. Every other line keeps its bytes; a statement no vb line
    states (a person's own line) stays where it is."""
    lines = body.splitlines(keepends=True)
    found = _bounds(lines)
    head, tail = (lines, []) if found is None else (lines[: found[0]], lines[found[0] :])
    current = "".join(head).rstrip("\n")
    if added.strip():
        current = f"{current}\n\n{added.strip()}" if current else added.strip()
    kept: list[str] = []
    moved: list[str] = []
    lines = current.splitlines(keepends=True)
    which = _which(lines, replaced)
    gap = False  # a line was just moved out after a blank line (or at the start)
    for index, line in enumerate(lines):
        old = which.get(index)
        if old is not None:
            moved.append(_retired_line(line, statement_of(replaced[old]), date))
            gap = gap or not kept or not kept[-1].strip()
        elif gap and not line.strip():
            gap = False  # the blank line after a moved paragraph goes with it
        else:
            kept.append(line)
            gap = False
    text = "".join(kept).rstrip("\n") + "\n"
    if not moved:
        return text + ("\n" + "".join(tail) if tail else "")
    entries = "".join(f"{m}\n" for m in moved)
    if not tail:
        return f"{text}\n{PREVIOUSLY}\n\n{entries}"
    section = _bounds(tail)
    end = section[1] if section else len(tail)
    previous = "".join(tail[:end]).rstrip("\n") + "\n"
    rest = "".join(tail[end:])
    return f"{text}\n{previous}{entries}" + (f"\n{rest}" if rest else "")
