"""STRATEGY.md's front matter -> the policy, cached in `.vb/` by the file's size and mtime;
the settings a remote changed and this machine has not approved keep this machine's values
(`policy.hold`)."""

from __future__ import annotations

import json

from vault_brain.domain.errors import VaultBrainError
from vault_brain.domain.policy.settings import DEFAULT_POLICY, Policy, build_policy
from vault_brain.storage.files import check_read_inside, read_inside, write_cache
from vault_brain.storage.notes.frontmatter import parse_text
from vault_brain.storage.paths import VaultPaths
from vault_brain.storage.policy.hold import apply_held


def load_policy(paths: VaultPaths) -> Policy:
    check_read_inside(paths, paths.strategy)  # a symlink out of the vault: refused
    try:
        st = paths.strategy.stat()
    except FileNotFoundError:
        return DEFAULT_POLICY
    stamp = [st.st_mtime_ns, st.st_size]
    try:
        cached = json.loads(paths.policy_cache.read_text(encoding="utf-8"))
        if cached.get("stamp") == stamp:
            return build_policy(apply_held(paths, cached["overrides"]))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    parsed = parse_text(read_inside(paths, paths.strategy))
    if parsed.error:
        raise VaultBrainError(
            f"STRATEGY.md: front matter is not valid YAML ({parsed.error})",
            hint="fix the YAML between the --- lines of STRATEGY.md",
        )
    overrides = {str(k): v for k, v in parsed.meta.items()}
    policy = build_policy(apply_held(paths, overrides))
    if paths.vb_dir.is_dir():
        write_cache(paths.policy_cache, json.dumps({"stamp": stamp, "overrides": overrides}))
    return policy
