"""vb feedback | credit report."""

from __future__ import annotations

from typing import Annotated

import typer

from vault_brain.cli import JsonOpt, app, emit, open_vault
from vault_brain.credit import SIGNALS
from vault_brain.render import table

credit_app = typer.Typer(help="Credit scores learnt from outcomes.", no_args_is_help=True)
app.add_typer(credit_app, name="credit")


@app.command()
def feedback(
    signal: Annotated[str, typer.Argument(help=f"One of: {', '.join(SIGNALS)}.")],
    session: Annotated[
        str, typer.Option("--session", help="The session whose last turn is judged.")
    ],
    as_json: JsonOpt = False,
) -> None:
    """Credit (or blame) the memories retrieved in a session's last turn."""
    from vault_brain.lifecycle.feedback import apply_feedback

    result = apply_feedback(open_vault(), session, signal)
    if result.changes:
        lines = [f"{result.signal} ({result.reward:+g}, shared {result.share:+.3f}):"]
        lines += [f"  {c.id}: {c.old:.3f} -> {c.new:.3f}" for c in result.changes]
    else:
        lines = [f"{result.signal}: no memories were retrieved in the last turn; nothing credited"]
    lines += [f"  skipped {s['id']}: {s['reason']}" for s in result.skipped]
    emit(result.to_json(), as_json, "\n".join(lines))


@credit_app.command("report")
def report(
    top: Annotated[int, typer.Option("--top", "-n", min=1, help="How many from each end.")] = 10,
    as_json: JsonOpt = False,
) -> None:
    """Highest and lowest effective credit (decayed since last access), with access counts."""
    from vault_brain.lifecycle.feedback import credit_report

    data = credit_report(open_vault(), top)

    def part(title: str, rows: list[dict[str, object]]) -> str:
        body = table(
            ["effective", "credit", "accesses", "id", "title"],
            [
                [
                    f"{r['effective']:.3f}",
                    f"{r['credit']:.3f}",
                    r["access_count"],
                    r["id"],
                    r["title"],
                ]
                for r in rows
            ],
        )
        return f"{title}\n{body}"

    human = part("highest", data["highest"]) + "\n\n" + part("lowest", data["lowest"])
    emit(data, as_json, human)
