"""Trust between parties, for the clients of `vb serve` and the agent in `vb session`'s
sandbox: tokens carry scopes (`vb token`), a conversation never shares another party's
transcript, and the sandbox's `vb serve --session-only` and `vb mcp --confined` are confined
to their session. Real parts throughout: `vb token` through the CLI, the real `openai`
client and raw HTTP against a real `vb serve` (a process, or its app under uvicorn on a real
socket) forwarding to the fake upstream, the real MCP stdio client against `vb mcp`."""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest
from mcp.client.stdio import StdioServerParameters
from test_serve import (
    CONFIG_KEY,
    SERVE_TOKEN,
    add_note,
    serving,
    transcript,
    vb_serve,
)
from test_serve import upstream as upstream  # the fixture
from test_session_host import INITIALIZE, send_message

from conftest import git
from fake_llm_server import FakeLLMServer, completion
from fake_llm_server import fake_llm as fake_llm  # the fixture
from test_mcp import McpServer
from vault_brain.app.runtime.session_host import MCP_SOCKET, MODEL_SOCKET, HostServices
from vault_brain.storage.notes.frontmatter import parse_text

ALICE_FACT = "Alice keeps her savings at the Zorblax bank and prefers rooibos tea."
SHARED = "The garden party is on Saturday and everyone brings a salad."


def make_token(cli: Any, vault: Path, name: str, *args: str) -> str:
    res = cli("--vault", str(vault), "token", "add", name, *args, "--json")
    assert res.exit_code == 0, res.stderr
    return str(res.json()["token"])


def scoped_note(cli: Any, vault: Path, name: str, text: str, scope: str) -> str:
    res = cli(
        "--vault", str(vault), "add", "-n", name, "-c", "preferences", "--scope", scope, text,
        "--json",
    )  # fmt: skip
    assert res.exit_code == 0, res.stderr
    return str(res.json()["note"]["id"])


def notes_with(vault: Path, word: str) -> dict[str, str]:
    """Every live note whose text holds `word`: path -> its scope."""
    found = {}
    for path in vault.rglob("*.md"):
        rel = path.relative_to(vault).as_posix()
        if rel.startswith(("archive/", "sessions/", ".")) or word not in path.read_text("utf-8"):
            continue
        found[rel] = str(parse_text(path.read_bytes()).meta.get("scope") or "global")
    return found


def commit_all(vault: Path) -> None:
    git("add", "-A", cwd=vault)
    git(
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@x",
        "commit",
        "-qm",
        "vb",
        "--allow-empty",
        cwd=vault,
    )


def post(url: str, body: dict[str, Any], token: str | None = None) -> httpx2.Response:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    return httpx2.post(url, json=body, headers=headers, timeout=30)


# -- vb token --------------------------------------------------------------------------------


def test_a_token_is_shown_once_and_kept_hashed_outside_git(vault: Path, cli: Any) -> None:
    v = ("--vault", str(vault))
    token = make_token(cli, vault, "alice", "--scope", "user:alice", "--scope", "chat:web:42")
    assert token.startswith("vbt-") and len(token) > 40
    store = vault / ".vb" / "serve-tokens.json"
    assert stat.S_IMODE(store.stat().st_mode) == 0o600
    text = store.read_text("utf-8")
    assert token not in text and hashlib.sha256(token.encode()).hexdigest() in text
    # listed by name and grant, never the token or its hash
    listed = cli(*v, "token", "list", "--json")
    assert listed.exit_code == 0
    (info,) = listed.json()["tokens"]
    assert info == {
        "name": "alice",
        "scopes": ["user:alice", "chat:web:42"],
        "agent": None,
        "feedback": False,
        "created": info["created"],
    }
    human = cli(*v, "token", "list").stdout
    assert "alice" in human and "user:alice" in human and token not in human
    assert hashlib.sha256(token.encode()).hexdigest() not in human + listed.stdout
    # never in a file git tracks or would track, and not committed
    commit_all(vault)
    tracked = git("ls-files", cwd=vault).split()
    assert not any(p.startswith(".vb") for p in tracked)
    for rel in tracked:
        assert token.encode() not in (vault / rel).read_bytes(), rel
    assert token not in git("log", "-p", "--all", cwd=vault)
    # errors: one line and a hint each
    for args, code, words in (
        (("add", "alice", "--scope", "user:alice"), 2, "a token named 'alice' exists"),
        (("add", "bob", "--scope", "team:x"), 2, "'team:x' is not a scope"),
        (("add", "bob"), 2, "a token needs the scopes it may use"),
        (("add", "bad name", "--scope", "user:b"), 2, "is not a token name"),
        (("revoke", "nobody"), 3, "no token named 'nobody'"),
    ):
        res = cli(*v, "token", *args)
        lines = res.stderr.splitlines()
        assert res.exit_code == code and len(lines) == 2, (args, res.stderr)
        assert words in lines[0] and lines[1].startswith("vb: hint: ")
    assert cli(*v, "token", "revoke", "alice").exit_code == 0
    assert cli(*v, "token", "list", "--json").json()["tokens"] == []


# -- vb serve with tokens ---------------------------------------------------------------------


def test_a_scoped_token_reads_and_writes_its_own_scopes_only(
    vault: Path, upstream: FakeLLMServer, cli: Any
) -> None:
    """Through a real `vb serve` process: bob's token never gets alice's note, naming her
    scope is refused before anything is sent or written, his feedback is refused, and an
    unknown token is refused; alice's token (with --feedback) credits only her own
    conversations."""
    alice_note = scoped_note(cli, vault, "Alice bank", ALICE_FACT, "user:alice")
    scoped_note(cli, vault, "Bob tea", "Bob prefers rooibos tea with honey.", "user:bob")
    alice = make_token(cli, vault, "alice", "--scope", "user:alice", "--feedback")
    bob = make_token(cli, vault, "bob", "--scope", "user:bob")
    upstream.responder = lambda body: completion("Noted.")
    args = ("--port", "0", "--upstream", upstream.base_url, "--capture-idle", "0")
    with vb_serve(vault, *args) as output:
        found = re.search(r"(http://\S+/v1)", output[0])
        assert found is not None and "token required" in output[0]
        url = found.group(1)
        question: Any = [{"role": "user", "content": "Which bank and which rooibos tea?"}]

        def ask(token: str, **extra: Any) -> Any:
            client = openai.OpenAI(base_url=url, api_key=token, max_retries=0)
            body = {"memory_hits": True, **extra}
            return client.chat.completions.with_raw_response.create(
                model="m", messages=question, extra_body=body
            )

        sent = len(upstream.requests)
        with pytest.raises(openai.PermissionDeniedError) as denied:
            ask(bob, memory_scope="user:alice")
        error = denied.value.response.json()["error"]
        assert error["code"] == "forbidden" and "user:alice" in error["message"] and error["hint"]
        with pytest.raises(openai.PermissionDeniedError):
            ask(bob, memory_scope="user:bob,user:alice")
        assert len(upstream.requests) == sent  # nothing went upstream
        assert not (vault / "sessions").exists() or not list((vault / "sessions").glob("*.jsonl"))
        # naming none: his own scope, never hers
        raw = ask(bob)
        hits = [h["id"] for h in raw.http_response.json()["memory_hits"]]
        assert alice_note not in hits and hits
        assert "Zorblax" not in json.dumps(upstream.bodies[-1])
        bob_session = raw.headers["x-vb-session"]
        raw = ask(alice)
        assert alice_note in raw.headers["x-vb-memory-ids"]
        alice_session = raw.headers["x-vb-session"]
        assert alice_session != bob_session
        # unknown or missing tokens
        for token in ("vbt-not-a-token", None):
            refused = post(f"{url}/chat/completions", {"model": "m", "messages": question}, token)
            assert refused.status_code == 401 and refused.json()["error"]["code"] == "unauthorized"
        assert httpx2.get(f"{url}/models").status_code == 401
        # feedback: needs --feedback, and only for its own conversations
        fb = f"{url}/vb/feedback"
        refused = post(fb, {"session": bob_session, "signal": "good"}, bob)
        assert refused.status_code == 403 and "--feedback" in refused.json()["error"]["hint"]
        for session in (bob_session, "no-such-session"):
            refused = post(fb, {"session": session, "signal": "good"}, alice)
            assert refused.status_code == 403, refused.text
        assert post(fb, {"session": alice_session, "signal": "good"}, alice).status_code == 200
        # a session of alice's named by bob: refused, nothing written into it
        with pytest.raises(openai.PermissionDeniedError):
            ask(bob, memory_session=alice_session)
        # revoked: refused at once by the running server
        assert cli("--vault", str(vault), "token", "revoke", "bob").exit_code == 0
        with pytest.raises(openai.AuthenticationError):
            ask(bob)
    assert {r.get("grant") for r in transcript(vault, alice_session)} == {"alice", None}
    assert {r.get("grant") for r in transcript(vault, bob_session)} == {"bob", None}
    user = next(r for r in transcript(vault, bob_session) if r["type"] == "user")
    assert user["scope"] == ["user:bob"] and user["grant"] == "bob"


def test_two_users_who_open_alike_never_share_a_transcript(
    vault: Path, upstream: FakeLLMServer, cli: Any
) -> None:
    """Alice and Bob both open with "Hello!": two transcripts, and what Alice tells is filed
    under user:alice only; the same without any token, for two memory_scopes."""
    alice = make_token(cli, vault, "alice", "--scope", "user:alice")
    bob = make_token(cli, vault, "bob", "--scope", "user:bob")
    upstream.responder = lambda body: completion("Hi there.")
    hello: Any = {"role": "user", "content": "Hello!"}
    reply: Any = {"role": "assistant", "content": "Hi there."}
    with serving(vault, upstream, VB_LLM_API_KEY=CONFIG_KEY) as proxy:
        first = {
            name: proxy.client(api_key=token)
            .chat.completions.with_raw_response.create(model="m", messages=[hello])
            .headers["x-vb-session"]
            for name, token in (("alice", alice), ("bob", bob))
        }
        assert first["alice"] != first["bob"]
        facts = "I prefer rooibos tea in the evening. My sister Carol lives in Ghent."
        proxy.client(api_key=alice).chat.completions.create(
            model="m", messages=[hello, reply, {"role": "user", "content": facts}]
        )
        proxy.idle()
        proxy.client(api_key=bob).chat.completions.create(
            model="m", messages=[hello, reply, {"role": "user", "content": "What do I drink?"}]
        )
        proxy.idle()
        assert "rooibos" not in json.dumps(upstream.bodies[-1])
        # without tokens (the store emptied): two memory_scopes, two transcripts
        for name in ("alice", "bob"):
            assert cli("--vault", str(vault), "token", "revoke", name).exit_code == 0
        open_ids = {
            scope: proxy.client()
            .chat.completions.with_raw_response.create(
                model="m", messages=[hello], extra_body={"memory_scope": scope}
            )
            .headers["x-vb-session"]
            for scope in ("user:alice", "user:bob", "")
        }
        assert len(set(open_ids.values())) == 3
        proxy.idle()
    bob_text = json.dumps(transcript(vault, first["bob"]))
    assert "rooibos" not in bob_text and "Carol" not in bob_text
    assert "rooibos" in json.dumps(transcript(vault, first["alice"]))
    captured = notes_with(vault, "rooibos") | notes_with(vault, "Carol")
    assert captured and set(captured.values()) == {"user:alice"}, captured


def test_vb_serve_token_still_may_do_everything(
    vault: Path, upstream: FakeLLMServer, cli: Any
) -> None:
    alice_note = scoped_note(cli, vault, "Alice bank", ALICE_FACT, "user:alice")
    bob = make_token(cli, vault, "bob", "--scope", "user:bob")
    upstream.responder = lambda body: completion("Fine.")
    with serving(vault, upstream, VB_LLM_API_KEY=CONFIG_KEY, VB_SERVE_TOKEN=SERVE_TOKEN) as proxy:
        question: Any = [{"role": "user", "content": "Zorblax bank savings?"}]
        raw = proxy.client(api_key=SERVE_TOKEN).chat.completions.with_raw_response.create(
            model="m",
            messages=question,
            extra_body={"memory_scope": "user:alice", "memory_session": "desk"},
        )
        assert raw.headers["x-vb-memory-ids"] == alice_note
        # (bob's stored token works beside it, and is never forwarded upstream)
        proxy.client(api_key=bob).chat.completions.create(model="m", messages=question)
        assert upstream.requests[-1].headers["authorization"] == f"Bearer {CONFIG_KEY}"
        done = post(f"{proxy.url}/vb/feedback", {"session": "desk", "signal": "good"}, SERVE_TOKEN)
        assert done.status_code == 200, done.text
        proxy.idle()


# -- the sandbox: vb serve --session-only, vb mcp --confined -----------------------------------


def test_serve_for_one_session_refuses_every_other_and_feedback(
    vault: Path, upstream: FakeLLMServer, cli: Any
) -> None:
    alice_note = scoped_note(cli, vault, "Alice bank", ALICE_FACT, "user:alice")
    shared = add_note(cli, vault, "Party", SHARED, "projects")
    make_token(cli, vault, "bob", "--scope", "user:bob")  # tokens do not open it either
    upstream.responder = lambda body: completion("Ok.")
    args = ("--port", "0", "--upstream", upstream.base_url, "--session-only", "sandbox-1")
    with vb_serve(vault, *args) as output:
        found = re.search(r"(http://\S+/v1)", output[0])
        assert found is not None and "session sandbox-1 only" in output[0]
        url = found.group(1)
        client = openai.OpenAI(base_url=url, api_key="none", max_retries=0)
        question: Any = [{"role": "user", "content": "Zorblax bank, garden party salad?"}]
        raw = client.chat.completions.with_raw_response.create(model="m", messages=question)
        assert raw.headers["x-vb-session"] == "sandbox-1"
        assert raw.headers["x-vb-memory-ids"] == shared and alice_note not in raw.text
        for extra in (
            {"memory_session": "serve-other"},
            {"memory_scope": "user:alice"},
        ):
            with pytest.raises(openai.PermissionDeniedError):
                client.chat.completions.create(model="m", messages=question, extra_body=extra)
        with pytest.raises(openai.PermissionDeniedError):
            client.chat.completions.create(
                model="m", messages=question, extra_headers={"X-VB-Session": "other"}
            )
        for session in ("sandbox-1", "other"):
            refused = post(f"{url}/vb/feedback", {"session": session, "signal": "good"})
            assert refused.status_code == 403 and refused.json()["error"]["code"] == "forbidden"
    assert not (vault / "sessions/serve-other.jsonl").exists()
    assert not (vault / "sessions/other.jsonl").exists()


def test_a_confined_mcp_server_sees_its_session_and_readable_notes_only(
    vault: Path, cli: Any
) -> None:
    v = ("--vault", str(vault))
    alice_note = scoped_note(cli, vault, "Alice bank", ALICE_FACT, "user:alice")
    shared = add_note(cli, vault, "Party", SHARED, "projects")
    assert cli(*v, "loop", "intake", "-s", "alice-chat", "My PIN is 4711").exit_code == 0
    commit_all(vault)
    alice_path = next(p for p in notes_with(vault, "Zorblax"))
    args = ["-m", "vault_brain", "--vault", str(vault), "mcp", "--session", "sandbox-1"]
    server = McpServer(StdioServerParameters(command=sys.executable, args=[*args, "--confined"]))
    try:
        tools = {t.name for t in server.run(lambda c: c.list_tools()).tools}
        assert {"memory_feedback", "memory_persona", "memory_compact"}.isdisjoint(tools)
        assert {"memory_search", "memory_store", "memory_history"} <= tools
        # history: a note it may not read is one that does not exist, by id and by path
        for ref, unknown in (
            (alice_note, "entity-preferences-nobody"),
            (alice_path, "entities/preferences/nobody.md"),
        ):
            hidden = server.error("memory_history", {"id": ref})
            missing = server.error("memory_history", {"id": unknown})
            assert hidden == missing.replace(unknown, ref), (hidden, missing)
            retrieved = server.error("memory_retrieve", {"id": ref})
            assert hidden == retrieved.replace("memory_retrieve", "memory_history")
        assert server.ok("memory_history", {"id": shared})["entries"]
        # search: its scopes (global) only; transcripts never
        for scope in (None, "all"):
            query = {"query": "Zorblax bank savings garden party"}
            found = server.ok("memory_search", {**query, **({"scope": scope} if scope else {})})
            assert [r["id"] for r in found["results"]] == [shared]
        assert "may not read scope user:alice" in server.error(
            "memory_search", {"query": "Zorblax", "scope": "user:alice"}
        )
        assert "may not search session transcripts" in server.error(
            "memory_search", {"query": "PIN", "search_in": ["sessions"]}
        )
        top = server.ok("credit_report", {"top_n": 10})
        assert alice_note not in json.dumps(top)
        # writes: its own scope only; hers do not exist for it
        stored = server.ok(
            "memory_store",
            {"type": "entity", "category": "projects", "name": "Sandbox", "content": "A fact"},
        )
        meta = parse_text((vault / stored["path"]).read_bytes()).meta
        assert meta.get("scope", "global") == "global"
        refused = server.error(
            "memory_store",
            {
                "type": "entity",
                "category": "people",
                "name": "Alice",
                "content": "Alice is away",
                "scope": "user:alice",
            },
        )
        assert "may not write scope user:alice" in refused
        assert "no note" in server.error("memory_update", {"id": alice_note, "content": "x"})
        assert "no note" in server.error("memory_delete", {"id": alice_note})
    finally:
        server.close()
    assert ALICE_FACT in (vault / alice_path).read_text("utf-8")  # untouched
    # and the flag needs its session
    proc = subprocess.run(
        [sys.executable, *args[:-2], "--confined"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode != 0 and "--confined needs the session" in proc.stderr


def test_vb_session_starts_its_servers_confined_to_the_session(
    vault: Path, fake_llm: FakeLLMServer, cli: Any
) -> None:
    """The host side of `vb session --agent opencode`: the sandbox's model socket refuses
    another session and feedback; its memory socket lists no feedback or persona tool."""
    services = HostServices(vault, "sandboxed-1", dict(os.environ), lambda line: None)
    services.start(None)
    try:
        fake_llm.reply_text("hello")

        def request(path: str, body: dict[str, Any], session: str) -> bytes:
            data = json.dumps(body)
            head = (
                f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                f"X-VB-Session: {session}\r\nContent-Length: {len(data)}\r\n"
                "Connection: close\r\n\r\n"
            )
            return send_message(services.sockets / MODEL_SOCKET, (head + data).encode(), b"}}")

        chat = {"model": "test-model", "messages": [{"role": "user", "content": "hi"}]}
        assert b" 403 " in request("/v1/chat/completions", chat, "another-session")
        feedback = {"session": "sandboxed-1", "signal": "good"}
        assert b" 403 " in request("/v1/vb/feedback", feedback, "sandboxed-1")
        listing = (
            json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
            + "\n"
            + json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
            + "\n"
        ).encode()
        answer = send_message(services.sockets / MCP_SOCKET, INITIALIZE + listing, b'"id":2')
        lines = [json.loads(line) for line in answer.splitlines() if line.strip()]
        (tools,) = [m["result"]["tools"] for m in lines if m.get("id") == 2]
        names = {t["name"] for t in tools}
        assert "memory_search" in names
        assert {"memory_feedback", "memory_persona"}.isdisjoint(names)
    finally:
        services.stop()
    assert not (vault / "sessions/another-session.jsonl").exists()
