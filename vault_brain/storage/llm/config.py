"""Where vb's LLM endpoint comes from.

Configuration, highest precedence first:

1. environment: `VB_LLM_BASE_URL`, `VB_LLM_MODEL`, `VB_LLM_API_KEY`, `VB_LLM_TIMEOUT`,
   `VB_LLM_MAX_RETRIES`;
2. the `[llm]` table of the user config file (`$VB_CONFIG`, else
   `$XDG_CONFIG_HOME/vault_brain/config.toml`, else `~/.config/vault_brain/config.toml`) with the
   keys `base_url`, `model`, `api_key`, `timeout`, `max_retries`;
3. once a model is configured by 1 or 2 (and only then), `OPENAI_BASE_URL` and `OPENAI_API_KEY`
   fill a missing base URL or key, so an `OPENAI_API_KEY` in the shell never switches vb to a
   paid endpoint by itself.

No model configured: `load_llm_config(env)` returns None and callers use the offline methods.
Every failure the user can act on is raised as `LLMError`, a `VaultBrainError` with a hint.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from vault_brain.domain.errors import LLMError

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_TIMEOUT = 60.0
DEFAULT_MAX_RETRIES = 2
LOCAL_DUMMY_KEY = "not-needed"
_LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "0.0.0.0", "host.docker.internal"})


@dataclass(frozen=True)
class LLMConfig:
    model: str
    api_key: str = field(repr=False)
    base_url: str = DEFAULT_BASE_URL
    timeout: float = DEFAULT_TIMEOUT
    max_retries: int = DEFAULT_MAX_RETRIES
    source: str = "environment"


def is_local_url(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    return host in _LOCAL_HOSTS or host.startswith("127.") or host.endswith(".localhost")


def default_config_path(env: Mapping[str, str]) -> Path:
    if env.get("VB_CONFIG"):
        return Path(env["VB_CONFIG"]).expanduser()
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME") or Path.home()) / ".config")
    return Path(base) / "vault_brain" / "config.toml"


def _read_llm_table(path: Path, explicit: bool) -> dict[str, Any]:
    if not path.is_file():
        if explicit:
            raise LLMError(
                f"config file {path} does not exist",
                hint="fix VB_CONFIG, or unset it to use ~/.config/vault_brain/config.toml",
            )
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise LLMError(
            f"config file {path} is not valid TOML: {exc}",
            hint="fix the file; the LLM settings go in an [llm] table",
        ) from None
    except OSError as exc:
        raise LLMError(f"cannot read config file {path}: {exc.strerror}") from None
    table = data.get("llm", {})
    if not isinstance(table, dict):
        raise LLMError(
            f"'llm' in {path} is not a table",
            hint="write it as [llm] with keys base_url, model, api_key, timeout, max_retries",
        )
    return table


def _text_setting(value: object, name: str, where: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise LLMError(f"{name} in {where} must be a string, not {value!r}")
    return value.strip() or None


def _number_setting(value: object, name: str, where: str, *, integer: bool) -> float | None:
    if value is None or value == "":
        return None
    try:
        if isinstance(value, bool):
            raise ValueError
        number = int(str(value)) if integer else float(str(value))
    except ValueError:
        kind = "a whole number" if integer else "a number of seconds"
        raise LLMError(f"{name} in {where} must be {kind}, not {value!r}") from None
    if number < 0 or (not integer and number == 0):
        raise LLMError(f"{name} in {where} must be positive, not {value!r}")
    return number


def load_llm_config(env: Mapping[str, str], config_path: Path | None = None) -> LLMConfig | None:
    """The configured endpoint, or None when no model is configured (use offline methods)."""
    path = config_path if config_path is not None else default_config_path(env)
    explicit = config_path is not None or bool(env.get("VB_CONFIG"))
    table = _read_llm_table(path, explicit)
    where_file = f"[llm] of {path}"

    def pick(key: str, env_name: str) -> tuple[object, str]:
        if env.get(env_name, "").strip():
            return env[env_name], env_name
        return table.get(key), f"{where_file} ({key})"

    model_raw, model_where = pick("model", "VB_LLM_MODEL")
    model = _text_setting(model_raw, "model", model_where)
    base_raw, base_where = pick("base_url", "VB_LLM_BASE_URL")
    base_url = _text_setting(base_raw, "base_url", base_where)
    key_raw, key_where = pick("api_key", "VB_LLM_API_KEY")
    api_key = _text_setting(key_raw, "api_key", key_where)
    if model is None:
        if base_url is not None:
            raise LLMError(
                f"an LLM endpoint is set ({base_where}) but no model",
                hint="set VB_LLM_MODEL (or model in the [llm] table), or unset the endpoint "
                "to use the offline methods",
            )
        return None
    source = "environment" if env.get("VB_LLM_MODEL", "").strip() else str(path)
    base_url = base_url or env.get("OPENAI_BASE_URL", "").strip() or DEFAULT_BASE_URL
    api_key = api_key or env.get("OPENAI_API_KEY", "").strip() or None
    if api_key is None:
        if not is_local_url(base_url):
            raise LLMError(
                f"no API key for the LLM endpoint {base_url} (model {model})",
                hint="set VB_LLM_API_KEY (or api_key in the [llm] table of the config file), "
                "or unset VB_LLM_MODEL to use the offline methods",
            )
        api_key = LOCAL_DUMMY_KEY
    timeout_raw, timeout_where = pick("timeout", "VB_LLM_TIMEOUT")
    timeout = _number_setting(timeout_raw, "timeout", timeout_where, integer=False)
    retries_raw, retries_where = pick("max_retries", "VB_LLM_MAX_RETRIES")
    retries = _number_setting(retries_raw, "max_retries", retries_where, integer=True)
    return LLMConfig(
        model=model,
        api_key=api_key,
        base_url=base_url.rstrip("/"),
        timeout=DEFAULT_TIMEOUT if timeout is None else timeout,
        max_retries=DEFAULT_MAX_RETRIES if retries is None else int(retries),
        source=source,
    )


def configured_api_key(env: Mapping[str, str]) -> str | None:
    """The API key vb's configuration holds, with or without a model: `VB_LLM_API_KEY`, else
    `api_key` in [llm], else `OPENAI_API_KEY`. `vb serve` sends it to the upstream it was
    told to use (so this key is not what switches vb to a paid endpoint)."""
    if env.get("VB_LLM_API_KEY", "").strip():
        return env["VB_LLM_API_KEY"].strip()
    path = default_config_path(env)
    table = _read_llm_table(path, explicit=bool(env.get("VB_CONFIG")))
    key = _text_setting(table.get("api_key"), "api_key", f"[llm] of {path}")
    return key or env.get("OPENAI_API_KEY", "").strip() or None
