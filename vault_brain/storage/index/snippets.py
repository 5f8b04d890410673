"""Snippets: the ~200 characters of a text where a query's words are found together, as
Obsidian shows them (a wikilink as its text, a heading without its marks), for the notes'
index and the knowledge index alike. Made only for the hits a search keeps."""

from __future__ import annotations

import re
from typing import Any

SNIPPET_CHARS = 200
LEAD_CHARS = 60  # of text before the first matched word of the passage
MAX_SCAN_CHARS = 20_000  # a passage is looked for in a long text's start only
MAX_MATCHES = 400
MAX_REMEMBERED_WORDS = 200_000
_WORD = re.compile(r"\w+", re.UNICODE)
# [[target]], [[target|alias]], [[target#heading]], ![[embed]] (Obsidian's wikilinks)
_WIKILINK = re.compile(r"!?\[\[([^\[\]|#]*)(?:#([^\[\]|]*))?(?:\|([^\[\]]*))?\]\]")
_MD_LINK = re.compile(r"!?\[([^\[\]]*)\]\([^()\s]*\)")  # [text](url)
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+", re.MULTILINE)


def _link_text(match: re.Match[str]) -> str:
    target, heading, alias = match.group(1), match.group(2), match.group(3)
    if alias is not None and alias.strip():
        return alias.strip()
    text = target.strip()
    if heading:
        heading = heading.strip().lstrip("^")
        text = f"{text} > {heading}" if text else heading
    return text


def readable(text: str) -> str:
    """Markdown as a reader sees it in Obsidian: wikilinks and links as their text,
    headings without their `#` marks."""
    if "[" in text:
        text = _WIKILINK.sub(_link_text, text)
        text = _MD_LINK.sub(r"\1", text)
    if "#" in text:
        text = _HEADING.sub("", text)
    return text


class Snippets:
    def __init__(self, analyzer: Any) -> None:
        self._ana = analyzer
        self._stems: dict[str, str] = {}

    def stem(self, word: str) -> str:
        """The word as the index holds it ("" for a stop word), remembered: analysing each
        word of a body anew was most of a snippet's time."""
        stem = self._stems.get(word)
        if stem is None:
            tokens = [t.text for t in self._ana(word)]
            stem = tokens[0] if tokens else ""
            if len(self._stems) < MAX_REMEMBERED_WORDS:
                self._stems[word] = stem
        return stem

    def snippet(self, body: str, stems: set[str]) -> str:
        """The ~200 characters of `body` (made readable) around the passage where the most
        of `stems` are found together; the text's start when none is."""
        text = readable(body).strip()
        if not text:
            return ""
        start = _start(text, self._passage(text, stems))
        window = " ".join(text[start : start + SNIPPET_CHARS].split())
        prefix = "…" if start > 0 else ""
        suffix = "…" if start + SNIPPET_CHARS < len(text) else ""
        return prefix + window + suffix

    def _passage(self, text: str, stems: set[str]) -> int:
        """Where the passage's first matched word is: the window of `SNIPPET_CHARS` less
        `LEAD_CHARS` holding the most different query stems (then the most matches, then
        the first); 0 when no word matches."""
        if not stems:
            return 0
        matches: list[tuple[int, str]] = []
        for found in _WORD.finditer(text, 0, MAX_SCAN_CHARS):
            stem = self.stem(found.group(0).lower())
            if stem in stems:
                matches.append((found.start(), stem))
                if len(matches) >= MAX_MATCHES:
                    break
        if not matches:
            return 0
        best, best_key = matches[0][0], (0, 0)
        span = SNIPPET_CHARS - LEAD_CHARS
        end = 0
        for i, (pos, _) in enumerate(matches):
            end = max(end, i)
            while end + 1 < len(matches) and matches[end + 1][0] < pos + span:
                end += 1
            group = matches[i : end + 1]
            key = (len({s for _, s in group}), len(group))
            if key > best_key:
                best, best_key = pos, key
                if key[0] == len(stems):
                    break  # (every word of the query, as early as it comes)
        return best


_SENTENCE_END = re.compile(r"[.!?:;]\s|\n")


def _start(text: str, first: int) -> int:
    """Where a snippet whose first matched word is at `first` begins: the start of that
    sentence when it is at most `LEAD_CHARS` before, else a word `LEAD_CHARS` or less
    before (the text's start when it is that near)."""
    if first <= LEAD_CHARS:
        return 0
    lead = first - LEAD_CHARS
    ends = [m.end() for m in _SENTENCE_END.finditer(text, lead, first)]
    if ends:
        return ends[-1]
    space = text.find(" ", lead, first)
    return space + 1 if space >= 0 else lead
