"""Whoosh's files read through one memory map each, without copying.

Whoosh keeps each segment in one compound file and reads it through `mmap`, but hands every
part of it (terms, postings, each column, stored fields: about 25 per segment) to its
readers as a `BufferFile`, which copies the part into a `BytesIO` each time a segment is
opened. A process that searches while another commits (the MCP server records each search's
hits, so its next search opens the index again) paid that copy at every search: at 100,000
notes, about 70 ms of copying (under cProfile) and some 20 to free it, for a search that
takes 10.

`MappedStorage` is Whoosh's `FileStorage` whose files are `MappedFile`s: a read-only view of
a memory map, whose parts (`subset`, what a compound file asks for when the storage does not
offer Whoosh's own mapping) are views of the same map. Nothing is copied but what is read.
"""

from __future__ import annotations

import mmap
import os
import sys
import time
from array import array
from typing import Any

from whoosh.filedb.filestore import FileStorage
from whoosh.filedb.structfile import StructFile

PEEK = 512  # bytes `peek` returns: a postings block's header, pickled, is about 100


class MappedView:
    """The file-like reading of a `memoryview` that `StructFile` wraps (read, seek, tell,
    readline: what Whoosh and `pickle.load` ask of a file)."""

    __slots__ = ("_buf", "_pos", "_size", "closed")

    def __init__(self, buf: memoryview) -> None:
        self._buf, self._pos, self._size, self.closed = buf, 0, len(buf), False

    def read(self, n: int | None = -1) -> bytes:
        start = self._pos
        end = start + n if n is not None and n >= 0 else self._size
        if end > self._size:
            end = self._size
        if end > start:
            self._pos = end
        return self._buf[start:end].tobytes()

    def peek(self, n: int = 0) -> bytes:
        """Some bytes from here on, without reading them: `pickle.load` takes a short run
        (its prefetch) and reads what it used, instead of calling `read` for each part of
        an object (about 20 calls for a postings block's header)."""
        return self._buf[self._pos : self._pos + PEEK].tobytes()

    def readline(self, limit: int | None = -1) -> bytes:
        start = self._pos
        end = self._size if limit is None or limit < 0 else min(start + limit, self._size)
        stop = end
        for at in range(start, end, 256):  # (the lines pickle reads are short)
            found = self._buf[at : min(at + 256, end)].tobytes().find(b"\n")
            if found >= 0:
                stop = at + found + 1
                break
        self._pos = max(stop, start)
        return self._buf[start:stop].tobytes()

    def seek(self, pos: int, whence: int = os.SEEK_SET) -> int:
        base = {os.SEEK_SET: 0, os.SEEK_CUR: self._pos, os.SEEK_END: self._size}[whence]
        self._pos = max(0, base + pos)
        return self._pos

    def tell(self) -> int:
        return self._pos

    def close(self) -> None:
        self.closed = True


class MappedFile(StructFile):
    """A read-only `StructFile` over a view of a memory map; `subset` is a view of it."""

    def __init__(self, buf: memoryview, name: str | None = None) -> None:
        super().__init__(MappedView(buf), name=name)
        self._buf, self._called = buf, name

    def subset(self, position: int, length: int, name: str | None = None) -> MappedFile:
        return MappedFile(self._buf[position : position + length], name=name or self._called)

    def get(self, position: int, length: int) -> bytes:
        return self._buf[position : position + length].tobytes()

    def get_array(self, position: int, typecode: str, length: int) -> array[Any]:
        a = array(typecode)
        a.frombytes(self.get(position, length * a.itemsize))
        if sys.byteorder == "little":  # (Whoosh writes arrays big-endian)
            a.byteswap()
        return a

    def close(self) -> None:
        # The map is unmapped when the last view of it is gone: a reader still holding a
        # part of this file may outlive the file object itself.
        self.file.close()
        self.is_closed: bool = True


class MappedStorage(FileStorage):
    """Whoosh's `FileStorage`, reading each file through one memory map (see the module).
    Compound segments are read through `MappedFile.subset`, so Whoosh's own mapping (and
    its copies) is turned off."""

    supports_mmap = False

    def __init__(self, path: str) -> None:
        super().__init__(path, supports_mmap=False)

    def open_file(self, name: str, **kwargs: Any) -> StructFile:
        path = os.path.join(os.path.abspath(self.folder), name)
        f = open(path, "rb")  # noqa: SIM115 (kept open for an empty file)
        try:
            if os.fstat(f.fileno()).st_size == 0:  # (an empty file cannot be mapped)
                return StructFile(f, name=name, **kwargs)
            mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except BaseException:
            f.close()
            raise
        f.close()  # (the map stays)
        return MappedFile(memoryview(mapped), name=name)


OPEN_ATTEMPTS = 3


def open_dir(path: str) -> Any:
    """The Whoosh index in `path`, read through `MappedStorage`. Whoosh opens the latest
    table of contents it lists; a commit by another process (a watcher) may remove that one
    before it is read: a file gone meanwhile is looked for again, twice, before the error
    (a damaged index) is raised."""
    for _ in range(OPEN_ATTEMPTS - 1):
        try:
            return MappedStorage(path).open_index()
        except FileNotFoundError:
            time.sleep(0.01)
    return MappedStorage(path).open_index()


def create_in(path: str, schema: Any) -> Any:
    """A new, empty Whoosh index in `path`, read through `MappedStorage`."""
    return MappedStorage(path).create_index(schema)
