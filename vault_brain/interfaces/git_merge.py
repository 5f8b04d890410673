"""git's per-file merge driver: `python -m vault_brain.interfaces.git_merge KIND BASE OURS
THEIRS PATH` (`vb merge-driver ...` is the same).

`vb init` and `vb sync` write this command into each clone's .git/config; git runs it once
per file a person's own `git merge` or `git pull` merges (`vb sync` merges in-process). It
starts light: a note in the plain front matter form is merged by `storage.notes.merge_light`
(no YAML library, no CLI framework); any other note, and every other kind, by
`app.sync.merge_driver.run_driver`. Exit 0 when OURS holds the merge; non-zero (git then reports
a conflict, and OURS is untouched) when the files could not be merged.
"""

from __future__ import annotations

import sys

USAGE = "usage: vb merge-driver KIND BASE OURS THEIRS PATH"


def main(args: list[str]) -> int:
    if len(args) != 5:
        sys.stderr.write(f"vb merge-driver: {USAGE}\n")
        return 2
    kind, base, ours, theirs, path = args
    try:
        if kind == "note":
            from vault_brain.storage.notes.merge_light import merge_note_light, replace_file

            data = []
            for name in (base, ours, theirs):
                with open(name, "rb") as handle:
                    data.append(handle.read())
            merged = merge_note_light(*data)
            if merged is not None:
                if merged != data[1]:
                    replace_file(ours, merged)
                return 0
        from vault_brain.app.sync.merge_driver import run_driver  # lazy: YAML, the full merge

        copy = run_driver(kind, base, ours, theirs, path)
    except Exception as exc:  # any failure: git keeps the file conflicted, never half-merged
        sys.stderr.write(f"vb merge-driver: {path}: {type(exc).__name__}: {exc}\n")
        return 1
    if copy:
        sys.stderr.write(f"vb merge-driver: {path}: conflicting lines, theirs in {copy}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
