"""Regular expressions compiled on first use.

The capture rules are a few hundred patterns, some of them alternations of long word lists,
and the gate's are a hundred more: compiling them takes about 0.2 s, paid by every process
that imports them, even one (a server starting, a command that only searches) that never
uses most of them. A `LazyPattern` answers like the `re.Pattern` it stands for (`search`,
`match`, `finditer`, `sub`, `pattern`, ...), compiling it with `re.compile` the first time
one of them is asked for.
"""

from __future__ import annotations

import re
from typing import Any


class LazyPattern:
    __slots__ = ("_compiled", "_flags", "_source")

    def __init__(self, source: str, flags: int = 0) -> None:
        self._source, self._flags = source, flags
        self._compiled: re.Pattern[str] | None = None

    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self._source, self._flags)
        return self._compiled

    def __getattr__(self, name: str) -> Any:
        return getattr(self.compiled(), name)

    def __repr__(self) -> str:
        return f"lazy({self._source!r})"


def lazy(source: str, flags: int = 0) -> Any:
    """A `LazyPattern` (typed as what it answers for: an `re.Pattern[str]`)."""
    return LazyPattern(source, flags)
