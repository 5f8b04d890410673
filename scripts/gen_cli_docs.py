"""Print the CLI reference (docs/cli.md) generated from `vb --help` of every command.

`make docs` rewrites docs/cli.md; a test fails when the checked-in file is out of date.
"""

from __future__ import annotations

import os

from typer.testing import CliRunner

from vault_brain.interfaces.cli.app import load_commands

app = load_commands()


def command_paths() -> list[list[str]]:
    """Every command and sub-command, in the order `vb --help` lists them."""
    import typer.main
    from typer.core import TyperGroup

    def walk(group: TyperGroup, prefix: list[str]) -> list[list[str]]:
        out: list[list[str]] = []
        ctx = group.make_context(prefix[-1] if prefix else "vb", [], resilient_parsing=True)
        for name in group.list_commands(ctx):
            cmd = group.get_command(ctx, name)
            out.append([*prefix, name])
            if isinstance(cmd, TyperGroup):
                out += walk(cmd, [*prefix, name])
        return out

    root = typer.main.get_command(app)
    assert isinstance(root, TyperGroup)
    return walk(root, [])


def render() -> str:
    runner = CliRunner(env={"COLUMNS": "100", "TERMINAL_WIDTH": "100"})
    os.environ["COLUMNS"] = "100"
    parts = [
        "# vb command reference",
        "",
        "Generated from `vb --help` by `make docs`; do not edit.",
        "",
    ]
    for args in [[], *command_paths()]:
        result = runner.invoke(app, [*args, "--help"], prog_name="vb")
        title = "vb " + " ".join(args) if args else "vb"
        parts += [f"## `{title}`", "", "```text", result.stdout.rstrip(), "```", ""]
    return "\n".join(parts)


def top_help() -> str:
    """`vb --help` exactly as the typer app prints it to a pipe or an 80-column terminal
    (saved as vault_brain/help.txt, which `vb --help` prints without importing typer)."""
    import subprocess
    import sys

    code = "import sys\nfrom vault_brain.interfaces.cli.app import main\nsys.exit(main(['--help']))"
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    return proc.stdout


if __name__ == "__main__":
    import sys

    if sys.argv[1:2] == ["--help-file"]:
        with open(sys.argv[2], "w", encoding="utf-8") as handle:
            handle.write(top_help())
    print(render(), end="")
