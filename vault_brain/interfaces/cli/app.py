"""The `vb` command line: the typer app, its grouped help, and the one place errors are
reported.

Commands call the memory API and print once (`output.emit`): text for people, or a JSON
document with a version under `--json`. Every failure leaves here as one line and a hint on
stderr (or a JSON error document on stdout under `--json`) with a distinct exit code; a
traceback only with `--debug`. Command modules import the application layer inside each
command, so `vb --help` and `vb <command> --help` never load whoosh, yaml, git or openai.
"""

from __future__ import annotations

import importlib
import json
import sys
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup

from vault_brain import __version__
from vault_brain.domain.errors import UsageError, VaultBrainError
from vault_brain.storage.env import Environment

if TYPE_CHECKING:
    from vault_brain.app.api import MemoryAPI

# `vb --help` lists commands in these sections, in this order.
SECTIONS: dict[str, tuple[str, ...]] = {
    "Vault": (
        "init",
        "status",
        "sync",
        "clone",
        "fetch-old",
        "conflicts",
        "history",
        "log",
        "persona",
        "export",
        "graph",
        "watch",
    ),
    "Memories": ("add", "show", "update", "delete", "restore", "list"),
    "Search": ("search", "index"),
    "Knowledge": ("extract", "items", "import"),
    "Credit and lifecycle": (
        "feedback",
        "credit",
        "memory-file",
        "consolidate",
        "promote",
        "prune",
        "doctor",
        "maintain",
        "strategy",
        "policy",
    ),
    "Sessions": ("session", "loop", "flush", "compact", "sessions", "tasks"),
    "Integrations": ("mcp", "serve", "token", "hooks", "hook"),
}


def summary(cmd: Any) -> str:  # (a click command of typer's own copy of click)
    """A command's one-line summary: the first line of its help, never cut."""
    text = cmd.short_help or (cmd.help or "")
    return text.strip().split("\n", 1)[0].strip()


class GroupedGroup(TyperGroup):
    """Commands in `SECTIONS` order, listed under their section headings."""

    def list_commands(self, ctx: Any) -> list[str]:
        ordered = [name for names in SECTIONS.values() for name in names if name in self.commands]
        return ordered + sorted(set(self.commands) - set(ordered))

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        listed: set[str] = set()
        for title, names in SECTIONS.items():
            rows = [(n, summary(self.commands[n])) for n in names if n in self.commands]
            listed.update(names)
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)
        rest = [(n, summary(c)) for n, c in sorted(self.commands.items()) if n not in listed]
        if rest:
            with formatter.section("Other"):
                formatter.write_dl(rest)


app = typer.Typer(
    name="vb",
    cls=GroupedGroup,
    help="vault_brain: long-term memory for AI agents, kept as a plain Markdown vault.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@dataclass
class CliState:
    """What the root options say, kept on the click context (no global state)."""

    env: Environment = field(default_factory=Environment)
    vault: str | None = None
    debug: bool = False
    as_json: bool = False
    progress: Any = None
    """The command's progress line (`interfaces.cli.progress.ProgressLine`), if it drew one."""


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"vb {__version__}\n")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
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
    state = ctx.ensure_object(CliState)
    state.vault = vault
    state.debug = debug


_STATE: ContextVar[CliState | None] = ContextVar("vb_cli_state", default=None)


def state() -> CliState:
    """The running command's root options and environment (`main` sets them)."""
    return _STATE.get() or CliState()


def open_api(session: str | None = None, command: bool = True) -> MemoryAPI:
    """The memory API on the vault the root options and environment name: a person's
    command, whose note writes commit at `commit_on`'s `command` moment (a hook, run for an
    agent's harness: `command=False`)."""
    from vault_brain.app.api import MemoryAPI  # lazy: keeps `vb --help` light

    st = state()
    api = MemoryAPI.open(st.vault, st.env, session=session, command=command)
    from vault_brain.interfaces.cli.progress import ProgressLine, on_terminal

    if on_terminal(st.as_json):  # a first index, or many changed files, shows its progress
        st.progress = st.progress or ProgressLine("indexing")
        api.vault.progress = st.progress
    return api


# The module that defines each command (importing it registers the command on `app`).
# `main` imports only the module a command line names, so a search loads no lifecycle,
# session or integration code; help and unknown names load every module.
COMMAND_MODULES = {
    **dict.fromkeys(("init", "status", "watch"), "vaults"),
    **dict.fromkeys(("sync", "clone", "fetch-old"), "sync"),
    "conflicts": "conflicts",
    **dict.fromkeys(("history", "log"), "history"),
    "persona": "persona",
    **dict.fromkeys(("export", "graph"), "export"),
    **dict.fromkeys(("add", "show", "update", "delete", "restore", "list"), "memories"),
    **dict.fromkeys(("search", "index"), "search"),
    **dict.fromkeys(("extract", "items"), "knowledge"),
    "import": "imports",
    **dict.fromkeys(("feedback", "credit"), "credit"),
    **dict.fromkeys(
        ("memory-file", "consolidate", "promote", "prune", "doctor", "maintain", "strategy"),
        "lifecycle",
    ),
    **dict.fromkeys(("loop", "flush", "compact", "sessions"), "sessions"),
    "tasks": "tasks",
    "policy": "policy",
    "session": "session",
    "token": "tokens",
    **dict.fromkeys(("mcp", "serve", "hooks", "hook"), "integrations"),
}
_ROOT_VALUE_OPTIONS = ("--vault", "-V")


def _command_name(args: list[str]) -> str | None:
    """The command a command line names (after the root options), if any."""
    rest = iter(args)
    for arg in rest:
        if arg in _ROOT_VALUE_OPTIONS:
            next(rest, None)
        elif arg.startswith("--vault=") or arg == "--debug":
            continue
        else:
            return None if arg.startswith("-") else arg
    return None


def load_commands(args: list[str] | None = None) -> typer.Typer:
    """Register the commands `args` needs (all of them when `args` is None) on `app`."""
    name = _command_name(args) if args is not None else None
    modules = {COMMAND_MODULES[name]} if name in COMMAND_MODULES else set(COMMAND_MODULES.values())
    for module in sorted(modules):
        importlib.import_module(f"vault_brain.interfaces.cli.{module}")
    return app


def report_error(exc: VaultBrainError, as_json: bool) -> int:
    """Print an error as every command does (the hint on its own line; with --json, the
    error document); returns its exit code."""
    if as_json:
        doc = {"version": 2, "error": exc.to_json()}
        sys.stdout.write(json.dumps(doc, ensure_ascii=False) + "\n")
    else:
        sys.stderr.write(f"vb: error: {exc.message}\n")
        if exc.hint:
            sys.stderr.write(f"vb: hint: {exc.hint}\n")
    return exc.exit_code


def _click_error(exc: Exception) -> str | None:
    """ "help" for click's no-arguments help, "usage" for its other usage errors, else None.
    typer 0.28 keeps its copy of click's exception classes out of its public API, so they are
    known by their class names."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    if "NoArgsIsHelpError" in names:
        return "help"
    return "usage" if "UsageError" in names and not isinstance(exc, VaultBrainError) else None


def _usage_error(exc: Any) -> UsageError:
    """A click usage error in vb's own words: one line, and where to find the usage."""
    message = exc.format_message().strip().rstrip(".")
    message = message[:1].lower() + message[1:] if message else "bad command line"
    where = exc.ctx.command_path if exc.ctx is not None else "vb"
    return UsageError(message, hint=f"see `{where} --help`")


def main(argv: list[str] | None = None, env: Environment | None = None) -> int:
    """Run `vb` with `argv` (default: the process's arguments); returns the exit status."""
    args = sys.argv[1:] if argv is None else list(argv)
    as_json = "--json" in args
    cli_state = CliState(env=env or Environment.from_os(), as_json=as_json)
    debug = "--debug" in args
    command = typer.main.get_command(load_commands(args))
    token = _STATE.set(cli_state)
    try:
        code = command.main(args, prog_name="vb", standalone_mode=False, obj=cli_state)
        return code if isinstance(code, int) else 0  # a command's typer.Exit(n) comes back as n
    except typer.Exit as exc:
        return int(exc.exit_code)
    except typer.Abort:
        sys.stderr.write("vb: interrupted\n")
        return 130
    except VaultBrainError as exc:
        if debug:
            import traceback  # only with --debug

            traceback.print_exc()
        return report_error(exc, as_json)
    except KeyboardInterrupt:
        sys.stderr.write("vb: interrupted\n")
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:
        if debug:
            raise
        from vault_brain.storage.files import io_error  # lazy: only when something failed

        return report_error(io_error(exc, exc.filename or "a file"), as_json)
    except (
        Exception
    ) as exc:  # click's usage errors; else a bug: still one line, and how to see more
        click_error = _click_error(exc)
        if click_error == "help":  # `vb` or `vb tasks` alone: the help
            sys.stdout.write(exc.format_message() + "\n")  # type: ignore[attr-defined]
            return 0
        if click_error == "usage":
            return report_error(_usage_error(exc), as_json)
        if debug:
            raise
        error = VaultBrainError(
            f"internal error ({type(exc).__name__}: {exc}); this is a bug in vb",
            hint="run the command again with --debug for the traceback, and report it",
        )
        return report_error(error, as_json)
    finally:
        if cli_state.progress is not None:
            cli_state.progress.close()
        _STATE.reset(token)
