"""Snippets: the ~200 characters of a text where a query's words are found together, as
Obsidian shows them (a wikilink as its text, a heading without its marks), for the notes'
index and the knowledge index alike. Made only for the hits a search keeps, and cheaply:
the query's words are found with `str.find` on the start of each stem, and only the
passage shown is made readable."""

from __future__ import annotations

import re
from typing import Any

SNIPPET_CHARS = 200
LEAD_CHARS = 60  # of text before the first matched word of the passage, at most
MAX_SCAN_CHARS = 20_000  # a passage is looked for in a long text's start only
MAX_MATCHES = 25  # occurrences of each word of the query looked at
MAX_REMEMBERED_WORDS = 200_000
_WORD = re.compile(r"\w+", re.UNICODE)
# [[target]], [[target|alias]], [[target#heading]], ![[embed]] (Obsidian's wikilinks)
_WIKILINK = re.compile(r"!?\[\[([^\[\]|#]*)(?:#([^\[\]|]*))?(?:\|([^\[\]]*))?\]\]")
_MD_LINK = re.compile(r"!?\[([^\[\]]*)\]\([^()\s]*\)")  # [text](url)
_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+", re.MULTILINE)
_SENTENCE_END = re.compile(r"[.!?:;]\s|\n")


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
        """The ~200 characters of `body` around the passage where the most of `stems` are
        found together (the text's start when none is), made readable."""
        text = body.strip()
        if not text:
            return ""
        start = _outside_link(text, _start(text, self._passage(text, stems)))
        if start and len(text) <= 2 * SNIPPET_CHARS and _shown_len(text) <= SNIPPET_CHARS:
            start = 0  # the whole text fits: all of it
        # links shrink when made readable: read more than is shown, then cut
        raw_end = _outside_link(text, start + 2 * SNIPPET_CHARS, forward=True)
        shown = " ".join(readable(text[start:raw_end]).split())
        prefix = "…" if start > 0 else ""
        more = len(shown) > SNIPPET_CHARS or raw_end < len(text)
        return prefix + shown[:SNIPPET_CHARS].rstrip() + ("…" if more else "")

    def _matches(self, text: str, stems: set[str]) -> list[tuple[int, str]]:
        """(position, stem) of the words of `text` whose stem is one of `stems`, in order.
        A word is looked at only where the start of a stem is found (a stem is its word's
        start but for the last letters the stemmer changed)."""
        head = text[:MAX_SCAN_CHARS]
        low = head.lower()
        if len(low) != len(head):  # (a letter whose lower case is longer: read every word)
            return [
                (m.start(), st)
                for m in _WORD.finditer(head)
                if (st := self.stem(m.group(0).lower())) in stems
            ]
        starts = {st if len(st) <= 3 else st[: max(3, len(st) - 2)] for st in stems if st}
        matches: list[tuple[int, str]] = []
        for start in starts:
            found, at = 0, low.find(start)
            while at != -1 and found < MAX_MATCHES:
                word = _WORD.match(low, at)
                if word is not None and (at == 0 or not _is_word_char(low[at - 1])):
                    stem = self.stem(word.group(0))
                    if stem in stems:
                        matches.append((at, stem))
                        found += 1
                    at = low.find(start, word.end())
                else:
                    at = low.find(start, at + 1)
        if not matches and not head.isascii():  # (a stem that is no start of its word)
            return [
                (m.start(), st)
                for m in _WORD.finditer(head)
                if (st := self.stem(m.group(0).lower())) in stems
            ]
        return sorted(set(matches))

    def _passage(self, text: str, stems: set[str]) -> int:
        """Where the passage's first matched word is: the window of `SNIPPET_CHARS` less
        `LEAD_CHARS` holding the most different query stems (then the most matches, then
        the first); 0 when no word matches."""
        if not stems:
            return 0
        matches = self._matches(text, stems)
        if not matches:
            return 0
        best, best_key = matches[0][0], (0, 0)
        span = SNIPPET_CHARS - LEAD_CHARS
        inside: dict[str, int] = {}  # stem: its matches in the window matches[i:end]
        end = 0
        for i, (pos, stem) in enumerate(matches):
            while end < len(matches) and matches[end][0] < pos + span:
                inside[matches[end][1]] = inside.get(matches[end][1], 0) + 1
                end += 1
            key = (len(inside), end - i)
            if key > best_key:
                best, best_key = pos, key
                if key[0] == len(stems):
                    break  # (every word of the query, as early as it comes)
            left = inside[stem] - 1
            if left:
                inside[stem] = left
            else:
                del inside[stem]
        return best


def _is_word_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


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


def _shown_len(text: str) -> int:
    return len(" ".join(readable(text).split()))


def _outside_link(text: str, at: int, forward: bool = False) -> int:
    """`at`, or when it falls inside a `[[link]]`, the link's start (its end, `forward`),
    so a link is made readable whole."""
    if at <= 0 or at >= len(text):
        return max(0, min(at, len(text)))
    opened = text.rfind("[[", 0, at)
    if opened == -1 or text.rfind("]]", 0, at) > opened:
        return at
    if not forward:
        return opened
    closed = text.find("]]", at)
    return len(text) if closed == -1 else closed + 2
