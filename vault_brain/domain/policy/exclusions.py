"""Which notes no agent reads, and which notes vb writes no counters to: one predicate each.

- Private: `private: true` in a note's front matter, or its path matches `private_paths` in
  STRATEGY.md. A private note is left out of every agent path (MCP, `vb serve`, the loop's
  and `vb session`'s context, the sandbox's /vault, MEMORY.md, export for an agent); the
  person's own `vb search`, `vb show` and `vb list` still find it.
- No counters: `vb: false` in a note's front matter, or its path matches `no_counters`.
  Such a note is searched like any other, but vb writes no `access_count`, `last_accessed`
  or `credit` into it (it learns nothing).

A pattern is matched against the note's path from the vault's top (`/` between folders):
- `journal/` (ends with `/`): every note under that folder, at any depth below it (the
  folder's own path may be a glob: `projects/*/private/`);
- a glob with a `/` (`**/*.secret.md`, `people/ann.md`): the whole path; `*` and `?` stay
  within one folder name, `**/` stands for any number of folders (none too);
- a glob without a `/` (`*.secret.md`): the file name, in any folder.
Case counts, as on Linux and in git. An archived note also matches by the path it had.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

# Values of a key that mean "no" (`private: false`); anything else means yes for `private`
# (fail closed: a private note kept out by mistake costs less than one shown by mistake).
_NO = (None, False, 0, "", "false", "no", "off", "0")
# Values of `vb` that opt a note out of counters (`vb: false`).
_OPT_OUT = (False, 0, "false", "no", "off", "0")

NOT_COUNTED = "vb: false in its properties"
ARCHIVE = "archive/"  # (domain/notes/model.py: where archived notes live)


def _norm(value: Any) -> Any:
    return value.strip().lower() if isinstance(value, str) else value


def marked_private(value: Any) -> bool:
    """A `private` front-matter value marks the note private (`true`, `yes`, anything
    that is not clearly no)."""
    return _norm(value) not in _NO


def opted_out(meta: Mapping[str, Any]) -> bool:
    """The note says `vb: false` (no counters or credit written into it)."""
    return "vb" in meta and _norm(meta.get("vb")) in _OPT_OUT


def check_pattern(pattern: str) -> str:
    """A pattern as STRATEGY.md may give it, checked (ValueError says why)."""
    text = pattern.strip()
    if not text.strip("/"):
        raise ValueError("a pattern must name a folder (journal/) or a glob (*.secret.md)")
    if text.startswith("/") or "\\" in text or any(p == ".." for p in text.split("/")):
        raise ValueError(f"{pattern!r}: use a path from the vault's top with / (no .., no \\)")
    return text


@lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str]:
    if pattern.endswith("/"):  # a folder: everything under it
        return re.compile(_glob(pattern.rstrip("/")) + "/.*", re.DOTALL)
    return re.compile(_glob(pattern if "/" in pattern else "**/" + pattern), re.DOTALL)


def _glob(pattern: str) -> str:
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:[^/]*/)*")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return "".join(out)


def path_matches(rel: str, patterns: Iterable[str]) -> str | None:
    """The first of `patterns` that `rel` (a path from the vault's top) matches, or None.
    An archived note (`archive/<path>`) matches by the path it had too."""
    paths = (rel, rel.removeprefix(ARCHIVE)) if rel.startswith(ARCHIVE) else (rel,)
    for pattern in patterns:
        if any(_compiled(pattern).fullmatch(p) for p in paths):
            return pattern
    return None


def is_private(rel: str, meta: Mapping[str, Any], private_paths: Iterable[str]) -> bool:
    """No agent reads this note: it is marked `private`, or its path is a private one."""
    return marked_private(meta.get("private")) or path_matches(rel, private_paths) is not None


def counters_refused(rel: str, meta: Mapping[str, Any], no_counters: Iterable[str]) -> str | None:
    """Why vb may not write counters or credit into this note (None: it may)."""
    if opted_out(meta):
        return NOT_COUNTED
    pattern = path_matches(rel, no_counters)
    return None if pattern is None else f"matches no_counters {pattern!r} in STRATEGY.md"
