"""Tool errors in vb's words: every failure of a tool call, arguments that do not fit the
tool's schema as well, becomes a `VaultBrainError` and is answered as `{code, message, hint}`
(`answers.failed`), the document the CLI's `--json` gives under `error`."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import ValidationError

from vault_brain.domain.errors import UsageError, VaultBrainError

_MAX_NAMED = 3  # arguments named in one message; the rest are counted


def _field(loc: tuple[Any, ...]) -> str:
    name = ""
    for part in loc:
        name += f"[{part}]" if isinstance(part, int) else (f".{part}" if name else str(part))
    return name or "the arguments"


def _problem(error: Any) -> str:
    """One argument's problem, e.g. "limit must be at most 100"."""
    name, kind, ctx = _field(tuple(error.get("loc", ()))), error.get("type", ""), error.get("ctx")
    ctx = ctx or {}
    said = {
        "missing": f"{name} is required",
        "literal_error": f"{name} must be {ctx.get('expected')}",
        "less_than_equal": f"{name} must be at most {ctx.get('le')}",
        "greater_than_equal": f"{name} must be at least {ctx.get('ge')}",
        "less_than": f"{name} must be less than {ctx.get('lt')}",
        "greater_than": f"{name} must be more than {ctx.get('gt')}",
        "int_parsing": f"{name} must be a whole number",
        "int_type": f"{name} must be a whole number",
        "int_from_float": f"{name} must be a whole number",
        "string_type": f"{name} must be text",
        "string_too_short": f"{name} must not be empty",
        "string_too_long": f"{name} must be at most {ctx.get('max_length')} characters",
        "too_long": f"{name} may hold at most {ctx.get('max_length')} items",
        "list_type": f"{name} must be a list",
        "bool_parsing": f"{name} must be true or false",
        "bool_type": f"{name} must be true or false",
    }
    return said.get(kind) or f"{name}: {error.get('msg', 'invalid')}"


def _allowed(name: str, spec: dict[str, Any]) -> str | None:
    """What a parameter of the input schema takes, e.g. "limit: 1 to 100"."""
    options = [spec, *spec.get("anyOf", [])]
    for option in options:
        if "enum" in option:
            return f"{name}: one of {', '.join(str(v) for v in option['enum'])}"
        if "minimum" in option and "maximum" in option:
            return f"{name}: {option['minimum']} to {option['maximum']}"
        if option.get("maxLength"):
            return f"{name}: text of at most {option['maxLength']} characters"
        if option.get("type") == "array" and option.get("maxItems"):
            return f"{name}: a list of at most {option['maxItems']} items"
    return None


def bad_arguments(tool: str, exc: ValidationError, schema: dict[str, Any] | None) -> UsageError:
    """A call whose arguments do not fit `tool`'s input `schema`, said in vb's words."""
    errors = exc.errors(include_url=False, include_input=False)
    problems = list(dict.fromkeys(_problem(e) for e in errors))
    message = "; ".join(problems[:_MAX_NAMED])
    if len(problems) > _MAX_NAMED:
        message += f" (and {len(problems) - _MAX_NAMED} more)"
    properties = (schema or {}).get("properties", {})
    names = list(dict.fromkeys(str(e["loc"][0]) for e in errors if e.get("loc")))
    takes = [t for n in names if n in properties and (t := _allowed(n, properties[n]))]
    hint = (
        "; ".join(takes)
        if takes
        else f"see {tool}'s input schema (tools/list) for the arguments it takes"
    )
    return UsageError(f"{tool}: {message}", hint=hint)


def unknown_tool(name: str, tools: list[str]) -> UsageError:
    return UsageError(f"unknown tool {name!r}", hint=f"the tools are: {', '.join(sorted(tools))}")


class InternalError(VaultBrainError):
    """A bug in vb (the server logs its traceback and keeps going)."""

    code = "internal"


class Failed(ToolError):
    """A tool's failure, carrying the error its answer says (`answers.failed`)."""

    def __init__(self, error: VaultBrainError) -> None:
        super().__init__(error.one_line())
        self.error = error


def internal(exc: BaseException) -> VaultBrainError:
    """A bug: the client still gets a reason, and the server keeps going."""
    return InternalError(
        f"internal error in vb ({type(exc).__name__}: {exc}); the server keeps running",
        hint="run `vb status` to see notes vb could not read, and report the error",
    )
