"""Integrations with agent harnesses: the MCP server (`mcp_server`) and Claude Code hooks
(`hooks`).

This module stays light (no `mcp` import): it builds the command line that runs this `vb`
and the configuration snippet each MCP client needs.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vault_brain.errors import VaultBrainError

if TYPE_CHECKING:
    from vault_brain.core import Vault

SERVER_NAME = "vault-brain"
CLIENTS = ("claude-code", "opencode", "cursor")


def file_stamp(path: Path) -> tuple[int, int] | None:
    """(mtime_ns, size) of a file, None when it is missing."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


class WarmVault:
    """Opens the vault, reconciles the index and opens its searcher on a thread, so that this
    overlaps the SDK's import and the client's handshake instead of delaying the first call."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._result: tuple[Vault, tuple[int, int] | None] | None = None
        self._error: Exception | None = None
        self._thread = threading.Thread(target=self._run, name="vb-warm-up", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        from vault_brain.core import Vault

        try:
            strategy = file_stamp(self.root / "STRATEGY.md")
            vault = Vault.open(self.root)
            vault.reconcile(force=True)
            vault.searcher.search("warm up", 1)
            self._result = (vault, strategy)
        except Exception as exc:  # handed to the first call that needs the vault
            self._error = exc

    def result(self) -> tuple[Vault, tuple[int, int] | None]:
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._result is not None
        return self._result


def error_text(exc: VaultBrainError) -> str:
    """A user-facing error on one line: the message, then the hint."""
    return f"{exc.message} (hint: {exc.hint})" if exc.hint else exc.message


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


@dataclass
class ClientConfig:
    client: str
    file: str  # where the snippet goes, relative to the project (or the client's docs)
    config: dict[str, Any]
    shell: str | None = None  # a command line that installs it instead, where the client has one

    def to_json(self) -> dict[str, Any]:
        return {
            "client": self.client,
            "file": self.file,
            "config": self.config,
            "shell": self.shell,
        }


def client_config(client: str, vault_root: Path, command: list[str] | None = None) -> ClientConfig:
    """The snippet `client` needs to start `vb mcp` on this vault."""
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
    raise VaultBrainError(
        f"unknown MCP client {client!r}", hint=f"use one of: {', '.join(CLIENTS)}"
    )
