"""`vb session` with the built-in agent, end to end: a real `vb session` process, a real
Docker engine and sandbox image, a real vault with git; the local fake Chat Completions
server plays the model, scripted to call tools (the one thing that cannot exist here)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import git, run_vb
from fake_llm_server import FakeLLMServer
from fake_llm_server import fake_llm as fake_llm  # the fixture
from vault_brain.storage.notes.frontmatter import parse_text

pytestmark = pytest.mark.docker

NOTE = "entities/projects/quokka-survey.md"


@pytest.fixture
def setup(tmp_path: Path, git_env: dict[str, str], cli: Any) -> tuple[Path, Path]:
    """A committed vault with one memory, and an empty workspace."""
    vault, workspace = tmp_path / "vault", tmp_path / "work"
    workspace.mkdir()
    assert cli("init", str(vault)).exit_code == 0
    text = "The quokka survey runs on Rottnest Island every March."
    assert (
        cli("--vault", str(vault), "add", text, "-n", "Quokka survey", "-c", "projects").exit_code
        == 0
    )
    assert cli("--vault", str(vault), "memory-file").exit_code == 0
    git("add", "-A", cwd=vault)
    git("commit", "-qm", "set-up", cwd=vault)
    return vault, workspace


def commits(vault: Path) -> list[str]:
    return git("log", "--format=%s", cwd=vault).splitlines()


def containers(vault: Path, running: bool = False) -> list[str]:
    """The vault's session containers (all of them, or the running ones only)."""
    out = subprocess.run(
        ["docker", "ps", "-q" if running else "-aq", "--filter", f"label=vb.vault={vault}"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return out.stdout.split()


def records(vault: Path) -> list[dict[str, Any]]:
    """The records of the (first) session's transcript; none before it exists."""
    found = sorted((vault / "sessions").glob("session-*.jsonl"))
    return records_of(vault, found[0].stem) if found else []


def test_a_scripted_session_remembers_works_in_the_sandbox_and_commits_once(
    setup: tuple[Path, Path], fake_llm: FakeLLMServer, docker_engine: Any, sandbox_image: str
) -> None:
    vault, workspace = setup
    fake_llm.reply_tool_calls(
        ("memory_search", {"query": "quokka survey"}),
        ("run_command", {"command": "echo counted > count.txt && cat count.txt"}),
        ("run_command", {"command": "echo x > /vault/hack.md"}),
    )
    fake_llm.reply_text("The survey is on Rottnest Island in March; I noted it in count.txt.")
    before = commits(vault)
    res = run_vb(
        "--vault", str(vault), "session", "--workspace", str(workspace),
        input="Where does the quokka survey run?\n/good\n/status\n/quit\n",
    )  # fmt: skip
    assert res.exit_code == 0, res.stderr
    assert "Rottnest Island in March" in res.stdout and "memories: 1" in res.stdout
    # the workspace tool ran in the container; the vault could not be written from it
    assert (workspace / "count.txt").read_text() == "counted\n"
    assert not (vault / "hack.md").exists()
    kinds = [r.get("type") for r in records(vault)]
    assert kinds[:1] == ["user"] and kinds.count("tool_call") == 3
    assert kinds.count("tool_result") == 3 and "assistant" in kinds
    results = [r["content"] for r in records(vault) if r.get("type") == "tool_result"]
    assert "Quokka survey" in results[0] and results[1].startswith("exit code 0")
    assert not results[2].startswith("exit code 0")  # read-only vault
    # /good credited the memory the turn retrieved (and task_completed at the end)
    meta = parse_text((vault / NOTE).read_bytes()).meta
    assert meta["credit"] > 0.5
    # one new commit, with the session's one-line summary; no container left
    after = commits(vault)
    assert len(after) == len(before) + 1
    assert after[0].startswith("vb session session-") and "quokka survey" in after[0].lower()
    assert containers(vault) == []
    # the model got the memory tools and the workspace tools, and the memory as context
    sent = fake_llm.requests[0].body
    names = {t["function"]["name"] for t in sent["tools"]}
    assert {"memory_search", "run_command", "read_file", "write_file"} <= names
    # the memory arrives as quoted data in a user-role message, never in the system role
    quoted = [m for m in sent["messages"] if "Quokka survey" in str(m.get("content"))]
    assert [m["role"] for m in quoted] == ["user"]
    assert "<vault_memories" in quoted[0]["content"]
    assert sent["messages"][0]["role"] == "system"


def test_with_policy_rw_the_agent_edits_policy_and_vb_warns_until_approval(
    setup: tuple[Path, Path], fake_llm: FakeLLMServer, docker_engine: Any, sandbox_image: str
) -> None:
    vault, workspace = setup
    (vault / "policy").mkdir()
    (vault / "policy" / "rules.yaml").write_text('prune: "False"\n')  # never approved
    fake_llm.reply_tool_calls(
        (
            "run_command",
            {"command": "echo 'prune: \"effective < 0.3\"' > /vault/policy/rules.yaml"},
        ),
        ("run_command", {"command": "echo x > /vault/hack.md"}),
    )
    fake_llm.reply_text("I tightened the pruning rule.")
    res = run_vb(
        "--vault", str(vault), "session", "--workspace", str(workspace), "--policy-rw",
        input="Prune more.\n/quit\n",
    )  # fmt: skip
    assert res.exit_code == 0, res.stderr
    assert "vb: warning: policy/ has changes not approved on this machine" in res.stderr
    assert (vault / "policy" / "rules.yaml").read_text() == 'prune: "effective < 0.3"\n'
    assert not (vault / "hack.md").exists()
    assert git("status", "--porcelain", cwd=vault) == ""  # committed with the session
    diff = run_vb("--vault", str(vault), "policy", "diff")
    assert '+prune: "effective < 0.3"' in diff.stdout
    assert "not approved" in run_vb("--vault", str(vault), "status").stdout


def test_no_model_or_unknown_agent_is_one_clear_line(setup: tuple[Path, Path]) -> None:
    vault, workspace = setup
    env = {k: "" for k in ("VB_LLM_MODEL", "VB_LLM_BASE_URL", "VB_LLM_API_KEY", "VB_CONFIG")}
    res = run_vb("--vault", str(vault), "session", "--agent", "claude")
    assert res.exit_code != 0 and "use one of: builtin, opencode" in res.stderr
    no_docker = {"DOCKER_HOST": "unix:///nonexistent.sock"}
    # the missing model is told first, whether Docker runs or not (no image built for nothing)
    res = run_vb(
        "--vault", str(vault), "session", "--workspace", str(workspace), env=env | no_docker
    )  # fmt: skip
    assert res.exit_code != 0 and "VB_LLM_MODEL" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 2  # the error and its hint
    model = {"VB_LLM_BASE_URL": "http://127.0.0.1:9/v1", "VB_LLM_MODEL": "m", "VB_LLM_API_KEY": ""}
    res = run_vb("--vault", str(vault), "session", env=model | no_docker)  # (no call made)
    assert res.exit_code != 0 and "Docker is not running" in res.stderr


def _start(vault: Path, workspace: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "vault_brain", "--vault", str(vault), "session",
         "--workspace", str(workspace)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={k: v for k, v in os.environ.items() if k != "VB_VAULT"},
    )  # fmt: skip


def _wait_for_container(vault: Path) -> str:
    """The session's container once it runs (one still being created cannot be killed)."""
    deadline = time.monotonic() + 60
    while not (found := containers(vault, running=True)):
        assert time.monotonic() < deadline, "the session's container never started"
        time.sleep(0.2)
    return found[0]


def test_a_killed_container_ends_the_session_and_loses_nothing(
    setup: tuple[Path, Path], fake_llm: FakeLLMServer, docker_engine: Any, sandbox_image: str
) -> None:
    vault, workspace = setup
    fake_llm.reply_tool_calls(("run_command", {"command": "ls"}))
    proc = _start(vault, workspace)
    container = _wait_for_container(vault)
    subprocess.run(["docker", "kill", container], capture_output=True, check=True)
    _, err = proc.communicate("list my files please\n", timeout=120)
    assert proc.returncode == 0, err
    assert "container stopped" in err
    kinds = [r.get("type") for r in records(vault)]
    assert kinds[0] == "user" and "tool_call" in kinds  # the turn is in the transcript
    assert commits(vault)[0].startswith("vb session ") and "container stopped" in commits(vault)[0]
    assert containers(vault) == []


def test_a_killed_host_is_recovered_at_the_next_start(
    setup: tuple[Path, Path], fake_llm: FakeLLMServer, docker_engine: Any, sandbox_image: str
) -> None:
    vault, workspace = setup
    fake_llm.reply_text("Noted: the survey moves to April next year.")
    proc = _start(vault, workspace)
    _wait_for_container(vault)
    assert proc.stdin is not None
    proc.stdin.write("Remember that the quokka survey moves to April next year.\n")
    proc.stdin.flush()
    deadline = time.monotonic() + 60
    while "assistant" not in [r.get("type") for r in records(vault)]:
        assert time.monotonic() < deadline, "the turn never finished"
        time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)  # the host dies: no flush, no commit, container left
    proc.wait(timeout=30)
    assert len(containers(vault)) == 1
    [interrupted] = [p.stem for p in (vault / "sessions").glob("session-*.jsonl")]
    res = run_vb("--vault", str(vault), "session", "--workspace", str(workspace), input="/quit\n")
    assert res.exit_code == 0, res.stderr
    assert f"recovered session {interrupted}" in res.stderr
    assert containers(vault) == []
    log = commits(vault)
    assert any(m == f"vb session {interrupted}: recovered after the host stopped" for m in log)
    flushed = [r for r in records_of(vault, interrupted) if r.get("type") == "flush"]
    assert flushed  # the interrupted session's transcript was flushed
    # its retrievals are all counted (counters a session holds back are written at the next
    # start when a kill stopped it first)
    retrieved = [r for r in records_of(vault, interrupted) if r.get("type") == "retrieval"]
    assert retrieved
    times = sum(r["paths"].count(NOTE) for r in retrieved)
    assert parse_text((vault / NOTE).read_bytes()).meta.get("access_count") == times
    assert not list((vault / ".vb" / "access").glob("*.json"))


def records_of(vault: Path, session: str) -> list[dict[str, Any]]:
    path = vault / "sessions" / f"{session}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_config_file_inside_the_workspace_is_refused(setup: tuple[Path, Path]) -> None:
    vault, workspace = setup
    config = workspace / "vb.toml"
    config.write_text('[llm]\nmodel = "m"\nbase_url = "http://127.0.0.1:9"\napi_key = "sk-x"\n')
    res = run_vb(
        "--vault", str(vault), "session", "--workspace", str(workspace),
        env={"VB_CONFIG": str(config)},
    )  # fmt: skip
    assert res.exit_code == 2 and "the agent could read its key" in res.stderr
