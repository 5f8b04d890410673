"""Printing results: the one place text for people and JSON for programs are written."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
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


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], max_width: int = 60) -> str:
    """A plain aligned table (stable when piped, readable on a terminal)."""
    cells = [[_cut(str(c), max_width) for c in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    return "\n".join(lines)


def _cut(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


@contextmanager
def progress_bar(label: str, enabled: bool) -> Iterator[Callable[[int, int], None] | None]:
    """A progress bar on stderr when it is a terminal; nothing when piped or with --json."""
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    # lazy: rich's progress bar is loaded only on a terminal
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    with Progress(
        f"[bold]{label}", BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), transient=True
    ) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


def read_content(content: str | None) -> str:
    """An argument's text, or stdin for '-' or when the argument is omitted."""
    if content is not None and content != "-":
        return content
    if sys.stdin is None or sys.stdin.isatty():
        raise VaultBrainError(
            "no content given", hint="pass the content as an argument or pipe it on stdin"
        )
    return sys.stdin.read()
