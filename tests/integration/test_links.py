"""Every link vb writes resolves in Obsidian: consolidation's sources, promotion's provenance
and MEMORY.md name a file by its name when no other Markdown file has it, else by its path,
and a check resolving each link the way Obsidian does finds the file."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from vault_brain.domain.notes.links import LinkNames, link_target, resolve, wikilinks
from vault_brain.storage.notes.names import vault_files

TODAY = dt.date.today().isoformat()
_MD_LINK = re.compile(r"(?<!!)\[[^\]\n]*\]\(([^)\s]+)\)")


def write(vault: Path, rel: str, text: str) -> None:
    path = vault / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def episode(
    vault: Path, rel: str, title: str, tags: str, created: str, credit: float, body: str
) -> None:
    write(
        vault,
        rel,
        f"---\ntitle: {title}\ntags: [{tags}]\ncreated: {created}\ncredit: {credit}\n"
        f"last_accessed: {TODAY}\n---\n{body}\n",
    )


def links_in(vault: Path) -> dict[str, list[str]]:
    """Every link target in the vault's Markdown files (wikilinks and local Markdown links)."""
    found: dict[str, list[str]] = {}
    for rel in vault_files(vault):
        if not rel.endswith(".md"):
            continue
        text = (vault / rel).read_text(encoding="utf-8")
        targets = [link_target(inner) for inner in wikilinks(text)]
        targets += [unquote(m) for m in _MD_LINK.findall(text) if "://" not in m]
        if targets:
            found[rel] = targets
    return found


def test_every_link_consolidation_promotion_and_memory_md_write_resolves(
    vault: Path, cli: Any
) -> None:
    # a day of episodes to merge; a person's note shares the name of one of them (`a`)
    episode(vault, "episodes/2026-03/a.md", "Standup", "apollo", "2026-03-02T09:00:00", 0.7,
            "We decided to ship Apollo on Friday.")  # fmt: skip
    episode(vault, "episodes/2026-03/b.md", "Triage [urgent] | p1", "apollo",
            "2026-03-02T15:00:00", 0.6, "Apollo has two open bugs.")  # fmt: skip
    write(vault, "Notes/A.md", "# A person's note named like an episode\n")
    # episodes to promote: one whose name is its own, one whose name a person's note shares
    episode(vault, "episodes/2026-04/call.md", "Call with Bob (1:1)", "bob",
            "2026-04-05T10:00:00", 0.9, "Bob works at Initech.")  # fmt: skip
    episode(vault, "episodes/2026-04/coffee.md", "Coffee", "dana", "2026-04-07T10:00:00", 0.9,
            "Dana works at Globex.")  # fmt: skip
    write(vault, "People/coffee.md", "# Coffee, the person's own note\n")

    for op in ("consolidate", "promote", "memory-file"):
        res = cli("--vault", str(vault), op, "--json")
        assert res.exit_code == 0, res.stderr

    files = vault_files(vault)
    links = links_in(vault)
    mine = {rel: t for rel, t in links.items() if rel.startswith(("episodes/", "entities/"))}
    targets = [t for ts in mine.values() for t in ts]
    # the merged note links both sources where they went (archive/); `a` is not a unique name
    assert "archive/episodes/2026-03/a" in targets and "b" in targets
    # promotion links each episode: by its name, or its path when a person's note shares it
    assert "call" in targets and "episodes/2026-04/coffee" in targets
    unresolved = {(rel, t) for rel, ts in links.items() for t in ts if resolve(t, files) is None}
    assert unresolved == set()
    assert not any(t.startswith(("episode-", "entity-")) for t in targets)  # never a vb id
    text = "\n".join((vault / rel).read_text(encoding="utf-8") for rel in mine)
    assert "[[b|Triage urgent p1]]" in text  # brackets and `|` never reach the alias
    assert "(from [[call|Call with Bob 1:1]])" in text  # nor parentheses in a provenance
    assert "(from [[episodes/2026-04/coffee|Coffee]])" in text


def test_a_name_link_keeps_resolving_after_the_note_is_archived(vault: Path, cli: Any) -> None:
    episode(vault, "episodes/2026-04/call.md", "Call with Bob", "bob", "2026-04-05T10:00:00",
            0.9, "Bob works at Initech.")  # fmt: skip
    assert cli("--vault", str(vault), "promote", "--json").exit_code == 0
    assert cli("--vault", str(vault), "delete", "episodes/2026-04/call.md").exit_code == 0
    assert (vault / "archive/episodes/2026-04/call.md").exists()
    files = vault_files(vault)
    for rel, targets in links_in(vault).items():
        for target in targets:
            assert resolve(target, files) is not None, (rel, target)


def test_link_names_follow_obsidian_rules() -> None:
    names = LinkNames(["a/Note.md", "b/note.md", "c/Other.md", "img/pic.png", "x/p#q.md"])
    assert names.link("a/Note.md", "N") == "[[a/Note|N]]"  # the name is not unique (any case)
    assert names.link("c/Other.md", "Other") == "[[Other]]"  # alias equal to the target
    assert names.link("c/Other.md", "A [b] | c\nd") == "[[Other|A b c d]]"
    assert names.link("img/pic.png") == "[[pic.png]]"  # other files keep their extension
    assert names.link("x/p#q.md", "P") == "[P](x/p%23q.md)"  # `#` cannot be in a target
    names.move("c/Other.md", "archive/c/Other.md")
    names.add("d/other.md")
    assert names.target("archive/c/Other.md") == "archive/c/Other"
    files = ["a/Note.md", "b/note.md", "c/Other.md", "img/pic.png"]
    assert resolve("a/note", files) == "a/Note.md"  # paths without case
    assert resolve("Other", files) == "c/Other.md"
    assert resolve("note", files) is None  # two files of that name, no path: ambiguous
    assert resolve("pic.png", files) == "img/pic.png"
    assert resolve("pic", files) is None  # only Markdown files are found without extension
    assert link_target("a/Note#Heading|shown") == "a/Note"
