"""Reading front matter from any note a person may write, and editing it line by line.

Reading goes through python-frontmatter's YAML handler (with the C loader when
PyYAML has one). Writing never re-serialises the whole block: the lines of the keys
that change are replaced, new keys are appended before the closing `---`, and every
other byte -- BOM, line endings, comments, quoting, key order, the body -- stays.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from vault_brain.domain.errors import VaultBrainError
from vault_brain.domain.text import json_safe, unique


class UneditableNoteError(VaultBrainError):
    """vb will not edit this note: its front matter cannot be read safely."""


BOM = "\ufeff"
_BOUNDARY = re.compile(r"^-{3,}[ \t]*\r?\n?$")
_KEY_LINE = re.compile(r"^(?P<key>[^\s#:'\"\-?][^:]*?|'[^']*'|\"[^\"]*\"):(?:[ \t]|\r?\n|$)")


@dataclass
class Parsed:
    meta: dict[str, Any]
    body: str
    has_front_matter: bool
    error: str | None = None
    raw_meta_keys: list[str] = field(default_factory=list)
    issues: list[str] = field(default_factory=list)
    """Values that were readable but not usable as written (the note is still edited)."""


_VERBATIM_KEYS = ("id", "title", "category")


# Limits that make reading any note safe: bounded time and memory, no crash in the C parser
# (PyYAML's C loader overflows its stack on deeply nested input), no exponential alias
# expansion ("billion laughs"), no recursive structures.
MAX_FRONT_MATTER_CHARS = 64 * 1024
MAX_DEPTH = 32
MAX_ALIASES = 64
MAX_VALUES = 20_000
_RISKY_LINE = re.compile(r"^(?P<indent> *)(?P<dashes>(?:- +){4,})")


def _looks_risky(fm: str) -> bool:
    """Front matter the C loader must not see: anchors or aliases, or deep nesting."""
    if "&" in fm or "*" in fm:
        return True
    depth = deepest = 0
    for ch in fm:
        if ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth = max(0, depth - 1)
    if deepest > MAX_DEPTH // 2:
        return True
    for line in fm.splitlines():
        match = _RISKY_LINE.match(line)
        if (match and len(match.group("dashes")) > MAX_DEPTH) or len(line) - len(
            line.lstrip(" ")
        ) > MAX_DEPTH:
            return True
    return False


def _yaml_12(base: Any) -> Any:
    """A subclass of the PyYAML loader `base` with YAML 1.2 scalars, as Obsidian reads them:
    only true/false are booleans, no sexagesimal numbers (`12:30` stays text), no octal from
    a leading 0."""

    class Loader(base):
        pass

    legacy = {"tag:yaml.org,2002:bool", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"}
    Loader.yaml_implicit_resolvers = {
        first: [(tag, rx) for tag, rx in resolvers if tag not in legacy]
        for first, resolvers in base.yaml_implicit_resolvers.items()
    }
    Loader.add_implicit_resolver(
        "tag:yaml.org,2002:bool",
        re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
        list("tTfF"),
    )
    Loader.add_implicit_resolver(
        "tag:yaml.org,2002:int",
        re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"),
        list("-+0123456789"),
    )
    Loader.add_implicit_resolver(
        "tag:yaml.org,2002:float",
        re.compile(
            r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
            r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
        ),
        list("-+.0123456789"),
    )

    def construct_int(loader: Any, node: Any) -> int:
        text = str(loader.construct_scalar(node))
        if text.startswith("0o"):
            return int(text[2:], 8)
        return int(text, 16) if text.startswith("0x") else int(text, 10)

    Loader.add_constructor("tag:yaml.org,2002:int", construct_int)
    return Loader


@lru_cache(maxsize=1)
def _loader() -> Any:
    """The fast loader (PyYAML's C parser when it has one), for ordinary front matter."""
    import yaml  # lazy: PyYAML loads only when a note is parsed (a search parses none)

    return _yaml_12(getattr(yaml, "CSafeLoader", yaml.SafeLoader))


@lru_cache(maxsize=1)
def _bounded_loader() -> Any:
    """The pure-Python loader with a depth and an alias budget, for front matter with anchors,
    aliases or deep nesting: it fails fast and cleanly where the C parser could crash."""
    import yaml

    class Bounded(_yaml_12(yaml.SafeLoader)):  # type: ignore[misc]
        depth = 0
        aliases = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                self.aliases += 1
                if self.aliases > MAX_ALIASES:
                    raise yaml.YAMLError(f"more than {MAX_ALIASES} YAML aliases")
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise yaml.YAMLError(f"nested more than {MAX_DEPTH} levels deep")
            try:
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

    return Bounded


def _bounded_plain(value: Any, issues: list[str]) -> Any:
    """YAML values as JSON-safe values, refusing recursive structures (a self-referencing
    alias) and more than MAX_VALUES values (aliases that multiply). A number that is not
    finite (.inf, 1e400, .nan) is kept as empty and noted in `issues`."""
    count = 0

    def walk(item: Any, path: tuple[int, ...]) -> Any:
        nonlocal count
        count += 1
        if count > MAX_VALUES:
            raise ValueError(f"more than {MAX_VALUES} values")
        if isinstance(item, dict | list | tuple | set | frozenset):
            if id(item) in path:
                raise ValueError("a value that contains itself (a recursive alias)")
            inner = (*path, id(item))
            if isinstance(item, dict):
                return {str(k): walk(v, inner) for k, v in item.items()}
            return [walk(v, inner) for v in item]
        if isinstance(item, float) and not math.isfinite(item):
            issues.append(f"a number that is not finite ({item!r}) is read as empty")
        return json_safe(item)

    return walk(value, ())


def decode(raw: bytes) -> str:
    """Bytes of a note -> text without BOM and with '\\n' line ends (for reading only)."""
    text = raw.decode("utf-8", errors="replace")
    if text.startswith(BOM):
        text = text[1:]
    return text.replace("\r\n", "\n").replace("\r", "\n")


def parse_text(raw: bytes | str) -> Parsed:
    """Split a note into metadata and body. Never raises and never runs away: malformed,
    oversized, too deep, recursive or alias-multiplying front matter is reported as the
    note's problem (the body is still read)."""
    import frontmatter  # lazy: see _loader
    import yaml

    text = decode(raw) if isinstance(raw, bytes) else raw.lstrip(BOM).replace("\r\n", "\n")
    handler = frontmatter.YAMLHandler()
    if not handler.detect(text):
        return Parsed({}, text, False)
    try:
        fm, body = handler.split(text)
    except ValueError:
        return Parsed({}, text, True, error="front matter has no closing --- line")
    body = body[1:] if body.startswith("\n") else body
    if len(fm) > MAX_FRONT_MATTER_CHARS:
        return Parsed(
            {}, body, True, error=f"front matter larger than {MAX_FRONT_MATTER_CHARS // 1024} KB"
        )
    loader = _bounded_loader() if _looks_risky(fm) else _loader()
    issues: list[str] = []
    try:
        data = handler.load(fm, Loader=loader)
        plain = _bounded_plain(data, issues) if isinstance(data, dict) else data
    except (yaml.YAMLError, ValueError, TypeError, RecursionError, OverflowError) as exc:
        # (PyYAML raises ValueError for 2023-02-30, OverflowError for a huge date)
        first = str(exc).strip().splitlines()
        return Parsed(
            {}, body, True, error=" ".join(x.strip() for x in first[:3]) or "invalid YAML"
        )
    if plain is None:
        plain = {}
    if not isinstance(plain, dict):
        return Parsed({}, body, True, error="front matter is not a mapping of keys to values")
    meta: dict[str, Any] = {str(k): v for k, v in plain.items()}
    for key in _VERBATIM_KEYS:  # `id: 013` is the id "013", not the number 13
        if key in meta and not isinstance(meta[key], str) and meta[key] is not None:
            found = re.search(rf"^{key}:[ \t]*(.+?)[ \t]*$", fm, re.MULTILINE)
            if found and not found.group(1).startswith(("[", "{", "'", '"', "|", ">")):
                meta[key] = found.group(1)
    return Parsed(meta, body, True, raw_meta_keys=list(meta), issues=unique(issues))


def body_text(raw: bytes) -> str:
    """Just the body of a note (no YAML parsing): for snippets of search hits."""
    text = decode(raw)
    match = re.match(r"-{3,}[ \t]*\n.*?^-{3,}[ \t]*$\n?", text, re.MULTILINE | re.DOTALL)
    return text[match.end() :] if match else text


# ---------------------------------------------------------------------------
# Line-level editing


def _newline_of(text: str) -> str:
    idx = text.find("\n")
    return "\r\n" if idx > 0 and text[idx - 1] == "\r" else "\n"


def _render_scalar(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _render_float(value)
    if isinstance(value, dt.datetime):
        return value.replace(microsecond=0).isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    text = str(value)
    if _ISO_DATE.match(text) and _is_real_date(text):
        return text  # written unquoted so Obsidian shows it as a date
    return _quote_if_needed(text)


def _render_float(value: float) -> str:
    """A float YAML 1.1 reads back as a float: always with a '.', never in exponent form."""
    if value != value:
        return ".nan"
    if value in (float("inf"), float("-inf")):
        return ".inf" if value > 0 else "-.inf"
    text = f"{round(value, 6):.6f}".rstrip("0")
    return text + "0" if text.endswith(".") else text


def _is_real_date(text: str) -> bool:
    try:
        dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?(?:[+-]\d{2}:\d{2}|Z)?)?$")
_PLAIN_SAFE = r"^[A-Za-z_\u00c0-\uffff][\w\u00c0-\uffff ./()+-]*$"  # 3 ms to compile: on use
_RESERVED = {"true", "false", "yes", "no", "on", "off", "null", "none", "~", "y", "n"}


def _quote_if_needed(text: str) -> str:
    """Plain when YAML reads it back unchanged, else double-quoted with every character that
    YAML would drop or alter (control characters, line and paragraph separators, BOM,
    noncharacters) escaped."""
    if (
        re.match(_PLAIN_SAFE, text)  # compiled once, on first use, by re's cache
        and text.isprintable()
        and text.lower() not in _RESERVED
        and not text.endswith(" ")
    ):
        return text
    out = []
    for ch in text:
        code = ord(ch)
        if ch in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[ch])
        elif code < 0x20 or 0x7F <= code <= 0x9F or (not ch.isprintable() and ch != " "):
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


_SIMPLE_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r", "\x00": "\\0"}


def render_key(key: str, value: Any, nl: str, block_indent: str | None = None) -> list[str]:
    """The lines that hold `key: value`; lists use flow style unless `block_indent` is given."""
    if isinstance(value, list | tuple):
        items = [_render_scalar(v) for v in value]
        if block_indent is not None and items:
            return [f"{key}:{nl}"] + [f"{block_indent}- {item}{nl}" for item in items]
        return [f"{key}: [{', '.join(items)}]{nl}"]
    if isinstance(value, dict):
        inner = ", ".join(
            f"{_quote_if_needed(str(k))}: {_render_scalar(v)}" for k, v in value.items()
        )
        return [f"{key}: {{{inner}}}{nl}"]
    rendered = _render_scalar(value)
    return [f"{key}: {rendered}{nl}" if rendered else f"{key}:{nl}"]


def _key_spans(fm_lines: list[str]) -> dict[str, tuple[int, int]]:
    """Top-level key -> (first line, end line exclusive) within the front matter lines."""
    starts: list[tuple[str, int]] = []
    for i, line in enumerate(fm_lines):
        match = _KEY_LINE.match(line)
        if match:
            starts.append((match.group("key").strip("'\""), i))
    spans: dict[str, tuple[int, int]] = {}
    for n, (key, start) in enumerate(starts):
        end = starts[n + 1][1] if n + 1 < len(starts) else len(fm_lines)
        # trailing blank lines and column-0 comments belong to the file, not to the key
        while end - 1 > start and (
            not fm_lines[end - 1].strip() or fm_lines[end - 1].startswith("#")
        ):
            end -= 1
        spans[key] = (start, end)
    return spans


def _block_indent(lines: list[str]) -> str | None:
    for line in lines[1:]:
        stripped = line.lstrip(" ")
        if stripped.startswith("- ") or stripped.rstrip("\r\n") == "-":
            return line[: len(line) - len(stripped)]
    return None


def edit_front_matter(
    raw: bytes,
    changes: Mapping[str, Any] | None = None,
    remove: Iterable[str] = (),
    *,
    where: str = "note",
) -> bytes:
    """Return `raw` with `changes` set and `remove` keys dropped; nothing else differs.

    A note without front matter gets a new block at the top; the body bytes follow unchanged.
    Raises UneditableNoteError when the note is not UTF-8 or its front matter is not valid
    YAML, so that a note vb cannot read safely is never written.
    """
    changes = dict(changes or {})
    remove = [k for k in remove if k not in changes]
    text = utf8(raw, where)
    bom = BOM if text.startswith(BOM) else ""
    if bom:
        text = text[1:]
    nl = _newline_of(text)
    lines = text.splitlines(keepends=True)
    has_fm = bool(lines) and _BOUNDARY.match(lines[0]) is not None
    close = None
    if has_fm:
        close = next((i for i in range(1, len(lines)) if _BOUNDARY.match(lines[i])), None)
        if close is None:
            raise UneditableNoteError(
                f"{where}: front matter has no closing --- line; vb will not edit it",
                hint="add the closing --- line (or fix the YAML) and try again",
            )
        parsed = parse_text(raw)
        if parsed.error:
            raise UneditableNoteError(
                f"{where}: front matter is not valid YAML ({parsed.error}); vb will not edit it",
                hint="fix the YAML between the --- lines and try again",
            )
    if not has_fm:
        if not changes:
            return raw
        block = ["---" + nl]
        for key, value in changes.items():
            block += render_key(key, value, nl)
        block.append("---" + nl)
        return (bom + "".join(block) + text).encode("utf-8")

    assert close is not None
    fm_lines = lines[1:close]
    if fm_lines and not fm_lines[-1].endswith("\n"):
        fm_lines[-1] += nl
    spans = _key_spans(fm_lines)
    replaced: dict[int, tuple[int, list[str]]] = {}
    appended: list[str] = []
    for key, value in changes.items():
        if key in spans:
            start, end = spans[key]
            indent = _block_indent(fm_lines[start:end])
            replaced[start] = (end, render_key(key, value, nl, indent))
        else:
            appended += render_key(key, value, nl)
    for key in remove:
        if key in spans:
            start, end = spans[key]
            replaced[start] = (end, [])
    out: list[str] = []
    i = 0
    while i < len(fm_lines):
        if i in replaced:
            end, new_lines = replaced[i]
            out += new_lines
            i = end
        else:
            out.append(fm_lines[i])
            i += 1
    # new keys go after the last key's lines, before trailing blank lines or comments
    insert_at = len(out)
    while insert_at > 0 and (not out[insert_at - 1].strip() or out[insert_at - 1].startswith("#")):
        insert_at -= 1
    out[insert_at:insert_at] = appended
    result = [lines[0], *out, *lines[close:]]
    return (bom + "".join(result)).encode("utf-8")


def strip_front_matter_block(raw: bytes) -> bytes:
    """Remove an entire (empty) front matter block that vb added, leaving the body bytes."""
    text = utf8(raw)
    bom = BOM if text.startswith(BOM) else ""
    lines = text[len(bom) :].splitlines(keepends=True)
    if not lines or not _BOUNDARY.match(lines[0]):
        return raw
    close = next((i for i in range(1, len(lines)) if _BOUNDARY.match(lines[i])), None)
    if close is None or any(x.strip() for x in lines[1:close]):
        return raw
    return (bom + "".join(lines[close + 1 :])).encode("utf-8")


def utf8(raw: bytes, where: str = "note") -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UneditableNoteError(
            f"{where}: not UTF-8 text (byte {exc.start}); vb will not edit it",
            hint="convert the file to UTF-8 (e.g. `iconv -f latin1 -t utf-8`) and try again",
        ) from None


def replace_body(raw: bytes, new_body: str) -> bytes:
    """Keep the front matter bytes exactly; put `new_body` after them in the file's line ends."""
    text = utf8(raw)
    bom = BOM if text.startswith(BOM) else ""
    text = text[len(bom) :]
    nl = _newline_of(text)
    body = new_body.replace("\r\n", "\n")
    if nl != "\n":
        body = body.replace("\n", nl)
    lines = text.splitlines(keepends=True)
    if lines and _BOUNDARY.match(lines[0]):
        close = next((i for i in range(1, len(lines)) if _BOUNDARY.match(lines[i])), None)
        if close is not None:
            head = "".join(lines[: close + 1])
            if not head.endswith(("\n", "\r")):
                head += nl
            return (bom + head + body).encode("utf-8")
    return (bom + body).encode("utf-8")
