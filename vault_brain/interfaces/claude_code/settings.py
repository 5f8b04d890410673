"""Claude Code settings: the hook commands that run `vb hook <event>`, merged into a
settings file without touching any other key or hook."""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator
from dataclasses import field
from pathlib import Path
from typing import Any

from vault_brain.app.memory.results import Result, result
from vault_brain.domain.errors import VaultBrainError
from vault_brain.interfaces.claude_code.payload import EVENTS
from vault_brain.storage.files import atomic_write


@result
class HookSettings(Result):
    settings: dict[str, Any]
    """The hook settings to merge (printed when not installing)."""
    installed: bool
    settings_file: str | None = None
    events: dict[str, str] = field(default_factory=dict)
    """Per event: added, updated or unchanged."""


def hook_commands(command: list[str], vault_root: Path) -> dict[str, str]:
    """Claude Code event -> the shell command that runs `vb hook <slug>` on this vault."""
    base = [*command, "--vault", str(vault_root), "hook"]
    return {name: shlex.join([*base, slug]) for slug, name in EVENTS.items()}


def settings_snippet(commands: dict[str, str]) -> dict[str, Any]:
    return {
        "hooks": {
            name: [{"hooks": [{"type": "command", "command": cmd}]}]
            for name, cmd in commands.items()
        }
    }


def _is_vb_hook(command: Any, slug: str) -> bool:
    if not isinstance(command, str):
        return False
    try:
        tokens = shlex.split(command)
    except ValueError:
        return False
    runs_vb = any(Path(t).name in ("vb", "vb.exe") or t == "vault_brain" for t in tokens)
    return runs_vb and tokens[-2:] == ["hook", slug]


def _entries(groups: list[Any]) -> Iterator[dict[str, Any]]:
    for group in groups:
        if isinstance(group, dict) and isinstance(group.get("hooks"), list):
            yield from (h for h in group["hooks"] if isinstance(h, dict))


def merge_settings(
    settings: dict[str, Any], commands: dict[str, str]
) -> tuple[dict[str, Any], dict[str, str]]:
    """`settings` with vb's hooks added or updated in place; every other key and hook kept.
    Returns the merged settings and, per event, 'added', 'updated' or 'unchanged'."""
    merged = json.loads(json.dumps(settings))
    hooks = merged.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise VaultBrainError(
            '"hooks" in the settings is not an object', hint="fix the settings file by hand"
        )
    status: dict[str, str] = {}
    slugs = {name: slug for slug, name in EVENTS.items()}
    for name, command in commands.items():
        groups = hooks.setdefault(name, [])
        if not isinstance(groups, list):
            raise VaultBrainError(
                f'"hooks.{name}" in the settings is not a list',
                hint="fix the settings file by hand",
            )
        ours = [h for h in _entries(groups) if _is_vb_hook(h.get("command"), slugs[name])]
        if not ours:
            groups.append({"hooks": [{"type": "command", "command": command}]})
            status[name] = "added"
        elif all(h.get("command") == command for h in ours):
            status[name] = "unchanged"
        else:
            for h in ours:
                h["command"] = command
            status[name] = "updated"
    return merged, status


def install_settings(path: Path, commands: dict[str, str]) -> dict[str, str]:
    """Merge vb's hooks into a Claude Code settings file (created if missing); written only
    when something changes."""
    settings: Any = {}
    if path.exists():
        try:
            settings = json.loads(path.read_text(encoding="utf-8") or "{}")
        except ValueError as exc:
            raise VaultBrainError(
                f"{path} is not valid JSON ({getattr(exc, 'msg', exc)}); nothing changed",
                hint="fix the file, or pass --settings to write another one",
            ) from None
        if not isinstance(settings, dict):
            raise VaultBrainError(f"{path} is not a JSON object; nothing changed")
    merged, status = merge_settings(settings, commands)
    if any(s != "unchanged" for s in status.values()):
        atomic_write(path, json.dumps(merged, indent=2, ensure_ascii=False) + "\n")
    return status
