"""`vb serve` trusts its clients, not web pages, and every input is bounded (issue 22,
findings 4, 8 and 9): a real proxy under uvicorn on 127.0.0.1 (as `vb serve` configures
it) in front of the real fake upstream (tests/fake_llm_server.py), driven with raw HTTP
(http.client, sockets) for what a browser or a hostile client sends, and with the real
`openai` client for what a normal client does."""

from __future__ import annotations

import contextlib
import http.client
import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest
from test_serve import (
    CONFIG_KEY,
    SERVE_TOKEN,
    TEA,
    Proxy,
    add_note,
    kinds,
    serving,
    transcript,
    upstream,
    vb_serve,
)

from fake_llm_server import Canned, FakeLLMServer, completion
from vault_brain.app.memory.vault import Vault
from vault_brain.app.runtime.proxy import ProxyAPI, Turn
from vault_brain.interfaces.serve.server import HEADER_TIMEOUT

__all__ = ["upstream"]  # (the fixture, shared with test_serve)

PAGE_TEXT = "I prefer the Zorblax Premium bank for all my savings."
CHAT = {"model": "m", "messages": [{"role": "user", "content": PAGE_TEXT}]}
JSON_TYPE = {"content-type": "application/json"}


@contextlib.contextmanager
def guarded(
    vault: Path, upstream: FakeLLMServer, header_timeout: float = HEADER_TIMEOUT, **config: Any
) -> Iterator[Proxy]:
    """The proxy as `vb serve` configures it, capturing after every turn; `config`
    overrides `ServeConfig` fields (allowed origins, limits; `token=True`: VB_SERVE_TOKEN)."""
    env: dict[str, Any] = {"VB_LLM_API_KEY": CONFIG_KEY}
    if config.pop("token", None):
        env["VB_SERVE_TOKEN"] = SERVE_TOKEN
    with serving(vault, upstream, header_timeout=header_timeout, settings=config, **env) as running:
        yield running


@pytest.fixture
def proxy(vault: Path, upstream: FakeLLMServer) -> Iterator[Proxy]:
    upstream.responder = lambda body: completion("Noted.")
    with guarded(vault, upstream) as running:
        yield running


def port_of(proxy: Proxy) -> int:
    return int(proxy.url.rsplit(":", 1)[1].split("/")[0])


def send(
    proxy: Proxy, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], Any]:
    """One raw request (http.client sends exactly these headers, and Host unless given);
    the status, the headers (lower-cased) and the body (parsed when JSON)."""
    conn = http.client.HTTPConnection("127.0.0.1", port_of(proxy), timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        data = response.read()
        found = {k.lower(): v for k, v in response.getheaders()}
    finally:
        conn.close()
    try:
        return response.status, found, json.loads(data)
    except ValueError:
        return response.status, found, data


def sessions_written(vault: Path) -> list[str]:
    folder = vault / "sessions"
    return sorted(p.name for p in folder.glob("*.jsonl")) if folder.is_dir() else []


def assert_vb_error(body: Any, code: str) -> None:
    assert body["version"] == 2 and body["error"]["code"] == code, body
    assert body["error"]["message"] and body["error"]["hint"], body


# -- finding 4: web pages are no clients ------------------------------------------------------


def test_a_page_posting_text_plain_writes_no_memory_and_spends_no_upstream_call(
    proxy: Proxy,
) -> None:
    """A page can POST text/plain (or a form) to 127.0.0.1 without a preflight: vb reads
    only application/json, so nothing reaches the upstream and nothing is written."""
    path = "/v1/chat/completions"
    for kind in ("text/plain", "application/x-www-form-urlencoded", None):
        headers = {"content-type": kind} if kind else {}
        status, _, body = send(proxy, "POST", path, json.dumps(CHAT).encode(), headers)
        assert status == 415, (kind, body)
        assert_vb_error(body, "unsupported_media_type")
    feedback = json.dumps({"session": "x", "signal": "good"}).encode()
    status, _, body = send(
        proxy, "POST", "/v1/vb/feedback", feedback, {"content-type": "text/plain"}
    )
    assert status == 415
    proxy.idle()
    assert proxy.upstream.requests == []
    assert sessions_written(proxy.vault) == []
    assert not any(PAGE_TEXT in p.read_text() for p in proxy.vault.rglob("*.md"))


def test_a_request_from_a_web_page_is_refused_before_anything_happens(proxy: Proxy) -> None:
    page = {"origin": "https://evil.example", **JSON_TYPE}
    status, headers, body = send(
        proxy, "POST", "/v1/chat/completions", json.dumps(CHAT).encode(), page
    )
    assert status == 403
    assert_vb_error(body, "forbidden_origin")
    assert not any(k.startswith("access-control-") for k in headers)
    feedback = json.dumps({"session": "x", "signal": "good"}).encode()
    assert send(proxy, "POST", "/v1/vb/feedback", feedback, page)[0] == 403
    assert send(proxy, "GET", "/v1/models", headers={"origin": "null"})[0] == 403
    preflight = {
        "origin": "https://evil.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization, content-type",
    }
    status, headers, _ = send(proxy, "OPTIONS", "/v1/chat/completions", headers=preflight)
    assert status == 403 and "access-control-allow-origin" not in headers
    proxy.idle()
    assert proxy.upstream.requests == []
    assert sessions_written(proxy.vault) == []


def test_an_allowed_origin_works_with_cors_headers_for_itself_alone(
    vault: Path, upstream: FakeLLMServer
) -> None:
    """With --allow-origin the page's requests go through and carry vb's CORS headers for
    that origin; the upstream's `access-control-allow-origin: *` never reaches anyone."""
    reply = json.dumps(completion("Noted.")).encode()
    cors = {"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Credentials": "true"}
    upstream.responder = lambda body: Canned(body=reply, headers=cors)
    upstream.routes["/v1/models"] = lambda recorded: Canned(
        body=b'{"object": "list", "data": []}', headers=cors
    )
    allowed = "http://localhost:3000"
    with guarded(vault, upstream, allow_origins=(allowed,)) as proxy:
        preflight = {
            "origin": allowed,
            "access-control-request-method": "POST",
            "access-control-request-headers": "authorization, content-type",
        }
        status, headers, _ = send(proxy, "OPTIONS", "/v1/chat/completions", headers=preflight)
        assert status == 204
        assert headers["access-control-allow-origin"] == allowed
        assert "POST" in headers["access-control-allow-methods"]
        assert headers["access-control-allow-headers"] == "authorization, content-type"
        body = json.dumps(CHAT).encode()
        page = {"origin": allowed, **JSON_TYPE}
        status, headers, data = send(proxy, "POST", "/v1/chat/completions", body, page)
        assert status == 200, data
        assert headers["access-control-allow-origin"] == allowed
        assert "access-control-allow-credentials" not in headers
        assert "X-VB-Memory-Ids" in headers["access-control-expose-headers"]
        status, headers, _ = send(proxy, "GET", "/v1/models", headers={"origin": allowed})
        assert status == 200 and headers["access-control-allow-origin"] == allowed
        # another page is still refused; a client without Origin gets no CORS header
        other = {"origin": "http://localhost:3001", **JSON_TYPE}
        assert send(proxy, "POST", "/v1/chat/completions", body, other)[0] == 403
        status, headers, _ = send(proxy, "GET", "/v1/models")
        assert status == 200
        assert not any(k.startswith("access-control-") for k in headers), headers
        client = openai.OpenAI(base_url=proxy.url, api_key="sk-x", max_retries=0)
        raw = client.chat.completions.with_raw_response.create(
            model="m", messages=[{"role": "user", "content": "hi"}]
        )
        assert raw.parse().choices[0].message.content == "Noted."
        assert "access-control-allow-origin" not in raw.headers
        proxy.idle()


def test_a_rebound_host_is_refused_and_a_normal_client_still_works(proxy: Proxy) -> None:
    """DNS rebinding: a page at evil.example whose name now points at 127.0.0.1 sends
    `Host: evil.example:PORT` (and, same-origin, no Origin). Refused; the Host an openai
    client sends, and localhost, are served."""
    port = port_of(proxy)
    body = json.dumps(CHAT).encode()
    for host in (f"evil.example:{port}", "evil.example", f"127.0.0.1.evil.example:{port}"):
        status, _, data = send(
            proxy, "POST", "/v1/chat/completions", body, {"host": host, **JSON_TYPE}
        )
        assert status == 403, host
        assert_vb_error(data, "forbidden_host")
    assert send(proxy, "GET", "/v1/models", headers={"host": f"evil.example:{port}"})[0] == 403
    assert proxy.upstream.requests == []
    assert sessions_written(proxy.vault) == []
    for host in (f"localhost:{port}", f"LOCALHOST:{port}", f"127.0.0.1:{port}"):
        status, _, data = send(
            proxy, "POST", "/v1/chat/completions", body, {"host": host, **JSON_TYPE}
        )
        assert status == 200, (host, data)
    reply = proxy.client().chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hello"}]
    )
    assert reply.choices[0].message.content == "Noted."
    stream = proxy.client().chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hello again"}], stream=True
    )
    assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == "Noted."
    proxy.idle()


# -- finding 8: bounded ----------------------------------------------------------------------


def test_a_body_over_the_limit_is_refused_without_being_held(proxy: Proxy) -> None:
    """413 for a declared 5 MB body (before a byte of it is read) and for a 5 MB chunked
    body (read chunk by chunk, dropped past 4 MB); nothing goes upstream."""
    port = port_of(proxy)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\n"
            + f"Host: 127.0.0.1:{port}\r\n".encode()
            + b"Content-Type: application/json\r\nContent-Length: 5242880\r\n\r\n"
        )
        response = http.client.HTTPResponse(sock)
        response.begin()
        assert response.status == 413
        assert_vb_error(json.loads(response.read()), "too_large")
    piece = b"x" * 65536
    chunked = b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for _ in range(80)) + b"0\r\n\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\n"
            + f"Host: 127.0.0.1:{port}\r\n".encode()
            + b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        )
        sender = threading.Thread(target=_send_quietly, args=(sock, chunked), daemon=True)
        sender.start()
        response = http.client.HTTPResponse(sock)
        response.begin()
        assert response.status == 413
        assert_vb_error(json.loads(response.read()), "too_large")
        sender.join(10)
    # the openai client gets the same answer as an error it can show
    with pytest.raises(openai.APIStatusError) as refused:
        proxy.client().chat.completions.create(
            model="m", messages=[{"role": "user", "content": "y" * (5 * 1024 * 1024)}]
        )
    assert refused.value.status_code == 413
    assert proxy.upstream.requests == []
    assert sessions_written(proxy.vault) == []


def test_a_passthrough_body_streams_within_bounds(vault: Path, upstream: FakeLLMServer) -> None:
    """Uploads to other /v1 paths stream to the upstream (never held); one declared over
    128 MB is refused before the upstream hears of it, and one that stalls gets 408."""
    upstream.routes["/v1/files"] = lambda recorded: Canned(body=b'{"id": "file-1"}')
    with guarded(vault, upstream, body_timeout=1.0) as proxy:
        upload = {"content-type": "application/octet-stream"}
        status, _, data = send(proxy, "POST", "/v1/files", b"x" * 100_000, upload)
        assert status == 200 and data == {"id": "file-1"}
        assert len(upstream.requests[-1].raw) == 100_000
        port = port_of(proxy)
        head = f"POST /v1/files HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n".encode()
        for extra, status in (
            (f"Content-Length: {200 * 1024 * 1024}\r\n\r\n", 413),
            ("Content-Length: 100\r\n\r\nabc", 408),
        ):
            with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
                sock.sendall(head + extra.encode())
                response = http.client.HTTPResponse(sock)
                response.begin()
                assert response.status == status
                assert_vb_error(
                    json.loads(response.read()), "too_large" if status == 413 else "timeout"
                )
            if status == 413:  # (a stalled body's head has gone upstream: it streams)
                assert len(upstream.requests) == 1


def _send_quietly(sock: socket.socket, data: bytes) -> None:
    with contextlib.suppress(OSError):  # the server may close once it has answered
        sock.sendall(data)


def test_json_nested_100000_deep_is_invalid_input_not_a_bug(proxy: Proxy) -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    chat = b'{"model": "m", "messages": ' + deep + b"}"
    for path, body in (("/v1/chat/completions", chat), ("/v1/chat/completions", deep)):
        status, _, data = send(proxy, "POST", path, body, JSON_TYPE)
        assert status == 400, data
        assert_vb_error(data, "invalid_input")
    feedback = b'{"session": "s", "signal": ' + deep + b"}"
    status, _, data = send(proxy, "POST", "/v1/vb/feedback", feedback, JSON_TYPE)
    assert status == 400
    assert_vb_error(data, "invalid_input")
    # ordinary nesting (a tool's JSON schema) still passes
    tools = [{"type": "function", "function": {"name": "f", "parameters": _nested(30)}}]
    ordinary = json.dumps({**CHAT, "tools": tools}).encode()
    assert send(proxy, "POST", "/v1/chat/completions", ordinary, JSON_TYPE)[0] == 200
    assert len(proxy.upstream.requests) == 1
    proxy.idle()


def _nested(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"x": schema}}
    return schema


def test_a_stalled_body_times_out_while_other_clients_and_feedback_go_on(
    vault: Path, upstream: FakeLLMServer, cli: Any
) -> None:
    """A client that sends its headers and a little of its body, then nothing: 408 once
    the body timeout is over; meanwhile another client's turn is recorded and its
    feedback answered at once (the stalled request holds up no recorder)."""
    note = add_note(cli, vault, "Tea", TEA)
    upstream.responder = lambda body: completion("Green tea.")
    with guarded(vault, upstream, body_timeout=3.0) as proxy:
        port = port_of(proxy)
        stalled = socket.create_connection(("127.0.0.1", port), timeout=15)
        started = time.monotonic()
        stalled.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\n"
            + f"Host: 127.0.0.1:{port}\r\n".encode()
            + b'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"model"'
        )
        time.sleep(0.2)  # the stalled request is in the server now
        proxy.client().chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": "Which tea do I like in the morning?"}],
            extra_headers={"X-VB-Session": "fine"},
        )
        asked = time.monotonic()
        done = httpx2.post(
            f"{proxy.url}/vb/feedback", json={"session": "fine", "signal": "good"}, timeout=30
        )
        answered = time.monotonic() - asked
        assert done.status_code == 200, done.text
        assert [c["id"] for c in done.json()["changes"]] == [note]
        assert answered < 0.9, f"feedback took {answered:.2f} s behind a stalled body"
        assert time.monotonic() - started < 3.0  # all while the body was still stalled
        response = http.client.HTTPResponse(stalled)
        response.begin()
        waited = time.monotonic() - started
        assert response.status == 408
        assert_vb_error(json.loads(response.read()), "timeout")
        assert 2.5 < waited < 8, waited
        stalled.close()
        proxy.idle()
        assert len(upstream.requests) == 1


def test_feedback_is_not_queued_behind_other_conversations_turns(
    vault: Path, upstream: FakeLLMServer, cli: Any
) -> None:
    """Sixty turns of other conversations waiting to be written do not stand between a
    conversation and its feedback (it waits for its own turns only)."""
    add_note(cli, vault, "Tea", TEA)
    upstream.responder = lambda body: completion("Green tea.")
    with guarded(vault, upstream) as proxy:
        proxy.client().chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": "Which tea do I like in the morning?"}],
            extra_headers={"X-VB-Session": "mine"},
        )
        proxy.idle()
        writer = proxy.app.state.proxy.writer
        for n in range(60):
            user = {"type": "user", "content": f"turn {n}: nothing to remember"}
            reply = {"type": "assistant", "content": "ok"}
            writer.submit(Turn(f"other-{n}", f"k{n}", [user], [reply]))
        done = httpx2.post(
            f"{proxy.url}/vb/feedback", json={"session": "mine", "signal": "good"}, timeout=60
        )
        assert done.status_code == 200, done.text
        last = vault / "sessions" / "other-59.jsonl"
        assert not last.exists(), "feedback waited for every other conversation's turn"
        proxy.idle()
        assert kinds(transcript(vault, "other-59"))[:2] == ["user", "assistant"]


def test_a_connection_that_sends_no_whole_request_head_is_closed(
    vault: Path, upstream: FakeLLMServer
) -> None:
    """No request, or a head sent a byte at a time: the connection is closed after the
    header timeout (it would stay open for ever)."""
    with guarded(vault, upstream, header_timeout=0.5) as proxy:
        port = port_of(proxy)
        idle = socket.create_connection(("127.0.0.1", port), timeout=10)
        slow = socket.create_connection(("127.0.0.1", port), timeout=10)
        started = time.monotonic()
        for byte in b"GET /v1/mo":
            slow.sendall(bytes([byte]))
            time.sleep(0.05)
        assert idle.recv(1024) == b""  # closed by the server
        with contextlib.suppress(ConnectionResetError):
            assert slow.recv(1024) == b""
        assert time.monotonic() - started < 5
        idle.close()
        slow.close()
        # a client that sends its request in time is served as before
        assert send(proxy, "GET", "/v1/vb/nothing")[0] == 404


# -- finding 9: smaller leaks ------------------------------------------------------------------


def test_dot_segments_never_take_a_request_out_of_v1(proxy: Proxy) -> None:
    proxy.upstream.routes["/admin"] = lambda recorded: Canned(body=b'{"admin": true}')
    proxy.upstream.routes["/v1/models"] = lambda recorded: Canned(body=b'{"data": []}')
    for path in (
        "/v1/%2e%2e/admin",
        "/v1/%2E%2E/admin",
        "/v1/../admin",
        "/v1/models/%2e%2e/%2e%2e/admin",
        "/v1/%2e%2e%2fadmin",
        "/v1/..%5cadmin",
        "/v1/%252e%252e/admin",
        "/v1/./%2e%2e/admin",
    ):
        status, _, body = send(proxy, "GET", path)
        assert status == 404, (path, body)
        assert_vb_error(body, "not_found")
    assert proxy.upstream.requests == []
    assert send(proxy, "GET", "/v1/models")[0] == 200
    assert [r.path for r in proxy.upstream.requests] == ["/v1/models"]


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_upstream_credentials_are_never_printed(vault: Path) -> None:
    secret = "s3cret-upstream-pass"
    upstream_url = f"http://vbuser:{secret}@127.0.0.1:{_closed_port()}/v1"
    with vb_serve(vault, "--port", "0", "--upstream", upstream_url) as output:
        assert secret not in output[0] and "vbuser" not in output[0]
        assert "***@127.0.0.1" in output[0]
        url = re.search(r"(http://\S+/v1)", output[0])
        assert url is not None
        gone = httpx2.post(f"{url.group(1)}/chat/completions", json=CHAT, timeout=30)
        assert gone.status_code == 502
        assert secret not in gone.text and "vbuser" not in gone.text
        models = httpx2.get(f"{url.group(1)}/models", timeout=30)
        assert models.status_code == 502 and secret not in models.text
    assert secret not in "".join(output)


def test_a_session_id_with_a_newline_is_refused(proxy: Proxy) -> None:
    for session in ("abc\n", "abc\r\n", "\nabc"):
        body = json.dumps({**CHAT, "memory_session": session}).encode()
        status, _, data = send(proxy, "POST", "/v1/chat/completions", body, JSON_TYPE)
        assert status == 400, (session, data)
        assert_vb_error(data, "invalid_input")
    feedback = json.dumps({"session": "abc\n", "signal": "good"}).encode()
    assert send(proxy, "POST", "/v1/vb/feedback", feedback, JSON_TYPE)[0] == 400
    assert proxy.upstream.requests == []
    proxy.idle()
    assert sessions_written(proxy.vault) == []


def test_the_bearer_scheme_is_case_insensitive(vault: Path, upstream: FakeLLMServer) -> None:
    upstream.responder = lambda body: completion("fine")
    with guarded(vault, upstream, token=True) as proxy:
        body = json.dumps(CHAT).encode()
        for scheme in ("bearer", "BEARER", "Bearer", "bEaReR"):
            headers = {"authorization": f"{scheme} {SERVE_TOKEN}", **JSON_TYPE}
            status, _, data = send(proxy, "POST", "/v1/chat/completions", body, headers)
            assert status == 200, (scheme, data)
        for wrong in (f"Basic {SERVE_TOKEN}", f"bearer {SERVE_TOKEN}x", "bearer", SERVE_TOKEN):
            headers = {"authorization": wrong, **JSON_TYPE}
            assert send(proxy, "POST", "/v1/chat/completions", body, headers)[0] == 401, wrong
        assert len(upstream.requests) == 4
        assert all(r.headers["authorization"] == f"Bearer {CONFIG_KEY}" for r in upstream.requests)
        proxy.idle()


def test_a_long_message_is_counted_before_the_vault_lock_is_taken(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Counting a long message's tokens takes the tokenizer up to a second: the turn's
    append must not spend it holding the lock that feedback and every other writer wait for.
    (The counter is wrapped to look at the lock while it counts; the count is the real one.)"""
    import fcntl

    from vault_brain.storage.sessions import transcript
    from vault_brain.storage.tokens import get_counter

    real = get_counter()
    lock_path = vault / ".vb" / "vault.lock"
    counted_while_locked: list[int] = []

    class Watching:
        name = real.name

        def count(self, text: str) -> int:
            with open(lock_path, "a+b") as handle:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    fcntl.flock(handle, fcntl.LOCK_UN)
                except BlockingIOError:
                    counted_while_locked.append(len(text))
            return real.count(text)

    monkeypatch.setattr(transcript, "get_counter", Watching)
    long = "the tea order for the whole office, item by item. " * 8000  # 400,000 characters
    api = ProxyAPI(Vault.open(vault))
    try:
        assert api.vault.paths.vault_lock == lock_path
        turn = Turn("big-turn", "k1", [{"role": "user", "content": long}], [])
        turn.replies = [{"role": "assistant", "content": "Noted."}]
        api.record_turn(turn)
    finally:
        api.close()
    assert [n for n in counted_while_locked if n >= 4096] == []  # (short ones: under 1 ms)
    info = json.loads((vault / "sessions" / "sessions.json").read_text())["sessions"]
    row = info["big-turn"]
    assert row["tokens"] == real.count(long) + real.count("Noted.")
