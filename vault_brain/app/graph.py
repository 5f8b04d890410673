"""`vb graph`: a Mermaid diagram written into a note under graphs/ (a plain note: Obsidian
renders it, the index reads it): personas and their commits, notes and their [[wikilinks]],
or memory activity per day."""

from __future__ import annotations

from vault_brain.app.results import Result, result
from vault_brain.app.vault import Vault
from vault_brain.domain.clock import now_iso
from vault_brain.domain.errors import UsageError, VaultBrainError
from vault_brain.domain.graph import (
    KINDS,
    CommitNode,
    LinkNote,
    branches_diagram,
    count_days,
    links_diagram,
    note_page,
    timeline_diagram,
    wikilinks,
)
from vault_brain.domain.notes import Note
from vault_brain.storage.files import atomic_write
from vault_brain.storage.index.scan import scan
from vault_brain.storage.notes import load_note

GRAPHS_DIR = "graphs"
COMMITS = 40


@result
class GraphResult(Result):
    kind: str
    """branches, links or timeline."""
    path: str
    """The note the diagram was written into (vault-relative)."""
    nodes: int
    """Commits and personas, notes, or days shown."""
    mermaid: str
    """The diagram (Mermaid source)."""


def _notes(vault: Vault) -> list[Note]:
    return [
        load_note(vault.root, rel)
        for rel in sorted(scan(vault.paths))
        if not rel.startswith(GRAPHS_DIR + "/")
    ]


def _branches(vault: Vault) -> tuple[str, int]:
    from vault_brain.storage import persona_git as pg  # lazy: GitPython
    from vault_brain.storage import sync_git as g

    repo = g.open_repo(vault.root)
    try:
        heads = {b.name: b.commit for b in pg.branches(repo)}
        if not heads:
            raise VaultBrainError(
                "the vault's repository has no commits yet",
                hint="commit the vault first: `vb sync`, or git add -A && git commit",
            )
        commits = [CommitNode(*c) for c in pg.recent_commits(repo, COMMITS)]
        current = pg.current(repo)
    finally:
        repo.close()
    return branches_diagram(heads, commits, current), len(heads) + len(commits)


def _links(vault: Vault) -> tuple[str, int]:
    notes = [LinkNote(n.path, n.title, n.aliases, wikilinks(n.body)) for n in _notes(vault)]
    diagram = links_diagram(notes)
    return diagram, sum(1 for line in diagram.splitlines() if '["' in line)


def _timeline(vault: Vault) -> tuple[str, int]:
    notes = _notes(vault)
    pairs: list[tuple[str | None, str]] = [(n.created, "created") for n in notes]
    pairs += [(n.updated, "updated") for n in notes if n.updated and n.updated != n.created]
    pairs += [(n.last_accessed, "accessed") for n in notes]
    try:
        from vault_brain.app.history import vault_log  # lazy: GitPython

        for entry in vault_log(vault).entries:
            pairs += [(entry.when, op) for op, n in entry.operations.items() for _ in range(n)]
    except VaultBrainError:
        pass  # not a git repository, or no commit yet: the notes' own dates only
    days = count_days(pairs)
    return timeline_diagram(days), len(days)


def graph(vault: Vault, kind: str = "branches") -> GraphResult:
    if kind not in KINDS:
        raise UsageError(f"unknown graph kind {kind!r}", hint=f"one of {', '.join(KINDS)}")
    make = {"branches": _branches, "links": _links, "timeline": _timeline}[kind]
    diagram, nodes = make(vault)
    intros = {
        "branches": "Personas (git branches of the vault) and their latest commits.",
        "links": "Notes and the [[wikilinks]] between them.",
        "timeline": "Memory activity per day: notes created, updated and read, and the "
        "operations vb logged.",
    }
    rel = f"{GRAPHS_DIR}/{kind}.md"
    intro = f"{intros[kind]} Written by `vb graph` at {now_iso()}."
    text = note_page(f"Graph: {kind}", intro, diagram)
    atomic_write(vault.paths.note(rel), text.encode("utf-8"))
    return GraphResult(kind, rel, nodes, diagram)
