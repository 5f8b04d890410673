"""`vb export`: the notes of the vault (or of one persona, read from git without switching)
as a JSON document with a versioned schema or a Markdown file readable on its own, with each
note's history from git on request (`app.sync.history`)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from vault_brain.app.memory.results import Result, result, to_json
from vault_brain.app.memory.vault import Vault
from vault_brain.domain.clock import now_iso
from vault_brain.domain.errors import NotFoundError, UsageError
from vault_brain.domain.notes.model import Note
from vault_brain.domain.policy.exclusions import is_private
from vault_brain.domain.views.export import ExportNote, export_note, to_json_text, to_markdown
from vault_brain.storage.index.scan import is_ignored_rel
from vault_brain.storage.notes.read import load_note, note_from_bytes

FORMATS = ("json", "markdown")


@result
class ExportResult(Result):
    format: str
    persona: str | None
    """The persona exported (None: the vault's files as they are now)."""
    notes: int
    text: str
    """The export itself."""


def _persona_notes(vault: Vault, persona: str) -> tuple[list[Note], bool]:
    """The notes of `persona` from git, and whether it is the one checked out."""
    from vault_brain.storage.git import persona as pg  # lazy: GitPython
    from vault_brain.storage.git import sync as g

    repo = g.open_repo(vault.root)
    try:
        pg.require(repo, persona)
        rel = Path(os.path.relpath(vault.root.resolve(), g.top(repo).resolve())).as_posix()
        prefix = "" if rel == "." else rel + "/"
        files = pg.files_at(repo, f"refs/heads/{persona}", prefix)
        checked_out = pg.current(repo) == persona
    finally:
        repo.close()
    notes = [note_from_bytes(p, raw) for p, raw in sorted(files.items()) if not is_ignored_rel(p)]
    return notes, checked_out


def _history(vault: Vault, note: Note) -> list[dict[str, Any]]:
    from vault_brain.app.sync.history import history  # lazy: GitPython

    try:
        return [to_json(e) for e in history(vault, note.path).entries]
    except NotFoundError:
        return []  # never committed: no history yet


def export(
    vault: Vault,
    fmt: str,
    with_history: bool = False,
    persona: str | None = None,
    private: bool = True,
) -> ExportResult:
    """The notes (with `private`, the private ones too: `private: true` or a path in
    `private_paths`; an export for an agent leaves them out)."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown export format {fmt!r}", hint="use --format json or markdown")
    if persona:
        notes, checked_out = _persona_notes(vault, persona)
        if with_history and not checked_out:
            raise UsageError(
                f"--history exports the history of the persona checked out, not {persona!r}",
                hint=f"switch first: vb persona switch {persona}",
            )
    else:
        vault.reconcile()  # the index lists the notes; each is then read in full
        paths = sorted(str(row["path"]) for _, row in vault.index.rows(include_archived=True))
        notes = [load_note(vault.root, rel) for rel in paths]
    if not private:
        hidden = vault.policy.private_paths
        notes = [n for n in notes if not is_private(n.path, n.meta, hidden)]
    exported: list[ExportNote] = [
        export_note(n, _history(vault, n) if with_history else None) for n in notes
    ]
    render = to_json_text if fmt == "json" else to_markdown
    text = render(exported, persona, now_iso())
    return ExportResult(fmt, persona, len(exported), text)
