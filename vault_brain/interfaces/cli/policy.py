"""vb policy diff | approve: review and approve the lifecycle rules in policy/."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from vault_brain.interfaces.cli.app import app, open_api
from vault_brain.interfaces.cli.options import JsonOpt
from vault_brain.interfaces.cli.output import emit

if TYPE_CHECKING:
    from vault_brain.app.lifecycle.policy_review import PolicyFileChange

policy_app = typer.Typer(
    help=(
        "Review and approve the lifecycle rules in policy/.\n\n"
        "policy/rules.yaml holds lifecycle rules as code; vb runs them only once a person "
        "approved them.\n\n"
        "Each step may have a rule: a true/false expression over a note's fields that "
        "replaces vb's own choice of the notes the step takes, e.g.\n\n"
        "prune: \"effective < 0.15 and age_days > 21 and 'keep' not in tags\"\n\n"
        'promote: "effective > 0.6 and access_count >= 3"\n\n'
        "consolidate: \"'meeting' in tags\"\n\n"
        "A step without a rule keeps vb's choice. A rule chooses only among what its step "
        "can take: prune never takes a pinned note or a people note, promote only takes "
        "episodes not yet promoted, consolidate only merges unpinned same-day episodes "
        "sharing a tag.\n\n"
        "Fields: id, path, title, type, category, scope (strings); tags (list of strings); "
        "pinned, scored (true/false); credit, effective (0..1); access_count; age_days. "
        "Functions: len, lower, abs, min, max. Allowed: and or not, comparisons, in / "
        "not in, + - * / %, strings, numbers, true/false, [lists]; nothing else (no "
        "attributes, subscripts, other calls or lambdas).\n\n"
        "An agent may edit policy/ in `vb session --policy-rw`. Until `vb policy approve` "
        "records the new version (in .vb/, which the sandbox cannot write), the lifecycle "
        "runs the last approved rules (vb's defaults when none) and `vb status` and "
        "`vb session` warn."
    ),
    no_args_is_help=True,
)
app.add_typer(policy_app, name="policy")


def _files(files: list[PolicyFileChange]) -> str:
    return ", ".join(f"{f.change} policy/{f.path}" for f in files)


@policy_app.command()
def diff(as_json: JsonOpt = False) -> None:
    """Show how policy/ differs from the version last approved on this machine, and the
    STRATEGY.md settings a remote changed that wait for approval here."""
    result = open_api().policy_diff()
    if not result.changed:
        human = f"no changes since approval (policy hash {result.hash[:12]})."
        if result.approved_hash is None:
            human = "no policy rules: policy/ is empty and nothing was approved."
    elif not result.files:  # only STRATEGY.md settings from a remote wait
        human = f"policy/ has no changes since approval (policy hash {result.hash[:12]})."
    else:
        since = f"approved {result.approved_at}" if result.approved_at else "never approved"
        human = (
            f"{result.diff.rstrip()}\n"
            f"policy/ changed since approval ({since}): {_files(result.files)}; "
            f"policy hash {result.hash[:12]} (vb policy approve --hash {result.hash[:12]})."
        )
        if result.approval_problem:
            human += (
                f"\nthe approval record in .vb/ {result.approval_problem}: it approves "
                "nothing; review the diff and run `vb policy approve` on this machine."
            )
    if result.held_settings:
        human += (
            "\nSTRATEGY.md settings a remote changed, not in effect here until "
            "`vb policy approve`:\n" + "\n".join(f"  {line}" for line in result.held_settings)
        )
    emit(result, as_json, human)


@policy_app.command()
def approve(
    expect: Annotated[
        str | None,
        typer.Option(
            "--hash",
            help="Approve only if policy/ still has this hash (or hash prefix), the one "
            "`vb policy diff` showed: nothing changed since you reviewed it.",
            show_default=False,
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Approve policy/ as it is now: the lifecycle runs its rules from now on, and the
    STRATEGY.md settings a remote changed take effect here.

    Every rule is checked first; an invalid or disallowed expression is refused with the
    file, the step and the problem, and nothing is recorded."""
    result = open_api().policy_approve(expect)
    rules = "; ".join(f"{step}: {text}" for step, text in result.rules.items())
    active = f"rules in force: {rules}" if rules else "no rules: vb's defaults run"
    if result.approved:
        files = _files(result.files) or "no change to policy/"
        human = f"approved policy {result.hash[:12]} ({files}); {active}."
        if result.settings:
            human += "\nSTRATEGY.md settings now in effect: " + "; ".join(result.settings)
    else:
        human = f"no changes since approval; nothing to approve ({active})."
    emit(result, as_json, human)
