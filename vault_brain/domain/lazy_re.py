"""Regular expressions compiled on first use, through the process's compiler.

The capture rules are a few hundred patterns, some of them alternations of long word lists,
and the gate's are a hundred more: compiling them takes about 0.2 s, paid by every process
that imports them, even one (a server starting, a command that only searches) that never
uses most of them. A `LazyPattern` answers like the `re.Pattern` it stands for (`search`,
`match`, `finditer`, `sub`, `pattern`, ...), compiling it the first time one of them is asked
for.

Every pattern here is compiled by `compile_pattern` / `compile_derived`, which call the
compiler the process installed with `use_compiler`: `re.compile` unless the entry point
installed the cache of compiled patterns kept between processes
(`storage.regex_cache`), which gives the same `re.Pattern` without parsing the pattern again.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any


class Compiler:
    """Compiles patterns: `re.compile`. `key` names the source (it is the source, or what
    the source is derived from); `build` makes the source when it is needed."""

    def compile(self, key: str, flags: int, build: Callable[[], str]) -> re.Pattern[str]:
        return re.compile(build(), flags)

    def has(self, key: str, flags: int) -> bool:
        """Whether `compile(key, flags, ...)` would cost no compilation."""
        return False


_compiler: list[Compiler] = [Compiler()]


def use_compiler(compiler: Compiler | None) -> None:
    """Compile every later pattern with `compiler` (None: `re.compile` again)."""
    _compiler[0] = compiler or Compiler()


def compile_pattern(source: str, flags: int = 0) -> re.Pattern[str]:
    """`re.compile(source, flags)`, by the process's compiler."""
    return _compiler[0].compile(source, flags, lambda: source)


def compile_derived(key: str, build: Callable[[], str], flags: int = 0) -> re.Pattern[str]:
    """`re.compile(build(), flags)`, by the process's compiler, for a source that is a pure
    function of `key` (and of this package's code): a compiler that keeps patterns may
    answer without calling `build`."""
    return _compiler[0].compile(key, flags, build)


def is_kept(key: str, flags: int = 0) -> bool:
    """Whether the process's compiler has the pattern for `key` at hand (no compilation)."""
    return _compiler[0].has(key, flags)


class LazyPattern:
    __slots__ = ("_compiled", "_flags", "_source")

    def __init__(self, source: str, flags: int = 0) -> None:
        self._source, self._flags = source, flags
        self._compiled: re.Pattern[str] | None = None

    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = compile_pattern(self._source, self._flags)
        return self._compiled

    def __getattr__(self, name: str) -> Any:
        return getattr(self.compiled(), name)

    def __repr__(self) -> str:
        return f"lazy({self._source!r})"


def lazy(source: str, flags: int = 0) -> Any:
    """A `LazyPattern` (typed as what it answers for: an `re.Pattern[str]`)."""
    return LazyPattern(source, flags)
