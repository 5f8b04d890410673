"""A person editing notes while an agent uses the vault loses nothing.

Editors take no lock: they read a file, change it and write it back (atomically, by a
rename, as Obsidian and most editors do). Here one process does that hundreds of times while
another runs the agent loop -- searches recorded for credit and feedback, each a front matter
write to the notes it hits. Every line the editor wrote must be in the vault at the end.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import frontmatter

NOTES = 6
EDITS = 300

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
    root, stop = sys.argv[1], sys.argv[2]
    api = MemoryAPI.open(root, session="hand-edits-agent", source="test")
    rounds = 0
    for n in itertools.count():
        if os.path.exists(stop) and rounds >= 20:
            break
        api.search(f"topic {n % 6} details", k=3)
        if n % 4 == 3:
            api.feedback("good")
        rounds += 1
    print(rounds)
    """
)


def test_no_hand_edit_is_lost_while_the_agent_writes(vault: Path, cli: Any) -> None:
    folder = vault / "entities" / "projects"
    for n in range(NOTES):
        res = cli(
            "--vault",
            str(vault),
            "add",
            "-n",
            f"topic {n}",
            "-c",
            "projects",
            f"Details about topic {n}.",
        )
        assert res.exit_code == 0, res.stderr
    assert sorted(p.name for p in folder.glob("topic-*.md")) == [
        f"topic-{n}.md" for n in range(NOTES)
    ]
    stop = vault.parent / "editor-done"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    agent = subprocess.Popen(
        [sys.executable, "-c", AGENT, str(vault), str(stop)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    editor = subprocess.run(
        [sys.executable, "-c", EDITOR, str(folder), str(NOTES), str(EDITS)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    stop.touch()
    out, err = agent.communicate(timeout=300)
    assert editor.returncode == 0, editor.stderr
    assert agent.returncode == 0, err

    text = "".join(p.read_text(encoding="utf-8") for p in folder.glob("topic-*.md"))
    lost = [i for i in range(EDITS) if f"hand edit {i}\n" not in text]
    assert lost == [], f"{len(lost)} hand edits lost"
    # The agent really wrote meanwhile: its access counts are in the notes' front matter.
    counts = [
        int(str(frontmatter.load(str(p)).metadata.get("access_count", 0)))
        for p in folder.glob("topic-*.md")
    ]
    assert int(out.strip()) >= 20 and sum(counts) > 0, (out, counts)
    # Nothing half-written or left behind: every note parses, no temp files, no journal.
    assert not [p for p in vault.rglob("*.vbtmp")]
    assert not list((vault / ".vb" / "journal").glob("*.json"))
    res = cli("--vault", str(vault), "list", "--json")
    listed = {row["path"] for row in res.json()["notes"]}
    assert {f"entities/projects/topic-{n}.md" for n in range(NOTES)} <= listed
    assert all(json.dumps(row) for row in res.json()["notes"])
