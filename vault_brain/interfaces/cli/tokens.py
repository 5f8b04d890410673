"""vb token add | list | revoke: the tokens clients of `vb serve` present, and what each may do."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from vault_brain.interfaces.cli.app import app, state
from vault_brain.interfaces.cli.options import JsonOpt
from vault_brain.interfaces.cli.output import emit, table

if TYPE_CHECKING:
    from vault_brain.app.memory.tokens import TokenInfo
    from vault_brain.app.memory.vault import Vault

token_app = typer.Typer(
    help=(
        "Tokens for clients of `vb serve`, each with the scopes it may use.\n\n"
        "A client sends its token as its API key (Authorization: Bearer TOKEN). A request "
        "with a token reads its scopes and global, and writes only its scopes: naming "
        "another scope in memory_scope is refused (403), naming none uses its own. Its "
        "conversations are its own (another token's first message never lands in the same "
        "transcript); feedback needs --feedback, and only for its own conversations.\n\n"
        "Tokens live on this machine only (.vb/serve-tokens.json, mode 0600, never synced), "
        "each as its SHA-256: the token is printed once, when it is made. Once any token "
        "exists, vb serve answers only requests that bring one (VB_SERVE_TOKEN, if set, "
        "still works and may do everything). A revoked token is refused at once, also by a "
        "running vb serve."
    ),
    no_args_is_help=True,
)
app.add_typer(token_app, name="token")

NameArg = Annotated[
    str, typer.Argument(help="The token's name (letters, digits, . _ -), e.g. alice-laptop.")
]


def _vault() -> Vault:
    from vault_brain.app.memory.vault import Vault  # lazy: keeps `vb --help` light

    st = state()
    return Vault.open(st.vault, st.env)


def _grant(info: TokenInfo) -> str:
    scopes = "every scope" if info.scopes is None else ", ".join(info.scopes)
    extra = [f"agent {info.agent}"] if info.agent else []
    extra += ["feedback"] if info.feedback else []
    return scopes + "".join(f"; {e}" for e in extra)


@token_app.command()
def add(
    name: NameArg,
    scope: Annotated[
        list[str] | None,
        typer.Option(
            "--scope",
            help="A scope the token reads and writes: user:<id>, chat:<channel>:<id>, "
            "agent:<name> or global (repeat for more). It reads global as well.",
            show_default=False,
        ),
    ] = None,
    all_scopes: Annotated[
        bool,
        typer.Option("--all-scopes", help="Every scope, as the person at this machine has."),
    ] = False,
    agent: Annotated[
        str | None,
        typer.Option(
            "--agent",
            help="Also limit it to what the agent defined in agents/NAME.md may read and write.",
            show_default=False,
        ),
    ] = None,
    feedback: Annotated[
        bool,
        typer.Option(
            "--feedback",
            help="Let it credit memories (POST /v1/vb/feedback) for its own conversations.",
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Make a token and print it (once: only its hash is kept)."""
    from vault_brain.app.memory.tokens import add_token  # lazy: keeps `vb --help` light

    result = add_token(_vault(), name, list(scope or []), agent, feedback, all_scopes)
    human = (
        f"{result.token}\n"
        f"token {result.info.name} ({_grant(result.info)}): shown this once; clients send it "
        "as their API key."
    )
    emit(result, as_json, human)


@token_app.command("list")
def list_(as_json: JsonOpt = False) -> None:
    """The tokens: names, scopes, flags and when each was made (never a token)."""
    from vault_brain.app.memory.tokens import list_tokens  # lazy: keeps `vb --help` light

    result = list_tokens(_vault())
    rows = [(t.name, _grant(t), t.created) for t in result.tokens]
    human = table(["name", "may use", "created"], rows) if rows else "no tokens."
    emit(result, as_json, human)


@token_app.command()
def revoke(name: NameArg, as_json: JsonOpt = False) -> None:
    """Revoke a token: refused from now on (also by a running vb serve)."""
    from vault_brain.app.memory.tokens import revoke_token  # lazy: keeps `vb --help` light

    result = revoke_token(_vault(), name)
    emit(result, as_json, f"revoked token {result.info.name}.")
