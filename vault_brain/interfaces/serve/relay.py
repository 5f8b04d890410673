"""The upstream side of the proxy: which headers go each way, the request sent, and an
upstream response relayed to the client chunk by chunk as it arrives (never buffered),
with its status, headers and bytes intact.

Keys: the client's `Authorization` is forwarded when it brings one, else vb's configured
key is sent; under `VB_SERVE_TOKEN` the client's header is the token, which is checked and
never forwarded (the configured key is sent instead). No header is ever logged.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Mapping
from typing import Any

import anyio
import httpx2
from starlette.responses import JSONResponse, Response
from starlette.types import Receive, Scope, Send

from vault_brain.app.memory.results import SCHEMA_VERSION
from vault_brain.domain.json_bounds import json_depth

log = logging.getLogger("vault_brain.serve")

# Connection-level headers (RFC 9110 7.6.1) and those the proxy sets itself.
_HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    }
)
_NOT_FORWARDED = _HOP_BY_HOP | {"host", "content-length", "authorization", "accept-encoding"}
_NOT_RETURNED = _HOP_BY_HOP | {"server", "date"}
MAX_JSON_DEPTH = 100  # levels of nesting in a JSON body (Python's parser recurses)
_USERINFO = re.compile(r"(?<=://)[^/\s]*@")


def upstream_headers(
    client: Mapping[str, str],
    *,
    api_key: str | None,
    client_auth_is_token: bool,
    encoding: str | None,
    keep_length: bool = False,
) -> dict[str, str]:
    """The headers sent upstream: the client's (without vb's `X-VB-*` and connection
    headers), the key as the module docstring says, and `Accept-Encoding` as given (the
    client's, or identity so that bytes pass through as the client can read them)."""
    out = {
        name: value
        for name, value in client.items()
        if name not in _NOT_FORWARDED and not name.startswith("x-vb-")
    }
    if keep_length and "content-length" in client:
        out["content-length"] = client["content-length"]
    auth = client.get("authorization")
    if auth and not client_auth_is_token:
        out["authorization"] = auth
    elif api_key:
        out["authorization"] = f"Bearer {api_key}"
    out["accept-encoding"] = encoding or "identity"
    return out


def returned_headers(upstream: httpx2.Headers, extra: Mapping[str, str]) -> list[tuple[str, str]]:
    """The upstream's response headers the client gets (all but connection headers and
    CORS headers: vb sets those itself, for the origins it allows), and vb's own."""
    out = [
        (k, v)
        for k, v in upstream.multi_items()
        if k.lower() not in _NOT_RETURNED and not k.lower().startswith("access-control-")
    ]
    return out + list(extra.items())


def error_body(code: str, message: str, hint: str | None) -> dict[str, Any]:
    return {"version": SCHEMA_VERSION, "error": {"code": code, "message": message, "hint": hint}}


def error_response(
    status: int, code: str, message: str, hint: str | None, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    """An error that is vb's own (not the upstream's), in vb's JSON vocabulary."""
    return JSONResponse(error_body(code, message, hint), status_code=status, headers=headers)


def masked(text: str) -> str:
    """`text` with the credentials of any URL in it (`scheme://user:pass@`) masked."""
    return _USERINFO.sub("***@", text)


def bearer_token(header: str | None) -> str | None:
    """The token of an `Authorization: Bearer TOKEN` header, the scheme in any case (RFC
    7235); None for another scheme or no token."""
    scheme, _, token = (header or "").strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def unreachable(url: str, exc: Exception) -> JSONResponse:
    """502: the upstream could not be reached or broke off before answering (the URL's
    credentials, if it has any, masked)."""
    url = masked(url)
    detail = masked(str(exc) or type(exc).__name__)
    if isinstance(exc, httpx2.TimeoutException):
        what = f"the upstream {url} did not answer in time ({type(exc).__name__})"
    else:
        what = f"cannot reach the upstream {url} ({type(exc).__name__}: {detail})"
    return error_response(
        502,
        "upstream_unreachable",
        what,
        "check that the upstream server is running and that `vb serve --upstream` "
        "(or VB_LLM_BASE_URL) points at its /v1 base URL",
    )


class Relay(Response):
    """An ASGI response that streams an upstream response to the client as it arrives.

    `on_chunk` sees each chunk as it passes; `on_end(completed)` is called exactly once,
    when the stream has ended: `completed` is False when the client went away or the
    upstream broke off. The upstream response is always closed."""

    def __init__(
        self,
        upstream: httpx2.Response,
        extra_headers: Mapping[str, str] | None = None,
        on_chunk: Callable[[bytes], None] | None = None,
        on_end: Callable[[bool], None] | None = None,
    ) -> None:
        # (Response's own __init__ is not called: nothing here is buffered)
        self.upstream = upstream
        self.status_code = upstream.status_code
        self.returned = returned_headers(upstream.headers, extra_headers or {})
        self.on_chunk = on_chunk
        self.on_end = on_end

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        completed = False
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(_until_disconnect, receive, group.cancel_scope)
                completed = await self._relay(send)
                group.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                await self.upstream.aclose()
            if self.on_end is not None:
                self.on_end(completed)

    async def _relay(self, send: Send) -> bool:
        """Relay the whole response; False when either side broke off (a client that hangs
        up while no chunk is being sent cancels this instead)."""
        headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in self.returned]
        try:
            await send(
                {
                    "type": "http.response.start",
                    "status": self.upstream.status_code,
                    "headers": headers,
                }
            )
            async for chunk in self.upstream.aiter_raw():
                if self.on_chunk is not None:
                    self.on_chunk(chunk)
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except OSError:  # the client's connection failed under a send
            return False
        except httpx2.HTTPError as exc:  # the upstream broke off mid-stream
            log.warning("the upstream stream broke off: %s", type(exc).__name__)
            return False
        return True


async def _until_disconnect(receive: Receive, scope: anyio.CancelScope) -> None:
    """Wait for the client to hang up, then cancel the relay."""
    while (await receive())["type"] != "http.disconnect":
        pass
    scope.cancel()


def parse_json(raw: bytes) -> Any:
    """The JSON value; None when `raw` is not JSON or nests over `MAX_JSON_DEPTH` levels."""
    if json_depth(raw) > MAX_JSON_DEPTH:
        return None
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return None
