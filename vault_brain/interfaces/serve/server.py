"""Starting `vb serve`: the upstream and keys it uses, where it listens (a TCP address or a
unix socket file), what it refuses to do, and uvicorn.

Refused before anything starts: no upstream to forward to; a non-loopback address without
`VB_SERVE_TOKEN` (anyone who can reach it would spend the key); a socket path that holds
another file or a live server. The sockets are made here and handed to uvicorn, so a unix
socket is created with mode 0600 (never briefly readable by others) and `--port 0` can
say which port it got.
"""

from __future__ import annotations

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
from urllib.parse import urlsplit

from starlette.types import ASGIApp

from vault_brain.app.capture_process import CaptureSpec
from vault_brain.app.proxy import ProxyAPI
from vault_brain.app.turns import CAPTURE_IDLE
from vault_brain.app.vault import Vault
from vault_brain.domain.errors import UsageError, VaultBrainError
from vault_brain.interfaces.serve.app import ServeConfig, build_app
from vault_brain.storage.env import Environment

GRACEFUL_SECONDS = 10  # open streams get this long to finish when the server stops
TOKEN_VARIABLE = "VB_SERVE_TOKEN"
BACKLOG = 2048  # uvicorn's default


def is_loopback(host: str) -> bool:
    if host.strip().lower() in ("localhost", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_binding(host: str, token: str | None) -> None:
    if token is None and not is_loopback(host):
        raise UsageError(
            f"refusing to serve on {host} without {TOKEN_VARIABLE}: anyone who reaches it "
            "would use the upstream key",
            hint=f"set {TOKEN_VARIABLE} (clients send it as their API key), or serve on "
            "127.0.0.1 or --unix-socket",
        )


def resolve_config(
    env: Environment, upstream: str | None, capture_idle: float = CAPTURE_IDLE
) -> ServeConfig:
    """The upstream (`--upstream`, else vb's configured LLM base URL) and the keys."""
    from vault_brain.storage.llm_config import LOCAL_DUMMY_KEY, configured_api_key, load_llm_config

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
            f"the upstream {base!r} is not an http(s) URL",
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


def run(app: ASGIApp, sock: socket.socket) -> None:
    """Serve `app` on `sock` until SIGINT or SIGTERM (uvicorn)."""
    import uvicorn  # lazy: only `vb serve` pays for it

    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,  # a request line can carry a key in its query; nothing is logged
        server_header=False,
        lifespan="on",
        timeout_graceful_shutdown=GRACEFUL_SECONDS,
    )

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
    say: Callable[[str], None],
) -> None:
    """`vb serve`: check, bind, build the app on the vault, serve until stopped (as the
    agent `agent` defines, when given)."""
    token = env.get(TOKEN_VARIABLE)
    if unix_path is None:
        check_binding(host, token)
    config = resolve_config(env, upstream, capture_idle)
    spec = CaptureSpec(str(vault_root), dict(env.values), agent)
    config = dataclasses.replace(config, capture_in=spec)  # captures in a process of their own
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="vb serve: %(message)s")

    def open_api() -> ProxyAPI:
        api = ProxyAPI(Vault.open(vault_root, env))
        if agent is not None:
            api.act_as(agent)
        return api

    open_api().close()  # an unknown or malformed agent fails here, before binding

    with listening(host, port, unix_path) as sock:
        where = address_of(sock)
        ready = (
            f"vb serve: listening on {where} (upstream {config.upstream}, vault {vault_root}"
            f"{', token required' if token else ''}); Ctrl-C to stop"
        )
        run(build_app(open_api, config, on_ready=lambda: say(ready)), sock)
