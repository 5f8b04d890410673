"""Snippets: the ~200 characters of a text around the first word that matches a query's
stems, for the notes' index and the knowledge index alike."""

from __future__ import annotations

import re
from typing import Any

SNIPPET_CHARS = 200
MAX_REMEMBERED_WORDS = 200_000
_WORD = re.compile(r"\w+", re.UNICODE)


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
        """The ~200 characters around the first word of `body` whose stem is in `stems`."""
        text = body.strip()
        if not text:
            return ""
        start = 0
        for match in _WORD.finditer(text):
            if self.stem(match.group(0)) in stems:
                start = max(0, match.start() - 60)
                break
        window = " ".join(text[start : start + SNIPPET_CHARS].split())
        prefix = "…" if start > 0 else ""
        suffix = "…" if start + SNIPPET_CHARS < len(text) else ""
        return prefix + window + suffix
