"""`vb session`'s retrievals (`AccessRecorder`): each line in the transcript at once,
the access counters written to the notes later, in one transaction -- and nothing lost: the
counts equal the retrievals, the index agrees with a rebuild, and the counters of a session
killed before writing them are written at the next start."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from conftest import REPO
from vault_brain.app.api import MemoryAPI
from vault_brain.app.memory.access import DEFERRED
from vault_brain.app.memory.vault import Vault
from vault_brain.app.runtime.index_keeper import keep_index
from vault_brain.storage.index.store import Index
from vault_brain.storage.notes.frontmatter import parse_text
from vault_brain.storage.sessions.transcript import read_records
from vault_brain.storage.template import init_vault

NOTES = {
    "entities/projects/quokka-survey.md": "The quokka survey runs on Rottnest Island in March.",
    "entities/projects/quokka-census.md": "The quokka census counts animals on the island.",
    "entities/people/ada.md": "Ada leads the quokka survey team.",
}


def make_vault(root: Path) -> Path:
    init_vault(root)
    for rel, text in NOTES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        title = path.stem.replace("-", " ").title()
        path.write_text(f"---\ntitle: {title}\n---\n{text}\n", encoding="utf-8")
    return root


def meta(root: Path, rel: str) -> dict[str, Any]:
    return parse_text((root / rel).read_bytes()).meta


def retrievals(root: Path, session: str) -> list[dict[str, Any]]:
    path = root / "sessions" / f"{session}.jsonl"
    return [r for r in read_records(path) if r.get("type") == "retrieval"]


def counted(root: Path, session: str) -> dict[str, int]:
    """How often the transcript says each note was retrieved."""
    out: dict[str, int] = {}
    for record in retrievals(root, session):
        for rel in record["paths"]:
            out[rel] = out.get(rel, 0) + 1
    return out


def a_turn(api: MemoryAPI, session: str, n: int) -> None:
    """What a session turn asks of the API: intake, context (retrieves), a memory_search
    tool call, the results persisted, the reply, tool-success feedback."""
    api.intake(session, f"when does the quokka survey run? ({n})")
    api.context(session)
    api.persist(session, [{"type": "tool_call", "name": "memory_search", "arguments": {}}])
    found = api.search("quokka island", 5)
    api.persist(session, [{"type": "tool_result", "content": str(len(found.results))}])
    api.context(session)
    api.persist(session, [{"type": "assistant", "content": f"In March ({n})."}])
    api.feedback("tool-success", session)


def test_a_session_writes_each_line_at_once_and_the_counters_when_quiet(tmp_path: Path) -> None:
    root = make_vault(tmp_path / "vault")
    api = MemoryAPI.live(Vault.open(root), "s1", "session", flush_delay=3600)
    assert api.access is not None
    a_turn(api, "s1", 1)
    lines = retrievals(root, "s1")
    assert len(lines) == 2 and all(r["counters"] == DEFERRED for r in lines)  # at once
    survey = "entities/projects/quokka-survey.md"
    assert "access_count" not in meta(root, survey)  # the counters wait...
    assert (root / ".vb" / "access" / "s1.json").is_file()  # ...and say where they begin
    assert meta(root, survey)["credit"] > 0.5  # feedback found the turn's memories anyway
    api.close()  # the session ends: every counter written, the marker gone
    assert {rel: meta(root, rel).get("access_count") for rel in counted(root, "s1")} == counted(
        root, "s1"
    )
    assert not (root / ".vb" / "access" / "s1.json").exists()


def test_after_many_turns_the_counters_and_the_index_agree_with_a_rebuild(
    tmp_path: Path,
) -> None:
    root = make_vault(tmp_path / "vault")
    # a short quiet moment: some counters are written by the timer between turns, some
    # at once (the oldest waited too long), the rest at the end
    api = MemoryAPI.live(Vault.open(root), "s2", "session", flush_delay=0.05)
    keep_index(api)
    for n in range(12):
        a_turn(api, "s2", n)
        if n % 3 == 0:
            time.sleep(0.3)
    api.close()
    expected = counted(root, "s2")
    assert expected and all(n >= 12 for n in expected.values())
    assert {rel: meta(root, rel).get("access_count") for rel in expected} == expected
    kept = Vault(Vault.open(root).paths)
    as_kept = {row["path"]: row for _, row in kept.index.rows()}
    rebuilt = Index(kept.paths)
    rebuilt.rebuild()
    assert {row["path"]: row for _, row in rebuilt.rows()} == as_kept
    assert all(as_kept[rel]["access_count"] == n for rel, n in expected.items())


KILLED = """
import os, signal, sys
from vault_brain.app.api import MemoryAPI
from vault_brain.app.memory.vault import Vault
api = MemoryAPI.live(Vault.open(sys.argv[1]), "s3", "session", flush_delay=3600)
api.intake("s3", "when does the quokka survey run?")
api.context("s3")
api.search("quokka island", 5)
os.kill(os.getpid(), signal.SIGKILL)  # the host dies before the counters are written
"""


def test_counters_a_killed_session_left_waiting_are_written_at_the_next_start(
    tmp_path: Path,
) -> None:
    root = make_vault(tmp_path / "vault")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-c", KILLED, str(root)], env=env, timeout=120)
    assert proc.returncode == -9
    expected = counted(root, "s3")
    assert expected and all("access_count" not in meta(root, rel) for rel in expected)
    marker = root / ".vb" / "access" / "s3.json"
    assert marker.is_file()
    # a marker whose process still runs (here: this one) is left to that process
    live = root / ".vb" / "access" / "s4.json"
    live.write_text(json.dumps({"session": "s4", "offset": 0, "pid": os.getpid()}))
    api = MemoryAPI.open(root)
    assert api.recover_counters() == ["s3"]
    assert {rel: meta(root, rel).get("access_count") for rel in expected} == expected
    assert not marker.exists() and live.exists()
    assert api.recover_counters() == []  # once: never counted twice
    assert {rel: meta(root, rel).get("access_count") for rel in expected} == expected
    rows = {row["path"]: row for _, row in Vault.open(root).index.rows()}
    assert all(rows[rel]["access_count"] == n for rel, n in expected.items())


def test_an_edited_strategy_keeps_the_vault_with_its_keeper(tmp_path: Path) -> None:
    """STRATEGY.md edited mid-session: the vault is opened again (its policy read anew) and
    keeps what the session set on it: writes left to the keeper, merges when quiet."""
    root = make_vault(tmp_path / "vault")
    api = MemoryAPI.live(Vault.open(root), "s4", "session")
    keep_index(api)
    first = api._vault
    strategy = root / "STRATEGY.md"
    strategy.write_text(strategy.read_text() + "\n")
    api.search("quokka island", 3)
    try:
        assert api._vault is not first  # reopened
        assert api._vault.kept and api._vault.index.merge_later
    finally:
        api.close()
