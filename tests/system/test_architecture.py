"""The shape of the code: one concept per module, each named by the docstring it opens with,
and start-up paths that import nothing heavy. The layer, feature-room and no-circle contracts
are checked by `make lint` (import-linter), private names of other packages by ruff."""

from __future__ import annotations

import ast
import subprocess
import sys

from conftest import REPO

LONGEST = 1000  # lines: past this a module holds more than one concept, whatever it says


def test_every_module_states_its_one_concept_and_none_is_sprawling() -> None:
    """A module is one concept: it opens with a docstring saying what (a package's
    `__init__` names its room), and none grows past LONGEST lines. Length alone is no
    reason to split: a split that creates an import circle fails `make lint`."""
    unstated, sprawling = [], {}
    for path in sorted((REPO / "vault_brain").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(REPO).as_posix()
        if text.strip() and not (ast.get_docstring(ast.parse(text)) or "").strip():
            unstated.append(rel)
        if len(text.splitlines()) > LONGEST:
            sprawling[rel] = len(text.splitlines())
    assert unstated == []
    assert sprawling == {}


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
