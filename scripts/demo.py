"""`make demo`: build a demo vault from the template, add sample memories, index, search, status.

Runs entirely offline on the embedded defaults (no server, no API key). Each step is the
real `vb` command, printed before it runs, so the output doubles as a tour.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VAULT = ROOT / "demo-vault"

MEMORIES = [
    (
        "entity",
        "people",
        "Ada Lovelace",
        ["team", "math"],
        "Ada leads the analytics engine project. Prefers written proposals over meetings; "
        "reachable on Tuesdays and Thursdays.",
    ),
    (
        "entity",
        "projects",
        "Analytical Engine",
        ["project/engine"],
        "Goal: a general-purpose computing engine. Decision 2026-11-02: punch cards for input. "
        "Open question: how to store intermediate results. Owner: [[Ada Lovelace]].",
    ),
    (
        "entity",
        "preferences",
        "Code review style",
        ["process"],
        "The user wants small pull requests, type hints everywhere, and tests that use real files "
        "instead of mocks.",
    ),
    (
        "episode",
        "general",
        "Planning session for the engine",
        ["project/engine", "planning"],
        "Discussed the store (memory) unit with Ada. Agreed to prototype the mill first and to "
        "review the card reader design next week.",
    ),
    (
        "episode",
        "general",
        "Tea preferences come up",
        ["personal"],
        "While chatting, the user mentioned preferring green tea in the afternoon and no meetings "
        "before ten.",
    ),
]


def vb(*args: str, stdin: str | None = None) -> str:
    cmd = [sys.executable, "-m", "vault_brain", "--vault", str(VAULT), *args]
    shown = " ".join(a if " " not in a else repr(a) for a in ["vb", *args])
    print(f"\n$ {shown}")
    proc = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    sys.stdout.write(proc.stdout)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise SystemExit(f"demo step failed: {shown}")
    return proc.stdout


def main() -> None:
    if VAULT.exists():
        shutil.rmtree(VAULT)
    vb("init", str(VAULT))
    for type_, category, name, tags, content in MEMORIES:
        tag_args = [a for t in tags for a in ("--tag", t)]
        vb("add", "--type", type_, "--category", category, "--name", name, *tag_args, stdin=content)
    vb("index")
    vb("search", "who prefers written proposals")
    vb("search", "engine decisions", "--type", "entity")
    vb("search", "tea", "--json")
    vb("list", "--tag", "project")
    # an agent's turn: retrieval recorded for credit, then feedback
    vb("loop", "intake", "-s", "demo", "When does Ada prefer meetings? I like short answers.")
    vb("loop", "context", "-s", "demo")
    vb(
        "loop",
        "persist",
        "-s",
        "demo",
        "--role",
        "assistant",
        "--content",
        "Ada prefers written proposals; we decided to send her one on Tuesday.",
    )
    vb("feedback", "good", "--session", "demo")
    vb("flush", "-s", "demo")
    vb("memory-file")
    vb("credit", "report", "--top", "3")
    vb("maintain", "--dry-run")
    vb("status")
    print(
        f"\nDemo vault: {VAULT} (open it in Obsidian, or try `vb --vault {VAULT.name} search ...`)"
    )


if __name__ == "__main__":
    main()
