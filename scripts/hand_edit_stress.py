#!/usr/bin/env python3
"""A person edits notes while an agent uses the vault: count the hand edits lost.

    python scripts/hand_edit_stress.py [--edits 300] [--notes 6] [--json]

Editors take no lock: they read a file, change it and write it back (atomically, by a
rename, as Obsidian and most editors do). One process does that `--edits` times over
`--notes` notes, appending a numbered line each time, while another runs the agent loop:
searches recorded for credit (a front matter write to every note hit) and feedback. At the
end every numbered line must still be in the vault. `tests/integration/test_hand_edits.py` runs it;
RELIABILITY.md reports its figures.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

# The person: read, append a line, write a temp file beside and rename it over the note.
EDITOR = textwrap.dedent(
    """
    import os, random, sys, time
    folder, notes, edits = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rng = random.Random(7)
    for i in range(edits):
        path = os.path.join(folder, f"topic-{rng.randrange(notes)}.md")
        with open(path, encoding="utf-8") as f:
            text = f.read()
        time.sleep(rng.random() * 0.002)  # typing: vb may write the note meanwhile
        tmp = f"{path}.editor-{i}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text + f"hand edit {i}\\n")
        os.replace(tmp, path)
        time.sleep(rng.random() * 0.003)
    """
)

# The agent: search (each hit's access count written) and judge the turn, until told to stop.
AGENT = textwrap.dedent(
    """
    import itertools, os, sys
    from vault_brain.app.api import MemoryAPI
    root, stop, notes = sys.argv[1], sys.argv[2], int(sys.argv[3])
    api = MemoryAPI.open(root, session="hand-edits-agent", source="stress")
    rounds = 0
    for n in itertools.count():
        if os.path.exists(stop) and rounds >= 20:
            break
        api.search(f"topic {n % notes} details", k=3)
        if n % 4 == 3:
            api.feedback("good")
        rounds += 1
    print(rounds)
    """
)


def _vb(root: Path, *args: str) -> None:
    subprocess.run(
        [sys.executable, "-m", "vault_brain", "--vault", str(root), *args],
        check=True,
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


def prepare(root: Path, notes: int) -> Path:
    """A new vault at `root` with `notes` project notes; returns their folder."""
    _vb(root.parent, "init", str(root))
    for n in range(notes):
        _vb(root, "add", "-n", f"topic {n}", "-c", "projects", f"Details about topic {n}.")
    return root / "entities" / "projects"


def stress(root: Path, notes: int = 6, edits: int = 300) -> dict[str, Any]:
    """Run the editor and the agent together on a vault made by `prepare`."""
    folder = root / "entities" / "projects"
    stop = root.parent / f"{root.name}-editor-done"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    agent = subprocess.Popen(
        [sys.executable, "-c", AGENT, str(root), str(stop), str(notes)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    editor = subprocess.run(
        [sys.executable, "-c", EDITOR, str(folder), str(notes), str(edits)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    stop.touch()
    out, err = agent.communicate(timeout=600)
    stop.unlink()
    if editor.returncode != 0 or agent.returncode != 0:
        raise RuntimeError(f"editor: {editor.stderr.strip()}\nagent: {err.strip()}")
    text = "".join(p.read_text(encoding="utf-8") for p in folder.glob("topic-*.md"))
    lost = [i for i in range(edits) if f"hand edit {i}\n" not in text]
    return {"edits": edits, "notes": notes, "lost": len(lost), "agent_rounds": int(out)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--edits", type=int, default=300, help="hand edits to make")
    parser.add_argument("--notes", type=int, default=6, help="notes the edits spread over")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="vb-hand-") as tmp:
        root = Path(tmp) / "vault"
        prepare(root, args.notes)
        report = stress(root, args.notes, args.edits)
    print(json.dumps(report) if args.json else "\n".join(f"{k}: {v}" for k, v in report.items()))
    return 1 if report["lost"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
