"""Lifecycle plans: dry runs show exactly what apply does; apply is all-or-nothing and logged;
prune never touches pinned, people or unscored notes, and restore undoes it byte for byte."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import snapshot
from vault_brain.app.lifecycle.plans import plan_consolidate
from vault_brain.app.memory.apply import apply_plan
from vault_brain.app.memory.vault import Vault
from vault_brain.domain.errors import VaultBrainError
from vault_brain.storage.notes.frontmatter import parse_text

EPISODE = """---
title: {title}
tags: [{tags}]
created: {created}
credit: {credit}
{extra}---
{body}
"""
TODAY = dt.date.today().isoformat()


def episode(vault: Path, name: str, extra: str = "", **fields: Any) -> Path:
    path = vault / "episodes/2026-03" / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(EPISODE.format(extra=extra, **fields), encoding="utf-8")
    return path


def entity(vault: Path, rel: str, front: str, body: str = "Body.\n") -> Path:
    path = vault / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{front}---\n{body}", encoding="utf-8")
    return path


def lifecycle_log(vault: Path) -> list[dict[str, Any]]:
    path = vault / "logs/lifecycle.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def stable(actions: list[dict[str, Any]]) -> list[tuple[str, str, str, str | None]]:
    return [(a["op"], a["path"], a["why"], a["id"]) for a in actions]


def seed_day(vault: Path) -> None:
    episode(
        vault,
        "a",
        title="Standup",
        tags="apollo, standup",
        created="2026-03-02T09:00:00",
        credit=0.7,
        body="We decided to ship Apollo on Friday.",
    )
    episode(
        vault,
        "b",
        title="Triage",
        tags="apollo",
        created="2026-03-02T15:00:00",
        credit=0.6,
        body="Apollo has two open bugs.",
    )
    episode(
        vault,
        "c",
        title="Lunch",
        tags="food",
        created="2026-03-02T12:00:00",
        credit=0.5,
        body="Ate noodles.",
    )
    episode(
        vault,
        "d",
        title="Other day",
        tags="apollo",
        created="2026-03-03T10:00:00",
        credit=0.5,
        body="Apollo retro.",
    )


def test_consolidate_dry_run_is_exactly_what_apply_does(vault: Path, cli: Any) -> None:
    seed_day(vault)
    before = snapshot(vault)
    dry = cli("--vault", str(vault), "consolidate", "--dry-run", "--json").json()
    assert snapshot(vault) == before  # a dry run writes nothing
    assert dry["dry_run"] is True
    applied = cli("--vault", str(vault), "consolidate", "--json").json()
    assert stable(applied["actions"]) == stable(dry["actions"])
    (create,) = [a for a in applied["actions"] if a["op"] == "create"]
    merged = vault / create["path"]
    text = merged.read_text(encoding="utf-8")
    # 0.5 plus what outcomes gave each part (0.2 and 0.1): merging creates no credit
    assert "credit: 0.8\n" in text
    assert "merged_from: [episode-general-a, episode-general-b]" in text
    assert "We decided to ship Apollo on Friday." in text and "two open bugs" in text
    for name in ("a", "b"):
        assert not (vault / f"episodes/2026-03/{name}.md").exists()
        archived = (vault / f"archive/episodes/2026-03/{name}.md").read_text(encoding="utf-8")
        assert f"merged_into: {create['id']}" in archived
    assert (vault / "episodes/2026-03/c.md").exists() and (vault / "episodes/2026-03/d.md").exists()
    log = lifecycle_log(vault)
    assert [(r["op"], r["path"]) for r in log if r.get("op")] == [
        (a["op"], a["path"]) for a in sorted(applied["actions"], key=lambda a: a["op"] != "create")
    ]
    assert log[-1]["event"] == "run" and log[-1]["actions"] == 3


def test_failed_apply_rolls_back_every_file(vault: Path) -> None:
    seed_day(vault)
    v = Vault.open(vault)
    plan = plan_consolidate(v)
    before = snapshot(vault)
    # b's YAML breaks after planning: vb refuses to edit it, so archiving it fails mid-plan
    (vault / "episodes/2026-03/b.md").write_text("---\ntitle: [broken\n---\nx\n", encoding="utf-8")
    broken = snapshot(vault)
    with pytest.raises(VaultBrainError, match="not valid YAML"):
        apply_plan(v, plan)
    assert snapshot(vault) == broken
    assert broken != before
    assert lifecycle_log(vault) == []


def test_promote_feeds_entities_and_transfers_credit(vault: Path, cli: Any) -> None:
    episode(
        vault,
        "call",
        title="Call with Bob",
        tags="bob",
        created="2026-03-05T10:00:00",
        credit=0.9,
        extra=f"last_accessed: {TODAY}\n",
        body="Bob works at Initech. Bob prefers email over phone calls.",
    )
    episode(
        vault,
        "meh",
        title="Low",
        tags="x",
        created="2026-03-05T11:00:00",
        credit=0.3,
        extra=f"last_accessed: {TODAY}\n",
        body="Carol works at Globex.",
    )
    dry = cli("--vault", str(vault), "promote", "--dry-run", "--json").json()
    result = cli("--vault", str(vault), "promote", "--json").json()
    assert stable(result["actions"]) == stable(dry["actions"])
    ep = (vault / "episodes/2026-03/call.md").read_text(encoding="utf-8")
    # half of what outcomes earned it (0.9 - 0.5) moved to the entities
    assert "credit: 0.7\n" in ep and "promoted: " in ep
    created = [a for a in result["actions"] if a["op"] == "create"]
    assert created
    gained = 0.0
    for action in created:
        text = (vault / action["path"]).read_text(encoding="utf-8")
        assert "(from [[call|Call with Bob]])" in text  # its name is unique in the vault
        credit = float(text.split("credit: ")[1].split("\n")[0])
        gained += credit - 0.5
    assert gained == pytest.approx(0.2, abs=1e-3)
    assert not any("Carol" in (vault / a["path"]).read_text() for a in created)
    again = cli("--vault", str(vault), "promote", "--json").json()
    assert again["actions"] == []  # promoted episodes are not mined twice


def test_prune_respects_pins_people_age_and_unscored_notes(vault: Path, cli: Any) -> None:
    old = "created: 2025-01-01\n"
    low = entity(vault, "entities/projects/low.md", old + "credit: 0.05\n")
    entity(vault, "entities/projects/pinned.md", old + "credit: 0.05\npinned: true\n")
    entity(vault, "entities/people/pat.md", old + "credit: 0.05\n")
    entity(vault, "entities/projects/unscored.md", old)
    entity(vault, "entities/projects/young.md", "created: 2099-01-01\ncredit: 0.01\n")
    entity(vault, "entities/projects/good.md", old + "credit: 0.9\nlast_accessed: 2099-01-01\n")
    original = low.read_bytes()
    plan = cli("--vault", str(vault), "prune", "--dry-run", "--json").json()
    assert [a["path"] for a in plan["actions"]] == ["entities/projects/low.md"]
    cli("--vault", str(vault), "prune")
    assert not low.exists()
    assert (vault / "archive/entities/projects/low.md").exists()
    assert cli("--vault", str(vault), "restore", "entity-projects-low").exit_code == 0
    assert low.read_bytes() == original


def test_prune_by_age_for_one_type(vault: Path, cli: Any) -> None:
    episode(
        vault, "old", title="Old", tags="x", created="2025-01-01T00:00:00", credit=0.9, body="b"
    )
    episode(
        vault, "new", title="New", tags="x", created="2099-01-01T00:00:00", credit=0.9, body="b"
    )
    entity(vault, "entities/projects/old.md", "created: 2025-01-01\n")
    res = cli(
        "--vault",
        str(vault),
        "prune",
        "--older-than-days",
        "30",
        "--type",
        "episode",
        "--dry-run",
        "--json",
    ).json()
    assert [a["path"] for a in res["actions"]] == ["episodes/2026-03/old.md"]


def test_maintain_reads_due_times_from_the_log(vault: Path, cli: Any, tmp_path: Path) -> None:
    seed_day(vault)
    first = cli("--vault", str(vault), "maintain", "--json").json()
    assert [r["operation"] for r in first["runs"]] == ["consolidate", "promote", "prune"]
    second = cli("--vault", str(vault), "maintain", "--json").json()
    assert second["runs"] == [] and not any(s["due"] for s in second["due"].values())

    # another machine sharing the vault (the log travels with git) agrees nothing is due
    other = tmp_path / "other"
    assert cli("init", str(other)).exit_code == 0
    shutil.copy(vault / "logs/lifecycle.jsonl", other / "logs/lifecycle.jsonl")
    assert cli("--vault", str(other), "maintain", "--json").json()["runs"] == []

    # STRATEGY.md overrides the interval
    strategy = vault / "STRATEGY.md"
    strategy.write_text(strategy.read_text().replace("# prune_interval: 7d", "prune_interval: 0h"))
    third = cli("--vault", str(vault), "maintain", "--json").json()
    assert [r["operation"] for r in third["runs"]] == ["prune"]


def test_strategy_sources_and_invalid_values(vault: Path, cli: Any) -> None:
    strategy = vault / "STRATEGY.md"
    text = strategy.read_text()
    fresh = cli("--vault", str(vault), "strategy", "--json").json()
    assert {s["source"] for s in fresh["settings"]} == {"default"}  # the template pins nothing
    strategy.write_text(
        text.replace("# alpha: 0.1\n", "alpha: 0.2\n").replace("---\n", "---\nmystery: 1\n", 1)
    )
    data = cli("--vault", str(vault), "strategy", "--json").json()
    settings = {s["key"]: s for s in data["settings"]}
    assert settings["credit_weight"]["source"] == "default"
    assert settings["alpha"]["source"] == "STRATEGY.md" and settings["alpha"]["value"] == 0.2
    assert settings["alpha"]["default"] == 0.1
    assert data["unknown"] == ["mystery"]
    strategy.write_text(text.replace("# prune_threshold: 0.2", "prune_threshold: 7"))
    res = cli("--vault", str(vault), "prune", "--dry-run")
    assert res.exit_code == 1 and "prune_threshold" in res.stderr


def test_the_strategy_template_lists_every_setting_with_the_code_default() -> None:
    """STRATEGY.md shows each default commented out; they must be the code's defaults, so that
    what a person reads is what vb does, and a better default reaches every vault."""
    import yaml

    from conftest import REPO
    from vault_brain.domain.policy.settings import SETTINGS

    text = (REPO / "vault-template" / "STRATEGY.md").read_text(encoding="utf-8")
    front = text.split("---\n")[1]
    assert parse_text(text.encode()).meta == {}  # nothing pinned
    shown = {}
    for line in front.splitlines():
        key, sep, value = line.removeprefix("# ").partition(": ")
        if sep and key in SETTINGS:
            shown[key] = yaml.safe_load(value)
    assert set(shown) == set(SETTINGS)
    for key, setting in SETTINGS.items():
        assert shown[key] == setting.default, key
