"""The `vb` console entry point.

`vb`, `vb --help` and `vb --version` are answered from `help.txt`, the top-level help that
`make docs` renders from the CLI itself (a test fails when it is stale), so they start
without importing the CLI framework. Every other command goes to the typer app.
"""

from __future__ import annotations

import os
import sys

HELP_FILE = os.path.join(os.path.dirname(__file__), "help.txt")


def main(argv: list[str] | None = None) -> int:
    """Run `vb`; returns the exit status (the console script exits with it)."""
    args = sys.argv[1:] if argv is None else list(argv)
    if args in ([], ["--help"], ["-h"]) and os.path.isfile(HELP_FILE):
        with open(HELP_FILE, encoding="utf-8") as handle:
            sys.stdout.write(handle.read())
        return 0
    if args == ["--version"]:
        from vault_brain import __version__  # lazy: `vb --version` imports nothing else

        sys.stdout.write(f"vb {__version__}\n")
        return 0
    if args[:1] == ["merge-driver"]:  # git runs it once per file: no CLI framework
        from vault_brain.interfaces.git_merge import main as merge_driver

        return merge_driver(args[1:])
    if "search" in args[:3]:  # a plain search is answered before typer is even imported
        from vault_brain.interfaces.cli.warm import fast_search

        code = fast_search(args)
        if code is not None:
            return code
    from vault_brain.interfaces.cli.app import main as cli_main  # typer: ~50 ms

    return cli_main(args)
