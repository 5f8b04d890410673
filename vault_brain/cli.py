"""The `vb` command line. Commands call the core and print once (text or versioned JSON).

Heavy libraries (whoosh, watchdog, git, yaml) are imported inside the commands that
need them so that `vb --help` stays fast.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

import typer

from vault_brain import __version__
from vault_brain.errors import VaultBrainError

if TYPE_CHECKING:
    from vault_brain.core import Vault

app = typer.Typer(
    name="vb",
    help="vault_brain: long-term memory for AI agents, kept as a plain Markdown vault.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@dataclass
class Options:
    vault: str | None = None
    debug: bool = False


OPTIONS = Options()

# Filters shared by the commands that select notes (search, list).
TypeFilter = Annotated[
    str | None, typer.Option("--type", "-t", help="Only entity, episode or note.")
]
CategoryFilter = Annotated[str | None, typer.Option("--category", "-c", help="Only this category.")]
TagFilter = Annotated[
    str | None, typer.Option("--tag", help="Only notes with this tag (or a child tag).")
]
ArchiveFlag = Annotated[bool, typer.Option("--include-archive", help="Include archived notes.")]
JsonOpt = Annotated[
    bool, typer.Option("--json", help="Print one JSON document (with a version field).")
]


def _version(value: bool) -> None:
    if value:
        print(f"vb {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    vault: Annotated[
        str | None,
        typer.Option(
            "--vault",
            "-V",
            help="Vault folder. Default: $VB_VAULT, else the nearest parent "
            "folder holding STRATEGY.md.",
            show_default=False,
        ),
    ] = None,
    debug: Annotated[bool, typer.Option("--debug", help="Show a traceback on errors.")] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    OPTIONS.vault = vault
    OPTIONS.debug = debug


def open_vault() -> Vault:
    from vault_brain.core import Vault

    return Vault.open(OPTIONS.vault)


def emit(payload: dict[str, Any], as_json: bool, human: str | None = None) -> None:
    """The one place results are printed."""
    if as_json:
        from vault_brain.render import to_json

        sys.stdout.write(to_json({"version": 1, **payload}) + "\n")
    elif human is not None:
        sys.stdout.write(human if human.endswith("\n") else human + "\n")


def read_content(content: str | None) -> str:
    if content is not None and content != "-":
        return content
    if sys.stdin is None or sys.stdin.isatty():
        raise VaultBrainError(
            "no content given", hint="pass the content as an argument or pipe it on stdin"
        )
    return sys.stdin.read()


# Commands live in their own modules; importing them registers them on `app`.
from vault_brain.commands import (  # noqa: E402,F401
    credit_cmds,
    index_cmds,
    lifecycle_cmds,
    mcp_cmds,
    memory_cmds,
    session_cmds,
    tasks_cmds,
    vault_cmds,
)


def main() -> None:
    try:
        app()
    except VaultBrainError as exc:
        if OPTIONS.debug:
            import traceback

            traceback.print_exc()
        sys.stderr.write(f"vb: error: {exc.message}\n")
        if exc.hint:
            sys.stderr.write(f"vb: hint: {exc.hint}\n")
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        sys.stderr.write("vb: interrupted\n")
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(0)
    except OSError as exc:
        if OPTIONS.debug:
            raise
        from vault_brain.vault.store import io_error

        err = io_error(exc, exc.filename or "a file")
        sys.stderr.write(f"vb: error: {err.message}\nvb: hint: {err.hint}\n")
        sys.exit(err.exit_code)
