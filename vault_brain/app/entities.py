"""Routing facts to entity notes: append to the note that exists, create the one that does
not, never twice the same statement. Shared by promotion and the memory flush."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import PurePosixPath
from typing import Any

from vault_brain.app.vault import Vault
from vault_brain.domain.clock import now_iso
from vault_brain.domain.credit import is_scored
from vault_brain.domain.facts import Fact
from vault_brain.domain.plan import Action
from vault_brain.domain.text import slugify
from vault_brain.storage.frontmatter import parse_text
from vault_brain.storage.frontmatter_edit import edit_front_matter


def new_note_text(meta: dict[str, Any], body: str) -> str:
    return edit_front_matter(b"", meta).decode("utf-8") + body.strip() + "\n"


def _is_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def fact_key(line: str) -> str:
    """A fact line without its bullet and provenance, for de-duplication."""
    text = line.strip().removeprefix("- ")
    return " ".join(text.split(" (from ", 1)[0].split()).lower().rstrip(".")


class EntityFeed:
    """Entity notes receiving facts during one plan."""

    def __init__(
        self, vault: Vault, initial: float, rows: dict[str, dict[str, Any]] | None = None
    ) -> None:
        """`rows` (path -> credit row) when the caller already read them all; otherwise each
        target is looked up in the index on its own, without reading every note's row."""
        self.vault = vault
        self.rows = rows
        self.initial = initial
        self.targets: dict[str, dict[str, Any]] = {}

    def target(self, rel: str) -> dict[str, Any] | None:
        if rel in self.targets:
            return self.targets[rel]
        parts = PurePosixPath(rel)
        category, slug = parts.parts[1], parts.stem
        full = self.vault.paths.note(rel)
        base = {"lines": [], "gain": 0.0, "sources": [], "category": category}
        if full.exists():
            raw = full.read_bytes()
            parsed = parse_text(raw)
            if parsed.error or not _is_utf8(raw):
                return None  # vb never edits a note it cannot read safely
            row = self._row(rel)
            target = {
                **base,
                "exists": True,
                "id": row["id"] if row else f"entity-{category}-{slug}",
                "title": row["title"] if row else slug,
                "base": row["credit"] if row else self.initial,
                "known": {fact_key(line) for line in parsed.body.splitlines()},
            }
        else:
            new_id = f"entity-{category}-{slug}"
            if self.vault.index.stored_by_id(new_id) is not None:
                return None  # an entity with that id lives elsewhere; do not create a twin
            title = slug.replace("-", " ").title()
            target = {**base, "exists": False, "id": new_id, "title": title}
            target.update({"base": self.initial, "known": set()})
        self.targets[rel] = target
        return target

    def _row(self, rel: str) -> dict[str, Any] | None:
        if self.rows is not None:
            return self.rows.get(rel)
        found = self.vault.index.row_for_path(rel)
        if found is not None and is_scored(found.get("credit")):
            return found
        return None if found is None else {**found, "credit": self.initial}

    def fresh(self, facts: Iterable[Fact], provenance: str) -> dict[str, list[str]]:
        """Fact lines per entity path that no target holds yet (nothing is committed)."""
        out: dict[str, list[str]] = {}
        for fact in facts:
            rel = f"entities/{fact.category}/{slugify(fact.subject)}.md"
            target = self.target(rel)
            if target is None:
                continue
            line = f"- {fact.statement.strip()} ({provenance})"
            key = fact_key(line)
            if key in target["known"] or any(fact_key(x) == key for x in out.get(rel, [])):
                continue
            out.setdefault(rel, []).append(line)
        return out

    def accept(self, rel: str, lines: list[str], source: str, gain: float = 0.0) -> None:
        target = self.targets[rel]
        target["known"].update(fact_key(x) for x in lines)
        target["lines"] += lines
        target["gain"] += gain
        if source not in target["sources"]:
            target["sources"].append(source)

    def actions(self) -> list[Action]:
        out: list[Action] = []
        for rel, target in self.targets.items():
            if not target["lines"]:
                continue
            credit = round(min(1.0, target["base"] + target["gain"]), 4)
            why = f"{len(target['lines'])} fact(s) from {', '.join(target['sources'])}"
            text = "\n".join(target["lines"])
            if target["exists"]:
                keys = (
                    {"credit": credit, "updated": now_iso()}
                    if target["gain"]
                    else {"updated": now_iso()}
                )
                out.append(Action("append", rel, why, keys, text, target["id"]))
                continue
            meta = {
                "id": target["id"],
                "type": "entity",
                "category": target["category"],
                "title": target["title"],
                "tags": [],
                "created": now_iso(),
                "updated": now_iso(),
                "credit": credit,
            }
            out.append(
                Action("create", rel, why, content=new_note_text(meta, text), id=target["id"])
            )
        return out
