"""The sandbox image: built locally, never pulled, tagged by content so it is built once.

`vb-sandbox:<12 hex>` is built FROM a base image with the Dockerfile shipped in
`image/`; the 12 hex digits are the start of the sha256 over that Dockerfile and the
base image's id, so a changed Dockerfile or base gives a new tag and an unchanged one is never
rebuilt. The base is any local image the user names, or `vb-base:<suite>-<hash of its
packages>`: a Debian minbase (python3, ripgrep) that vb makes itself with debootstrap and
`docker import` when it is missing, as registries may be unreachable (air-gapped machines,
CI). Making it needs root and debootstrap.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vault_brain.storage.sandbox.engine import SandboxError, call, docker_errors, one_line

SUITE = "bookworm"
BASE_REPOSITORY = "vb-base"
IMAGE_REPOSITORY = "vb-sandbox"
# python3 runs the file tools and the socket bridge; ripgrep is the search tool agents expect
# (OpenCode's grep and glob use it, and would try to download it)
BASE_PACKAGES = "python3,ca-certificates,ripgrep"
# named by its packages: a changed list is a new base, built once
BASE_TAG = f"{BASE_REPOSITORY}:{SUITE}-{hashlib.sha256(BASE_PACKAGES.encode()).hexdigest()[:6]}"
DOCKERFILE = Path(__file__).with_name("image") / "Dockerfile"
DEFAULT_MIRROR = "http://deb.debian.org/debian"
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|^VB_", re.IGNORECASE)

Say = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


def image_tag(dockerfile: bytes, base_id: str) -> str:
    """`vb-sandbox:<12 hex>` for this Dockerfile on the base image with id `base_id`."""
    digest = hashlib.sha256(dockerfile + b"\0" + base_id.encode("ascii")).hexdigest()
    return f"{IMAGE_REPOSITORY}:{digest[:12]}"


def ensure_image(
    client: Any,
    *,
    base: str | None = None,
    rebuild: bool = False,
    say: Say | None = None,
    mirror: str | None = None,
) -> str:
    """The sandbox image's tag, building what is missing: the base `BASE_TAG` (unless
    `base` names a local image) and the sandbox image on it. `rebuild` builds both again
    (vb's own base included, for fresh Debian packages; a named base is never touched).
    `say` gets a line before each slow step; `mirror` is the Debian mirror for debootstrap
    (default: the one in this machine's apt sources)."""
    say = say or _quiet
    if base is None:
        base = BASE_TAG
        base_image = None if rebuild else local_image(client, base)
        if base_image is None:
            build_base(client, base, say=say, mirror=mirror)
            base_image = local_image(client, base)
            if base_image is None:
                raise SandboxError(f"the base image {base} vanished right after it was built")
    else:
        base_image = local_image(client, base)
        if base_image is None:
            raise SandboxError(
                f"no local image named {base}",
                hint="`docker images` lists them (vb never pulls); or omit the base to build "
                f"{BASE_TAG} with debootstrap",
            )
        _refuse_secrets(base, base_image)
    dockerfile = DOCKERFILE.read_bytes()
    tag = image_tag(dockerfile, base_image.id)
    if not rebuild and local_image(client, tag) is not None:
        return tag
    say(f"building the sandbox image {tag} from {base} ...")
    context = build_context({"Dockerfile": (dockerfile, 0o644)})
    build_image(client, context, tag, base=base_image.id, label=base, rebuild=rebuild)
    return tag


def build_image(
    client: Any, context: io.BytesIO, tag: str, *, base: str, label: str, rebuild: bool
) -> None:
    """`tag` built from the tar `context` (a Dockerfile taking the base image as ARG BASE),
    never pulling; a failed build is one line with the build's last output."""
    from docker.errors import BuildError

    with docker_errors(
        f"building the image {tag}",
        hint="it is built from a local base only (no registry): check `docker images`",
    ):
        try:
            client.images.build(
                fileobj=context,
                custom_context=True,
                tag=tag,
                buildargs={"BASE": base},  # pinned: the id the tag hashes
                pull=False,
                nocache=rebuild,
                rm=True,
                forcerm=True,
                labels={"vb.sandbox": "1", "vb.base": label},
            )
        except BuildError as exc:
            lines = [one_line(line) for line in _log_lines(exc.build_log) if line.strip()]
            raise SandboxError(
                f"building the image {tag} failed: {one_line(exc.msg, 120)}",
                hint=f"its last output: {lines[-1]}" if lines else "try `docker build` by hand",
            ) from None


def local_image(client: Any, name: str) -> Any | None:
    from docker.errors import ImageNotFound

    with docker_errors(f"looking up the image {name}"):
        try:
            return client.images.get(name)
        except ImageNotFound:
            return None


def _refuse_secrets(base: str, image: Any) -> None:
    """A base image whose environment names a key or token would put it in every session."""
    names = [item.split("=", 1)[0] for item in (image.attrs.get("Config") or {}).get("Env") or []]
    secret = [name for name in names if _SECRET_NAME.search(name)]
    if secret:
        raise SandboxError(
            f"the base image {base} sets {', '.join(secret)} in its environment",
            hint="keys and tokens never enter the sandbox: use a base image without them",
        )


def build_context(
    data: dict[str, tuple[bytes, int]], files: dict[str, tuple[Path, int]] | None = None
) -> io.BytesIO:
    """A build context (a tar) of named bytes and named files, each with its mode."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, (content, mode) in data.items():
            info = tarfile.TarInfo(name)
            info.size = len(content)
            info.mode = mode
            tar.addfile(info, io.BytesIO(content))
        for name, (path, mode) in (files or {}).items():
            info = tarfile.TarInfo(name)
            info.size = path.stat().st_size
            info.mode = mode
            with path.open("rb") as f:
                tar.addfile(info, f)
    buffer.seek(0)
    return buffer


def _log_lines(build_log: Any) -> list[str]:
    lines: list[str] = []
    for chunk in build_log or []:
        if isinstance(chunk, dict):
            lines.extend(str(chunk.get("stream") or chunk.get("error") or "").splitlines())
    return lines


def build_base(client: Any, tag: str, *, say: Say, mirror: str | None = None) -> None:
    """`tag` made from a Debian minbase root filesystem (debootstrap) with `docker import`."""
    if os.geteuid() != 0:
        raise SandboxError(
            f"building the base image {tag} needs root (debootstrap)",
            hint="run `sudo vb session --build` once, or name any local image with python3 "
            "as the base",
        )
    debootstrap = shutil.which("debootstrap") or (
        "/usr/sbin/debootstrap" if os.access("/usr/sbin/debootstrap", os.X_OK) else None
    )
    if debootstrap is None:
        raise SandboxError(
            f"building the base image {tag} needs debootstrap, which is not installed",
            hint="install it: sudo apt-get install debootstrap (or name a local base image)",
        )
    mirror = mirror or apt_mirror()
    workdir = Path(tempfile.mkdtemp(prefix="vb-rootfs.", dir="/var/tmp"))
    try:
        root = workdir / "rootfs"
        say(f"building the base image {tag}: debootstrap {SUITE} from {mirror} (a few minutes) ...")
        proc = subprocess.run(
            [
                debootstrap,
                "--variant=minbase",
                f"--include={BASE_PACKAGES}",
                SUITE,
                str(root),
                mirror,
            ],
            capture_output=True,
            text=True,
            timeout=1800,
            check=False,
        )
        if proc.returncode != 0:
            tail = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
            raise SandboxError(
                f"debootstrap {SUITE} from {mirror} failed (exit {proc.returncode})",
                hint=one_line(tail[-1] if tail else "no output", 160),
            )
        for junk in ("var/cache/apt/archives", "var/lib/apt/lists", "debootstrap"):
            shutil.rmtree(root / junk, ignore_errors=True)
        say(f"importing the base image {tag} ...")
        _import_rootfs(client, root, tag)
    except subprocess.TimeoutExpired:
        raise SandboxError(
            f"debootstrap {SUITE} took over 30 minutes", hint="check the mirror"
        ) from None
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _import_rootfs(client: Any, root: Path, tag: str) -> None:
    tar = subprocess.Popen(
        ["tar", "-C", str(root), "--numeric-owner", "-c", "."],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    repository, _, version = tag.partition(":")
    assert tar.stdout is not None
    try:
        call(
            f"importing the base image {tag}",
            lambda: client.api.import_image(
                src=tar.stdout,
                repository=repository,
                tag=version or "latest",
                changes=["ENV LANG=C.UTF-8", 'CMD ["/bin/sh"]'],
                stream_src=True,
            ),
        )
    finally:
        tar.stdout.close()
        err = tar.stderr.read().decode(errors="replace") if tar.stderr else ""
        if tar.wait() != 0:
            raise SandboxError(f"packing the base file system failed: {one_line(err, 160)}")


def apt_mirror(sources: Path = Path("/etc/apt")) -> str:
    """The Debian mirror this machine's apt uses for the suite (deb822 `.sources` files or
    one-line `sources.list`), else deb.debian.org."""
    for path in sorted((sources / "sources.list.d").glob("*.sources")):
        for stanza in re.split(r"\n\s*\n", _read(path)):
            fields = dict(_field(line) for line in stanza.splitlines() if ":" in line)
            if SUITE in fields.get("Suites", "").split() and fields.get("URIs"):
                return fields["URIs"].split()[0]
    lists = [sources / "sources.list", *sorted((sources / "sources.list.d").glob("*.list"))]
    pattern = re.compile(rf"^deb\s+(?:\[[^]]*\]\s+)?([a-z+]+://\S+)\s+{SUITE}\s", re.MULTILINE)
    for path in lists:
        found = pattern.search(_read(path))
        if found:
            return found.group(1)
    return DEFAULT_MIRROR


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _field(line: str) -> tuple[str, str]:
    key, _, value = line.partition(":")
    return key.strip(), value.strip()
