"""A person editing notes while an agent uses the vault loses nothing.

`scripts/hand_edit_stress.py` runs an editor that takes no lock (read, append a line, rename
over the note, as Obsidian does) hundreds of times while another process runs the agent
loop, whose searches and feedback write the same notes' front matter. Every line the editor
wrote must be in the vault at the end.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import frontmatter

from conftest import load_script

stress = load_script("hand_edit_stress")


def test_no_hand_edit_is_lost_while_the_agent_writes(tmp_path: Path, cli: Any) -> None:
    root = tmp_path / "vault"
    folder = stress.prepare(root, 6)
    report = stress.stress(root, notes=6, edits=300)
    assert report["lost"] == 0, report
    # The agent really wrote meanwhile: its access counts are in the notes' front matter.
    counts = [
        int(str(frontmatter.load(str(p)).metadata.get("access_count", 0)))
        for p in folder.glob("topic-*.md")
    ]
    assert report["agent_rounds"] >= 20 and sum(counts) > 0, (report, counts)
    # Nothing half-written or left behind: every note listed, no temp files, no journal.
    assert not list(root.rglob("*.vbtmp"))
    assert not list((root / ".vb" / "journal").glob("*.json"))
    listed = {row["path"] for row in cli("--vault", str(root), "list", "--json").json()["notes"]}
    assert {f"entities/projects/topic-{n}.md" for n in range(6)} <= listed
