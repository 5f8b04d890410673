"""The memory dashboard: `vb init` (and `--adopt`, in a folder of its own) writes an
Obsidian base, `vb/Memory.base`, that is valid Bases syntax, names only properties vb
writes, holds the policy's defaults, and is never overwritten once a person edited it."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import REPO, snapshot
from vault_brain.domain.notes.properties import WRITTEN_PROPERTIES
from vault_brain.domain.policy.settings import DEFAULT_POLICY

BASE = "vb/Memory.base"
VIEWS = [
    "Best memories (by credit)",
    "Recently used",
    "Archive candidates (approximates the next prune, policy defaults)",
    "Superseded facts",
    "Conflict copies",
    "Notes with problems",
]
# Obsidian's file properties (its help: Bases syntax, "File properties")
FILE_PROPERTIES = {
    "backlinks", "ctime", "embeds", "ext", "file", "folder", "links", "mtime", "name", "path",
    "properties", "size", "tags",
}  # fmt: skip
FILE_FUNCTIONS = {"asLink", "hasLink", "hasProperty", "hasTag", "inFolder"}
VIEW_TYPES = {"table", "cards", "list", "map"}
# a reference inside an expression: note.x, file.x, formula.x (not a method call after them)
_REF = re.compile(r"\b(note|file|formula)\.([A-Za-z_][A-Za-z0-9_]*)")
_HAS_PROPERTY = re.compile(r'file\.hasProperty\("([^"]+)"\)')


def load(root: Path) -> dict[str, Any]:
    data = yaml.safe_load((root / BASE).read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def expressions(filters: Any) -> list[str]:
    """Every filter statement of a (recursive) Bases filter: a string, or and/or/not lists."""
    if isinstance(filters, str):
        return [filters]
    assert isinstance(filters, dict) and len(filters) == 1, filters
    ((conjunction, items),) = filters.items()
    assert conjunction in ("and", "or", "not") and isinstance(items, list), filters
    return [e for item in items for e in expressions(item)]


def names_in(data: dict[str, Any]) -> list[str]:
    """Every property the base names: in expressions, and as keys in properties, order, sort."""
    texts = [*expressions(data["filters"]), *data["formulas"].values()]
    keys = list(data["properties"])
    for view in data["views"]:
        texts += expressions(view.get("filters", {"and": []}))
        keys += view.get("order", []) + [s["property"] for s in view.get("sort", [])]
    refs = [f"{kind}.{name}" for text in texts for kind, name in _REF.findall(text)]
    refs += [f"note.{name}" for text in texts for name in _HAS_PROPERTY.findall(text)]
    return refs + [k if "." in k else f"note.{k}" for k in keys]


def test_init_writes_a_valid_base_with_the_views(vault: Path) -> None:
    data = load(vault)
    assert [v["name"] for v in data["views"]] == VIEWS
    assert set(data) <= {"filters", "formulas", "properties", "summaries", "views"}
    for view in data["views"]:
        assert view["type"] in VIEW_TYPES
        assert set(view) <= {"type", "name", "filters", "order", "sort", "limit", "groupBy"}
        for sort in view.get("sort", []):
            assert set(sort) == {"property", "direction"} and sort["direction"] in ("ASC", "DESC")
        expressions(view.get("filters", {"and": []}))
    for text in [*expressions(data["filters"]), *data["formulas"].values()]:
        assert text.count("(") == text.count(")") and text.count('"') % 2 == 0, text


def test_the_base_names_only_properties_vb_writes(vault: Path) -> None:
    data = load(vault)
    named = names_in(data)
    assert named
    for ref in named:
        kind, name = ref.split(".", 1)
        if kind == "note":
            assert name in WRITTEN_PROPERTIES, ref
        elif kind == "file":
            assert name in FILE_PROPERTIES | FILE_FUNCTIONS, ref
        else:
            assert name in data["formulas"], ref
    # and the views show what they promise
    shown = {ref for ref in named if ref.startswith("note.")}
    for key in ("credit", "access_count", "last_accessed", "pinned", "superseded_by"):
        assert f"note.{key}" in shown
    assert "note.conflict_of" in shown


def test_every_listed_property_is_one_vb_writes() -> None:
    """The list is not wishful: each key is written somewhere in vb's code."""
    source = "\n".join(p.read_text(encoding="utf-8") for p in (REPO / "vault_brain").rglob("*.py"))
    for key in WRITTEN_PROPERTIES:
        assert re.search(rf'"{key}"', source), key


def test_archive_candidates_hold_the_policy_defaults(vault: Path) -> None:
    data = load(vault)
    (view,) = [v for v in data["views"] if v["name"].startswith("Archive candidates")]
    statements = expressions(view["filters"])
    assert f"formula.effective_credit < {DEFAULT_POLICY.prune_threshold:g}" in statements
    assert f"formula.age_days > {DEFAULT_POLICY.prune_min_age_days:g}" in statements
    assert DEFAULT_POLICY.prune_skip_categories == ["people"] and DEFAULT_POLICY.prune_skip_pinned
    assert 'note.category != "people"' in statements and "note.pinned != true" in statements
    assert f"formula.idle_days * {DEFAULT_POLICY.decay_rate:g}" == data["formulas"]["decay"]
    # the series stands in for exp(-x): the view and prune disagree only at the threshold
    for credit in (0.25, 0.5, 0.9, 1.0):
        for days in range(0, 2000, 7):
            x = DEFAULT_POLICY.decay_rate * days
            series = sum(x**k / math.factorial(k) for k in range(7))
            exact = credit * math.exp(-x)
            if abs(exact - DEFAULT_POLICY.prune_threshold) > 0.005:
                assert (credit / series < 0.2) == (exact < 0.2), (credit, days)


def test_adopt_puts_the_base_in_a_folder_of_its_own_and_changes_no_byte(
    tmp_path: Path, cli: Any
) -> None:
    root = tmp_path / "mine"
    (root / "Notes").mkdir(parents=True)
    (root / "Notes" / "Ideas.md").write_text("---\ntags: [x]\n---\n# Ideas\n", encoding="utf-8")
    (root / "Home.base").write_text("views:\n  - type: table\n    name: Mine\n", encoding="utf-8")
    before = snapshot(root)
    res = cli("init", "--adopt", str(root), "--json")
    assert res.exit_code == 0, res.stderr
    after = snapshot(root)
    assert {rel: after[rel] for rel in before} == before
    assert BASE in res.json()["created"]
    assert not any(rel.startswith("vb/") for rel in before)
    assert sorted(p.name for p in (root / "vb").iterdir()) == ["Memory.base"]
    assert [v["name"] for v in load(root)["views"]] == VIEWS


@pytest.mark.parametrize("edit", ["rewritten", "deleted"])
def test_running_init_again_keeps_a_persons_base(tmp_path: Path, cli: Any, edit: str) -> None:
    root = tmp_path / "v"
    assert cli("init", str(root)).exit_code == 0
    mine = "views:\n  - type: cards\n    name: My own view\n"
    if edit == "rewritten":
        (root / BASE).write_text(mine, encoding="utf-8")
    res = cli("init", "--adopt", str(root), "--json")
    assert res.exit_code == 0, res.stderr
    if edit == "rewritten":
        assert (root / BASE).read_text(encoding="utf-8") == mine
        assert BASE in res.json()["kept"]
    else:
        (root / BASE).unlink()
        again = cli("init", "--adopt", str(root), "--json")
        assert BASE in again.json()["created"]  # asked again, vb puts it back
