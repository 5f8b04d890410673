"""Time `vb history` of a note with N commits (default 500): each commit changes the note's
counters, its credit or its body, as retrievals, feedback and hand edits do.

    .venv/bin/python scripts/bench_history.py [--commits 500]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_common import add_record_option, save_record

from vault_brain.app.api import MemoryAPI
from vault_brain.app.sync.history import history
from vault_brain.entry import main as vb_main


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def build(root: Path, commits: int) -> Path:
    os.environ.update(
        GIT_AUTHOR_NAME="bench",
        GIT_AUTHOR_EMAIL="b@x",
        GIT_COMMITTER_NAME="bench",
        GIT_COMMITTER_EMAIL="b@x",
    )
    if vb_main(["init", str(root)]) != 0:
        sys.exit("vb init failed")
    MemoryAPI.open(root).add("entity", "Ada", "Ada writes programs.\n", category="people")
    note = root / "entities/people/ada.md"
    git("add", "-A", cwd=root)
    git("commit", "-qm", "add Ada", cwd=root)
    for i in range(commits - 1):
        text = note.read_text(encoding="utf-8")
        if i % 3 == 0:
            text = text.replace(f"access_count: {i // 3}", f"access_count: {i // 3 + 1}")
            if f"access_count: {i // 3 + 1}" not in text:
                text = text.replace("credit: 0.5", f"access_count: {i // 3 + 1}\ncredit: 0.5")
        elif i % 3 == 1:
            text += f"Fact number {i}.\n"
        else:
            text = text.replace("Fact number", "A fact,", 1) + f"More {i}.\n"
        note.write_text(text, encoding="utf-8")
        git("commit", "-qam", f"change {i}", cwd=root)
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--commits", type=int, default=500)
    add_record_option(parser)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = build(Path(tmp) / "vault", args.commits)
        api = MemoryAPI.open(root)
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            result = history(api.vault, "entity-people-ada")
            best = min(best, time.perf_counter() - started)
        started = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "vault_brain",
                "--vault",
                str(root),
                "history",
                "entity-people-ada",
                "--json",
            ],
            check=True,
            capture_output=True,
        )
        cli = time.perf_counter() - started
    if args.record:
        figures = {"entries": len(result.entries), "in_process_s": best, "cli_s": cli}
        save_record(f"history-{args.commits}", figures)
    print(
        f"vb history of a note with {len(result.entries)} commits: "
        f"{best:.3f} s in-process (best of 3), {cli:.3f} s as a `vb` command"
    )


if __name__ == "__main__":
    main()
