"""`vb merge-driver KIND BASE OURS THEIRS PATH`, the merge driver git runs once per file.

Hidden from the help (a person never types it; `vb init` and `vb sync` install it into the
clone's git config). `vault_brain.entry` calls `main` without loading the CLI framework, so
each file git hands over costs one light process.
"""

from __future__ import annotations

import sys


def main(args: list[str]) -> int:
    """`vb merge-driver KIND BASE OURS THEIRS PATH`: exit 0 when OURS holds the merge,
    non-zero (git then reports a conflict) when the files could not be merged."""
    if len(args) != 5:
        sys.stderr.write("vb merge-driver: usage: vb merge-driver KIND BASE OURS THEIRS PATH\n")
        return 2
    try:
        from vault_brain.app.merge_driver import run_driver  # lazy

        copy = run_driver(*args)
    except Exception as exc:  # any failure: git keeps the file conflicted, never half-merged
        sys.stderr.write(f"vb merge-driver: {args[4]}: {type(exc).__name__}: {exc}\n")
        return 1
    if copy:
        sys.stderr.write(f"vb merge-driver: {args[4]}: conflicting lines, theirs in {copy}\n")
    return 0
