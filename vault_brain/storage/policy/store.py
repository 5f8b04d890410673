"""policy/ on disk and what a person approved of it (`.vb/policy-approved.json`).

The policy is every regular file under `policy/` (hidden files, temp files and symlinks are
not part of it: a symlink is never followed). Its hash is the SHA-256 over the sorted paths
and contents. An approval records that hash, when, and a copy of every approved file, so the
approved rules can run and a diff be shown without git, whatever policy/ holds meanwhile.

An approval is bound to the machine that made it: the record carries an HMAC-SHA256 of its
content keyed by this machine's secret (`machine_key`, outside every vault). A record whose
HMAC does not verify -- copied from another machine, forged by a remote, edited by hand, or
written by a vb before approvals were signed (version 1) -- approves nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vault_brain.domain.errors import VaultBrainError
from vault_brain.domain.policy.rules import NO_RULES, RuleError, RuleSet, parse_rules
from vault_brain.storage.files import atomic_write
from vault_brain.storage.paths import VaultPaths
from vault_brain.storage.policy.machine_key import sign, verify

RULES_FILE = "rules.yaml"
VERSION = 2
UNSIGNED = "was recorded before vb bound approvals to the machine that made them"
FOREIGN = "was not made on this machine (its signature does not match this machine's key)"
DAMAGED = "is damaged"
MAX_FILE_BYTES = 64 * 1024
MAX_FILES = 100
_TEMP_SUFFIXES = (".tmp", ".vbtmp", ".swp", ".swx", ".crswap", "~", ".bak")


@dataclass(frozen=True)
class Approval:
    """What `vb policy approve` recorded: the hash, the time and the files (path -> text)."""

    hash: str
    approved_at: str
    files: Mapping[str, str] = field(default_factory=dict)


def policy_hash(files: Mapping[str, bytes]) -> str:
    digest = hashlib.sha256()
    for rel in sorted(files):
        content = hashlib.sha256(files[rel]).hexdigest()
        digest.update(f"{rel}\0{content}\n".encode())
    return digest.hexdigest()


def read_policy_files(paths: VaultPaths) -> dict[str, bytes]:
    """Every file of policy/ (relative POSIX path -> bytes); empty when there is no policy/."""
    root = paths.policy_dir
    if root.is_symlink() or not root.is_dir():
        return {}
    found: dict[str, bytes] = {}
    for folder, dirs, names in os.walk(root):  # os.walk follows no symlinked folder
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            if name.startswith(".") or name.endswith(_TEMP_SUFFIXES):
                continue
            full = Path(folder) / name
            if full.is_symlink() or not full.is_file():
                continue
            rel = full.relative_to(root).as_posix()
            if len(found) >= MAX_FILES:
                raise VaultBrainError(
                    f"policy/ holds more than {MAX_FILES} files",
                    hint="keep the rules in policy/rules.yaml and remove the rest",
                )
            if full.stat().st_size > MAX_FILE_BYTES:
                raise VaultBrainError(
                    f"policy/{rel} is larger than {MAX_FILE_BYTES // 1024} KB",
                    hint="policy files are short rules: shorten or remove it",
                )
            found[rel] = full.read_bytes()
    return found


def decode_files(files: Mapping[str, bytes]) -> dict[str, str]:
    """The files as text; a file that is not UTF-8 is an error naming it."""
    out: dict[str, str] = {}
    for rel, data in files.items():
        try:
            out[rel] = data.decode("utf-8")
        except UnicodeDecodeError:
            raise VaultBrainError(
                f"policy/{rel} is not UTF-8 text",
                hint="policy files are YAML text: fix or remove it",
            ) from None
    return out


def _payload(approval: Approval) -> bytes:
    doc = {"hash": approval.hash, "approved_at": approval.approved_at, "files": approval.files}
    return json.dumps(doc, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode()


def load_approval(paths: VaultPaths, key: bytes | None) -> tuple[Approval | None, str | None]:
    """The last approval made on this machine, and why a record that is there approves
    nothing (None: no record, or it verifies). `key`: this machine's secret (None when it
    has none yet: then no record verifies)."""
    path = paths.policy_approval
    if path.is_symlink() or not os.path.lexists(path):
        return None, (DAMAGED if path.is_symlink() else None)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        files = {str(k): str(v) for k, v in doc["files"].items()}
        approval = Approval(str(doc["hash"]), str(doc["approved_at"]), files)
        mac = doc.get("mac")
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None, DAMAGED
    encoded = {rel: text.encode("utf-8") for rel, text in approval.files.items()}
    if policy_hash(encoded) != approval.hash:
        return None, DAMAGED
    if not isinstance(mac, str):
        return None, UNSIGNED
    if key is None or not verify(key, _payload(approval), mac):
        return None, FOREIGN
    return approval, None


def write_approval(paths: VaultPaths, files: Mapping[str, str], when: str, key: bytes) -> Approval:
    encoded = {rel: text.encode("utf-8") for rel, text in files.items()}
    approval = Approval(policy_hash(encoded), when, dict(sorted(files.items())))
    doc: dict[str, Any] = {
        "version": VERSION,
        "hash": approval.hash,
        "approved_at": when,
        "files": approval.files,
        "mac": sign(key, _payload(approval)),
    }
    atomic_write(
        paths.policy_approval,
        json.dumps(doc, ensure_ascii=False, indent=1) + "\n",
        inside=paths,
    )
    return approval


def load_yaml_rules(text: str, where: str) -> RuleSet:
    """rules.yaml's text -> checked rules; an error names the file, the step and the problem."""
    from vault_brain.storage.notes.frontmatter import load_yaml  # lazy: PyYAML

    try:
        data = load_yaml(text)
    except ValueError as exc:
        raise VaultBrainError(
            f"{where}: not valid YAML ({exc})", hint="fix the YAML of the rules file"
        ) from None
    try:
        return parse_rules(data)
    except RuleError as exc:
        raise VaultBrainError(
            f"{where}: {exc}",
            hint="a rule is a true/false expression over note fields; see `vb policy --help`",
        ) from None


def rules_of(files: Mapping[str, str], where: str) -> RuleSet:
    """The rules a set of policy files holds (none without rules.yaml)."""
    text = files.get(RULES_FILE)
    return NO_RULES if text is None else load_yaml_rules(text, where)
