"""`vb mcp` through the SDK's real stdio client: the server runs as a subprocess
(`python -m vault_brain --vault DIR mcp`), one per test on a vault of its own, and every
assertion about what a call did is checked in the vault's files, front matter and logs."""

from __future__ import annotations

import asyncio
import concurrent.futures
import datetime as dt
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import filelock
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import CallToolResult

from conftest import REPO, run_vb
from vault_brain.storage.notes.frontmatter import parse_text
from vault_brain.storage.sessions.transcript import read_records
from vault_brain.storage.template import init_vault

SESSION = "test-mcp"
TOOLS = {
    "memory_store",
    "memory_retrieve",
    "memory_search",
    "memory_update",
    "memory_delete",
    "credit_report",
    "memory_compact",
    "memory_feedback",
    "memory_history",
    "memory_persona",
}


class McpServer:
    """A real client connected to `vb mcp` over stdio, driven from synchronous tests: one
    task on a background loop holds the connection and runs the jobs it is given."""

    def __init__(self, params: StdioServerParameters) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.queue: asyncio.Queue[Any] = asyncio.Queue()
        ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self.done = asyncio.run_coroutine_threadsafe(self._serve(params, ready), self.loop)
        ready.result(timeout=60)

    async def _serve(
        self, params: StdioServerParameters, ready: concurrent.futures.Future[None]
    ) -> None:
        try:
            async with Client(params, read_timeout_seconds=60) as client:
                ready.set_result(None)
                while (job := await self.queue.get()) is not None:
                    fn, future = job
                    try:
                        future.set_result(await fn(client))
                    except Exception as exc:
                        future.set_exception(exc)
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            raise

    def run(self, fn: Callable[[Client], Awaitable[Any]]) -> Any:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self.loop.call_soon_threadsafe(self.queue.put_nowait, (fn, future))
        return future.result(timeout=120)

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> CallToolResult:
        return self.run(lambda client: client.call_tool(name, arguments or {}))

    def ok(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        result = self.call(name, arguments)
        assert not result.is_error, result.content
        assert isinstance(result.structured_content, dict)
        return result.structured_content

    def failure(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """A failed call's `{code, message, hint}` (its text, one line of JSON)."""
        result = self.call(name, arguments)
        assert result.is_error, result.structured_content
        text = str(getattr(result.content[0], "text", result.content[0]))
        assert "\n" not in text, text
        doc: dict[str, Any] = json.loads(text)
        assert set(doc) == {"code", "message", "hint"}, doc
        return doc

    def error(self, name: str, arguments: dict[str, Any] | None = None) -> str:
        """A failed call's message and hint on one line, as the CLI says them."""
        doc = self.failure(name, arguments)
        return f"{doc['message']} (hint: {doc['hint']})" if doc["hint"] else doc["message"]

    def settle(self) -> None:
        """Any tool but the retrievals first records the accesses still pending."""
        self.ok("credit_report", {"top_n": 1})

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.queue.put_nowait, None)
        self.done.result(timeout=30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)


def server_params(vault: Path, **env: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "vault_brain", "--vault", str(vault), "mcp"],
        env=env,
    )


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    init_vault(root)
    return root


@pytest.fixture
def server(vault: Path) -> Iterator[McpServer]:
    srv = McpServer(server_params(vault, VB_SESSION_ID=SESSION))
    yield srv
    srv.close()


def meta(vault: Path, rel: str) -> dict[str, Any]:
    return parse_text((vault / rel).read_bytes()).meta


def body(vault: Path, rel: str) -> str:
    return parse_text((vault / rel).read_bytes()).body


def session_records(vault: Path) -> list[dict[str, Any]]:
    return list(read_records(vault / "sessions" / f"{SESSION}.jsonl"))


def jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def write_note(vault: Path, rel: str, front: dict[str, Any], text: str) -> None:
    """A note written by hand (or Obsidian): atomically, as editors save."""
    path = vault / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    head = "".join(f"{k}: {json.dumps(v)}\n" for k, v in front.items())
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(f"---\n{head}---\n{text}", encoding="utf-8")
    os.replace(tmp, path)


# --------------------------------------------------------------------------- tools


def test_every_tool_is_listed_with_schemas_and_hints(server: McpServer) -> None:
    tools = {t.name: t for t in server.run(lambda c: c.list_tools()).tools}
    assert set(tools) == TOOLS
    store = tools["memory_store"].input_schema
    assert store["required"] == ["type", "category", "name", "content"]
    assert store["properties"]["type"]["enum"] == ["entity", "episode"]
    assert tools["memory_search"].input_schema["required"] == ["query"]
    assert tools["memory_compact"].input_schema.get("required", []) == []
    for name, tool in tools.items():
        assert tool.output_schema is not None, name
        assert tool.annotations is not None and tool.annotations.open_world_hint is False
    # only history is read-only: retrieve and search write access counters, the report
    # records them
    assert {n for n, t in tools.items() if t.annotations.read_only_hint} == {"memory_history"}
    for name in ("memory_retrieve", "memory_search", "credit_report"):
        assert tools[name].annotations.destructive_hint is False
    for name in ("memory_update", "memory_delete", "memory_compact"):
        hints = tools[name].annotations
        assert hints.read_only_hint is False and hints.destructive_hint is True
    for name in ("memory_store", "memory_feedback"):
        hints = tools[name].annotations
        assert hints.read_only_hint is False and hints.destructive_hint is False
    assert tools["memory_delete"].annotations.idempotent_hint is True
    assert tools["memory_search"].output_schema["properties"]["results"]["type"] == "array"


def test_store_writes_the_note_at_the_returned_path(server: McpServer, vault: Path) -> None:
    out = server.ok(
        "memory_store",
        {
            "type": "entity",
            "category": "people",
            "name": "Ada Lovelace",
            "content": "Ada prefers tea over coffee.",
            "tags": ["friends", "#Math"],
        },
    )
    note = out
    assert out == {"id": "entity-people-ada-lovelace", "path": "entities/people/ada-lovelace.md"}
    front = meta(vault, note["path"])
    assert front["id"] == note["id"] and front["type"] == "entity"
    assert front["category"] == "people" and front["title"] == "Ada Lovelace"
    assert front["tags"] == ["friends", "math"] and front["credit"] == 0.5
    assert body(vault, note["path"]) == "Ada prefers tea over coffee.\n"

    episode = server.ok(
        "memory_store",
        {"type": "episode", "category": "", "name": "Kickoff call", "content": "We met."},
    )
    month = dt.date.today().strftime("%Y-%m")
    assert episode["path"] == f"episodes/{month}/kickoff-call.md"
    assert meta(vault, episode["path"])["category"] == "general"


def test_retrieve_returns_the_note_and_records_the_access(server: McpServer, vault: Path) -> None:
    stored = server.ok(
        "memory_store",
        {"type": "entity", "category": "projects", "name": "Apollo", "content": "Apollo ships."},
    )
    out = server.ok("memory_retrieve", {"id": stored["id"]})
    assert out["content"] == "Apollo ships.\n" and out["credit_score"] == 0.5
    assert out["path"] == stored["path"] and out["name"] == "Apollo"
    assert out["metadata"]["category"] == "projects" and out["metadata"]["access_count"] == 0
    server.settle()
    assert meta(vault, stored["path"])["access_count"] == 1
    last = session_records(vault)[-1]
    assert last["type"] == "retrieval" and last["tool"] == "memory_retrieve"
    assert last["ids"] == [stored["id"]] and last["paths"] == [stored["path"]]
    # by path as well as by id
    assert server.ok("memory_retrieve", {"id": stored["path"]})["id"] == stored["id"]
    server.settle()
    assert meta(vault, stored["path"])["access_count"] == 2


def test_search_is_credit_weighted_and_records_access(server: McpServer, vault: Path) -> None:
    text = "Quokka habitat notes: quokkas live on Rottnest Island.\n"
    low, high = "entities/projects/quokka-low.md", "entities/projects/quokka-high.md"
    write_note(vault, low, {"title": "Quokka low", "credit": 0.1}, text)
    write_note(vault, high, {"title": "Quokka high", "credit": 0.9}, text)
    out = server.ok("memory_search", {"query": "quokka habitat", "limit": 5})
    titles = [r["name"] for r in out["results"]]
    assert titles == ["Quokka high", "Quokka low"]
    assert out["results"][0]["score"] > out["results"][1]["score"]
    assert "Rottnest" in out["results"][0]["snippet"]
    server.settle()
    assert [meta(vault, rel)["access_count"] for rel in (high, low)] == [1, 1]
    last = session_records(vault)[-1]
    assert last["type"] == "retrieval" and last["query"] == "quokka habitat"
    assert last["ids"] == [r["id"] for r in out["results"]] and last["tool"] == "memory_search"

    assert server.ok("memory_search", {"query": "quokka habitat", "type": "episode"}) == {
        "results": [],
    }
    top = server.ok("memory_search", {"query": "quokka", "limit": 1})["results"]
    assert [r["name"] for r in top] == ["Quokka high"]
    server.settle()
    assert [meta(vault, rel)["access_count"] for rel in (high, low)] == [2, 1]


def test_accesses_are_recorded_after_a_second_without_calls(server: McpServer, vault: Path) -> None:
    stored = server.ok(
        "memory_store",
        {"type": "entity", "category": "projects", "name": "Idle", "content": "Idle heron."},
    )
    server.ok("memory_search", {"query": "idle heron"})
    deadline = time.monotonic() + 10
    while meta(vault, stored["path"]).get("access_count") != 1:
        assert time.monotonic() < deadline, "the access was never recorded"
        time.sleep(0.1)
    assert session_records(vault)[-1]["ids"][0] == stored["id"]


def test_feedback_credits_the_retrieved_memories_in_front_matter_and_log(
    server: McpServer, vault: Path
) -> None:
    stored = server.ok(
        "memory_store",
        {"type": "entity", "category": "preferences", "name": "Editor", "content": "Uses Helix."},
    )
    server.ok("memory_search", {"query": "helix editor"})
    out = server.ok("memory_feedback", {"signal": "good"})
    assert out["session"] == SESSION and out["signal"] == "positive_feedback"
    changes = {c["id"]: c for c in out["changes"]}
    assert stored["id"] in changes
    change = changes[stored["id"]]
    assert change["old"] == 0.5 and change["new"] > 0.5
    for c in out["changes"]:
        assert meta(vault, c["path"])["credit"] == c["new"]
    logged = jsonl(vault / "logs" / "credit.jsonl")[-1]
    assert logged["event"] == "feedback" and logged["session"] == SESSION
    assert logged["changes"] == out["changes"]
    assert session_records(vault)[-1]["type"] == "feedback"


def test_update_replaces_the_body_and_only_the_updated_line(server: McpServer, vault: Path) -> None:
    stored = server.ok(
        "memory_store",
        {"type": "entity", "category": "projects", "name": "Zephyr", "content": "Old text."},
    )
    before = (vault / stored["path"]).read_text(encoding="utf-8").splitlines()
    out = server.ok("memory_update", {"id": stored["id"], "content": "New text, **bold**."})
    assert out == {"id": stored["id"], "updated": True, "path": stored["path"]}
    after = (vault / stored["path"]).read_text(encoding="utf-8").splitlines()

    def front(lines: list[str]) -> list[str]:
        end = lines.index("---", 1)
        return [line for line in lines[1:end] if not line.startswith("updated:")]

    assert front(after) == front(before)  # every other front matter line as it was
    assert meta(vault, stored["path"])["updated"] >= meta(vault, stored["path"])["created"]
    assert body(vault, stored["path"]) == "New text, **bold**.\n"


def test_delete_archives_and_never_hard_deletes(server: McpServer, vault: Path) -> None:
    stored = server.ok(
        "memory_store",
        {"type": "entity", "category": "projects", "name": "Gadget", "content": "Gadget v1."},
    )
    out = server.ok("memory_delete", {"id": stored["id"], "reason": "superseded"})
    assert out == {
        "id": stored["id"],
        "archived": True,
        "path": f"archive/{stored['path']}",
        "from_path": stored["path"],
    }
    assert not (vault / stored["path"]).exists()
    front = meta(vault, out["path"])
    assert front["archived"] and front["archive_reason"] == "superseded"
    assert front["archived_from"] == stored["path"]
    assert body(vault, out["path"]) == "Gadget v1.\n"
    assert server.ok("memory_search", {"query": "gadget"})["results"] == []
    again = server.error("memory_delete", {"id": stored["id"]})
    assert "is already archived" in again


def test_credit_report_ranks_by_effective_credit(server: McpServer, vault: Path) -> None:
    write_note(vault, "entities/people/top-scorer.md", {"title": "Top scorer", "credit": 0.99}, "x")
    for n, credit in enumerate((0.3, 0.6, 0.1, 0.8)):
        write_note(vault, f"entities/projects/p{n}.md", {"title": f"P{n}", "credit": credit}, "y")
    out = server.ok("credit_report", {"top_n": 2})
    entries = out["entries"]
    assert [e["name"] for e in entries] == ["Top scorer", "P3", "P0", "P2"]  # 2 high, 2 low
    assert all(set(e) == {"id", "name", "score", "access_count"} for e in entries)
    scores = [e["score"] for e in entries]
    assert scores == sorted(scores, reverse=True)
    assert out["count"] == run_vb("--vault", str(vault), "list", "--json").json()["count"] == 5
    # top_n larger than half the vault: each note once
    assert len(server.ok("credit_report", {"top_n": 4})["entries"]) == 5


def test_compact_consolidates_and_prunes(server: McpServer, vault: Path) -> None:
    day = dt.datetime.now().astimezone().replace(hour=9, minute=0, second=0, microsecond=0)
    month = day.strftime("%Y-%m")
    for n, tags in ((1, ["harbour", "ops"]), (2, ["harbour"])):
        write_note(
            vault,
            f"episodes/{month}/harbour-{n}.md",
            {
                "id": f"episode-general-harbour-{n}",
                "type": "episode",
                "title": f"Harbour visit {n}",
                "tags": tags,
                "created": (day + dt.timedelta(minutes=n)).isoformat(),
                "credit": 0.3,
            },
            f"Harbour inspection part {n}.\n",
        )
    old = (day - dt.timedelta(days=40)).isoformat()
    write_note(
        vault,
        "entities/projects/stale-idea.md",
        {"title": "Stale idea", "created": old, "updated": old, "credit": 0.05},
        "Never used.\n",
    )
    out = server.ok("memory_compact", {})
    assert out["consolidated"] == 2 and out["pruned"] == 1
    assert sorted(out["archived"]) == [
        "entities/projects/stale-idea.md",
        f"episodes/{month}/harbour-1.md",
        f"episodes/{month}/harbour-2.md",
    ]
    [merged] = out["created"]
    assert meta(vault, merged)["merged_from"] == [
        "episode-general-harbour-1",
        "episode-general-harbour-2",
    ]
    for rel in out["archived"]:
        assert not (vault / rel).exists() and meta(vault, f"archive/{rel}")["archived"]
    runs = [r for r in jsonl(vault / "logs" / "lifecycle.jsonl") if r.get("event") == "run"]
    assert [r["operation"] for r in runs[-2:]] == ["consolidate", "prune"]


def test_an_agent_that_never_pauses_pays_nothing_for_its_accesses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each retrieval's line is in the transcript at once; the counters wait in the server,
    behind a marker, and are written behind the answers, never inside a call however many
    wait: at close, or by the timer once the oldest has waited MAX_PENDING_SECONDS."""
    from vault_brain.app.api import MemoryAPI
    from vault_brain.app.memory import access
    from vault_brain.app.memory.vault import Vault

    root = tmp_path / "vault"
    init_vault(root)
    loop = "entities/projects/loop.md"
    write_note(root, loop, {"title": "Loop"}, "Loop note.\n")
    # the idle timer never fires; only the oldest's wait (an hour here) or close() writes
    monkeypatch.setattr(access, "MAX_PENDING_SECONDS", 3600.0)
    api = MemoryAPI.live(Vault.open(root), "burst", "mcp", flush_delay=3600)
    for n in range(40):
        assert api.search(f"loop {n}", 5).results
    assert meta(root, loop).get("access_count") is None  # none written inside a call
    records = list(read_records(root / "sessions" / "burst.jsonl"))
    assert [r["query"] for r in records] == [f"loop {n}" for n in range(40)]
    assert all(r["counters"] == access.DEFERRED for r in records)
    marker = root / ".vb" / "access" / "burst.json"
    assert marker.is_file()  # what a kill would leave for the next start
    api.close()  # what the server does when it stops
    assert meta(root, loop)["access_count"] == 40 and not marker.exists()

    monkeypatch.setattr(access, "MAX_PENDING_SECONDS", 0.3)
    api = MemoryAPI.live(Vault.open(root), "burst-2", "mcp", flush_delay=3600)
    assert api.search("loop", 5).results
    deadline = time.monotonic() + 10
    while meta(root, loop)["access_count"] != 41:  # no further call: the timer writes it
        assert time.monotonic() < deadline, "the waiting counter was never written"
        time.sleep(0.05)
    api.close()


def test_a_session_another_process_marked_is_counted_with_each_line(tmp_path: Path) -> None:
    """Two servers given one session id: the second never writes over the first's marker
    (the first's waiting counters would lose their way back after a kill); its own
    retrievals are counted at once, with their lines."""
    from vault_brain.app.api import MemoryAPI
    from vault_brain.app.memory.vault import Vault

    root = tmp_path / "vault"
    init_vault(root)
    loop = "entities/projects/loop.md"
    write_note(root, loop, {"title": "Loop"}, "Loop note.\n")
    marker = root / ".vb" / "access" / "shared.json"
    marker.parent.mkdir(parents=True, exist_ok=True)
    theirs = json.dumps({"session": "shared", "offset": 0, "pid": os.getppid()})
    marker.write_text(theirs)
    api = MemoryAPI.live(Vault.open(root), "shared", "mcp", flush_delay=3600)
    try:
        assert api.search("loop", 5).results
        assert meta(root, loop)["access_count"] == 1
        assert marker.read_text() == theirs
    finally:
        api.close()


KILLED = """
import os, signal, sys
from vault_brain.app.api import MemoryAPI
from vault_brain.app.memory.vault import Vault
api = MemoryAPI.live(Vault.open(sys.argv[1]), "killed", "mcp", flush_delay=3600)
assert api.search("loop", 5).results
os.kill(os.getpid(), signal.SIGKILL)  # the server dies before the counters are written
"""


def test_counters_a_killed_server_left_waiting_are_written_by_the_next_one(
    tmp_path: Path,
) -> None:
    root = tmp_path / "vault"
    init_vault(root)
    loop = "entities/projects/loop.md"
    write_note(root, loop, {"title": "Loop"}, "Loop note.\n")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-c", KILLED, str(root)], env=env, timeout=120)
    assert proc.returncode == -9
    marker = root / ".vb" / "access" / "killed.json"
    assert marker.is_file() and meta(root, loop).get("access_count") is None
    srv = McpServer(server_params(root, VB_SESSION_ID="next"))
    try:
        srv.ok("credit_report", {"top_n": 1})  # (the first call starts the recovery)
        deadline = time.monotonic() + 30
        while marker.exists():
            assert time.monotonic() < deadline, "the waiting counters were never written"
            time.sleep(0.1)
        assert meta(root, loop)["access_count"] == 1
        found = srv.ok("memory_search", {"query": "loop"})
        assert [r["path"] for r in found["results"]] == [loop]
    finally:
        srv.close()
    assert meta(root, loop)["access_count"] == 2  # counted once: never twice


def test_concurrent_calls_from_two_clients(server: McpServer, vault: Path) -> None:
    other = McpServer(server_params(vault))  # a second server process on the same vault
    try:

        async def burst(client: Client, who: str) -> list[CallToolResult]:
            stores = [
                client.call_tool(
                    "memory_store",
                    {
                        "type": "entity",
                        "category": "projects",
                        "name": f"Parallel note {who}{n}",
                        "content": f"Written by {who} #{n}, concurrently.",
                    },
                )
                for n in range(8)
            ]
            reads = [client.call_tool("memory_search", {"query": "concurrently"}) for _ in range(4)]
            return list(await asyncio.gather(*stores, *reads))

        pool = concurrent.futures.ThreadPoolExecutor(2)
        mine = pool.submit(server.run, lambda c: burst(c, "a"))
        theirs = pool.submit(other.run, lambda c: burst(c, "b"))
        results = mine.result(timeout=120) + theirs.result(timeout=120)
    finally:
        other.close()
    assert not [r.content for r in results if r.is_error]
    stored = [r.structured_content for r in results if "path" in (r.structured_content or {})]
    paths = {s["path"] for s in stored if s}
    assert len(paths) == 16  # one note each, none overwritten
    texts = {body(vault, p) for p in paths}
    assert texts == {f"Written by {w} #{n}, concurrently.\n" for w in "ab" for n in range(8)}


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("memory_retrieve", {"id": "no-such-note"}, "no note with id 'no-such-note'"),
        ("memory_retrieve", {"id": "../../etc/passwd"}, "is outside the vault"),
        ("memory_update", {"id": "../outside.md", "content": "x"}, "is outside the vault"),
        ("memory_delete", {"id": "/etc/hosts"}, "is outside the vault"),
        ("memory_retrieve", {"id": "STRATEGY.md"}, "'STRATEGY.md' is not a memory note"),
        ("memory_retrieve", {"id": "logs/credit.jsonl"}, "is not a memory note"),
        ("memory_search", {"query": "x", "limit": "ten"}, "limit must be a whole number"),
        ("memory_search", {"query": "x", "limit": 0}, "limit must be at least 1"),
        ("memory_search", {"query": "x", "limit": 1000}, "limit must be at most 100"),
        (
            "memory_store",
            {"type": "fact", "category": "c", "name": "n", "content": "c"},
            "type must be 'entity' or 'episode'",
        ),
        ("memory_store", {"type": "entity", "category": "people", "name": "n"}, "content is"),
        (
            "memory_store",
            {"type": "entity", "category": "people", "name": "n", "content": "c", "tags": "a"},
            "tags must be a list",
        ),
        (
            "memory_store",
            {"type": "entity", "category": " ", "name": "n", "content": "c"},
            "an entity needs a category",
        ),
        ("memory_feedback", {"signal": "great"}, "signal must be 'good', 'bad', "),
        ("memory_unknown", {}, "unknown tool 'memory_unknown'"),
    ],
)
def test_bad_arguments_are_tool_errors_and_the_server_keeps_going(
    server: McpServer, vault: Path, tool: str, arguments: dict[str, Any], message: str
) -> None:
    write_note(vault, "entities/projects/alive.md", {"title": "Alive"}, "ok\n")
    text = server.error(tool, arguments)
    assert message in text
    assert server.ok("credit_report", {"top_n": 1})["count"] == 1  # and it still answers


def test_an_error_carries_the_hint(server: McpServer) -> None:
    text = server.error(
        "memory_store", {"type": "entity", "category": "", "name": "n", "content": "c"}
    )
    assert "an entity needs a category (hint:" in text


def test_a_path_escaping_name_stays_inside_the_vault(server: McpServer, vault: Path) -> None:
    refused = server.error(
        "memory_store",
        {"type": "entity", "category": "../../..", "name": "../../evil", "content": "Nope."},
    )
    assert "is a path" in refused  # a category that is a path is refused, not renamed
    out = server.ok(
        "memory_store",
        {"type": "entity", "category": "projects", "name": "../../evil", "content": "Nope."},
    )
    target = (vault / out["path"]).resolve()
    assert target.is_relative_to(vault.resolve()) and target.is_file()
    assert (
        not (vault.parent / "evil.md").exists() and not (vault.parent.parent / "evil.md").exists()
    )


def test_a_note_edited_on_disk_between_calls_is_seen(server: McpServer, vault: Path) -> None:
    stored = server.ok(
        "memory_store",
        {"type": "entity", "category": "projects", "name": "Heron", "content": "Heron v1."},
    )
    assert server.ok("memory_search", {"query": "xylophone"})["results"] == []
    path = vault / stored["path"]
    text = path.read_text(encoding="utf-8").replace("Heron v1.", "Heron plays the xylophone.")
    tmp = path.with_name(".heron.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)  # as an editor saves
    hits = server.ok("memory_search", {"query": "xylophone"})["results"]
    assert [h["id"] for h in hits] == [stored["id"]]
    assert server.ok("memory_retrieve", {"id": stored["id"]})["content"] == (
        "Heron plays the xylophone.\n"
    )
    write_note(vault, "entities/projects/new-by-hand.md", {"title": "By hand"}, "Marimba too.\n")
    assert [h["name"] for h in server.ok("memory_search", {"query": "marimba"})["results"]] == [
        "By hand"
    ]


def test_edits_and_searches_in_a_tight_loop_never_see_a_stale_index(
    server: McpServer, vault: Path
) -> None:
    """`vb mcp` keeps its index current from a vault watcher, not a walk before each call:
    a note saved by hand (atomically, as editors do, or in place) just before a search is
    found by that very search, and an old word of it is gone, every time."""
    rel = "entities/projects/loop.md"
    previous = None
    for n in range(25):
        word = f"zqword{n}x"
        text = f"---\ntitle: Loop\n---\nThe loop says {word}.\n"
        path = vault / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if n % 2:
            path.write_text(text, encoding="utf-8")  # in place
        else:
            tmp = path.with_name(".loop.tmp")
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, path)  # as an editor saves
        hits = server.ok("memory_search", {"query": word})["results"]
        assert [h["path"] for h in hits] == [rel], n
        if previous is not None:
            assert server.ok("memory_search", {"query": previous})["results"] == [], n
        previous = word


def test_a_locked_vault_is_a_tool_error_and_the_server_keeps_answering(vault: Path) -> None:
    server = McpServer(server_params(vault, VB_LOCK_TIMEOUT="0.5"))
    try:
        server.ok(
            "memory_store",
            {"type": "entity", "category": "projects", "name": "Lock", "content": "Lockpicking."},
        )
        lock_note = "entities/projects/lock.md"
        lock = filelock.FileLock(str(vault / ".vb" / "vault.lock"))
        with lock.acquire(timeout=5):
            text = server.error(
                "memory_store",
                {"type": "entity", "category": "projects", "name": "Blocked", "content": "No."},
            )
            assert "the vault is locked by another vb process (waited 0.5s)" in text
            assert "VB_LOCK_TIMEOUT" in text  # the hint
            found = server.ok("memory_search", {"query": "lockpicking"})
            assert [r["name"] for r in found["results"]] == ["Lock"]  # reads still answer
            # the idle timer (1 s) fires and finds the vault locked: nothing is recorded yet
            time.sleep(1.6)
            assert meta(vault, lock_note).get("access_count") is None
        # no further call: the timer tries again by itself once the lock is free
        deadline = time.monotonic() + 10
        while meta(vault, lock_note).get("access_count") != 1:
            assert time.monotonic() < deadline, "the pending access was never retried"
            time.sleep(0.1)
        assert not (vault / "entities/projects/blocked.md").exists()
        out = server.ok(
            "memory_store",
            {"type": "entity", "category": "projects", "name": "Blocked", "content": "Now yes."},
        )
        assert body(vault, out["path"]) == "Now yes.\n"
        assert meta(vault, lock_note)["access_count"] == 1  # recorded once, not twice
    finally:
        server.close()


def test_mcp_answers_are_the_cli_results_trimmed(server: McpServer, vault: Path) -> None:
    """`vb show --json` and memory_retrieve, `vb search --json` and memory_search, `vb credit
    report --json` and credit_report speak of the same notes with the same values; MCP's
    answers carry fewer fields (the contract's), never one the CLI's result contradicts."""
    write_note(
        vault,
        "entities/people/grace.md",
        {"title": "Grace", "tags": ["navy"], "credit": 0.7, "created": "2026-01-02"},
        "Grace wrote the first compiler.\n",
    )
    server.ok("memory_retrieve", {"id": "entities/people/grace.md"})
    server.settle()  # the retrieval's access is now in the note: compare with a fresh read
    cli = run_vb("--vault", str(vault), "show", "entities/people/grace.md", "--json").json()
    mcp = server.ok("memory_retrieve", {"id": "entities/people/grace.md"})
    note = cli["note"]
    assert (mcp["id"], mcp["path"], mcp["name"], mcp["type"]) == (
        note["id"],
        note["path"],
        note["title"],
        note["type"],
    )
    assert mcp["content"] == note["body"] and mcp["credit_score"] == note["credit"] == 0.7
    assert mcp["written_by"] == note["written_by"] == "person"
    for key in ("category", "tags", "created", "access_count", "last_accessed"):
        assert mcp["metadata"][key] == note[key], key

    cli_search = run_vb("--vault", str(vault), "search", "compiler", "--json").json()
    mcp_search = server.ok("memory_search", {"query": "compiler"})
    assert set(mcp_search) == {"results"}
    pairs = list(zip(mcp_search["results"], cli_search["results"], strict=True))
    assert pairs
    for hit, row in pairs:
        assert (hit["id"], hit["name"], hit["path"], hit["snippet"]) == (
            row["id"],
            row["title"],
            row["path"],
            row["snippet"],
        )

    server.settle()
    cli_report = run_vb("--vault", str(vault), "credit", "report", "--top", "3", "--json").json()
    mcp_report = server.ok("credit_report", {"top_n": 3})
    assert mcp_report["count"] == cli_report["count"]
    assert [(e["id"], e["name"], e["score"], e["access_count"]) for e in mcp_report["entries"]] == [
        (e["id"], e["title"], e["effective_credit"], e["access_count"])
        for e in cli_report["highest"]
    ]


def _words(result: CallToolResult) -> dict[str, Any]:
    """An answer's text is its structured content, as one line of JSON."""
    text = str(getattr(result.content[0], "text", ""))
    assert "\n" not in text and len(result.content) == 1
    assert json.loads(text) == result.structured_content
    assert isinstance(result.structured_content, dict)
    return result.structured_content


def _no_copies(doc: Any, above: frozenset[str] = frozenset()) -> None:
    """No object in an answer repeats a key of an object it is inside (a note's fields
    again in a `meta` copy), and no note body or copy is there under its old names."""
    if isinstance(doc, dict):
        assert not set(doc) & above, (set(doc) & above, doc)
        assert not {"body", "meta", "note"} & set(doc), doc
        for value in doc.values():
            _no_copies(value, above | set(doc))
    elif isinstance(doc, list):
        for item in doc:
            _no_copies(item, above)


def test_every_tool_answers_its_contract_fields_compactly(server: McpServer, vault: Path) -> None:
    """Store {id, path}, search {results: [{id, name, snippet, score}]}, update {id, updated},
    delete {id, archived}, credit_report {entries: [{id, name, score, access_count}]}, compact
    {consolidated, pruned}: at the top level, no body but retrieve's, no field twice."""
    text = "Ada prefers rooibos tea, strong, with no milk at all. " * 5
    stored = _words(
        server.call(
            "memory_store",
            {"type": "entity", "category": "people", "name": "Ada", "content": text},
        )
    )
    assert stored == {"id": "entity-people-ada", "path": "entities/people/ada.md"}

    found = _words(server.call("memory_search", {"query": "rooibos"}))
    assert set(found) == {"results"}
    [hit] = found["results"]
    assert (
        {"id", "name", "snippet", "score"}
        <= set(hit)
        <= {
            "id",
            "name",
            "snippet",
            "score",
            "path",
            "written_by",
        }
    )
    assert (hit["id"], hit["name"]) == ("entity-people-ada", "Ada") and hit["score"] > 0

    read = _words(server.call("memory_retrieve", {"id": "entity-people-ada"}))
    assert read["content"] == text.strip() + "\n" and read["credit_score"] == 0.5
    assert len(json.dumps(read)) < len(text) + 600  # the body once, nothing else of its size

    updated = _words(server.call("memory_update", {"id": "entity-people-ada", "content": "Gin."}))
    assert updated == {"id": "entity-people-ada", "updated": True, "path": stored["path"]}

    report = _words(server.call("credit_report", {}))
    assert report == {
        "entries": [{"id": "entity-people-ada", "name": "Ada", "score": 0.5, "access_count": 2}],
        "count": 1,
    }
    compacted = _words(server.call("memory_compact", {}))
    assert compacted == {"consolidated": 0, "pruned": 0}

    deleted = _words(server.call("memory_delete", {"id": "entity-people-ada"}))
    assert deleted["id"] == "entity-people-ada" and deleted["archived"] is True
    for doc in (stored, found, read, updated, report, compacted, deleted):
        _no_copies(doc)


def test_history_lists_each_change_once(server: McpServer, vault: Path) -> None:
    stored = server.ok(
        "memory_store",
        {"type": "entity", "category": "projects", "name": "Wren", "content": "Wren v1."},
    )
    assert run_vb("--vault", str(vault), "sync").exit_code == 0  # (commits: no remote yet)
    server.ok("memory_update", {"id": stored["id"], "content": "Wren v2."})
    assert run_vb("--vault", str(vault), "sync").exit_code == 0
    result = server.call("memory_history", {"id": stored["id"]})
    assert not result.is_error, result.content
    history = _words(result)
    assert (history["id"], history["path"]) == (stored["id"], stored["path"])
    assert "paths" not in history and "seconds" not in history  # (never moved)
    assert len(history["entries"]) >= 2
    for entry in history["entries"]:
        assert "operation" not in entry and entry["operations"]  # the list, not it joined too
        assert "patch" not in entry
    _no_copies({k: v for k, v in history.items() if k != "entries"})


def test_errors_are_code_message_and_hint(server: McpServer, vault: Path) -> None:
    """The CLI's `--json` error document, in vb's words, for every kind of failure."""
    big = server.failure("memory_search", {"query": "x", "limit": 1000})
    assert big == {
        "code": "usage",
        "message": "memory_search: limit must be at most 100",
        "hint": "limit: 1 to 100",
    }
    missing = server.failure("memory_retrieve", {"id": "no-such-note"})
    cli = run_vb("--vault", str(vault), "show", "no-such-note", "--json").json()["error"]
    assert missing == {k: cli[k] for k in ("code", "message", "hint")}
    assert missing["code"] == "not_found"
    assert server.failure("memory_nope", {})["code"] == "usage"
    category = server.failure(
        "memory_store", {"type": "entity", "category": " ", "name": "n", "content": "c"}
    )
    assert category["code"] == "invalid_input" and category["hint"]


def test_an_archived_note_is_not_updated(server: McpServer, vault: Path) -> None:
    stored = server.ok(
        "memory_store",
        {"type": "entity", "category": "projects", "name": "Kite", "content": "Kite v1."},
    )
    moved = server.ok("memory_delete", {"id": stored["id"]})
    before = (vault / moved["path"]).read_bytes()
    refused = server.failure("memory_update", {"id": stored["id"], "content": "Kite v2."})
    assert refused["message"].startswith(f"{stored['id']} is archived")
    assert f"vb restore {stored['id']}" in refused["hint"]
    assert (vault / moved["path"]).read_bytes() == before  # the archived file untouched
    # the CLI refuses it the same way; restored, the note takes the update
    res = run_vb("--vault", str(vault), "update", stored["id"], "--content", "Kite v2.", "--json")
    assert res.exit_code == 1 and res.json()["error"]["message"] == refused["message"]
    assert run_vb("--vault", str(vault), "restore", stored["id"]).exit_code == 0
    assert server.ok("memory_update", {"id": stored["id"], "content": "Kite v2."})["updated"]
    assert body(vault, stored["path"]) == "Kite v2.\n"


def test_a_name_a_note_has_is_refused_with_its_id(server: McpServer, vault: Path) -> None:
    first = {"type": "entity", "category": "people", "name": "Ada", "content": "Likes tea."}
    stored = server.ok("memory_store", first)
    clash = server.failure("memory_store", {**first, "content": "Likes gin."})
    assert clash["code"] == "exists"
    assert stored["id"] in clash["message"] and stored["path"] in clash["message"]
    assert "memory_update" in clash["hint"]
    assert sorted(p.name for p in (vault / "entities/people").glob("*.md")) == ["ada.md"]
    assert body(vault, stored["path"]) == "Likes tea.\n"
    # another category, or a name that tells them apart, is a new note
    assert server.ok("memory_store", {**first, "category": "projects"})["path"] == (
        "entities/projects/ada.md"
    )
    assert server.ok("memory_store", {**first, "name": "Ada (pilot)"})["path"] == (
        "entities/people/ada-pilot.md"
    )
    # an archived note's name is free again (its id moves on to the next free one)
    server.ok("memory_delete", {"id": stored["id"]})
    again = server.ok("memory_store", {**first, "content": "Likes gin."})
    assert again["path"] == "entities/people/ada-2.md"
    # the CLI refuses the same way, naming `vb update`
    res = run_vb("--vault", str(vault), "add", "-n", "Ada (pilot)", "-c", "people", "x", "--json")
    assert res.exit_code == 1 and res.json()["error"]["code"] == "exists"
    assert "vb update entity-people-ada-pilot" in res.json()["error"]["hint"]


def test_the_readme_and_agents_doc_list_the_servers_tools(server: McpServer) -> None:
    import re

    listed = {t.name for t in server.run(lambda c: c.list_tools()).tools}
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("**MCP: `vb mcp`.**") :].split("\n- **")[0]
    named = set(re.findall(r"`((?:memory_|credit_)\w+)`", section))
    assert named == listed == TOOLS
    count = {10: "Ten"}[len(listed)]
    assert f"{count} memory tools" in section
    agents = (REPO / "docs" / "agents.md").read_text(encoding="utf-8")
    table = set(re.findall(r"^\| `(\w+)` \|", agents, flags=re.MULTILINE))
    assert table == listed


# --------------------------------------------------------------------------- process


def test_stdout_carries_only_protocol_messages(vault: Path) -> None:
    """A handshake-era client (protocol 2025-06-18), raw JSON-RPC lines, debug logging on."""
    write_note(vault, "entities/places/rottnest.md", {"title": "Rottnest"}, "Rottnest Island.\n")
    messages: list[dict[str, Any]] = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "memory_search", "arguments": {"query": "rottnest island"}},
        },
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "memory_retrieve", "arguments": {"id": "nope"}},
        },
    ]
    proc = subprocess.Popen(
        [sys.executable, "-m", "vault_brain", "--vault", str(vault), "mcp", "--log-level", "DEBUG"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    watchdog = threading.Timer(60, proc.kill)
    watchdog.start()
    try:
        assert proc.stdin is not None and proc.stdout is not None
        lines = []
        for message in messages:
            proc.stdin.write(json.dumps(message) + "\n")
            proc.stdin.flush()
            if "id" in message:  # wait for the answer before the next request
                lines.append(proc.stdout.readline())
        proc.stdin.close()
        lines += proc.stdout.read().splitlines()
        stderr = proc.stderr.read() if proc.stderr else ""
        assert proc.wait() == 0, stderr
    finally:
        watchdog.cancel()
    replies = [json.loads(line) for line in lines if line.strip()]
    assert len(replies) == 3 and all(line.strip() for line in lines)
    assert all(r["jsonrpc"] == "2.0" for r in replies)
    by_id = {r["id"]: r for r in replies if "id" in r}
    assert by_id[1]["result"]["serverInfo"]["name"] == "vault-brain"
    assert by_id[2]["result"]["structuredContent"]["results"]
    assert by_id[3]["result"]["isError"] is True
    assert "DEBUG" in stderr  # the logs went to stderr
    # the search's access was recorded when the server stopped (stdin closed)
    recorded = [
        r
        for path in (vault / "sessions").glob("mcp-*.jsonl")
        for r in read_records(path)
        if r.get("query") == "rottnest island"
    ]
    assert len(recorded) == 1 and recorded[0]["type"] == "retrieval"


def test_a_missing_vault_fails_before_serving(tmp_path: Path) -> None:
    res = run_vb("--vault", str(tmp_path / "nowhere"), "mcp")
    assert res.exit_code == 5 and res.stdout == ""
    assert "does not exist" in res.stderr


def test_an_invalid_session_id_fails_before_serving(vault: Path) -> None:
    res = run_vb("--vault", str(vault), "mcp", env={"VB_SESSION_ID": "../escape"})
    assert res.exit_code == 1 and res.stdout == ""
    assert "invalid session id '../escape'" in res.stderr


@pytest.mark.parametrize("client", ["claude-code", "opencode", "cursor"])
def test_print_config_gives_each_client_a_working_command(vault: Path, client: str) -> None:
    res = run_vb("--vault", str(vault), "mcp", "--print-config", client, "--json")
    assert res.exit_code == 0, res.stderr
    data = res.json()
    config = data["config"]
    if client == "opencode":
        assert data["file"] == "opencode.json"
        entry = config["mcp"]["vault-brain"]
        assert entry["type"] == "local" and entry["enabled"] is True
        command = entry["command"]
    else:
        assert data["file"] == (".mcp.json" if client == "claude-code" else ".cursor/mcp.json")
        entry = config["mcpServers"]["vault-brain"]
        command = [entry["command"], *entry["args"]]
    assert Path(command[0]).is_absolute() and os.access(command[0], os.X_OK)
    assert command[-3:] == ["--vault", str(vault), "mcp"]
    if client == "claude-code":
        assert entry["type"] == "stdio"
        assert data["shell"].startswith("claude mcp add --scope user vault-brain -- ")
        assert data["shell"].endswith(f"--vault {vault} mcp")
    text = run_vb("--vault", str(vault), "mcp", "--print-config", client).stdout
    if client == "claude-code":
        assert data["shell"] in text and json.dumps(config, indent=2) in text
    else:
        assert json.loads(text) == config  # plain JSON: `> .cursor/mcp.json` works


def test_the_printed_command_starts_a_working_server(vault: Path) -> None:
    write_note(vault, "entities/projects/quokka.md", {"title": "Quokka"}, "Quokkas smile.\n")
    data = run_vb("--vault", str(vault), "mcp", "--print-config", "cursor", "--json").json()
    entry = data["config"]["mcpServers"]["vault-brain"]
    srv = McpServer(StdioServerParameters(command=entry["command"], args=entry["args"]))
    try:
        assert {t.name for t in srv.run(lambda c: c.list_tools()).tools} == TOOLS
        assert srv.ok("memory_search", {"query": "quokka"})["results"]
    finally:
        srv.close()


def test_print_config_rejects_an_unknown_client(vault: Path) -> None:
    res = run_vb("--vault", str(vault), "mcp", "--print-config", "emacs")
    assert res.exit_code == 1
    assert "unknown MCP client 'emacs'" in res.stderr


def test_poison_notes_never_stop_the_server(server: McpServer, vault: Path) -> None:
    from test_poison_notes import POISON, poison_note

    folder = vault / "entities" / "projects"
    folder.mkdir(parents=True, exist_ok=True)
    for name, front in POISON.items():
        (folder / f"{name}.md").write_bytes(poison_note(front))
    (folder / "bad-bytes.md").write_bytes(b"---\ntitle: \xff\xfe\n---\nharbour \xc3\x28\n")
    write_note(vault, "entities/people/pilot.md", {"title": "Pilot"}, "The pilot knows harbours.\n")
    hits = server.ok("memory_search", {"query": "pilot harbour", "limit": 50})["results"]
    assert "entity-people-pilot" in [h["id"] for h in hits]
    assert len(hits) >= len(POISON)  # the poison notes are indexed by their bodies
    assert server.ok("memory_retrieve", {"id": "entity-people-pilot"})["name"] == "Pilot"
    for name in POISON:  # each is shown as far as it reads, with its problem named
        note = server.ok("memory_retrieve", {"id": f"entities/projects/{name}.md"})
        assert note["path"] == f"entities/projects/{name}.md"
    assert server.ok("credit_report", {"top_n": 3})
    assert server.ok("memory_compact", {"dry_run": True}) is not None
    # The server still answers, and the poison notes were reported, not fatal.
    assert server.ok("memory_search", {"query": "pilot"})["results"][0]["id"] == (
        "entity-people-pilot"
    )


def test_search_in_items_cites_the_project_file_and_line(
    server: McpServer, vault: Path, tmp_path: Path
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "adr.md").write_text("# Storage\n\nWe chose Whoosh over SQLite for search.\n")
    assert run_vb("--vault", str(vault), "extract", str(project)).exit_code == 0
    out = server.ok("memory_search", {"query": "whoosh", "search_in": ["items", "sources"]})
    found = {(r["source"], r["path"], r["line"]) for r in out["results"]}
    assert found == {("items", "adr.md", 3), ("sources", "adr.md", 1)}
    assert server.error("memory_search", {"query": "x", "search_in": ["memroy"]})
