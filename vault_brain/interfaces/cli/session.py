"""vb session: talk to an agent that remembers, its workspace tools in a Docker sandbox."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Any

import typer

from vault_brain.domain.errors import UsageError
from vault_brain.domain.text import counted
from vault_brain.interfaces.cli.app import app, state

AGENTS = ("builtin", "opencode")


def _read_line(prompt: str) -> Callable[[float | None], str | None]:
    """A line reader honouring the time left: `input()` on a terminal (line editing), the
    next line of stdin otherwise; None at the end of input or when the time is up."""
    import select

    def read(left: float | None) -> str | None:
        if sys.stdin.isatty():
            sys.stdout.write(prompt)
            sys.stdout.flush()
        if left is not None:
            ready, _, _ = select.select([sys.stdin], [], [], max(left, 0))
            if not ready:
                return None
        line = sys.stdin.readline()
        return line if line else None

    return read


def _say(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def _write(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def _err(text: str) -> None:
    sys.stderr.write(text + "\n")


def _keep_config_out(env: Mapping[str, str], *mounted: Path) -> None:
    """vb's config file may hold the model's key: it must not be in a folder the sandbox
    mounts."""
    from vault_brain.storage.llm.config import default_config_path

    config = default_config_path(env).resolve()
    for folder in mounted:
        if config.exists() and config.is_relative_to(folder):
            raise UsageError(
                f"vb's config file {config} is inside {folder}, which the sandbox mounts: "
                "the agent could read its key",
                hint="move the file out (and point VB_CONFIG at it) or choose another folder",
            )


@app.command()
def session(
    agent: Annotated[
        str,
        typer.Option(
            "--agent",
            help="builtin: the agent loop runs on the host, its workspace tools in the "
            "sandbox. opencode: OpenCode runs in the sandbox, its model is vb serve and its "
            "memory vb mcp, both on the host through sockets.",
        ),
    ] = "builtin",
    workspace: Annotated[
        Path | None,
        typer.Option(
            "--workspace",
            help="The folder the agent works in (mounted read-write at /workspace); default: here.",
            show_default=False,
        ),
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option("--timeout", min=0.1, help="End the session after this many minutes."),
    ] = None,
    build: Annotated[
        bool,
        typer.Option("--build", help="Build the sandbox image again (and stop there)."),
    ] = False,
    base: Annotated[
        str | None,
        typer.Option(
            "--base",
            help="A local Docker image to build the sandbox from (default: a Debian base "
            "made with debootstrap, no registry needed).",
            show_default=False,
        ),
    ] = None,
    policy_rw: Annotated[
        bool,
        typer.Option(
            "--policy-rw",
            help="Let the agent edit the vault's policy/ (lifecycle rules, mounted read-write "
            "at /vault/policy); vb runs a changed policy only after `vb policy approve`.",
        ),
    ] = False,
) -> None:
    """Talk to an agent that remembers, its tools sandboxed in Docker.

    Workspace tools (commands, files) run in a container through docker exec. The sandbox
    has no network, no capabilities, a read-only root and a read-only view of the notes the
    session may read (never transcripts, .git, .vb or private notes); no key or vb
    configuration is ever inside it. /good /bad /status /compact /quit /help
    are handled by vb. At the end the transcript is flushed into memory and the vault
    committed with a one-line summary."""
    from vault_brain.app.api import MemoryAPI  # lazy: keeps `vb --help` light
    from vault_brain.app.memory.vault import Vault
    from vault_brain.app.runtime.index_keeper import keep_index
    from vault_brain.app.runtime.session import SessionRunner, check_model, recover
    from vault_brain.domain.sessions.records import new_session_id
    from vault_brain.domain.text import check_choice
    from vault_brain.storage.sandbox.build import ensure_image
    from vault_brain.storage.sandbox.container import Sandbox
    from vault_brain.storage.sandbox.engine import docker_client

    agent = check_choice(agent, AGENTS, "agent")
    where = (workspace or Path.cwd()).expanduser().resolve()
    if not where.is_dir():
        raise UsageError(f"no such folder: {where}", hint="give --workspace an existing folder")
    st = state()
    vault = Vault.open(st.vault, st.env)
    _keep_config_out(st.env.values, where, vault.root)

    def sandbox_image(client: Any) -> str:
        image = ensure_image(client, base=base, rebuild=build, say=_err)
        if agent == "opencode":
            from vault_brain.storage.sandbox.opencode_image import ensure_opencode_image

            image = ensure_opencode_image(client, image, st.env.values, rebuild=build, say=_err)
        return image

    if build:
        _say(f"sandbox image {sandbox_image(docker_client())} ready")
        return
    llm = check_model(vault)  # (before Docker: no image is built for a session that cannot run)
    client = docker_client()
    image = sandbox_image(client)
    session_id = new_session_id("session")
    api = MemoryAPI.live(vault, session_id, source="session")
    keep_index(api)  # (a watcher, not a walk over the vault before each of the agent's calls)
    recover(api, client, vault.root, _err)
    api.memory_file()
    done = api.commit(f"vb session {session_id}: vault changes before the session", "session")
    if done and done.startswith("git commit"):  # skipped or failed: say so, go on
        _err(f"vb: warning: {done}")
    if warning := api.policy_warning():
        _err(f"vb: warning: {warning}")
    runner: SessionRunner
    if agent == "opencode":
        from vault_brain.app.runtime.session_opencode import start_opencode

        runner = start_opencode(
            api, llm, client, image, workspace=where, policy_rw=policy_rw, say=_say, warn=_err
        )
    else:
        sandbox = Sandbox.start(
            client, image, workspace=where, vault=vault.root, session=session_id,
            policy_rw=policy_rw, private_paths=tuple(vault.policy.private_paths),
        )  # fmt: skip
        runner = SessionRunner(api, llm, sandbox, session_id, _say, warn=_err, write=_write)
    _err(f"vb session {session_id}: {agent} agent, workspace {where} (/help for commands)")
    try:
        report = runner.run(_read_line("> "), timeout * 60 if timeout else None)
    finally:
        api.close()
    turns = f"{report.turns} turn{'' if report.turns == 1 else 's'}"
    _err(
        f"vb session {session_id} ended ({report.reason}): {turns}, "
        f"{counted(report.flushed, 'note')} from the flush; {report.commit}"
    )
