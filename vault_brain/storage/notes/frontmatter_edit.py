"""Editing front matter: only the keys that change differ, in every style vb accepts.

Block-style front matter (one `key: value` per line, as Obsidian writes it) is edited line by
line: the lines of the keys that change are replaced, new keys go before the closing `---`.
A flow mapping (`{title: x, tags: [a]}`) or JSON front matter is edited inside the braces, at
the exact spans of the keys and values PyYAML reports. Every other byte -- BOM, line ends,
comments, quoting, key order, the body -- stays. Every edit is checked by reading the result
back: if it does not say exactly what was intended (an anchor shared with another key, a
style vb cannot edit in place), the note is refused with a clear error and nothing is written.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

from vault_brain.domain.clock import parse_time
from vault_brain.domain.errors import VaultBrainError
from vault_brain.domain.sync.counters import render_float
from vault_brain.domain.text import json_safe
from vault_brain.storage.notes.frontmatter import BOM, _bounded_loader, parse_text

_BOUNDARY = re.compile(r"^-{3,}[ \t]*\r?\n?$")
_KEY_LINE = re.compile(r"^(?P<key>[^\s#:'\"\-?][^:]*?|'[^']*'|\"[^\"]*\"):(?:[ \t]|\r?\n|$)")


class UneditableNoteError(VaultBrainError):
    """vb will not edit this note: its front matter cannot be read or edited safely."""


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
        return render_float(value)
    if isinstance(value, dt.datetime):
        return value.replace(microsecond=0).isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    text = str(value)
    if _ISO_DATE.match(text) and _is_real_date(text):
        return text  # written unquoted so Obsidian shows it as a date
    return _quote_if_needed(text)


def _is_real_date(text: str) -> bool:
    try:
        dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


_ISO_DATE = re.compile(
    r"^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?:[+-]\d{2}:\d{2}|Z)?)?$"
)
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
    root = _root_node("".join(fm_lines))
    if root is not None and root.flow_style:
        new_fm = _edit_flow("".join(fm_lines), root, changes, remove, where)
        result_text = bom + lines[0] + new_fm + "".join(lines[close:])
        return _verified(raw, result_text.encode("utf-8"), parsed.meta, changes, remove, where)
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
    new = (bom + "".join(result)).encode("utf-8")
    return _verified(raw, new, parsed.meta, changes, remove, where)


def _root_node(fm: str) -> Any:
    """The composed YAML node of the front matter (with source positions), or None."""
    import yaml

    try:
        return yaml.compose(fm, Loader=_bounded_loader())
    except (yaml.YAMLError, ValueError, RecursionError):
        return None


def _flow_value(value: Any, as_json: bool) -> str:
    """A value written inside a flow mapping: JSON when the front matter is JSON."""
    if as_json:
        return json.dumps(json_safe(value), ensure_ascii=False)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_render_scalar(v) for v in value) + "]"
    rendered = _render_scalar(value)
    return rendered if rendered else "null"


def _edit_flow(fm: str, root: Any, changes: dict[str, Any], remove: list[str], where: str) -> str:
    """Edit a flow mapping (`{a: 1, b: [x]}` or JSON) at the spans PyYAML reports."""
    as_json = all(key.style == '"' for key, _ in root.value) and bool(root.value)
    spans = {str(key.value): (key, value) for key, value in root.value}
    edits: list[tuple[int, int, str]] = []  # (start, end, new text), applied from the end
    for name, value in changes.items():
        if name in spans:
            _, node = spans[name]
            edits.append((node.start_mark.index, node.end_mark.index, _flow_value(value, as_json)))
    for name in remove:
        if name in spans:
            key, node = spans[name]
            start, end = key.start_mark.index, node.end_mark.index
            after = re.match(r"\s*,[ \t]*", fm[end:])
            if after:
                end += after.end()
            else:
                before = re.search(r",\s*$", fm[:start])
                if before:
                    start = before.start()
            edits.append((start, end, ""))
    new_keys = [name for name in changes if name not in spans]
    if new_keys:
        closing = root.end_mark.index - 1
        if fm[closing] != "}":
            raise UneditableNoteError(
                f"{where}: vb cannot find the end of the front matter's flow mapping",
                hint="write the front matter in block style (one `key: value` per line)",
            )
        quote = (lambda k: json.dumps(k)) if as_json else _quote_if_needed
        items = [f"{quote(k)}: {_flow_value(changes[k], as_json)}" for k in new_keys]
        if root.value:
            last_end = root.value[-1][1].end_mark.index
            multiline = "\n" in fm[root.start_mark.index : closing]
            indent = " " * root.value[-1][0].start_mark.column
            joint = (",\n" + indent) if multiline else ", "
            edits.append((last_end, last_end, joint + joint.join(items)))
        else:
            edits.append((closing, closing, ", ".join(items)))
    for start, end, text in sorted(edits, key=lambda e: e[0], reverse=True):
        fm = fm[:start] + text + fm[end:]
    return fm


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        try:
            return math.isclose(float(a), float(b), abs_tol=1e-6)
        except (TypeError, ValueError):
            return False
    if isinstance(a, str) and isinstance(b, str) and a != b:
        ta, tb = parse_time(a), parse_time(b)
        return ta is not None and ta == tb
    return bool(a == b)


def _verified(
    raw: bytes,
    new: bytes,
    before: Mapping[str, Any],
    changes: Mapping[str, Any],
    remove: Iterable[str],
    where: str,
) -> bytes:
    """`new` if reading it back gives exactly `before` with the changes made; otherwise the
    edit would have damaged the note, and it is refused before anything is written."""
    after = parse_text(new)
    expected = {k: v for k, v in before.items() if k not in set(remove)}
    expected.update(json_safe(dict(changes)))
    wrong = sorted(
        key
        for key in set(expected) | set(after.meta)
        if key not in after.meta or key not in expected or not _same(after.meta[key], expected[key])
    )
    if after.error or wrong:
        damage = (
            "make its front matter invalid YAML" if after.error else f"change {', '.join(wrong)}"
        )
        raise UneditableNoteError(
            f"{where}: setting {', '.join(sorted(changes) or sorted(remove))} would also "
            f"{damage} (the front matter uses a YAML form vb cannot edit in place); "
            "nothing was written",
            hint="write the front matter in block style (one `key: value` per line) without "
            "anchors, and try again",
        )
    return new


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
