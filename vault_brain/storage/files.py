"""The one place that writes files.

Atomic replace (temp file in the same folder, fsync, `os.replace`), the vault lock
that serialises writers across processes, append-only JSONL, and the checks that
keep caller-supplied names and paths inside the vault.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

from vault_brain.domain.errors import LockedError, VaultBrainError
from vault_brain.storage.paths import VaultPaths

_UMASK = os.umask(0o022)
os.umask(_UMASK)


def io_error(exc: OSError, path: Any) -> VaultBrainError:
    if exc.errno == errno.ENOSPC:
        return VaultBrainError(
            f"disk full while writing {path}; nothing was changed",
            hint="free some space on that disk and run the command again",
        )
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return VaultBrainError(
            f"cannot write {path}: {exc.strerror}",
            hint="check the folder's permissions or whether the disk is read-only",
        )
    return VaultBrainError(
        f"cannot write {path}: {exc.strerror or exc}", hint="check the disk and the path"
    )


def atomic_write(path: Path, data: bytes | str, *, durable: bool = True) -> None:
    """Write `data` to `path` so that readers see the old or the new file, never a part."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".vbtmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        try:
            mode = path.stat().st_mode & 0o7777
        except FileNotFoundError:
            mode = 0o666 & ~_UMASK  # what open() would have given a new file
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise io_error(exc, path) from exc
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_cache(path: Path, data: bytes | str) -> None:
    """Best-effort write of a machine-local cache file: a failure only costs speed."""
    with contextlib.suppress(VaultBrainError):
        atomic_write(path, data, durable=False)


def append_jsonl(
    path: Path, record: dict[str, Any] | list[dict[str, Any]], *, durable: bool = True
) -> None:
    """Append JSON lines in one write; a torn earlier line is terminated first so records
    never merge. Several records given together land together or not at all."""
    records = record if isinstance(record, list) else [record]
    lines = [json.dumps(r, ensure_ascii=False, separators=(",", ":"), default=str) for r in records]
    payload = ("\n".join(lines) + "\n").encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    size = 0
    try:
        with open(path, "ab+") as handle:
            size = handle.seek(0, os.SEEK_END)
            if size:
                handle.seek(size - 1)
                if handle.read(1) != b"\n":
                    payload = b"\n" + payload
            handle.write(payload)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
    except OSError as exc:
        if exc.errno == errno.ENOSPC and path.exists():
            with contextlib.suppress(OSError):
                os.truncate(path, size)
        raise io_error(exc, path) from exc


@contextlib.contextmanager
def file_lock(lock_path: Path, what: str, timeout: float) -> Iterator[None]:
    import filelock  # lazy: ~7 ms, and a search with nothing to reconcile takes no lock

    lock_path.parent.mkdir(parents=True, exist_ok=True)
    lock = filelock.FileLock(str(lock_path), timeout=timeout)
    try:
        lock.acquire()
    except filelock.Timeout:
        raise LockedError(
            f"the {what} is locked by another vb process (waited {lock.timeout:g}s)",
            hint="wait for it to finish, or raise VB_LOCK_TIMEOUT; "
            f"if no vb process is running, delete {lock_path}",
        ) from None
    try:
        yield
    finally:
        lock.release()


def vault_lock(
    paths: VaultPaths, timeout: float | None = None
) -> contextlib.AbstractContextManager[None]:
    """Serialise every writer of notes, logs and transcripts across processes."""
    return file_lock(paths.vault_lock, "vault", paths.lock_timeout if timeout is None else timeout)


# ---------------------------------------------------------------------------
# Untrusted names and paths


def safe_relpath(paths: VaultPaths, given: str) -> str:
    """A caller-supplied path -> POSIX path relative to the vault root, refusing escapes."""
    raw = given.replace("\\", "/").strip()
    if not raw or "\x00" in raw:
        raise VaultBrainError(f"invalid path {given!r}", hint="give a path inside the vault")
    candidate = Path(raw)
    absolute = candidate if candidate.is_absolute() else paths.root / candidate
    resolved = Path(os.path.normpath(absolute))
    try:
        rel = resolved.relative_to(paths.root)
    except ValueError:
        raise VaultBrainError(
            f"path {given!r} is outside the vault",
            hint=f"give a path inside {paths.root}",
        ) from None
    # a symlink inside the vault must not lead outside it either
    real = Path(os.path.realpath(absolute))
    if real != resolved and not real.is_relative_to(Path(os.path.realpath(paths.root))):
        raise VaultBrainError(f"path {given!r} leads outside the vault", hint="remove the symlink")
    posix = PurePosixPath(*rel.parts).as_posix()
    if posix in ("", "."):
        raise VaultBrainError(f"path {given!r} is the vault itself", hint="give a note's path")
    return posix


def note_path(paths: VaultPaths, rel: str) -> Path:
    return paths.note(safe_relpath(paths, rel))


class Transaction:
    """File changes that can be undone: every write, create and move records how to reverse it.

    Used under the vault lock for multi-step changes (archive, lifecycle plans, feedback on
    several notes): if a step fails, `rollback()` puts every touched file back as it was.
    """

    def __init__(self) -> None:
        self._undo: list[tuple[Path, bytes | None]] = []
        self.touched: list[Path] = []

    def _remember(self, path: Path) -> None:
        try:
            original: bytes | None = path.read_bytes()
        except FileNotFoundError:
            original = None
        self._undo.append((path, original))
        self.touched.append(path)

    def write(self, path: Path, data: bytes | str, *, durable: bool = True) -> None:
        """`durable=False` skips fsync (still atomic): for counters that the fsynced logs
        can rebuild, where a crash may at worst lose the last increment."""
        self._remember(path)
        atomic_write(path, data, durable=durable)

    def create(self, path: Path, data: bytes | str) -> None:
        if path.exists():
            raise VaultBrainError(
                f"{path} already exists; refusing to overwrite it", hint="move it away first"
            )
        self.write(path, data)

    def move(self, src: Path, dst: Path, data: bytes | None = None) -> None:
        """Move `src` to a new file `dst`, optionally with new content; the destination is never
        overwritten and the source is removed only after the destination is complete."""
        content = src.read_bytes() if data is None else data
        self.create(dst, content)
        self._remember(src)
        src.unlink()

    def rollback(self) -> None:
        for path, original in reversed(self._undo):
            with contextlib.suppress(OSError, VaultBrainError):
                if original is None:
                    path.unlink(missing_ok=True)
                else:
                    atomic_write(path, original)
        self._undo.clear()


@contextlib.contextmanager
def transaction(paths: VaultPaths, timeout: float | None = None) -> Iterator[Transaction]:
    """Hold the vault lock; roll every change back if the block raises."""
    with vault_lock(paths, timeout):
        tx = Transaction()
        try:
            yield tx
        except BaseException:
            tx.rollback()
            raise
