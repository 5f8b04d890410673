"""Reading front matter from any note a person may write (editing is `frontmatter_edit`).

Reading goes through python-frontmatter's YAML handler with YAML 1.2 scalars (the C loader
for ordinary front matter; a bounded pure-Python loader where anchors, aliases or deep
nesting could make the C parser run away or crash).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from vault_brain.domain.text import json_safe, unique

BOM = "\ufeff"


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
_BRACKET = re.compile(r"[\[\]{}]")
_RISKY_LINE = re.compile(r"^(?P<indent> *)(?P<dashes>(?:- +){4,})")


def load_yaml(text: str) -> Any:
    """A whole YAML document (YAML 1.2 scalars, bounded depth and aliases), as plain data;
    ValueError says why it is not valid."""
    import yaml  # lazy: PyYAML

    try:
        return yaml.load(text, Loader=_bounded_loader())  # a safe loader (bounded)
    except (yaml.YAMLError, ValueError, TypeError, RecursionError, OverflowError) as exc:
        first = str(exc).strip().splitlines()
        raise ValueError(" ".join(x.strip() for x in first[:3]) or "invalid YAML") from None


def _looks_risky(fm: str) -> bool:
    """Front matter the C loader must not see: anchors or aliases, or deep nesting."""
    if "&" in fm or "*" in fm:
        return True
    depth = deepest = 0
    for ch in _BRACKET.findall(fm):
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
