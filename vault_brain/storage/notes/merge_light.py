"""A note's three-way merge without PyYAML, for git's per-file merge driver.

git starts one process per file, and importing PyYAML (with python-frontmatter, dataclasses
and typing) costs more than the whole budget of 30 ms per note. This module imports only
`os`, `re` and `datetime` (git merge-file runs through posix_spawn), and handles notes whose
front matter has the plain block form vb and Obsidian write: one `key: value` line per key
(a plain scalar, a quoted string without escapes, or a flow list of plain words), or `key:`
followed by `- item` lines. Within that form the front matter is valid YAML and every
counter it reads has the value the YAML reader (`storage.notes.frontmatter`) gives, so the bytes
it returns are the bytes `notes.merge.merge_note` returns (a test compares both on many
notes). Anything else -- another YAML form, a counter written another way, CRLF line ends, a
BOM, lines both sides changed (a conflict copy) -- returns None, and the caller runs
`merge_note`.
"""

from __future__ import annotations

import datetime as dt
import os
import re

from vault_brain.domain.sync.counters import (
    COUNTER_KEYS,
    LATEST_SIDE_KEYS,
    LIST_KEYS,
    anchor_new_keys,
    counter_places,
    merge_counters,
    render_float,
    shared_new_keys,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*):(?: (.*))?\n\Z")
_ITEM = re.compile(r"( *)- (.+)\n\Z")
_WORD = r"[A-Za-z0-9_][A-Za-z0-9_./-]*(?: [A-Za-z0-9_./-]+)*"
_FLOW = re.compile(rf"\[ *(?:{_WORD}(?: *, *{_WORD})*)? *\]")
_QUOTED = re.compile(r'"[^"\\]*"|\'[^\']*\'')
_INT = re.compile(r"-?[0-9]+")
_FLOAT = re.compile(r"-?[0-9]+\.[0-9]+")
_TIME = re.compile(r"\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}:\d{2}(?:\.\d{6})?[+-]\d{2}:\d{2})?")
_DATE_LIKE = re.compile(r"\d{4}-")


class Front:
    """A note's text split for the merge: its front matter lines (None: no front matter)
    and the counters they hold."""

    def __init__(self, text: str, lines: list[str] | None, counters: dict[str, Any]) -> None:
        self.text, self.lines, self.counters = text, lines, counters


def _time(text: str) -> str | None:
    """A time exactly as YAML reads it and vb writes it back (ISO 8601, seconds or
    microseconds, a numeric offset; or a date), else None."""
    if not _TIME.fullmatch(text):
        return None
    try:
        value = dt.date.fromisoformat(text) if len(text) == 10 else dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    return text if value.isoformat() == text else None


def _counter(key: str, value: str) -> Any:
    """The value of a counter line, or None when it is not written in a form read here."""
    if key in ("access_count", "credit"):
        if _INT.fullmatch(value):
            return int(value)
        if key == "credit" and _FLOAT.fullmatch(value):
            return float(value)
        return None
    return _time(value)


def _scalar_ok(value: str) -> bool:
    """A scalar YAML reads without error (its value does not matter here)."""
    if not value.isprintable():
        return False
    if value[:1] in ('"', "'"):
        return _QUOTED.fullmatch(value) is not None
    if value[:1] == "[":  # a flow list of plain words, none of them a date YAML may refuse
        return _FLOW.fullmatch(value) is not None and all(
            not _DATE_LIKE.match(word) or _time(word) is not None
            for word in (w.strip() for w in value[1:-1].split(","))
        )
    if not (value[:1].isalnum() or value[:1] == "_"):
        return False
    if ": " in value or value.endswith(":"):
        return False
    if _DATE_LIKE.match(value):  # a timestamp YAML may refuse (2023-02-30): only real ones
        return _time(value) is not None
    return True


def read(raw: bytes) -> Front | None:
    """`raw` split for the merge, or None when it is not in the form this module reads."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if "\r" in text or text.startswith("\ufeff"):
        return None
    if not text.startswith("-"):
        return Front(text, None, {})
    if not text.startswith("---\n"):
        return None
    lines = text.splitlines(keepends=True)
    counters: dict[str, Any] = {}
    list_indent: str | None = None  # after `key:`: "?" before its first `- item`, then its indent
    for i in range(1, len(lines)):
        line = lines[i]
        if line in ("---\n", "---"):
            return Front(text, lines[1:i], counters)
        item = _ITEM.match(line)
        if item and list_indent is not None:
            if list_indent == "?":
                list_indent = item.group(1)
            if item.group(1) != list_indent or not _scalar_ok(item.group(2)):
                return None
            continue
        match = _KEY.match(line)
        if match is None:
            return None
        key, value = match.group(1), (match.group(2) or "")
        if key in COUNTER_KEYS:
            parsed = _counter(key, value)
            if parsed is None or key in counters:
                return None
            counters[key] = parsed
            list_indent = None
        elif value.strip() == "":
            list_indent = "?"
        elif _scalar_ok(value):
            list_indent = None
        else:
            return None
    return None  # no closing --- line


def _render(value: Any) -> str:
    if isinstance(value, float):
        return render_float(value)
    return str(value)


def _set(front: Front, values: dict[str, Any], drop: tuple[str, ...] = ()) -> str | None:
    """The note's text with the counters set to `values` and the counters `drop` removed:
    the lines of the keys that change replaced, new keys added at the end of the front
    matter (as `frontmatter_edit` does)."""
    changes = {k: v for k, v in values.items() if k not in front.counters or front.counters[k] != v}
    drop = tuple(k for k in drop if k in front.counters)
    if not changes and not drop:
        return front.text
    if front.lines is None:
        return None  # a note without front matter gains a block: left to merge_note
    lines = [x for x in front.lines if not any(x.startswith(k + ":") for k in drop)]
    for key, value in changes.items():
        new = f"{key}: {_render(value)}\n"
        at = next((i for i, x in enumerate(lines) if x.startswith(key + ":")), None)
        if at is None:
            lines.append(new)
        else:
            lines[at] = new
    text = front.text
    head = len("---\n") + sum(len(x) for x in front.lines)
    return "---\n" + "".join(lines) + text[head:]


class MergeFileError(Exception):
    """git merge-file failed (killed, or not a merge it could make); the message is git's."""


def merge_lines(base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
    """`git merge-file`: the line-by-line three-way merge, or None when both sides changed
    the same lines. Raises OSError when git cannot run, MergeFileError when it fails."""
    scratch = _scratch()
    names = [os.path.join(scratch, n) for n in ("ours", "base", "theirs", "out", "err")]
    try:
        for name, data in zip(names, (ours, base, theirs), strict=False):
            with open(name, "wb") as handle:
                handle.write(data)
        args = ["git", "merge-file", "-p", "-L", "ours", "-L", "base", "-L", "theirs"]
        status = _run([*args, *names[:3]], names[3], names[4])
        with open(names[3], "rb") as handle:
            out = handle.read()
        with open(names[4], "rb") as handle:
            err = handle.read()
    finally:
        for name in names:
            try:  # noqa: SIM105 (contextlib is one more import)
                os.unlink(name)
            except FileNotFoundError:
                pass
        os.rmdir(scratch)
    if status == 0:
        return out
    if 0 < status < 128:
        return None
    detail = err.decode("utf-8", "replace").strip()
    raise MergeFileError(detail or f"exit status {status}")


def _run(args: list[str], out: str, err: str) -> int:
    """Run `args` with stdout and stderr into the files `out` and `err`; its exit status
    (negative: the signal that ended it). posix_spawn where there is one: importing
    subprocess costs ~3 ms."""
    if not hasattr(os, "posix_spawnp"):
        import subprocess  # lazy: where there is no posix_spawn (Windows)

        with open(out, "wb") as stdout, open(err, "wb") as stderr:
            return subprocess.run(args, stdout=stdout, stderr=stderr, check=False).returncode
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    actions = [
        (os.POSIX_SPAWN_OPEN, 1, out, flags, 0o600),
        (os.POSIX_SPAWN_OPEN, 2, err, flags, 0o600),
    ]
    pid = os.posix_spawnp(args[0], args, os.environ, file_actions=actions)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def _scratch() -> str:
    """A new private folder for git merge-file's three inputs (tempfile costs ~3 ms to
    import; this is what its mkdtemp does)."""
    root = os.environ.get("TMPDIR") or "/tmp"
    if not os.path.isdir(root):
        import tempfile  # lazy: only where there is no /tmp

        root = tempfile.gettempdir()
    for _ in range(100):
        path = os.path.join(root, f"vb-merge-{os.getpid()}-{os.urandom(6).hex()}")
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            continue
        return path
    raise FileExistsError(f"no free scratch folder name in {root}")


def one_sided(base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
    """A note's merge when at most one side changed it, else None. Two sides that changed
    it the same way are merged all the same: each side's counter increments since the
    ancestor are events of its own (two machines that each counted one access from 5 hold
    the same bytes, 6, and the merge is 7), and the line merge of equal texts is that text."""
    if theirs == base:
        return ours
    if ours == base:
        return theirs
    return None


def trivial(base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
    """The merge when at most one side changed (or both the same way), else None."""
    if ours == theirs or theirs == base:
        return ours
    if ours == base:
        return theirs
    return None


def place_counters(
    metas: list[Any], write: Callable[[int, dict[str, Any], tuple[str, ...]], str | None]
) -> list[bytes] | None:
    """The one counter step of every note merge (this module's and `merge.merge_note`'s):
    base, ours and theirs (`metas`: their front matter values) with the counters merged and
    placed as `counter_places` says, each text written by `write(i, values, drop)`; the new
    counters' lines are copied to ours' place in the other two (`anchor_new_keys`). None
    when a side cannot be written."""
    b, o, t = metas
    counters = merge_counters(b, o, t)
    at = counter_places(counters, b, t)
    texts = [
        write(0, {k: counters[k] for k in at.base}, ()),
        write(1, {k: counters[k] for k in at.ours}, ()),
        write(2, {k: counters[k] for k in at.theirs}, at.dropped),
    ]
    if texts[0] is None or texts[1] is None or texts[2] is None:
        return None
    new = (*at.new, *shared_new_keys(texts[0], texts[1], texts[2]))
    if new:
        anchored = [anchor_new_keys(texts[1], x, new) for x in (texts[0], texts[2])]
        if anchored[0] is not None and anchored[1] is not None:
            texts[0], texts[2] = anchored
    return [str(x).encode("utf-8") for x in texts]


def merge_note_light(base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
    """The merged note, or None when `merge.merge_note` must decide (see the module
    docstring); never a result that differs from it."""
    done = one_sided(base, ours, theirs)
    if done is not None:
        return done
    fronts = [read(v) for v in (base, ours, theirs)]
    if fronts[0] is None or fronts[1] is None or fronts[2] is None:
        return None
    sides = [f for f in fronts if f is not None]
    for key in (*LIST_KEYS, *LATEST_SIDE_KEYS):
        b, o, t = (_block(f, key) for f in sides)
        if o != t and o != b and t != b:
            return None  # both sides changed it: merged by rule in merge_note
    texts = place_counters(
        [f.counters for f in sides], lambda i, values, drop: _set(sides[i], values, drop)
    )
    if texts is None:
        return None
    done = trivial(*texts)
    if done is not None:
        return done
    try:
        merged = merge_lines(*texts)
    except (OSError, MergeFileError):
        return None  # merge_note runs it again and reports the failure
    if merged is None or read(merged) is None:
        return None  # a conflict copy, a failure or an unusual result: merge_note decides
    return merged


def _block(front: Front, key: str) -> str:
    """The lines of `key` in the front matter (its `key:` line and its `- item` lines)."""
    out: list[str] = []
    inside = False
    for line in front.lines or ():
        if line.startswith(key + ":"):
            inside = True
        elif not (inside and _ITEM.match(line)):
            inside = False
        if inside:
            out.append(line)
    return "".join(out)


def replace_file(path: str, data: bytes) -> None:
    """Write `data` over `path` atomically (a temp file beside it, then a rename): git reads
    OURS back after the driver and must never find half a merge there. No fsync: OURS is
    git's own temp file, which a crash of the machine makes git merge again anyway."""
    folder, name = os.path.split(path)
    suffix = ".vbtmp"  # files.TEMP_SUFFIX: what watchers and `vb sync` leave alone
    tmp = os.path.join(folder, f".{name}.{os.getpid()}.{os.urandom(4).hex()}{suffix}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:  # noqa: SIM105
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
