"""Reading notes from files: bytes -> front matter and body -> the domain's `Note`."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from vault_brain.domain.notes.model import Note, note_from_parsed
from vault_brain.storage.notes.frontmatter import parse_text
from vault_brain.storage.regular import read_regular


def note_from_bytes(rel: str, raw: bytes) -> Note:
    parsed = parse_text(raw)
    issues = list(parsed.issues)
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        issues.insert(0, f"not UTF-8 text (byte {exc.start}); read with replacement characters")
    return note_from_parsed(
        rel, parsed.meta, parsed.body, parsed.has_front_matter, parsed.error, issues
    )


def load_note(root: Path, rel: str) -> Note:
    """The note at `rel`; a FIFO or device under a note's name is refused, not waited on
    (`NotRegularFileError`, an `OSError`)."""
    return note_from_bytes(rel, read_regular(root / PurePosixPath(rel)))
