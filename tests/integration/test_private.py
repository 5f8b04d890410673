"""A person's say over their notes. A note marked `private: true`, and a note under a folder or
glob STRATEGY.md lists in `private_paths`, reach no agent path -- MCP search, retrieve and
list, `vb serve`'s injected memories, the loop's context, MEMORY.md, the session sandbox's
view -- while the person's own `vb search` finds them. A note that says `vb: false`, and one
under a folder listed in `no_counters`, gain no counters or credit from agent searches and
feedback, and are found all the same. `vb init --adopt` says which default it took.

Real files, the real index, the real MCP client over stdio to a real `vb mcp`, and a real
`vb serve` with the local fake Chat Completions server as its upstream.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import openai
import pytest
from mcp.client.stdio import StdioServerParameters
from test_serve import upstream as upstream  # the fixture
from test_serve import vb_serve

from conftest import REPO
from fake_llm_server import FakeLLMServer, completion
from test_mcp import McpServer
from vault_brain.app.api import MemoryAPI
from vault_brain.storage.sandbox.view import VaultView

WORD = "Zorblax"
QUERY = "Zorblax harbour plan"
PRIVATE = {
    "journal/2026-03-01.md": "# March first\n\nZorblax harbour plan, written at night.\n",
    "journal/deep/dream.md": "Zorblax harbour plan in a dream.\n",
    "people/bank.secret.md": "# Bank\n\nZorblax harbour plan: the bank's part.\n",
    "notes/marked.md": "---\nprivate: true\n---\n# Marked\n\nZorblax harbour plan, marked.\n",
}
PRIVATE_WORDS = ("written at night", "in a dream", "the bank's part", "plan, marked")
SHARED = {"notes/shared.md": "# Shared\n\nZorblax harbour plan for everyone.\n"}
STRATEGY_KEYS = 'private_paths: [journal/, "**/*.secret.md"]\n'


def set_strategy(vault: Path, keys: str) -> None:
    """STRATEGY.md's front matter holds `keys` (and nothing else of the person's)."""
    text = (vault / "STRATEGY.md").read_text(encoding="utf-8")
    head, sep, rest = text.partition("\n---\n")
    head = re.sub(r"\n(private_paths|no_counters):.*", "", head)
    (vault / "STRATEGY.md").write_text(f"{head}\n{keys.rstrip()}{sep}{rest}", encoding="utf-8")


def write(vault: Path, notes: dict[str, str]) -> None:
    for rel, text in notes.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")


def person_finds(cli: Any, vault: Path, query: str = QUERY) -> set[str]:
    res = cli("--vault", str(vault), "search", query, "-k", "20", "--json")
    assert res.exit_code == 0, res.stderr
    return {r["path"] for r in res.json()["results"]}


def mcp(vault: Path, *args: str) -> McpServer:
    env = {k: os.environ[k] for k in ("PYTHONPATH", "HOME", "XDG_CONFIG_HOME") if k in os.environ}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "vault_brain", "--vault", str(vault), "mcp", *args],
        env=env,
        cwd=str(REPO),
    )
    return McpServer(params)


@pytest.fixture
def private_vault(vault: Path) -> Path:
    set_strategy(vault, STRATEGY_KEYS)
    write(vault, {**PRIVATE, **SHARED})
    return vault


def test_the_person_finds_private_notes_and_no_in_process_agent_path_does(
    private_vault: Path, cli: Any
) -> None:
    vault = private_vault
    assert person_finds(cli, vault) == set(PRIVATE) | set(SHARED)
    # an agent's search and listing through the API (what MCP and the hooks call)
    agent = MemoryAPI.open(vault, source="mcp")
    assert {h.path for h in agent.search(QUERY, 20).results} == set(SHARED)
    assert not set(PRIVATE) & {n.path for n in agent.list_notes().notes}
    # the loop's context (`vb loop`, the Claude Code hook): no private note
    rows = agent.memories_for_message("s-private", None, QUERY, "hook")
    assert [r["path"] for r in rows] == list(SHARED)
    # MEMORY.md, in every agent's context
    assert cli("--vault", str(vault), "memory-file").exit_code == 0
    memory = (vault / "MEMORY.md").read_text(encoding="utf-8")
    assert "for everyone" in memory
    assert not [w for w in PRIVATE_WORDS if w in memory], memory
    # the sandbox's /vault: a copy of what the agent may read
    view = VaultView.create(vault, "s-private", private_paths=("journal/", "**/*.secret.md"))
    try:
        seen = {p.relative_to(view.folder).as_posix() for p in view.folder.rglob("*.md")}
    finally:
        view.remove()
    assert "notes/shared.md" in seen and not set(PRIVATE) & seen


def test_a_changed_private_paths_setting_is_applied_to_notes_already_indexed(
    private_vault: Path, cli: Any
) -> None:
    vault = private_vault

    def agent_finds() -> set[str]:
        return {h.path for h in MemoryAPI.open(vault, source="mcp").search(QUERY, 20).results}

    assert agent_finds() == set(SHARED)
    set_strategy(vault, "private_paths: []\n")  # the person lets the agents see them again
    assert agent_finds() == set(SHARED) | (set(PRIVATE) - {"notes/marked.md"})
    set_strategy(vault, "private_paths: [notes/]\n")  # and keeps another folder instead
    assert agent_finds() == {"journal/2026-03-01.md", "journal/deep/dream.md"} | {
        "people/bank.secret.md"
    }
    assert person_finds(cli, vault) == set(PRIVATE) | set(SHARED)


@pytest.mark.system
def test_mcp_never_returns_a_private_note(private_vault: Path, cli: Any) -> None:
    vault = private_vault
    ids = {
        r["path"]: r["id"]
        for r in cli("--vault", str(vault), "search", QUERY, "-k", "20", "--json").json()["results"]
    }
    server = mcp(vault, "--session", "s-mcp")  # the person's own agent: no token, no scope
    try:
        found = server.ok("memory_search", {"query": QUERY, "limit": 20})
        assert [r["id"] for r in found["results"]] == [ids["notes/shared.md"]]
        for rel in PRIVATE:  # retrieve: the words of a note that does not exist
            said = server.error("memory_retrieve", {"id": ids[rel]})
            assert "no note" in said or "not found" in said, said
            said = server.error("memory_history", {"id": ids[rel]})
            assert "no note" in said or "not found" in said, said
        listed = json.dumps(server.ok("credit_report", {"top_n": 50}))
        assert ids["notes/shared.md"] in listed
        assert not [rel for rel in PRIVATE if ids[rel] in listed]
        shown = server.ok("memory_retrieve", {"id": ids["notes/shared.md"]})
        assert "for everyone" in json.dumps(shown)
    finally:
        server.close()


@pytest.mark.system
def test_serve_injects_no_private_note(
    private_vault: Path, upstream: FakeLLMServer, cli: Any
) -> None:
    vault = private_vault
    upstream.responder = lambda body: completion("Noted.")
    question: Any = [{"role": "user", "content": "What is the Zorblax harbour plan?"}]
    args = ("--port", "0", "--upstream", upstream.base_url, "--capture-idle", "0")
    with vb_serve(vault, *args) as out:
        found = re.search(r"(http://\S+/v1)", out[0])
        assert found is not None
        client = openai.OpenAI(base_url=found.group(1), api_key="none", max_retries=0)
        raw = client.chat.completions.with_raw_response.create(
            model="m", messages=question, extra_body={"memory_hits": True}
        )
    paths = [h["path"] for h in raw.http_response.json()["memory_hits"]]
    sent = json.dumps(upstream.bodies[-1])
    assert paths == ["notes/shared.md"]
    assert "for everyone" in sent
    assert not [w for w in PRIVATE_WORDS if w in sent]


# -- counters a person agreed to ---------------------------------------------------------------

COUNTED = {
    "docs/guide.md": "# Guide\n\nQuarlix setup guide.\n",  # no_counters: [docs/]
    "notes/optout.md": "---\nvb: false\ntags: [keep]\n---\n# Opt out\n\nQuarlix opt out.\n",
    "notes/plain.md": "# Plain\n\nQuarlix plain note.\n",
    "notes/bare.md": "Quarlix with no front matter and no heading.\n",  # excluded by glob
}


@pytest.fixture
def counted_vault(vault: Path) -> Path:
    set_strategy(vault, 'no_counters: [docs/, "**/bare.md"]\n')
    write(vault, COUNTED)
    return vault


def test_excluded_notes_gain_no_counters_or_credit_yet_are_found(
    counted_vault: Path, cli: Any
) -> None:
    vault = counted_vault
    before = {rel: (vault / rel).read_bytes() for rel in COUNTED}
    agent = MemoryAPI.open(vault, session="s-count", source="mcp")
    for _ in range(3):
        found = {h.path for h in agent.search("Quarlix", 10).results}
        assert found == set(COUNTED)  # still searched
    result = agent.feedback("good")
    skipped = {s.id: s.reason for s in result.skipped}
    assert {c.path for c in result.changes} == {"notes/plain.md"}
    assert len(skipped) == 3 and all(r.startswith("no counters: ") for r in skipped.values())
    assert any("vb: false" in r for r in skipped.values())
    assert any("'docs/'" in r for r in skipped.values())
    for rel in ("docs/guide.md", "notes/optout.md", "notes/bare.md"):
        assert (vault / rel).read_bytes() == before[rel], rel  # not a byte changed
    plain = (vault / "notes/plain.md").read_text(encoding="utf-8")
    assert "access_count: 3" in plain and "credit:" in plain
    assert person_finds(cli, vault, "Quarlix") == set(COUNTED)


@pytest.mark.system
def test_mcp_searches_and_feedback_leave_excluded_notes_alone(counted_vault: Path) -> None:
    vault = counted_vault
    before = {rel: (vault / rel).read_bytes() for rel in COUNTED}
    server = mcp(vault, "--session", "s-mcp-count")
    try:
        for _ in range(2):
            found = server.ok("memory_search", {"query": "Quarlix"})
            assert len(found["results"]) == len(COUNTED)
        server.settle()
        said = server.ok("memory_feedback", {"signal": "good"})
    finally:
        server.close()
    assert len(said["skipped"]) == 3, said
    for rel in ("docs/guide.md", "notes/optout.md", "notes/bare.md"):
        assert (vault / rel).read_bytes() == before[rel], rel
    assert "access_count: 2" in (vault / "notes/plain.md").read_text(encoding="utf-8")


def test_adopt_says_which_default_it_took(tmp_path: Path, cli: Any) -> None:
    folder = tmp_path / "obsidian"
    write(folder, {"daily/today.md": "Today.\n"})
    res = cli("init", "--adopt", str(folder))
    assert res.exit_code == 0, res.stderr
    said = res.stdout  # said, never asked (no prompt: it runs in scripts too)
    assert "counters: on every note (the default)" in said
    assert "access_count and last_accessed" in said and "no_counters" in said
    assert "vb: false" in said
    assert (folder / "daily/today.md").read_text(encoding="utf-8") == "Today.\n"
    # a vault whose STRATEGY.md already keeps a folder out: the notice names it
    set_strategy(folder, "no_counters: [daily/]\n")
    data = cli("init", "--adopt", str(folder), "--json").json()
    assert "every note but those matching no_counters (daily/)" in data["counters"]


def test_an_export_for_an_agent_leaves_private_notes_out(private_vault: Path, cli: Any) -> None:
    vault = private_vault
    v = ("--vault", str(vault))

    def exported(*args: str) -> set[str]:
        res = cli(*v, "export", *args)
        assert res.exit_code == 0, res.stderr
        return {n["path"] for n in json.loads(res.stdout)["notes"]} & (set(PRIVATE) | set(SHARED))

    assert exported() == set(PRIVATE) | set(SHARED)  # the person's backup: everything
    assert exported("--for-agent") == set(SHARED)
    by_agent = MemoryAPI.open(vault, source="mcp").export("json")
    assert {n["path"] for n in json.loads(by_agent.text)["notes"]} & set(PRIVATE) == set()
