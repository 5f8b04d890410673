"""vb feedback | credit report."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from vault_brain.domain.notes.credit import SIGNALS
from vault_brain.interfaces.cli.app import app, open_api
from vault_brain.interfaces.cli.options import JsonOpt, SessionOpt
from vault_brain.interfaces.cli.output import emit, table

if TYPE_CHECKING:
    from vault_brain.app.memory.credit import CreditEntry

credit_app = typer.Typer(help="Credit scores learnt from outcomes.", no_args_is_help=True)
app.add_typer(credit_app, name="credit")


@app.command()
def feedback(
    signal: Annotated[str, typer.Argument(help=f"One of: {', '.join(SIGNALS)}.")],
    session: SessionOpt,
    as_json: JsonOpt = False,
) -> None:
    """Credit (or blame) the memories of a session's last turn."""
    result = open_api().feedback(signal, session)
    if result.repeated:
        lines = [f"{result.signal}: already applied to this turn; nothing changed"]
    elif result.changes:
        lines = [f"{result.signal} ({result.reward:+g}, shared {result.share:+.3f}):"]
        lines += [f"  {c.id}: {c.old:.3f} -> {c.new:.3f}" for c in result.changes]
    elif result.skipped:
        lines = [f"{result.signal}: nothing credited"]
    else:
        lines = [f"{result.signal}: no memories were retrieved in the last turn; nothing credited"]
    lines += [f"  skipped {s.id}: {s.reason}" for s in result.skipped]
    emit(result, as_json, "\n".join(lines))


@credit_app.command("report")
def report(
    top: Annotated[int, typer.Option("--top", min=1, help="How many from each end.")] = 10,
    as_json: JsonOpt = False,
) -> None:
    """Highest and lowest effective credit (decayed since last access), with access counts."""
    data = open_api().credit_report(top)

    def part(title: str, rows: list[CreditEntry]) -> str:
        body = table(
            ["effective", "credit", "accesses", "id", "title"],
            [
                [f"{r.effective_credit:.3f}", f"{r.credit:.3f}", r.access_count, r.id, r.title]
                for r in rows
            ],
        )
        return f"{title}\n{body}"

    emit(data, as_json, part("highest", data.highest) + "\n\n" + part("lowest", data.lowest))
