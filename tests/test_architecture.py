"""The shape of the code: modules small enough to read in a sitting, and start-up paths that
import nothing heavy (the layer contracts themselves are checked by `make lint`)."""

from __future__ import annotations

import subprocess
import sys

from conftest import REPO

MAX_LINES = 500


def test_no_module_is_over_500_lines() -> None:
    sizes = {
        p.relative_to(REPO).as_posix(): len(p.read_text(encoding="utf-8").splitlines())
        for p in (REPO / "vault_brain").rglob("*.py")
    }
    assert {path: n for path, n in sizes.items() if n > MAX_LINES} == {}


def test_a_search_loads_only_the_search_commands_and_no_model_client() -> None:
    """`vb search` registers only its own command module and never imports the LLM client,
    git, watchdog or the MCP SDK."""
    code = (
        "import sys\n"
        "from vault_brain.interfaces.cli.app import load_commands\n"
        "load_commands(['--vault', 'x', 'search', 'tea'])\n"
        "import vault_brain.app.api\n"
        "cli = sorted(m for m in sys.modules if m.startswith('vault_brain.interfaces.cli.'))\n"
        "heavy = [m for m in ('openai', 'git', 'watchdog', 'mcp', 'tiktoken', 'yaml') "
        "if m in sys.modules]\n"
        "print(','.join(cli)); print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    cli, heavy = out.stdout.splitlines()
    assert cli.split(",") == [
        "vault_brain.interfaces.cli.app",
        "vault_brain.interfaces.cli.options",
        "vault_brain.interfaces.cli.output",
        "vault_brain.interfaces.cli.search",
        "vault_brain.interfaces.cli.warm",  # (the warm path and the renderer of search)
    ]
    assert heavy == ""
