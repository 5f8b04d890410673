"""The CLI reference in docs/cli.md is generated from --help and must not drift."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

from conftest import REPO


def test_cli_reference_is_up_to_date() -> None:
    spec = importlib.util.spec_from_file_location("gen_cli_docs", REPO / "scripts/gen_cli_docs.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    current = (REPO / "docs/cli.md").read_text(encoding="utf-8")
    assert module.render() == current, "docs/cli.md is stale: run `make docs`"


def test_help_imports_nothing_heavy() -> None:
    """`vb --help` must not pay for whoosh, watchdog, git, yaml or tiktoken."""
    code = (
        "import sys, runpy; sys.argv=['vb','--help']\n"
        "try:\n    runpy.run_module('vault_brain', run_name='__main__')\n"
        "except SystemExit: pass\n"
        "heavy=[m for m in ('whoosh','watchdog','git','yaml','ruamel','tiktoken','frontmatter',"
        "'filelock','openai','docker','mcp') if m in sys.modules]\n"
        "print('HEAVY=' + ','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "Usage: vb" in out.stdout
    assert out.stdout.splitlines()[-1] == "HEAVY=", out.stdout
