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
from fake_llm_server import FakeLLMServer
from fake_llm_server import fake_llm as fake_llm  # the fixture
from vault_brain.storage.env import Environment
from vault_brain.storage.frontmatter import parse_text
from vault_brain.storage.sandbox_view import VaultView, shown

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
    vb("add", f"Old plan: the survey ran in May ({key[:12]}-archived).", "-n", "Old plan",
       "-c", "projects")  # fmt: skip
    vb("delete", "entity-projects-old-plan", "--reason", "outdated")
    vb("memory-file")
    (vault / "sessions").mkdir(exist_ok=True)
    typed = {"type": "user", "content": f"my openai key is {key}", "ts": "2026-01-01T00:00:00Z"}
    (vault / "sessions" / "session-old.jsonl").write_text(json.dumps(typed) + "\n")
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
    from vault_brain.storage.sandbox import Sandbox

    vault, workspace, key = setup
    box = Sandbox.start(  # as `vb session` starts it (interfaces/cli/session.py)
        docker_engine, sandbox_image, workspace=workspace, vault=vault,
        session=f"session-{uuid.uuid4().hex[:8]}",
    )  # fmt: skip
    try:
        _check_inside(box, key)
    finally:
        box.remove()


@pytest.fixture
def runner(
    setup: tuple[Path, Path, str], fake_llm: FakeLLMServer, docker_engine: Any, sandbox_image: str
) -> Iterator[Any]:
    """The built-in agent's session, started as `vb session` starts it."""
    from vault_brain.app.api import MemoryAPI
    from vault_brain.app.session import SessionRunner, check_model
    from vault_brain.app.vault import Vault
    from vault_brain.storage.sandbox import Sandbox

    vault, workspace, _ = setup
    session = f"session-{uuid.uuid4().hex[:8]}"
    api = MemoryAPI.live(Vault.open(vault, Environment.from_os()), session, source="session")
    box = Sandbox.start(
        docker_engine, sandbox_image, workspace=workspace, vault=vault, session=session
    )
    run = SessionRunner(api, check_model(api), box, session, lambda text: None)
    try:
        yield run
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
def test_the_opencode_sandbox_sees_the_same_view_refreshed_each_turn(
    setup: tuple[Path, Path, str], fake_llm: FakeLLMServer, docker_engine: Any,
    opencode_image: str, cli: Any,
) -> None:  # fmt: skip
    from fake_llm_server import Canned, streamed
    from vault_brain.app.api import MemoryAPI
    from vault_brain.app.session import check_model
    from vault_brain.app.session_opencode import start_opencode
    from vault_brain.app.vault import Vault

    vault, workspace, key = setup
    session = f"session-{uuid.uuid4().hex[:8]}"
    api = MemoryAPI.live(Vault.open(vault, Environment.from_os()), session, source="session")

    def answer(body: Any) -> Canned:  # OpenCode's turns: one answer; vb's own calls: none
        if not body.get("stream"):
            return Canned(400, b'{"error": {"message": "not scripted"}}', headers=NO_RETRY)
        return streamed(["Noted."])

    fake_llm.responder = answer
    run = start_opencode(
        api, check_model(api), docker_engine, opencode_image, workspace=workspace,
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
