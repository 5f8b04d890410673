"""The agent in `vb session`'s sandbox gets a session, not the vault (issue 22, findings 6 and 7).

Seen from INSIDE a real container started the way `vb session` starts it (`Sandbox.start` for
the built-in agent, `start_opencode` for OpenCode), through the real Docker engine: /vault
holds the notes the session may read and MEMORY.md, never `sessions/` (every word a person
typed), `.git`, `.vb/`, `logs/`, archived notes, another scope's notes or a note stored with
`--allow-secret`; a private note added mid-session never shows, an edit shows at the next turn.
The local fake Chat Completions server plays the model (the one thing that cannot exist here).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import git
from fake_llm_server import FakeLLMServer, completion
from fake_llm_server import fake_llm as fake_llm  # the fixture
from vault_brain.storage.env import Environment
from vault_brain.storage.notes.frontmatter import parse_text
from vault_brain.storage.sandbox.view import VaultView, shown

NOTE = "entities/projects/quokka-survey.md"
NO_RETRY = {"x-should-retry": "false"}
SECRET_NOTE = "entities/people/bank-login.md"
ALICE_NOTE = "entities/preferences/rooibos.md"


def canary() -> str:
    return "sk-proj-" + uuid.uuid4().hex + uuid.uuid4().hex[:8]


@pytest.fixture
def setup(tmp_path: Path, git_env: dict[str, str], cli: Any) -> tuple[Path, Path, str]:
    """A committed vault holding all a sandbox must not see (a transcript with a typed key,
    a note stored with --allow-secret, alice's note, an archived note, logs, .vb, .git) and a
    note it may; an empty workspace; the canary key."""
    vault, workspace = tmp_path / "vault", tmp_path / "work"
    workspace.mkdir()
    key = canary()

    def vb(*args: str) -> None:
        res = cli("--vault", str(vault), *args)
        assert res.exit_code == 0, res.stderr

    assert cli("init", str(vault)).exit_code == 0
    vb("add", "The quokka survey runs on Rottnest Island every March.", "-n", "Quokka survey",
       "-c", "projects")  # fmt: skip
    vb("add", f"My bank password is {key}", "-n", "Bank login", "-c", "people", "--allow-secret")
    vb("add", "Alice drinks rooibos tea.", "-n", "Rooibos", "-c", "preferences",
       "--scope", "user:alice")  # fmt: skip
    vb("add", f"Old plan: the survey ran in May ({key[8:20]}-archived).", "-n", "Old plan",
       "-c", "projects")  # fmt: skip
    vb("delete", "entity-projects-old-plan", "--reason", "outdated")
    vb("memory-file")
    (vault / "sessions").mkdir(exist_ok=True)
    typed = {"type": "user", "content": f"my openai key is {key}", "ts": "2026-01-01T00:00:00Z"}
    (vault / "sessions" / "session-old.jsonl").write_text(json.dumps(typed) + "\n")
    vb("search", "quokka survey", "--session", "session-old")  # (feedback has retrievals)
    (vault / "logs").mkdir(exist_ok=True)
    (vault / "logs" / "credit.jsonl").write_text(json.dumps({"note": key}) + "\n")
    git("add", "-A", cwd=vault)
    git("commit", "-qm", "set-up", cwd=vault)
    assert (vault / ".vb").is_dir() and (vault / ALICE_NOTE).is_file()
    return vault, workspace, key


def test_a_note_stored_with_allow_secret_is_marked_private(
    setup: tuple[Path, Path, str], cli: Any
) -> None:
    vault, _, key = setup
    meta = parse_text((vault / SECRET_NOTE).read_bytes()).meta
    assert meta["private"] is True
    assert "private" not in parse_text((vault / NOTE).read_bytes()).meta
    res = cli("--vault", str(vault), "update", "entity-projects-quokka-survey",
              "--content", f"The survey key is {key}", "--allow-secret")  # fmt: skip
    assert res.exit_code == 0, res.stderr
    assert parse_text((vault / NOTE).read_bytes()).meta["private"] is True


@pytest.mark.parametrize(
    ("front_matter", "visible"),
    [
        ("title: Tea\n", True),
        ("title: Tea\nprivate: true\n", False),
        ("title: Tea\nprivate: yes\n", False),
        ("title: Tea\nPrivate: 'on'\n", True),  # (keys are case-sensitive: not vb's key)
        ("title: Tea\nprivate: false\n", True),
        ("title: Tea\nscope: global\n", True),
        ("title: Tea\nscope: user:alice\n", False),
        ("title: Tea\nscope: chat:web:42\n", False),
        ("title: [Tea\nprivate: true\n", False),  # unreadable YAML naming the key: hidden
    ],
)
def test_what_the_view_shows_of_a_note(front_matter: str, visible: bool) -> None:
    assert shown(f"---\n{front_matter}---\nGreen tea.\n".encode()) is visible


def test_the_view_follows_the_vault_and_leaves_out_what_is_hidden(
    setup: tuple[Path, Path, str],
) -> None:
    vault, _, key = setup
    view = VaultView.create(vault, f"t-{uuid.uuid4().hex[:8]}")
    try:
        files = {str(p.relative_to(view.folder)) for p in view.folder.rglob("*") if p.is_file()}
        assert files == {"MEMORY.md", NOTE}
        assert not any(key[:20] in p.read_text() for p in view.folder.rglob("*") if p.is_file())
        # a hand edit, a new private note, a note made private, a note deleted
        note = vault / NOTE
        note.write_text(note.read_text() + "Moved to April.\n")
        (vault / "entities/people/pin.md").write_text(f"---\nprivate: true\n---\n{key}\n")
        (vault / "entities/people/plain.md").write_text("Bob likes chess.\n")
        done = view.refresh()
        assert (done.copied, done.removed) == (2, 0)
        assert "Moved to April." in (view.folder / NOTE).read_text()
        assert not (view.folder / "entities/people/pin.md").exists()
        (vault / "entities/people/plain.md").write_text("---\nprivate: true\n---\nBob.\n")
        note.unlink()
        done = view.refresh()
        assert done.removed == 2
        assert not (view.folder / "entities/people").exists()  # its folder went with it
        assert not (view.folder / NOTE).exists()
        assert view.refresh().checked == 0  # nothing changed: nothing read
    finally:
        view.remove()
    assert not view.home.exists()


# ---------------------------------------------------------------- from inside the container


def _sh(box: Any, command: str) -> str:
    return str(box.run_shell(command).output)


def _check_inside(box: Any, key: str) -> None:
    """What the agent finds at /vault: MEMORY.md and the readable note, nothing else."""
    listing = _sh(box, "ls -a /vault").split()
    assert sorted(listing) == [".", "..", "MEMORY.md", "entities"], listing
    for hidden in ("sessions", ".git", ".vb", "logs", "archive", "STRATEGY.md", "tasks.json"):
        assert "No such file" in _sh(box, f"ls /vault/{hidden}"), hidden
    assert "No such file" in _sh(box, "cat /vault/sessions/*.jsonl")
    assert "No such file" in _sh(box, f"cat /vault/{SECRET_NOTE} /vault/{ALICE_NOTE}")
    found = box.run_shell(f"grep -rl {key[:20]} /vault; grep -rl rooibos /vault")
    assert found.output == "" and found.exit_code != 0, found.output
    assert "Rottnest Island" in _sh(box, f"cat /vault/{NOTE}")
    assert "Quokka survey" in _sh(box, "cat /vault/MEMORY.md")
    [mount] = [line.split() for line in _sh(box, "cat /proc/mounts").splitlines()
               if line.split()[1] == "/vault"]  # fmt: skip
    assert "ro" in mount[3].split(","), mount


@pytest.mark.docker
def test_the_builtin_sandbox_sees_notes_and_memory_md_only(
    setup: tuple[Path, Path, str], docker_engine: Any, sandbox_image: str
) -> None:
    from vault_brain.storage.sandbox.container import Sandbox

    vault, workspace, key = setup
    box = Sandbox.start(  # as `vb session` starts it (interfaces/cli/session.py)
        docker_engine, sandbox_image, workspace=workspace, vault=vault,
        session=f"session-{uuid.uuid4().hex[:8]}",
    )  # fmt: skip
    try:
        _check_inside(box, key)
    finally:
        box.remove()
    assert box.view is not None and not box.view.home.exists()  # the copies go with it


@pytest.mark.docker
def test_the_next_start_removes_the_view_a_dead_host_left(
    setup: tuple[Path, Path, str], docker_engine: Any, sandbox_image: str
) -> None:
    from vault_brain.app.api import MemoryAPI
    from vault_brain.app.memory.vault import Vault
    from vault_brain.app.runtime.session import recover
    from vault_brain.storage.sandbox.container import Sandbox

    vault, workspace, _ = setup
    session = f"session-{uuid.uuid4().hex[:8]}"
    box = Sandbox.start(  # its host then dies: neither the container nor the view removed
        docker_engine, sandbox_image, workspace=workspace, vault=vault, session=session
    )
    assert box.view is not None and (box.view.folder / NOTE).is_file()
    api = MemoryAPI.live(Vault.open(vault, Environment.from_os()), "session-next", "session")
    try:
        assert recover(api, docker_engine, vault, lambda text: None) == [session]
    finally:
        api.close()
    assert not box.alive() and not box.view.home.exists()


@pytest.fixture
def runner(
    setup: tuple[Path, Path, str], fake_llm: FakeLLMServer, docker_engine: Any, sandbox_image: str
) -> Iterator[Any]:
    """The built-in agent's session, started as `vb session` starts it."""
    from vault_brain.app.api import MemoryAPI
    from vault_brain.app.memory.vault import Vault
    from vault_brain.app.runtime.session import SessionRunner, check_model
    from vault_brain.storage.sandbox.container import Sandbox

    vault, workspace, _ = setup
    session = f"session-{uuid.uuid4().hex[:8]}"
    api = MemoryAPI.live(Vault.open(vault, Environment.from_os()), session, source="session")
    llm = check_model(api.vault)  # (before the container, as `vb session` does)
    box = Sandbox.start(
        docker_engine, sandbox_image, workspace=workspace, vault=vault, session=session
    )
    try:
        yield SessionRunner(api, llm, box, session, lambda text: None)
    finally:
        box.remove()
        api.close()


def _command_output(fake_llm: FakeLLMServer, command: str, runner: Any, line: str) -> str:
    """One turn whose agent runs `command`: what the command printed."""
    fake_llm.reply_tool_calls(("run_command", {"command": command}))
    fake_llm.reply_text("Done.")
    before = len(fake_llm.requests)
    runner.turn(line)
    sent = fake_llm.requests[before + 1].body["messages"]
    return str(next(m["content"] for m in reversed(sent) if m["role"] == "tool"))


@pytest.mark.docker
def test_a_private_note_added_mid_session_stays_out_and_an_edit_shows_next_turn(
    setup: tuple[Path, Path, str], runner: Any, fake_llm: FakeLLMServer, cli: Any
) -> None:
    vault, _, key = setup
    first = _command_output(fake_llm, f"ls -a /vault; cat /vault/{NOTE}", runner, "Look.")
    assert "sessions" not in first and "Rottnest Island" in first
    # between turns: the person stores a secret, and edits a note by hand
    later = canary()
    res = cli("--vault", str(vault), "add", f"The vault PIN is {later}", "-n", "Vault PIN",
              "-c", "people", "--allow-secret")  # fmt: skip
    assert res.exit_code == 0, res.stderr
    (vault / NOTE).write_text((vault / NOTE).read_text() + "Moved to April this year.\n")
    second = _command_output(
        fake_llm, f"grep -rl {later[:20]} /vault; ls /vault/entities; cat /vault/{NOTE}",
        runner, "Again.",
    )  # fmt: skip
    assert "Moved to April this year." in second
    assert later[:20] not in second and "people" not in second.split()
    # a note the agent stores is in /vault for its next command, in the same turn
    fake_llm.reply_tool_calls(
        ("memory_store", {"title": "Wombat count", "content": "Wombats are counted in June.",
                          "category": "projects"}),
        ("run_command", {"command": "cat /vault/entities/projects/wombat-count.md"}),
    )  # fmt: skip
    fake_llm.reply_text("Stored.")
    before = len(fake_llm.requests)
    runner.turn("Remember the wombat count.")
    sent = fake_llm.requests[before + 1].body["messages"]
    assert "counted in June" in sent[-1]["content"], sent[-1]
    assert key[:20] not in json.dumps([r.body for r in fake_llm.requests])


@pytest.mark.docker
def test_the_builtin_agents_memory_tools_read_its_session_scope_and_the_person_keeps_good(
    setup: tuple[Path, Path, str], runner: Any
) -> None:
    vault, _, _ = setup
    tools = runner.tools
    found = tools.call("memory_search", {"query": "rooibos tea Alice"})
    assert found.ok and "Alice drinks" not in found.text, found.text
    for name, arguments in (
        ("memory_retrieve", {"id": "entity-preferences-rooibos"}),
        ("memory_update", {"id": "entity-preferences-rooibos", "content": "Alice likes gin."}),
    ):
        outcome = tools.call(name, arguments)
        assert not outcome.ok and "Alice drinks" not in outcome.text, (name, outcome.text)
    assert "Alice drinks rooibos tea." in (vault / ALICE_NOTE).read_text()
    assert tools.call("memory_retrieve", {"id": "entity-projects-quokka-survey"}).ok
    # the person's own commands on the same API keep their access
    said: list[str] = []
    runner.say = said.append
    runner.command("/good")
    assert said and "credit of 1 memory moved" in said[-1], said


@pytest.mark.docker
def test_the_opencode_sandbox_sees_the_same_view_refreshed_each_turn(
    setup: tuple[Path, Path, str], fake_llm: FakeLLMServer, docker_engine: Any,
    opencode_image: str, cli: Any,
) -> None:  # fmt: skip
    from fake_llm_server import Canned, streamed
    from vault_brain.app.api import MemoryAPI
    from vault_brain.app.memory.vault import Vault
    from vault_brain.app.runtime.session import check_model
    from vault_brain.app.runtime.session_opencode import start_opencode

    vault, workspace, key = setup
    session = f"session-{uuid.uuid4().hex[:8]}"
    api = MemoryAPI.live(Vault.open(vault, Environment.from_os()), session, source="session")

    def answer(body: Any) -> Canned:  # OpenCode's turns: one answer; vb's own calls: none
        if not body.get("stream"):
            return Canned(400, b'{"error": {"message": "not scripted"}}', headers=NO_RETRY)
        return streamed(["Noted."])

    fake_llm.responder = answer
    run = start_opencode(
        api, check_model(api.vault), docker_engine, opencode_image, workspace=workspace,
        policy_rw=False, say=lambda text: None, warn=lambda text: None,
    )  # fmt: skip
    try:
        _check_inside(run.sandbox, key)
        later = canary()
        res = cli("--vault", str(vault), "add", f"The vault PIN is {later}", "-n", "Vault PIN",
                  "-c", "people", "--allow-secret")  # fmt: skip
        assert res.exit_code == 0, res.stderr
        (vault / NOTE).write_text((vault / NOTE).read_text() + "Moved to April this year.\n")
        run.turn("Hello.")
        assert "Moved to April this year." in _sh(run.sandbox, f"cat /vault/{NOTE}")
        assert _sh(run.sandbox, f"grep -rl {later[:20]} /vault; ls /vault/entities") == "projects\n"
    finally:
        run.close("test")
        api.close()


# ---------------------------------------------------------------- the host services it reaches
# What the agent in an OpenCode session can do through the sockets under /run/vb (`vb serve
# --session-only` on model.sock, `vb mcp --session --confined` on mcp.sock), tried from inside
# the container with the image's python3: each answer is printed as one JSON line.
PROBE = r"""
import json, socket, sys

SESSION, OTHER, ALICE_ID = sys.argv[1:4]


def http(path, body, headers=()):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(60)
    sock.connect("/run/vb/model.sock")
    data = json.dumps(body).encode()
    head = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1:4000", "Content-Type: application/json",
            f"Content-Length: {len(data)}", "Connection: close", *headers]
    sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + data)
    got = b""
    while chunk := sock.recv(65536):
        got += chunk
    sock.close()
    return int(got.split(b" ", 2)[1]), got.partition(b"\r\n\r\n")[2].decode(errors="replace")


class MCP:
    def __init__(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(60)
        self.sock.connect("/run/vb/mcp.sock")
        self.file = self.sock.makefile("rwb")
        self.n = 0
        self.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                 "clientInfo": {"name": "probe", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message):
        self.file.write(json.dumps(message).encode() + b"\n")
        self.file.flush()

    def call(self, method, params):
        self.n += 1
        self.send({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params})
        while True:
            answer = json.loads(self.file.readline())
            if answer.get("id") == self.n:
                return answer

    def tool(self, name, arguments):
        answer = self.call("tools/call", {"name": name, "arguments": arguments})
        result = answer.get("result") or {}
        text = " ".join(c.get("text", "") for c in result.get("content") or [])
        return {"error": bool(result.get("isError") or "error" in answer),
                "text": text or json.dumps(answer.get("error"))}


def chat(*headers, **fields):
    body = {"model": "test-model", "messages": [{"role": "user", "content": "Hi from inside."}]}
    return http("/v1/chat/completions", {**body, **fields}, headers)


mcp = MCP()
out = {"search_first": mcp.tool("memory_search", {"query": "quokka survey"})}  # (a retrieval)
out |= {
    "feedback_own": http("/v1/vb/feedback", {"signal": "good", "session": SESSION}),
    "feedback_other": http("/v1/vb/feedback", {"signal": "good", "session": OTHER}),
    "feedback_bare": http("/v1/vb/feedback", {"signal": "bad"}),
    "chat_own": chat(f"X-VB-Session: {SESSION}"),  # (the one that may reach the model)
    "chat_other_header": chat(f"X-VB-Session: {OTHER}"),
    "chat_other_field": chat(memory_session=OTHER),
    "chat_alice": chat(f"X-VB-Session: {SESSION}", memory_scope="user:alice"),
}
out["tools"] = sorted(t["name"] for t in mcp.call("tools/list", {})["result"]["tools"])
out["mcp_feedback"] = mcp.tool("memory_feedback", {"signal": "good"})
out["mcp_persona"] = mcp.tool("memory_persona", {"action": "switch", "name": "evil"})
out["mcp_persona_create"] = mcp.tool("memory_persona", {"action": "create", "name": "evil"})
out["mcp_transcript"] = mcp.tool("memory_retrieve", {"id": f"sessions/{OTHER}.jsonl"})
out["mcp_alice"] = mcp.tool("memory_retrieve", {"id": ALICE_ID})
out["mcp_alice_history"] = mcp.tool("memory_history", {"id": ALICE_ID})
out["mcp_alice_search"] = mcp.tool("memory_search", {"query": "rooibos tea", "scope": "user:alice"})
out["mcp_search"] = mcp.tool("memory_search", {"query": "rooibos tea"})
print(json.dumps(out))
"""


@pytest.mark.docker
def test_from_inside_opencode_the_agent_gets_its_session_and_nothing_more(
    setup: tuple[Path, Path, str], fake_llm: FakeLLMServer, docker_engine: Any,
    opencode_image: str,
) -> None:  # fmt: skip
    from vault_brain.app.api import MemoryAPI
    from vault_brain.app.memory.vault import Vault
    from vault_brain.app.runtime.session import check_model
    from vault_brain.app.runtime.session_opencode import start_opencode

    vault, workspace, _ = setup
    other = vault / "sessions" / "session-old.jsonl"
    notes_before = {p: p.read_bytes() for p in (vault / "entities").rglob("*.md")}
    transcript_before, branch = other.read_bytes(), git("branch", "--show-current", cwd=vault)
    session = f"session-{uuid.uuid4().hex[:8]}"
    fake_llm.responder = lambda body: completion("Hello from the model.")
    api = MemoryAPI.live(Vault.open(vault, Environment.from_os()), session, source="session")
    run = start_opencode(
        api, check_model(api.vault), docker_engine, opencode_image, workspace=workspace,
        policy_rw=False, say=lambda text: None, warn=lambda text: None,
    )  # fmt: skip
    try:
        probe = run.sandbox.exec(
            ["python3", "-I", "-S", "-c", PROBE, session, "session-old",
             "entity-preferences-rooibos"], timeout=120,
        )  # fmt: skip
        assert probe.exit_code == 0, probe.output
        out = json.loads(probe.output.strip().splitlines()[-1])
        # feedback is the host REPL's alone (/good, /bad): refused, for any session
        for name in ("feedback_own", "feedback_other"):
            assert out[name][0] == 403, (name, out[name])
        assert out["feedback_bare"][0] in (400, 403), out["feedback_bare"]  # (names none)
        # its own turns reach the model; none into another session, whichever way it is
        # named, nor in another scope
        assert out["chat_own"][0] == 200, out["chat_own"]
        for name in ("chat_other_header", "chat_other_field", "chat_alice"):
            assert out[name][0] == 403, (name, out[name])
        # the memory tools: no feedback, no persona commands, no transcript, no alice
        assert "memory_feedback" not in out["tools"] and "memory_persona" not in out["tools"]
        assert {"memory_search", "memory_retrieve", "memory_store"} <= set(out["tools"])
        for name in ("mcp_feedback", "mcp_persona", "mcp_persona_create", "mcp_transcript",
                     "mcp_alice", "mcp_alice_history", "mcp_alice_search"):  # fmt: skip
            assert out[name]["error"], (name, out[name])
            assert "Alice drinks" not in out[name]["text"], (name, out[name])
        assert "Alice drinks" not in out["mcp_search"]["text"], out["mcp_search"]
        # and on the host: nothing changed that the agent was refused
        assert other.read_bytes() == transcript_before
        assert git("branch", "--show-current", cwd=vault) == branch
        assert "evil" not in git("branch", "--list", cwd=vault)
        for path, before in notes_before.items():  # no credit moved
            was = parse_text(before).meta.get("credit")
            assert parse_text(path.read_bytes()).meta.get("credit") == was, path
        assert len(fake_llm.requests) == 1, "a refused request reached the model"
    finally:
        run.close("test")
        api.close()
