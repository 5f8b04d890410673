"""Text rules shared by every step that reads prose: sentences, words, stop words, tags,
slugs and JSON-safe values. One copy of each."""

from __future__ import annotations

import datetime as dt
import difflib
import re
import unicodedata
from collections.abc import Hashable, Iterable
from typing import Any, TypeVar

from vault_brain.domain.errors import UsageError, VaultBrainError

_H = TypeVar("_H", bound=Hashable)


def unique(items: Iterable[_H]) -> list[_H]:
    """Items in first-seen order without repeats, in linear time."""
    return list(dict.fromkeys(items))


def json_safe(value: Any) -> Any:
    """A value from YAML or a result object as plain JSON types (dates become ISO strings,
    tuples and sets lists, unknown objects their str())."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else None
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [json_safe(v) for v in value]
    return str(value)


# Names Windows reserves for devices, with any extension: a vault synced to a Windows machine
# could not hold a file named so.
WINDOWS_RESERVED = frozenset(
    {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))}
)


def slugify(text: str, max_len: int = 80) -> str:
    """A file-system and id safe slug; keeps letters of any script, never empty or dotted,
    never a name Windows reserves."""
    norm = unicodedata.normalize("NFKC", text).lower()
    out = []
    for ch in norm:
        if ch.isalnum():
            out.append(ch)
        elif out and out[-1] != "-":
            out.append("-")
    slug = "".join(out).strip("-")[:max_len].strip("-") or "untitled"
    return f"{slug}-note" if slug in WINDOWS_RESERVED else slug


def check_category(category: str) -> str:
    """A category as given: one folder name. A path (`../../etc`, `a/b`) is refused, never
    quietly made into another name."""
    parts = re.split(r"[/\\]", category.strip())
    if len(parts) > 1 or parts[0] in (".", ".."):
        raise UsageError(
            f"category {category!r} is a path; a category is one folder name under entities/",
            hint="pass a plain name: --category people|projects|preferences, or your own word",
        )
    return category


def plural(n: int, noun: str) -> str:
    """`noun` for one, its English plural for any other count (copy: copies, push: pushes)."""
    if n == 1:
        return noun
    if noun.endswith(("s", "x", "sh", "ch")):
        return noun + "es"
    return noun[:-1] + "ies" if noun.endswith("y") and noun[-2:-1] not in "aeiou" else noun + "s"


def counted(n: int, noun: str) -> str:
    """`n` and the noun worded for it: "1 note", "2 notes", "0 memories"."""
    return f"{n} {plural(n, noun)}"


def normalize_tag(tag: str) -> str:
    return tag.strip().lstrip("#").strip().lower()


def clean_tags(values: Iterable[str] | None) -> list[str]:
    """Tags as given by a person or an agent (repeated or comma-separated, with or without
    '#') -> normalised, without repeats, in order."""
    return unique(
        tag for raw in values or [] for part in str(raw).split(",") if (tag := normalize_tag(part))
    )


def flatten(text: str) -> str:
    """Whitespace runs collapsed to one space."""
    return " ".join(text.split())


def clip(text: str, limit: int) -> str:
    """`text` on one line, cut to `limit` characters with an ellipsis."""
    flat = flatten(text)
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def clip_words(text: str, limit: int) -> str:
    """`text` on one line, cut at the last word boundary within `limit` characters with an
    ellipsis (a title never ends in half a word: "we live in Dunde")."""
    flat = flatten(text)
    if len(flat) <= limit:
        return flat
    cut = flat[:limit]
    head = cut.rsplit(" ", 1)[0] if " " in cut else cut
    return head.rstrip(" ,;:-–—") + "…"


_FENCE = re.compile(r"^[ \t]*(```|~~~).*?(?:^[ \t]*\1[^\n]*$|\Z)", re.DOTALL | re.MULTILINE)
INLINE_CODE = re.compile(r"`[^`\n]*`")
_LINE_MARKER = re.compile(r"^\s*(?:(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?|>\s*|#{1,6}\s+)")
_BOUNDARY = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"')\]]))\s+(?=[\"'(\[#*_]*\s?[A-Z0-9])")
_ABBREVIATIONS = frozenset({"dr.", "mr.", "mrs.", "ms.", "st.", "vs.", "e.g.", "i.e.", "etc."})
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’-]*")


def split_sentences(line: str) -> list[str]:
    parts: list[str] = []
    start = 0
    for match in _BOUNDARY.finditer(line):
        before = line[start : match.start()].split()
        if before and before[-1].lower() in _ABBREVIATIONS:
            continue
        parts.append(line[start : match.start()].strip())
        start = match.end()
    parts.append(line[start:].strip())
    return [part for part in parts if part]


def sentences(text: str) -> list[str]:
    """Sentences of prose in order: code fences dropped, list and quote markers stripped."""
    out: list[str] = []
    for raw in _FENCE.sub("\n", text).splitlines():
        line = _LINE_MARKER.sub("", raw).strip()
        if line:
            out.extend(split_sentences(line))
    return out


def wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


def words(text: str) -> list[str]:
    return _WORD.findall(text)


STOPWORDS = wordset(
    """a about above after again all also am an and any are as at be because been before being
    but by can could did do does doing done for from had has have having he her here hers him his
    how i if in into is it its just let lets let's me more most my no nor not now of off on once
    only or other our ours out over own same she should so some such than that the their them then
    there these they this those through to too under until up very was we were what when where
    which while who whom why will with would you your yours yes yeah ok okay sure think maybe
    still really get got going go want need one thing things something anything way
    today help work working doing"""
)


def content_words(text: str) -> set[str]:
    return {
        w.lower().replace("’", "'")
        for w in words(text)
        if len(w) >= 3 and w.lower() not in STOPWORDS
    }


def check_choice(value: str, options: Iterable[str], what: str) -> str:
    """`value` normalised (trimmed, lower case) if it is one of `options`; otherwise a
    VaultBrainError naming the options, with a did-you-mean hint when one is close."""
    choices = list(options)
    norm = value.strip().lower()
    if norm in choices:
        return norm
    close = difflib.get_close_matches(norm, choices, n=1, cutoff=0.6)
    if not close:  # "entities" -> "entity", "episodes" -> "episode"
        close = [c for c in choices if norm.rstrip("s").startswith(c[:5]) and len(norm) > 3][:1]
    hint = f"{value}: did you mean {close[0]}? " if close else ""
    raise VaultBrainError(
        f"unknown {what} {value!r}", hint=f"{hint}use one of: {', '.join(choices)}"
    )
