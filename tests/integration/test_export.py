"""`vb export` (JSON with a versioned schema, Markdown readable on its own, a persona's notes
from git, history) and `vb graph` (Mermaid notes: personas and commits, wikilinks, activity)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from test_persona import ADA, add, commit, edit, git, root, vb

from vault_brain.app.api import MemoryAPI

__all__ = ["root"]  # the fixture, shared with test_persona


def export(cli: Any, root: Path, *args: str) -> str:
    res = cli("--vault", str(root), "export", *args)
    assert res.exit_code == 0, res.stdout + res.stderr
    return res.stdout


def test_json_export_has_a_version_and_every_field(root: Path, cli: Any) -> None:
    add(root, "Grace", "Grace writes compilers. See [[Ada]].")
    doc = json.loads(export(cli, root, "--format", "json"))
    assert doc["version"] == 1 and doc["persona"] is None and doc["count"] == 2
    ada = next(n for n in doc["notes"] if n["path"] == ADA)
    assert {"id", "path", "type", "category", "title", "tags", "scope", "credit", "body"} <= set(
        ada
    )
    assert (ada["id"], ada["type"], ada["category"], ada["title"]) == (
        "entity-people-ada",
        "entity",
        "people",
        "Ada",
    )
    assert ada["credit"] == 0.5 and ada["scope"] == "global" and "tea" in ada["body"]
    assert "history" not in ada
    out = root.parent / "out.json"
    res = cli("--vault", str(root), "export", "-o", str(out))
    assert res.exit_code == 0 and "exported 2 notes" in res.stdout
    assert json.loads(out.read_text(encoding="utf-8"))["count"] == 2


def test_json_export_with_history_and_of_another_persona(root: Path, cli: Any) -> None:
    edit(root / ADA, "She likes tea.", "She likes green tea.")
    commit(root, "Ada's tea")
    doc = json.loads(export(cli, root, "--history"))
    [ada] = doc["notes"]
    assert [e["operation"] for e in ada["history"]] == ["hand edit", "created"]
    assert ada["history"][0]["lines_added"] == 1
    vb(cli, root, "persona", "create", "work")
    vb(cli, root, "persona", "switch", "work")
    add(root, "Grace", "Grace writes compilers.")
    vb(cli, root, "persona", "switch", "main")  # Grace committed on work only
    work = json.loads(export(cli, root, "--persona", "work"))
    assert work["persona"] == "work"
    assert sorted(n["title"] for n in work["notes"]) == ["Ada", "Grace"]
    assert [n["title"] for n in json.loads(export(cli, root))["notes"]] == ["Ada"]
    res = cli("--vault", str(root), "export", "--persona", "work", "--history")
    assert res.exit_code == 2 and "vb persona switch work" in res.stderr
    res = cli("--vault", str(root), "export", "--persona", "nobody")
    assert res.stderr.startswith("vb: error: no persona named 'nobody'")


def test_markdown_export_is_readable_on_its_own(root: Path, cli: Any) -> None:
    add(root, "Grace", "Grace writes compilers.\n\n# Work\n\nCOBOL.")
    text = export(cli, root, "--format", "markdown")
    lines = text.splitlines()
    assert lines[0] == "# Memory export"
    assert "## Ada" in lines and "## Grace" in lines
    assert "### Work" in lines  # the note's own heading, under the note's
    assert "She likes tea." in text and "`entity-people-ada`" in text
    res = cli("--vault", str(root), "export", "--format", "pdf")
    assert res.exit_code == 2 and "use --format json or markdown" in res.stderr


def mermaid(root: Path, kind: str) -> str:
    text = (root / "graphs" / f"{kind}.md").read_text(encoding="utf-8")
    assert text.startswith(f"# Graph: {kind}\n")
    block = text.split("```mermaid\n", 1)[1]
    assert block.rstrip().endswith("```")
    return block


def test_graph_branches_shows_personas_and_commits(root: Path, cli: Any) -> None:
    vb(cli, root, "persona", "create", "work")
    done = vb(cli, root, "graph", "--kind", "branches")
    assert done["path"] == "graphs/branches.md"
    block = mermaid(root, "branches")
    assert block.startswith("flowchart")
    head = git("rev-parse", "HEAD", cwd=root).strip()
    assert f'c{head[:10]}["{head[:7]} Ada"]' in block
    assert 'persona main (current)"' in block and 'persona work"' in block
    assert "-.-> c" + head[:10] in block
    assert " --> c" in block  # Ada's commit points to vb init's


def test_graph_links_and_timeline(root: Path, cli: Any) -> None:
    add(root, "Grace", "Grace admires [[Ada]] and [[Hopper|Grace Hopper]].")
    vb(cli, root, "graph", "--kind", "links")
    block = mermaid(root, "links")
    assert block.startswith("flowchart LR")
    assert '["Grace"]' in block and '["Ada"]' in block and "Hopper (no note)" in block
    assert " --> " in block and " -.-> " in block
    vb(cli, root, "graph", "--kind", "timeline")
    block = mermaid(root, "timeline")
    assert block.startswith("timeline\n  title Memory activity per day")
    assert "created" in block
    # the graph is a note like any other: search finds it
    titles = [r["title"] for r in vb(cli, root, "search", "wikilinks")["results"]]
    assert "Graph: links" in titles
    res = cli("--vault", str(root), "graph", "--kind", "pie")
    assert res.exit_code == 2 and "one of branches, links, timeline" in res.stderr
    assert MemoryAPI.open(root).graph("links").nodes == 3


def test_a_graph_note_carries_no_secret_of_the_notes_it_draws(root: Path, cli: Any) -> None:
    v = ("--vault", str(root))
    leaked = "sk-proj-A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"
    res = cli(*v, "add", "-n", f"Key {leaked}", "-c", "projects", "--allow-secret", "see [[x]]")
    assert res.exit_code == 0, res.stderr
    cli(*v, "graph", "--kind", "links")
    text = (root / "graphs/links.md").read_text(encoding="utf-8")
    assert leaked not in text and "[redacted: credential]" in text
