"""Memory policy: every number, interval and skip rule, with its default.

STRATEGY.md's front matter overrides any of them. Values are validated when the
policy is loaded; an invalid value is an error that names the key.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from vault_brain.errors import VaultBrainError
from vault_brain.paths import VaultPaths

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")
_UNIT_HOURS = {"s": 1 / 3600, "m": 1 / 60, "h": 1.0, "d": 24.0, "w": 168.0}


def duration_hours(value: Any) -> float:
    """'24h', '7d', '30m', '2w' or a plain number of hours -> hours."""
    if isinstance(value, bool):
        raise ValueError("expected a duration like 24h or 7d")
    if isinstance(value, int | float):
        if value < 0:
            raise ValueError("must not be negative")
        return float(value)
    match = _DURATION.match(str(value))
    if not match:
        raise ValueError("expected a duration like 24h, 7d or 30m")
    return float(match.group(1)) * _UNIT_HOURS[match.group(2)]


@dataclass(frozen=True)
class Setting:
    default: Any
    kind: str  # "float", "int", "bool", "duration", "list", "float01"
    help: str
    group: str


SETTINGS: dict[str, Setting] = {
    # Search ranking
    "credit_weight": Setting(
        0.3, "float", "how much effective credit moves a search score", "search"
    ),
    "recency_weight": Setting(
        0.1, "float", "how much a recent update lifts a search score", "search"
    ),
    "recency_half_life_days": Setting(
        30, "float", "days after which the recency lift halves", "search"
    ),
    "search_candidates": Setting(
        20, "int", "BM25 hits re-ranked with credit and recency", "search"
    ),
    "bm25_k1": Setting(1.0, "float", "BM25 term-frequency saturation", "search"),
    "bm25_b": Setting(0.6, "float01", "BM25 length normalisation", "search"),
    # Credit
    "initial_score": Setting(
        0.5, "float01", "credit of a memory no signal has touched yet", "credit"
    ),
    "alpha": Setting(0.1, "float01", "learning rate of the credit update", "credit"),
    "decay_rate": Setting(0.01, "float", "per-day decay of credit since last access", "credit"),
    "reward_task_completed": Setting(0.5, "float", "reward when a task completes", "credit"),
    "reward_positive_feedback": Setting(0.3, "float", "reward for /good", "credit"),
    "reward_tool_success": Setting(0.1, "float", "reward when a tool call succeeds", "credit"),
    "reward_user_correction": Setting(-0.4, "float", "reward for /bad", "credit"),
    "reward_session_abandoned": Setting(
        -0.2, "float", "reward when a session is abandoned", "credit"
    ),
    # Lifecycle
    "prune_threshold": Setting(
        0.2, "float01", "credit below which a note may be pruned", "lifecycle"
    ),
    "prune_min_age_days": Setting(14, "float", "never prune notes younger than this", "lifecycle"),
    "prune_skip_categories": Setting(["people"], "list", "categories never pruned", "lifecycle"),
    "prune_skip_pinned": Setting(True, "bool", "never prune pinned notes", "lifecycle"),
    "promotion_threshold": Setting(
        0.7, "float01", "credit above which episodes promote", "lifecycle"
    ),
    "promotion_transfer": Setting(
        0.5, "float01", "share of an episode's credit moved to the entities it feeds", "lifecycle"
    ),
    "consolidation_interval": Setting(
        "24h", "duration", "how often consolidation is due", "lifecycle"
    ),
    "promotion_interval": Setting("48h", "duration", "how often promotion is due", "lifecycle"),
    "prune_interval": Setting("7d", "duration", "how often pruning is due", "lifecycle"),
    "consolidation_enabled": Setting(True, "bool", "run consolidation when due", "lifecycle"),
    "promotion_enabled": Setting(True, "bool", "run promotion when due", "lifecycle"),
    "prune_enabled": Setting(True, "bool", "run pruning when due", "lifecycle"),
    # Context and sessions
    "max_context_budget": Setting(5000, "int", "token budget of MEMORY.md", "context"),
    "retrieval_limit": Setting(5, "int", "memories retrieved per user message", "context"),
    "tool_result_retention": Setting(5, "int", "tool results kept in context", "context"),
    "compaction_threshold": Setting(
        60000, "int", "context tokens that trigger compaction", "context"
    ),
    "compaction_keep_recent": Setting(10, "int", "messages kept verbatim by compaction", "context"),
    "flush_before_compaction": Setting(True, "bool", "flush durable memories first", "context"),
    "session_retention_days": Setting(
        30, "float", "sessions older than this are archived", "context"
    ),
}


def _coerce(key: str, setting: Setting, value: Any) -> Any:
    def bad(why: str) -> VaultBrainError:
        return VaultBrainError(
            f"STRATEGY.md: invalid value {value!r} for {key!r}: {why}",
            hint=f"fix {key} in STRATEGY.md front matter (default: {setting.default!r})",
        )

    kind = setting.kind
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
    if kind == "duration":
        try:
            duration_hours(value)
        except ValueError as exc:
            raise bad(str(exc)) from None
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise bad("expected a number")
    if kind == "int":
        if int(value) != value or value < 0:
            raise bad("expected a whole number >= 0")
        return int(value)
    if kind == "float01" and not 0.0 <= float(value) <= 1.0:
        raise bad("expected a number between 0 and 1")
    if kind == "float" and key not in _SIGNED and float(value) < 0:
        raise bad("must not be negative")
    return float(value)


_SIGNED = {k for k in SETTINGS if k.startswith("reward_")}

# Keys STRATEGY.md may carry that are not policy numbers.
_NON_POLICY_KEYS = frozenset(
    {"id", "type", "title", "tags", "aliases", "created", "updated", "version"}
)


@dataclass(frozen=True)
class Policy:
    values: Mapping[str, Any]
    sources: Mapping[str, str] = field(default_factory=dict)
    unknown: tuple[str, ...] = ()

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    def hours(self, key: str) -> float:
        return duration_hours(self.values[key])

    @property
    def rewards(self) -> dict[str, float]:
        return {
            k.removeprefix("reward_"): float(v)
            for k, v in self.values.items()
            if k.startswith("reward_")
        }


def build_policy(overrides: Mapping[str, Any], origin: str = "STRATEGY.md") -> Policy:
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for key, setting in SETTINGS.items():
        if key in overrides and overrides[key] is not None:
            values[key] = _coerce(key, setting, overrides[key])
            sources[key] = origin
        else:
            values[key] = setting.default
            sources[key] = "default"
    unknown = tuple(sorted(k for k in overrides if k not in SETTINGS and k not in _NON_POLICY_KEYS))
    return Policy(values, sources, unknown)


DEFAULT_POLICY = build_policy({})


def load_policy(paths: VaultPaths) -> Policy:
    """Read STRATEGY.md's front matter, cached in .vb/ by the file's size and mtime."""
    try:
        st = paths.strategy.stat()
    except FileNotFoundError:
        return DEFAULT_POLICY
    stamp = [st.st_mtime_ns, st.st_size]
    cache = paths.vb_dir / "policy.json"
    try:
        cached = json.loads(cache.read_text(encoding="utf-8"))
        if cached.get("stamp") == stamp:
            return build_policy(cached["overrides"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    from vault_brain.vault.frontmatter import parse_text

    parsed = parse_text(paths.strategy.read_bytes())
    if parsed.error:
        raise VaultBrainError(
            f"STRATEGY.md: front matter is not valid YAML ({parsed.error})",
            hint="fix the YAML between the --- lines of STRATEGY.md",
        )
    overrides = {str(k): v for k, v in parsed.meta.items()}
    policy = build_policy(overrides)
    if paths.vb_dir.is_dir():
        from vault_brain.vault.store import write_cache

        write_cache(cache, json.dumps({"stamp": stamp, "overrides": _jsonable(overrides)}))
    return policy


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))
