"""Bounded everything (issue 22, finding 8): the gate checks a text's size before any scan, so
a huge memory is refused at once and a huge note is redacted without hanging; `vb mcp`
answers a message too deep or too long with an error and goes on, and exits promptly on
SIGTERM; every walker of project and vault files passes over a FIFO named like a note instead
of waiting on it. Each slow path runs in a subprocess with a timeout, so a regression fails
instead of hanging the suite."""

from __future__ import annotations

import concurrent.futures
import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import filelock
import pytest
from test_session_host import INITIALIZE

from test_mcp import McpServer, server_params
from vault_brain.storage.template import init_vault

PY = sys.executable


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    init_vault(root)
    return root


def vb(
    *args: str, timeout: float = 30, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """`vb` as a subprocess that must finish within `timeout` (a hang fails the test)."""
    env = {k: v for k, v in os.environ.items() if k != "VB_VAULT"}
    return subprocess.run(
        [PY, "-m", "vault_brain", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def within(seconds: float, code: str) -> str:
    """Run `code` in a fresh interpreter that must finish within `seconds`; its stdout."""
    done = subprocess.run(
        [PY, "-c", code], capture_output=True, text=True, timeout=seconds, check=True
    )
    return done.stdout


def call_within(srv: McpServer, seconds: float, name: str, args: dict[str, Any]) -> Any:
    future: concurrent.futures.Future[Any] = concurrent.futures.Future()

    async def job(client: Any) -> Any:
        return await client.call_tool(name, args)

    srv.loop.call_soon_threadsafe(srv.queue.put_nowait, (job, future))
    return future.result(timeout=seconds)


class RawMcp:
    """`vb mcp` spoken to in raw JSON-RPC lines over its stdin and stdout: what a client the
    SDK cannot be (it refuses to serialise a message nested this deep) sends."""

    def __init__(self, vault: Path, **env: str) -> None:
        self.proc = subprocess.Popen(
            [PY, "-m", "vault_brain", "--vault", str(vault), "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "VB_SESSION_ID": "bounds", **env},
        )
        self.send(INITIALIZE.rstrip(b"\n"))
        assert self.receive(60)["id"] == 1
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict[str, Any] | bytes) -> None:
        assert self.proc.stdin is not None
        line = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def receive(self, seconds: float) -> dict[str, Any]:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], seconds)
        assert ready, f"no answer within {seconds} s"
        answer: dict[str, Any] = json.loads(self.proc.stdout.readline())
        return answer

    def call(self, rid: int, name: str, args: dict[str, Any]) -> None:
        params = {"name": name, "arguments": args}
        self.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params})

    def terminated_within(self, seconds: float) -> bool:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(seconds)
            return True
        except subprocess.TimeoutExpired:
            return False

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


STORE = {"type": "entity", "category": "people", "name": "Huge"}


# -- the gate: size first --------------------------------------------------------------------
def test_a_20_mb_mcp_store_is_refused_at_once_and_nothing_is_written(
    vault: Path,
) -> None:
    srv = McpServer(server_params(vault, VB_SESSION_ID="bounds"))
    try:
        started = time.monotonic()
        result = call_within(srv, 20, "memory_store", {**STORE, "content": "zq " * 7_000_000})
        took = time.monotonic() - started
        text = str(getattr(result.content[0], "text", result.content[0]))
        # (5 s: 1.14 s once on a loaded CI machine; its speed is measured by the benchmark)
        assert result.is_error and took < 5.0, (took, text)
        assert "too much text for one memory (at most 16,000)" in text and "hint" in text
        assert "\n" not in text  # one line
        assert not (vault / "entities" / "people" / "huge.md").exists()
        assert not any(b"zq zq" in p.read_bytes() for p in vault.rglob("*") if p.is_file())
        # the server answers the next call
        ok = srv.ok("memory_store", {**STORE, "content": "Ada prefers tea."})
        assert ok["path"] == "entities/people/huge.md"
    finally:
        srv.close()


def test_a_persons_oversize_vb_add_is_refused_at_once_with_a_hint(vault: Path) -> None:
    started = time.monotonic()
    done = vb("--vault", str(vault), "add", "-n", "Big", "-c", "people", stdin="x" * 3_000_000)
    assert time.monotonic() - started < 10
    assert done.returncode != 0
    assert "3,000,000 characters is too much text for one memory" in done.stderr
    assert "vb extract" in done.stderr  # the hint
    assert not (vault / "entities" / "people" / "big.md").exists()


def test_the_gate_judges_and_redacts_huge_text_in_bounded_time() -> None:
    # 3 MB took 46 s to judge before the size check; one 16,000-character word 3.5 s (three
    # patterns were quadratic in a run of letters, '=' or '.'), and 'a.' * 16,000 5 s (a URL's
    # unbounded scheme)
    out = within(
        20,
        "import time\n"
        "from vault_brain.domain.gate import judge, prose_sentences, redact\n"
        "t = time.monotonic()\n"
        "huge = 'I like tea. My key is sk-proj-' + 'A1b2' * 12 + ' ok.\\n' + 'x' * 3_000_000\n"
        "assert judge(huge).reasons == ('wall',)\n"
        "assert prose_sentences(huge) == ([], {'wall': 1})\n"
        "safe, found = redact(huge)\n"
        "assert safe.startswith('I like tea. My key is [redacted: credential]'), safe[:80]\n"
        "assert safe.endswith('[redacted: text]') and 'xxxx' not in safe\n"
        "assert found['wall'] == 1 and found['secret'] == 1\n"
        "for unit in ('x', '=', 'a.', '`', 'x   '):\n"
        "    judge(unit * 16_000); redact(unit * 16_000)\n"
        "print(time.monotonic() - t)\n",
    )
    assert float(out) < 5


def test_a_huge_hand_written_note_is_retrieved_redacted_without_hanging(vault: Path) -> None:
    note = vault / "entities" / "people" / "diary.md"
    note.parent.mkdir(parents=True, exist_ok=True)
    body = "My sister lives in Ghent.\n" + "Today was long and quiet again.\n" * 100_000
    note.write_text(f"---\nid: diary\ntype: entity\ntitle: Diary\n---\n{body}", encoding="utf-8")
    srv = McpServer(server_params(vault, VB_SESSION_ID="bounds"))
    try:
        started = time.monotonic()
        result = call_within(srv, 20, "memory_retrieve", {"id": "entities/people/diary.md"})
        assert not result.is_error, result.content
        shown = result.structured_content["content"]
        assert time.monotonic() - started < 10
        assert shown.startswith("My sister lives in Ghent.")
        assert shown.endswith("[redacted: text]") and len(shown) < 110_000
    finally:
        srv.close()


# -- vb mcp: deep and long messages, SIGTERM ---------------------------------------------------
def test_a_message_nested_100000_deep_gets_an_error_and_the_server_answers_the_next(
    vault: Path,
) -> None:
    raw = RawMcp(vault)
    try:
        deep = b"[" * 100_000 + b"]" * 100_000
        raw.send(
            b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"memory_search",'
            b'"arguments":{"query":' + deep + b"}}}"
        )
        answer = raw.receive(10)
        assert answer["id"] == 7
        assert "nested deeper than 64 levels" in answer["error"]["message"]
        # the id may come last, after the deep part
        raw.send(b'{"jsonrpc":"2.0","method":"tools/call","params":' + deep + b',"id":"last"}')
        assert raw.receive(10)["id"] == "last"
        raw.call(8, "memory_store", {**STORE, "content": "Ada prefers tea."})
        answer = raw.receive(30)
        assert answer["id"] == 8 and answer["result"]["isError"] is False
        assert raw.proc.poll() is None  # never crashed
    finally:
        raw.close()


def test_vb_mcp_exits_promptly_on_sigterm_during_a_3_mb_store(vault: Path) -> None:
    raw = RawMcp(vault)
    try:
        raw.call(2, "memory_store", {**STORE, "content": "x" * 3_000_000})
        time.sleep(0.3)
        assert raw.terminated_within(5)
        assert not (vault / "entities" / "people" / "huge.md").exists()
    finally:
        raw.close()


def test_vb_mcp_exits_promptly_on_sigterm_while_a_call_waits_for_the_vault_lock(
    vault: Path,
) -> None:
    raw = RawMcp(vault, VB_LOCK_TIMEOUT="60")
    raw.call(2, "credit_report", {})
    raw.receive(30)
    try:
        with filelock.FileLock(str(vault / ".vb" / "vault.lock")).acquire(timeout=5):
            raw.call(3, "memory_store", {**STORE, "content": "Ada prefers tea."})
            time.sleep(0.5)  # the call is running: waiting for the lock this test holds
            started = time.monotonic()
            assert raw.terminated_within(5)
            assert time.monotonic() - started < 5
    finally:
        raw.close()


# -- FIFOs named like notes and project files --------------------------------------------------
def test_vb_extract_skips_a_fifo_in_the_project_and_says_so(tmp_path: Path, vault: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "README.md").write_text("We decided to ship on Fridays.\n", encoding="utf-8")
    os.mkfifo(project / "p.md")
    done = vb("--vault", str(vault), "extract", str(project), "--project", "proj", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["skipped"] == ["p.md (not a regular file)"]
    assert out["changed"] == ["README.md"]
    # named on its own, too
    done = vb("--vault", str(vault), "extract", str(project / "p.md"), "--project", "proj")
    assert done.returncode == 0, done.stderr
    assert "p.md (not a regular file)" in done.stdout + done.stderr


def test_vb_index_and_search_pass_over_a_fifo_named_like_a_note(vault: Path) -> None:
    write = vb("--vault", str(vault), "add", "-n", "Tea", "-c", "people", "Ada prefers tea.")
    assert write.returncode == 0, write.stderr
    os.mkfifo(vault / "entities" / "x.md")
    done = vb("--vault", str(vault), "index", "--rebuild")
    assert done.returncode == 0, done.stderr
    found = vb("--vault", str(vault), "search", "tea", "--json")
    assert found.returncode == 0, found.stderr
    assert [r["title"] for r in json.loads(found.stdout)["results"]] == ["Tea"]
    done = vb("--vault", str(vault), "index")
    assert done.returncode == 0, done.stderr


def test_too_many_tags_get_a_clear_error_and_the_server_goes_on(vault: Path) -> None:
    srv = McpServer(server_params(vault, VB_SESSION_ID="bounds"))
    try:
        tags = [f"t{n}" for n in range(100_000)]
        result = call_within(srv, 20, "memory_store", {**STORE, "content": "Tea.", "tags": tags})
        assert result.is_error
        assert "at most 50 items" in str(getattr(result.content[0], "text", result.content[0]))
        assert not (vault / "entities" / "people" / "huge.md").exists()
        assert srv.ok("credit_report", {"top_n": 1})["count"] == 0
    finally:
        srv.close()
