"""When vb commits the vault: `commit_on` in STRATEGY.md (session, lifecycle, command,
operation), on a real vault with git: a person's command, a session's end, a proxy
conversation's flush and a lifecycle pass each leave a commit of their own."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import git
from fake_llm_server import FakeLLMServer
from fake_llm_server import fake_llm as fake_llm  # the fixture
from vault_brain.app.api import MemoryAPI
from vault_brain.app.memory.vault import Vault
from vault_brain.domain.sync.merge import read_trailers
from vault_brain.storage.env import Environment

DEFAULT_LINE = "# commit_on: [session, lifecycle, command]"  # (the template's, commented out)
QUOKKA = "The quokka survey runs on Rottnest Island every March."


def subjects(vault: Path) -> list[str]:
    return git("log", "--format=%s", cwd=vault).splitlines()


def files_of(vault: Path, commit: str = "HEAD") -> set[str]:
    return set(git("show", "--name-only", "--format=", commit, cwd=vault).split())


def commit_named(vault: Path, prefix: str) -> str:
    """The newest commit whose subject starts with `prefix`."""
    for line in git("log", "--format=%H %s", cwd=vault).splitlines():
        sha, subject = line.split(" ", 1)
        if subject.startswith(prefix):
            return sha
    raise AssertionError(f"no commit {prefix!r} in {subjects(vault)}")


def set_policy(vault: Path, line: str) -> None:
    strategy = vault / "STRATEGY.md"
    text = strategy.read_text()
    assert DEFAULT_LINE in text
    strategy.write_text(text.replace(DEFAULT_LINE, line))
    git("add", "-A", cwd=vault)
    git("commit", "-qm", "policy", cwd=vault)


def low_credit_note(vault: Path) -> None:
    (vault / "entities/projects/low.md").write_text(
        "---\ntitle: Low\ncreated: 2025-01-01\ncredit: 0.05\n---\nA fading memory.\n"
    )


def test_the_tours_notes_are_committed_each_with_a_message_naming_it(
    tmp_path: Path, cli: Any, git_env: dict[str, str]
) -> None:
    """The README's tour in a new vault: each `vb add`, `vb delete` and `vb restore` leaves
    a commit of its own, holding that note, with vb's trailer; nothing is left pending."""
    brain = tmp_path / "brain"
    assert cli("init", str(brain)).exit_code == 0
    v = ("--vault", str(brain))
    ada = "Leads the engine project; prefers written proposals."
    added = cli(*v, "add", "--name", "Ada Lovelace", "--category", "people", "--tag", "team", ada)
    assert added.exit_code == 0, added.stderr
    assert subjects(brain)[0] == "vb add: Ada Lovelace"
    assert files_of(brain) == {"entities/people/ada-lovelace.md"}
    message = git("log", "-1", "--format=%B", cwd=brain)
    assert read_trailers(message).machine == "test"
    res = cli(*v, "add", "--type", "episode", "--name", "Engine planning", "--tag",
              "project/engine", input="Agreed to prototype the mill first.")  # fmt: skip
    assert res.exit_code == 0, res.stderr
    assert subjects(brain)[0] == "vb add: Engine planning"
    assert git("status", "--porcelain", cwd=brain) == ""
    episode = "episode-general-engine-planning"
    assert cli(*v, "delete", episode, "--reason", "superseded").exit_code == 0
    assert subjects(brain)[0] == f"vb delete: {episode}"
    assert any(f.startswith("archive/episodes/") for f in files_of(brain))
    assert cli(*v, "restore", episode).exit_code == 0
    assert subjects(brain)[0] == f"vb restore: {episode}"
    assert cli(*v, "search", "written proposals").exit_code == 0  # a read: no commit
    assert (
        cli(*v, "update", "entity-people-ada-lovelace", "--content", "Leads the mill.").exit_code
        == 0
    )
    assert subjects(brain)[0] == "vb update: entity-people-ada-lovelace"
    assert len(subjects(brain)) == 6 and git("status", "--porcelain", cwd=brain) == ""


def test_without_command_in_commit_on_a_vb_add_commits_nothing(
    vault: Path, cli: Any, git_env: dict[str, str]
) -> None:
    """A vault whose STRATEGY.md sets commit_on keeps its value: no `command`, no commit."""
    set_policy(vault, "commit_on: [session, lifecycle]")
    before = subjects(vault)
    res = cli("--vault", str(vault), "add", "Ships on Fridays.", "-n", "Release", "-c", "projects")
    assert res.exit_code == 0, res.stderr
    assert subjects(vault) == before
    assert git("status", "--porcelain", cwd=vault).strip() == "?? entities/projects/release.md"


def test_by_default_an_agents_write_through_the_api_waits_and_a_pass_commits_its_own(
    vault: Path, cli: Any, git_env: dict[str, str]
) -> None:
    """An agent's write (the API, as MCP calls it) is not a person's command: it waits for its
    session's end (`operation` is off by default); a lifecycle pass commits what is pending."""
    before = subjects(vault)
    MemoryAPI.open(vault, source="mcp").add("entity", "Release", "Ships on Fridays.", "projects")
    assert subjects(vault) == before
    low_credit_note(vault)
    assert cli("--vault", str(vault), "prune").exit_code == 0
    assert subjects(vault)[0] == "vb prune: 1 change"
    assert git("status", "--porcelain", cwd=vault) == ""  # the agent's note went in too
    assert cli("--vault", str(vault), "prune").exit_code == 0  # nothing to do: no commit
    assert subjects(vault)[0] == "vb prune: 1 change" and len(subjects(vault)) == len(before) + 1


def test_per_operation_commits_each_write_and_lifecycle_passes_then_do_not(
    vault: Path, cli: Any, git_env: dict[str, str]
) -> None:
    v = ("--vault", str(vault))
    set_policy(vault, "commit_on: [operation]")
    assert cli(*v, "add", "Ships on Fridays.", "-n", "Release", "-c", "projects").exit_code == 0
    assert subjects(vault)[0] == "vb add: Release (cli)"
    assert (
        cli(*v, "update", "entity-projects-release", "--content", "Ships on Mondays.").exit_code
        == 0
    )
    assert subjects(vault)[0] == "vb update: entity-projects-release (cli)"
    MemoryAPI.open(vault, source="mcp").add("entity", "Tea", "Ada drinks tea.", "preferences")
    assert subjects(vault)[0] == "vb add: Tea (mcp)"
    low_credit_note(vault)
    assert cli(*v, "prune").exit_code == 0
    assert not subjects(vault)[0].startswith("vb prune")
    assert git("status", "--porcelain", cwd=vault) != ""  # left for the next commit


def test_an_unknown_moment_is_refused_with_the_choices(vault: Path, cli: Any) -> None:
    strategy = vault / "STRATEGY.md"
    strategy.write_text(strategy.read_text().replace(DEFAULT_LINE, "commit_on: [hourly]"))
    res = cli("--vault", str(vault), "strategy")
    assert res.exit_code != 0 and "session, lifecycle, command, operation" in res.stderr


def test_a_merge_half_done_is_never_committed_by_vb(
    vault: Path, cli: Any, git_env: dict[str, str]
) -> None:
    """A person's merge stopped on a conflict: vb stages nothing (the file with the conflict
    markers stays unmerged) and says what to do; its own changes wait in the files."""
    from vault_brain.storage.git.repo import commit_vault
    from vault_brain.storage.paths import VaultPaths

    (vault / "plain.txt").write_text("hello\n")
    git("add", "plain.txt", cwd=vault)
    git("commit", "-qm", "plain", cwd=vault)
    git("checkout", "-qb", "other", cwd=vault)
    (vault / "plain.txt").write_text("one\n")
    git("commit", "-qam", "one", cwd=vault)
    git("checkout", "-q", "-", cwd=vault)
    (vault / "plain.txt").write_text("two\n")
    git("commit", "-qam", "two", cwd=vault)
    merged = subprocess.run(["git", "merge", "other"], cwd=vault, capture_output=True)
    assert merged.returncode != 0  # the conflict
    v = ("--vault", str(vault))
    assert cli(*v, "add", "Ships on Fridays.", "-n", "Release", "-c", "projects").exit_code == 0
    done = commit_vault(VaultPaths(vault), "vb: test")
    assert done.startswith("git commit skipped: the repository is in the middle of a merge")
    assert "(unmerged: plain.txt)" in done and "git merge --abort" in done
    assert git("diff", "--name-only", "--diff-filter=U", cwd=vault).split() == ["plain.txt"]
    assert subjects(vault)[0] == "two"


class NoContainer:
    """The session's sandbox where this machine may have no Docker: the turns below call no
    workspace tool, so it has no view to refresh and nothing to remove. (With Docker, the
    whole `vb session` is tested in tests/system/test_session.py.)"""

    def refresh_view(self) -> None:
        return None

    def remove(self) -> None:
        return None

    def remove_view(self) -> None:
        return None


@pytest.fixture
def session_runner(vault: Path, cli: Any, git_env: dict[str, str], fake_llm: FakeLLMServer) -> Any:
    """The built-in agent's session on a vault with one memory and a low-credit note due for
    pruning (both committed), the local Chat Completions server as the model, scripted for
    one turn that searches memory and answers."""
    from vault_brain.app.runtime.session import SessionRunner, check_model
    from vault_brain.domain.sessions.records import new_session_id

    res = cli("--vault", str(vault), "add", QUOKKA, "-n", "Quokka survey", "-c", "projects")
    assert res.exit_code == 0, res.stderr
    low_credit_note(vault)
    git("add", "-A", cwd=vault)
    git("commit", "-qm", "set-up", cwd=vault)
    session = new_session_id("session")
    api = MemoryAPI.live(Vault.open(vault, Environment.from_os()), session, source="session")
    box: Any = NoContainer()
    said: list[str] = []
    fake_llm.reply_tool_calls(("memory_search", {"query": "quokka survey"}))
    fake_llm.reply_text("It runs on Rottnest Island every March.")
    try:
        yield SessionRunner(api, check_model(api.vault), box, session, said.append)
    finally:
        api.close()


TURN = "Where does the quokka survey run? I prefer short answers with bullet points."
SESSION_FILES = {
    "entities/projects/quokka-survey.md",  # credit from /good, access counters
    "logs/credit.jsonl",
}


def test_a_session_is_one_commit_holding_its_flush_credits_and_the_maintenance_at_its_end(
    vault: Path, session_runner: Any
) -> None:
    """Its transcript, the credit /good gave, the access counters, the flush and the prune
    due at its end are one commit whose message names the session and the pass."""
    runner = session_runner
    session = runner.session
    before = subjects(vault)
    runner.turn(TURN)
    assert runner.command("/good")
    report = runner.close("quit")
    assert report.flushed >= 1 and report.commit.startswith("committed "), report
    assert len(subjects(vault)) == len(before) + 1
    subject = subjects(vault)[0]
    assert subject.startswith(f"vb session {session}: ")
    assert subject.endswith("(1 turn, ended: quit); maintenance: prune 1"), subject
    held = files_of(vault)
    assert {
        f"sessions/{session}.jsonl",  # the transcript with its flush record
        "entities/preferences/user.md",  # the flush's fact
        "archive/entities/projects/low.md",  # the prune at its end
        *SESSION_FILES,
    } <= held, held
    assert git("status", "--porcelain", cwd=vault) == ""


def test_a_compact_mid_session_commits_the_session_so_far_first(
    vault: Path, session_runner: Any
) -> None:
    """/compact prunes now: the session's changes so far are a commit of the session's
    before the pass's own commit, which holds only what it pruned."""
    runner = session_runner
    runner.turn(TURN)
    assert runner.command("/good")
    assert runner.command("/compact")
    before = commit_named(vault, f"vb session {runner.session}: before /compact")
    assert files_of(vault, before) >= SESSION_FILES
    assert subjects(vault)[0] == "vb prune: 1 change"
    assert files_of(vault) & SESSION_FILES == set()
    runner.close("quit")
    assert subjects(vault)[0].startswith(f"vb session {runner.session}: ")


def test_without_session_in_commit_on_the_passes_at_a_sessions_end_commit_their_own(
    vault: Path, session_runner: Any
) -> None:
    """`commit_on: [lifecycle]`: the session's end is no commit; the prune due at its end is
    a commit of the pass, as anywhere."""
    set_policy(vault, "commit_on: [lifecycle]")
    runner = session_runner
    runner.turn(TURN)
    report = runner.close("quit")
    assert report.commit.startswith("not committed"), report
    assert subjects(vault)[0] == "vb prune: 1 change"
    assert "archive/entities/projects/low.md" in files_of(vault)


def test_a_proxy_conversations_flush_is_committed_with_its_own_message(
    vault: Path, git_env: dict[str, str]
) -> None:
    """`vb serve`: a conversation that paused is flushed by `capture` (in the capture
    process); a flush that wrote notes is a commit of its own (a conversation is a session),
    one that wrote nothing is none."""
    from vault_brain.app.runtime.capture_process import capture
    from vault_brain.app.runtime.proxy import ProxyAPI, Turn

    api = ProxyAPI(Vault.open(vault, Environment({"HOME": str(vault.parent)})))
    said = [{"type": "user", "content": "I prefer short answers with bullet points."}]
    reply = [{"type": "assistant", "content": "Noted."}]
    try:
        api.record_turn(Turn("serve-chat", "k1", said, reply))
        capture(api, "serve-chat")
        subject = subjects(vault)[0]
        assert subject.startswith("vb serve: conversation serve-chat flushed: "), subject
        assert subject.endswith(" notes") or subject.endswith(" note")
        held = files_of(vault)
        assert {"sessions/serve-chat.jsonl", "entities/preferences/user.md"} <= held, held
        assert git("status", "--porcelain", cwd=vault) == ""
        count = len(subjects(vault))
        capture(api, "serve-chat")  # nothing new said: nothing flushed, no commit
        assert len(subjects(vault)) == count
    finally:
        api.close()


def test_a_vault_inside_a_larger_repository_commits_only_its_own_paths(
    tmp_path: Path, cli: Any, git_env: dict[str, str]
) -> None:
    """A vault adopted in a folder of a person's repository: a `vb add` commits the vault's
    paths only; what the person staged outside it stays staged, uncommitted."""
    top = tmp_path / "project"
    top.mkdir()
    git("init", "-q", cwd=top)
    (top / "README.md").write_text("mine\n")
    git("add", "README.md", cwd=top)
    git("commit", "-qm", "start", cwd=top)
    (top / "README.md").write_text("changed, staged by the person\n")
    git("add", "README.md", cwd=top)
    brain = top / "brain"
    brain.mkdir()
    assert cli("init", "--adopt", str(brain)).exit_code == 0
    res = cli("--vault", str(brain), "add", "Ships on Fridays.", "-n", "Release", "-c", "projects")
    assert res.exit_code == 0, res.stderr
    assert subjects(top)[0] == "vb add: Release"
    held = files_of(top)
    assert "brain/entities/projects/release.md" in held
    assert all(f.startswith("brain/") for f in held), held
    assert git("diff", "--cached", "--name-only", cwd=top).split() == ["README.md"]
