"""Changes to several files that happen all together or not at all, even across a kill.

A transaction holds the vault lock. Its writes, creates, moves, deletes and appends are
collected in memory (reads inside it see them); nothing touches the vault until `commit`:

1. every file the transaction read and is about to replace is read again: if someone (a
   person in an editor that takes no lock) changed it meanwhile, a key edit is re-applied to
   the new content; a whole-file replacement is refused -- vb never overwrites a change it
   did not read;
2. the complete change (each file's new bytes, what it must be now, each append) is written
   to a journal in `.vb/journal/` and synced;
3. the files are changed (unlink, append, and a replace that is atomic against writers
   taking no lock: `files.replace_unless_changed` re-applies the key edit to a change that
   lands in between);
4. the journal is removed.

A kill before step 2 completes changes nothing. A kill after it leaves a journal, and the
next vb command that takes the vault lock (or opens the index) redoes it: a redo never
overwrites a file that changed since the journal was written, so a hand edit made in
between is kept, and reported. An exception inside the `with` block changes nothing: there
is nothing to roll back. Temp files left by a killed write are removed by the next scan of
the vault (`index.store.scan`).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vault_brain.domain.errors import VaultBrainError
from vault_brain.storage.files import (
    append_bytes,
    atomic_write,
    ensure_inside,
    io_error,
    jsonl_bytes,
    remove_dead_temps,
    replace_unless_changed,
    vault_lock,
)
from vault_brain.storage.paths import VaultPaths

Edit = Callable[[bytes], bytes]
_GONE = object()  # a pending delete


class ChangedMeanwhile(VaultBrainError):
    """A file vb was about to replace changed since vb read it."""

    exit_code = 4
    code = "locked"


def _digest(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


@dataclass
class RecoveryReport:
    redone: int = 0
    kept: list[str] = field(default_factory=list)
    """Files a redo left alone because they changed after the crash (a hand edit)."""


class Transaction:
    def __init__(self, paths: VaultPaths, durable: bool = True) -> None:
        self.paths = paths
        self.durable = durable
        self._final: dict[Path, bytes | object] = {}  # path -> new bytes or _GONE
        self._edits: dict[Path, list[Edit]] = {}
        self._seen: dict[Path, bytes | None] = {}  # what each file held when first read
        self._appends: dict[Path, list[bytes]] = {}
        self._after: dict[str, Callable[[], object]] = {}
        self.memo: dict[str, Any] = {}  # state a caller keeps across calls in one transaction
        self.touched: list[Path] = []

    # -- reading ---------------------------------------------------------------------------
    def read(self, path: Path) -> bytes:
        """The file as this transaction will leave it so far (raises FileNotFoundError)."""
        if path in self._final:
            data = self._final[path]
            if data is _GONE:
                raise FileNotFoundError(2, "No such file or directory", str(path))
            assert isinstance(data, bytes)
            return data
        if path not in self._seen:
            self._seen[path] = _read(path)
        data = self._seen[path]
        if data is None:
            raise FileNotFoundError(2, "No such file or directory", str(path))
        return data

    def exists(self, path: Path) -> bool:
        if path in self._final:
            return self._final[path] is not _GONE
        return os.path.lexists(path)

    # -- changing --------------------------------------------------------------------------
    def _touch(self, path: Path) -> None:
        ensure_inside(self.paths, path)
        if path not in self.touched:
            self.touched.append(path)

    def edit(self, path: Path, change: Edit) -> None:
        """Change a file by a function of its bytes (a key edit): re-applied at commit to
        the file's new content if someone changed it meanwhile. A change that gives the same
        bytes writes nothing."""
        current = self.read(path)
        new = change(current)
        if new == current and path not in self._final:
            return
        self._touch(path)
        self._final[path] = new
        self._edits.setdefault(path, []).append(change)

    def write(self, path: Path, data: bytes | str) -> None:
        """Replace a file's whole content."""
        self._touch(path)
        if path not in self._final and path not in self._seen:
            self._seen[path] = _read(path)
        self._final[path] = data.encode("utf-8") if isinstance(data, str) else data
        self._edits.pop(path, None)

    def create(self, path: Path, data: bytes | str) -> None:
        """A new file; refused if one exists (or will, in this transaction)."""
        if self.exists(path):
            raise VaultBrainError(
                f"{path} already exists; refusing to overwrite it", hint="move it away first"
            )
        self._seen.setdefault(path, None)
        self.write(path, data)

    def delete(self, path: Path) -> None:
        self.read(path)  # it must exist, and its content is what a redo must find
        self._touch(path)
        self._final[path] = _GONE
        self._edits.pop(path, None)

    def move(self, src: Path, dst: Path, data: bytes | None = None) -> None:
        """`src` to a new file `dst` (never overwritten), optionally with new content."""
        content = self.read(src) if data is None else data
        self.create(dst, content)
        self.delete(src)

    def append_jsonl(self, path: Path, records: list[dict[str, Any]]) -> None:
        self._touch(path)
        self._appends.setdefault(path, []).append(jsonl_bytes(records))

    def after_commit(self, key: str, action: Callable[[], object]) -> None:
        """Run `action` once the change is committed (the last one given per key), e.g. to
        refresh a cache of the files just written."""
        self._after[key] = action

    def pending_bytes(self, path: Path) -> bytes:
        """What this transaction will append to `path`."""
        return b"".join(self._appends.get(path, []))

    # -- committing ------------------------------------------------------------------------
    def _current_finals(self) -> dict[Path, tuple[bytes | None, bytes | object]]:
        """Each file's final state with the content it replaces, re-checked against the
        files as they are now."""
        finals: dict[Path, tuple[bytes | None, bytes | object]] = {}
        for path, final in self._final.items():
            seen = self._seen.get(path)
            now = _read(path)
            if now == seen:
                finals[path] = (now, final)
            elif path in self._edits and now is not None:
                finals[path] = (now, _compose(self._edits[path])(now))  # theirs, ours on top
            else:
                rel = path.relative_to(self.paths.root).as_posix()
                raise ChangedMeanwhile(
                    f"{rel} changed while vb was working on it; nothing was written",
                    hint="run the command again (vb re-reads the file)",
                )
        return finals

    def commit(self) -> None:
        if not self._final and not self._appends:
            return
        self._commit()
        for action in self._after.values():
            action()

    def _commit(self) -> None:
        finals = self._current_finals()
        ops: list[dict[str, Any]] = []
        for path, (base, final) in finals.items():
            rel = path.relative_to(self.paths.root).as_posix()
            pre = _digest(base)  # what the change was computed from, not a later read
            if final is _GONE:
                ops.append({"op": "delete", "path": rel, "pre": pre})
            else:
                assert isinstance(final, bytes)
                data = base64.b64encode(final).decode("ascii")
                ops.append({"op": "put", "path": rel, "pre": pre, "data": data})
        for path, chunks in self._appends.items():
            rel = path.relative_to(self.paths.root).as_posix()
            size = path.stat().st_size if path.exists() else 0
            data = base64.b64encode(b"".join(chunks)).decode("ascii")
            ops.append({"op": "append", "path": rel, "size": size, "data": data})
        journal = _write_journal(self.paths, ops)  # nothing changed if this fails
        edits = {
            path.relative_to(self.paths.root).as_posix(): _compose(changes)
            for path, changes in self._edits.items()
        }
        try:
            _apply(self.paths, ops, durable=self.durable, edits=edits)
        except (OSError, VaultBrainError) as exc:
            raise _unfinished(self.paths, exc) from exc
        _remove_journal(journal)


def _compose(changes: list[Edit]) -> Edit:
    def apply_all(data: bytes) -> bytes:
        for change in changes:
            data = change(data)
        return data

    return apply_all


def _unfinished(paths: VaultPaths, exc: OSError | VaultBrainError) -> VaultBrainError:
    err = exc if isinstance(exc, VaultBrainError) else io_error(exc, exc.filename or "a file")
    return VaultBrainError(
        f"{err.message}; the change is recorded in {paths.journal_dir.name}/ and will be "
        "finished by the next vb command",
        hint=f"{err.hint}; then run any vb command (e.g. `vb status`)",
    )


def _write_journal(paths: VaultPaths, ops: list[dict[str, Any]]) -> Path:
    folder = paths.journal_dir
    path = folder / f"{time.time_ns()}-{uuid.uuid4().hex[:8]}.json"
    payload = json.dumps({"version": 1, "ops": ops}).encode("utf-8")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write(path, payload, durable=True)
        _sync_dir(folder)
    except VaultBrainError as exc:
        with contextlib.suppress(OSError):
            path.unlink()
        raise VaultBrainError(f"{exc.message}; nothing was changed", hint=exc.hint) from None
    return path


def _remove_journal(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()
        _sync_dir(path.parent)


def _sync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _apply(
    paths: VaultPaths,
    ops: list[dict[str, Any]],
    durable: bool,
    edits: dict[str, Edit] | None = None,
) -> list[str]:
    """Bring each file to its journaled state; idempotent. A file that no longer is what the
    journal expected (changed by hand since) gets its key edit from `edits` re-applied on
    top, or is left alone and returned. Each replace is atomic against writers that take no
    lock (`replace_unless_changed`)."""
    kept: list[str] = []
    written: list[Path] = []
    for op in ops:
        path = paths.note(op["path"])
        ensure_inside(paths, path)
        if op["op"] == "append":
            data = base64.b64decode(op["data"])
            current = _read(path) or b""
            if current[op["size"] : op["size"] + len(data)] == data:
                continue  # already appended
            if len(current) > op["size"]:
                os.truncate(path, op["size"])  # a torn append: cut back, then append whole
            append_bytes(path, data, durable=False)
            written.append(path)
            continue
        existing = _read(path)
        if op["op"] == "delete":
            if existing is None:
                continue
            if _digest(existing) != op["pre"]:
                kept.append(op["path"])
                continue
            path.unlink()
            continue
        data = base64.b64decode(op["data"])
        if existing == data:
            continue
        rebase = (edits or {}).get(op["path"])
        try:
            if _digest(existing) != op["pre"]:
                if rebase is None or existing is None:
                    kept.append(op["path"])
                    continue
                data = rebase(existing)  # changed since the journal: the key edit on top
            if not replace_unless_changed(path, data, existing, rebase):
                kept.append(op["path"])
                continue
        except VaultBrainError:  # the key edit no longer applies to what the person wrote
            kept.append(op["path"])
            continue
        written.append(path)
    if durable and written:
        _sync(written)
    return kept


def _sync(written: list[Path]) -> None:
    """Make the applied files durable before the journal goes: a few files one by one,
    many with one call for the whole system."""
    if len(written) > 8:
        os.sync()
        return
    for path in written:  # a failure here keeps the journal: the next command redoes it
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    for folder in {p.parent for p in written}:
        _sync_dir(folder)


def pending_journals(paths: VaultPaths) -> list[Path]:
    try:
        return sorted(paths.journal_dir.glob("*.json"))
    except OSError:
        return []


def recover(paths: VaultPaths) -> RecoveryReport:
    """Finish every journaled change a kill interrupted (call with the vault lock held).
    Temp files a killed writer left are removed by the next scan of the vault."""
    report = RecoveryReport()
    for journal in pending_journals(paths):
        try:
            ops = json.loads(journal.read_text(encoding="utf-8"))["ops"]
        except (OSError, ValueError, KeyError, TypeError):
            journal.unlink(missing_ok=True)  # a journal torn before it was synced: never applied
            continue
        report.kept += _apply(paths, ops, durable=True)
        report.redone += 1
        _remove_journal(journal)
    return report


@contextlib.contextmanager
def transaction(
    paths: VaultPaths, timeout: float | None = None, durable: bool = True
) -> Iterator[Transaction]:
    """Hold the vault lock, finish what an earlier crash left, collect the changes made in
    the block and commit them when it ends (an exception in the block changes nothing)."""
    with vault_lock(paths, timeout):
        if pending_journals(paths):
            recover(paths)
        remove_dead_temps(paths.journal_dir, paths.root)
        tx = Transaction(paths, durable=durable)
        yield tx
        tx.commit()
