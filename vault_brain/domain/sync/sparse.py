"""What `vb clone` checks out of a vault (pure): the sparse-checkout patterns, which
transcripts count as recent, and what `vb fetch-old` adds.

The patterns are git's non-cone ones (gitignore syntax, the last match wins), anchored at
the vault's top: every top-level file and folder, less `archive/`'s contents and each old
transcript (an old day folder's as one pattern). New files are inside the checkout: a transcript
another machine starts after the clone is checked out here. `logs/` is always checked out:
vb appends to its logs, and an append to a log that is not checked out would start a new
file (for a transcript, see `storage.git.sparse.keep_unchecked_writes`).
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Iterable

from vault_brain.domain.clock import day_of_folder

_SPECIAL = frozenset("*?[]\\")


def is_transcript(path: str) -> bool:
    """A transcript in the repository's tree: `sessions/<id>.jsonl`, or
    `sessions/<YYYY-MM-DD>/<id>.jsonl` in a vault whose transcripts are sharded by day."""
    parts = path.split("/")
    return parts[0] == "sessions" and len(parts) in (2, 3) and parts[-1].endswith(".jsonl")


def shard_day(path: str) -> dt.date | None:
    """The day of a transcript's shard folder (`sessions/2026-11-26/x.jsonl`), else None."""
    parts = path.split("/")
    if len(parts) != 3 or parts[0] != "sessions":
        return None
    return day_of_folder(parts[1])


def recent_transcripts(
    transcripts: Iterable[str], committed_since: set[str], cutoff: dt.date
) -> list[str]:
    """The transcripts to check out: those a commit since the cutoff changed
    (`committed_since`, from `git log --since`), and those whose shard folder's day is on or
    after the cutoff (a transcript committed late, for a recent day, still counts)."""
    out = []
    for path in transcripts:
        day = shard_day(path)
        if path in committed_since or (day is not None and day >= cutoff):
            out.append(path)
    return sorted(out)


def escape(path: str) -> str:
    """A literal path as a sparse-checkout pattern (anchored at the top)."""
    text = "".join("\\" + c if c in _SPECIAL else c for c in path)
    return "/" + text


FLAT_PATTERNS_MAX = 200
"""Old flat transcripts (`sessions/<id>.jsonl`) left out one pattern each, at most: git
matches every path against every pattern at each checkout and merge (about 12 ns a match
here: 6,000 patterns would add some 7 s over 100,000 notes). Past it, the flat transcripts
are left out as one pattern and the recent ones taken back by name."""


TOP_FILES = ["/*", "!/*/"]
"""Sparse-checkout patterns of the files at the top (STRATEGY.md, MEMORY.md, tasks.json)."""
STAGED_FROM = 20_000
"""Files a clone checks out from which it checks them out in two stages (`first_stage`)."""
FIRST_STAGE_SHARE = 0.1


def first_stage(files: Iterable[str]) -> list[str] | None:
    """Patterns of a big clone's first checkout (`files`: every file of its tree): the files
    at the top and about a tenth as many as the tree has, as whole folders of the second
    level (`/entities/people/*`), the smallest first, outside archive/ and sessions/ (whose
    patterns leave files out). Its blobs come in a fraction of the
    time of all of them, and the index build has them to work on while git fetches the
    rest. None: too few files to gain, or no such folders."""
    sizes: Counter[str] = Counter()
    total = 0
    for path in files:
        total += 1
        parts = path.split("/", 2)
        if len(parts) == 3 and parts[0] not in ("archive", "sessions"):
            sizes[parts[0] + "/" + parts[1]] += 1
    if total < STAGED_FROM:
        return None
    want = total * FIRST_STAGE_SHARE
    chosen: list[str] = []
    taken = 0
    for folder, n in sorted(sizes.items(), key=lambda item: (item[1], item[0])):
        if taken >= want or taken + n > 2 * want:
            break
        chosen.append(folder)
        taken += n
    return [*TOP_FILES, *(escape(folder) + "/*" for folder in sorted(chosen))] if chosen else None


def checkout_patterns(transcripts: Iterable[str], recent: Iterable[str]) -> list[str]:
    """The sparse-checkout patterns of a clone that takes the `recent` transcripts: every
    top-level file and folder, less `archive/`'s contents, less each old transcript (a day
    folder whose transcripts are all old, as one folder). A transcript written later, here
    or by another machine, is inside the checkout (except in a vault of more than
    `FLAT_PATTERNS_MAX` old flat transcripts: there a flat one another machine writes later is
    left out too, until `vb fetch-old sessions`)."""
    keep = set(recent)
    old: dict[str, list[str]] = {}
    for path in transcripts:
        if path not in keep:
            folder = path.rsplit("/", 1)[0]
            old.setdefault(folder if shard_day(path) else path, []).append(path)
    mixed = {p.rsplit("/", 1)[0] for p in keep if shard_day(p)}
    out = ["/*", "!/archive/*"]
    flat_old = sorted(key for key in old if key.endswith(".jsonl"))
    flat_recent = sorted(p for p in keep if shard_day(p) is None)
    if len(flat_old) > FLAT_PATTERNS_MAX and len(flat_recent) < len(flat_old):
        out += ["!/sessions/*.jsonl"] + [escape(p) for p in flat_recent]
    else:
        out += ["!" + escape(key) for key in flat_old]
    for key, paths in sorted(old.items()):
        if key.endswith(".jsonl"):
            continue
        if key in mixed:
            out += ["!" + escape(p) for p in sorted(paths)]
        else:  # (`dir/*`, not `dir/`: git matches a folder-only pattern with an lstat per path)
            out.append("!" + escape(key) + "/*")
    return out


def fetch_pattern(rel: str, is_folder: bool) -> str:
    """The pattern that brings `rel` (a vault-relative file or folder) into the checkout. A
    folder's is `/rel/**`: it matches each file below at any depth itself, as the patterns
    that left files out do (`!/archive/*`, `!/sessions/2025-01-02/*`), and git takes the last
    pattern that matches a file's own path before it looks at its folders'."""
    rel = rel.strip("/")
    return escape(rel) + ("/**" if is_folder else "")


def days_ago(today: dt.date, days: int) -> dt.date:
    return today - dt.timedelta(days=days)
