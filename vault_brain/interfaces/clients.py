"""What an agent harness needs to start vb: the command line of this `vb` and the MCP
configuration snippet of each client. Light: no `mcp` import."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

from vault_brain.app.memory.results import Result, result
from vault_brain.domain.text import check_choice

SERVER_NAME = "vault-brain"
CLIENTS = ("claude-code", "opencode", "cursor")


def vb_command() -> list[str]:
    """The absolute command that runs this `vb`: the script we were started through, else
    the `vb` next to this interpreter, else the one on PATH, else `python -m vault_brain`."""
    argv0 = sys.argv[0] if sys.argv else ""
    if argv0 and Path(argv0).name in ("vb", "vb.exe") and Path(argv0).is_file():
        return [os.path.abspath(argv0)]
    beside = Path(sys.executable).parent / "vb"
    if beside.is_file():
        return [str(beside)]
    found = shutil.which("vb")
    if found:
        return [os.path.abspath(found)]
    return [os.path.abspath(sys.executable), "-m", "vault_brain"]


def server_command(vault_root: Path, command: list[str] | None = None) -> list[str]:
    """The full command line of the MCP server for this vault."""
    return [*(command or vb_command()), "--vault", str(vault_root), "mcp"]


@result
class ClientConfig(Result):
    client: str
    file: str
    """Where the snippet goes, relative to the project (or the client's docs)."""
    config: dict[str, Any]
    shell: str | None = None
    """A command line that installs it instead, where the client has one."""


def client_config(client: str, vault_root: Path, command: list[str] | None = None) -> ClientConfig:
    """The snippet `client` needs to start `vb mcp` on this vault."""
    client = check_choice(client, CLIENTS, "MCP client")
    full = server_command(vault_root, command)
    entry: dict[str, Any]
    if client == "claude-code":
        entry = {"type": "stdio", "command": full[0], "args": full[1:], "env": {}}
        shell = shlex.join(["claude", "mcp", "add", "--scope", "user", SERVER_NAME, "--", *full])
        return ClientConfig(client, ".mcp.json", {"mcpServers": {SERVER_NAME: entry}}, shell)
    if client == "opencode":
        entry = {"type": "local", "command": full, "enabled": True}
        config = {"$schema": "https://opencode.ai/config.json", "mcp": {SERVER_NAME: entry}}
        return ClientConfig(client, "opencode.json", config)
    if client == "cursor":
        entry = {"command": full[0], "args": full[1:]}
        return ClientConfig(client, ".cursor/mcp.json", {"mcpServers": {SERVER_NAME: entry}})
    raise AssertionError(client)  # check_choice allows only CLIENTS
