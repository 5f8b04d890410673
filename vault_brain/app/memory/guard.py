"""The gate applied where memory comes in and where it goes out to an agent.

In: a memory an agent stores (MCP, hooks, the loop, a session) that the gate refuses is a
`RefusedError` saying why, so the agent can rephrase; a person's own `vb add` / `vb update` is
theirs to keep, except that a secret needs `--allow-secret`, and whatever else the gate found
comes back as a warning (the text stays out of agents' context). Out: text from notes that
reaches an agent (search snippets, retrieved bodies, MEMORY.md, the loop's context) is
redacted where the gate refuses a span (`domain.gate.redaction`), by who wrote it: what a person
wrote by hand (`source: person`, or no `source`) is theirs, never redacted when shown to
them and passed to agents with only its secrets redacted; text from conversations, agents,
extraction and merges is redacted wherever the gate refuses a span. Every refusal is
counted in the memory events.

An agent's text the rules pass gets a second opinion from its meaning (`second_opinion`:
a learned model over the e5-small vector, with the embeddings extra installed), and so does
what a conversation leaves behind: the statements a flush captures and the summaries of
flushes, compactions and `vb serve`'s conversations (`screen`, `screened`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from functools import cache
from typing import TYPE_CHECKING

from vault_brain.app.memory.memo import learned, redacted
from vault_brain.app.memory.vault import Vault
from vault_brain.domain.errors import RefusedError
from vault_brain.domain.gate import MAX_SCAN_CHARS, Verdict, judge
from vault_brain.domain.gate.redaction import TITLE_REASONS
from vault_brain.domain.notes.model import PERSON as BY_PERSON
from vault_brain.storage.events import refused

if TYPE_CHECKING:
    from vault_brain.domain.sessions.summarize import Summary

PERSON = "cli"  # the one source that is a person at a keyboard; every other is an agent
PERSON_REDACTED = ("secret",)  # what of a person's own note an agent is not shown
MIN_MEMORY_WORDS = 1  # a store with no word at all is a fragment
MAX_MEMORY_CHARS = 16_000  # an agent's memory; a person's may be up to the gate's MAX_SCAN_CHARS


def admit(
    vault: Vault,
    text: str,
    *,
    source: str,
    where: str,
    title: str = "",
    allow_secret: bool = False,
) -> list[str]:
    """Check a memory (its text, and its title if new) before it is written. Raises
    `RefusedError` for an agent's refused text and for a person's secret (without
    `allow_secret`); returns warnings for the rest of what a person may keep. The size is
    checked first: a text too long to store is refused before any scan."""
    check_size(vault, text, source=source, where=where)
    found = judge(text, min_words=MIN_MEMORY_WORDS, max_chars=MAX_MEMORY_CHARS).reasons
    verdict = Verdict(tuple(dict.fromkeys(found + judge(title).reasons)))
    if verdict.ok and source != PERSON:
        verdict = second_opinion(vault, text)
    if verdict.ok:
        return []
    if source != PERSON:
        refused(vault.paths, where, dict.fromkeys(verdict.reasons, 1))
        raise RefusedError(
            f"not stored: {verdict.why()}",
            hint="store the fact itself in plain words, without instructions, credentials, "
            "code, commands or pasted output",
        )
    if "secret" in verdict.reasons and not allow_secret:
        refused(vault.paths, where, {"secret": 1})
        raise RefusedError(
            "not stored: it contains a credential or secret, which would be synced and "
            "shown to agents",
            hint="remove it, or pass --allow-secret to store it anyway (vb keeps it out of "
            "agents' context)",
        )
    kept = Verdict(tuple(r for r in verdict.reasons if r != "fragment"))
    return [] if kept.ok else [f"{kept.why()}: stored, and left out of what agents are shown"]


def second_opinion(vault: Vault, text: str) -> Verdict:
    """What the learned model (`storage.index.hostile`) finds in an agent's text the rules
    passed: nothing where the embeddings extra is not installed, or its encoder's files are
    not the ones checked (then said once in the log: the rules alone decide)."""
    found = screen(vault, [text])
    return Verdict((found[text],)) if text in found else Verdict()


def screen(vault: Vault, texts: Sequence[str]) -> dict[str, str]:
    """Of `texts` the rules passed, those the learned model finds hostile, each with its
    reason: what a conversation leaves in memory or in an agent's context (captured
    statements, a summary's items) gets the second opinion an agent's store does. Empty
    where the model cannot run (see `second_opinion`) or the policy turns it off
    (`gate_learned_check`)."""
    from vault_brain.storage.index import hostile

    unique = list(dict.fromkeys(t for t in texts if t.strip()))
    if not unique or not vault.policy.gate_learned_check:
        return {}
    try:
        found = learned(unique, lambda fresh: hostile.kinds(fresh, vault.paths.cache_dir))
    except hostile.Unavailable as exc:
        if not isinstance(exc.__cause__, ImportError):  # (the extra is optional)
            _warn_once(f"the gate's learned check is off: {exc}")
        return {}
    return {text: kind for text, kind in zip(unique, found, strict=True) if kind}


def screened(vault: Vault, summary: Summary) -> Summary:
    """`summary` without the items (and, of a model's prose, the sentences) the learned
    model finds hostile (`screen`), counted in its `refused`."""
    return summary.without(screen(vault, summary.screenable()))


@cache
def _warn_once(message: str) -> None:
    logging.getLogger(__name__).warning(message)


def check_size(vault: Vault, text: str, *, source: str, where: str) -> None:
    """`RefusedError` for a memory longer than its source may store (an agent:
    `MAX_MEMORY_CHARS`; a person: the most the gate scans), told before the text is read."""
    limit = MAX_MEMORY_CHARS if source != PERSON else MAX_SCAN_CHARS
    if len(text) <= limit:
        return
    refused(vault.paths, where, {"wall": 1})
    raise RefusedError(
        f"not stored: {len(text):,} characters is too much text for one memory (at most {limit:,})",
        hint="store the fact itself in a few sentences"
        if source != PERSON
        else "split it into several memories, or keep the document in a project folder and "
        "run vb extract on it",
    )


def written_by(caller: str) -> str:
    """The `source` a note written by an API caller records: a person at the CLI, else an
    agent (MCP, a session's tools, the loop, hooks)."""
    return BY_PERSON if caller == PERSON else "agent"


def for_agent(
    vault: Vault, text: str, where: str, source: str = "agent", *, title: bool = False
) -> str:
    """`text` from a note (written by `source`) as an agent may see it: refused spans
    redacted and counted; of a person's own note, only secrets; of a `title`, only what a
    name can hold (`redaction.TITLE_REASONS`). The redaction is remembered by the text
    (`memo.redacted`): MEMORY.md, unchanged, is in every context of a session and costs
    20 ms to judge at 1,000 notes."""
    only = PERSON_REDACTED if source == BY_PERSON else TITLE_REASONS if title else None
    safe, found = redacted(text, only)
    note_refusals(vault, where, found)
    return safe


def note_refusals(vault: Vault, where: str, found: Mapping[str, int]) -> None:
    refused(vault.paths, where, dict(found))
