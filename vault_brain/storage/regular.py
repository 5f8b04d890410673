"""Reading regular files only. A FIFO, socket or device that carries a note's or a project
file's name (`p.md`) is passed over, never opened for a blocking read: opening a FIFO waits
for a writer forever. Walkers check the type from their stat (`is_regular`); the read itself
opens without blocking and checks the open file again, so a FIFO swapped in after the walk
is refused too."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

NOT_REGULAR = "not a regular file"


class NotRegularFileError(OSError):
    """The path is a FIFO, socket, device or folder, not a file (an `OSError`: a reader that
    passes over unreadable files passes over this one too)."""

    def __init__(self, path: str | Path) -> None:
        super().__init__(errno.EINVAL, NOT_REGULAR, str(path))


def is_regular(st: os.stat_result) -> bool:
    return stat.S_ISREG(st.st_mode)


def read_regular(path: str | Path) -> bytes:
    """The bytes of the regular file at `path` (a symlink to one is followed);
    `NotRegularFileError` for anything else, without waiting on it."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        if not is_regular(os.fstat(fd)):
            raise NotRegularFileError(path)
    except BaseException:
        os.close(fd)
        raise
    with open(fd, "rb") as handle:
        return handle.read()
