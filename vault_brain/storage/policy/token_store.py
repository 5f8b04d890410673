"""The serve tokens (`vb token`): machine-local, in `.vb/serve-tokens.json` (git-ignored,
mode 0600), each kept as the SHA-256 of the token and never the token itself.

A token is a random string (`secrets.token_urlsafe`) shown once, when it is made. Looking
one up hashes what a client sent and compares it with every stored hash in constant time.
The file is read again whenever it changes, so a revoked token stops working at once in a
running `vb serve`. A file that is a symlink, writable by others, or not what vb wrote is
refused (every token then fails: closed, never open).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import re
import secrets
import stat
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vault_brain.domain.clock import now_iso
from vault_brain.domain.errors import NotFoundError, UsageError, VaultBrainError
from vault_brain.domain.policy.grants import Grant
from vault_brain.domain.policy.scopes import parse_scopes
from vault_brain.storage.files import atomic_write, file_lock
from vault_brain.storage.paths import VaultPaths

FILE_NAME = "serve-tokens.json"
FORMAT = 1
PREFIX = "vbt-"  # a token is recognisable as vb's (and by secret scanners)
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
NAME_HINT = "a token name is letters, digits, '.', '_' or '-' (at most 64), e.g. alice-laptop"


@dataclass(frozen=True)
class StoredToken:
    name: str
    sha256: str
    """The hex SHA-256 of the token (the token itself is never stored)."""
    scopes: tuple[str, ...] | None
    """None: every scope."""
    agent: str | None
    feedback: bool
    created: str

    def grant(self) -> Grant:
        # (a scoped token is another party: the person's private notes are not for it)
        private = self.scopes is None
        return Grant(self.name, self.scopes, self.agent, self.feedback, False, None, private)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "sha256": self.sha256,
            "scopes": None if self.scopes is None else list(self.scopes),
            "agent": self.agent,
            "feedback": self.feedback,
            "created": self.created,
        }


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def check_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise UsageError(f"{name!r} is not a token name", hint=NAME_HINT)
    return name


class TokenStore:
    """The tokens of one vault on this machine."""

    def __init__(self, paths: VaultPaths) -> None:
        self.paths = paths
        self.path = paths.vb_dir / FILE_NAME
        self._lock = threading.Lock()
        self._seen: tuple[int, int, int] | None = None
        self._tokens: list[StoredToken] = []
        self._error: VaultBrainError | None = None

    # -- reading -------------------------------------------------------------------------
    def tokens(self) -> list[StoredToken]:
        """Every stored token (read again when the file changed); raises when the file is
        not one vb can trust."""
        with self._lock:
            seen = _stamp(self.path)
            if seen != self._seen:
                self._seen = seen
                try:
                    self._tokens, self._error = self._read(), None
                except VaultBrainError as exc:
                    self._tokens, self._error = [], exc
            if self._error is not None:
                raise self._error
            return list(self._tokens)

    def has_tokens(self) -> bool:
        """Any token stored (a store vb cannot read counts: tokens are then required)."""
        try:
            return bool(self.tokens())
        except VaultBrainError:
            return True

    def lookup(self, token: str) -> StoredToken | None:
        """The stored token `token` is, compared by hash in constant time (None: unknown)."""
        given = digest(token)
        found = None
        for stored in self.tokens():
            if hmac.compare_digest(given, stored.sha256):
                found = stored  # (no early exit: every hash is compared)
        return found

    def _read(self) -> list[StoredToken]:
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW)
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise self._untrusted(f"cannot be opened ({exc.strerror or exc})") from None
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise self._untrusted("is not a regular file")
            if info.st_mode & 0o022 or info.st_uid != os.getuid():
                raise self._untrusted("may be written by another user")
            raw = handle.read()
        try:
            data = json.loads(raw)
            return [_token_of(item) for item in data["tokens"]]
        except (ValueError, KeyError, TypeError, AttributeError, VaultBrainError):
            raise self._untrusted("is not a token store vb wrote") from None

    def _untrusted(self, why: str) -> VaultBrainError:
        return VaultBrainError(
            f"the token store {self.path} {why}; no token is accepted",
            hint=f"remove it and make the tokens again (vb token add), or `chmod 600 {self.path}`",
        )

    # -- changing ------------------------------------------------------------------------
    @contextlib.contextmanager
    def _changing(self) -> Iterator[list[StoredToken]]:
        """The tokens to change in place, written back (0600, atomically) after."""
        lock = self.paths.vb_dir / (FILE_NAME + ".lock")
        with file_lock(lock, "token store", self.paths.lock_timeout):
            with self._lock:
                self._seen = None  # read it now, whatever was cached
            tokens = self.tokens()
            yield tokens
            payload = {"version": FORMAT, "tokens": [t.to_json() for t in tokens]}
            text = json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
            _create_private(self.path)
            atomic_write(self.path, text, inside=self.paths)
        with self._lock:
            self._seen = None

    def add(
        self,
        name: str,
        scopes: list[str] | None,
        agent: str | None = None,
        feedback: bool = False,
    ) -> tuple[StoredToken, str]:
        """A new token (returned once, with what is stored of it)."""
        check_name(name)
        checked = None if scopes is None else tuple(parse_scopes(scopes, "--scope"))
        token = PREFIX + secrets.token_urlsafe(32)
        stored = StoredToken(name, digest(token), checked, agent, feedback, now_iso())
        with self._changing() as tokens:
            if any(t.name == name for t in tokens):
                raise UsageError(
                    f"a token named {name!r} exists",
                    hint=f"choose another name, or `vb token revoke {name}` first",
                )
            tokens.append(stored)
        return stored, token

    def revoke(self, name: str) -> StoredToken:
        with self._changing() as tokens:
            found = next((t for t in tokens if t.name == name), None)
            if found is None:
                known = ", ".join(t.name for t in tokens) or "none"
                raise NotFoundError(
                    f"no token named {name!r}", hint=f"`vb token list` shows them (now: {known})"
                )
            tokens.remove(found)
        return found


def _token_of(item: dict[str, Any]) -> StoredToken:
    scopes = item["scopes"]
    sha = str(item["sha256"])
    if not re.fullmatch(r"[0-9a-f]{64}", sha):
        raise ValueError("not a SHA-256")
    return StoredToken(
        check_name(str(item["name"])),
        sha,
        None if scopes is None else tuple(parse_scopes(list(scopes))),
        None if item.get("agent") is None else str(item["agent"]),
        bool(item.get("feedback")),
        str(item.get("created") or ""),
    )


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return info.st_mtime_ns, info.st_size, info.st_ino


def _create_private(path: Path) -> None:
    """The store exists with mode 0600 before it is replaced (the new file takes its mode)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
    if path.is_symlink():
        raise VaultBrainError(
            f"{path} is a symlink: vb keeps its tokens only in a file of its own",
            hint="remove the symlink and run the command again",
        )
    os.chmod(path, 0o600)
