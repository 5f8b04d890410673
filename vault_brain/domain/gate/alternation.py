"""The gate's long alternations, compiled so that Python's regex engine tries few branches per
position once a process judges much text. The engine has no prefix optimisation for an
alternation of patterns that begin with `\\b`: at every position of a text it tries every
branch (a hundred for the injection patterns, about 350 us per 200 characters, most of a
warm memory search).

- `any_of(...)` joins patterns in order, each run of consecutive word-boundary-led patterns
  under one `\\b`: the same match at the same position with the same branch (finditer and
  spans unchanged), tried only where a word begins or ends.
- `any_tested(...)` is for patterns only ever tested (`search` as a yes/no): it also
  dispatches on the first character a branch can consume, with a lookahead per group of
  first characters, so at a word start only the branches that can begin with its letter
  run (5x faster on the injection patterns). A pattern whose first characters cannot be
  worked out is tried at every word boundary, as before.

Both return an `Alternation`, compiled on first use as the plain alternation of its parts,
and in the fast form once used `FAST_AFTER` times (or when a server starts:
`build_fast_forms`): the fast forms take about 130 ms to
build (three times the plain ones), which a one-shot command judging a few snippets would
pay for nothing, and a server or a flush earns back within a second. Where the process's
compiler keeps the fast form from an earlier process (`lazy_re.is_kept`: the cache of
compiled patterns the `vb` entry point installs), it is used from the first search.

The first characters come from the standard library's regex parser (`re._parser`, the
parser `re.compile` itself uses); should it ever be missing, the plain form stays: slower,
the same answers."""

from __future__ import annotations

import re
from typing import Any

from vault_brain.domain.lazy_re import compile_derived, compile_pattern, is_kept

try:  # (private to the standard library, present from Python 3.11 on)
    from re import _constants as C  # type: ignore[attr-defined]
    from re import _parser as P  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - a later Python without them
    C = P = None

_MAX_RANGE = 400  # a character range wider than this counts as "any character"
FAST_AFTER = 300  # uses of a pattern after which its fast form is built
_ALL: list[Alternation] = []  # every alternation made (for `build_fast_forms`)


def build_fast_forms() -> None:
    """Build every alternation's fast form now: a long-lived process does this while it
    starts, so that its first requests do not run on the plain forms."""
    for alternation in _ALL:
        alternation.fast()


class Alternation:
    """An alternation of `parts` with `re.Pattern`'s `search` and `finditer`: the plain
    form until it has been used `FAST_AFTER` times, then the fast one (see the module)."""

    def __init__(self, parts: tuple[str, ...], tested: bool) -> None:
        self.parts, self.tested = parts, tested
        self._uses = 0
        self._plain: re.Pattern[str] | None = None
        self._fast: re.Pattern[str] | None = None
        _ALL.append(self)

    def search(self, text: str) -> re.Match[str] | None:
        return self._pattern().search(text)

    def finditer(self, text: str) -> Any:
        return self._pattern().finditer(text)

    def plain(self) -> re.Pattern[str]:
        """The plain alternation of the parts (what the fast one answers as)."""
        if self._plain is None:
            self._plain = compile_pattern(_plain(self.parts))
        return self._plain

    def fast(self) -> re.Pattern[str]:
        """The fast form (the plain one where the parser is missing)."""
        if self._fast is None:
            if P is None:
                self._fast = self.plain()
            else:
                self._fast = compile_derived(
                    self._fast_key(),
                    lambda: _dispatched(self.parts) if self.tested else _in_runs(self.parts),
                )
        return self._fast

    def _fast_key(self) -> str:
        kind = "dispatched" if self.tested else "in runs"
        return "\0".join((f"alternation {kind}", *self.parts))

    def _pattern(self) -> re.Pattern[str]:
        if self._fast is not None:
            return self._fast
        self._uses += 1  # (a race between threads at worst builds a form twice)
        if self._uses > FAST_AFTER or (
            self._uses == 1 and P is not None and is_kept(self._fast_key())
        ):
            return self.fast()
        return self.plain()


def _plain(parts: tuple[str, ...]) -> str:
    return "|".join(f"(?:{p})" for p in parts)


def _boundary_led(items: Any) -> bool:
    """Whether every match of the parsed pattern starts with `\\b`."""
    items = list(items)
    if not items:
        return False
    op, av = items[0]
    if op is C.AT:
        return bool(av is C.AT_BOUNDARY)
    if op is C.SUBPATTERN:
        return _boundary_led(av[3])
    if op is C.BRANCH:
        return all(_boundary_led(branch) for branch in av[1])
    return False


def _first(items: Any) -> tuple[set[str] | None, bool]:
    """(the characters a match can start with, or None for unknown; whether it can be empty)."""
    found: set[str] = set()
    for op, av in items:
        chars, empty = _first_of(op, av)
        if chars is None:
            return None, False
        found |= chars
        if not empty:
            return found, False
    return found, True


def _first_of(op: Any, av: Any) -> tuple[set[str] | None, bool]:
    if op is C.LITERAL:
        return {chr(av)}, False
    if op is C.IN:
        chars: set[str] = set()
        for kind, value in av:
            if kind is C.LITERAL:
                chars.add(chr(value))
            elif kind is C.RANGE and value[1] - value[0] < _MAX_RANGE:
                chars.update(chr(c) for c in range(value[0], value[1] + 1))
            else:  # a negated set, a category (\w, \d): any character
                return None, False
        return chars, False
    if op in (C.AT, C.ASSERT, C.ASSERT_NOT):  # zero-width: what follows decides
        return set(), True
    if op is C.SUBPATTERN:
        if av[1] & C.SRE_FLAG_IGNORECASE:
            return None, False
        return _first(av[3])
    if op is C.BRANCH:
        union: set[str] = set()
        empty = False
        for branch in av[1]:
            chars_b, empty_b = _first(branch)
            if chars_b is None:
                return None, False
            union |= chars_b
            empty = empty or empty_b
        return union, empty
    if op in (C.MAX_REPEAT, C.MIN_REPEAT, getattr(C, "POSSESSIVE_REPEAT", None)):
        repeated, empty = _first(av[2])
        return repeated, empty or av[0] == 0
    return None, False


def any_of(*parts: str) -> Alternation:
    """The alternation of `parts`, in order (see the module's text)."""
    return Alternation(parts, tested=False)


def any_tested(*parts: str) -> Alternation:
    """An alternation of `parts` for yes/no tests only: which branch matches, and where
    among equally early matches, may differ from `any_of`'s (see the module's text)."""
    return Alternation(parts, tested=True)


def _in_runs(parts: tuple[str, ...]) -> str:
    runs: list[tuple[bool, list[str]]] = []
    for part in parts:
        led = _boundary_led(P.parse(part))
        if led and runs and runs[-1][0]:
            runs[-1][1].append(part)
        else:
            runs.append((led, [part]))
    joined = [rf"\b(?:{_plain(tuple(ps))})" if led else _plain(tuple(ps)) for led, ps in runs]
    return _plain(tuple(joined))


def _dispatched(parts: tuple[str, ...]) -> str:
    led = [p for p in parts if _boundary_led(P.parse(p))]
    others = tuple(p for p in parts if p not in led)
    by_char: dict[str, list[str]] = {}
    anywhere: list[str] = []
    for part in led:
        chars, empty = _first(P.parse(part))
        if chars is None or empty:
            anywhere.append(part)
            continue
        for char in chars:
            by_char.setdefault(char, []).append(part)
    groups: dict[tuple[str, ...], list[str]] = {}
    for char, group in by_char.items():
        groups.setdefault(tuple(group), []).append(char)
    branches = [
        f"(?=[{''.join(re.escape(c) for c in sorted(chars))}])(?:{_plain(group)})"
        for group, chars in groups.items()
    ]
    branches += [f"(?:{p})" for p in anywhere]
    pattern = rf"\b(?:{'|'.join(branches)})" if branches else ""
    if others:
        pattern = f"{pattern}|{_plain(others)}" if pattern else _plain(others)
    return pattern
