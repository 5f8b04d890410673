"""What the session's container sees of the host: its mounts and the user it runs as.

- /workspace: the agent's workspace, read-write; the container runs as its owner (the host
  user; never root: under root, the workspace owner, or 1000:1000 for a folder root owns).
- /vault: read-only, the session's view of the vault (`sandbox.view`), never the vault.
- /vault/policy: with `--policy-rw`, the vault's policy/ read-write over the view.
- the host folders a caller names (OpenCode's sockets at /run/vb), read-only.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from vault_brain.storage.sandbox.engine import SandboxError

if TYPE_CHECKING:
    from vault_brain.storage.sandbox.view import VaultView

WORKSPACE = "/workspace"
VAULT = "/vault"
AGENT_USER = (1000, 1000)


Bind = tuple[str, str, bool]  # (path in the container, host path, read-only)


def session_mounts(
    workspace: Path, view: VaultView, user: str, policy_rw: bool, read_only: Mapping[str, Path]
) -> list[Bind]:
    """The container's bind mounts (see the module doc)."""
    return [
        (WORKSPACE, str(workspace), False),
        (VAULT, str(view.folder), True),
        *((at, str(src), True) for at, src in read_only.items()),
        *([policy_mount(view.vault, user)] if policy_rw else []),
    ]


def container_user(
    workspace: Path, host_uid: int | None = None, host_gid: int | None = None
) -> str:
    """The uid:gid the container runs as: the host user's (files in the workspace are theirs);
    under root, the workspace owner's, or 1000:1000 for a workspace root owns: never root."""
    uid = os.getuid() if host_uid is None else host_uid
    gid = os.getgid() if host_gid is None else host_gid
    if uid != 0:
        return f"{uid}:{gid}"
    info = workspace.stat()
    if info.st_uid != 0:
        return f"{info.st_uid}:{info.st_gid}"
    return "{}:{}".format(*AGENT_USER)


def check_folders(workspace: Path, vault: Path) -> tuple[Path, Path]:
    """Both folders, resolved: existing, and neither inside the other."""
    workspace, vault = workspace.resolve(), vault.resolve()
    for label, folder in (("workspace", workspace), ("vault", vault)):
        if not folder.is_dir():
            raise SandboxError(f"the {label} {folder} is not a folder", hint="create it first")
    if workspace == vault or vault.is_relative_to(workspace) or workspace.is_relative_to(vault):
        raise SandboxError(
            f"the workspace {workspace} and the vault {vault} overlap",
            hint="the vault is mounted read-only: give the session a workspace outside it",
        )
    return workspace, vault


def policy_mount(vault: Path, user: str) -> Bind:
    """The vault's policy/ read-write at /vault/policy; a folder vb creates (or one root owns,
    when vb runs as root) is given to the container's user, who must be able to write it."""
    folder = vault / "policy"
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        raise SandboxError(
            f"{folder} is not a folder", hint="make policy/ a plain folder of the vault"
        )
    folder.mkdir(exist_ok=True)
    if os.getuid() == 0 and folder.stat().st_uid == 0:
        uid, gid = (int(x) for x in user.split(":"))
        if uid != 0:
            for path in [folder, *folder.rglob("*")]:
                if not path.is_symlink():
                    os.chown(path, uid, gid)
    return f"{VAULT}/policy", str(folder), False


def prepare_workspace(workspace: Path) -> str:
    """`container_user` for `workspace`; under root, an empty root-owned workspace is given to
    1000:1000 (agent) so the container can write in it; a non-empty one is refused."""
    user = container_user(workspace)
    if os.getuid() == 0 and workspace.stat().st_uid == 0:
        if any(workspace.iterdir()):
            raise SandboxError(
                f"the workspace {workspace} belongs to root, and the sandbox never runs as root",
                hint=f"give it to a user (chown -R 1000:1000 {workspace}) or use an empty folder",
            )
        os.chown(workspace, *AGENT_USER)
    return user
