"""STRATEGY.md settings that another machine changed, held back until this machine approves.

STRATEGY.md's front matter sets what the lifecycle does here (prune thresholds, skip rules,
budgets). A person's own edit takes effect at once, as always. When `vb sync` merges a
change to it from the remote, every key the merge changed keeps this machine's value, kept
in `.vb/strategy-held.json` (machine-local: a remote never writes `.vb/`), until
`vb policy approve` here; `vb policy diff`, `vb status` and `vb session` say which.

The record: {"held": {key: {"kept": value | null, "kept_absent": bool, "remote": value |
null, "remote_absent": bool}}, "since": iso time}.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vault_brain.storage.files import atomic_write, read_inside
from vault_brain.storage.paths import VaultPaths

HELD_FILE = "strategy-held.json"
_MISSING = object()


@dataclass(frozen=True)
class HeldSetting:
    key: str
    kept: Any
    kept_absent: bool
    remote: Any
    remote_absent: bool

    def describe(self) -> str:
        here = "unset" if self.kept_absent else json.dumps(self.kept, default=str)
        there = "unset" if self.remote_absent else json.dumps(self.remote, default=str)
        return f"{self.key}: {there} from the remote, {here} kept here"


def _path(paths: VaultPaths) -> Any:
    return paths.vb_dir / HELD_FILE


def read_held(paths: VaultPaths) -> list[HeldSetting]:
    """The settings held back, by key (none when nothing is held, or the record is
    unreadable: then STRATEGY.md applies as it is, and `vb policy diff` shows no hold)."""
    try:
        data = json.loads(read_inside(paths, _path(paths)))
        held = data["held"]
        return [
            HeldSetting(
                str(key),
                row.get("kept"),
                bool(row.get("kept_absent")),
                row.get("remote"),
                bool(row.get("remote_absent")),
            )
            for key, row in sorted(held.items())
        ]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return []


def apply_held(paths: VaultPaths, overrides: Mapping[str, Any]) -> dict[str, Any]:
    """STRATEGY.md's settings with this machine's values for the held keys."""
    result = dict(overrides)
    for setting in read_held(paths):
        if setting.kept_absent:
            result.pop(setting.key, None)
        else:
            result[setting.key] = setting.kept
    return result


def hold_changes(
    paths: VaultPaths, ours: Mapping[str, Any], merged: Mapping[str, Any], since: str
) -> list[HeldSetting]:
    """Hold every key whose value the merge changed from `ours` (this machine's settings
    before it) to `merged`: this machine keeps its value. A key held already keeps the value
    it kept; one the remote set back to that value is no longer held. Returns what is held
    now because of this merge."""
    held = {s.key: s for s in read_held(paths)}
    new: list[HeldSetting] = []
    for key in sorted(set(ours) | set(merged)):
        before, after = ours.get(key, _MISSING), merged.get(key, _MISSING)
        if _same(before, after):
            continue
        first = held.get(key)
        kept = first.kept if first else before
        if first is not None and first.kept_absent:
            kept = _MISSING
        if _same(kept, after):  # (the remote went back to this machine's value)
            held.pop(key, None)
            continue
        kept_absent = kept is _MISSING
        setting = HeldSetting(
            key,
            None if kept_absent else kept,
            kept_absent,
            None if after is _MISSING else after,
            after is _MISSING,
        )
        held[key] = setting
        new.append(setting)
    if new:
        _write(paths, held.values(), since)
    return new


def clear_held(paths: VaultPaths) -> list[HeldSetting]:
    """Stop holding anything (`vb policy approve`): STRATEGY.md applies as it is. Returns
    what was held."""
    held = read_held(paths)
    if held:
        _path(paths).unlink(missing_ok=True)
    return held


def _same(a: Any, b: Any) -> bool:
    """Equal settings (a missing key equals only a missing key; values as YAML read them)."""
    if a is _MISSING or b is _MISSING:
        return a is b
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


def _write(paths: VaultPaths, held: Any, since: str) -> None:
    rows = {
        s.key: {
            "kept": s.kept,
            "kept_absent": s.kept_absent,
            "remote": s.remote,
            "remote_absent": s.remote_absent,
        }
        for s in held
    }
    text = json.dumps({"held": rows, "since": since}, indent=1, sort_keys=True, default=str)
    atomic_write(_path(paths), text + "\n", inside=paths)
