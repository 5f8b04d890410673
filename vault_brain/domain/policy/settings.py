"""Memory policy: every number, interval and skip rule, with its default.

`Policy` is a typed, frozen value: `policy.credit_weight` is a float, `policy.prune_enabled`
a bool. STRATEGY.md's front matter overrides any setting; values are validated when the
policy is built, and an invalid value is an error that names the key. Defaults live here
only: the STRATEGY.md template shows them commented out, so a better default reaches every
vault that did not choose its own.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from vault_brain.domain.errors import VaultBrainError
from vault_brain.domain.policy.exclusions import check_pattern

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")
_UNIT_HOURS = {"s": 1 / 3600, "m": 1 / 60, "h": 1.0, "d": 24.0, "w": 168.0}


def duration_hours(value: Any) -> float:
    """'24h', '7d', '30m', '2w' or a plain number of hours -> hours."""
    if isinstance(value, bool):
        raise ValueError("expected a duration like 24h or 7d")
    if isinstance(value, int | float):
        if value < 0 or not math.isfinite(value):
            raise ValueError("must be a finite number of hours >= 0")
        return float(value)
    match = _DURATION.match(str(value))
    if not match:
        raise ValueError("expected a duration like 24h, 7d or 30m")
    return float(match.group(1)) * _UNIT_HOURS[match.group(2)]


class Setting:
    """One policy setting: its default, how it is validated (`kind`), what it means and where
    `vb strategy` lists it. Declared on `Policy`, where reading it gives the policy's value."""

    key = ""

    def __init__(self, default: Any, kind: str, help: str, group: str) -> None:
        self.default, self.kind, self.help, self.group = default, kind, help, group

    def __set_name__(self, owner: type, name: str) -> None:
        self.key = name
        SETTINGS[name] = self

    def __get__(self, policy: Policy | None, owner: type | None = None) -> Any:
        if policy is None:
            return self
        value = policy._values.get(self.key, self.default)  # noqa: SLF001 (Policy's own)
        return list(value) if isinstance(value, list) else value  # callers may not share it


# Every setting by key, in declaration order (filled as `Policy` is declared).
SETTINGS: dict[str, Setting] = {}


def _setting(default: Any, kind: str, help: str, group: str) -> Any:
    return Setting(default, kind, help, group)


class Policy:
    """The effective memory policy: a typed, read-only value (`policy.credit_weight` is a
    float). Build it with `build_policy`; unset keys read as their defaults."""

    # Search ranking
    credit_weight: float = _setting(
        0.3, "float", "how much effective credit moves a search score", "search"
    )
    recency_weight: float = _setting(
        0.1, "float", "how much a recent update lifts a search score", "search"
    )
    recency_half_life_days: float = _setting(
        30.0, "float", "days after which the recency lift halves", "search"
    )
    search_candidates: int = _setting(
        20, "int", "BM25 hits re-ranked with credit and recency", "search"
    )
    bm25_k1: float = _setting(1.0, "float", "BM25 term-frequency saturation", "search")
    bm25_b: float = _setting(0.6, "float01", "BM25 length normalisation", "search")
    superseded_weight: float = _setting(
        0.2,
        "float01",
        "what a superseded note's search score is multiplied by (its fact was replaced)",
        "search",
    )
    search_mode: str = _setting(
        "lexical",
        "one_of:lexical,hybrid",
        "lexical (BM25) or hybrid (BM25 fused with note embeddings: needs the extra "
        "vault-brain[embeddings])",
        "search",
    )
    embedding_model: str = _setting(
        "e5-small",
        "one_of:e5-small,wordllama",
        "hybrid: the local encoder: e5-small (multilingual-e5-small: finds more) or "
        "wordllama (embeds far faster, finds less; the fusion settings are tuned for e5-small)",
        "search",
    )
    hybrid_fusion: str = _setting(
        "rrf",
        "one_of:rrf,mix",
        "hybrid: how BM25 and embedding similarity combine: rrf (reciprocal ranks) or mix "
        "(scores scaled to [0, 1])",
        "search",
    )
    hybrid_vector_weight: float = _setting(
        0.5, "float01", "hybrid: the embeddings' share of the fused score", "search"
    )
    hybrid_rrf_k: int = _setting(5, "int", "hybrid: rank offset of rrf fusion", "search")
    hybrid_candidates: int = _setting(
        300, "int", "hybrid: candidates taken from each side before fusion", "search"
    )
    # Credit
    initial_score: float = _setting(
        0.5, "float01", "credit of a memory no signal has touched yet", "credit"
    )
    alpha: float = _setting(0.1, "float01", "learning rate of the credit update", "credit")
    decay_rate: float = _setting(
        0.01, "float", "per-day decay of credit since last access", "credit"
    )
    reward_task_completed: float = _setting(0.5, "signed", "reward when a task completes", "credit")
    reward_positive_feedback: float = _setting(0.3, "signed", "reward for /good", "credit")
    reward_tool_success: float = _setting(
        0.1, "signed", "reward when a tool call succeeds", "credit"
    )
    reward_user_correction: float = _setting(-0.4, "signed", "reward for /bad", "credit")
    reward_session_abandoned: float = _setting(
        -0.2, "signed", "reward when a session is abandoned", "credit"
    )
    # Lifecycle
    prune_threshold: float = _setting(
        0.2, "float01", "credit below which a note may be pruned", "lifecycle"
    )
    prune_min_age_days: float = _setting(
        14.0, "float", "never prune notes younger than this", "lifecycle"
    )
    prune_skip_categories: list[str] = _setting(
        ["people"], "list", "categories never pruned", "lifecycle"
    )
    prune_skip_pinned: bool = _setting(True, "bool", "never prune pinned notes", "lifecycle")
    promotion_threshold: float = _setting(
        0.7, "float01", "credit above which episodes promote", "lifecycle"
    )
    promotion_transfer: float = _setting(
        0.5, "float01", "share of an episode's credit moved to the entities it feeds", "lifecycle"
    )
    consolidation_interval: str = _setting(
        "24h", "duration", "how often consolidation is due", "lifecycle"
    )
    promotion_interval: str = _setting("48h", "duration", "how often promotion is due", "lifecycle")
    prune_interval: str = _setting("7d", "duration", "how often pruning is due", "lifecycle")
    consolidation_enabled: bool = _setting(True, "bool", "run consolidation when due", "lifecycle")
    promotion_enabled: bool = _setting(True, "bool", "run promotion when due", "lifecycle")
    prune_enabled: bool = _setting(True, "bool", "run pruning when due", "lifecycle")
    # Context and sessions
    max_context_budget: int = _setting(5000, "int", "token budget of MEMORY.md", "context")
    retrieval_limit: int = _setting(5, "int", "memories retrieved per user message", "context")
    mmr_lambda: float = _setting(
        0.7, "float01", "relevance vs diversity of injected memories (1: relevance only)", "context"
    )
    proxy_memory_budget: int = _setting(
        1000, "int", "token budget of the memories vb serve adds to a request", "context"
    )
    tool_result_retention: int = _setting(5, "int", "tool results kept in context", "context")
    compaction_threshold: int = _setting(
        60000, "int", "context tokens that trigger compaction", "context"
    )
    compaction_keep_recent: int = _setting(
        10, "int", "messages kept verbatim by compaction", "context"
    )
    flush_before_compaction: bool = _setting(
        True, "bool", "flush durable memories first", "context"
    )
    gate_learned_check: bool = _setting(
        True,
        "bool",
        "also refuse what the gate's learned model finds hostile in agents' memories and in "
        "what conversations leave (with the embeddings extra; off: the rules alone decide)",
        "context",
    )
    learned_updates: bool = _setting(
        True,
        "bool",
        "a learned model decides whether a new fact updates an older one (with the embeddings "
        "extra; off: the slot rules alone decide)",
        "context",
    )
    session_retention_days: float = _setting(
        30.0, "float", "sessions older than this are archived", "context"
    )
    # Scopes
    scope_user_kinds: list[str] = _setting(
        ["identity", "preference", "person"],
        "list",
        "captured kinds filed in the user's scope (the rest in the chat's)",
        "scopes",
    )
    scope_max_notes: int = _setting(
        0,
        "int",
        "captured notes kept per scope; the oldest unpinned are archived (0: no cap)",
        "scopes",
    )
    # Git
    commit_on: list[str] = _setting(
        ["session", "lifecycle", "command"],
        "commit_on",
        "when vb commits the vault: session (a vb session's end, a vb serve conversation's "
        "flush, Claude Code's SessionEnd), lifecycle (each consolidation, promotion or "
        "pruning pass), command (each note write of a command run at the terminal: vb add, "
        "update, delete, restore, feedback, flush), operation (every memory write, an "
        "agent's through MCP too); vb sync always commits",
        "git",
    )
    # Knowledge from project files (vb extract) and what searches cover
    items_path: str = _setting(
        "items/{project}/items.json",
        "path",
        "where a project's extracted items live in the vault",
        "knowledge",
    )
    search_in: list[str] = _setting(
        ["memory"],
        "sources",
        "what vb search, memory_search and the loop's context search by default: "
        "memory, items, sessions, sources",
        "knowledge",
    )

    # Privacy and counters (domain/policy/exclusions.py: what a pattern matches)
    private_paths: list[str] = _setting(
        [],
        "paths",
        "folders (journal/) and globs (**/*.secret.md) of notes no agent reads, as if each "
        "said private: true; the person's own vb search still finds them",
        "privacy",
    )
    no_counters: list[str] = _setting(
        [],
        "paths",
        "folders and globs of notes vb writes no access counters or credit into (as if each "
        "said vb: false); still searched",
        "privacy",
    )

    def __init__(
        self,
        values: Mapping[str, Any] | None = None,
        sources: Mapping[str, str] | None = None,
        unknown: tuple[str, ...] = (),
    ) -> None:
        object.__setattr__(self, "_values", dict(values or {}))
        # where each value came from ("default" or "STRATEGY.md"), and keys STRATEGY.md has
        # that are not settings (reported by `vb strategy`, otherwise ignored)
        object.__setattr__(self, "sources", dict(sources or {}))
        object.__setattr__(self, "unknown", tuple(unknown))

    _values: dict[str, Any]
    sources: Mapping[str, str]
    unknown: tuple[str, ...]

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("a Policy is read-only; build a new one with build_policy")

    def get(self, key: str) -> Any:
        if key not in SETTINGS:
            raise KeyError(key)
        return getattr(self, key)

    def hours(self, key: str) -> float:
        return duration_hours(self.get(key))

    @property
    def rewards(self) -> dict[str, float]:
        """Outcome signal -> reward, e.g. positive_feedback -> 0.3."""
        return {
            k.removeprefix("reward_"): float(getattr(self, k))
            for k in SETTINGS
            if k.startswith("reward_")
        }


# Keys STRATEGY.md may carry that are not policy numbers.
_NON_POLICY_KEYS = frozenset(
    {"id", "type", "title", "tags", "aliases", "created", "updated", "version"}
)


def _coerce(setting: Setting, value: Any) -> Any:
    key = setting.key

    def bad(why: str) -> VaultBrainError:
        return VaultBrainError(
            f"STRATEGY.md: invalid value {value!r} for {key!r}: {why}",
            hint=f"fix {key} in STRATEGY.md front matter (default: {setting.default!r})",
        )

    kind = setting.kind
    if kind.startswith("one_of:"):
        choices = kind.removeprefix("one_of:").split(",")
        if value not in choices:
            raise bad(f"expected one of: {', '.join(choices)}")
        return value
    if kind == "bool":
        if not isinstance(value, bool):
            raise bad("expected true or false")
        return value
    if kind == "list":
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise bad("expected a list of names")
        return list(value)
    if kind == "paths":
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise bad("expected a list of folders (journal/) or globs (**/*.secret.md)")
        try:
            return [check_pattern(v) for v in value]
        except ValueError as exc:
            raise bad(str(exc)) from None
    if kind == "commit_on":
        names = [value] if isinstance(value, str) else value
        moments = ("session", "lifecycle", "command", "operation")
        if not isinstance(names, list) or any(n not in moments for n in names):
            raise bad(f"expected a list of: {', '.join(moments)} (or [] for never)")
        return list(names)
    if kind == "path":
        if not isinstance(value, str) or "{project}" not in value or not value.endswith(".json"):
            raise bad("expected a relative .json path naming {project}")
        return value
    if kind == "sources":
        from vault_brain.domain.knowledge.scope import parse_sources

        try:
            return list(parse_sources(value))
        except ValueError as exc:
            raise bad(str(exc)) from None
    if kind == "duration":
        try:
            duration_hours(value)
        except ValueError as exc:
            raise bad(str(exc)) from None
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise bad("expected a number")
    if not math.isfinite(value):
        raise bad("expected a finite number")
    if kind == "int":
        if int(value) != value or value < 0:
            raise bad("expected a whole number >= 0")
        return int(value)
    if kind == "float01" and not 0.0 <= float(value) <= 1.0:
        raise bad("expected a number between 0 and 1")
    if kind == "float" and float(value) < 0:
        raise bad("must not be negative")
    return float(value)


def build_policy(overrides: Mapping[str, Any], origin: str = "STRATEGY.md") -> Policy:
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for key, setting in SETTINGS.items():
        if key in overrides and overrides[key] is not None:
            values[key] = _coerce(setting, overrides[key])
            sources[key] = origin
        else:
            sources[key] = "default"
    unknown = tuple(sorted(k for k in overrides if k not in SETTINGS and k not in _NON_POLICY_KEYS))
    return Policy(values, sources, unknown)


DEFAULT_POLICY = build_policy({})
