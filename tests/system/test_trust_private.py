"""Notes marked `private: true` (what `vb add --allow-secret` stores) are the person's own:
no agent path gets them -- a confined caller (the sandbox's `vb mcp --confined`, `vb serve
--session-only`), a scoped token, the person's own `vb serve` -- not even redacted, and
MEMORY.md (in every agent's context, and in the sandbox's view) never lists them; the
person's own search still finds them (tests/integration/test_private.py: `private_paths`).

A real `vb mcp` through the real MCP stdio client, a real `vb serve` process with the local
fake Chat Completions server as its upstream (the model: the one thing that cannot exist
here), the real `openai` client.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import openai
from mcp.client.stdio import StdioServerParameters
from test_serve import add_note, vb_serve
from test_serve import upstream as upstream  # the fixture
from test_trust_tokens import make_token

from fake_llm_server import FakeLLMServer, completion
from test_mcp import McpServer

SECRET = "Tr0ub4dor&3-Blue-Zorblax"
QUERY = "Zorblax bank login password savings"


def private_note(cli: Any, vault: Path) -> str:
    res = cli(
        "--vault", str(vault), "add", "-n", "Zorblax bank login", "-c", "people",
        f"The Zorblax bank login password is {SECRET} for the savings account.",
        "--allow-secret", "--json",
    )  # fmt: skip
    assert res.exit_code == 0, res.stderr
    return str(res.json()["note"]["id"])


def test_a_confined_agent_never_gets_a_private_note(vault: Path, cli: Any) -> None:
    hidden = private_note(cli, vault)
    shared = add_note(cli, vault, "Zorblax bank branch", "The Zorblax bank branch is on Main St.")
    v = ("--vault", str(vault))
    # the person: found by search, and its own retrieve shows it
    mine = cli(*v, "search", QUERY, "--json").json()
    assert hidden in [r["id"] for r in mine["results"]]
    args = ["-m", "vault_brain", *v, "mcp", "--session", "sandbox-1", "--confined"]
    server = McpServer(StdioServerParameters(command=sys.executable, args=args))
    try:
        found = server.ok("memory_search", {"query": QUERY})
        assert [r["id"] for r in found["results"]] == [shared]
        # retrieve and history: the words of no note at all
        for tool in ("memory_retrieve", "memory_history"):
            said = server.error(tool, {"id": hidden})
            missing = server.error(tool, {"id": "entity-people-nobody"})
            assert said == missing.replace("entity-people-nobody", hidden), (said, missing)
        assert "no note" in server.error("memory_update", {"id": hidden, "content": "x"})
        assert "no note" in server.error("memory_delete", {"id": hidden})
        assert hidden not in json.dumps(server.ok("credit_report", {"top_n": 50}))
    finally:
        server.close()
    assert (vault / "entities/people/zorblax-bank-login.md").is_file()  # (nothing changed)
    # MEMORY.md, in every agent's context, never lists it; the shared note it does
    assert cli(*v, "memory-file").exit_code == 0
    memory = (vault / "MEMORY.md").read_text(encoding="utf-8")
    assert "Zorblax bank login" not in memory and "Zorblax bank branch" in memory


def test_a_scoped_token_and_the_sandbox_proxy_never_recall_a_private_note(
    vault: Path, upstream: FakeLLMServer, cli: Any
) -> None:
    hidden = private_note(cli, vault)
    shared = add_note(cli, vault, "Zorblax bank branch", "The Zorblax bank branch is on Main St.")
    token = make_token(cli, vault, "guest", "--scope", "user:guest")
    upstream.responder = lambda body: completion("Noted.")
    question: Any = [{"role": "user", "content": "Where is my Zorblax bank and its login?"}]
    common = ("--upstream", upstream.base_url, "--capture-idle", "0")

    def ask(serve_args: tuple[str, ...], key: str) -> tuple[list[str], str]:
        """The ids of the memories one request got, and what went upstream."""
        with vb_serve(vault, "--port", "0", *serve_args, *common) as output:
            found = re.search(r"(http://\S+/v1)", output[0])
            assert found is not None
            client = openai.OpenAI(base_url=found.group(1), api_key=key, max_retries=0)
            raw = client.chat.completions.with_raw_response.create(
                model="m", messages=question, extra_body={"memory_hits": True}
            )
        ids = [h["id"] for h in raw.http_response.json()["memory_hits"]]
        return ids, json.dumps(upstream.bodies[-1])

    ids, sent = ask((), token)  # a scoped token
    assert hidden not in ids and shared in ids and "Zorblax bank login" not in sent
    assert cli("--vault", str(vault), "token", "revoke", "guest").exit_code == 0
    ids, sent = ask(("--session-only", "sandbox-2"), "none")  # the sandbox's proxy
    assert hidden not in ids and shared in ids and "Zorblax bank login" not in sent
    # the person's own proxy (no token) is an agent path too: never recalled
    ids, sent = ask((), "none")
    assert hidden not in ids and shared in ids and "Zorblax bank login" not in sent
