"""Compiled regular expressions kept between processes, as Python keeps compiled modules.

The gate's patterns (a few hundred branches) take 50-140 ms to parse and compile, which every
one-shot command that redacts a snippet and every server start would pay again. What the
standard library's compiler makes of a pattern is a list of integers for the regex engine
(`_sre`): this cache keeps those lists in one file per interpreter and hands them back to
`_sre.compile`, the call `re.compile` ends with, so a cached pattern is the same program
`re.compile` would build, without parsing it again. The engine checks the program it is given
(`_validate`) and refuses a malformed one.

- The file (`$XDG_CACHE_HOME/vault_brain/regex-<interpreter>.bin`) is marshalled data whose
  header names the interpreter exactly (`sys.version`, the engine's magic number and code
  size), the format, and the size and time of this package's files that derive patterns (the
  gate): anything else and the cache starts empty.
- Patterns not in the file are compiled by `re.compile` and their programs added; they are
  written at exit, or by `save()` (a server, once its patterns are built), merged with what
  other processes wrote meanwhile, by an atomic replace. Where Python writes no bytecode
  (`PYTHONDONTWRITEBYTECODE`, `python -B`) the cache is read but never written either, so
  such a process writes nothing of its own outside the vault.
- Anything that goes wrong (no `_sre`, an unreadable, partial or foreign file, a program the
  engine refuses, a read-only cache folder) falls back to `re.compile` silently: a cache only
  ever costs its lookup.

`install()` makes it the compiler of `domain.lazy_re`, through which every pattern of the
gate and the capture rules is compiled; the `vb` entry point installs it.
"""

from __future__ import annotations

import atexit
import contextlib
import marshal
import os
import re
import sys
import threading
from array import array
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vault_brain.domain import lazy_re

try:  # CPython's regex engine (what `re` compiles for)
    import _sre
    from re import _compiler, _parser  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - another interpreter: plain re.compile
    _sre = None

FORMAT = 1
MAX_ENTRIES = 4000  # the package's patterns are about 500: more means something leaks in
_DERIVING = ("domain/gate", "domain/lazy_re.py")  # code whose output is cached as a source

# key -> (source or None when it is the key, flags for the engine, program, groups,
# group names as (name, index) pairs, index -> name)
Entry = tuple[str | None, int, bytes, int, tuple[tuple[str, int], ...], tuple[str | None, ...]]


def cache_file(env: dict[str, str] | None = None) -> Path:
    values = os.environ if env is None else env
    root = values.get("XDG_CACHE_HOME") or str(Path(values.get("HOME") or Path.home()) / ".cache")
    tag = sys.implementation.cache_tag or sys.implementation.name
    return Path(root) / "vault_brain" / f"regex-{tag}.bin"


def _fingerprint() -> tuple[Any, ...]:
    """What the cached programs depend on besides their keys."""
    package = Path(__file__).resolve().parent.parent
    stamps = []
    for name in _DERIVING:
        path = package / name
        for file in sorted(path.glob("*.py")) if path.is_dir() else [path]:
            with contextlib.suppress(OSError):
                info = file.stat()
                stamps.append((file.name, info.st_size, info.st_mtime_ns))
    return (FORMAT, sys.version, _sre.MAGIC, _sre.CODESIZE, tuple(stamps))


class RegexCache(lazy_re.Compiler):
    """The compiled patterns of one file (see the module)."""

    def __init__(self, path: Path, writable: bool = True) -> None:
        self.path = path
        self.writable = writable
        self.hits = self.misses = 0
        self._entries: dict[tuple[str, int], Entry] | None = None
        self._new: dict[tuple[str, int], Entry] = {}
        self._header: tuple[Any, ...] | None = None
        self._typecode = next(t for t in "IL" if array(t).itemsize == _sre.CODESIZE)
        self._lock = threading.Lock()

    def compile(self, key: str, flags: int, build: Callable[[], str]) -> re.Pattern[str]:
        flags = int(flags)
        entry = self._loaded().get((key, flags))
        if entry is not None:
            pattern = self._from_entry(key, entry)
            if pattern is not None:
                self.hits += 1
                return pattern
        self.misses += 1
        source = build()
        pattern = re.compile(source, flags)
        with contextlib.suppress(Exception):  # the program for the next process
            made = self._entry(source, flags)
            self._new[(key, flags)] = made if source != key else (None, *made[1:])
        return pattern

    def has(self, key: str, flags: int) -> bool:
        return (key, int(flags)) in self._loaded()

    def save(self) -> None:
        """Write the patterns compiled since the last save, merged with the file's."""
        with self._lock:
            if not self._new or not self.writable:
                return
            new, self._new = self._new, {}
            with contextlib.suppress(OSError, ValueError):
                merged = self._read()
                merged.update(new)
                if len(merged) > MAX_ENTRIES:
                    merged = new
                self.path.parent.mkdir(parents=True, exist_ok=True)
                partial = self.path.with_name(f"{self.path.name}.{os.getpid()}.part")
                partial.write_bytes(marshal.dumps((self._fingerprint(), merged)))
                os.replace(partial, self.path)
                if self._entries is not None:
                    self._entries.update(new)

    # -- internals ---------------------------------------------------------------------
    def _fingerprint(self) -> tuple[Any, ...]:
        if self._header is None:
            self._header = _fingerprint()
        return self._header

    def _loaded(self) -> dict[tuple[str, int], Entry]:
        if self._entries is None:
            self._entries = self._read()
        return self._entries

    def _read(self) -> dict[tuple[str, int], Entry]:
        try:
            header, entries = marshal.loads(self.path.read_bytes())
        except (OSError, EOFError, ValueError, TypeError):
            return {}
        return entries if header == self._fingerprint() and isinstance(entries, dict) else {}

    def _from_entry(self, key: str, entry: Entry) -> re.Pattern[str] | None:
        source, flags, program, groups, names, index = entry
        try:
            code = array(self._typecode, program).tolist()
            return _sre.compile(source or key, flags, code, groups, dict(names), index)
        except Exception:  # a program the engine refuses: compile it again
            return None

    def _entry(self, source: str, flags: int) -> Entry:
        """What `re._compiler.compile` hands the engine for `source` (its steps, kept)."""
        parsed = _parser.parse(source, flags)
        code = _compiler._code(parsed, flags)
        names = parsed.state.groupdict
        index: list[str | None] = [None] * parsed.state.groups
        for name, i in names.items():
            index[i] = name
        program = array(self._typecode, code).tobytes()
        final = int(flags | parsed.state.flags)
        return (source, final, program, parsed.state.groups - 1, tuple(names.items()), tuple(index))


_installed: list[RegexCache] = []


def install(path: Path | None = None) -> RegexCache | None:
    """Compile `domain.lazy_re`'s patterns through the cache at `path` (the user's cache file
    by default) from now on, saving new ones at exit unless Python writes no bytecode. None
    where the interpreter has no `_sre` to hand programs to."""
    if _sre is None:
        return None
    cache = RegexCache(path or cache_file(), writable=not sys.dont_write_bytecode)
    lazy_re.use_compiler(cache)
    if not _installed:
        atexit.register(lambda: _installed[-1].save())
    _installed[:] = [cache]
    return cache


def save() -> None:
    """Write what the installed cache learnt (a server, once its patterns are built)."""
    for cache in _installed:
        cache.save()
