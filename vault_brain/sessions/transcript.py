"""Session transcripts: `sessions/<id>.jsonl`, append-only, one record per line."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from vault_brain.errors import VaultBrainError
from vault_brain.paths import VaultPaths
from vault_brain.vault.store import append_jsonl, now_iso

_SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def check_session_id(session_id: str) -> str:
    if not _SESSION_ID.match(session_id) or ".." in session_id:
        raise VaultBrainError(
            f"invalid session id {session_id!r}",
            hint="use letters, digits, '.', '_' or '-' (at most 128 characters, no '..')",
        )
    return session_id


def transcript_path(paths: VaultPaths, session_id: str) -> Path:
    return paths.sessions_dir / f"{check_session_id(session_id)}.jsonl"


def append_record(paths: VaultPaths, session_id: str, record: dict[str, Any]) -> dict[str, Any]:
    full = {"ts": now_iso(), **record}
    append_jsonl(transcript_path(paths, session_id), full)
    return full


def read_records(path: Path) -> Iterator[dict[str, Any]]:
    """Every complete record; a torn line (a crash mid-write) is skipped, never fatal."""
    if not path.is_file():
        return
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if not line.endswith("\n") or not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                yield record
