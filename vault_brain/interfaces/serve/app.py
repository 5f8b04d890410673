"""`vb serve`: an OpenAI-compatible proxy that gives any Chat Completions client the vault's
memory by changing its base URL.

- `POST /v1/chat/completions`: the memories for the conversation's latest user message
  (and its rolling summary) go upstream as one user-role message of quoted reference data
  just before that message (never in the system role);
  the reply comes back as the upstream sent it (an event stream chunk by chunk), with the
  injected note ids in `X-VB-Memory-Ids` (each percent-encoded, comma-separated). After
  the response, the turn is written to `sessions/<id>.jsonl` and captured (`app.runtime.turns`).
- `POST /v1/vb/feedback` `{"session", "signal"}`: `vb feedback` over HTTP.
- Any other `/v1/...`: passed to the upstream and back, streamed, untouched.

Before any of it, `boundary` decides who may ask and how much: no web page unless its
origin is allowed, the Host of the address served, JSON bodies of bounded size, time and
depth, paths that stay under /v1/.

A thin adapter: retrieval, recording and capture are `ProxyAPI` calls; this module speaks
HTTP. Errors that are vb's own are `{"version": 2, "error": {"code", "message", "hint"}}`;
the upstream's errors pass through as they are.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from urllib.parse import quote

import httpx2
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from vault_brain.app.memory.results import envelope, to_json
from vault_brain.app.runtime.capture_process import CaptureProcess, CaptureSpec
from vault_brain.app.runtime.index_keeper import IndexKeeper
from vault_brain.app.runtime.proxy import ProxyAPI, Recall, Turn
from vault_brain.app.runtime.turns import CAPTURE_IDLE, TurnWriter
from vault_brain.domain.errors import ForbiddenError, VaultBrainError
from vault_brain.domain.policy.grants import Grant
from vault_brain.domain.policy.scopes import Agent
from vault_brain.domain.sessions.records import conversation_id
from vault_brain.interfaces.serve.boundary import (
    BODY_TIMEOUT,
    MAX_BODY,
    PASSTHROUGH_MAX_BODY,
    Boundary,
    Refusal,
    bounded_stream,
    check_length,
    passthrough_path,
    read_json,
)
from vault_brain.interfaces.serve.callers import Callers
from vault_brain.interfaces.serve.chat import (
    StreamReader,
    completion_reply,
    input_records,
    reply_records,
    request_key,
    take_options,
    user_texts,
    with_memory,
)
from vault_brain.interfaces.serve.relay import (
    Relay,
    error_response,
    parse_json,
    returned_headers,
    unreachable,
    upstream_headers,
)
from vault_brain.storage.policy.token_store import TokenStore

CONNECT_TIMEOUT = 10.0
READ_TIMEOUT = 600.0  # a model may think for minutes before its first token
SUMMARY_CACHE = 4096
log = logging.getLogger("vault_brain.serve")
_STATUS = {"not_found": 404, "locked": 503, "no_vault": 503}


@dataclass(frozen=True)
class ServeConfig:
    upstream: str
    """The upstream's base URL, e.g. https://api.openai.com/v1."""
    api_key: str | None = field(default=None, repr=False)
    """vb's configured key, sent upstream unless the client brings its own."""
    token: str | None = field(default=None, repr=False)
    """VB_SERVE_TOKEN: the bearer token clients must present (never forwarded)."""
    capture_idle: float = CAPTURE_IDLE
    """Seconds a conversation is quiet before it is flushed into memories."""
    capture_in: CaptureSpec | None = None
    """Capture in a process of its own that opens this (else on a thread of the server)."""
    grant: Grant | None = None
    """What every request may do, whatever it brings (`--session-only`: the sandbox's
    session); None: what its token grants (`vb token`), all without tokens."""
    require_token: bool = False
    """Refuse requests without a token even when no token exists (not on loopback)."""
    allow_origins: tuple[str, ...] = ()
    """Web origins whose pages may use the proxy (`--allow-origin`); others are refused."""
    max_body: int = MAX_BODY
    """Bytes of a request body vb reads (Chat Completions, feedback)."""
    body_timeout: float = BODY_TIMEOUT
    """Seconds a body vb reads may take to arrive (each chunk, for a passthrough)."""


class Proxy:
    """One running proxy: its memory APIs, the writer behind the responses, the upstream
    client. `open_api` opens a fresh `ProxyAPI` on the vault (one per thread that uses it)."""

    def __init__(
        self,
        open_api: Callable[[], ProxyAPI],
        config: ServeConfig,
        on_ready: Callable[[], None] | None = None,
    ) -> None:
        self.config = config
        self.open_api = open_api
        self.on_ready = on_ready
        self.upstream = config.upstream.rstrip("/")
        self.reader = open_api()
        capturer: ProxyAPI | CaptureProcess = open_api()
        if config.capture_in is not None:
            capturer = CaptureProcess(config.capture_in)
            capturer.start()
        self.writer = TurnWriter(open_api(), capturer, self._summarized, idle=config.capture_idle)
        self.client: httpx2.AsyncClient | None = None
        self.keeper: IndexKeeper | None = None
        self._summaries: OrderedDict[str, str] = OrderedDict()
        self._summaries_lock = threading.Lock()
        tokens = TokenStore(self.reader.vault.paths)
        self.callers = Callers(tokens, config.token, config.grant, config.require_token)
        self._denied = self.callers.denied

    # -- life cycle --------------------------------------------------------------------------
    @contextlib.asynccontextmanager
    async def lifespan(self, app: Starlette) -> AsyncIterator[None]:
        keeper = self.keeper = await run_in_threadpool(IndexKeeper, self.open_api())
        self.writer.announce_writes(keeper.writing, keeper.indexed)  # (indexed as written)
        await run_in_threadpool(self.reader.warm_up)
        timeout = httpx2.Timeout(READ_TIMEOUT, connect=CONNECT_TIMEOUT)
        limits = httpx2.Limits(max_connections=256, max_keepalive_connections=64)
        async with httpx2.AsyncClient(timeout=timeout, limits=limits) as client:
            self.client = client
            if self.on_ready is not None:
                self.on_ready()
            try:
                yield
            finally:
                await run_in_threadpool(self.writer.close)
                await run_in_threadpool(keeper.close)
                self.reader.close()

    # -- summaries (kept in memory; read from the transcript once per conversation) --------
    def _summarized(self, session: str, summary: str) -> None:
        with self._summaries_lock:
            self._summaries[session] = summary
            self._summaries.move_to_end(session)
            while len(self._summaries) > SUMMARY_CACHE:
                self._summaries.popitem(last=False)

    def _summary(self, session: str) -> str:
        with self._summaries_lock:
            if session in self._summaries:
                return self._summaries[session]
        summary = self.reader.conversation_summary(session)
        self._summarized(session, summary)
        return summary

    def _recall(
        self,
        session: str,
        latest: str,
        k: int | None,
        scopes: list[str],
        agent: Agent | None = None,
        private: bool = True,
    ) -> Recall:
        """The memories for the latest user message and the conversation's summary, from
        the conversation's scopes and global (notes marked private only with `private`)."""
        summary = self._summary(session)
        assert self.keeper is not None
        self.keeper.settle()  # every change made to the files so far is in the index
        changes = self.keeper.changes
        query = f"{latest}\n{summary}" if summary else latest
        return self.reader.recall(query, k, scopes, changes, agent, private)

    # -- requests ------------------------------------------------------------------------------
    def _headers(
        self, request: Request, encoding: str | None, keep_length: bool = False
    ) -> dict[str, str]:
        return upstream_headers(
            request.headers,
            api_key=self.config.api_key,
            client_auth_is_token=self.callers.tokens_required(),
            encoding=encoding,
            keep_length=keep_length,
        )

    def _url(self, path: str, query: str) -> str:
        return f"{self.upstream}/{path}" + (f"?{query}" if query else "")

    async def chat(self, request: Request) -> Response:
        denied = self._denied(request)
        if denied is not None:
            return denied
        try:  # (a slow body holds up nothing: the work behind answers waits only after it)
            raw = await read_json(request, self.config.max_body, self.config.body_timeout)
        except Refusal as exc:
            return exc.response()
        answered = self.writer.answering()  # the work after earlier responses waits
        try:
            response = await self._chat(request, raw, answered)
        except BaseException:
            answered()
            raise
        if not isinstance(response, Relay | _ThenRecord):  # (those call it when sent)
            answered()
        return response

    async def _chat(self, request: Request, raw: bytes, answered: Callable[[], None]) -> Response:
        """`chat` for the body `raw`; `answered` is called once the answer is on its way
        (or failed)."""
        assert self.client is not None
        body = parse_json(raw)
        if not isinstance(body, dict):
            return error_response(
                400,
                "invalid_input",
                "the request body is not a JSON object",
                'send a Chat Completions request: {"model": "...", "messages": [...]}',
            )
        fields = len(body)
        try:
            options = take_options(body, request.headers)
        except VaultBrainError as exc:
            return error_response(400, exc.code, exc.message, exc.hint)
        grant: Grant = request.state.grant
        try:
            named = grant.bound_session(options.session)
            agent = None
            if grant.agent is not None:
                agent = await run_in_threadpool(self.reader.agent_named, grant.agent)
            scopes = self.reader.conversation_scopes(list(options.scopes), grant, agent)
            if named is not None and grant.scopes is not None and grant.session is None:
                await self._check_owned(grant, named, new=True)
        except VaultBrainError as exc:
            return error_response(403, exc.code, exc.message, exc.hint)
        users = user_texts(body)
        first = users[0] if users else ""
        session = named or conversation_id(first, party=grant.name, scopes=scopes)
        latest = users[-1] if users else ""
        recall = Recall(latest, [], "", 0)
        if latest.strip() and options.top_k != 0:
            recall = await run_in_threadpool(
                self._recall, session, latest, options.top_k, scopes, agent, grant.private
            )
        turn = Turn(
            session,
            request_key(session, body),
            input_records(body),
            [],
            recall.query,
            recall.memories,
            scopes,
            owner=grant.name if grant.scopes is not None and grant.session is None else None,
            writes=agent is None or agent.writable() != [],
        )
        with_memory(body, recall.message)
        changed = bool(recall.message) or len(body) != fields
        content = json.dumps(body, ensure_ascii=False).encode("utf-8") if changed else raw
        upstream_request = self.client.build_request(
            "POST",
            self._url("chat/completions", request.url.query),
            headers=self._headers(request, None),
            content=content,
        )
        try:
            response = await self.client.send(upstream_request, stream=True)
        except httpx2.HTTPError as exc:
            return unreachable(self.upstream, exc)
        ids = ",".join(quote(m.id, safe="") for m in recall.memories)
        extra = {"x-vb-memory-ids": ids, "x-vb-session": session}
        if not 200 <= response.status_code < 300:  # the upstream's error, as it is: no turn
            return Relay(response, extra, on_end=lambda completed: answered())
        if "text/event-stream" in response.headers.get("content-type", ""):
            reader = StreamReader()

            def chunk(data: bytes) -> None:
                answered()  # the first token is on its way
                reader.feed(data)

            def ended(completed: bool) -> None:
                answered()
                # a client may hang up as soon as it has the finish (before the upstream
                # closes): the reply is whole all the same
                turn.replies = reader.records(incomplete=not (completed or reader.done))
                self.writer.submit(turn, held=True)

            self.writer.hold()
            return Relay(response, extra, chunk, ended)
        try:
            data_raw = await response.aread()
        except httpx2.HTTPError as exc:
            return unreachable(self.upstream, exc)
        finally:
            await response.aclose()
        data = parse_json(data_raw)
        turn.replies = reply_records(*completion_reply(data))
        if options.hits and isinstance(data, dict):
            data["memory_hits"] = [to_json(m) for m in recall.memories]
            data_raw = json.dumps(data, ensure_ascii=False).encode("utf-8")
        self.writer.hold()

        def sent() -> None:
            answered()
            self.writer.submit(turn, held=True)

        return _buffered(response, data_raw, extra, sent)

    async def _check_owned(self, grant: Grant, session: str, new: bool) -> None:
        """A scoped token names only sessions it began (`new`: or none yet)."""
        assert grant.name is not None
        if not await run_in_threadpool(self.reader.session_owned, session, grant.name, new):
            raise ForbiddenError(
                f"session {session!r} is not one of {grant.who}'s conversations",
                hint="name a session this token began, or leave the session out",
            )

    async def passthrough(self, request: Request) -> Response:
        denied = self._denied(request)
        if denied is not None:
            return denied
        assert self.client is not None
        try:
            path = passthrough_path(request.scope.get("raw_path") or request.url.path.encode())
            check_length(request, PASSTHROUGH_MAX_BODY)
        except Refusal as exc:
            return exc.response()
        has_body = "content-length" in request.headers or "transfer-encoding" in request.headers
        stream = bounded_stream(request, PASSTHROUGH_MAX_BODY, self.config.body_timeout)
        upstream_request = self.client.build_request(
            request.method,
            self._url(path, request.url.query),
            headers=self._headers(request, request.headers.get("accept-encoding"), True),
            content=stream if has_body else None,
        )
        try:
            response = await self.client.send(upstream_request, stream=True)
        except Refusal as exc:
            return exc.response()
        except httpx2.HTTPError as exc:
            return unreachable(self.upstream, exc)
        return Relay(response)

    async def feedback(self, request: Request) -> Response:
        denied = self._denied(request)
        if denied is not None:
            return denied
        try:
            data = parse_json(
                await read_json(request, self.config.max_body, self.config.body_timeout)
            )
        except Refusal as exc:
            return exc.response()
        session = data.get("session") if isinstance(data, dict) else None
        signal = data.get("signal") if isinstance(data, dict) else None
        if not isinstance(session, str) or not isinstance(signal, str):
            return error_response(
                400,
                "invalid_input",
                "feedback needs a session and a signal",
                '{"session": "ID", "signal": "good"} (good, bad, completed, abandoned, '
                "tool-success)",
            )
        grant: Grant = request.state.grant
        try:
            grant.check_feedback()
            grant.bound_session(session)
            if grant.scopes is not None and grant.session is None:
                await self._check_owned(grant, session, new=False)
        except VaultBrainError as exc:
            return error_response(403, exc.code, exc.message, exc.hint)
        try:
            result = await run_in_threadpool(self.writer.feedback, session, signal)
        except VaultBrainError as exc:
            return error_response(_STATUS.get(exc.code, 400), exc.code, exc.message, exc.hint)
        if self.keeper is not None:
            self.keeper.changed()  # the next request ranks with the new credit
        return JSONResponse(envelope(result))


async def _not_found(request: Request) -> Response:
    return error_response(
        404,
        "not_found",
        f"no route {request.url.path}",
        "vb serve answers /v1/... (Chat Completions and everything the upstream serves) and "
        "POST /v1/vb/feedback",
    )


async def _internal(request: Request, exc: Exception) -> Response:
    log.exception("internal error on %s", request.url.path, exc_info=exc)
    return error_response(
        500,
        "internal",
        f"internal error in vb serve ({type(exc).__name__}); this is a bug in vb",
        "the server keeps running; see its log for the traceback, and report it",
    )


class _ThenRecord(Response):
    """A response that queues its turn once it is sent, or failed to be (never before)."""

    def __init__(self, body: bytes, status: int, then: Callable[[], object]) -> None:
        super().__init__(body, status_code=status)
        self.then = then

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.then()


def _buffered(
    upstream: httpx2.Response, body: bytes, extra: dict[str, str], then: Callable[[], object]
) -> Response:
    """A response read whole (to record it): the upstream's status and headers, its body
    (decoded, so without its content-encoding and length), and vb's headers."""
    response = _ThenRecord(body, upstream.status_code, then)
    skip = {"content-length", "content-encoding", "content-type"}
    kept = [(k, v) for k, v in returned_headers(upstream.headers, extra) if k.lower() not in skip]
    content_type = upstream.headers.get("content-type", "application/json")
    response.raw_headers += [
        (b"content-type", content_type.encode("latin-1")),
        *((k.encode("latin-1"), v.encode("latin-1")) for k, v in kept),
    ]
    return response


def build_app(
    open_api: Callable[[], ProxyAPI],
    config: ServeConfig,
    on_ready: Callable[[], None] | None = None,
) -> Starlette:
    """The proxy as an ASGI app; `on_ready` is called once it is warm and serving."""
    proxy = Proxy(open_api, config, on_ready)
    everything = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
    routes = [
        Route("/v1/chat/completions", proxy.chat, methods=["POST"]),
        Route("/v1/vb/feedback", proxy.feedback, methods=["POST"]),
        Route("/v1/vb/{rest:path}", _not_found, methods=everything),
        Route("/v1/{path:path}", proxy.passthrough, methods=everything),
        Route("/{rest:path}", _not_found, methods=everything),
    ]
    app = Starlette(
        routes=routes,
        middleware=[Middleware(Boundary, allowed_origins=config.allow_origins)],
        lifespan=proxy.lifespan,
        exception_handlers={Exception: _internal},
    )
    app.state.proxy = proxy
    return app
