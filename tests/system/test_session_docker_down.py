"""`vb session` when the Docker daemon goes away: mid-session, and at the start.

What is simulated, and why: stopping the machine's real dockerd would break every other Docker
test (and whatever else uses the engine), so the daemon is stopped at its socket instead. The
`vb session` process gets `DOCKER_HOST=unix://<tmp>/docker.sock`, a relay (`DockerRelay`) that
passes every byte on to the real /var/run/docker.sock. Mid-session the test does what a daemon
that stops does to its clients and its containers: the relay's listener closes and its socket
file goes (as dockerd's does), every open connection is cut, and the session's container is
killed through the real socket. From vb's side that is indistinguishable from `systemctl stop
docker` (a daemon killed with SIGKILL leaves its socket file: `keep_file=True`, also tested).
A daemon that is stuck is a socket that accepts connections and never answers (`hang()` at
the start, `freeze()` mid-session). Then, the relay listening again (Docker back), the next
`vb session` removes the container left behind. The model is the local fake Chat Completions
server, scripted per test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from docker_relay import DockerRelay
from test_session import commits, containers, records_of
from test_session import setup as setup  # the fixture

from fake_llm_server import FakeLLMServer, completion
from fake_llm_server import fake_llm as fake_llm  # the fixture

pytestmark = pytest.mark.docker

DEADLINE = 60  # seconds a session may take here; nothing waits on a dead daemon for ever

START_HINT = "start it: sudo systemctl start docker"


@pytest.fixture
def relay(tmp_path: Path) -> Iterator[DockerRelay]:
    relay = DockerRelay(tmp_path / "docker.sock")
    try:
        yield relay
    finally:
        relay.stop()


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def notices(self) -> list[str]:
        """vb's messages on stderr ("vb: ..."), the session's start and end lines aside."""
        return [line for line in self.stderr.splitlines() if line.startswith("vb:")]


def vb_session(vault: Path, workspace: Path, docker_host: str, input: str) -> Run:
    """`vb session` as a real process whose Docker engine is `docker_host`."""
    env = {k: v for k, v in os.environ.items() if k != "VB_VAULT"}
    env["DOCKER_HOST"] = docker_host
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "vault_brain", "--vault", str(vault), "session",
         "--workspace", str(workspace)],
        input=input, capture_output=True, text=True, env=env, timeout=DEADLINE,
    )  # fmt: skip
    run = Run(proc.returncode, proc.stdout, proc.stderr, time.monotonic() - started)
    assert "Traceback" not in run.stderr, run.stderr
    return run


def docker_stops(vault: Path, relay: DockerRelay, crashed: bool) -> None:
    """What stopping the daemon does: its containers die, its socket goes, connections drop."""
    [container] = containers(vault)
    subprocess.run(["docker", "kill", container], capture_output=True, check=True)
    relay.stop(keep_file=crashed)


def once(fake_llm: FakeLLMServer, event: Callable[[], None], reply: dict[str, Any]) -> None:
    """The model's next reply is `reply`, given after `event` ran (while vb waits on it);
    the requests after it get the fake server's "no scripted reply left"."""

    def respond(body: Any) -> dict[str, Any]:
        fake_llm.responder = None
        event()
        return reply

    fake_llm.responder = respond


def tool_call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    call = {"id": "call_0", "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}  # fmt: skip
    return completion(None, tool_calls=[call])


def the_next_start_removes_the_container(vault: Path, workspace: Path, relay: DockerRelay) -> Run:
    """Docker back (the relay listening again): `vb session` starts, clears what the stopped
    daemon left, and ends on /quit."""
    assert len(containers(vault)) == 1  # the daemon died with the session's container
    before = commits(vault)
    relay.stop()
    relay.start()
    run = vb_session(vault, workspace, relay.docker_host, "/quit\n")
    assert run.code == 0, run.stderr
    assert containers(vault) == []
    assert "recovered session" in run.stderr and "ended (quit)" in run.stderr
    # the session was flushed and committed when it ended: its recovery adds nothing (the
    # start's own commit, MEMORY.md regenerated, is every session's)
    new = commits(vault)[: len(commits(vault)) - len(before)]
    assert all(m.endswith(": vault changes before the session") for m in new), new
    return run


@pytest.mark.parametrize("crashed", [False, True], ids=["stopped", "crashed"])
def test_docker_stopping_during_a_tool_call_ends_the_session_and_loses_nothing(
    setup: tuple[Path, Path],
    fake_llm: FakeLLMServer,
    relay: DockerRelay,
    docker_engine: Any,
    sandbox_image: str,
    crashed: bool,
) -> None:
    vault, workspace = setup
    before = commits(vault)
    relay.start()
    # while the model is thinking, the daemon stops; then the model asks for a command
    once(
        fake_llm,
        lambda: docker_stops(vault, relay, crashed),
        tool_call("run_command", {"command": "ls"}),
    )
    run = vb_session(vault, workspace, relay.docker_host, "list my files please\n/quit\n")
    # exit code 0, as for a killed container: the session ended and was saved; why is said
    assert run.code == 0, run.stderr
    assert run.seconds < DEADLINE
    [notice] = run.notices  # one line, naming Docker, what became of it, and how to start it
    gone = "nothing listens on" if crashed else "no socket at"
    assert f"Docker is not running ({gone} {relay.path})" in notice
    assert "lost contact with Docker while running a command in the sandbox" in notice
    assert START_HINT in notice
    assert "ended (Docker stopped)" in run.stderr
    # the transcript has the turn and the call; the flush ran; one session commit
    session = _session(vault)
    kinds = [r.get("type") for r in records_of(vault, session)]
    assert kinds[0] == "user" and "tool_call" in kinds and "flush" in kinds
    after = commits(vault)
    assert len(after) == len(before) + 1
    assert after[0].startswith(f"vb session {session}: ") and "ended: Docker stopped" in after[0]
    again = the_next_start_removes_the_container(vault, workspace, relay)
    assert f"session {session}" in again.stderr


def test_docker_hanging_during_a_tool_call_ends_the_session_in_bounded_time(
    setup: tuple[Path, Path],
    fake_llm: FakeLLMServer,
    relay: DockerRelay,
    docker_engine: Any,
    sandbox_image: str,
) -> None:
    vault, workspace = setup
    relay.start()
    # the daemon hangs (connections accepted, never answered): each API call has 30 s
    once(fake_llm, relay.freeze, tool_call("run_command", {"command": "ls"}))
    run = vb_session(vault, workspace, relay.docker_host, "list my files please\n/quit\n")
    assert run.code == 0, run.stderr
    [notice] = run.notices
    assert f"Docker at {relay.path} accepts connections but did not answer" in notice
    assert "restart the daemon if it hangs" in notice
    assert "ended (Docker stopped)" in run.stderr
    session = _session(vault)
    assert commits(vault)[0].startswith(f"vb session {session}: ")
    the_next_start_removes_the_container(vault, workspace, relay)


def test_docker_stopping_between_turns_is_said_at_the_end(
    setup: tuple[Path, Path],
    fake_llm: FakeLLMServer,
    relay: DockerRelay,
    docker_engine: Any,
    sandbox_image: str,
) -> None:
    vault, workspace = setup
    before = commits(vault)
    relay.start()
    # the turn needs no sandbox; Docker stops while it runs, and the person then quits
    once(fake_llm, lambda: docker_stops(vault, relay, False), completion("Noted."))
    run = vb_session(vault, workspace, relay.docker_host, "remember the survey\n/quit\n")
    assert run.code == 0, run.stderr
    assert "Noted." in run.stdout and "ended (quit)" in run.stderr
    [notice] = run.notices  # the container could not be removed: Docker is gone
    assert "lost contact with Docker while removing the sandbox container" in notice
    assert f"Docker is not running (no socket at {relay.path})" in notice
    assert START_HINT in notice
    session = _session(vault)
    kinds = [r.get("type") for r in records_of(vault, session)]
    assert kinds[0] == "user" and "assistant" in kinds and "flush" in kinds
    after = commits(vault)
    assert len(after) == len(before) + 1 and after[0].startswith(f"vb session {session}: ")
    the_next_start_removes_the_container(vault, workspace, relay)


@pytest.mark.parametrize("engine", ["missing", "refusing", "hung"])
def test_docker_not_answering_at_the_start_is_one_true_line(
    setup: tuple[Path, Path], fake_llm: FakeLLMServer, relay: DockerRelay, engine: str
) -> None:
    vault, workspace = setup
    before = commits(vault)
    if engine == "refusing":  # a socket file nothing listens on: a daemon that crashed
        relay.start().stop(keep_file=True)
    elif engine == "hung":
        relay.hang()
    run = vb_session(vault, workspace, relay.docker_host, "/quit\n")
    assert run.code == 1 and run.seconds < 30  # the hung daemon is given 10 s
    message, hint = run.stderr.strip().splitlines()
    expected = {
        "missing": (f"Docker is not running (no socket at {relay.path})", START_HINT),
        "refusing": (f"Docker is not running (nothing listens on {relay.path})", START_HINT),
        "hung": (
            f"Docker at {relay.path} accepts connections but did not answer (no answer in time)",
            "restart the daemon if it hangs",
        ),
    }[engine]
    assert expected[0] in message and expected[1] in hint
    assert commits(vault) == before and list((vault / "sessions").glob("session-*")) == []


def _session(vault: Path) -> str:
    [path] = (vault / "sessions").glob("session-*.jsonl")
    return path.stem
