"""A small adapter over the official `openai` SDK's Chat Completions.

Any OpenAI-compatible endpoint works (OpenAI, a local llama.cpp / Ollama / vLLM server, a proxy).
The SDK is imported inside the functions that call it (about 0.3 s): commands that never talk to
a model never pay for it. Where the endpoint comes from is `llm.config`'s business.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from vault_brain.domain.errors import LLMError
from vault_brain.storage.llm.config import LLMConfig, load_llm_config

_SNIPPET = 160

JSON_CORRECTION = (
    "Your previous reply was not a valid JSON object of the shape asked for ({error}). Reply "
    "again with only the JSON object: no prose, no code fences."
)


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
    def from_config(cls, environ: Mapping[str, str]) -> LLM | None:
        """`LLM` for the endpoint configured in `environ` (and the config file it names), or
        None when none is configured."""
        config = load_llm_config(environ)
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
            import openai  # ~0.3 s: loaded only when a model is actually called

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
        on_text: Callable[[str], None] | None = None,
    ) -> ChatReply:
        """One completion. `tools` are OpenAI function-tool specs; `temperature=None` omits it.
        With `on_text` the reply is streamed: each piece of its text goes to `on_text` as it
        arrives (tool calls are put together by the SDK), and the whole reply is returned.

        `json_mode` sends `response_format: {"type": "json_object"}` (the messages must say
        "JSON" somewhere: OpenAI rejects the request otherwise).
        """
        import openai  # ~0.3 s: loaded only when a model is actually called

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
            if on_text is None:
                completion = client.chat.completions.create(**kwargs)
            else:
                with client.chat.completions.stream(**kwargs) as stream:
                    for event in stream:
                        if event.type == "content.delta" and event.delta:
                            on_text(event.delta)
                    completion = stream.get_final_completion()
        except openai.OpenAIError as exc:
            raise self._translate(exc) from None
        except ValueError as exc:  # the SDK lets a broken JSON body's decode error through
            raise self._malformed(f"a body that is not valid JSON ({exc})") from None
        return self._reply(completion)

    def chat_json(
        self, system: str, user: str, *, reply: str | None = None, max_tokens: int | None = None
    ) -> dict[str, Any]:
        """Ask for a JSON object (of the shape `reply` names, see `llm.replies`); one
        corrective retry if the reply does not parse or does not fit."""
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": system},
            {"role": "user", "content": user},
        ]
        error = ""
        for attempt in range(2):
            answer = self.chat(messages, json_mode=True, max_tokens=max_tokens)
            try:
                return self._checked(answer.text, reply)
            except ValueError as exc:
                error = str(exc)
            if attempt == 0:
                messages += [
                    {"role": "assistant", "content": answer.text},
                    {"role": "user", "content": JSON_CORRECTION.format(error=error)},
                ]
        raise LLMError(
            f"model {self.config.model} at {self.config.base_url} did not return a valid "
            f"JSON object after a corrective retry ({_snippet(error)}); it replied: "
            f"{_snippet(answer.text) or '(nothing)'}",
            hint="use a model that supports JSON mode (response_format json_object), or "
            "unset VB_LLM_MODEL to use the offline methods",
        )

    @staticmethod
    def _checked(text: str, reply: str | None) -> dict[str, Any]:
        """The reply's JSON object, in the shape `reply` names (ValueError if not)."""
        data = parse_json_object(text)
        if reply is None:
            return data
        from pydantic import ValidationError  # lazy: only steps that call a model

        from vault_brain.storage.llm.replies import validate_reply

        try:
            return validate_reply(reply, data)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "the reply"
            raise ValueError(f"{where}: {first['msg']}") from None

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
        import openai  # already loaded by the call that failed

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
