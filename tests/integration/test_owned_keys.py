"""Agent use of a vault someone else wrote: retrieval, feedback, maintenance and MEMORY.md
change only vb-owned front matter keys, line by line, and never a body."""

from __future__ import annotations

import difflib
import random
import re
import shutil
from pathlib import Path
from typing import Any

from conftest import KEPANO, snapshot
from vault_brain.storage.notes.frontmatter import parse_text

VB_OWNED = {
    "id", "type", "category", "tags", "created", "updated", "pinned", "credit", "access_count",
    "last_accessed", "archived", "archive_reason", "archived_from", "archive_added_front_matter",
    "merged_into", "merged_from", "supersedes", "promoted",
}  # fmt: skip
KEY = re.compile(r"^([^\s#:][^:]*):")


def split(raw: bytes) -> tuple[list[str], bytes]:
    text = raw.decode("utf-8")
    if not text.lstrip("\ufeff").startswith("---"):
        return [], raw
    lines = text.splitlines(keepends=True)
    close = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    return lines[1:close], "".join(lines[close + 1 :]).encode("utf-8")


def assert_only_owned_keys_changed(before: bytes, after: bytes, where: str) -> set[str]:
    fm_before, body_before = split(before)
    fm_after, body_after = split(after)
    assert body_after == body_before, f"{where}: body changed"
    changed: set[str] = set()
    for line in difflib.ndiff(fm_before, fm_after):
        if line[:2] in ("- ", "+ "):
            match = KEY.match(line[2:])
            assert match, f"{where}: a non-key line changed: {line!r}"
            changed.add(match.group(1))
    assert changed <= VB_OWNED, f"{where}: user keys changed: {changed - VB_OWNED}"
    old, new = parse_text(before).meta, parse_text(after).meta
    assert {k: v for k, v in old.items() if k not in VB_OWNED} == {
        k: v for k, v in new.items() if k not in VB_OWNED
    }
    return changed


def agent_day(cli: Any, root: Path, queries: list[str]) -> None:
    v = ("--vault", str(root))
    for n, query in enumerate(queries):
        assert cli(*v, "search", query, "-k", "3", "--session", f"s{n % 2}").exit_code == 0
        signal = ("good", "bad", "completed", "tool-success")[n % 4]
        res = cli(*v, "feedback", signal, "--session", f"s{n % 2}")
        assert res.exit_code == 0, res.stderr
    assert cli(*v, "maintain").exit_code == 0
    assert cli(*v, "memory-file").exit_code == 0


def check_vault(root: Path, before: dict[str, bytes]) -> int:
    after = snapshot(root)
    touched = 0
    for rel, raw in before.items():
        if not rel.endswith(".md") or rel in ("MEMORY.md",):
            continue
        if rel in after:
            if after[rel] != raw:
                touched += 1
                assert_only_owned_keys_changed(raw, after[rel], rel)
        else:  # only the lifecycle may move a note, and only into archive/
            assert f"archive/{rel}" in after, f"{rel} vanished"
            assert_only_owned_keys_changed(raw, after[f"archive/{rel}"], rel)
    return touched


def test_kepano_vault_agent_use_touches_only_vb_keys(tmp_path: Path, cli: Any) -> None:
    root = tmp_path / "kepano"
    shutil.copytree(KEPANO, root)
    assert cli("init", str(root), "--adopt").exit_code == 0
    before = snapshot(root)
    agent_day(
        cli,
        root,
        [
            "Kyoto trip",
            "Blade Runner",
            "jazz bass",
            "evergreen notes",
            "Catan",
            "Kevin Kelly",
            "Obsidian theme",
            "tart recipe",
        ],
    )
    touched = check_vault(root, before)
    assert touched >= 5  # retrieval counters and credit did land in the user's notes


def test_generated_vault_agent_use_touches_only_vb_keys(vault: Path, cli: Any) -> None:
    rng = random.Random(3)
    words = ["launch", "budget", "tea", "review", "kayak", "garden", "invoice", "piano"]
    for i in range(60):
        folder = ["entities/people", "entities/projects", "episodes/2026-02"][i % 3]
        path = vault / folder / f"n{i}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        tags = rng.sample(words, 2)
        style = (
            f"tags: [{', '.join(tags)}]\n" if i % 2 else "tags:\n  - " + "\n  - ".join(tags) + "\n"
        )
        path.write_text(
            f"---\n# note {i}\ntitle: 'Note {i}'\nowner: me\n{style}created: 2026-02-0{1 + i % 3}\n"
            f"credit: {rng.choice([0.05, 0.5, 0.95])}\nrating: {i}\n---\n"
            + " ".join(rng.choice(words) for _ in range(40))
            + "\n",
            encoding="utf-8",
        )
    before = snapshot(vault)
    agent_day(cli, vault, words)
    assert check_vault(vault, before) >= 10
