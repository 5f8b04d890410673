"""Lifecycle rules the agent may write (policy/), run only once a person approved them.

With `vb session --policy-rw` the agent can edit policy/; vb never runs what it wrote until a
person has seen the diff (`vb policy diff`) and approved it (`vb policy approve`), which
records the hash and a copy of every file in `.vb/` (machine-local; read-only in the
sandbox, so the agent cannot approve its own change). Meanwhile the lifecycle runs the last
approved rules (vb's defaults when none was approved) and `vb status` and `vb session` say
so in one line. A policy that arrives by `vb sync` from another machine is unapproved here
until approved here: an approval record is signed with this machine's key (kept outside the
vault, see `storage.policy.machine_key`), so a record copied from elsewhere approves nothing, and
one written before approvals were signed must be approved again.
"""

from __future__ import annotations

import datetime as dt
import difflib
from dataclasses import field

from vault_brain.app.memory.results import Result, result
from vault_brain.app.memory.vault import Vault
from vault_brain.domain.errors import VaultBrainError
from vault_brain.domain.policy.rules import NO_RULES, RuleSet
from vault_brain.storage.policy.hold import HeldSetting, clear_held, read_held
from vault_brain.storage.policy.machine_key import load_key
from vault_brain.storage.policy.store import (
    RULES_FILE,
    Approval,
    decode_files,
    load_approval,
    policy_hash,
    read_policy_files,
    rules_of,
    write_approval,
)


@result
class PolicyFileChange(Result):
    path: str
    """The file, relative to policy/ (e.g. rules.yaml)."""
    change: str
    """added, changed or deleted, against the approved version."""


@result
class PolicyDiff(Result):
    changed: bool
    """True when policy/ differs from what was last approved on this machine, or a remote's
    STRATEGY.md settings wait for approval."""
    hash: str
    """SHA-256 of policy/ as it is now (what `vb policy approve --hash` checks)."""
    approved_hash: str | None
    """SHA-256 of the approved version; None when nothing was ever approved here."""
    approved_at: str | None
    files: list[PolicyFileChange] = field(default_factory=list)
    diff: str = ""
    """A unified diff of the approved version (a/) against policy/ now (b/)."""
    active_rules: dict[str, str] = field(default_factory=dict)
    """The rules the lifecycle runs: step -> expression, from the approved version."""
    warning: str | None = None
    approval_problem: str | None = None
    """Why the approval record in .vb/ approves nothing (made on another machine, forged,
    damaged, or recorded before approvals were signed); None when there is none or it holds."""
    held_settings: list[str] = field(default_factory=list)
    """STRATEGY.md settings a remote changed that keep this machine's values until approved
    ("key: value from the remote, value kept here")."""


@result
class PolicyApproval(Result):
    approved: bool
    """True when this command recorded an approval (False: nothing had changed)."""
    hash: str
    approved_at: str | None
    files: list[PolicyFileChange] = field(default_factory=list)
    rules: dict[str, str] = field(default_factory=dict)
    """The rules approved, step -> expression; the lifecycle runs them from now on."""
    settings: list[str] = field(default_factory=list)
    """The STRATEGY.md settings from a remote that this approval lets take effect."""


def _changes(approved: dict[str, str], now: dict[str, bytes]) -> list[PolicyFileChange]:
    out = []
    for rel in sorted(set(approved) | set(now)):
        if rel not in approved:
            out.append(PolicyFileChange(rel, "added"))
        elif rel not in now:
            out.append(PolicyFileChange(rel, "deleted"))
        elif approved[rel].encode("utf-8") != now[rel]:
            out.append(PolicyFileChange(rel, "changed"))
    return out


def _unified(
    approved: dict[str, str], now: dict[str, bytes], changes: list[PolicyFileChange]
) -> str:
    parts: list[str] = []
    for change in changes:
        old = approved.get(change.path, "")
        new = now.get(change.path, b"").decode("utf-8", errors="replace")
        a = "/dev/null" if change.change == "added" else f"a/policy/{change.path}"
        b = "/dev/null" if change.change == "deleted" else f"b/policy/{change.path}"
        lines = difflib.unified_diff(
            old.splitlines(keepends=True), new.splitlines(keepends=True), a, b
        )
        parts.append("".join(line if line.endswith("\n") else line + "\n" for line in lines))
    return "".join(parts)


def _approval(vault: Vault) -> tuple[Approval | None, str | None]:
    """The approval made on this machine, and why a record there approves nothing."""
    return load_approval(vault.paths, load_key(vault.env.config_home))


def approved_rules(vault: Vault) -> RuleSet:
    """The rules the lifecycle runs: the last approved version's (none: vb's defaults)."""
    approval, _problem = _approval(vault)
    if approval is None:
        return NO_RULES
    try:
        return rules_of(dict(approval.files), f"approved policy/{RULES_FILE}")
    except VaultBrainError:
        return NO_RULES  # approved under rules this vb no longer accepts: defaults


def _rule_texts(rules: RuleSet) -> dict[str, str]:
    return {step: rule.source for step, rule in sorted(rules.rules.items())}


def _warning(
    approval: Approval | None,
    changes: list[PolicyFileChange],
    problem: str | None = None,
    held: list[HeldSetting] | None = None,
) -> str | None:
    if held:
        keys = ", ".join(h.key for h in held)
        also = f"; policy/ also has {len(changes)} unapproved change(s)" if changes else ""
        return (
            f"STRATEGY.md settings changed by a remote are not in effect here ({keys}){also}: "
            "review them with `vb policy diff`, then `vb policy approve`"
        )
    if not changes:
        return None
    runs = "the last approved rules" if approval is not None else "vb's default rules"
    count = f"{len(changes)} file{'s' if len(changes) != 1 else ''}"
    why = f" (the approval record in .vb/ {problem}, so it approves nothing)" if problem else ""
    return (
        f"policy/ has changes not approved on this machine ({count}){why}: the lifecycle runs "
        f"{runs}; review them with `vb policy diff`, then `vb policy approve`"
    )


def policy_diff(vault: Vault) -> PolicyDiff:
    now = read_policy_files(vault.paths)
    held = read_held(vault.paths)
    approval, problem = _approval(vault)
    approved = dict(approval.files) if approval is not None else {}
    changes = _changes(approved, now)
    return PolicyDiff(
        changed=bool(changes) or bool(held),
        hash=policy_hash(now),
        approved_hash=approval.hash if approval is not None else None,
        approved_at=approval.approved_at if approval is not None else None,
        files=changes,
        diff=_unified(approved, now, changes),
        active_rules=_rule_texts(approved_rules(vault)),
        warning=_warning(approval, changes, problem, held),
        approval_problem=problem,
        held_settings=[h.describe() for h in held],
    )


def policy_warning(vault: Vault) -> str | None:
    """One line when policy/ differs from what was approved here (None when it does not);
    never raises: a session must start whatever policy/ holds."""
    try:
        approval, problem = _approval(vault)
        approved = dict(approval.files) if approval is not None else {}
        changes = _changes(approved, read_policy_files(vault.paths))
        return _warning(approval, changes, problem, read_held(vault.paths))
    except (VaultBrainError, OSError) as exc:
        message = exc.message if isinstance(exc, VaultBrainError) else str(exc)
        return f"policy/ cannot be read ({message}): the lifecycle runs the last approved rules"


def approve_policy(
    vault: Vault, expect_hash: str | None = None, now: dt.datetime | None = None
) -> PolicyApproval:
    """Record policy/ as it is now as approved, after checking every rule; refuses (and
    records nothing) when a rule does not parse or is not allowed, or when `expect_hash`
    (a prefix of the hash `vb policy diff` showed) is not the current hash."""
    current = read_policy_files(vault.paths)
    digest = policy_hash(current)
    if expect_hash is not None and not digest.startswith(expect_hash.strip().lower()):
        raise VaultBrainError(
            f"policy/ changed since you reviewed it (hash {digest[:12]}, not {expect_hash})",
            hint="review it again with `vb policy diff`, then approve with the hash it shows",
        )
    texts = decode_files(current)
    rules = rules_of(texts, f"policy/{RULES_FILE}")  # raises on any invalid rule
    approval, _problem = _approval(vault)
    approved = dict(approval.files) if approval is not None else {}
    changes = _changes(approved, current)
    settings = [h.describe() for h in clear_held(vault.paths)]
    if not changes and (approval is not None or not current):
        when = approval.approved_at if approval is not None else None
        return PolicyApproval(bool(settings), digest, when, [], _rule_texts(rules), settings)
    stamp = (now or dt.datetime.now().astimezone()).isoformat(timespec="seconds")
    key = load_key(vault.env.config_home, create=True)
    assert key is not None
    recorded = write_approval(vault.paths, texts, stamp, key)
    return PolicyApproval(True, recorded.hash, stamp, changes, _rule_texts(rules), settings)
