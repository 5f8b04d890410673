"""A small adapter over the official `openai` SDK's Chat Completions.

Any OpenAI-compatible endpoint works (OpenAI, a local llama.cpp / Ollama / vLLM server, a proxy).
The SDK is imported inside the functions that call it, so `vb --help` never pays for it.

Configuration, highest precedence first:

1. environment: `VB_LLM_BASE_URL`, `VB_LLM_MODEL`, `VB_LLM_API_KEY`, `VB_LLM_TIMEOUT`,
   `VB_LLM_MAX_RETRIES`;
2. the `[llm]` table of the user config file (`$VB_CONFIG`, else
   `$XDG_CONFIG_HOME/vault_brain/config.toml`, else `~/.config/vault_brain/config.toml`) with the
   keys `base_url`, `model`, `api_key`, `timeout`, `max_retries`;
3. once a model is configured by 1 or 2 (and only then), `OPENAI_BASE_URL` and `OPENAI_API_KEY`
   fill a missing base URL or key, so an `OPENAI_API_KEY` in the shell never switches vb to a
   paid endpoint by itself.

No model configured: `load_llm_config()` returns None and callers use the offline methods.
Every failure the user can act on is raised as `LLMError`, a `VaultBrainError` with a hint.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

from vault_brain.errors import VaultBrainError

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_TIMEOUT = 60.0
DEFAULT_MAX_RETRIES = 2
LOCAL_DUMMY_KEY = "not-needed"
_LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "0.0.0.0", "host.docker.internal"})
_SNIPPET = 160

JSON_CORRECTION = (
    "Your previous reply was not a valid JSON object ({error}). Reply again with only the JSON "
    "object: no prose, no code fences."
)


class LLMError(VaultBrainError):
    """The LLM endpoint or its reply failed in a way the user can act on."""


@dataclass(frozen=True)
class LLMConfig:
    model: str
    api_key: str = field(repr=False)
    base_url: str = DEFAULT_BASE_URL
    timeout: float = DEFAULT_TIMEOUT
    max_retries: int = DEFAULT_MAX_RETRIES
    source: str = "environment"


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


@dataclass(frozen=True)
class ChatReply:
    text: str
    tool_calls: list[ToolCall]
    usage: Usage | None
    finish_reason: str | None = None


def is_local_url(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    return host in _LOCAL_HOSTS or host.startswith("127.") or host.endswith(".localhost")


def default_config_path(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
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


def load_llm_config(
    environ: Mapping[str, str] | None = None, config_path: Path | None = None
) -> LLMConfig | None:
    """The configured endpoint, or None when no model is configured (use offline methods)."""
    env = os.environ if environ is None else environ
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


def _snippet(text: str, limit: int = _SNIPPET) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def parse_json_object(text: str) -> dict[str, Any]:
    """The JSON object in a reply; tolerates a Markdown code fence around it. Raises ValueError."""
    body = text.strip()
    fenced = re.fullmatch(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)\n?```", body, flags=re.DOTALL)
    if fenced:
        body = fenced.group(1).strip()
    if not body:
        raise ValueError("the reply was empty")
    data = json.loads(body)
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object, got {type(data).__name__}")
    return data


class LLM:
    """Chat Completions against one configured endpoint; create with `LLM(config)`."""

    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        self._client: Any = None

    @classmethod
    def from_config(cls) -> LLM | None:
        """`LLM` for the configured endpoint, or None when none is configured."""
        config = load_llm_config()
        return None if config is None else cls(config)

    @property
    def model(self) -> str:
        return self.config.model

    def __enter__(self) -> LLM:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def _get_client(self) -> Any:
        if self._client is None:
            import openai

            self._client = openai.OpenAI(
                api_key=self.config.api_key,
                base_url=self.config.base_url,
                timeout=self.config.timeout,
                max_retries=self.config.max_retries,
            )
        return self._client

    def chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        json_mode: bool = False,
        max_tokens: int | None = None,
        temperature: float | None = 0,
    ) -> ChatReply:
        """One completion. `tools` are OpenAI function-tool specs; `temperature=None` omits it.

        `json_mode` sends `response_format: {"type": "json_object"}` (the messages must say
        "JSON" somewhere: OpenAI rejects the request otherwise).
        """
        import openai

        kwargs: dict[str, Any] = {"model": self.config.model, "messages": list(messages)}
        if temperature is not None:
            kwargs["temperature"] = temperature
        if tools:
            kwargs["tools"] = list(tools)
        if json_mode:
            kwargs["response_format"] = {"type": "json_object"}
        if max_tokens is not None:
            kwargs["max_tokens"] = max_tokens
        client = self._get_client()
        try:
            completion = client.chat.completions.create(**kwargs)
        except openai.OpenAIError as exc:
            raise self._translate(exc) from None
        except ValueError as exc:  # the SDK lets a broken JSON body's decode error through
            raise self._malformed(f"a body that is not valid JSON ({exc})") from None
        return self._reply(completion)

    def chat_json(self, system: str, user: str, *, max_tokens: int | None = None) -> dict[str, Any]:
        """Ask for a JSON object; one corrective retry if the reply does not parse."""
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": system},
            {"role": "user", "content": user},
        ]
        reply = self.chat(messages, json_mode=True, max_tokens=max_tokens)
        try:
            return parse_json_object(reply.text)
        except ValueError as exc:
            first_error = str(exc)
        messages += [
            {"role": "assistant", "content": reply.text},
            {"role": "user", "content": JSON_CORRECTION.format(error=first_error)},
        ]
        retry = self.chat(messages, json_mode=True, max_tokens=max_tokens)
        try:
            return parse_json_object(retry.text)
        except ValueError as exc:
            raise LLMError(
                f"model {self.config.model} at {self.config.base_url} did not return a valid "
                f"JSON object after a corrective retry ({exc}); it replied: "
                f"{_snippet(retry.text) or '(nothing)'}",
                hint="use a model that supports JSON mode (response_format json_object), or "
                "unset VB_LLM_MODEL to use the offline methods",
            ) from None

    # -- reply parsing and error translation ---------------------------------------------

    def _reply(self, completion: Any) -> ChatReply:
        choices = getattr(completion, "choices", None)
        if isinstance(completion, str) or not choices:
            what = (
                f"text that is not a Chat Completions response: {_snippet(completion)!r}"
                if isinstance(completion, str)
                else "a response without choices"
            )
            raise self._malformed(what)
        choice = choices[0]
        message = getattr(choice, "message", None)
        if message is None:
            raise self._malformed("a choice without a message")
        content = getattr(message, "content", None)
        text = content if isinstance(content, str) else ""
        calls = [self._tool_call(call) for call in getattr(message, "tool_calls", None) or []]
        raw_usage = getattr(completion, "usage", None)
        usage = None
        if raw_usage is not None:
            usage = Usage(
                prompt_tokens=int(getattr(raw_usage, "prompt_tokens", 0) or 0),
                completion_tokens=int(getattr(raw_usage, "completion_tokens", 0) or 0),
                total_tokens=int(getattr(raw_usage, "total_tokens", 0) or 0),
            )
        finish = getattr(choice, "finish_reason", None)
        return ChatReply(text, calls, usage, finish if isinstance(finish, str) else None)

    def _tool_call(self, call: Any) -> ToolCall:
        function = getattr(call, "function", None)
        name = getattr(function, "name", None)
        if function is None or not isinstance(name, str) or not name:
            raise self._malformed(f"a tool call without a function name ({_snippet(repr(call))})")
        raw = getattr(function, "arguments", None)
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            arguments: object = {}
        else:
            try:
                arguments = json.loads(raw) if isinstance(raw, str) else raw
            except ValueError as exc:
                raise LLMError(
                    f"model {self.config.model} called tool {name!r} with arguments that are "
                    f"not valid JSON ({exc.args[0] if exc.args else exc}): {_snippet(str(raw))!r}",
                    hint="retry the request; if it keeps happening, use a model with reliable "
                    "tool calling",
                ) from None
        if not isinstance(arguments, dict):
            raise LLMError(
                f"model {self.config.model} called tool {name!r} with arguments that are not "
                f"a JSON object: {_snippet(str(raw))!r}",
                hint="retry the request; if it keeps happening, use a model with reliable "
                "tool calling",
            )
        return ToolCall(id=str(getattr(call, "id", "") or ""), name=name, arguments=arguments)

    def _malformed(self, what: str) -> LLMError:
        return LLMError(
            f"the LLM endpoint {self.config.base_url} returned {what}",
            hint="check that the base URL points at an OpenAI-compatible API (usually ending "
            "in /v1) and that the server is healthy",
        )

    def _translate(self, exc: Exception) -> LLMError:
        import openai

        cfg = self.config
        endpoint = cfg.base_url
        attempts = cfg.max_retries + 1
        tried = f"after {attempts} attempts" if attempts > 1 else "with retries off"
        if isinstance(exc, openai.APITimeoutError):
            return LLMError(
                f"the LLM endpoint {endpoint} did not answer within {cfg.timeout:g}s ({tried})",
                hint="raise the timeout (VB_LLM_TIMEOUT or timeout in [llm]) or check the server",
            )
        if isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__ or exc.__context__
            detail = f": {_snippet(str(cause))}" if cause is not None and str(cause) else ""
            return LLMError(
                f"cannot reach the LLM endpoint {endpoint} ({tried}){detail}",
                hint="check VB_LLM_BASE_URL (or base_url in [llm]) and that the server is running",
            )
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            detail = _status_detail(exc)
            head = f"the LLM endpoint {endpoint} answered HTTP {status}"
            if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
                return LLMError(
                    f"{head}: the API key was refused{detail}",
                    hint="check VB_LLM_API_KEY (or api_key in [llm])",
                )
            if isinstance(exc, openai.NotFoundError):
                return LLMError(
                    f"{head} for model {cfg.model}{detail}",
                    hint="check VB_LLM_MODEL and that the base URL ends where the API does "
                    "(usually /v1)",
                )
            if isinstance(exc, openai.RateLimitError):
                return LLMError(
                    f"{head} (rate limited, {tried}){detail}",
                    hint="wait and try again, raise max_retries, or check the account's quota",
                )
            if status >= 500 or status in (408, 409):
                return LLMError(
                    f"{head} ({tried}){detail}",
                    hint="the server failed; try again later or check its logs",
                )
            return LLMError(
                f"{head}{detail}",
                hint="the request was rejected; check the model name and that the endpoint "
                "supports Chat Completions with these options",
            )
        if isinstance(exc, openai.APIResponseValidationError):
            return self._malformed(f"a response that does not match the protocol ({exc})")
        return LLMError(
            f"the LLM request to {endpoint} failed: {_snippet(str(exc))}",
            hint="check the [llm] settings (VB_LLM_BASE_URL, VB_LLM_MODEL, VB_LLM_API_KEY)",
        )


def _status_detail(exc: Any) -> str:
    body = getattr(exc, "body", None)
    message: object = None
    if isinstance(body, dict):
        error = body.get("error", body)
        message = error.get("message") if isinstance(error, dict) else error
    elif isinstance(body, str):
        message = body
    if message is None or not str(message).strip():
        return ""
    return f": {_snippet(str(message))}"
