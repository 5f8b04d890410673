"""Session transcripts: `sessions/<id>.jsonl`, append-only, one record per line, and the
`sessions/sessions.json` index (started, last activity, title, message count, tokens).

Messages (user, assistant, tool_call, tool_result) get sequential ids `m0001`, `m0002`, ...;
other records (retrieval, feedback, compaction, flush) refer to them. A torn last line
(a crash mid-write) is skipped when reading and terminated before the next append.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vault_brain.domain.clock import now_iso
from vault_brain.domain.sessions import MESSAGE_TYPES, message_text, record_kind, seq_of
from vault_brain.storage.files import append_jsonl, atomic_write, vault_lock
from vault_brain.storage.paths import VaultPaths
from vault_brain.storage.tokens import get_counter


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


def _message_tokens(record: dict[str, Any]) -> int:
    return get_counter().count(message_text(record))


@dataclass
class SessionInfo:
    id: str
    started: str
    last_activity: str
    title: str = ""
    message_count: int = 0
    tokens: int = 0
    context_tokens: int = 0
    bytes: int = 0
    mtime_ns: int = 0

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def account(self, record: dict[str, Any]) -> None:
        """Count a record's tokens; a compaction resets the context to what it kept."""
        kind = record_kind(record)
        if kind in MESSAGE_TYPES:
            tokens = _message_tokens(record)
            self.tokens += tokens
            self.context_tokens += tokens
            if kind == "user" and not self.title:
                self.title = _title(record.get("content"))
        elif kind == "compaction":
            self.context_tokens = int(record.get("tokens_after") or 0)


class SessionIndex:
    """`sessions/sessions.json`: a cache of the transcripts, rebuilt from them when stale."""

    def __init__(self, paths: VaultPaths) -> None:
        self.paths = paths
        self.file = paths.sessions_index

    def load(self) -> dict[str, SessionInfo]:
        try:
            data = json.loads(self.file.read_text(encoding="utf-8"))
            rows = data["sessions"]
            return {k: SessionInfo(**v) for k, v in rows.items()}
        except (OSError, ValueError, KeyError, TypeError):
            return {}

    def save(self, infos: dict[str, SessionInfo]) -> None:
        payload = {"version": 1, "sessions": {k: v.to_json() for k, v in sorted(infos.items())}}
        atomic_write(self.file, json.dumps(payload, ensure_ascii=False, indent=1) + "\n")

    def info(
        self, session_id: str, loaded: dict[str, SessionInfo] | None = None
    ) -> SessionInfo | None:
        """The session's row, recounted from its transcript if the file changed behind it."""
        path = self.paths.transcript(session_id)
        if not path.is_file():
            return None
        row = (self.load() if loaded is None else loaded).get(session_id)
        st = path.stat()
        if row is not None and (row.bytes, row.mtime_ns) == (st.st_size, st.st_mtime_ns):
            return row
        return recount(path, session_id)

    def all(self) -> list[SessionInfo]:
        """Every transcript in sessions/, each row fresh."""
        loaded = self.load()
        out = []
        for path in sorted(self.paths.sessions_dir.glob("*.jsonl")):
            info = self.info(path.stem, loaded)
            if info is not None:
                out.append(info)
        return out

    def forget(self, session_ids: list[str]) -> None:
        infos = self.load()
        for session_id in session_ids:
            infos.pop(session_id, None)
        self.save(infos)


def recount(path: Path, session_id: str) -> SessionInfo:
    """Rebuild a session's index row from its transcript."""
    info = SessionInfo(session_id, "", "")
    for record in read_records(path):
        ts = str(record.get("ts", ""))
        info.started = info.started or ts
        info.last_activity = ts or info.last_activity
        info.account(record)
        info.message_count = max(info.message_count, seq_of(record.get("id")))
    st = path.stat()
    info.bytes, info.mtime_ns = st.st_size, st.st_mtime_ns
    return info


def _title(content: Any) -> str:
    text = " ".join(str(content or "").split())
    return text if len(text) <= 60 else text[:59] + "…"


def append(
    paths: VaultPaths, session_id: str, records: list[dict[str, Any]], *, locked: bool = False
) -> list[dict[str, Any]]:
    """Append records in one write, giving messages their ids; returns the records as written.

    A record with a `key` (a harness's idempotency key) that the transcript already holds is
    not written again: the stored record is returned instead, so a stage retried after a
    crash appends its message once. Pass `locked=True` when the caller holds the vault lock."""
    if locked:
        return _append(paths, session_id, records)
    with vault_lock(paths):
        return _append(paths, session_id, records)


def _append(
    paths: VaultPaths, session_id: str, records: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    path = paths.transcript(session_id)
    known: dict[str, dict[str, Any]] = {}
    if any(r.get("key") for r in records):
        known = {str(r["key"]): r for r in read_records(path) if r.get("key")}
    if known and all(str(r.get("key")) in known for r in records):
        return [known[str(r["key"])] for r in records]
    index = SessionIndex(paths)
    infos = index.load()
    info = index.info(session_id, infos) or SessionInfo(session_id, now_iso(), now_iso())
    stamp = now_iso()
    written: list[dict[str, Any]] = []
    out: list[dict[str, Any]] = []
    for record in records:
        if record.get("key") and str(record["key"]) in known:
            out.append(known[str(record["key"])])
            continue
        full = {"ts": stamp, **record}
        if record_kind(full) in MESSAGE_TYPES:
            info.message_count += 1
            full = {"id": f"m{info.message_count:04d}", **full}
        info.account(full)
        written.append(full)
        out.append(full)
    append_jsonl(path, written)
    info.last_activity = stamp
    st = path.stat()
    info.bytes, info.mtime_ns = st.st_size, st.st_mtime_ns
    infos[session_id] = info
    index.save(infos)
    return out


def append_record(paths: VaultPaths, session_id: str, record: dict[str, Any]) -> dict[str, Any]:
    """Append one non-message record (retrieval, feedback, ...) without taking the lock twice."""
    return append(paths, session_id, [record], locked=True)[0]
