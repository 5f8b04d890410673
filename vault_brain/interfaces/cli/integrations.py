"""vb mcp | vb serve | vb hooks claude-code | vb hook <event>."""

from __future__ import annotations

import contextlib
import gc
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from vault_brain.domain.errors import VaultBrainError
from vault_brain.domain.sessions.records import check_session_id, new_session_id
from vault_brain.domain.text import check_choice
from vault_brain.interfaces.cli.app import app, open_api, state
from vault_brain.interfaces.cli.options import JsonOpt
from vault_brain.interfaces.cli.output import emit

if TYPE_CHECKING:
    from vault_brain.app.api import MemoryAPI

hooks_app = typer.Typer(
    help="Give an agent harness vb's memory through its hooks.", no_args_is_help=True
)
hook_app = typer.Typer(
    help="The commands a harness runs as hooks (Claude Code).\n\nEach reads the harness's "
    "JSON payload on stdin and answers on stdout.",
    no_args_is_help=True,
)
app.add_typer(hooks_app, name="hooks")
app.add_typer(hook_app, name="hook")

LOG_LEVELS = ("debug", "info", "warning", "error")
_CLAUDE_CODE_NOTES = (
    "# Claude Code: add the server for every project on this machine",
    "# or share it with a project: save this as .mcp.json in the project's root",
)


@app.command()
def mcp(
    print_config: Annotated[
        str | None,
        typer.Option(
            "--print-config",
            metavar="CLIENT",
            help="Print what claude-code, opencode or cursor needs to start this server "
            "on this vault, instead of serving.",
        ),
    ] = None,
    session: Annotated[
        str | None,
        typer.Option(
            "--session",
            "-s",
            help="Record retrievals in this session (default: $VB_SESSION_ID, else a new "
            "mcp-<time>-<pid> session).",
        ),
    ] = None,
    agent: Annotated[
        str | None,
        typer.Option(
            "--agent",
            help="Serve as the agent defined in agents/NAME.md: reads and writes only the "
            "scopes it grants (a skill agent writes nothing).",
            show_default=False,
        ),
    ] = None,
    confined: Annotated[
        bool,
        typer.Option(
            "--confined",
            help="Serve a sandboxed agent (with --session; vb session sets it): only the "
            "session's scopes (global when it has none), no memory_feedback, memory_persona "
            "or memory_compact, no transcript search, no history of a note it may not read.",
        ),
    ] = False,
    log_file: Annotated[
        Path | None,
        typer.Option("--log-file", help="Write logs to this file instead of stderr."),
    ] = None,
    log_level: Annotated[
        str, typer.Option("--log-level", help="DEBUG, INFO, WARNING or ERROR.")
    ] = "WARNING",
    as_json: JsonOpt = False,
) -> None:
    """Serve the memory tools over MCP on stdin/stdout."""
    from vault_brain.app.api import MemoryAPI  # lazy: keeps `vb --help` light
    from vault_brain.app.memory.vault import Vault

    st = state()
    vault = Vault.open(st.vault, st.env)  # a missing vault fails here, before serving
    if print_config is not None:
        from vault_brain.interfaces.clients import client_config  # lazy: start-up

        config = client_config(print_config, vault.root)
        text = json.dumps(config.config, indent=2, ensure_ascii=False)
        if config.shell:  # a command line and a file: say which is which
            head, tail = _CLAUDE_CODE_NOTES
            text = f"{head}\n{config.shell}\n\n{tail}\n{text}"
        emit(config, as_json, text)  # OpenCode, Cursor: the JSON alone, to redirect
        return
    level = check_choice(log_level, LOG_LEVELS, "log level")
    if confined and session is None:
        raise VaultBrainError(
            "--confined needs the session it is confined to", hint="pass --session ID"
        )
    session = check_session_id(session or st.env.session_id or new_session_id("mcp"))
    api = MemoryAPI.live(vault, session, source="mcp")
    if agent is not None:
        api.act_as(agent)  # an unknown or malformed agent fails here, before serving
    if confined:
        api.confine(session)
    # The SDK's import (about 0.6 s) makes 80k tracked objects and no garbage: no collection
    # runs meanwhile (60 ms saved), and what start-up made is then left out of every later
    # full collection (`gc.freeze`: fewer pauses behind the answers).
    gc.disable()
    try:
        from vault_brain.interfaces.mcp.server import configure_logging, serve
    finally:
        gc.freeze()
        gc.enable()

    configure_logging(log_file, level)
    serve(api, lambda: _warm(api))


@app.command()
def serve(
    host: Annotated[
        str,
        typer.Option(
            "--host",
            help="Address to listen on. Any but a loopback address (127.0.0.1, ::1, "
            "localhost) needs VB_SERVE_TOKEN.",
        ),
    ] = "127.0.0.1",
    port: Annotated[
        int, typer.Option("--port", help="TCP port to listen on (0: a free port, printed).")
    ] = 8100,
    unix_socket: Annotated[
        Path | None,
        typer.Option(
            "--unix-socket",
            metavar="PATH",
            help="Listen on this unix socket file (mode 0600) instead of TCP, e.g. for a "
            "container without network, through a bind mount.",
        ),
    ] = None,
    upstream: Annotated[
        str | None,
        typer.Option(
            "--upstream",
            metavar="URL",
            help="Base URL of the OpenAI-compatible API to forward to, e.g. "
            "https://api.openai.com/v1. Default: vb's LLM base URL (VB_LLM_BASE_URL with "
            "VB_LLM_MODEL, or [llm] in the config file).",
        ),
    ] = None,
    capture_idle: Annotated[
        float,
        typer.Option(
            "--capture-idle",
            metavar="SECONDS",
            help="Flush a conversation into memories once it has been quiet this long (and "
            "at most 2 minutes after its first new turn); 0: after every turn.",
        ),
    ] = 20.0,
    agent: Annotated[
        str | None,
        typer.Option(
            "--agent",
            help="Serve as the agent defined in agents/NAME.md: memories only from the "
            "scopes it reads, conversations only in scopes it writes (a skill agent records "
            "nothing).",
            show_default=False,
        ),
    ] = None,
    session_only: Annotated[
        str | None,
        typer.Option(
            "--session-only",
            metavar="ID",
            help="Serve one session (vb session sets it for its sandbox): every request goes "
            "to session ID (naming another is refused), with that session's scopes only, and "
            "no feedback; no token is asked.",
            show_default=False,
        ),
    ] = None,
    allow_origin: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-origin",
            metavar="ORIGIN",
            help="Let web pages of this origin (e.g. http://localhost:3000) use the proxy "
            "from a browser; repeatable. Without it every request with an Origin header "
            "(any web page) is refused, and no CORS header reaches a page.",
            show_default=False,
        ),
    ] = None,
    max_body: Annotated[
        float,
        typer.Option(
            "--max-body",
            metavar="MB",
            help="Largest request body vb reads (Chat Completions, feedback), in MB; "
            "larger ones get 413. Other /v1 uploads stream through up to 128 MB.",
        ),
    ] = 4.0,
) -> None:
    """Serve an OpenAI-compatible API that adds the vault's memories.

    Point any Chat Completions client at http://HOST:PORT/v1. Each request gets the
    memories for its latest user message as quoted reference data, in a user-role message
    just before it (never in the system role); the reply streams back as the upstream sends
    it, with the note ids in X-VB-Memory-Ids.
    After the response the turn goes to sessions/<id>.jsonl; once the conversation pauses
    it is flushed into memories (through the gate) and folded into its summary. Other /v1
    paths pass through untouched; POST /v1/vb/feedback {"session", "signal"} credits
    memories.

    Per request (body field, or header): memory_session / X-VB-Session (default: an id
    from the first user message), memory_top_k / X-VB-Top-K (0: none), memory_hits /
    X-VB-Memory-Hits (list the memories in a non-streaming reply), memory_scope /
    X-VB-Scope (the conversation's scopes, comma-separated: chat:<channel>:<id>,
    user:<id>; memories come from them and global, and are captured into them). vb
    removes them before forwarding.

    Keys: a client's own Authorization is forwarded; without one, vb's configured key
    (VB_LLM_API_KEY, api_key in [llm], else OPENAI_API_KEY). With VB_SERVE_TOKEN set,
    clients must send it as their bearer token (their API key); it is never forwarded.
    Tokens made by `vb token add` work the same way and carry scopes (`vb token --help`);
    once one exists, every request needs a token.

    Web pages are no clients: requests with an Origin header are refused (unless
    --allow-origin), and on loopback a Host header other than the address served
    (DNS rebinding). Bodies vb reads must be application/json, at most --max-body, whole
    within 30 s, nested at most 100 levels.
    """
    from vault_brain.app.memory.vault import Vault  # lazy: keeps `vb --help` light
    from vault_brain.interfaces.serve.server import serve as serve_proxy  # starlette, uvicorn

    st = state()
    vault = Vault.open(st.vault, st.env)  # a missing vault fails here, before serving

    def say(line: str) -> None:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()

    serve_proxy(
        vault.root,
        st.env,
        host=host,
        port=port,
        unix_path=unix_socket,
        upstream=upstream,
        capture_idle=capture_idle,
        agent=agent,
        session_only=session_only,
        allow_origins=tuple(allow_origin or ()),
        max_body=int(max_body * 1024 * 1024),
        say=say,
    )


def _warm(api: MemoryAPI) -> None:
    """Write the access counters a killed `vb mcp` or `vb session` left waiting; watch the
    vault (the index kept current without a walk before each call), reconcile and open the
    index. Failures are left for the first call, which reports them as a tool error (and
    walks the files, as it does where the system gives no watcher)."""
    import logging

    from vault_brain.app.runtime.index_keeper import keep_index  # lazy: start-up

    with contextlib.suppress(Exception):
        for session in api.recover_counters():
            logging.getLogger("vault_brain.mcp").warning(
                "wrote the access counters interrupted session %s had not written", session
            )
    with contextlib.suppress(Exception):
        keep_index(api)
        api.warm_up()


@hooks_app.command("claude-code")
def hooks_claude_code(
    install: Annotated[
        bool,
        typer.Option("--install", help="Merge the hooks into the settings file (idempotent)."),
    ] = False,
    settings: Annotated[
        Path,
        typer.Option(
            "--settings",
            help="Claude Code settings file; ~/.claude/settings.json for every project.",
        ),
    ] = Path(".claude/settings.json"),
    as_json: JsonOpt = False,
) -> None:
    """Print or install Claude Code hooks that give it vb's memory.

    SessionStart injects MEMORY.md, UserPromptSubmit the memories for the prompt, PreCompact
    flushes durable memories, SessionEnd flushes and commits the vault."""
    from vault_brain.interfaces.claude_code.settings import (  # lazy: start-up
        HookSettings,
        hook_commands,
        install_settings,
        settings_snippet,
    )
    from vault_brain.interfaces.clients import vb_command  # lazy: start-up

    commands = hook_commands(vb_command(), open_api().vault.root)
    if not install:
        snippet = settings_snippet(commands)
        emit(
            HookSettings(snippet, installed=False),
            as_json,
            json.dumps(snippet, indent=2, ensure_ascii=False),
        )
        return
    path = settings.expanduser()
    status = install_settings(path, commands)
    changed = any(s != "unchanged" for s in status.values())
    lines = [f"{path}: {'updated' if changed else 'unchanged'}"]
    lines += [f"  {event}: {state}" for event, state in status.items()]
    result = HookSettings({}, installed=True, settings_file=str(path), events=status)
    emit(result, as_json, "\n".join(lines))


def _run_hook(slug: str) -> None:
    """Answer one hook. A failure is one line on stderr and exit status 1: Claude Code shows
    it and carries on (status 2 would block the user's prompt, so it is never used)."""
    from vault_brain.interfaces.claude_code.handlers import run_hook  # lazy: start-up

    try:
        if sys.stdin is None or sys.stdin.isatty():
            raise VaultBrainError(
                "no payload on stdin",
                hint="Claude Code runs this command with the event's JSON on stdin",
            )
        result = run_hook(open_api(command=False), slug, sys.stdin.read())  # (Claude's writes)
    except VaultBrainError as exc:
        sys.stderr.write(f"vb hook {slug}: {exc.one_line()}\n")
        raise typer.Exit(1) from None
    for warning in result.warnings:
        sys.stderr.write(f"vb hook {slug}: warning: {warning}\n")
    sys.stdout.write(json.dumps(result.output, ensure_ascii=False) + "\n")


# vb hook <event>: one command per Claude Code event, each answered by `_run_hook`.
HOOKS = {
    "session-start": "SessionStart: regenerate MEMORY.md and inject it as context.",
    "user-prompt-submit": "UserPromptSubmit: record the prompt, inject the memories retrieved "
    "for it.",
    "pre-compact": "PreCompact: import Claude Code's transcript into vb's session and flush "
    "memories.",
    "session-end": "SessionEnd: import the transcript, flush, and commit the vault (if it is a "
    "git repo).",
}


def _hook(slug: str) -> Callable[[], None]:
    def answer() -> None:
        _run_hook(slug)

    return answer


for _slug, _help in HOOKS.items():
    hook_app.command(_slug, help=_help)(_hook(_slug))
