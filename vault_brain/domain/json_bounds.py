"""How deep a JSON text nests, measured without parsing it: Python's parser recurses, so a
message nested deeper than a reader allows is refused before it is parsed (`vb serve`'s
bodies, `vb mcp`'s lines)."""

from __future__ import annotations

import re
from itertools import accumulate

_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = [1 if b in b"[{" else -1 if b in b"]}" else 0 for b in range(256)]


def json_depth(raw: bytes) -> int:
    """How deep the JSON text `raw` nests arrays and objects (brackets inside strings do not
    count)."""
    brackets = _JSON_STRING.sub(b"", raw).translate(None, _NOT_BRACKETS)
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0)
