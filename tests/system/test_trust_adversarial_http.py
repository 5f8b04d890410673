"""`vb serve` and `vb mcp --confined` against hostile inputs the first trust tests did not
try (issue 22, a second adversarial pass): requests a browser sends without an `Origin`,
dot segments hidden behind path parameters or padding, and the Host and Content-Type
variants that must keep working or keep being refused. Real parts throughout: the proxy
under uvicorn on 127.0.0.1 as `vb serve` configures it, in front of the real fake upstream
(tests/fake_llm_server.py), driven with raw HTTP; the real MCP stdio client against a real
`vb mcp --confined`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from mcp.client.stdio import StdioServerParameters
from test_serve import upstream as upstream  # the fixture
from test_trust_serve import (
    CHAT,
    assert_vb_error,
    guarded,
    port_of,
    send,
    sessions_written,
)
from test_trust_tokens import commit_all, scoped_note

from fake_llm_server import Canned, FakeLLMServer, completion
from test_mcp import McpServer

MODELS = b'{"object": "list", "data": []}'


def _upstream_routes(upstream: FakeLLMServer) -> None:
    upstream.responder = lambda body: completion("Noted.")
    upstream.routes["/v1/models"] = lambda recorded: Canned(body=MODELS)
    upstream.routes["/admin"] = lambda recorded: Canned(body=b'{"admin": true}')


# -- web pages that send no Origin -------------------------------------------------------------


def test_a_page_request_without_origin_is_refused_by_its_fetch_metadata(
    vault: Path, upstream: FakeLLMServer
) -> None:
    """A browser sends no `Origin` with a no-cors GET (`<img src>`, `<script src>`, a link
    or form that navigates), but it does send `Sec-Fetch-Site`. From another site (or
    another port of localhost: same-site) such a request never reaches the upstream with
    vb's key. What the person types into the address bar (`none`), and API clients (no
    such header), still go through; so does an allowed origin's page."""
    _upstream_routes(upstream)
    allowed = "http://localhost:3000"
    with guarded(vault, upstream, allow_origins=(allowed,)) as proxy:
        for site in ("cross-site", "same-site", "Cross-Site"):
            for mode, dest in (("no-cors", "image"), ("navigate", "document")):
                headers = {"sec-fetch-site": site, "sec-fetch-mode": mode, "sec-fetch-dest": dest}
                status, found, body = send(proxy, "GET", "/v1/models", headers=headers)
                assert status == 403, (site, mode, body)
                assert_vb_error(body, "forbidden_origin")
                assert not any(k.startswith("access-control-") for k in found)
        assert proxy.upstream.requests == []
        # the person at the address bar, an API client, the allowed page: served
        assert send(proxy, "GET", "/v1/models", headers={"sec-fetch-site": "none"})[0] == 200
        assert send(proxy, "GET", "/v1/models")[0] == 200
        page = {"origin": allowed, "sec-fetch-site": "same-site", "sec-fetch-mode": "cors"}
        status, found, _ = send(proxy, "GET", "/v1/models", headers=page)
        assert status == 200 and found["access-control-allow-origin"] == allowed
        assert [r.path for r in proxy.upstream.requests] == ["/v1/models"] * 3
        proxy.idle()
    assert sessions_written(vault) == []


# -- passthrough paths -------------------------------------------------------------------------


def test_dot_segments_behind_path_parameters_or_padding_never_leave_v1(
    vault: Path, upstream: FakeLLMServer
) -> None:
    """Java servers (Tomcat, Jetty, Spring) read `..;x` as `..`; others drop a NUL or
    trailing blanks, or fold full-width dots (NFKC). Any of these behind a passthrough
    would take the request to the upstream's /admin with vb's key: refused, as plain dot
    segments are, and nothing goes upstream. A path parameter on an ordinary segment still
    passes."""
    _upstream_routes(upstream)
    with guarded(vault, upstream) as proxy:
        for path in (
            "/v1/..;/admin",
            "/v1/..;jsessionid=x/admin",
            "/v1/%2e%2e;/admin",
            "/v1/..%3b/admin",
            "/v1/.;/..;/admin",
            "/v1/models/..%253b/..%253b/admin",
            "/v1/..%00/admin",
            "/v1/.%00/admin",
            "/v1/..%20/admin",
            "/v1/..%09/admin",
            "/v1/.../admin",
            "/v1/%ef%bc%8e%ef%bc%8e/admin",
        ):
            status, _, body = send(proxy, "GET", path)
            assert status == 404, (path, body)
            assert_vb_error(body, "not_found")
        assert proxy.upstream.requests == []
        assert send(proxy, "GET", "/v1/models;v=2")[0] != 403
        assert [r.path for r in proxy.upstream.requests] == ["/v1/models;v=2"]


# -- what held: Host and Content-Type variants ---------------------------------------------


def test_host_and_content_type_variants_are_read_strictly(
    vault: Path, upstream: FakeLLMServer
) -> None:
    """Held on the first pass, kept so: a Host that only resembles the address served (a
    trailing dot, `127.1`, the IPv4-mapped IPv6 form, no port) is refused; two Host headers
    are malformed (400). `application/json` with parameters or in upper case is JSON; a
    type that only contains it is not, and neither is a second Content-Type behind a
    non-JSON first."""
    _upstream_routes(upstream)
    body = json.dumps(CHAT).encode()
    with guarded(vault, upstream) as proxy:
        port = port_of(proxy)
        for host in (f"127.0.0.1.:{port}", f"127.1:{port}", f"[::ffff:127.0.0.1]:{port}"):
            status, _, data = send(proxy, "GET", "/v1/models", headers={"host": host})
            assert status == 403, host
            assert_vb_error(data, "forbidden_host")
        assert send(proxy, "GET", "/v1/models", headers={"host": "127.0.0.1"})[0] == 403
        for kind in ("application/jsonx", "text/plain;application/json", "application/json, x/y"):
            status, _, data = send(
                proxy, "POST", "/v1/chat/completions", body, {"content-type": kind}
            )
            assert status == 415, kind
            assert_vb_error(data, "unsupported_media_type")
        assert proxy.upstream.requests == []
        for kind in ("application/json; charset=utf-8", "APPLICATION/JSON"):
            status, _, data = send(
                proxy, "POST", "/v1/chat/completions", body, {"content-type": kind}
            )
            assert status == 200, (kind, data)
        proxy.idle()


def _raw_answer(port: int, head: bytes) -> bytes:
    import socket

    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head)
        out = b""
        while chunk := sock.recv(65536):
            out += chunk
    return out


def test_repeated_host_or_content_type_headers_do_not_slip_through(
    vault: Path, upstream: FakeLLMServer
) -> None:
    _upstream_routes(upstream)
    body = json.dumps(CHAT).encode()
    with guarded(vault, upstream) as proxy:
        port = port_of(proxy)
        here = f"127.0.0.1:{port}"
        for first, second in ((here, "evil.example"), ("evil.example", here)):
            head = f"GET /v1/models HTTP/1.1\r\nHost: {first}\r\nHost: {second}\r\n"
            answer = _raw_answer(port, (head + "Connection: close\r\n\r\n").encode())
            assert answer.startswith(b"HTTP/1.1 400"), answer[:80]
        two_types = (
            f"POST /v1/chat/completions HTTP/1.1\r\nHost: {here}\r\n"
            "Content-Type: text/plain\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        ).encode() + body
        assert _raw_answer(port, two_types).startswith(b"HTTP/1.1 415")
        assert proxy.upstream.requests == []


# -- vb mcp --confined: what held ------------------------------------------------------------


def test_a_confined_agent_cannot_tell_a_hidden_note_from_no_note_by_any_spelling(
    vault: Path, cli: Any
) -> None:
    """Held on this pass, kept so: whichever way the agent spells a path to a note of
    another scope (backslashes, `./`, `//`, a symlink inside the vault that points at it),
    every tool answers exactly what it answers for a path where there is no note; a path
    into `sessions/` reads the same whether the transcript exists or not; the note is
    untouched."""
    hidden = "entities/preferences/carol.md"
    scoped_note(cli, vault, "Carol", "Alice's sister Carol lives in Ghent.", "user:alice")
    assert (vault / hidden).is_file()
    (vault / "entities/projects").mkdir(parents=True, exist_ok=True)
    (vault / "entities/projects/carol-link.md").symlink_to(vault / hidden)
    assert cli("--vault", str(vault), "loop", "intake", "-s", "alice-chat", "hi").exit_code == 0
    commit_all(vault)
    before = (vault / hidden).read_bytes()
    args = ["-m", "vault_brain", "--vault", str(vault), "mcp", "--session", "sandbox-1"]
    server = McpServer(StdioServerParameters(command=sys.executable, args=[*args, "--confined"]))
    try:
        spellings = {
            "entities\\preferences\\carol.md": hidden,
            "entities/preferences/./carol.md": hidden,
            "entities//preferences/carol.md": hidden,
            "entities/projects/carol-link.md": "entities/projects/carol-link.md",
        }
        for ref, shown in spellings.items():
            missing_ref = ref.replace("carol", "nobody")
            missing_shown = shown.replace("carol", "nobody")
            for tool, extra in (
                ("memory_retrieve", {}),
                ("memory_history", {}),
                ("memory_update", {"content": "Carol moved."}),
                ("memory_delete", {}),
            ):
                said = server.error(tool, {"id": ref, **extra})
                none = server.error(tool, {"id": missing_ref, **extra})
                assert said == none.replace(missing_shown, shown), (tool, ref, said, none)
                assert "Ghent" not in said
        for tool in ("memory_retrieve", "memory_history"):
            there = server.error(tool, {"id": "sessions/alice-chat.jsonl"})
            gone = server.error(tool, {"id": "sessions/nobody.jsonl"})
            assert there == gone.replace("nobody", "alice-chat"), (there, gone)
        found = server.ok("memory_search", {"query": "Carol Ghent sister", "scope": "all"})
        assert found["results"] == []
    finally:
        server.close()
    assert (vault / hidden).read_bytes() == before
