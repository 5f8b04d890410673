"""A real HTTP server on 127.0.0.1 that speaks the Chat Completions protocol, for tests.

Script it per test with a queue of canned replies and faults; it records every request so a test
can assert what was sent. A scripted completion answers a request that asked for `stream: true`
as an event stream, as a real server would. A reply can be an event stream (`reply_stream`:
Chat Completions chunks, written one by one with a pause between them), and other paths can be
given replies of their own (`routes`, for GET or POST: `/v1/models`, `/v1/embeddings`, ...).
Use the `fake_llm` fixture (import it into the test module): it starts the server, points
`VB_LLM_*` at it, and stops it at teardown.

    from fake_llm_server import FakeLLMServer, fake_llm  # noqa: F401  (fixture)

    def test_x(fake_llm: FakeLLMServer) -> None:
        fake_llm.reply_text("hello")
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

MODEL = "test-model"
API_KEY = "test-key"
MAX_REQUESTS = 200  # a runaway retry loop fails the test instead of spinning


class _Server(ThreadingHTTPServer):
    # socketserver's default backlog is 5: twenty conversations through the proxy at once
    # overflowed it on a loaded machine and a connection was dropped (a 502 from the proxy)
    request_queue_size = 128


@dataclass
class Canned:
    """One scripted HTTP response."""

    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    chunks: list[bytes] | None = None
    """Written one by one (after `body`), `chunk_delay` apart, then the connection closes."""
    chunk_delay: float = 0.0


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    raw: bytes
    body: Any  # the parsed JSON body, or None when it was not JSON


def completion(
    content: str | None = None,
    *,
    tool_calls: list[dict[str, Any]] | None = None,
    finish_reason: str | None = None,
    model: str = MODEL,
    usage: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """A Chat Completions response body in the OpenAI wire format."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "id": f"chatcmpl-fake-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": finish_reason or ("tool_calls" if tool_calls else "stop"),
                "logprobs": None,
            }
        ],
        "usage": dict(usage or {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}),
    }


def stream_chunks(
    pieces: list[str],
    *,
    tool_calls: list[dict[str, Any]] | None = None,
    model: str = MODEL,
) -> list[bytes]:
    """A Chat Completions event stream: a role chunk, one chunk per text piece, one per tool
    call (the OpenAI delta format), a finish chunk, then `data: [DONE]`."""
    created = int(time.time())

    def event(delta: dict[str, Any], finish: str | None = None) -> bytes:
        chunk = {
            "id": "chatcmpl-fake-stream",
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return f"data: {json.dumps(chunk)}\n\n".encode()

    out = [event({"role": "assistant", "content": ""})]
    out += [event({"content": piece}) for piece in pieces]
    for index, call in enumerate(tool_calls or []):
        out.append(event({"tool_calls": [{"index": index, **call}]}))
    out.append(event({}, "tool_calls" if tool_calls else "stop"))
    out.append(b"data: [DONE]\n\n")
    return out


class FakeLLMServer:
    """The server, its reply queue and the requests it received."""

    def __init__(self) -> None:
        self._queue: deque[Canned] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self.requests: list[Recorded] = []
        # answers requests when the queue is empty: parsed request body -> completion body
        self.responder: Callable[[Any], dict[str, Any] | Canned] | None = None
        # replies for other paths than /v1/chat/completions, by path (without the query)
        self.routes: dict[str, Callable[[Recorded], Canned]] = {}
        self.max_requests = MAX_REQUESTS
        self._httpd = _Server(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    # -- life cycle --------------------------------------------------------------------

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeLLMServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes any reply that is sleeping on a scripted delay
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    # -- scripting ---------------------------------------------------------------------

    def enqueue(self, canned: Canned, times: int = 1) -> None:
        with self._lock:
            self._queue.extend(canned for _ in range(times))

    def reply(self, body: Mapping[str, Any], *, delay: float = 0.0) -> None:
        self.enqueue(Canned(body=json.dumps(body).encode(), delay=delay))

    def reply_text(self, text: str, **kwargs: Any) -> None:
        self.reply(completion(text, **kwargs))

    def reply_json(self, obj: Any) -> None:
        """A reply whose message content is `obj` serialized as JSON."""
        self.reply(completion(json.dumps(obj)))

    def reply_tool_calls(self, *calls: tuple[str, Any], text: str | None = None) -> None:
        """Tool calls as (name, arguments); a str argument is sent verbatim (may be invalid)."""
        tool_calls = [
            {
                "id": f"call_{index}",
                "type": "function",
                "function": {
                    "name": name,
                    "arguments": args if isinstance(args, str) else json.dumps(args),
                },
            }
            for index, (name, args) in enumerate(calls)
        ]
        self.reply(completion(text, tool_calls=tool_calls))

    def fail(
        self,
        status: int,
        *,
        times: int = 1,
        retry_after: float | None = 0.001,
        message: str = "fake failure",
    ) -> None:
        """HTTP `status` with an OpenAI-style error body; Retry-After (and -ms) when given."""
        headers: dict[str, str] = {}
        if retry_after is not None:
            headers["Retry-After"] = str(int(retry_after))
            headers["retry-after-ms"] = str(max(1, round(retry_after * 1000)))
        error = {"error": {"message": message, "type": "server_error", "code": str(status)}}
        self.enqueue(Canned(status, json.dumps(error).encode(), headers=headers), times)

    def reply_stream(self, pieces: list[str], *, chunk_delay: float = 0.0, **kwargs: Any) -> None:
        """An event stream of `pieces` (see `stream_chunks`), `chunk_delay` seconds apart."""
        self.enqueue(streamed(pieces, chunk_delay=chunk_delay, **kwargs))

    def reply_raw(
        self, body: bytes, *, status: int = 200, content_type: str = "application/json"
    ) -> None:
        """Any bytes as the body: malformed JSON, HTML from a proxy, ..."""
        self.enqueue(Canned(status, body, content_type))

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    @property
    def bodies(self) -> list[Any]:
        return [r.body for r in self.requests]

    # -- serving -----------------------------------------------------------------------

    def _next(self, recorded: Recorded) -> Canned:
        with self._lock:
            self.requests.append(recorded)
            if len(self.requests) > self.max_requests:
                return _no_retry(400, "fake server: request limit reached")
            route = self.routes.get(recorded.path.split("?", 1)[0])
            if route is not None:
                return route(recorded)
            if recorded.path.rstrip("/") != "/v1/chat/completions":
                return _no_retry(404, f"fake server: no route {recorded.path}")
            if not self._queue and self.responder is not None:
                answer = self.responder(recorded.body)
                if isinstance(answer, Canned):
                    return answer
                return Canned(body=json.dumps(answer).encode())
            if not self._queue:
                return _no_retry(400, "fake server: no scripted reply left")
            return self._queue.popleft()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.do_POST()

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    parsed: Any = json.loads(raw) if raw else None
                except ValueError:
                    parsed = None
                headers = {k.lower(): v for k, v in self.headers.items()}
                recorded = Recorded(self.path, headers, raw, parsed)
                canned = server._next(recorded)
                if isinstance(parsed, dict) and parsed.get("stream"):
                    canned = as_stream(canned)
                if canned.delay and server._stopping.wait(canned.delay):
                    return
                try:
                    self.send_response(canned.status)
                    self.send_header("Content-Type", canned.content_type)
                    if canned.chunks is None:
                        self.send_header("Content-Length", str(len(canned.body)))
                    for name, value in canned.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(canned.body)
                    for chunk in canned.chunks or []:
                        self.wfile.flush()
                        if canned.chunk_delay and server._stopping.wait(canned.chunk_delay):
                            return
                        self.wfile.write(chunk)
                    if canned.chunks is not None:
                        self.wfile.flush()
                        self.close_connection = True  # the end of the stream is the close
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler


def streamed(pieces: list[str], *, chunk_delay: float = 0.0, **kwargs: Any) -> Canned:
    """A scripted event-stream reply (see `stream_chunks`)."""
    return Canned(
        content_type="text/event-stream",
        chunks=stream_chunks(pieces, **kwargs),
        chunk_delay=chunk_delay,
    )


def as_stream(canned: Canned) -> Canned:
    """A scripted completion (`reply`, `reply_text`, `reply_tool_calls`) sent the way a real
    server answers a request that asked for `stream: true`: as an event stream. Anything else
    (an error, raw bytes, a stream already) goes as scripted."""
    if canned.chunks is not None or canned.status != 200:
        return canned
    try:
        message = json.loads(canned.body)["choices"][0]["message"]
    except (ValueError, KeyError, IndexError, TypeError):
        return canned
    pieces = [message["content"]] if message.get("content") else []
    return Canned(
        content_type="text/event-stream",
        chunks=stream_chunks(pieces, tool_calls=message.get("tool_calls")),
        delay=canned.delay,
    )


def _no_retry(status: int, message: str) -> Canned:
    body = json.dumps({"error": {"message": message, "type": "fake_llm_server"}}).encode()
    return Canned(status, body, headers={"x-should-retry": "false"})


@pytest.fixture
def fake_llm(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeLLMServer]:
    """A running fake endpoint with `VB_LLM_*` pointing at it (retries fast, short timeout)."""
    for name in (
        "VB_CONFIG",
        "VB_LLM_TIMEOUT",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / ".config"))
    server = FakeLLMServer().start()
    monkeypatch.setenv("VB_LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("VB_LLM_MODEL", MODEL)
    monkeypatch.setenv("VB_LLM_API_KEY", API_KEY)
    monkeypatch.setenv("VB_LLM_MAX_RETRIES", "2")
    monkeypatch.setenv("VB_LLM_TIMEOUT", "10")
    try:
        yield server
    finally:
        server.stop()
