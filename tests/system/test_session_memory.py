"""What a person sees of `vb session`: an agent that remembers across sessions, every change to
memory a git commit, and answers that stream in as the model writes them. Real `vb session`
processes on one vault (real Docker engine and sandbox); the local fake Chat Completions server
plays the model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from test_session import commits
from test_session import setup as setup  # the fixture

from conftest import git, run_vb
from fake_llm_server import FakeLLMServer
from fake_llm_server import fake_llm as fake_llm  # the fixture

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


def test_the_answer_streams_in_as_the_model_writes_it(
    setup: tuple[Path, Path], fake_llm: FakeLLMServer, docker_engine: Any, sandbox_image: str
) -> None:
    vault, workspace = setup
    pieces = ["The quokka survey ", "runs on Rottnest Island ", "every March."]
    fake_llm.reply_stream(pieces, chunk_delay=0.6)
    proc = subprocess.Popen(
        [sys.executable, "-m", "vault_brain", "--vault", str(vault), "session",
         "--workspace", str(workspace)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={k: v for k, v in os.environ.items() if k != "VB_VAULT"},
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b"When is the quokka survey?\n")
    proc.stdin.flush()
    seen, arrivals = b"", []
    while b"every March." not in seen:
        byte = proc.stdout.read(1)
        assert byte, proc.communicate()[1]
        seen += byte
        arrivals.append((time.monotonic(), seen))
    first = next(t for t, text in arrivals if b"The quokka survey" in text)
    assert arrivals[-1][0] - first > 0.8  # shown while the model was still writing
    out, err = proc.communicate(b"/quit\n", timeout=120)
    assert proc.returncode == 0, err
    assert seen.count(b"every March.") == 1 and b"every March." not in out  # shown once
