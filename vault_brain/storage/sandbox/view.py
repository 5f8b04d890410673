"""What the session sandbox sees at /vault: a per-session copy of what its agent may read.

The container never mounts the vault itself. It mounts (read-only) a folder on the host that
holds copies of the vault's notes in the scopes the session reads (global), except archived
and private ones, and MEMORY.md (generated: global notes, redacted). Never `sessions/`
(every word a person typed), `.git` (history), `.vb/` (machine state), `logs/`, `policy/`
(mounted by itself with `--policy-rw`), STRATEGY.md, tasks.json, attachments, symlinks, a
note whose front matter says `private: true` (what `--allow-secret` stores) or gives a scope
other than the session's, or a note whose path matches STRATEGY.md's `private_paths` (the
patterns as the session started: `domain.policy.exclusions`).

Why a copy rather than the vault with masks over what is hidden: a container's mounts are
fixed when it starts, so a note made private (or a new private note) during the session
would show through; and a copy holds exactly the bytes that were checked, where a hard link
would show an in-place edit before it is checked. `refresh()` runs before each turn and
costs a stat per note (~3 ms at 1,000 notes); only a note whose (mtime, size, inode)
changed is read again (its front matter checked) and copied.

The folder is `<temp>/vb-view-<session>-<random>/vault`: its parent is private to the host
user, the copies are world-readable inside (the container may run as another uid when vb
runs as root). `remove()` deletes it; `remove_leftovers(session)` deletes what a host that
died left behind.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import tempfile
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from vault_brain.domain.policy.exclusions import marked_private, path_matches
from vault_brain.domain.policy.scopes import GLOBAL, note_scope
from vault_brain.storage.files import visible_files
from vault_brain.storage.notes.frontmatter import parse_text
from vault_brain.storage.paths import IGNORED_DIRS, is_note_path

PREFIX = "vb-view-"
SHOWN_ROOT_FILES = ("MEMORY.md",)  # the vault's own files the agent reads (OpenCode's instructions)
HIDDEN_DIRS = IGNORED_DIRS | {"archive"}  # at the vault's top: never copied
READABLE = 0o444
DIR_MODE = 0o755
MAX_NOTE_BYTES = 16 * 1024 * 1024  # a bigger .md file is not a note the agent needs
_FRONT_MATTER_PEEK = 64 * 1024
# The line that ends front matter, as python-frontmatter (which vb's reader uses) finds it: a
# line of three or more dashes and blanks alone (never earlier than the reader's end).
_FENCE = re.compile(rb"^-{3,}\s*$", re.MULTILINE)

Stamp = tuple[int, int, int]  # (mtime_ns, size, inode) of a vault file


@dataclass
class Refreshed:
    """What one refresh changed in the view."""

    copied: int = 0
    removed: int = 0
    checked: int = 0


def shown(raw: bytes, scopes: Iterable[str] = (GLOBAL,)) -> bool:
    """Whether a note with these bytes may be in the view: its front matter gives it one of
    `scopes` (none given: global) and does not mark it private. Front matter vb cannot read
    that mentions either key hides the note (fail closed)."""
    head = raw[:_FRONT_MATTER_PEEK].lstrip(b"\xef\xbb\xbf")
    if not head.startswith(b"---"):
        return GLOBAL in scopes  # no front matter: a global note
    first = head.find(b"\n")
    end = _FENCE.search(head, first + 1) if first >= 0 else None
    block = (head if end is None else head[: end.start()]).lower()
    named = b"private" in block or b"scope" in block or b"\\" in block  # (an escape spells any)
    if end is not None and not named:
        return GLOBAL in scopes  # the usual note: no YAML parsed
    parsed = parse_text(raw)  # (no end in the peek: the key may lie beyond it)
    if parsed.error is not None:
        return not named and GLOBAL in scopes
    if marked_private(parsed.meta.get("private")):
        return False
    return note_scope(parsed.meta.get("scope")) in set(scopes)


class VaultView:
    """A session's view folder (see the module doc); `create`, then `refresh` before each
    turn, `remove` at the end."""

    def __init__(
        self, vault: Path, home: Path, scopes: tuple[str, ...], private_paths: tuple[str, ...] = ()
    ) -> None:
        self.vault, self.home, self.scopes = vault, home, scopes
        self.private_paths = private_paths  # (STRATEGY.md's: never in the view)
        self.folder = home / "vault"
        self._known: dict[str, Stamp] = {}  # rel -> stamp of the vault file last checked
        self._copied: set[str] = set()  # rels present in the view
        self._kept_dirs: set[str] = set()  # folders in the view that vb keeps (mount points)

    @classmethod
    def create(
        cls, vault: Path, session: str, *, scopes: tuple[str, ...] = (GLOBAL,),
        mount_points: Iterable[str] = (), fill: bool = True, private_paths: Iterable[str] = (),
    ) -> VaultView:  # fmt: skip
        """A new view of `vault` for `session`, filled (or empty: see `filling`).
        `mount_points`: empty folders made in it for mounts over the view (e.g. "policy" for
        `--policy-rw`); `private_paths`: the folders and globs of notes it never holds."""
        home = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{session}-"))  # 0700: the host user's
        view = cls(vault.resolve(), home, scopes, tuple(private_paths))
        try:
            _mkdir(view.folder)
            for rel in mount_points:
                _mkdir(view.folder / rel)
                view._kept_dirs.add(rel)
            if fill:
                view.refresh()
        except BaseException:
            view.remove()
            raise
        return view

    def refresh(self) -> Refreshed:
        """Bring the view in line with the vault: new and changed files checked and copied
        (or removed, when now hidden), deleted ones removed."""
        done = Refreshed()
        seen: set[str] = set()
        for rel, st in self._walk():
            seen.add(rel)
            stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
            if self._known.get(rel) == stamp:
                continue
            done.checked += 1
            self._update(rel, stamp, st.st_mode, done)
        for rel in [r for r in self._known if r not in seen]:
            del self._known[rel]
            if rel in self._copied:
                self._drop(rel)
                done.removed += 1
        return done

    @contextlib.contextmanager
    def filling(self) -> Iterator[None]:
        """The view filled on a thread while the block runs: the container starts meanwhile
        (a first fill makes a file per note, 0.1-1 s at 1,000 notes on a busy disk). Nothing
        runs in the container before the block ends, and a failed fill is raised then."""
        failed: list[BaseException] = []

        def fill() -> None:
            try:
                self.refresh()
            except BaseException as exc:  # (raised on the caller's thread)
                failed.append(exc)

        thread = threading.Thread(target=fill, name="vb-view-fill", daemon=True)
        thread.start()
        try:
            yield
        finally:
            thread.join()
        if failed:
            raise failed[0]

    def remove(self) -> None:
        shutil.rmtree(self.home, ignore_errors=True)

    # -- inside ------------------------------------------------------------------------
    def _walk(self) -> Iterable[tuple[str, os.stat_result]]:
        """(rel, stat) of every vault file the view may hold: MEMORY.md and the Markdown
        files of the note folders; no symlink, nothing hidden, nothing in vb's folders."""
        for name in SHOWN_ROOT_FILES:
            with contextlib.suppress(OSError):
                st = os.lstat(self.vault / name)
                if stat.S_ISREG(st.st_mode):
                    yield name, st
        for entry, rel in visible_files(str(self.vault), HIDDEN_DIRS):
            if not is_note_path(rel):
                continue  # (MEMORY.md: above)
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                yield rel, st

    def _update(self, rel: str, stamp: Stamp, mode: int, done: Refreshed) -> None:
        source = self.vault / rel
        raw = _read(source)
        if raw is None:  # gone, unreadable, not a regular file (any more), or too big
            self._known.pop(rel, None)
        else:
            self._known[rel] = stamp
        if raw is not None and (
            rel in SHOWN_ROOT_FILES
            or (path_matches(rel, self.private_paths) is None and shown(raw, self.scopes))
        ):
            _write(self.folder, rel, raw, mode, new=rel not in self._copied)
            self._copied.add(rel)
            done.copied += 1
        elif rel in self._copied:
            self._drop(rel)
            done.removed += 1

    def _drop(self, rel: str) -> None:
        self._copied.discard(rel)
        target = self.folder / rel
        with contextlib.suppress(FileNotFoundError):
            target.unlink()
        parent = target.parent  # folders left empty go too (their names say something)
        while parent != self.folder and str(parent.relative_to(self.folder)) not in self._kept_dirs:
            try:
                parent.rmdir()
            except OSError:
                break
            parent = parent.parent


def remove_leftovers(session: str) -> None:
    """The view folders of a session whose host died (no `remove()` ran)."""
    for folder in Path(tempfile.gettempdir()).glob(f"{PREFIX}{session}-*"):
        shutil.rmtree(folder, ignore_errors=True)


def _read(path: Path) -> bytes | None:
    """The bytes of a regular file (never through a symlink), or None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_NOTE_BYTES:
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read(MAX_NOTE_BYTES + 1)[:MAX_NOTE_BYTES]
    except OSError:
        return None
    finally:
        os.close(fd)


def _mkdir(path: Path) -> None:
    path.mkdir(parents=True, exist_ok=True)
    os.chmod(path, DIR_MODE)  # (whatever the umask)


def _write(folder: Path, rel: str, data: bytes, mode: int, *, new: bool) -> None:
    """`folder/rel` holds `data` with the vault file's `mode` (and readable by all: the
    container may run as another uid): a `new` file written in place, a copy replaced whole
    (a reader sees the old or the new one); missing folders are made, readable whatever the
    umask."""
    target = folder / rel
    if not target.parent.is_dir():
        parent = folder
        for part in Path(rel).parts[:-1]:
            parent = parent / part
            if not parent.is_dir():
                _mkdir(parent)
    path = target if new else target.with_name(f".{target.name}.vbview")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        os.fchmod(fd, stat.S_IMODE(mode) & 0o777 | READABLE)
        _write_all(fd, data)
    finally:
        os.close(fd)
    if not new:
        os.replace(path, target)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
