"""Progress on long work: a line on stderr when it is a terminal (a real pseudo-terminal,
`vb` a real process), nothing when stderr is piped or the output is JSON."""

from __future__ import annotations

import os
import select
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_vb

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")


def run_on_terminal(*args: str) -> tuple[int, str, str]:
    """`vb args` with stderr on a pseudo-terminal (stdout piped): exit code, stdout, and
    what the terminal received."""
    master, slave = os.openpty()
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "100"}
    env.pop("VB_VAULT", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "vault_brain", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=slave,
        env=env,
    )
    os.close(slave)
    seen = b""
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # the process closed the terminal
                    break
                if not chunk:
                    break
                seen += chunk
            elif proc.poll() is not None:
                break
        out = proc.stdout.read() if proc.stdout else b""
        code = proc.wait(timeout=120)
    finally:
        os.close(master)
        if proc.stdout:
            proc.stdout.close()
    return code, out.decode(), seen.decode(errors="replace")


def many_notes(vault: Path, n: int, words: int = 0) -> None:
    """`n` notes; `words` more words of distinct filler in each (more to index per note)."""
    folder = vault / "notes" / "many"
    folder.mkdir(parents=True)
    for i in range(n):
        filler = " ".join(f"w{i}x{k}" for k in range(words))
        (folder / f"topic-{i}.md").write_text(
            f"# Topic {i}\n\nWords about subject {i}, helm charts and deploying pods.\n{filler}\n",
            encoding="utf-8",
        )


def test_rebuild_shows_progress_on_a_terminal_only(vault: Path) -> None:
    many_notes(vault, 60)
    code, out, term = run_on_terminal("--vault", str(vault), "index", "--rebuild")
    assert code == 0
    assert "indexing" in term and "/60" in term  # the line, with done/total
    assert out.startswith("rebuilt: 6")  # the result still on stdout, alone
    assert "indexing" not in out

    piped = run_vb("--vault", str(vault), "index", "--rebuild")
    assert piped.exit_code == 0 and piped.stderr == ""

    code, out, term = run_on_terminal("--vault", str(vault), "index", "--rebuild", "--json")
    assert code == 0 and term == ""
    assert out.startswith('{"version"')


def test_first_search_shows_indexing_progress(vault: Path) -> None:
    # an index build of several seconds here, many times the line's 0.3 s delay (3,000
    # short notes took about 0.3 s once index writing got faster, and the line often
    # never showed)
    many_notes(vault, 3000, words=60)
    code, out, term = run_on_terminal("--vault", str(vault), "search", "helm charts", "-k", "1")
    assert code == 0
    assert "indexing" in term
    assert "note-notes-many-topic" in out and "indexing" not in out
    # the index is built now: a warm search is quick and prints no line
    code, out, term = run_on_terminal("--vault", str(vault), "search", "helm charts", "-k", "1")
    assert code == 0 and term == ""


def test_search_json_and_pipe_are_silent(vault: Path) -> None:
    many_notes(vault, 3000)
    code, out, term = run_on_terminal(
        "--vault", str(vault), "search", "helm charts", "-k", "1", "--json"
    )
    assert code == 0 and term == ""
    assert out.startswith('{"version"')
    (vault / ".vb").joinpath("manifest.json").unlink()
    piped = run_vb("--vault", str(vault), "search", "helm charts", "-k", "1")
    assert piped.exit_code == 0 and piped.stderr == ""
