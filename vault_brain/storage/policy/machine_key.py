"""This machine's secret, kept outside every vault: what binds a policy approval to the
machine that made it (`policy.store`), so a record copied from another machine, or forged
by a remote, approves nothing.

`$XDG_CONFIG_HOME/vault_brain/machine.key`, else `~/.config/vault_brain/machine.key`:
32 random bytes (hex), created on first use with mode 0600 in a folder of mode 0700.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
from pathlib import Path

from vault_brain.domain.errors import VaultBrainError

KEY_NAME = "machine.key"


def key_path(config_home: Path) -> Path:
    return config_home / "vault_brain" / KEY_NAME


def load_key(config_home: Path, create: bool = False) -> bytes | None:
    """The machine's secret; None when there is none yet and `create` is False."""
    path = key_path(config_home)
    try:
        return _read(path)
    except FileNotFoundError:
        if not create:
            return None
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:  # another process made it meanwhile
        return _read(path)
    except OSError as exc:
        raise VaultBrainError(
            f"cannot create this machine's approval key {path}: {exc.strerror or exc}",
            hint="make that folder writable (or point XDG_CONFIG_HOME at one that is)",
        ) from None
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(secrets.token_hex(32) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    return _read(path)


def _read(path: Path) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise VaultBrainError(
            f"cannot read this machine's approval key {path}: {exc.strerror or exc}",
            hint="it must be a file of yours (mode 0600); remove it to make a new one "
            "(approvals made with it then need `vb policy approve` again)",
        ) from None
    with os.fdopen(fd, "rb") as handle:
        text = handle.read(4096).strip()
    if len(text) < 32:
        raise VaultBrainError(
            f"this machine's approval key {path} is damaged",
            hint="remove it; `vb policy approve` makes a new one",
        )
    with contextlib.suppress(OSError):
        if os.stat(path).st_mode & 0o077:
            os.chmod(path, 0o600)
    return text


def sign(key: bytes, payload: bytes) -> str:
    return hmac.new(key, payload, hashlib.sha256).hexdigest()


def verify(key: bytes, payload: bytes, mac: str) -> bool:
    return hmac.compare_digest(sign(key, payload), mac)
