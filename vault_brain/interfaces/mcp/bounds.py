"""Bounds on what `vb mcp` reads. One JSON-RPC message is one line on stdin; a line longer
than `MAX_LINE_BYTES` or nested deeper than `MAX_DEPTH` never reaches the SDK, whose parser
drops a message nested too deep without answering it (the client waits for ever) and would
hold a line of any length in memory.

A thread stands between stdin and the SDK (`guard_stdin`): it passes every other line on as it
came, and puts in place of a refused one a small request, `vb/refused`, with the refused
message's id, which `refuse` (a middleware of the server) answers with a JSON-RPC error that
says why. The client gets its answer, and the server goes on to the next call. The size of a
tool's text is bounded further in: a memory longer than the gate scans is refused before any
scan (`app.memory.guard.check_size`)."""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from typing import IO, Any

from vault_brain.domain.json_bounds import json_depth

log = logging.getLogger("vault_brain.mcp")

MAX_LINE_BYTES = 32 * 1024 * 1024
MAX_DEPTH = 64  # vb's tools take at most 5 levels (request, params, arguments, a list)
REFUSED = "vb/refused"
_HEAD = 64 * 1024  # where a refused line's id is looked for (and at its very end)
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')
_VALUE = re.compile(rb'\s*:\s*(-?\d+|"[^"\\]*(?:\\.[^"\\]*)*")')
_LAST_ID = re.compile(rb'"id"\s*:\s*(-?\d+|"[^"\\]*(?:\\.[^"\\]*)*")\s*\}\s*$')


def too_deep(line: bytes) -> bool:
    """Whether a JSON text nests arrays and objects deeper than `MAX_DEPTH` (brackets inside
    strings do not count)."""
    if line.count(b"[") + line.count(b"{") <= MAX_DEPTH:
        return False
    return json_depth(line) > MAX_DEPTH


def request_id(head: bytes, tail: bytes = b"") -> int | str | None:
    """The id of the request whose line begins with `head` and ends with `tail`: its top-level
    "id" key, looked for in the first `_HEAD` bytes, then as the line's last key."""
    depth = 0
    for match in _TOKEN.finditer(head[:_HEAD]):
        token = match.group()
        if token in (b"[", b"{"):
            depth += 1
        elif token in (b"]", b"}"):
            depth -= 1
        elif depth == 1 and token == b'"id"':
            value = _VALUE.match(head, match.end())
            return _loaded(value.group(1)) if value else None
    last = _LAST_ID.search((tail or head)[-512:])
    return _loaded(last.group(1)) if last else None


def _loaded(raw: bytes) -> int | str | None:
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, int | str) else None


def guard_stdin() -> None:
    """Put the guard between this process's stdin and whatever reads fd 0 from now on."""
    source = os.fdopen(os.dup(0), "rb", buffering=1 << 16)
    read_end, write_end = os.pipe()
    os.dup2(read_end, 0)
    os.close(read_end)
    sink = os.fdopen(write_end, "wb")
    threading.Thread(target=_forward, args=(source, sink), name="vb-mcp-stdin", daemon=True).start()


def _forward(source: IO[bytes], sink: IO[bytes]) -> None:
    with source, sink:
        while line := source.readline(MAX_LINE_BYTES + 1):
            why, rid = None, None
            if len(line) > MAX_LINE_BYTES:
                why = f"the message is longer than {MAX_LINE_BYTES // 2**20} MB"
                head, tail = line, line
                while tail and not tail.endswith(b"\n"):  # the rest of the line, dropped
                    tail = source.readline(MAX_LINE_BYTES)
                rid = request_id(head, tail.rstrip(b"\n"))
            elif too_deep(line):
                why = f"the message is nested deeper than {MAX_DEPTH} levels"
                rid = request_id(line, line.rstrip(b"\n"))
            if why is None:
                sink.write(line)
                sink.flush()
                continue
            log.warning("refused a message: %s", why)
            if rid is not None:  # (a notification has no id: nobody waits for an answer)
                refusal = {"jsonrpc": "2.0", "id": rid, "method": REFUSED, "params": {"why": why}}
                sink.write(json.dumps(refusal).encode() + b"\n")
                sink.flush()


async def refuse(ctx: Any, call_next: Any) -> Any:
    """The server's answer to a refused message (see the module): a JSON-RPC error."""
    if ctx.method == REFUSED:
        from mcp.shared.exceptions import MCPError
        from mcp.types import INVALID_REQUEST

        why = str((ctx.params or {}).get("why", "the message was refused"))
        raise MCPError(
            INVALID_REQUEST,
            f"refused: {why} (hint: send a smaller request; vb mcp reads messages of at most "
            f"{MAX_LINE_BYTES // 2**20} MB nested at most {MAX_DEPTH} deep)",
        )
    return await call_next(ctx)
