"""What a note says of its own: its body without headings, links, vb's provenance and vb's
"nothing found" boilerplate. A note with nothing left says nothing (a manufactured note):
promotion mines only this text, MEMORY.md lists only notes that have some, and `vb doctor`
archives vb's own notes that have none."""

from __future__ import annotations

import re

# vb's episode boilerplate (app/sessions/flush.py, domain/sessions/summarize.py,
# domain/notes/merge.py)
_BOILERPLATE = re.compile(
    r"^(?:Session `[^`]*`, messages \S+\s*[–-]\s*\S+\."
    r"|No decisions, facts or open questions in \d+ messages?\."
    r"|(?:Decisions|Facts|Open questions|Sources):"
    r"|Names: [^.:;!?]*)$",
    re.IGNORECASE,
)
NOTHING_DURABLE = re.compile(r"\bNo decisions, facts or open questions in \d+ messages?\.")
_WIKILINK = re.compile(r"!?\[\[[^\]\n]*\]\]")
_MD_LINK = re.compile(r"!?\[[^\]\n]*\]\([^)\n]*\)")
_URL = re.compile(r"\bhttps?://\S+")
# "(from session s6, m0001)", "(from [[...]]; supersedes: ...)", "(2026-11-26)"
_PROVENANCE = re.compile(r"\((?:from |merged |\d{4}-\d{2}-\d{2})[^()]*\)\s*$", re.IGNORECASE)
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?|^\s*>\s*")
_WORD = re.compile(r"[^\W\d_]{2,}")
_SOURCES_HEADING = re.compile(r"^#{1,6}\s+sources\s*$", re.IGNORECASE)


def own_lines(body: str) -> list[str]:
    """The body's lines that say something of their own (bullets and provenance removed),
    in order; headings, link-only lines, vb's provenance and boilerplate, a `## Sources`
    section and code fences' markers are left out."""
    out: list[str] = []
    in_sources = False
    fence: str | None = None
    for raw in body.splitlines():
        line = raw.strip()
        marker = re.match(r"^(```|~~~)", line)
        if marker:
            fence = None if fence == marker.group(1) else (fence or marker.group(1))
            continue
        if fence is not None:
            if line:
                out.append(line)
            continue
        if line.startswith("#"):
            in_sources = bool(_SOURCES_HEADING.match(line))
            continue
        if in_sources or not line or line in ("---", "***"):
            continue
        text = _BULLET.sub("", line).strip()
        if _BOILERPLATE.match(text):
            continue
        while True:  # trailing provenance, possibly several: "(...) (from ...)"
            stripped = _PROVENANCE.sub("", text).rstrip()
            if stripped == text:
                break
            text = stripped
        bare = _URL.sub(" ", _MD_LINK.sub(" ", _WIKILINK.sub(" ", text)))
        if _WORD.search(bare):
            out.append(text)
    return out


def has_own_content(body: str) -> bool:
    """True when the body says something beyond headings, links and provenance."""
    return bool(own_lines(body))


def own_text(body: str) -> str:
    """The body's own lines as text (what promotion mines for facts)."""
    return "\n".join(own_lines(body))


# A fact line vb appends to an entity note: "- statement (from session s1, m0001)" or
# "- statement (from [[episodes/...|title]])", perhaps with "; supersedes: ..." inside.
_VB_FACT_LINE = re.compile(r"^- .+ \(from (?:session |\[\[)[^()]*\)$")
# what older promotions copied from a merged episode's headings or sources ("Session s1: hi")
_COPIED_TITLE = re.compile(r"^(?:\[\[[^|\]]*\|)?Session \S+: ")


def vb_entity_lines(body: str) -> list[str] | None:
    """The lines of an entity note vb wrote entirely (each a fact line with vb's provenance,
    or a link): its lines; None when any line is a person's own (vb never judges it)."""
    lines = [ln.strip() for ln in body.splitlines() if ln.strip()]
    if not lines:
        return None
    for line in lines:
        if line.startswith("#") or _VB_FACT_LINE.match(line) or not own_lines(line):
            continue
        return None
    return lines


def copied_titles(lines: list[str]) -> list[str]:
    """The fact lines that are an episode's title copied, not a fact (older promotions)."""
    return [ln for ln in own_lines("\n".join(lines)) if _COPIED_TITLE.match(ln)]
