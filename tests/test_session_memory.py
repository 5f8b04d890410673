"""What `vb session` is for: an agent that remembers across sessions, every change to memory a
git commit. Two real `vb session` processes on one vault (real Docker engine and sandbox); the
local fake Chat Completions server plays the model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import git, run_vb
from fake_llm_server import FakeLLMServer
from fake_llm_server import fake_llm as fake_llm  # the fixture
from test_session import commits
from test_session import setup as setup  # the fixture

pytestmark = pytest.mark.docker


def test_what_one_session_learns_the_next_one_knows_and_git_shows_it(
    setup: tuple[Path, Path], fake_llm: FakeLLMServer, docker_engine: Any, sandbox_image: str
) -> None:
    vault, workspace = setup
    session = ["--vault", str(vault), "session", "--workspace", str(workspace)]
    fake_llm.reply_text("Noted.")
    first = run_vb(*session, input="Remember that the quokka survey moves to April next year.\n")
    assert first.exit_code == 0, first.stderr
    learned = commits(vault)[0]
    assert learned.startswith("vb session ")
    changed = git("show", "--name-only", "--format=", "HEAD", cwd=vault).split()
    assert any(p.startswith(("entities/", "episodes/")) for p in changed), changed
    assert "April" in git("show", "HEAD", cwd=vault)  # the memory itself, in the commit

    fake_llm.reply_text("In April next year.")
    start = len(fake_llm.requests)
    second = run_vb(*session, input="When is the quokka survey?\n")
    assert second.exit_code == 0, second.stderr
    asked = json.dumps(fake_llm.requests[start].body["messages"])  # its first model call
    assert "April" in asked  # the second session's model saw what the first one learned
    assert "In April next year." in second.stdout
