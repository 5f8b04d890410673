"""Who may ask `vb serve`, and how much: the checks a request passes before the proxy
reads it, writes anything or sends anything upstream.

- A web page is no client. A request with an `Origin` header (a browser sends one with
  every cross-origin request) is refused unless that origin was allowed (`vb serve
  --allow-origin`); for an allowed origin vb answers the CORS preflight and sets the CORS
  headers itself, for that origin alone. No `access-control-*` header of the upstream's
  reaches a client. A browser sends no Origin with a no-cors GET (`<img src>`) or a
  navigation, but marks it `Sec-Fetch-Site: cross-site` (or `same-site`): refused too.
- On a loopback TCP address the `Host` must name that address (127.0.0.1:PORT,
  localhost:PORT, [::1]:PORT): a page whose DNS name was rebound to 127.0.0.1 is refused.
- The bodies vb parses are `application/json` (else 415), at most `max_body` bytes (413; a
  larger Content-Length is refused before reading, a body is read chunk by chunk and never
  held past the limit), whole within `body_timeout` seconds (408), and nested at most
  `MAX_JSON_DEPTH` levels (400). Passthrough bodies stream to the upstream, each chunk
  within `body_timeout`, at most `PASSTHROUGH_MAX_BODY` bytes.
- Passthrough paths stay under /v1/: a `.` or `..` segment (percent-encoded or not,
  between slashes or backslashes) is refused.

Refusals are vb's JSON errors.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import AsyncIterator, Iterable
from urllib.parse import unquote, urlsplit

import anyio
from starlette.datastructures import Headers
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from vault_brain.domain.errors import UsageError
from vault_brain.domain.json_bounds import json_depth
from vault_brain.interfaces.serve.relay import MAX_JSON_DEPTH, error_response

MAX_BODY = 4 * 1024 * 1024  # bytes of a body vb parses (Chat Completions, feedback)
PASSTHROUGH_MAX_BODY = 128 * 1024 * 1024  # bytes streamed to the upstream (files, audio)
BODY_TIMEOUT = 30.0  # seconds for a whole parsed body, or for each passthrough chunk
LINGER = 1.0  # seconds a refused body is read on (and dropped) so the client sees why
LINGER_GAP = 0.2  # ... unless nothing comes for this long
PREFLIGHT_MAX_AGE = "600"
EXPOSED = "X-VB-Memory-Ids, X-VB-Session"
PAGE_SITES = ("cross-site", "same-site")  # Sec-Fetch-Site of a request another page made
METHODS = "GET, POST, PUT, PATCH, DELETE, OPTIONS"


class Refusal(Exception):
    """A request refused with one of vb's JSON errors."""

    def __init__(
        self, status: int, code: str, message: str, hint: str, close: bool = False
    ) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.hint = status, code, message, hint
        self.close = close  # the body was left unread: the connection ends with the answer

    def response(self) -> JSONResponse:
        headers = {"connection": "close"} if self.close else None
        return error_response(self.status, self.code, self.message, self.hint, headers)


# -- origins and hosts --------------------------------------------------------------------


def check_origin(value: str) -> str:
    """An origin given to `--allow-origin`: scheme://host[:port], no path; lower-cased."""
    origin = value.strip().rstrip("/").lower()
    parts = urlsplit(origin)
    if origin in ("*", "null") or not parts.scheme or not parts.netloc or parts.path:
        raise UsageError(
            f"--allow-origin {value!r} is not one web origin",
            hint="give the page's origin exactly, e.g. --allow-origin http://localhost:3000 "
            "(scheme, host and port; not * or null: any page could then use the key)",
        )
    return origin


def loopback_hosts(scope: Scope) -> frozenset[str] | None:
    """The `Host` values a request to this connection's address may carry; None when any
    may (a unix socket, or a non-loopback address, which needs a token anyway)."""
    server = scope.get("server")
    if not server or server[1] is None:
        return None
    host, port = str(server[0]), int(server[1])
    if host not in ("127.0.0.1", "::1") and not host.startswith("127."):
        return None
    names = {"127.0.0.1", "localhost", "[::1]", f"[{host}]" if ":" in host else host}
    hosts = {f"{name}:{port}" for name in names}
    if port == 80:
        hosts |= names
    return frozenset(hosts)


class Boundary:
    """ASGI middleware: the origin, host and CORS rules of the module docstring."""

    def __init__(self, app: ASGIApp, allowed_origins: Iterable[str] = ()) -> None:
        self.app = app
        self.origins = frozenset(check_origin(o) for o in allowed_origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        refused = self._refused(scope, headers)
        if refused is not None:
            await refused(scope, receive, send)
            return
        origin = headers.get("origin")

        async def send_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                kept = [
                    (k, v)
                    for k, v in message.get("headers", [])
                    if not k.lower().startswith(b"access-control-")
                ]
                if origin is not None:  # (an allowed one: others were refused)
                    kept += _cors(origin)
                message = {**message, "headers": kept}
            await send(message)

        preflight = "access-control-request-method" in headers and scope["method"] == "OPTIONS"
        if origin is not None and preflight:  # (an allowed origin's, answered here)
            await _preflight(origin, headers)(scope, receive, send)
            return
        await self.app(scope, receive, send_cors)

    def _refused(self, scope: Scope, headers: Headers) -> Response | None:
        hosts = loopback_hosts(scope)
        host = headers.get("host", "").strip().lower()
        if hosts is not None and host not in hosts:
            port = scope["server"][1]
            return error_response(
                403,
                "forbidden_host",
                f"Host {host or '(none)'!r} is not this server's address; a page whose name "
                "points at 127.0.0.1 is refused (DNS rebinding)",
                f"connect to http://127.0.0.1:{port}/v1 or http://localhost:{port}/v1",
            )
        origin = headers.get("origin")
        if origin is not None and origin.strip().rstrip("/").lower() not in self.origins:
            return error_response(
                403,
                "forbidden_origin",
                f"requests from web pages are refused (Origin {origin!r})",
                "vb serve is for API clients, which send no Origin; to let a page you trust "
                f"use it, start vb serve with --allow-origin {origin}",
            )
        site = headers.get("sec-fetch-site", "").strip().lower()
        if origin is None and site in PAGE_SITES:  # (a no-cors GET or a navigation)
            return error_response(
                403,
                "forbidden_origin",
                f"requests from web pages are refused (Sec-Fetch-Site: {site})",
                "vb serve is for API clients; a page you allowed with --allow-origin "
                "calls it with fetch(), which sends its Origin",
            )
        return None


def _cors(origin: str) -> list[tuple[bytes, bytes]]:
    return [
        (b"access-control-allow-origin", origin.encode("latin-1")),
        (b"access-control-expose-headers", EXPOSED.encode("latin-1")),
        (b"vary", b"Origin"),
    ]


def _preflight(origin: str, headers: Headers) -> Response:
    response = Response(status_code=204)
    response.raw_headers += [
        *_cors(origin),
        (b"access-control-allow-methods", METHODS.encode("latin-1")),
        (b"access-control-max-age", PREFLIGHT_MAX_AGE.encode("latin-1")),
    ]
    asked = headers.get("access-control-request-headers")
    if asked:
        response.raw_headers.append((b"access-control-allow-headers", asked.encode("latin-1")))
    return response


# -- bodies -----------------------------------------------------------------------------


def _too_large(limit: int) -> Refusal:
    return Refusal(
        413,
        "too_large",
        f"the request body is over {limit:,} bytes",
        "send less (vb serve --max-body sets the limit for the bodies vb reads)",
        close=True,
    )


def _declared_length(request: Request) -> int | None:
    value = request.headers.get("content-length")
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        raise Refusal(
            400, "invalid_input", "the Content-Length is not a number", "send a valid request"
        ) from None


def check_json_type(request: Request) -> None:
    """415 unless the body is declared `application/json`."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise Refusal(
            415,
            "unsupported_media_type",
            f"the request body must be application/json, not {kind or 'undeclared'}",
            "send the header Content-Type: application/json (as OpenAI clients do)",
        )


async def _linger(request: Request) -> None:
    """Read a refused body on for a moment (dropping it), so that the client gets the
    answer rather than a reset connection; never when it waits for 100-continue."""
    if request.headers.get("expect", "").lower() == "100-continue":
        return
    chunks = request.stream().__aiter__()
    with anyio.move_on_after(LINGER):
        while True:
            with anyio.move_on_after(LINGER_GAP) as gap:
                try:
                    await chunks.__anext__()
                except (StopAsyncIteration, ClientDisconnect):
                    return
            if gap.cancelled_caught:  # nothing more is coming
                return


async def read_body(request: Request, limit: int, timeout: float) -> bytes:
    """The body, chunk by chunk: refused past `limit` bytes (413) or when not whole within
    `timeout` seconds (408)."""
    declared = _declared_length(request)
    if declared is not None and declared > limit:
        await _linger(request)
        raise _too_large(limit)
    chunks: list[bytes] = []
    size = 0
    too_large = False
    try:
        with anyio.fail_after(timeout):
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    too_large = True
                    break
                chunks.append(chunk)
    except TimeoutError:
        raise Refusal(
            408,
            "timeout",
            f"the request body did not arrive within {timeout:g} s",
            "send the whole body at once",
            close=True,
        ) from None
    except ClientDisconnect:
        raise Refusal(400, "invalid_input", "the client left before its body", "") from None
    if too_large:
        chunks.clear()
        await _linger(request)
        raise _too_large(limit)
    return b"".join(chunks)


async def read_json(request: Request, limit: int, timeout: float) -> bytes:
    """A JSON body's bytes (see `read_body`), refused unless declared application/json
    and nested at most `MAX_JSON_DEPTH` levels."""
    check_json_type(request)
    raw = await read_body(request, limit, timeout)
    if json_depth(raw) > MAX_JSON_DEPTH:
        raise Refusal(
            400,
            "invalid_input",
            f"the request body nests deeper than {MAX_JSON_DEPTH} levels",
            "send a Chat Completions request as JSON of ordinary depth",
        )
    return raw


def check_length(request: Request, limit: int) -> None:
    """413 when the declared Content-Length is over `limit` (before anything is read)."""
    declared = _declared_length(request)
    if declared is not None and declared > limit:
        raise _too_large(limit)


async def bounded_stream(request: Request, limit: int, timeout: float) -> AsyncIterator[bytes]:
    """A passthrough body as it arrives: each chunk within `timeout`, `limit` bytes in all
    (else `Refusal`, raised to whoever reads it; see `check_length` for the declared
    length, checked before the request goes upstream)."""
    size = 0
    chunks = request.stream().__aiter__()
    while True:
        try:
            with anyio.fail_after(timeout):
                chunk = await chunks.__anext__()
        except StopAsyncIteration:
            return
        except TimeoutError:
            raise Refusal(
                408,
                "timeout",
                f"the request body stalled for {timeout:g} s",
                "send the body without pauses",
                close=True,
            ) from None
        size += len(chunk)
        if size > limit:
            raise _too_large(limit)
        yield chunk


# -- paths ------------------------------------------------------------------------------


def passthrough_path(raw_path: bytes) -> str:
    """The part of a request's path after /v1/, as sent (percent-encoded), refused when,
    decoded, it holds a `.` or `..` segment (between slashes or backslashes): the upstream
    could resolve it to a path outside /v1/. A segment that servers read as one counts as
    one (see `_dots`)."""
    path = raw_path.decode("latin-1")
    rest = path[len("/v1/") :] if path.startswith("/v1/") else ""
    decoded = unquote(unquote(rest))  # (twice: a server behind may decode again)
    if any(_dots(part) for part in re.split(r"[/\\]", decoded)):
        raise Refusal(
            404,
            "not_found",
            f"no route {path}: a path with . or .. segments could leave /v1/ at the upstream",
            "send the path the API documents, without dot segments",
        )
    return rest


_PADDING = "".join(chr(c) for c in range(33)) + "\x7f"


def _dots(segment: str) -> bool:
    """A segment some server reads as `.` or `..`: only dots once its path parameter is cut
    (`..;x`: Tomcat, Jetty, Spring), control characters and blanks around it are dropped
    and full-width dots folded (NFKC). No API path has such a segment."""
    name = unicodedata.normalize("NFKC", segment.split(";", 1)[0]).strip(_PADDING)
    return bool(name) and not name.strip(".")
