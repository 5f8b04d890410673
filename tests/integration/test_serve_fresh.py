"""`vb serve` never answers from a stale index: a note changed on disk (in place, by an
editor's atomic save, created in a new folder, deleted) is what the very next request
retrieves, with no wait in between. The proxy's reads do not walk the vault; a watcher
reports changes and each read first waits for it to have reported every earlier one.
And the work after the responses stays out of the requests' way: captures run in a
process of their own, access counters are written in batches, and neither loses
anything."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from test_serve import serving

from fake_llm_server import FakeLLMServer, completion
from vault_brain.storage.index.watch import VaultWatch

ROUNDS = 40
GUS = "entity-people-gus"


@pytest.fixture
def upstream() -> Iterator[FakeLLMServer]:
    server = FakeLLMServer().start()
    server.max_requests = 10**6
    server.responder = lambda body: completion("Noted.")
    try:
        yield server
    finally:
        server.stop()


def injected(client: httpx2.Client, url: str, question: str) -> list[str]:
    """The ids of the notes the proxy injects for `question` (its X-VB-Memory-Ids)."""
    body = {"model": "m", "messages": [{"role": "user", "content": question}]}
    response = client.post(f"{url}/chat/completions", json=body)
    response.raise_for_status()
    header = response.headers["x-vb-memory-ids"]
    return header.split(",") if header else []


def note_text(word: str) -> str:
    return f"---\ntitle: Gus\n---\nGus keeps a {word} in the garden shed.\n"


@pytest.fixture(params=["watched", "no watcher"])
def watcher(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """With the watcher, and where the system gives none (each read then reconciles)."""
    if request.param == "no watcher":

        def refused(self: VaultWatch) -> None:
            raise OSError(28, "inotify watch limit reached")

        monkeypatch.setattr(VaultWatch, "start", refused)
    return str(request.param)


def test_an_edit_is_seen_by_the_very_next_request(
    vault: Path, upstream: FakeLLMServer, watcher: str
) -> None:
    note = vault / "entities/people/gus.md"
    note.parent.mkdir(parents=True, exist_ok=True)
    note.write_text(note_text("wheelbarrow"), encoding="utf-8")
    with serving(vault, upstream) as proxy, httpx2.Client(timeout=30) as client:
        assert injected(client, proxy.url, "wheelbarrow") == ["entity-people-gus"]
        for n in range(ROUNDS):
            old, new = f"zorblax{n}", f"zorblax{n + 1}"
            if n % 2:  # an editor's atomic save
                tmp = note.with_name(f".{note.name}.tmp")
                tmp.write_text(note_text(new), encoding="utf-8")
                os.replace(tmp, note)
            else:  # written in place
                note.write_text(note_text(new), encoding="utf-8")
            assert injected(client, proxy.url, f"where is the {new}?") == ["entity-people-gus"]
            if n:  # (the earlier question itself may be captured into an episode: not gus)
                assert GUS not in injected(client, proxy.url, f"where is the {old}?")
        # a note in a folder that did not exist, then the folder gone
        folder = vault / "entities/projects/shed"
        folder.mkdir(parents=True)
        (folder / "plan.md").write_text("---\ntitle: Plan\n---\nA quokkafrost plan.\n")
        assert injected(client, proxy.url, "quokkafrost") == ["entity-projects-plan"]
        shutil.rmtree(folder)
        assert "entity-projects-plan" not in injected(client, proxy.url, "quokkafrost")
        note.unlink()
        assert GUS not in injected(client, proxy.url, f"where is the zorblax{ROUNDS}?")


def test_an_edit_during_a_write_of_the_proxys_own_is_seen_by_the_next_request(
    vault: Path, upstream: FakeLLMServer
) -> None:
    """A person edits a note while vb serve is writing that same note (its access
    counters): the edit was made before the next request, which sees it all the same."""
    note = vault / "entities/people/gus.md"
    note.parent.mkdir(parents=True, exist_ok=True)
    note.write_text(note_text("wheelbarrow"), encoding="utf-8")
    with serving(vault, upstream) as proxy, httpx2.Client(timeout=30) as client:
        assert injected(client, proxy.url, "wheelbarrow") == [GUS]
        keeper = proxy.app.state.proxy.keeper
        keeper.writing(["entities/people/gus.md"])  # (as a transaction about to commit)
        note.write_text(note_text("quokkafrost"), encoding="utf-8")
        assert injected(client, proxy.url, "where is the quokkafrost?") == [GUS]
        keeper.indexed(["entities/people/gus.md"], {})


def test_captures_in_their_own_process_are_indexed_and_seen(
    vault: Path, upstream: FakeLLMServer
) -> None:
    """The capture process writes the conversation's memories and summary; the server's
    next request retrieves what it wrote (indexed by the child, announced to the server)."""
    with serving(vault, upstream, capture_process=True) as proxy:
        client = httpx2.Client(timeout=60)
        ask = {"memory_session": "tea-1", "model": "m"}
        said = "I always drink jasmine tea with my breakfast."
        client.post(
            f"{proxy.url}/chat/completions",
            json={**ask, "messages": [{"role": "user", "content": said}]},
        ).raise_for_status()
        proxy.idle()
        capturer = proxy.app.state.proxy.writer._capturer
        assert capturer._proc is not None and capturer._proc.pid != os.getpid()
        records = [json.loads(line) for line in (vault / "sessions/tea-1.jsonl").open()]
        flushed = next(r for r in records if r["type"] == "flush")
        assert flushed["notes"] and any(r["type"] == "summary" for r in records)
        assert all((vault / n).is_file() for n in flushed["notes"])
        # the proxy's own writes reach its reads within OWN_LAG (a second), not at once
        deadline = time.monotonic() + 5
        while not injected(client, proxy.url, f"jasmine tea with breakfast {time.time()}?"):
            assert time.monotonic() < deadline, "the captured memory is never retrieved"
            time.sleep(0.1)
        assert proxy.app.state.proxy.keeper._in_flight == {}  # every write reported indexed


@pytest.mark.parametrize("in_child", [False, True], ids=["in-process", "capture-process"])
def test_access_counters_are_written_on_close(
    vault: Path, upstream: FakeLLMServer, in_child: bool
) -> None:
    """Counters wait to be written in one batch; closing writes them, none lost (by the
    capture process when there is one: the batch's index commit is then not the server's)."""
    note = vault / "entities/people/gus.md"
    note.parent.mkdir(parents=True, exist_ok=True)
    note.write_text(note_text("wheelbarrow"), encoding="utf-8")
    with (
        serving(vault, upstream, capture_process=in_child) as proxy,
        httpx2.Client(timeout=30) as client,
    ):
        writer = proxy.app.state.proxy.writer
        for n in range(3):  # three conversations (a repeated request is recorded once)
            question = f"where is the wheelbarrow ({n})?"
            assert injected(client, proxy.url, question) == ["entity-people-gus"]
        proxy.idle()
        if in_child:
            written: list[dict[str, Any]] = []

            def spy(accessed: dict[str, Any]) -> list[str]:
                written.append(accessed)
                return []

            writer._recorder.record_access = spy
    assert "access_count: 3" in note.read_text(encoding="utf-8")
    if in_child:  # (the server's own API was never asked to write them)
        assert written == [] and writer._capturer._proc is None
