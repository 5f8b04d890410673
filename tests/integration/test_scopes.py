"""Scopes and agents: whose a memory is, who reads it, who may write it.

Through the real CLI on real vaults, and `vb mcp --agent` through the SDK's stdio client."""

from __future__ import annotations

import datetime as dt
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.client.stdio import StdioServerParameters

from test_mcp import McpServer
from vault_brain.domain.errors import ForbiddenError, UsageError, VaultBrainError
from vault_brain.domain.policy.scopes import (
    GLOBAL,
    agent_from,
    check_scope,
    layers,
    scope_for,
    session_scopes,
)
from vault_brain.storage.notes.frontmatter import parse_text

USER_KINDS = ("identity", "preference", "person")


def _meta(vault: Path, rel: str) -> dict[str, Any]:
    return parse_text((vault / rel).read_bytes()).meta


def _say(cli: Any, vault: Path, session: str, scope: str, *texts: str) -> None:
    v = ("--vault", str(vault))
    for text in texts:
        assert cli(*v, "loop", "intake", "-s", session, "--scope", scope, text).exit_code == 0
    assert cli(*v, "flush", "-s", session).exit_code == 0


def _retrieved(cli: Any, vault: Path, session: str, scope: str, text: str) -> str:
    v = ("--vault", str(vault))
    cli(*v, "loop", "intake", "-s", session, "--scope", scope, text)
    ctx = cli(*v, "loop", "context", "-s", session, "--json").json()
    return "\n".join(f"{r['path']} {r['snippet']}" for r in ctx["retrieved"])


# -- the rules -------------------------------------------------------------------------------


@pytest.mark.parametrize("good", ["global", "user:ana", "chat:telegram:-100", "agent:scout"])
def test_scopes_of_each_kind_are_accepted(good: str) -> None:
    assert check_scope(f" {good} ") == good


@pytest.mark.parametrize("bad", ["", "user:", "chat:tg", "team:x", "user:a b", "agent:../x"])
def test_a_malformed_scope_is_a_usage_error_with_the_forms(bad: str) -> None:
    with pytest.raises(UsageError) as caught:
        check_scope(bad)
    assert "chat:<channel>:<id>" in str(caught.value.hint)


def test_a_conversation_reads_its_chat_then_its_user_then_global() -> None:
    assert layers(["user:ana", "chat:tg:1"]) == ["chat:tg:1", "user:ana", GLOBAL]
    assert layers([]) == [GLOBAL]


def test_capture_files_kinds_by_the_policy_and_falls_back_to_what_exists() -> None:
    both = ["chat:tg:1", "user:ana"]
    assert scope_for("preference", both, USER_KINDS) == "user:ana"
    assert scope_for("decision", both, USER_KINDS) == "chat:tg:1"
    assert scope_for("decision", ["user:ana"], USER_KINDS) == "user:ana"
    assert scope_for("preference", [], USER_KINDS) == GLOBAL


def test_a_session_keeps_the_latest_scopes_it_was_given() -> None:
    records: list[dict[str, Any]] = [
        {"scope": ["chat:a:1"]},
        {"type": "user"},
        {"scope": "chat:a:2,user:x"},
    ]
    assert session_scopes(records) == ["chat:a:2", "user:x"]
    assert session_scopes([{"scope": ["chat:a:1"]}, {"scope": ["not a scope"]}]) == ["chat:a:1"]


def test_agent_roles_grant_what_the_table_says() -> None:
    admin = agent_from("boss", {"role": "admin"})
    project = agent_from("scout", {"role": "project", "read": ["user:ana"], "write": "chat:a:1"})
    skill = agent_from("seo", {"role": "skill", "read": ["user:ana"]})
    assert admin.readable() is None and admin.writable() is None
    assert project.readable() == ["agent:scout", "chat:a:1", "user:ana", GLOBAL]
    assert project.writable() == ["agent:scout", "chat:a:1"]
    assert skill.writable() == []
    project.check_write("chat:a:1")
    with pytest.raises(ForbiddenError, match="may not write scope user:ana"):
        project.check_write("user:ana")
    with pytest.raises(ForbiddenError, match="skill agent"):
        skill.check_write("agent:seo")
    with pytest.raises(VaultBrainError, match="role 'boss'"):
        agent_from("x", {"role": "boss"})


# -- the CLI ---------------------------------------------------------------------------------


def test_a_note_added_with_a_scope_is_found_only_in_that_scope(vault: Path, cli: Any) -> None:
    v = ("--vault", str(vault))
    added = cli(
        *v,
        "add",
        "-n",
        "Tea",
        "-c",
        "preferences",
        "--scope",
        "user:ana",
        "Ana drinks oolong",
        "--json",
    )
    path = added.json()["note"]["path"]
    assert _meta(vault, path)["scope"] == "user:ana"
    cli(*v, "add", "-n", "Coffee", "-c", "preferences", "Everyone drinks oolong on Fridays")

    def found(*extra: str) -> set[str]:
        hits = cli(*v, "search", "oolong", *extra, "--json").json()["results"]
        return {h["title"] for h in hits}

    assert found("--scope", "user:ana") == {"Tea"}
    assert found("--scope", "global") == {"Coffee"}
    assert found() == found("--scope", "all") == {"Tea", "Coffee"}  # a person sees every scope
    listed = cli(*v, "list", "--scope", "user:ana", "--json").json()["notes"]
    assert [n["title"] for n in listed] == ["Tea"]
    bad = cli(*v, "search", "oolong", "--scope", "team:x")
    assert bad.exit_code == 2 and "chat:<channel>:<id>" in bad.stderr


def test_a_chat_or_user_fact_is_never_retrieved_in_another_conversation(
    vault: Path, cli: Any
) -> None:
    _say(cli, vault, "ana-1", "chat:tg:1,user:ana", "I'm allergic to kiwis.")
    _say(cli, vault, "ana-1", "chat:tg:1,user:ana", "We decided to paint the shed teal.")

    ana_prefs = [p for p in (vault / "entities").rglob("*.md") if "user-ana" in p.parts]
    assert ana_prefs and all(
        _meta(vault, str(p.relative_to(vault)))["scope"] == "user:ana" for p in ana_prefs
    )

    bob = _retrieved(cli, vault, "bob-1", "chat:tg:2,user:bob", "kiwis teal shed allergic")
    assert "kiwi" not in bob.lower() and "teal" not in bob.lower()
    unscoped = _retrieved(cli, vault, "plain", "", "kiwis teal shed allergic")
    assert "kiwi" not in unscoped.lower() and "teal" not in unscoped.lower()

    ana_again = _retrieved(cli, vault, "ana-2", "chat:tg:3,user:ana", "allergic kiwis teal shed")
    assert "kiwi" in ana_again.lower()  # her user scope follows her to a new chat
    assert "teal" not in ana_again.lower()  # the old chat's decision does not

    memory = cli("--vault", str(vault), "memory", "--json").json()
    assert "kiwi" not in str(memory).lower()  # MEMORY.md holds global memories only


def test_each_scope_is_capped_by_archiving_its_oldest_unpinned_notes(vault: Path, cli: Any) -> None:
    v = ("--vault", str(vault))
    strategy = vault / "STRATEGY.md"
    strategy.write_text(
        strategy.read_text().replace("---\n", "---\nscope_max_notes: 2\n", 1), "utf-8"
    )
    for n, name in enumerate(["Oldest", "Middle", "Newest"]):
        extra = ["--pinned"] if n == 0 else []
        cli(
            *v,
            "add",
            "-n",
            name,
            "-c",
            "projects",
            "--scope",
            "chat:a:1",
            *extra,
            f"fact {n} about gardens",
        )
    cli(*v, "add", "-n", "Global one", "-c", "projects", "a global fact about gardens")

    plan = cli(*v, "prune", "--dry-run", "--json").json()
    archived = [a for a in plan["actions"] if a["op"] == "archive"]
    assert [a["path"].split("/")[-1] for a in archived] == ["middle.md"]  # pinned kept
    assert "over scope_max_notes 2" in archived[0]["why"]


# -- agents over MCP ------------------------------------------------------------------------


def _agent(vault: Path, name: str, front: str) -> None:
    (vault / "agents").mkdir(exist_ok=True)
    (vault / "agents" / f"{name}.md").write_text(f"---\n{front}\n---\nAn agent.\n", "utf-8")


@pytest.fixture
def as_agent(vault: Path) -> Iterator[Any]:
    servers: list[McpServer] = []

    def start(name: str) -> McpServer:
        args = ["-m", "vault_brain", "--vault", str(vault), "mcp", "--agent", name]
        servers.append(McpServer(StdioServerParameters(command=sys.executable, args=args)))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


@pytest.mark.system
def test_an_agent_writes_only_its_scopes_and_reads_only_what_it_may(
    vault: Path, cli: Any, as_agent: Any
) -> None:
    v = ("--vault", str(vault))
    cli(
        *v,
        "add",
        "-n",
        "Secret plan",
        "-c",
        "projects",
        "--scope",
        "user:zed",
        "Zed plans a garden party",
    )
    cli(*v, "add", "-n", "Shared", "-c", "projects", "The garden party is public knowledge")
    _agent(vault, "scout", "role: project\nwrite: [chat:tg:9]")
    scout = as_agent("scout")

    stored = scout.ok(
        "memory_store",
        {"type": "entity", "category": "projects", "name": "Own", "content": "Scout's garden"},
    )
    assert _meta(vault, stored["path"])["scope"] == "agent:scout"
    refused = scout.error(
        "memory_store",
        {
            "type": "entity",
            "category": "people",
            "name": "Zed",
            "content": "Zed likes gardens",
            "scope": "user:zed",
        },
    )
    assert "may not write scope user:zed" in refused and "agents/scout.md" in refused
    titles = {h["name"] for h in scout.ok("memory_search", {"query": "garden"})["results"]}
    assert titles == {"Shared", "Own"}  # never Zed's
    assert "may not read scope user:zed" in scout.error(
        "memory_search", {"query": "garden", "scope": "user:zed"}
    )


@pytest.mark.system
def test_a_skill_agent_reads_but_never_writes(vault: Path, as_agent: Any) -> None:
    _agent(vault, "seo", "role: skill")
    seo = as_agent("seo")
    refused = seo.error(
        "memory_store", {"type": "entity", "category": "projects", "name": "X", "content": "y"}
    )
    assert "skill agent" in refused
    assert not list((vault / "entities").rglob("x.md"))


def test_an_unknown_agent_stops_the_server_before_it_serves(vault: Path, cli: Any) -> None:
    res = cli("--vault", str(vault), "mcp", "--agent", "ghost")
    assert res.exit_code == 3 and "agents/ghost.md" in res.stderr


@pytest.mark.system
def test_no_agent_changes_an_agent_definition(vault: Path, as_agent: Any) -> None:
    _agent(vault, "scout", "role: admin")
    scout = as_agent("scout")
    before = (vault / "agents/scout.md").read_bytes()
    for tool, args in (
        ("memory_update", {"id": "agents/scout.md", "content": "role: admin everywhere"}),
        ("memory_delete", {"id": "agents/scout.md"}),
    ):
        assert "only a person changes it" in scout.error(tool, args)
    assert (vault / "agents/scout.md").read_bytes() == before


def _episode(vault: Path, name: str, scope: str | None, body: str, credit: float = 0.5) -> None:
    path = vault / "episodes/2026-03" / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    extra = f"scope: {scope}\n" if scope else ""
    path.write_text(
        f"---\ntitle: {name}\ntags: [garden]\ncreated: 2026-03-02T09:00:00\ncredit: {credit}\n"
        f"last_accessed: {dt.date.today().isoformat()}\n{extra}---\n{body}\n",
        encoding="utf-8",
    )


def test_consolidation_merges_within_a_scope_only(vault: Path, cli: Any) -> None:
    v = ("--vault", str(vault))
    _episode(vault, "a1", "chat:tg:1", "We planted leeks.")
    _episode(vault, "a2", "chat:tg:1", "We planted onions.")
    _episode(vault, "b1", "chat:tg:2", "We planted garlic.")
    result = cli(*v, "consolidate", "--json").json()
    (created,) = [a for a in result["actions"] if a["op"] == "create"]
    archived = {a["path"].split("/")[-1] for a in result["actions"] if a["op"] == "archive"}
    assert archived == {"a1.md", "a2.md"}  # b1 shares the tag and the day, not the scope
    assert _meta(vault, created["path"])["scope"] == "chat:tg:1"


def test_promotion_keeps_an_episodes_facts_in_its_scope(vault: Path, cli: Any) -> None:
    v = ("--vault", str(vault))
    strategy = vault / "STRATEGY.md"
    strategy.write_text(
        strategy.read_text().replace("---\n", "---\npromotion_threshold: 0.1\n", 1), "utf-8"
    )
    _episode(vault, "call", "user:ana", "Bob Stone works at Initech as a tester.", credit=0.9)
    result = cli(*v, "promote", "--json").json()
    (created,) = [a for a in result["actions"] if a["op"] == "create"]
    assert "/user-ana/" in created["path"]
    assert _meta(vault, created["path"])["scope"] == "user:ana"
