"""Printing results: the one place text for people and JSON for programs are written."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

from vault_brain.domain.errors import VaultBrainError

SCHEMA_VERSION = 2  # the same as app.results.SCHEMA_VERSION (a test keeps them equal)


def emit(result: Any, as_json: bool, human: str | None = None) -> None:
    """Print a result: `{"version": 2, ...fields}` with `--json`, else the human text."""
    if as_json:
        from vault_brain.app.memory.results import envelope  # lazy: keeps `vb --help` light

        sys.stdout.write(json.dumps(envelope(result), ensure_ascii=False) + "\n")
    elif human is not None:
        sys.stdout.write(human if human.endswith("\n") else human + "\n")
    if not as_json:
        for warning in getattr(result, "warnings", None) or []:
            sys.stderr.write(f"vb: warning: {warning}\n")


def json_line(result: Any) -> None:
    """One JSON document on its own line (batch and streaming output)."""
    from vault_brain.app.memory.results import envelope  # lazy: keeps `vb --help` light

    sys.stdout.write(json.dumps(envelope(result), ensure_ascii=False) + "\n")


WHOLE = frozenset({"id", "path", "where", "commit", "name", "key"})
"""Columns never cut: values a person pastes back into another command."""


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], max_width: int = 60) -> str:
    """A plain aligned table (stable when piped, readable on a terminal). Text longer than
    `max_width` is cut with "…", except in the `WHOLE` columns (ids, paths)."""
    limits = [10**9 if h in WHOLE else max_width for h in headers]
    cells = [[_cut(str(c), w) for c, w in zip(row, limits, strict=True)] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    return "\n".join(lines)


def _cut(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def progress_bar(
    label: str, enabled: bool
) -> AbstractContextManager[Callable[[int, int], None] | None]:
    """A progress line on stderr when it is a terminal; nothing when piped or with --json
    (`interfaces.cli.progress.progress_bar`)."""
    from vault_brain.interfaces.cli.progress import progress_bar as bar

    return bar(label, enabled)


def read_content(content: str | None) -> str:
    """An argument's text, or stdin for '-' or when the argument is omitted."""
    if content is not None and content != "-":
        return content
    if sys.stdin is None or sys.stdin.isatty():
        raise VaultBrainError(
            "no content given", hint="pass the content as an argument or pipe it on stdin"
        )
    return sys.stdin.read()
