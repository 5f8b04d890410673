"""The process environment, read once.

Each interface (the CLI, the MCP server, a hook) takes one `Environment` snapshot when it
starts and passes it down; no other module reads `os.environ` (except `tokens`, which
finds tiktoken's cache where tiktoken itself does). The variables vb reads:

- `VB_VAULT`: the vault when `--vault` is not given.
- `VB_LOCK_TIMEOUT`: seconds a writer waits for another writer (default 10).
- `VB_SESSION_ID`: the session MCP retrievals are recorded in.
- `VB_SERVE_TOKEN`: the bearer token `vb serve` requires of its clients.
- `VB_LLM_BASE_URL`, `VB_LLM_MODEL`, `VB_LLM_API_KEY`, `VB_LLM_TIMEOUT`, `VB_LLM_MAX_RETRIES`,
  `VB_CONFIG`, `XDG_CONFIG_HOME`, `HOME`, `OPENAI_BASE_URL`, `OPENAI_API_KEY`: the LLM
  endpoint (see `llm.config`); `XDG_CONFIG_HOME` and `HOME` also this machine's approval key
  (`machine_key`).
- `VB_OPENCODE_TARBALL`, `npm_config_registry`, `XDG_CACHE_HOME`: where `vb session --agent
  opencode` gets OpenCode's release (see `opencode_image`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

from vault_brain.domain.errors import VaultBrainError

DEFAULT_LOCK_TIMEOUT = 10.0


class Environment:
    """A read-only snapshot of the environment variables."""

    def __init__(self, values: Mapping[str, str] | None = None) -> None:
        self.values: Mapping[str, str] = MappingProxyType(dict(values or {}))

    @classmethod
    def from_os(cls) -> Environment:
        return cls(os.environ)

    def get(self, name: str) -> str | None:
        value = self.values.get(name, "").strip()
        return value or None

    @property
    def vault(self) -> str | None:
        return self.get("VB_VAULT")

    @property
    def cache_home(self) -> str | None:
        """Where a read-only vault's cache goes ($XDG_CACHE_HOME)."""
        return self.get("XDG_CACHE_HOME")

    @property
    def config_home(self) -> Path:
        """The user's config folder: $XDG_CONFIG_HOME, else $HOME/.config (the process's,
        when this snapshot holds neither: an `Environment()` made by a library caller), where
        this machine's approval key lives (`machine_key`)."""
        source = (
            self.values
            if ("HOME" in self.values or "XDG_CONFIG_HOME" in self.values)
            else os.environ
        )
        xdg = (source.get("XDG_CONFIG_HOME") or "").strip()
        if xdg:
            return Path(xdg).expanduser()
        home = (source.get("HOME") or "").strip()
        return (Path(home) if home else Path.home()) / ".config"

    @property
    def session_id(self) -> str | None:
        return self.get("VB_SESSION_ID")

    @property
    def lock_timeout(self) -> float:
        raw = self.get("VB_LOCK_TIMEOUT")
        if raw is None:
            return DEFAULT_LOCK_TIMEOUT
        try:
            value = float(raw)
        except ValueError:
            value = -1.0
        if not math.isfinite(value) or value < 0:
            raise VaultBrainError(
                f"VB_LOCK_TIMEOUT={raw!r} is not a number of seconds",
                hint="set it to a number like 10, or unset it",
            )
        return value
