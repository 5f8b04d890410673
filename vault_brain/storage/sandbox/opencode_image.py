"""The OpenCode sandbox image: the sandbox image plus a pinned OpenCode and the socket bridge.

OpenCode ships on npm as one self-contained binary per platform (`opencode-linux-x64`,
`opencode-linux-arm64`; the `opencode-ai` package only picks one). vb fetches the pinned
release's tarball on the host from the npm registry (`$npm_config_registry`, else
registry.npmjs.org) into its cache, checks it against the sha512 pinned here, and copies the
binary into the image: the build runs no command and fetches nothing, so it works where the
build has no network. An air-gapped machine names a copy of the tarball in
`VB_OPENCODE_TARBALL` (checked against the same hash).

`vb-opencode:<12 hex>` hashes the Dockerfile, the bridge, the release's hash and the sandbox
image's id: an unchanged image is never rebuilt.
"""

from __future__ import annotations

import base64
import hashlib
import os
import platform
import shutil
import tarfile
import tempfile
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from vault_brain.storage.sandbox.build import build_context, build_image, local_image
from vault_brain.storage.sandbox.engine import SandboxError, one_line

OPENCODE_VERSION = "1.18.33"
# npm's `dist.integrity` of each platform package of that release
PACKAGES = {
    "x86_64": (
        "opencode-linux-x64",
        "sha512-q/t/3p2CTxOT9y2kvjesb/LZab2+1eqlhhWA02Be6mjTtmYtNBcBsrI5yDo4Fw7ZSPBW2oyMIGMNRqiKQjiAWw==",
    ),
    "aarch64": (
        "opencode-linux-arm64",
        "sha512-1KQGBiiDDeL/VHHbHkOvvFo8Jr97WT5+C1tear+p7IcDTnXgVHXqIjU4O4jM4mHQzykTP2i884FCnW5LDa+zCA==",
    ),
}
REPOSITORY = "vb-opencode"
DEFAULT_REGISTRY = "https://registry.npmjs.org"
TARBALL_VARIABLE = "VB_OPENCODE_TARBALL"
FOLDER = Path(__file__).with_name("image")
DOCKERFILE = FOLDER / "Dockerfile.opencode"
BRIDGE = FOLDER / "bridge.py"
BINARY_IN_TARBALL = "package/bin/opencode"

Say = Callable[[str], None]


def package_for(machine: str | None = None) -> tuple[str, str]:
    """(npm package, integrity) of OpenCode for this machine's architecture."""
    arch = machine or platform.machine()
    arch = {"amd64": "x86_64", "arm64": "aarch64"}.get(arch.lower(), arch.lower())
    if arch not in PACKAGES:
        raise SandboxError(
            f"OpenCode {OPENCODE_VERSION} has no Linux build for {arch} that vb knows",
            hint="use the built-in agent (--agent builtin)",
        )
    return PACKAGES[arch]


def ensure_opencode_image(
    client: Any,
    sandbox_image: str,
    env: Mapping[str, str],
    *,
    rebuild: bool = False,
    say: Say | None = None,
) -> str:
    """The OpenCode image's tag for `sandbox_image`, built (and its binary fetched) when
    missing."""
    say = say or (lambda _: None)
    base = local_image(client, sandbox_image)
    if base is None:
        raise SandboxError(f"no sandbox image {sandbox_image}", hint="vb session --build")
    package, integrity = package_for()
    dockerfile, bridge = DOCKERFILE.read_bytes(), BRIDGE.read_bytes()
    digest = hashlib.sha256(
        b"\0".join([dockerfile, bridge, integrity.encode(), base.id.encode()])
    ).hexdigest()
    tag = f"{REPOSITORY}:{digest[:12]}"
    if not rebuild and local_image(client, tag) is not None:
        return tag
    tarball = fetch_tarball(package, integrity, env, say)
    say(f"building the OpenCode image {tag} (OpenCode {OPENCODE_VERSION}) ...")
    with tempfile.TemporaryDirectory(prefix="vb-opencode.") as tmp:
        binary = Path(tmp) / "opencode"
        _extract_binary(tarball, binary)
        context = build_context(
            {"Dockerfile": (dockerfile, 0o644), "bridge.py": (bridge, 0o644)},
            {"opencode": (binary, 0o755)},
        )
        build_image(client, context, tag, base=base.id, label=sandbox_image, rebuild=rebuild)
    return tag


def cache_folder(env: Mapping[str, str]) -> Path:
    root = env.get("XDG_CACHE_HOME") or str(Path(env.get("HOME") or Path.home()) / ".cache")
    return Path(root) / "vault_brain"


def fetch_tarball(package: str, integrity: str, env: Mapping[str, str], say: Say) -> Path:
    """The release tarball, checked: the user's copy, the cached one, or fetched."""
    named = env.get(TARBALL_VARIABLE)
    if named:
        path = Path(named).expanduser()
        if not path.is_file():
            raise SandboxError(
                f"{TARBALL_VARIABLE} names {path}, which is not a file",
                hint=f"download {package}-{OPENCODE_VERSION}.tgz from an npm registry",
            )
        _check(path, integrity, f"{path} (named by {TARBALL_VARIABLE})")
        return path
    cached = cache_folder(env) / f"{package}-{OPENCODE_VERSION}.tgz"
    if cached.is_file() and _matches(cached, integrity):
        return cached
    registry = (env.get("npm_config_registry") or DEFAULT_REGISTRY).rstrip("/")
    url = f"{registry}/{package}/-/{package}-{OPENCODE_VERSION}.tgz"
    say(f"fetching OpenCode {OPENCODE_VERSION} from {url} ...")
    cached.parent.mkdir(parents=True, exist_ok=True)
    partial = cached.with_suffix(f".part{os.getpid()}")
    try:
        with urllib.request.urlopen(url, timeout=60) as response, partial.open("wb") as out:
            shutil.copyfileobj(response, out, 1 << 20)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise SandboxError(
            f"could not fetch OpenCode from {url}: {one_line(exc, 120)}",
            hint=f"put the tarball in {TARBALL_VARIABLE} (or set npm_config_registry to a "
            "registry this machine reaches)",
        ) from None
    try:
        _check(partial, integrity, url)
    except SandboxError:
        partial.unlink(missing_ok=True)
        raise
    os.replace(partial, cached)
    return cached


def _matches(path: Path, integrity: str) -> bool:
    algorithm, _, expected = integrity.partition("-")
    digest = hashlib.new(algorithm)
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return base64.b64encode(digest.digest()).decode() == expected


def _check(path: Path, integrity: str, what: str) -> None:
    if not _matches(path, integrity):
        raise SandboxError(
            f"{what} is not OpenCode {OPENCODE_VERSION}: its hash differs from the pinned one",
            hint="fetch the release tarball again; vb runs only the version it pins",
        )


def _extract_binary(tarball: Path, target: Path) -> None:
    try:
        with tarfile.open(tarball, "r:gz") as tar:
            member = tar.getmember(BINARY_IN_TARBALL)
            source = tar.extractfile(member)
            if source is None:
                raise KeyError(BINARY_IN_TARBALL)
            with source, target.open("wb") as out:
                shutil.copyfileobj(source, out, 1 << 20)
    except (KeyError, tarfile.TarError, OSError) as exc:
        raise SandboxError(
            f"the OpenCode tarball {tarball} holds no {BINARY_IN_TARBALL} ({one_line(exc, 80)})",
            hint="fetch it again",
        ) from None
