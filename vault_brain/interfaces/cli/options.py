"""Options shared by several commands. A short flag means one thing everywhere:
-V vault, -t type, -c category, -s session, -k limit, -n name, -r reason, -f format,
-q quiet, -p priority, -m milestone, -d description, -b blocked-by, -h help."""

from __future__ import annotations

from typing import Annotated

import typer

TypeFilter = Annotated[
    str | None,
    typer.Option(
        "--type", "-t", help="Only entity, episode or note (a hand-made note).", show_default=False
    ),
]
CategoryFilter = Annotated[
    str | None,
    typer.Option("--category", "-c", help="Only this category.", show_default=False),
]
TagFilter = Annotated[
    str | None,
    typer.Option("--tag", help="Only notes with this tag (or a child tag).", show_default=False),
]
ScopeFilter = Annotated[
    str | None,
    typer.Option(
        "--scope",
        help="Only notes of these scopes (comma-separated): global, user:<id>, "
        "chat:<channel>:<id>, agent:<name>, or all.",
        show_default=False,
    ),
]
ArchiveFlag = Annotated[bool, typer.Option("--include-archive", help="Include archived notes.")]
JsonOpt = Annotated[
    bool,
    typer.Option("--json", help="Print one JSON document (with a version field); errors too."),
]
SessionOpt = Annotated[
    str, typer.Option("--session", "-s", help="Session id (letters, digits, . _ -).")
]
DryRun = Annotated[
    bool, typer.Option("--dry-run", help="Print what would change (and why); change nothing.")
]
