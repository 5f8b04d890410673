"""Agent-editable lifecycle rules (policy/): a rule runs only once `vb policy approve`
recorded it; until then the last approved rules run and `vb status` warns. The diff, the
refusals, the invariants a rule cannot break, and that memory tools cannot write policy/."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from vault_brain.app.api import MemoryAPI
from vault_brain.domain.errors import UsageError, VaultBrainError
from vault_brain.storage.env import Environment

OLD = "created: 2025-01-01\n"
RULE = "prune: \"effective < 0.5 and age_days > 21 and 'keep' not in tags\"\n"


def entity(vault: Path, rel: str, front: str) -> Path:
    path = vault / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{front}---\nBody.\n", encoding="utf-8")
    return path


def rules(vault: Path, text: str) -> Path:
    path = vault / "policy" / "rules.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def pruned(cli: Any, vault: Path) -> list[str]:
    res = cli("--vault", str(vault), "prune", "--dry-run", "--json")
    assert res.exit_code == 0, res.stdout + res.stderr
    return sorted(a["path"] for a in res.json()["actions"])


def status(cli: Any, vault: Path) -> tuple[str | None, str]:
    doc = cli("--vault", str(vault), "status", "--json").json()
    text = cli("--vault", str(vault), "status").stdout
    return doc["policy_warning"], text


@pytest.fixture
def notes(vault: Path) -> Path:
    entity(vault, "entities/projects/low.md", OLD + "credit: 0.05\n")  # the default prunes it
    entity(vault, "entities/projects/mid.md", OLD + "credit: 0.3\nlast_accessed: 2099-01-01\n")
    entity(vault, "entities/projects/kept.md", OLD + "credit: 0.1\ntags: [keep]\n")
    entity(vault, "entities/projects/young.md", "created: 2099-01-01\ncredit: 0.1\n")
    return vault


def test_a_rule_runs_only_after_approval_and_the_last_approved_one_keeps_running(
    notes: Path, cli: Any
) -> None:
    vault = notes
    default = ["entities/projects/kept.md", "entities/projects/low.md"]
    assert pruned(cli, vault) == default
    assert status(cli, vault)[0] is None

    rules(vault, RULE)  # what an agent in `vb session --policy-rw` might write
    assert pruned(cli, vault) == default  # not approved: vb's defaults hold
    warning, text = status(cli, vault)
    assert warning is not None and "not approved" in warning and "vb's default rules" in warning
    assert f"policy:  {warning}\n" in text

    res = cli("--vault", str(vault), "policy", "approve")
    assert res.exit_code == 0, res.stderr
    assert "approved policy " in res.stdout and "added policy/rules.yaml" in res.stdout
    assert res.stdout.rstrip().endswith(".")
    assert pruned(cli, vault) == ["entities/projects/low.md", "entities/projects/mid.md"]
    assert status(cli, vault)[0] is None
    plan = cli("--vault", str(vault), "prune", "--dry-run").stdout
    assert "approved policy rule chooses the notes: effective < 0.5" in plan

    rules(vault, 'prune: "True"\n')  # a further edit: unapproved again
    assert pruned(cli, vault) == ["entities/projects/low.md", "entities/projects/mid.md"]
    warning, _ = status(cli, vault)
    assert warning is not None and "the last approved rules" in warning

    cli("--vault", str(vault), "prune")  # applying runs the approved rule too
    assert not (vault / "entities/projects/mid.md").exists()
    assert (vault / "entities/projects/kept.md").exists()


def test_policy_diff_shows_the_changed_lines(notes: Path, cli: Any) -> None:
    vault = notes
    empty = cli("--vault", str(vault), "policy", "diff")
    assert empty.exit_code == 0 and "nothing was approved" in empty.stdout
    path = rules(vault, RULE)
    (vault / "policy" / "why.md").write_text("Low credit goes sooner.\n")
    first = cli("--vault", str(vault), "policy", "diff")
    assert first.exit_code == 0
    assert "--- /dev/null\n+++ b/policy/rules.yaml\n" in first.stdout
    assert f"+{RULE}" in first.stdout and "+Low credit goes sooner.\n" in first.stdout
    assert "never approved" in first.stdout
    assert cli("--vault", str(vault), "policy", "approve").exit_code == 0

    same = cli("--vault", str(vault), "policy", "diff")
    assert same.exit_code == 0 and same.stdout.startswith("no changes since approval")
    assert cli("--vault", str(vault), "policy", "diff", "--json").json()["changed"] is False

    path.write_text(RULE + 'promote: "access_count > 2"\n')
    (vault / "policy" / "why.md").unlink()
    doc = cli("--vault", str(vault), "policy", "diff", "--json").json()
    assert doc["version"] == 2 and doc["changed"] is True
    assert doc["files"] == [
        {"path": "rules.yaml", "change": "changed"},
        {"path": "why.md", "change": "deleted"},
    ]
    assert '+promote: "access_count > 2"\n' in doc["diff"]
    assert "--- a/policy/why.md\n+++ /dev/null\n@@ -1 +0,0 @@\n-Low credit" in doc["diff"]
    assert doc["active_rules"] == {"prune": RULE.split('"')[1]}
    assert doc["approved_hash"] != doc["hash"] and doc["warning"]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("prune: \"__import__('os').system('x')\"\n", "prune: uses attribute access (.system)"),
        ("promote: \"title.startswith('a')\"\n", "promote: uses attribute access (.startswith)"),
        ('consolidate: "(lambda: True)()"\n', "consolidate: uses a call"),
        ('prune: "lambda: True"\n', "prune: uses lambda"),
        ("prune: [unclosed\n", "not valid YAML"),
        ('archive: "True"\n', "unknown step 'archive'"),
    ],
)
def test_approve_refuses_an_unsafe_or_invalid_rule_and_records_nothing(
    vault: Path, cli: Any, text: str, problem: str
) -> None:
    rules(vault, 'prune: "effective < 0.1"\n')
    assert cli("--vault", str(vault), "policy", "approve").exit_code == 0
    record = vault / ".vb" / "policy-approved.json"
    before = record.read_bytes()
    rules(vault, text)
    res = cli("--vault", str(vault), "policy", "approve")
    assert res.exit_code != 0 and res.stdout == ""
    error, hint = res.stderr.splitlines()
    assert error.startswith("vb: error: policy/rules.yaml: ") and problem in error
    assert hint.startswith("vb: hint: ")
    assert record.read_bytes() == before
    as_json = cli("--vault", str(vault), "policy", "approve", "--json")
    assert problem in as_json.json()["error"]["message"]


def test_approve_with_a_hash_refuses_a_policy_changed_since_review(vault: Path, cli: Any) -> None:
    rules(vault, 'prune: "effective < 0.1"\n')
    reviewed = cli("--vault", str(vault), "policy", "diff", "--json").json()["hash"]
    rules(vault, 'prune: "True"\n')  # changed after the person looked
    res = cli("--vault", str(vault), "policy", "approve", "--hash", reviewed[:12])
    assert res.exit_code != 0 and "changed since you reviewed it" in res.stderr
    assert not (vault / ".vb" / "policy-approved.json").exists()
    current = cli("--vault", str(vault), "policy", "diff", "--json").json()["hash"]
    ok = cli("--vault", str(vault), "policy", "approve", "--hash", current[:12], "--json").json()
    assert ok["approved"] is True and ok["rules"] == {"prune": "True"}
    again = cli("--vault", str(vault), "policy", "approve")
    assert again.exit_code == 0 and again.stdout.startswith("no changes since approval")


def test_a_rule_cannot_prune_pinned_or_people_notes(vault: Path, cli: Any) -> None:
    strategy = vault / "STRATEGY.md"  # even where STRATEGY.md lifts vb's own protections
    text = strategy.read_text()
    text = text.replace("---\n", "---\nprune_skip_pinned: false\nprune_skip_categories: []\n", 1)
    strategy.write_text(text)
    entity(vault, "entities/people/pat.md", OLD + "credit: 0.9\n")
    entity(vault, "entities/projects/pinned.md", OLD + "credit: 0.9\npinned: true\n")
    entity(vault, "entities/projects/plain.md", OLD + "credit: 0.9\n")
    entity(vault, "episodes/2026-01/talk.md", OLD + "type: episode\ncredit: 0.9\n")
    rules(vault, 'prune: "True"\n')
    assert cli("--vault", str(vault), "policy", "approve").exit_code == 0
    assert pruned(cli, vault) == ["entities/projects/plain.md", "episodes/2026-01/talk.md"]


def test_a_rule_chooses_what_promote_and_consolidate_take(vault: Path, cli: Any) -> None:
    day = "created: 2026-03-02T09:00:00\n"
    for name, tags in (("a", "apollo"), ("b", "apollo"), ("c", "apollo, private")):
        entity(vault, f"episodes/2026-03/{name}.md", f"{day}type: episode\ntags: [{tags}]\n")
    merged = cli("--vault", str(vault), "consolidate", "--dry-run", "--json").json()
    assert len([a for a in merged["actions"] if a["op"] == "archive"]) == 3
    rules(vault, 'consolidate: "\'private\' not in tags"\npromote: "access_count > 100"\n')
    assert cli("--vault", str(vault), "policy", "approve").exit_code == 0
    merged = cli("--vault", str(vault), "consolidate", "--dry-run", "--json").json()
    archived = sorted(a["path"] for a in merged["actions"] if a["op"] == "archive")
    assert archived == ["episodes/2026-03/a.md", "episodes/2026-03/b.md"]
    promoted = cli("--vault", str(vault), "promote", "--dry-run", "--json").json()
    assert promoted["actions"] == []
    assert any("access_count > 100" in n for n in promoted["notes"])


def test_a_rule_that_fails_on_a_note_takes_nothing(vault: Path, cli: Any) -> None:
    entity(vault, "entities/projects/once.md", OLD + "credit: 0.1\naccess_count: 1\n")
    entity(vault, "entities/projects/twice.md", OLD + "credit: 0.1\naccess_count: 2\n")
    rules(vault, 'prune: "effective / (access_count - 1) < 1"\n')
    assert cli("--vault", str(vault), "policy", "approve").exit_code == 0
    plan = cli("--vault", str(vault), "prune", "--dry-run", "--json").json()
    assert [a["path"] for a in plan["actions"]] == ["entities/projects/twice.md"]
    assert any("divides by zero; not taken" in n for n in plan["notes"])


def test_the_session_warning_and_a_changed_approval_record(vault: Path, cli: Any) -> None:
    api = MemoryAPI.open(str(vault), Environment())
    assert api.policy_warning() is None
    rules(vault, 'prune: "True"\n')
    warning = api.policy_warning()
    assert warning is not None and "\n" not in warning and "vb policy diff" in warning
    assert cli("--vault", str(vault), "policy", "approve").exit_code == 0
    assert api.policy_warning() is None
    record = vault / ".vb" / "policy-approved.json"
    doc = json.loads(record.read_text())
    doc["files"]["rules.yaml"] = 'prune: "pinned"\n'  # edited by hand: no longer its hash
    record.write_text(json.dumps(doc))
    assert "vb's default rules" in (api.policy_warning() or "")


def test_memory_tools_cannot_write_policy(vault: Path, cli: Any) -> None:
    path = rules(vault, 'prune: "True"\n')
    note = vault / "policy" / "readme.md"
    note.write_text("---\ntitle: Readme\n---\nThe rules.\n")
    before = path.read_bytes(), note.read_bytes()
    api = MemoryAPI.open(str(vault), Environment(), session="s1")
    for ref in ("policy/rules.yaml", "policy/readme.md", "policy/../policy/readme.md"):
        with pytest.raises(VaultBrainError, match="not a memory note"):
            api.update(ref, content="prune everything")
        with pytest.raises(VaultBrainError, match="not a memory note"):
            api.archive(ref, "gone")
    with pytest.raises(UsageError, match="is a path"):  # refused, not renamed
        api.add("entity", "Rules", "Ada prefers tea.", category="../../policy")
    made = api.add("entity", "Rules", "Ada prefers tea.", category="policy")
    assert made.note.path.startswith("entities/")
    assert "policy/readme.md" not in cli("--vault", str(vault), "list").stdout
    assert (path.read_bytes(), note.read_bytes()) == before
