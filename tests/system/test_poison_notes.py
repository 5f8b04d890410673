"""One bad note never takes anything down: hostile front matter (alias cycles and bombs, deep
nesting, non-finite numbers, huge values, garbage bytes) is read in bounded time, indexed by
what can be read, reported by `vb status`, and never stops another note, a command, the
watcher or the MCP server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import VB_PROCESS, run_vb, stop_process
from vault_brain.entry import main
from vault_brain.storage.notes.frontmatter import parse_text
from vault_brain.storage.template import init_vault

LAUGHS = "a0: &a0 [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 12)
)
POISON = {
    "alias-cycle": "a: &x [*x]\n",
    "alias-cycle-map": "a: &x {b: *x}\n",
    "billion-laughs": LAUGHS,
    "infinite-counter": "access_count: .inf\ncredit: 1e400\n",
    "nan-credit": "credit: .nan\n",
    "huge-int": "access_count: " + "9" * 5000 + "\n",
    "deep-flow": "a: " + "[" * 20000 + "]" * 20000 + "\n",
    "deep-block": "a:\n" + "".join("  " * i + "-\n" for i in range(1, 200)),
    "dash-line": "a: " + "- " * 30000 + "x\n",
    "many-tags": "tags: [" + ", ".join(f"t{i}" for i in range(30000)) + "]\n",
    "huge-front-matter": "notes: " + "x" * 200_000 + "\n",
    "impossible-date": "created: 2023-02-30\n",
    "huge-date": "created: 99999-01-01\n",
    "not-a-mapping": "- just\n- a list\n",
    "duplicate-anchor": "a: &x 1\nb: &x 2\nc: *x\n",
    "undefined-alias": "a: *nowhere\n",
    "tab-indent": "a:\n\t- b\n",
    "bad-credit": "credit: lots\naccess_count: [1, 2]\n",
}


def poison_note(front: str, body: str = "Body text about the harbour.\n") -> bytes:
    return f"---\n{front}---\n{body}".encode()


@pytest.mark.parametrize("name", list(POISON))
def test_each_poison_note_is_read_in_bounded_time(name: str) -> None:
    started = time.perf_counter()
    parsed = parse_text(poison_note(POISON[name]))
    assert time.perf_counter() - started < 2.0
    assert parsed.body.startswith("Body text")
    json.dumps(parsed.meta)  # whatever was read is plain JSON


@pytest.fixture
def poisoned(tmp_path: Path) -> Path:
    """A vault with every poison note beside two good ones."""
    root = tmp_path / "vault"
    init_vault(root)
    for name, front in POISON.items():
        path = root / "entities" / "projects" / f"{name}.md"
        path.write_bytes(poison_note(front))
    (root / "entities/projects/binary.md").write_bytes(b"\xff\xfe\x00garbage\x00\x80" * 100)
    (root / "entities/people/ada.md").write_text("---\ntitle: Ada\n---\nAda likes kelp.\n")
    (root / "entities/people/bo.md").write_text("Bo likes kelp too.\n")
    return root


def test_every_read_command_survives_a_vault_of_poison_notes(poisoned: Path) -> None:
    """In real processes (the C YAML parser crashing would kill the process, not a test)."""
    v = ("--vault", str(poisoned))
    assert run_vb(*v, "index").exit_code == 0
    status = run_vb(*v, "status", "--json").json()
    problems = {
        p["path"].rsplit("/", 1)[-1].removesuffix(".md"): p["problem"] for p in status["problems"]
    }
    readable = {"huge-date"}  # a year of five digits is text, not a date: nothing wrong
    assert set(problems) == set(POISON) - readable | {"binary"}
    assert status["index"]["fresh"] is True  # indexed, not "stale"
    assert "recursive alias" in problems["alias-cycle"]
    assert "aliases" in problems["billion-laughs"]
    assert "not finite" in problems["infinite-counter"]
    assert "larger than 64 KB" in problems["huge-front-matter"]
    assert "nested more than" in problems["deep-flow"]
    assert "not UTF-8" in problems["binary"]
    started = time.perf_counter()
    for args in (
        ["search", "kelp", "--json"],
        ["list", "--json"],
        ["memory-file", "--json"],
        ["credit", "report", "--json"],
        ["maintain", "--dry-run", "--json"],
        ["search", "harbour", "-s", "agent-1", "-k", "50", "--json"],
        ["feedback", "good", "-s", "agent-1", "--json"],
        ["index", "--rebuild"],
    ):
        res = run_vb(*v, *args)
        assert res.exit_code == 0, (args, res.stderr)
        assert "Traceback" not in res.stderr
    assert time.perf_counter() - started < 60
    found = run_vb(*v, "search", "kelp", "--json").json()["results"]
    assert {h["id"] for h in found} == {"entity-people-ada", "entity-people-bo"}
    # a poison note is still found by its body, and shown
    hits = run_vb(*v, "search", "harbour", "-k", "50", "--json").json()["results"]
    assert len(hits) == len(POISON)
    shown = run_vb(*v, "show", "entities/projects/alias-cycle.md", "--json")
    assert shown.exit_code == 0 and shown.json()["note"]["problem"]


def test_the_watcher_keeps_indexing_through_poison_notes(poisoned: Path) -> None:
    proc = subprocess.Popen(
        [*VB_PROCESS, "--vault", str(poisoned), "watch", "--quiet"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(2.0)
        (poisoned / "entities/projects/new-bomb.md").write_bytes(poison_note(LAUGHS))
        (poisoned / "entities/projects/new-cycle.md").write_bytes(poison_note("a: &x [*x]\n"))
        (poisoned / "entities/people/cy.md").write_text("Cy studies narwhals.\n")
        deadline = time.monotonic() + 20
        while True:
            status = run_vb("--vault", str(poisoned), "status", "--json").json()
            if status["index"]["fresh"] or time.monotonic() > deadline:
                break
            time.sleep(0.3)
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        assert status["watcher"]["alive"] is True
        assert status["index"]["fresh"] is True
        found = run_vb("--vault", str(poisoned), "search", "narwhals", "--json").json()
        assert [h["id"] for h in found["results"]] == ["entity-people-cy"]
    finally:
        stop_process(proc, sig=signal.SIGTERM)


# --------------------------------------------------------------------------- fuzzing

HOSTILE_PIECES = [
    *POISON.values(),
    "title: [unclosed\n",
    "tags: {a: [b, {c: }]}\n",
    "x: !!python/object:os.system\n",
    "y: !!binary AAAA\n",
    "'quoted key': 1\n",
    "? complex\n: key\n",
    "<<: {merged: 1}\n",
    "id: \x00nul\n",
    "title: \ufeffbom\n",
    "a: |\n  block\n b: bad\n",
]


@st.composite
def hostile_note(draw: Any) -> bytes:
    pieces = draw(st.lists(st.sampled_from(HOSTILE_PIECES), min_size=1, max_size=3))
    noise = draw(st.text(min_size=0, max_size=40))
    front = "".join(pieces) + (f"n: {json.dumps(noise)}\n" if noise else "")
    body = draw(st.text(min_size=0, max_size=200))
    raw = f"---\n{front}---\n{body}".encode("utf-8", "surrogatepass")
    if draw(st.booleans()):
        raw += draw(st.binary(max_size=40))
    return raw


@pytest.fixture(scope="module")
def fuzz_vault() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        init_vault(root)
        (root / "entities/people/keeper.md").write_text("Keeper guards the lighthouse.\n")
        yield root


def _vb(root: Path, *args: str) -> tuple[int, str]:
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["--vault", str(root), "--debug", *args])
    return code, err.getvalue() + out.getvalue()


# VB_FUZZ_EXAMPLES raises the count for a longer run (RELIABILITY.md gives its figures).
FUZZ_EXAMPLES = int(os.environ.get("VB_FUZZ_EXAMPLES", "60"))


@settings(max_examples=FUZZ_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(notes=st.lists(hostile_note(), min_size=1, max_size=4))
def test_fuzzed_notes_never_break_a_read_command(fuzz_vault: Path, notes: list[bytes]) -> None:
    folder = fuzz_vault / "entities" / "fuzz"
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.iterdir():
        old.unlink()
    for n, raw in enumerate(notes):
        (folder / f"n{n}.md").write_bytes(raw)
        os.utime(folder / f"n{n}.md", None)
    for args in (["search", "lighthouse", "--json"], ["list", "--json"], ["status", "--json"]):
        code, err = _vb(fuzz_vault, *args)
        assert code == 0, (args, err)
    code, _ = _vb(fuzz_vault, "search", "lighthouse", "--json")
    assert code == 0
