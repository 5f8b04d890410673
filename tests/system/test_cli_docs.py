"""The CLI reference in docs/cli.md is generated from --help and must not drift."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from typing import Any

from conftest import REPO


def _load_generator() -> Any:
    spec = importlib.util.spec_from_file_location("gen_cli_docs", REPO / "scripts/gen_cli_docs.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cli_reference_is_up_to_date() -> None:
    module = _load_generator()
    current = (REPO / "docs/cli.md").read_text(encoding="utf-8")
    assert module.render() == current, "docs/cli.md is stale: run `make docs`"
    saved = (REPO / "vault_brain/help.txt").read_text(encoding="utf-8")
    assert module.top_help() == saved, "vault_brain/help.txt is stale: run `make docs`"


def test_fast_help_is_the_real_help() -> None:
    """`vb --help`, answered without typer, prints what the typer app prints."""
    fast = subprocess.run(
        [sys.executable, "-m", "vault_brain", "--help"], capture_output=True, text=True, check=True
    ).stdout
    assert fast == _load_generator().top_help() and fast.startswith("Usage: vb")


def test_command_help_imports_nothing_heavy() -> None:
    """Help for any command goes through typer but pays for no whoosh, watchdog, git, yaml..."""
    code = (
        "import sys, runpy; sys.argv=['vb','search','--help']\n"
        "try:\n    runpy.run_module('vault_brain', run_name='__main__')\n"
        "except SystemExit: pass\n"
        "heavy=[m for m in ('whoosh','watchdog','git','yaml','ruamel','tiktoken','frontmatter',"
        "'filelock','openai','docker','mcp') if m in sys.modules]\n"
        "print('HEAVY=' + ','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "Usage: vb search" in out.stdout
    assert out.stdout.splitlines()[-1] == "HEAVY=", out.stdout
