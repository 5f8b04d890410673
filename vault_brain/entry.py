"""The `vb` console entry point.

`vb`, `vb --help` and `vb --version` are answered from `help.txt`, the top-level help that
`make docs` renders from the CLI itself (a test fails when it is stale), so they start
without importing the CLI framework. Every other command goes to the typer app.
"""

from __future__ import annotations

import os
import sys

HELP_FILE = os.path.join(os.path.dirname(__file__), "help.txt")


def main() -> None:
    args = sys.argv[1:]
    if args in ([], ["--help"], ["-h"]) and os.path.isfile(HELP_FILE):
        with open(HELP_FILE, encoding="utf-8") as handle:
            sys.stdout.write(handle.read())
        return
    if args == ["--version"]:
        from vault_brain import __version__

        sys.stdout.write(f"vb {__version__}\n")
        return
    from vault_brain.cli import main as cli_main

    cli_main()
