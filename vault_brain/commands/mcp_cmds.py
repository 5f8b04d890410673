"""vb mcp | vb hooks claude-code | vb hook <event>."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from vault_brain.cli import JsonOpt, app, emit, open_vault
from vault_brain.errors import VaultBrainError

hooks_app = typer.Typer(
    help="Give an agent harness vb's memory through its hooks.", no_args_is_help=True
)
hook_app = typer.Typer(
    help="The commands a harness runs as hooks: read its JSON payload on stdin, answer on "
    "stdout (Claude Code).",
    no_args_is_help=True,
)
app.add_typer(hooks_app, name="hooks")
app.add_typer(hook_app, name="hook")

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
            help="Record retrievals in this session (default: $VB_SESSION_ID, else a new "
            "mcp-<time>-<pid> session).",
        ),
    ] = None,
    log_file: Annotated[
        Path | None,
        typer.Option("--log-file", help="Write logs to this file instead of stderr."),
    ] = None,
    log_level: Annotated[
        str, typer.Option("--log-level", help="DEBUG, INFO, WARNING or ERROR.")
    ] = "WARNING",
    as_json: JsonOpt = False,
) -> None:
    """Serve the memory tools over MCP on stdin/stdout (Claude Code, OpenCode, Cursor, ...)."""
    vault = open_vault()  # a missing vault fails here, before the client sees a server
    root = vault.paths.root
    if print_config is not None:
        from vault_brain.integrations import client_config

        config = client_config(print_config, root)
        text = json.dumps(config.config, indent=2, ensure_ascii=False)
        if config.shell:  # a command line and a file: say which is which
            head, tail = _CLAUDE_CODE_NOTES
            text = f"{head}\n{config.shell}\n\n{tail}\n{text}"
        emit(config.to_json(), as_json, text)  # OpenCode, Cursor: the JSON alone, to redirect
        return
    if log_level.upper() not in ("DEBUG", "INFO", "WARNING", "ERROR"):
        raise VaultBrainError(
            f"unknown log level {log_level!r}", hint="use DEBUG, INFO, WARNING or ERROR"
        )
    from vault_brain.integrations import WarmVault
    from vault_brain.sessions.transcript import check_session_id

    session = session or os.environ.get("VB_SESSION_ID") or None
    if session is not None:
        check_session_id(session)  # before the (slow) SDK import
    warm = WarmVault(root)  # reconcile and open the index while the SDK loads
    from vault_brain.integrations.mcp_server import configure_logging, serve

    configure_logging(log_file, log_level)
    serve(root, session, warm)


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
    """Print (or --install) Claude Code hooks: SessionStart injects MEMORY.md, UserPromptSubmit
    the memories for the prompt, PreCompact flushes, SessionEnd records and commits."""
    from vault_brain.integrations import vb_command
    from vault_brain.integrations.hooks import hook_commands, install_settings, settings_snippet

    commands = hook_commands(vb_command(), open_vault().paths.root)
    if not install:
        snippet = settings_snippet(commands)
        emit(
            {"settings": snippet, "installed": False},
            as_json,
            json.dumps(snippet, indent=2, ensure_ascii=False),
        )
        return
    path = settings.expanduser()
    status = install_settings(path, commands)
    changed = any(s != "unchanged" for s in status.values())
    lines = [f"{path}: {'updated' if changed else 'unchanged'}"]
    lines += [f"  {event}: {state}" for event, state in status.items()]
    emit(
        {"settings_file": str(path), "installed": True, "events": status}, as_json, "\n".join(lines)
    )


def _run_hook(slug: str) -> None:
    """Answer one hook. A failure is one line on stderr and exit status 1: Claude Code shows
    it and carries on (status 2 would block the user's prompt, so it is never used)."""
    from vault_brain.integrations import error_text
    from vault_brain.integrations.hooks import run_hook

    try:
        if sys.stdin is None or sys.stdin.isatty():
            raise VaultBrainError(
                "no payload on stdin",
                hint="Claude Code runs this command with the event's JSON on stdin",
            )
        result = run_hook(open_vault(), slug, sys.stdin.read())
    except VaultBrainError as exc:
        sys.stderr.write(f"vb hook {slug}: {error_text(exc)}\n")
        raise typer.Exit(1) from None
    for warning in result.warnings:
        sys.stderr.write(f"vb hook {slug}: warning: {warning}\n")
    sys.stdout.write(json.dumps(result.output, ensure_ascii=False) + "\n")


@hook_app.command("session-start")
def hook_session_start() -> None:
    """SessionStart: regenerate MEMORY.md and inject it as context."""
    _run_hook("session-start")


@hook_app.command("user-prompt-submit")
def hook_user_prompt_submit() -> None:
    """UserPromptSubmit: record the prompt, inject the memories retrieved for it."""
    _run_hook("user-prompt-submit")


@hook_app.command("pre-compact")
def hook_pre_compact() -> None:
    """PreCompact: import Claude Code's transcript into vb's session and flush memories."""
    _run_hook("pre-compact")


@hook_app.command("session-end")
def hook_session_end() -> None:
    """SessionEnd: import the transcript, flush, and commit the vault (if it is a git repo)."""
    _run_hook("session-end")
