"""Print the CLI reference (docs/cli.md) generated from `vb --help` of every command.

`make docs` rewrites docs/cli.md; a test fails when the checked-in file is out of date.
"""

from __future__ import annotations

import os

from typer.testing import CliRunner

from vault_brain.cli import app


def command_names() -> list[str]:
    import typer.main

    group = typer.main.get_command(app)
    return sorted(group.commands)  # type: ignore[attr-defined]


def render() -> str:
    runner = CliRunner(env={"COLUMNS": "100", "TERMINAL_WIDTH": "100"})
    os.environ["COLUMNS"] = "100"
    parts = [
        "# vb command reference",
        "",
        "Generated from `vb --help` by `make docs`; do not edit.",
        "",
    ]
    for args in [[], *[[name] for name in command_names()]]:
        result = runner.invoke(app, [*args, "--help"], prog_name="vb")
        title = "vb " + " ".join(args) if args else "vb"
        parts += [f"## `{title}`", "", "```text", result.stdout.rstrip(), "```", ""]
    return "\n".join(parts)


if __name__ == "__main__":
    print(render(), end="")
