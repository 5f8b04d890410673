"""The one place that writes files.

Atomic replace (temp file in the same folder, fsync, `os.replace`), append-only JSONL, the
locks that serialise writers across processes, and the checks that keep every path vb writes
-- given by a caller or built by vb -- inside the vault, with no symlink leading out.
Multi-file changes go through `transaction.Transaction`, which journals them first.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Collection, Iterator
from pathlib import Path, PurePosixPath
from typing import Any

from vault_brain.domain.errors import LockedError, VaultBrainError
from vault_brain.storage.paths import VaultPaths
from vault_brain.storage.regular import NOT_REGULAR, NotRegularFileError, read_regular

_UMASK = os.umask(0o022)
os.umask(_UMASK)


def io_error(exc: OSError, path: Any) -> VaultBrainError:
    """The user-facing error for a failed write. It says what failed, not what state the
    vault is in: the caller that knows (a transaction) adds that."""
    if exc.errno == errno.ENOSPC:
        return VaultBrainError(
            f"disk full while writing {path}",
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


TEMP_SUFFIX = ".vbtmp"


def dead_temp_file(name: str) -> bool:
    """True for a temp file (`.<name>.<pid>.<random>.vbtmp`) whose writer is gone: a kill
    left it, and nothing will ever rename it."""
    if not (name.startswith(".") and name.endswith(TEMP_SUFFIX)):
        return False
    parts = name[: -len(TEMP_SUFFIX)].rsplit(".", 2)
    try:
        pid = int(parts[-2])
    except (ValueError, IndexError):
        return True  # not ours to wait for: written before temp names carried the pid
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def remove_dead_temps(*folders: Path) -> None:
    """Remove the temp files killed writers left in these folders (not their subfolders)."""
    for folder in folders:
        with contextlib.suppress(OSError), os.scandir(folder) as entries:
            for entry in entries:
                if dead_temp_file(entry.name):
                    with contextlib.suppress(OSError):
                        os.unlink(entry.path)


_FOLDER_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)


def open_folder(path: str) -> int | None:
    """A descriptor of the folder at `path` (to list it, and to `stat` its entries by name
    alone), or None when it cannot be opened (gone, not a folder, not readable)."""
    try:
        return os.open(path, _FOLDER_FLAGS)
    except OSError:
        return None


def visible_files(
    root: str,
    skip_top: Collection[str] = frozenset(),
    hidden: Callable[[str, str], None] | None = None,
) -> Iterator[tuple[os.DirEntry[str], str]]:
    """Every file under `root` a person sees, as (its entry, its path relative to `root`), by
    one walk of `os.scandir`: hidden files and folders are left out (`hidden(name, path)` is
    told of each), as are the top folders named in `skip_top`; a symlink to a folder is not
    followed (it is yielded as a file: the caller decides what to do with links).

    Each folder is listed through a descriptor of its own, so an entry's `stat()` looks its
    name up in that folder rather than walking the whole path again (at 100,000 notes, a
    third of a walk's stat calls); an entry's `path` is therefore only its name: the file's
    path is `root` joined with the relative path."""
    stack = [(root, "")]
    while stack:
        folder, prefix = stack.pop()
        fd = open_folder(folder)
        if fd is None:
            continue
        try:
            with os.scandir(fd) as entries:
                for entry in entries:
                    name = entry.name
                    if name[0] == ".":
                        if hidden is not None:
                            hidden(name, os.path.join(folder, name))
                        continue
                    try:
                        is_dir = entry.is_dir(follow_symlinks=False)
                    except OSError:
                        continue
                    if not is_dir:
                        yield entry, prefix + name
                    elif prefix or name not in skip_top:
                        stack.append((os.path.join(folder, name), f"{prefix}{name}/"))
        except OSError:
            continue
        finally:
            os.close(fd)


def _outside(paths: VaultPaths, path: Path) -> tuple[str, str] | None:
    """(`path` as shown, its real path) when that real path lies outside the vault, else None."""
    real = os.path.realpath(path)
    real_root = os.path.realpath(paths.root)
    if real == real_root or real.startswith(real_root + os.sep):
        return None
    try:
        return path.relative_to(paths.root).as_posix(), real
    except ValueError:
        return str(path), real


def ensure_inside(paths: VaultPaths, path: Path) -> None:
    """Refuse to write `path` unless it lies inside the vault and no component of it that
    exists (a folder, or the file itself) is a symlink leading out of the vault. Called
    immediately before each write, for paths from callers and paths vb builds alike."""
    probe = path
    while not os.path.lexists(probe) and probe != probe.parent:
        probe = probe.parent
    outside = _outside(paths, probe)
    if outside is not None:
        shown, real = outside
        raise VaultBrainError(
            f"refusing to write {path.name}: {shown} leads outside the vault (to {real})",
            hint="replace that symlink with a real folder inside the vault",
        )


def read_inside(paths: VaultPaths, path: Path) -> bytes:
    """The bytes of a vault file vb generates or trusts (STRATEGY.md, tasks.json, MEMORY.md,
    sessions.json, ...), refusing one that is, or lies under, a symlink leading out of the
    vault: a synced symlink must not make vb read (and sync back) a file outside it. Only a
    regular file is read (a FIFO would hang). FileNotFoundError when it is not there."""
    real = check_read_inside(paths, path)
    try:
        return read_regular(real)
    except NotRegularFileError:
        raise VaultBrainError(
            f"refusing to read {path.name}: {NOT_REGULAR}", hint="replace it with a file"
        ) from None


def check_read_inside(paths: VaultPaths, path: Path) -> str:
    """`path`'s real path, unless it leads outside the vault (then the error of `read_inside`)."""
    outside = _outside(paths, path)
    if outside is not None:
        shown, real = outside
        raise VaultBrainError(
            f"refusing to read {shown}: it leads outside the vault (to {real})",
            hint="replace that symlink with the file itself: vb never reads through a symlink "
            "out of the vault",
        )
    return os.path.realpath(path)


def atomic_write(
    path: Path, data: bytes | str, *, durable: bool = True, inside: VaultPaths | None = None
) -> None:
    """Write `data` to `path` so that readers see the old or the new file, never a part.
    With `inside`, the path is checked to stay inside that vault first."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    if inside is not None:
        ensure_inside(inside, path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = None
    try:
        tmp = _temp_beside(path, payload, durable)
        os.replace(tmp, path)
    except OSError as exc:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise io_error(exc, path) from exc


def _temp_beside(path: Path, payload: bytes, durable: bool) -> str:
    """A temp file in `path`'s folder holding `payload`, with the mode `path` has."""
    fd, tmp = tempfile.mkstemp(
        prefix=f".{path.name}.{os.getpid()}.", suffix=TEMP_SUFFIX, dir=path.parent
    )
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
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: str, b: str) -> bool:
    """Swap two paths atomically (Linux `renameat2(RENAME_EXCHANGE)`); False where the
    system or file system cannot."""
    if _renameat2 is None:
        return False
    rc = _renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False  # this file system cannot: fall back to check-then-replace
    raise OSError(err, os.strerror(err), b)


def _load_renameat2() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        func = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    func.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    return func


_renameat2 = _load_renameat2()


def replace_unless_changed(
    path: Path,
    data: bytes,
    expected: bytes | None,
    rebase: Callable[[bytes], bytes] | None = None,
    *,
    durable: bool = False,
) -> bool:
    """Replace `path` with `data` only if it still holds `expected` (None: does not exist),
    for files that writers taking no lock -- a person's editor -- may change at any moment.
    If someone else's content turns up, `rebase` recomputes ours from it; without one,
    theirs stays and False is returned.

    The file is read just before the replace. On Linux the replace then is an atomic swap
    (`RENAME_EXCHANGE`) and what it displaced is inspected: a stranger's write that landed
    in between is put back at once and becomes the base of the next round, so it is never
    lost. Elsewhere that window of microseconds stays open."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if expected is None:
        return _create(path, data, durable)
    candidate = data
    for _ in range(100):
        current = _read_or_none(path)
        if current is None:
            return False  # deleted meanwhile: the deletion stays
        if current != expected:
            if rebase is None:
                return False
            expected, candidate = current, rebase(current)
            continue
        tmp = _temp_beside(path, candidate, durable)
        try:
            if not _exchange(tmp, str(path)):
                os.replace(tmp, path)
                return True
            displaced = _read_or_none(Path(tmp))
            if displaced == expected:
                return True
            _exchange(tmp, str(path))  # a stranger's write came in between: put it back
        except FileNotFoundError:
            return False
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    raise VaultBrainError(
        f"{path.name} keeps changing while vb writes it", hint="close the editor and run again"
    )


def _create(path: Path, data: bytes, durable: bool) -> bool:
    """Create `path` unless a file is there; False if one is (it stays)."""
    tmp = _temp_beside(path, data, durable)
    try:
        return _create_only(tmp, path)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _create_only(tmp: str, path: Path) -> bool:
    """Move `tmp` to `path` unless a file is there; False if one is (it stays)."""
    try:
        os.link(tmp, path)  # atomic create-if-absent
        return True
    except FileExistsError:
        return False
    except OSError:  # a file system without hard links: check, then rename
        if os.path.lexists(path):
            return False
        os.replace(tmp, path)
        return True


def _read_or_none(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def stamp(path: Path) -> tuple[int, int] | None:
    """A file's (mtime_ns, size), or None when it is not there: enough to tell it changed."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def write_cache(path: Path, data: bytes | str) -> None:
    """Best-effort write of a machine-local cache file: a failure only costs speed."""
    with contextlib.suppress(VaultBrainError):
        atomic_write(path, data, durable=False)


def jsonl_bytes(records: list[dict[str, Any]]) -> bytes:
    """Records as JSON lines, one per record."""
    lines = [json.dumps(r, ensure_ascii=False, separators=(",", ":"), default=str) for r in records]
    return ("\n".join(lines) + "\n").encode("utf-8")


def append_jsonl(
    path: Path,
    record: dict[str, Any] | list[dict[str, Any]],
    *,
    durable: bool = True,
    inside: VaultPaths | None = None,
) -> None:
    """Append JSON lines in one write; a torn earlier line is terminated first so records
    never merge. Several records given together land together or not at all."""
    records = record if isinstance(record, list) else [record]
    append_bytes(path, jsonl_bytes(records), durable=durable, inside=inside)


def append_bytes(
    path: Path, payload: bytes, *, durable: bool = True, inside: VaultPaths | None = None
) -> None:
    """Append `payload` (whole lines) to `path`, terminating a torn last line first; on a full
    disk the file is cut back to where it was."""
    if inside is not None:
        ensure_inside(inside, path)
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


def _command() -> str:
    """What this process is, for a lock's owner note: `vb` and its command words only (an
    argument may be private text)."""
    words = [w for w in sys.argv[1:] if not w.startswith("-")][:2]
    return " ".join(["vb", *words])


def _owner(lock_path: Path) -> str:
    """Who holds a lock, from the owner note its holder wrote (pid, command, since when)."""
    try:
        info = json.loads(lock_path.with_name(lock_path.name + ".owner").read_text("utf-8"))
        held = max(0.0, time.time() - float(info["since"]))
        os.kill(int(info["pid"]), 0)  # a note left by a process that is gone says nothing
        return f"another vb process: `{info['command']}` (pid {info['pid']}, for {held:.0f}s)"
    except (OSError, ValueError, KeyError, TypeError):
        return "another vb process"


@contextlib.contextmanager
def file_lock(lock_path: Path, what: str, timeout: float) -> Iterator[None]:
    """Hold an exclusive lock on `lock_path`, waiting at most `timeout` seconds (retrying with
    a growing pause). The OS releases it when the holder exits, however it exits; the holder
    leaves a note of who it is, so a waiter can say what it waited for."""
    import filelock  # lazy: ~7 ms, and a search with nothing to reconcile takes no lock

    lock_path.parent.mkdir(parents=True, exist_ok=True)
    lock = filelock.FileLock(str(lock_path), timeout=0)
    deadline = time.monotonic() + timeout
    pause = 0.01
    while True:
        try:
            lock.acquire(timeout=0)
            break
        except filelock.Timeout:
            left = deadline - time.monotonic()
            if left <= 0:
                raise LockedError(
                    f"the {what} is locked by {_owner(lock_path)} (waited {timeout:g}s)",
                    hint="wait for it to finish and run the command again, or raise "
                    "VB_LOCK_TIMEOUT to wait longer",
                ) from None
            time.sleep(min(pause, left))
            pause = min(pause * 2, 0.25)
    owner = lock_path.with_name(lock_path.name + ".owner")
    with contextlib.suppress(OSError):
        note = {"pid": os.getpid(), "command": _command(), "since": time.time()}
        owner.write_text(json.dumps(note), encoding="utf-8")
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            owner.unlink()
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
