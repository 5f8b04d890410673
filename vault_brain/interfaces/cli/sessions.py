"""vb loop intake|context|persist, vb flush, vb compact, vb sessions list|archive."""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer

from vault_brain.domain.errors import VaultBrainError
from vault_brain.domain.policy.scopes import parse_scopes
from vault_brain.domain.text import check_choice, counted
from vault_brain.interfaces.cli.app import app, open_api
from vault_brain.interfaces.cli.options import DryRun, JsonOpt, SessionOpt
from vault_brain.interfaces.cli.output import emit, read_content, table

loop_app = typer.Typer(
    help="Agent-loop stages for any harness: intake, context, persist.", no_args_is_help=True
)
sessions_app = typer.Typer(
    help="Session transcripts: list them, archive old ones.", no_args_is_help=True
)
app.add_typer(loop_app, name="loop")
app.add_typer(sessions_app, name="sessions")

ROLES = ("assistant", "tool_call", "tool_result", "user")
KeyOpt = Annotated[
    str | None,
    typer.Option(
        "--key",
        help="Idempotency key: a record with this key already in the transcript is not "
        "appended again, so a harness can retry a stage after a crash.",
        show_default=False,
    ),
]


@loop_app.command("intake")
def loop_intake(
    session: SessionOpt,
    message: Annotated[
        str | None, typer.Argument(help="The user's message; '-' or omitted reads stdin.")
    ] = None,
    key: KeyOpt = None,
    scope: Annotated[
        str | None,
        typer.Option(
            "--scope",
            help="The conversation's scopes, comma-separated (chat:<channel>:<id>, "
            "user:<id>): retrieval reads them and global, the flush files memories in them.",
            show_default=False,
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Append the user's message to the transcript before any model is called."""
    scopes = parse_scopes(scope)  # checked before anything is written
    result = open_api().intake(session, read_content(message), key, scopes)
    emit(result, as_json, f"{session}: {result.record['id']} user")


@loop_app.command("context")
def loop_context(
    session: SessionOpt,
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            "-f",
            help="text (a prompt) or messages-json (OpenAI Chat Completions messages).",
        ),
    ] = "text",
    as_json: JsonOpt = False,
) -> None:
    """Assemble the context: strategy, MEMORY.md, memories, summary, messages."""
    fmt = check_choice(fmt, ("text", "messages-json"), "format")
    result = open_api().context(session)
    if as_json:
        emit(result, True)
    elif fmt == "messages-json":
        sys.stdout.write(json.dumps(result.messages_openai, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(result.text)


def _json(text: str, what: str, example: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise VaultBrainError(
            f"{what} is not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})",
            hint=f"send {example}",
        ) from None


@loop_app.command("persist")
def loop_persist(
    session: SessionOpt,
    role: Annotated[
        str | None,
        typer.Option(
            "--role",
            help="assistant, tool_call, tool_result or user "
            "(without it, a JSON record or list of records is read from stdin).",
        ),
    ] = None,
    content: Annotated[
        str | None,
        typer.Option(
            "--content",
            help="Text of the record ('-' for stdin); for a tool_call, its JSON arguments.",
        ),
    ] = None,
    name: Annotated[
        str | None, typer.Option("--name", "-n", help="Tool name (tool_call, tool_result).")
    ] = None,
    call_id: Annotated[
        str | None, typer.Option("--call-id", help="Pairs a tool_result with its call.")
    ] = None,
    key: KeyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Append the reply and tool records; flush and compact when over the threshold."""
    from vault_brain.app.sessions.loop import parse_records  # lazy: keeps `vb --help` light

    if role is None:
        if key:
            raise VaultBrainError(
                "--key goes with --role", hint='JSON records on stdin carry their own "key"'
            )
        payload: Any = _json(
            read_content(None), "stdin", '{"role": "assistant", "content": "..."} or use --role'
        )
    else:
        role = check_choice(role, ROLES, "role")
        text = read_content(content) if content is not None else None
        payload = {"type": role, "content": text}
        if name:
            payload["name"] = name
        if call_id:
            payload["call_id"] = call_id
        if key:
            payload["key"] = key
        if role == "tool_call":
            payload["arguments"] = _json(
                payload.pop("content") or "{}", "--content", "the tool arguments as a JSON object"
            )
    result = open_api().persist(session, parse_records(payload))
    ids = ", ".join(str(r.get("id")) for r in result.records)
    human = f"{session}: appended {ids}"
    if result.compaction is not None and result.compaction.applied:
        human += f"; compacted {counted(result.compaction.summarized, 'message')}"
    emit(result, as_json, human)


@app.command()
def compact(
    session: SessionOpt,
    dry_run: DryRun = False,
    force: Annotated[
        bool, typer.Option("--force", help="Compact even below the threshold.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Summarise a session's older messages into one summary record."""
    result = open_api().compact_session(session, dry_run=dry_run, force=force)
    if not result.needed:
        human = (
            f"{session}: {result.tokens_before} context tokens, under the threshold; nothing to do"
        )
    else:
        verb = "would summarise" if dry_run else "summarised"
        human = (
            f"{session}: {verb} {counted(result.summarized, 'message')} "
            f"({result.first}–{result.last}); "
            f"context {result.tokens_before} -> {result.tokens_after} tokens"
        )
    emit(result, as_json, human)


@app.command()
def flush(session: SessionOpt, dry_run: DryRun = False, as_json: JsonOpt = False) -> None:
    """Save durable memories from a session's unflushed messages."""
    result = open_api().flush(session, dry_run=dry_run)
    lines = [
        f"{session}: messages {result.first}–{result.last}"
        if result.first
        else f"{session}: nothing new to flush"
    ]
    lines += [f"  {a.describe()}" for a in result.plan.actions]
    if result.dropped:
        lines.append(
            "  dropped: " + ", ".join(f"{k} {v}" for k, v in sorted(result.dropped.items()))
        )
    emit(result, as_json, "\n".join(lines))


@sessions_app.command("list")
def sessions_list(as_json: JsonOpt = False) -> None:
    """Sessions with their start, last activity, messages and tokens."""
    result = open_api().sessions()
    human = table(
        ["id", "last activity", "messages", "tokens", "title"],
        [[r.id, r.last_activity, r.message_count, r.tokens, r.title] for r in result.sessions],
    )
    emit(result, as_json, human)


@sessions_app.command("archive")
def sessions_archive(
    dry_run: DryRun = False,
    older_than_days: Annotated[
        float | None,
        typer.Option(
            "--older-than-days", min=0, help="Default: session_retention_days from STRATEGY.md."
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Move sessions idle for longer than the retention period to archive/sessions/."""
    result = open_api().archive_sessions(older_than_days, dry_run=dry_run)
    verb = "would move" if dry_run else "moved"
    human = f"{verb} {len(result.sessions)} session(s) to archive/sessions" + "".join(
        f"\n  {m}" for m in result.sessions
    )
    emit(result, as_json, human)
