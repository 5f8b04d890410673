"""Starting `vb serve`: the upstream and keys it uses, where it listens (a TCP address or a
unix socket file), what it refuses to do, and uvicorn.

Refused before anything starts: no upstream to forward to; a non-loopback address without
`VB_SERVE_TOKEN` (anyone who can reach it would spend the key); a socket path that holds
another file or a live server. The sockets are made here and handed to uvicorn, so a unix
socket is created with mode 0600 (never briefly readable by others) and `--port 0` can
say which port it got.

Connections are bounded in time: a client has `HEADER_TIMEOUT` seconds from connecting (or
from its last answer) to send a whole request head, and an idle connection closes after
`KEEP_ALIVE` seconds (the body's own limits are `boundary`'s). The upstream's credentials,
if its URL has any, are never printed.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import ipaddress
import logging
import os
import signal
import socket
import stat
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from starlette.types import ASGIApp

from vault_brain.app.memory.vault import Vault
from vault_brain.app.runtime.capture_process import CaptureSpec
from vault_brain.app.runtime.proxy import ProxyAPI
from vault_brain.app.runtime.turns import CAPTURE_IDLE
from vault_brain.domain.errors import UsageError, VaultBrainError
from vault_brain.interfaces.serve.app import ServeConfig, build_app
from vault_brain.interfaces.serve.boundary import MAX_BODY, check_origin
from vault_brain.interfaces.serve.relay import masked
from vault_brain.storage.env import Environment
from vault_brain.storage.paths import VaultPaths
from vault_brain.storage.policy.token_store import TokenStore

GRACEFUL_SECONDS = 10  # open streams get this long to finish when the server stops
TOKEN_VARIABLE = "VB_SERVE_TOKEN"
BACKLOG = 2048  # uvicorn's default
HEADER_TIMEOUT = 10.0  # seconds a connection has to send a request's head
KEEP_ALIVE = 5  # seconds an idle connection stays open after an answer


def is_loopback(host: str) -> bool:
    if host.strip().lower() in ("localhost", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_binding(host: str, token: str | None, tokens: bool = False) -> None:
    """A non-loopback address needs VB_SERVE_TOKEN or tokens made by `vb token add`."""
    if token is None and not tokens and not is_loopback(host):
        raise UsageError(
            f"refusing to serve on {host} without {TOKEN_VARIABLE}: anyone who reaches it "
            "would use the upstream key",
            hint=f"set {TOKEN_VARIABLE} or make tokens with `vb token add` (clients send one "
            "as their API key), or serve on 127.0.0.1 or --unix-socket",
        )


def resolve_config(
    env: Environment, upstream: str | None, capture_idle: float = CAPTURE_IDLE
) -> ServeConfig:
    """The upstream (`--upstream`, else vb's configured LLM base URL) and the keys."""
    from vault_brain.storage.llm.config import LOCAL_DUMMY_KEY, configured_api_key, load_llm_config

    llm = load_llm_config(env.values)  # a broken LLM configuration fails here, at start
    base = (upstream or "").strip() or (llm.base_url if llm is not None else "")
    if not base:
        raise VaultBrainError(
            "no upstream to forward to",
            hint="pass --upstream URL (e.g. https://api.openai.com/v1), or configure vb's "
            "LLM (VB_LLM_BASE_URL and VB_LLM_MODEL, or [llm] in the config file)",
        )
    parts = urlsplit(base)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise VaultBrainError(
            f"the upstream {masked(base)!r} is not an http(s) URL",
            hint="give its base URL, e.g. https://api.openai.com/v1 or http://127.0.0.1:11434/v1",
        )
    key = llm.api_key if llm is not None and llm.api_key != LOCAL_DUMMY_KEY else None
    if capture_idle < 0:
        raise VaultBrainError(
            f"--capture-idle must be 0 or more seconds, not {capture_idle:g}",
            hint="0 captures after every turn",
        )
    return ServeConfig(
        base.rstrip("/"),
        key or configured_api_key(env.values),
        env.get(TOKEN_VARIABLE),
        capture_idle,
    )


def tcp_socket(host: str, port: int) -> socket.socket:
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(BACKLOG)  # clients told the address queue up until uvicorn accepts
    except OSError as exc:
        raise VaultBrainError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}",
            hint="choose another --port (0 picks a free one), or stop what holds this one",
        ) from None
    return sock


def unix_socket(path: Path) -> socket.socket:
    """A socket file at `path` with mode 0600; a stale socket file there is replaced."""
    if path.exists() or path.is_symlink():
        if not stat.S_ISSOCK(path.lstat().st_mode):
            raise VaultBrainError(
                f"{path} exists and is not a socket", hint="choose another --unix-socket path"
            )
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        with contextlib.closing(probe):
            if probe.connect_ex(str(path)) == 0:
                raise VaultBrainError(
                    f"a server is already listening on {path}",
                    hint="stop it, or choose another --unix-socket path",
                )
        path.unlink()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)  # created 0600: no moment when others may connect
    try:
        sock.bind(str(path))
        sock.listen(BACKLOG)
    except OSError as exc:
        sock.close()
        raise VaultBrainError(
            f"cannot create the socket {path}: {exc.strerror or exc}",
            hint="check that its folder exists and is writable",
        ) from None
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    return sock


def address_of(sock: socket.socket) -> str:
    if sock.family == socket.AF_UNIX:
        return f"unix:{sock.getsockname()}"
    host, port = sock.getsockname()[:2]
    return f"http://{f'[{host}]' if ':' in host else host}:{port}/v1"


@contextlib.contextmanager
def listening(host: str, port: int, path: Path | None) -> Iterator[socket.socket]:
    sock = unix_socket(path) if path is not None else tcp_socket(host, port)
    try:
        yield sock
    finally:
        sock.close()
        if path is not None:
            with contextlib.suppress(OSError):
                path.unlink()


def head_timed_protocol(header_timeout: float) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol with a deadline for each request's head: from when the
    connection opens, or its last answer ends, a client has `header_timeout` seconds to
    send a whole request line and headers; else the connection is closed (idle, or sending
    its head a byte at a time)."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class HeadTimed(H11Protocol):
        head_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self.arm()

        def on_response_complete(self) -> None:
            self.arm()  # (before: a pipelined request started by it disarms it)
            super().on_response_complete()

        def handle_events(self) -> None:
            before = self.cycle
            super().handle_events()
            if self.cycle is not before:  # a request's head has arrived
                self.disarm()

        def connection_lost(self, exc: Exception | None) -> None:
            self.disarm()
            super().connection_lost(exc)

        def arm(self) -> None:
            self.disarm()
            self.head_timer = self.loop.call_later(header_timeout, self.head_late)

        def disarm(self) -> None:
            if self.head_timer is not None:
                self.head_timer.cancel()
                self.head_timer = None

        def head_late(self) -> None:
            self.head_timer = None
            if not self.transport.is_closing():
                self.transport.close()

    return HeadTimed


def uvicorn_config(app: ASGIApp, header_timeout: float = HEADER_TIMEOUT) -> Any:
    """uvicorn's configuration for `vb serve` (a `uvicorn.Config`)."""
    import uvicorn  # lazy: only `vb serve` pays for it

    return uvicorn.Config(
        app,
        http=head_timed_protocol(header_timeout),
        log_level="warning",
        access_log=False,  # a request line can carry a key in its query; nothing is logged
        server_header=False,
        lifespan="on",
        timeout_keep_alive=KEEP_ALIVE,
        timeout_graceful_shutdown=GRACEFUL_SECONDS,
    )


def run(app: ASGIApp, sock: socket.socket) -> None:
    """Serve `app` on `sock` until SIGINT or SIGTERM (uvicorn)."""
    import uvicorn  # lazy: only `vb serve` pays for it

    config = uvicorn_config(app)

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)  # unwinds through `finally`: the socket file goes

    if threading.current_thread() is threading.main_thread():
        # uvicorn stops gracefully on SIGTERM, then raises it again once it has restored
        # this handler: the process then exits like `vb mcp` does
        signal.signal(signal.SIGTERM, stop)
    uvicorn.Server(config).run(sockets=[sock])


def serve(
    vault_root: Path,
    env: Environment,
    *,
    host: str,
    port: int,
    unix_path: Path | None,
    upstream: str | None,
    capture_idle: float = CAPTURE_IDLE,
    agent: str | None = None,
    session_only: str | None = None,
    allow_origins: tuple[str, ...] = (),
    max_body: int = MAX_BODY,
    say: Callable[[str], None],
) -> None:
    """`vb serve`: check, bind, build the app on the vault, serve until stopped (as the
    agent `agent` defines, when given; web pages of `allow_origins` admitted)."""
    token = env.get(TOKEN_VARIABLE)
    tokens = session_only is None and TokenStore(VaultPaths(vault_root)).has_tokens()
    if unix_path is None:  # (one session's server is that session's, whatever tokens exist)
        check_binding(host, None if session_only else token, tokens)
    origins = tuple(check_origin(origin) for origin in allow_origins)
    if max_body < 1:
        raise UsageError("--max-body must be more than 0", hint="the default is 4 (MB)")
    config = resolve_config(env, upstream, capture_idle)
    spec = CaptureSpec(str(vault_root), dict(env.values), agent)
    config = dataclasses.replace(  # captures in a process of their own
        config, capture_in=spec, allow_origins=origins, max_body=max_body
    )
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="vb serve: %(message)s")

    def open_api() -> ProxyAPI:
        api = ProxyAPI(Vault.open(vault_root, env))
        if agent is not None:
            api.act_as(agent)
        return api

    probe = open_api()  # an unknown or malformed agent fails here, before binding
    try:
        grant = probe.confine(session_only) if session_only is not None else None
    finally:
        probe.close()
    remote = unix_path is None and not is_loopback(host)
    config = dataclasses.replace(config, grant=grant, require_token=remote and grant is None)

    with listening(host, port, unix_path) as sock:
        where = address_of(sock)
        ready = (
            f"vb serve: listening on {where} (upstream {masked(config.upstream)}, vault "
            f"{vault_root}{', token required' if token or tokens else ''}"
            f"{f', session {session_only} only' if session_only else ''}"
            f"{', pages of ' + ' '.join(origins) + ' allowed' if origins else ''}); Ctrl-C to stop"
        )
        run(build_app(open_api, config, on_ready=lambda: say(ready)), sock)
