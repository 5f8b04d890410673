"""vb loop intake|context|persist, vb compact, vb flush, vb sessions list|archive."""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer

from vault_brain.cli import JsonOpt, app, emit, open_vault, read_content
from vault_brain.errors import VaultBrainError
from vault_brain.render import table

loop_app = typer.Typer(
    help="Agent-loop stages for any harness: intake, context, persist.", no_args_is_help=True
)
sessions_app = typer.Typer(
    help="Session transcripts: list, archive old ones.", no_args_is_help=True
)
app.add_typer(loop_app, name="loop")
app.add_typer(sessions_app, name="sessions")

SessionOpt = Annotated[
    str, typer.Option("--session", "-s", help="Session id (letters, digits, . _ -).")
]
DryRun = Annotated[bool, typer.Option("--dry-run", help="Show what would happen; write nothing.")]


@loop_app.command("intake")
def loop_intake(
    session: SessionOpt,
    message: Annotated[
        str | None, typer.Argument(help="The user's message; '-' or omitted reads stdin.")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Append the user's message to the transcript before any model is called."""
    from vault_brain.sessions.loop import intake

    record = intake(open_vault(), session, read_content(message))
    emit({"record": record}, as_json, f"{session}: {record['id']} user")


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
    """Assemble the context: strategy, MEMORY.md, retrieved memories, summary, recent messages."""
    from vault_brain.sessions.loop import build_context

    if fmt not in ("text", "messages-json"):
        raise VaultBrainError(
            f"unknown format {fmt!r}", hint="use --format text or --format messages-json"
        )
    ctx = build_context(open_vault(), session)
    if as_json:
        emit({**ctx.to_json(), "text": ctx.to_text(), "messages_openai": ctx.to_messages()}, True)
    elif fmt == "messages-json":
        sys.stdout.write(json.dumps(ctx.to_messages(), ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(ctx.to_text())


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
        str | None, typer.Option("--content", help="Text of the record ('-' for stdin).")
    ] = None,
    name: Annotated[
        str | None, typer.Option("--name", help="Tool name (tool_call, tool_result).")
    ] = None,
    call_id: Annotated[
        str | None, typer.Option("--call-id", help="Pairs a tool_result with its call.")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Append the reply and tool records; flush and compact when over the threshold."""
    from vault_brain.sessions.loop import parse_records, persist

    if role is None:
        raw = read_content(None)
        try:
            payload: Any = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise VaultBrainError(
                f"stdin is not JSON ({exc.msg})",
                hint='send {"role": "assistant", "content": "..."} or use --role',
            ) from None
    else:
        payload = {"type": role, "content": read_content(content) if content is not None else None}
        if name:
            payload["name"] = name
        if call_id:
            payload["call_id"] = call_id
        if role == "tool_call":
            payload["arguments"] = json.loads(payload.pop("content") or "{}")
    result = persist(open_vault(), session, parse_records(payload))
    ids = ", ".join(str(r.get("id")) for r in result.records)
    human = f"{session}: appended {ids}"
    if result.compaction and result.compaction.get("applied"):
        human += f"; compacted {result.compaction['summarized']} messages"
    emit(result.to_json(), as_json, human)


@app.command()
def compact(
    session: SessionOpt,
    dry_run: DryRun = False,
    force: Annotated[
        bool, typer.Option("--force", help="Compact even below the threshold.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Summarise all but the last messages into one summary record (the raw lines stay)."""
    from vault_brain.sessions.compaction import compact as run
    from vault_brain.sessions.loop import _llm

    result = run(
        open_vault(), session, dry_run=dry_run, force=force, llm=None if dry_run else _llm()
    )
    if not result.needed:
        human = (
            f"{session}: {result.tokens_before} context tokens, under the threshold; nothing to do"
        )
    else:
        verb = "would summarise" if dry_run else "summarised"
        human = (
            f"{session}: {verb} {result.summarized} messages ({result.first}–{result.last}); "
            f"context {result.tokens_before} -> {result.tokens_after} tokens"
        )
    emit({"dry_run": dry_run, **result.to_json()}, as_json, human)


@app.command()
def flush(
    session: SessionOpt,
    dry_run: DryRun = False,
    as_json: JsonOpt = False,
) -> None:
    """Capture durable memories from messages not flushed yet (entities + one episode)."""
    from vault_brain.sessions.flush import flush as run
    from vault_brain.sessions.loop import _llm

    result = run(open_vault(), session, dry_run=dry_run, llm=_llm())
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
    emit({"dry_run": dry_run, **result.to_json()}, as_json, "\n".join(lines))


@sessions_app.command("list")
def sessions_list(as_json: JsonOpt = False) -> None:
    """Sessions with their start, last activity, messages and tokens."""
    from vault_brain.sessions.transcript import SessionIndex

    index = SessionIndex(open_vault().paths)
    rows = [r.to_json() for r in sorted(index.all(), key=lambda r: r.last_activity, reverse=True)]
    human = table(
        ["id", "last activity", "messages", "tokens", "title"],
        [[r["id"], r["last_activity"], r["message_count"], r["tokens"], r["title"]] for r in rows],
    )
    emit({"sessions": rows}, as_json, human)


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
    from vault_brain.sessions.retention import archive_sessions

    moved = archive_sessions(open_vault(), older_than_days, dry_run=dry_run)
    verb = "would move" if dry_run else "moved"
    emit(
        {"dry_run": dry_run, "sessions": moved},
        as_json,
        f"{verb} {len(moved)} session(s) to archive/sessions" + "".join(f"\n  {m}" for m in moved),
    )
