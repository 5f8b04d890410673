"""Links to vault files written the way Obsidian resolves them.

Obsidian's default link format ("shortest path when possible") names a Markdown file by its
name without `.md` when no other Markdown file in the vault has that name (compared without
case), else by its vault-relative path without `.md`; `|alias` sets the text shown. A
target may not hold `# | ^ : %% [[ ]]` (Obsidian reads `#` as a heading, `^` as a block,
`|` as the alias): a file whose path holds one is linked as a Markdown link instead, its
path percent-encoded. `resolve` is the reader's side (what a link points at), for checks.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from pathlib import PurePosixPath
from urllib.parse import quote

# What a wikilink's target may not hold (Obsidian's help, "Internal links": invalid characters)
FORBIDDEN = re.compile(r"[#|^:\[\]]|%%")
# What the shown text of a link may not hold: the alias ends at `]]`, a `|` or newline confuses
_ALIAS_BREAKS = re.compile(r"[\[\]|\r\n]+")
_WIKILINK = re.compile(r"(!?)\[\[([^\[\]\n]+)\]\]")


def _stem_key(rel: str) -> str:
    return PurePosixPath(rel).stem.lower()


class LinkNames:
    """The Markdown files of a vault by name (lowercased, without `.md`), as a plan will
    leave them: files it creates are `add`ed, files it moves are `move`d."""

    def __init__(self, rels: Iterable[str] = ()) -> None:
        self.count: Counter[str] = Counter(_stem_key(r) for r in rels if _is_markdown(r))

    def add(self, rel: str) -> None:
        if _is_markdown(rel):
            self.count[_stem_key(rel)] += 1

    def remove(self, rel: str) -> None:
        key = _stem_key(rel)
        if _is_markdown(rel) and self.count[key] > 0:
            self.count[key] -= 1

    def move(self, old: str, new: str) -> None:
        self.remove(old)
        self.add(new)

    def unique(self, rel: str) -> bool:
        """No other Markdown file in the vault has this file's name."""
        return self.count[_stem_key(rel)] <= 1

    def target(self, rel: str) -> str:
        """How a link names the vault file `rel` (POSIX, vault-relative): its name when
        unique, else its path; without `.md` (another file's extension is kept)."""
        path = PurePosixPath(rel)
        whole = path.with_suffix("").as_posix() if _is_markdown(rel) else path.as_posix()
        if not self.unique(rel):
            return whole
        return path.stem if _is_markdown(rel) else path.name

    def link(self, rel: str, alias: str | None = None) -> str:
        """A link to `rel` showing `alias` (made safe: no brackets, `|` or line breaks)."""
        shown = " ".join(_ALIAS_BREAKS.sub(" ", alias or "").split())
        target = self.target(rel)
        if FORBIDDEN.search(target):
            text = shown or PurePosixPath(rel).stem
            return f"[{text}]({quote(rel, safe='/')})"
        return f"[[{target}|{shown}]]" if shown and shown != target else f"[[{target}]]"


def _is_markdown(rel: str) -> bool:
    return rel.lower().endswith(".md")


def wikilinks(text: str) -> list[str]:
    """Every `[[...]]` link in `text` (embeds too), as written between the brackets."""
    return [m.group(2) for m in _WIKILINK.finditer(text)]


def link_target(inner: str) -> str:
    """The file part of a link's inside: before `|` (the alias) and `#` (heading, block)."""
    return inner.split("|", 1)[0].split("#", 1)[0].strip()


def resolve(target: str, files: Iterable[str]) -> str | None:
    """The vault file a link target points at by Obsidian's rules, or None: the path
    (`.md` added when the target has no extension) matched without case, else the one
    Markdown file (or file, with its extension given) of that name. Several files of the
    name and no path: None (which one Obsidian opens depends on the note linking)."""
    rels = list(files)
    if not target:
        return None
    wanted = target.lower()
    has_ext = PurePosixPath(target).suffix.lower() not in ("", ".")
    candidates = [wanted] if has_ext else [wanted + ".md"]
    if has_ext and not wanted.endswith(".md"):
        candidates.append(wanted + ".md")
    by_path = {r.lower(): r for r in rels}
    for candidate in candidates:
        if candidate in by_path:
            return by_path[candidate]
    if "/" in target:
        return None
    named = [
        r
        for r in rels
        if PurePosixPath(r).name.lower() in candidates
        or (not has_ext and _is_markdown(r) and _stem_key(r) == wanted)
    ]
    return named[0] if len(named) == 1 else None
