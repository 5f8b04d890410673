"""The Docker engine as `vb session`'s sandbox sees it: a client that answers, or one clear error.

The Docker SDK (`docker`, docker-py) is imported inside the functions that use it: `vb --help`
and every command that runs no sandbox never load it. Only the `storage.sandbox` modules may
import it (an import-linter contract says so). Errors the SDK raises (or the `requests` it is
built on, for a daemon that stopped answering) become `SandboxError`: one true line and a hint.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from vault_brain.domain.errors import VaultBrainError

DEFAULT_SOCKET = "/var/run/docker.sock"
API_TIMEOUT = 30.0  # seconds any one API call may take before vb gives up on the daemon
PING_TIMEOUT = 10.0  # seconds the first contact (version, ping) may take: a hung daemon
START_HINT = "start it: sudo systemctl start docker (or sudo dockerd &)"

T = TypeVar("T")


class SandboxError(VaultBrainError):
    """Docker, the sandbox image or the sandbox container failed in a way the user can act on
    (exit code 1, like every error whose message explains it)."""

    code = "sandbox"


class EngineGone(SandboxError):
    """The Docker daemon stopped answering while vb was using it (stopped, crashed or hung):
    the containers it ran are gone or unreachable too."""

    code = "docker_gone"


class WorkspaceError(SandboxError):
    """A workspace tool was used wrongly (no such file, a path leaving /workspace): the agent's
    mistake, to report back to it as the tool's result; the sandbox itself is fine."""

    code = "workspace"


def one_line(text: object, limit: int = 200) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def docker_client() -> Any:
    """A Docker SDK client whose daemon answered a ping, or a `SandboxError` saying which of
    SDK missing, Docker not installed, not running or not permitted it is, and what to do."""
    try:
        import docker
        from docker.errors import DockerException
    except ImportError:
        raise SandboxError(
            "the Docker SDK for Python is not installed",
            hint="install vb's dependencies again (pip install 'docker>=7.1')",
        ) from None
    try:  # a daemon that accepts and never answers is given PING_TIMEOUT, not API_TIMEOUT
        client = docker.from_env(timeout=int(PING_TIMEOUT))
        client.ping()
    except DockerException as exc:
        raise _engine_error(os.environ.get("DOCKER_HOST", ""), exc) from None
    except Exception as exc:  # requests' ConnectionError, ReadTimeout...: no daemon answered
        raise _engine_error(os.environ.get("DOCKER_HOST", ""), exc) from None
    client.api.timeout = int(API_TIMEOUT)
    return client


def _engine_error(host: str, exc: BaseException) -> SandboxError:
    """Why the engine at `host` (DOCKER_HOST, empty for the default socket) did not answer,
    found by connecting to its socket ourselves: the SDK's own message is a chain of wrappers."""
    if host and not host.startswith("unix://"):
        return SandboxError(
            f"cannot reach Docker at {host} ({one_line(exc, 120)})",
            hint="check DOCKER_HOST, or unset it to use the local engine; " + START_HINT,
        )
    path = host.removeprefix("unix://") or DEFAULT_SOCKET
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(5)
    try:
        probe.connect(path)
    except FileNotFoundError:
        if not host and not _docker_installed():
            return SandboxError(
                "Docker is not installed (no docker or dockerd on PATH)",
                hint="install it: sudo apt-get install docker.io (or Docker Desktop), then "
                + START_HINT.removeprefix("start it: "),
            )
        return SandboxError(f"Docker is not running (no socket at {path})", hint=START_HINT)
    except ConnectionRefusedError:
        return SandboxError(f"Docker is not running (nothing listens on {path})", hint=START_HINT)
    except PermissionError:
        return SandboxError(
            f"no permission to use Docker ({path})",
            hint="add yourself to the docker group (sudo usermod -aG docker $USER) and log in "
            "again, or run vb as root",
        )
    except OSError as err:
        return SandboxError(
            f"cannot reach Docker at {path} ({one_line(err, 120)})", hint=START_HINT
        )
    finally:
        probe.close()
    return SandboxError(
        f"Docker at {path} accepts connections but did not answer ({_cause(exc)})",
        hint="check `docker info`; restart the daemon if it hangs (sudo systemctl restart docker)",
    )


def _cause(exc: BaseException) -> str:
    """A few words for what the SDK, requests or urllib3 raised: a read that timed out is
    said so (their own text is a chain of wrappers)."""
    timed_out = isinstance(exc, TimeoutError) or "timeout" in type(exc).__name__.lower()
    if timed_out or "read timed out" in str(exc).lower():
        return "no answer in time"
    return one_line(exc, 100)


def _docker_installed() -> bool:
    from shutil import which

    return bool(which("dockerd") or which("docker"))


@contextmanager
def docker_errors(action: str, hint: str = "check `docker info`") -> Iterator[None]:
    """Turn what the SDK raises while `action` runs into a `SandboxError`; a daemon that
    stopped answering is an `EngineGone` saying what became of it (the socket of the engine
    `docker_client` reached, DOCKER_HOST's, probed: not there, refusing, or not answering)."""
    from docker.errors import APIError, DockerException
    from urllib3.exceptions import HTTPError

    try:
        yield
    except SandboxError:
        raise
    except APIError as exc:
        explanation = exc.explanation or str(exc)
        raise SandboxError(f"{action} failed: {one_line(explanation, 160)}", hint=hint) from None
    except DockerException as exc:
        raise SandboxError(f"{action} failed: {one_line(exc, 160)}", hint=hint) from None
    except (OSError, HTTPError) as exc:  # requests' and urllib3's: the daemon went away
        why = _engine_error(os.environ.get("DOCKER_HOST", ""), exc)  # (docker_client's)
        raise EngineGone(
            f"lost contact with Docker while {action}: {why.message}", hint=why.hint
        ) from None


def call(action: str, fn: Callable[[], T], hint: str = "check `docker info`") -> T:
    """`fn()` with its Docker errors translated (see `docker_errors`)."""
    with docker_errors(action, hint):
        return fn()
