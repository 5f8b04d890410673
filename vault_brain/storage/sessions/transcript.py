"""Session transcripts: `sessions/<id>.jsonl`, append-only, one record per line, and the
`sessions/sessions.json` index (started, last activity, title, message count, tokens).

Messages (user, assistant, tool_call, tool_result) get sequential ids `m0001`, `m0002`, ...;
other records (retrieval, feedback, compaction, flush) refer to them. A torn last line
(a crash mid-write) is skipped when reading and terminated before the next append.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vault_brain.domain.clock import now_iso
from vault_brain.domain.errors import VaultBrainError
from vault_brain.domain.sessions.records import MESSAGE_TYPES, message_text, record_kind, seq_of
from vault_brain.storage.files import atomic_write, jsonl_bytes, read_inside
from vault_brain.storage.paths import VaultPaths
from vault_brain.storage.tokens import get_counter
from vault_brain.storage.transaction import Transaction, transaction


def _linked(path: Path) -> bool:
    """The transcript, its folder or (in a day shard) sessions/ is a symlink."""
    folder = path.parent
    return (
        path.is_symlink()
        or folder.is_symlink()
        or (folder.name != "sessions" and folder.parent.is_symlink())
    )


def is_transcript(path: Path) -> bool:
    """A transcript vb may read: a regular file, neither it nor sessions/ (nor its day
    shard) a symlink (a symlink there is never followed: it could lead out of the vault)."""
    return not _linked(path) and path.is_file()


def read_records(path: Path) -> Iterator[dict[str, Any]]:
    """Every complete record; a torn line (a crash mid-write) is skipped, never fatal. A
    transcript that is a symlink is refused (see `is_transcript`)."""
    if _linked(path):
        raise VaultBrainError(
            f"refusing to read sessions/{path.name}: it is a symlink (to {os.path.realpath(path)})",
            hint="vb never follows a symlink in sessions/: replace it with the transcript itself",
        )
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


# The counts of long messages made by `precount`, for the append under the vault lock that
# follows: a message of megabytes takes the tokenizer up to a second, which must not be spent
# holding the lock every other writer (feedback, other conversations' turns) waits for.
PRECOUNT_MIN_CHARS = 4096
_PRECOUNTED_MAX = 64
_precounted: OrderedDict[str, int] = OrderedDict()
_precounted_lock = threading.Lock()


def _message_tokens(record: dict[str, Any]) -> int:
    text = message_text(record)
    if len(text) >= PRECOUNT_MIN_CHARS:
        with _precounted_lock:
            counted = _precounted.get(text)
        if counted is not None:
            return counted
    return get_counter().count(text)


def precount(records: Iterable[dict[str, Any]]) -> None:
    """Count the long messages among `records` now, before the caller takes the vault lock:
    the append that follows finds their counts made."""
    for record in records:
        if record_kind(record) not in MESSAGE_TYPES:
            continue
        text = message_text(record)
        if len(text) < PRECOUNT_MIN_CHARS:
            continue
        counted = get_counter().count(text)
        with _precounted_lock:
            _precounted[text] = counted
            _precounted.move_to_end(text)
            while len(_precounted) > _PRECOUNTED_MAX:
                _precounted.popitem(last=False)


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
    """`sessions/sessions.json`: a cache of the transcripts, rebuilt from them when stale.

    Inside a transaction (`tx`), it reads and writes through it, so that several appends in
    one transaction see each other."""

    def __init__(self, paths: VaultPaths, tx: Transaction | None = None) -> None:
        self.paths = paths
        self.file = paths.sessions_index
        self.tx = tx

    def load(self) -> dict[str, SessionInfo]:
        if self.tx is not None and "sessions" in self.tx.memo:
            return dict(self.tx.memo["sessions"])
        try:
            rows = json.loads(read_inside(self.paths, self.file))["sessions"]
            fields = set(SessionInfo.__dataclass_fields__)
            return {k: SessionInfo(**{f: v[f] for f in fields if f in v}) for k, v in rows.items()}
        except (OSError, ValueError, KeyError, TypeError, VaultBrainError):
            return {}

    def save(self, infos: dict[str, SessionInfo]) -> None:
        """Write the index (a cache: inside a transaction, once the transaction commits, with
        the sizes and times the transcripts then have)."""
        if self.tx is None:
            self._write(infos)
            return
        tx = self.tx
        tx.memo["sessions"] = dict(infos)
        tx.after_commit("sessions", lambda: self._write(tx.memo["sessions"], restat=True))

    def _write(self, infos: dict[str, SessionInfo], restat: bool = False) -> None:
        # (only the rows written to in the transaction: the others' times are known, and
        # stat-ing every transcript on every append made a turn cost grow with the sessions)
        for session_id, info in infos.items() if restat else ():
            if info.mtime_ns:
                continue
            with contextlib.suppress(OSError):
                st = self.paths.transcript(session_id).stat()
                if st.st_size == info.bytes:  # as counted: note its time too
                    info.mtime_ns = st.st_mtime_ns
        # one session a line (a change is a one-line diff), by json's C encoder: the
        # indenting one is pure Python, and this file is written on every append
        rows = [
            f"  {json.dumps(k)}: {json.dumps(v.to_json(), ensure_ascii=False)}"
            for k, v in sorted(infos.items())
        ]
        text = '{"version": 1, "sessions": {\n' + ",\n".join(rows) + "\n}}\n"
        with contextlib.suppress(VaultBrainError):  # a cache: a failure costs a recount
            atomic_write(self.file, text, inside=self.paths)

    def info(
        self,
        session_id: str,
        loaded: dict[str, SessionInfo] | None = None,
        path: Path | None = None,
    ) -> SessionInfo | None:
        """The session's row, recounted from its transcript (`path`, when known) if the
        file changed behind it."""
        path = path or self.paths.transcript(session_id)
        pending = self.tx.pending_bytes(path) if self.tx is not None else b""
        if not path.is_file() and not pending:
            return None
        row = (self.load() if loaded is None else loaded).get(session_id)
        st = path.stat() if path.is_file() else None
        size = (st.st_size if st else 0) + len(pending)
        fresh = pending or (st is not None and row is not None and row.mtime_ns == st.st_mtime_ns)
        if row is not None and row.bytes == size and fresh:
            return row
        return recount(path, session_id, pending)

    def all(self) -> list[SessionInfo]:
        """Every transcript in sessions/, each row fresh."""
        loaded = self.load()
        out = []
        for path in self.paths.transcripts():
            if not is_transcript(path):
                continue
            info = self.info(path.stem, loaded, path)
            if info is not None:
                out.append(info)
        return out

    def forget(self, session_ids: list[str]) -> None:
        infos = self.load()
        for session_id in session_ids:
            infos.pop(session_id, None)
        self.save(infos)


def recount(path: Path, session_id: str, pending: bytes = b"") -> SessionInfo:
    """Rebuild a session's index row from its transcript (and records about to be appended)."""
    info = SessionInfo(session_id, "", "")
    pending_records = [json.loads(line) for line in pending.decode("utf-8").splitlines() if line]
    for record in [*read_records(path), *pending_records]:
        ts = str(record.get("ts", ""))
        info.started = info.started or ts
        info.last_activity = ts or info.last_activity
        info.account(record)
        info.message_count = max(info.message_count, seq_of(record.get("id")))
    st = path.stat() if path.is_file() else None
    info.bytes = (st.st_size if st else 0) + len(pending)
    info.mtime_ns = st.st_mtime_ns if st and not pending else 0
    return info


def _title(content: Any) -> str:
    text = " ".join(str(content or "").split())
    return text if len(text) <= 60 else text[:59] + "…"


def append(
    paths: VaultPaths,
    session_id: str,
    records: list[dict[str, Any]],
    *,
    tx: Transaction | None = None,
) -> list[dict[str, Any]]:
    """Append records in one write, giving messages their ids; returns the records as written.

    A record with a `key` (a harness's idempotency key) that the transcript already holds is
    not written again: the stored record is returned instead, so a stage retried after a
    crash appends its message once. Pass the caller's transaction `tx` to append as part of
    it; otherwise the append is its own transaction."""
    if tx is not None:
        return _append(tx, session_id, records)
    precount(records)
    with transaction(paths) as own:
        return _append(own, session_id, records)


def _append(
    tx: Transaction, session_id: str, records: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    paths = tx.paths
    path = paths.transcript(session_id)
    known: dict[str, dict[str, Any]] = {}
    if any(r.get("key") for r in records):
        known = {str(r["key"]): r for r in read_records(path) if r.get("key")}
    if known and all(str(r.get("key")) in known for r in records):
        return [known[str(r["key"])] for r in records]
    index = SessionIndex(paths, tx)
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
    tx.append_jsonl(path, written)
    info.last_activity = stamp
    info.bytes += len(jsonl_bytes(written))
    info.mtime_ns = 0  # known once the transaction commits
    infos[session_id] = info
    index.save(infos)
    return out


def append_record(tx: Transaction, session_id: str, record: dict[str, Any]) -> dict[str, Any]:
    """Append one non-message record (retrieval, feedback, ...) within a transaction."""
    return _append(tx, session_id, [record])[0]
