"""`vb graph`: a Mermaid diagram written into a note under graphs/ (a plain note: Obsidian
renders it, the index reads it): personas and their commits, notes and their [[wikilinks]],
or memory activity per day."""

from __future__ import annotations

from typing import Any

from vault_brain.app.memory.results import Result, result
from vault_brain.app.memory.vault import Vault
from vault_brain.domain.clock import now_iso
from vault_brain.domain.errors import UsageError, VaultBrainError
from vault_brain.domain.gate import redact
from vault_brain.domain.views.graph import (
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
from vault_brain.storage.files import atomic_write
from vault_brain.storage.notes.frontmatter import body_text

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


def _rows(vault: Vault) -> list[dict[str, Any]]:
    """Every live note's index row (the index answers: no walk of the vault), graphs aside."""
    vault.reconcile()
    rows = (row for _, row in vault.index.rows())
    return sorted(
        (r for r in rows if not str(r["path"]).startswith(GRAPHS_DIR + "/")),
        key=lambda r: str(r["path"]),
    )


def _branches(vault: Vault) -> tuple[str, int]:
    from vault_brain.storage.git import persona as pg  # lazy: GitPython
    from vault_brain.storage.git import sync as g

    repo = g.open_repo(vault.root)
    try:
        heads = {b.name: b.commit for b in pg.branches(repo)}
        if not heads:
            raise VaultBrainError(
                "the vault's repository has no commits yet",
                hint="commit the vault first: `vb sync`, or git add -A && git commit",
            )
        commits = [  # messages pass the gate's redaction, as titles do
            CommitNode(sha, parents, redact(subject)[0])
            for sha, parents, subject in pg.recent_commits(repo, COMMITS)
        ]
        current = pg.current(repo)
    finally:
        repo.close()
    return branches_diagram(heads, commits, current), len(heads) + len(commits)


def _body(vault: Vault, rel: str) -> str | None:
    """A note's body, or None when it went away (or cannot be read) since it was indexed."""
    try:
        return body_text(vault.paths.note(rel).read_bytes())
    except OSError:
        return None


def _links(vault: Vault) -> tuple[str, int]:
    """Titles pass the gate's redaction: the graph note is read like any other note."""
    notes = [
        LinkNote(
            r["path"],
            redact(str(r["title"]))[0],
            list(r.get("aliases") or []),
            wikilinks(body),
        )
        for r in _rows(vault)
        if (body := _body(vault, str(r["path"]))) is not None
    ]
    diagram = links_diagram(notes)
    return diagram, sum(1 for line in diagram.splitlines() if '["' in line)


def _timeline(vault: Vault) -> tuple[str, int]:
    rows = _rows(vault)
    pairs: list[tuple[str | None, str]] = [(r.get("created"), "created") for r in rows]
    pairs += [
        (r["updated"], "updated")
        for r in rows
        if r.get("updated") and r["updated"] != r.get("created")
    ]
    pairs += [(r.get("last_accessed"), "accessed") for r in rows]
    try:
        from vault_brain.app.sync.history import vault_log  # lazy: GitPython

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
