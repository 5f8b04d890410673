"""The CLI's contract with people and programs: grouped help that fits a terminal, one meaning
per short flag, closed choices checked with a hint, errors in one format (text or JSON),
and every `--json` document matching the published schema."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from conftest import REPO, run_vb
from vault_brain.app.lifecycle.plans import MaintainResult
from vault_brain.app.memory import results
from vault_brain.app.memory.apply import PlanResult
from vault_brain.app.memory.credit import CreditReport, FeedbackResult
from vault_brain.app.memory.memory_file import MemoryFileResult
from vault_brain.app.sessions.retention import SessionList
from vault_brain.app.sessions.tasks import TaskList
from vault_brain.interfaces.cli.app import COMMAND_MODULES, SECTIONS, load_commands

app = load_commands()


def _load(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_top_help_is_grouped_in_order_and_every_summary_fits_one_line() -> None:
    text = run_vb("--help").stdout
    headings = [line[:-1] for line in text.splitlines() if line and not line[0].isspace()]
    assert headings[-len(SECTIONS) :] == list(SECTIONS)
    listed = re.findall(r"^  ([a-z][a-z-]+)\s{2,}(\S.*)$", text, flags=re.MULTILINE)
    assert [name for name, _ in listed] == [n for names in SECTIONS.values() for n in names]
    for name, summary in listed:
        assert "..." not in summary and summary.endswith("."), (name, summary)
    assert all(len(line) <= 80 for line in text.splitlines())
    # a command's row never wraps onto a second line
    rows = text.split("Vault:", 1)[1].splitlines()
    assert all(re.match(r"^(  [a-z][a-z-]+\s{2,}\S|[A-Z][a-z ]+:$|$)", row) for row in rows), rows


def test_every_command_is_in_one_section_and_knows_its_module() -> None:
    import typer.main

    registered = set(typer.main.get_command(app).commands)  # type: ignore[attr-defined]
    in_sections = [name for names in SECTIONS.values() for name in names]
    assert sorted(in_sections) == sorted(set(in_sections)) == sorted(registered)
    assert set(COMMAND_MODULES) == registered


def _walk(command: Any, path: list[str]) -> list[tuple[list[str], Any]]:
    out = [(path, command)]
    for name, sub in getattr(command, "commands", {}).items():
        out += _walk(sub, [*path, name])
    return out


def test_a_short_flag_means_one_thing_everywhere() -> None:
    import typer.main

    meaning: dict[str, set[str]] = {}
    for _path, command in _walk(typer.main.get_command(app), ["vb"]):
        for param in command.params:
            opts = [o for o in getattr(param, "opts", []) if o.startswith("-")]
            shorts = [o for o in opts if re.fullmatch(r"-[A-Za-z]", o)]
            longs = [o for o in opts if o.startswith("--")]
            for short in shorts:
                meaning.setdefault(short, set()).update(longs)
    clashes = {short: longs for short, longs in meaning.items() if len(longs) > 1}
    assert clashes == {}


@pytest.mark.parametrize(
    ("args", "code", "message", "hint"),
    [
        (
            ["search", "x", "--type", "entities"],
            1,
            "unknown type 'entities'",
            "did you mean entity",
        ),
        (["list", "--type", "episodes"], 1, "unknown type 'episodes'", "did you mean episode"),
        (["add", "-n", "x", "-t", "fact", "y"], 1, "unknown type 'fact'", "entity, episode"),
        (["search", "x", "--bogus"], 2, "no such option: --bogus", "vb search --help"),
        (["search"], 1, "give either a QUERY or --queries FILE", "vb search"),
        (["show"], 2, "missing argument", "vb show --help"),
        (["nonsense"], 2, "no such command 'nonsense'", "vb --help"),
        (["feedback", "great", "-s", "x"], 1, "unknown feedback 'great'", "good"),
        (["loop", "context", "-s", "s", "-f", "yaml"], 1, "unknown format 'yaml'", "text"),
        (
            ["loop", "persist", "-s", "s", "--role", "tool_call", "--content", "not json"],
            1,
            "--content is not JSON",
            "JSON object",
        ),
        (
            ["loop", "persist", "-s", "s", "--role", "robot", "--content", "x"],
            1,
            "unknown role 'robot'",
            "assistant",
        ),
        (["show", "no-such-note"], 3, "no note with id 'no-such-note'", "vb list"),
        (["mcp", "--log-level", "LOUD"], 1, "unknown log level 'LOUD'", "debug"),
    ],
)
def test_bad_input_is_one_line_and_a_hint_or_a_json_error(
    vault: Path, args: list[str], code: int, message: str, hint: str
) -> None:
    res = run_vb("--vault", str(vault), *args)
    assert res.exit_code == code, res
    lines = res.stderr.splitlines()
    assert len(lines) == 2 and res.stdout == "", res
    assert lines[0].startswith("vb: error: ") and message in lines[0], lines
    assert lines[1].startswith("vb: hint: ") and hint in lines[1], lines
    assert "Traceback" not in res.stderr

    as_json = run_vb("--vault", str(vault), *args, "--json")
    assert as_json.exit_code == code and as_json.stderr == ""
    doc = json.loads(as_json.stdout)
    assert doc["version"] == results.SCHEMA_VERSION
    assert doc["error"]["exit_code"] == code and message in doc["error"]["message"]
    assert hint in doc["error"]["hint"]


def test_list_and_search_normalise_filters_alike(vault: Path, cli: Any) -> None:
    v = ("--vault", str(vault))
    cli(*v, "add", "-n", "Widget", "-c", "My Projects", "-t", "entity", "--tag", "#Work/Q3", "w")
    listed = cli(*v, "list", "-c", "My Projects", "--tag", "work", "--json").json()["notes"]
    found = cli(*v, "search", "widget", "-c", "My Projects", "--tag", "#WORK", "--json").json()
    assert (
        [n["id"] for n in listed]
        == [h["id"] for h in found["results"]]
        == ["entity-my-projects-widget"]
    )


def test_the_json_schema_in_docs_is_up_to_date() -> None:
    current = (REPO / "docs" / "schema.json").read_text(encoding="utf-8")
    assert _load("gen_schema").render() == current, "docs/schema.json is stale: run `make docs`"


def test_json_documents_match_their_published_schema(vault: Path, cli: Any) -> None:
    """Each `--json` document validates against its result type (as in docs/schema.json)."""
    v = ("--vault", str(vault))
    added = cli(*v, "add", "-n", "Ada", "-c", "people", "Ada writes programs.", "--json").json()
    note_id = added["note"]["id"]
    cli(*v, "tasks", "add", "write docs")
    cli(*v, "loop", "intake", "-s", "s1", "Who writes programs?")
    checks: list[tuple[Any, list[str]]] = [
        (results.NoteResult, ["show", note_id]),
        (results.NoteList, ["list"]),
        (results.SearchResult, ["search", "programs", "-s", "s1"]),
        (FeedbackResult, ["feedback", "good", "-s", "s1"]),
        (CreditReport, ["credit", "report"]),
        (PlanResult, ["prune", "--dry-run"]),
        (MaintainResult, ["maintain", "--dry-run"]),
        (MemoryFileResult, ["memory-file"]),
        (results.IndexResult, ["index"]),
        (results.StrategyResult, ["strategy"]),
        (TaskList, ["tasks", "list"]),
        (SessionList, ["sessions", "list"]),
        (results.MoveResult, ["delete", note_id]),
    ]
    for cls, args in checks:
        doc = cli(*v, *args, "--json").json()
        assert doc.pop("version") == results.SCHEMA_VERSION, args
        TypeAdapter(cls).validate_python(doc, strict=False)
        fields = {f for f in cls.__dataclass_fields__}
        assert set(doc) == fields, (args, set(doc) ^ fields)
