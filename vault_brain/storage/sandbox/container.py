"""`vb session`'s sandbox: one hardened container per session; the agent's workspace tools run in
it through `docker exec`.

The container sleeps (`sleep infinity` under docker-init, which reaps what the tools leave) with
no network, every capability dropped, no-new-privileges, a read-only root and a small tmpfs at
/tmp, pids and memory limits, the workspace bind-mounted read-write at /workspace and, read-only
at /vault, not the vault but the session's view of it (`sandbox.view`: copies of the notes it
may read and MEMORY.md; never transcripts, git, vb's state, logs or private notes), which
`refresh_view()` brings up to date before each turn. Its environment is HOME=/tmp and what the
image sets: nothing of the host's, so no key, token or VB_* variable. It runs as the host
user's uid:gid, so the files it writes in the workspace are that user's; when vb runs as root
it never runs the container as root: it uses the workspace owner's uid:gid, or 1000:1000
(`agent`) for a workspace root owns (mounts and user: `sandbox.mounts`).

Every command runs under coreutils `timeout` inside the container (TERM to its whole process
group at the deadline, KILL 2 s later) and vb reads its output with a deadline of its own, so
nothing waits forever. The file tools are a small Python program run with the image's python3:
paths resolve (symlinks included) inside the container and must stay under /workspace.
Images (`ensure_image`) are `sandbox.build`'s business, errors and the client `sandbox.engine`'s;
both are re-exported here.
"""

from __future__ import annotations

import posixpath
import re
import socket
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from vault_brain.storage.sandbox.engine import (
    SandboxError,
    WorkspaceError,
    docker_errors,
    one_line,
)
from vault_brain.storage.sandbox.exec import (
    FILE_ERRORS,
    FILE_TOOL,
    GATE,
    Frames,
    Output,
    container_pid,
    hang_up,
    raw_socket,
    received,
)
from vault_brain.storage.sandbox.mounts import (
    WORKSPACE,
    check_folders,
    prepare_workspace,
    session_mounts,
)

if TYPE_CHECKING:
    from vault_brain.storage.sandbox.view import Refreshed, VaultView


TMPFS = "rw,nosuid,nodev,size=128m,mode=1777"
OUTPUT_CAP = 64 * 1024
TRUNCATED = "[... truncated]"
LIST_CAP = 1024 * 1024  # bytes of names list_dir returns (then "[... truncated]")
DRAIN_LIMIT = 16 * 1024 * 1024  # bytes past the cap vb reads (and drops) before it hangs up
KILLED = 128 + 9  # the exit code vb reports for a command it killed
KILL_GRACE = 2  # seconds between TERM and KILL for a command past its timeout
HOST_SLACK = 5.0  # seconds vb waits past timeout + grace before it stops listening
LABEL_VAULT = "vb.vault"
LABEL_SESSION = "vb.session"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")


@dataclass(frozen=True)
class ExecResult:
    """A command's exit code (-1: unknown, vb stopped waiting), its stdout and stderr as they
    came (capped, ending in "[... truncated]" when cut) and whether its timeout killed it."""

    exit_code: int
    output: str
    timed_out: bool


class Sandbox:
    """One session's running container; `Sandbox.start(...)` makes it, `remove()` ends it."""

    def __init__(
        self, client: Any, container_id: str, *, name: str, session: str, user: str,
        view: VaultView | None = None,
    ) -> None:  # fmt: skip
        self.client = client
        self.id = container_id
        self.name = name
        self.session = session
        self.user = user
        self.view = view

    # ------------------------------------------------------------------ life cycle
    @classmethod
    def start(
        cls,
        client: Any,
        image: str,
        *,
        workspace: Path,
        vault: Path,
        session: str,
        memory: str = "512m",
        pids: int = 256,
        policy_rw: bool = False,
        command: list[str] | None = None,
        environment: dict[str, str] | None = None,
        read_only: dict[str, Path] | None = None,
        private_paths: tuple[str, ...] = (),
    ) -> Sandbox:
        """A detached, hardened container `vb-session-<session>` of `image` (see the module),
        the session's view of `vault` at /vault. With `policy_rw`, the vault's policy/
        (created if absent) is mounted read-write at /vault/policy over the read-only view:
        the agent may edit the lifecycle rules.
        `command` runs instead of `sleep infinity`, `environment` is added to HOME=/tmp, and
        the host folders in `read_only` are bind-mounted read-only (container path: folder).
        `private_paths` (STRATEGY.md's): notes the view never holds."""
        from docker.types import Mount

        from vault_brain.storage.sandbox.view import VaultView

        if not _NAME.fullmatch(session):
            raise SandboxError(
                f"invalid session id {session!r} for a container name",
                hint="use letters, digits, '.', '_' or '-'",
            )
        workspace, vault = check_folders(workspace, vault)
        user = prepare_workspace(workspace)
        name = f"vb-session-{session}"
        view = VaultView.create(
            vault, session, mount_points=["policy"] if policy_rw else [], fill=False,
            private_paths=private_paths,
        )  # fmt: skip
        box: Sandbox | None = None
        try:
            mounts = session_mounts(workspace, view, user, policy_rw, read_only or {})
            with view.filling():  # (while the container starts)
                box = cls._create(
                    client, image, name=name, session=session, user=user, view=view,
                    command=command, environment=environment, memory=memory, pids=pids,
                    mounts=[
                        Mount(at, src, type="bind", read_only=ro) for at, src, ro in mounts
                    ],
                )  # fmt: skip
        except BaseException:
            if box is not None:  # (the fill failed)
                box.remove()
            view.remove()
            raise
        return box

    @classmethod
    def _create(
        cls, client: Any, image: str, *, name: str, session: str, user: str, view: VaultView,
        command: list[str] | None, environment: dict[str, str] | None, memory: str, pids: int,
        mounts: list[Any],
    ) -> Sandbox:  # fmt: skip
        from docker.errors import APIError, ImageNotFound

        with docker_errors(f"starting the sandbox container {name}"):
            try:
                container = client.containers.create(
                    image,
                    command or ["sleep", "infinity"],
                    name=name,
                    hostname="sandbox",
                    user=user,
                    working_dir=WORKSPACE,
                    environment={**(environment or {}), "HOME": "/tmp"},
                    labels={LABEL_VAULT: str(view.vault), LABEL_SESSION: session},
                    network_mode="none",
                    cap_drop=["ALL"],
                    security_opt=["no-new-privileges"],
                    read_only=True,
                    tmpfs={"/tmp": TMPFS},
                    pids_limit=pids,
                    mem_limit=memory,
                    memswap_limit=memory,
                    init=True,
                    mounts=mounts,
                )
            except ImageNotFound:
                raise SandboxError(
                    f"no sandbox image {image}", hint="build it: vb session --build"
                ) from None
            except APIError as exc:
                if exc.status_code == 409:
                    raise SandboxError(
                        f"a container named {name} already exists",
                        hint=f"remove it: docker rm -f {name}",
                    ) from None
                raise
            try:
                container.start()
            except BaseException:
                remove_container(client, container.id)
                raise
        return cls(client, container.id, name=name, session=session, user=user, view=view)

    def alive(self) -> bool:
        try:
            return bool(self.client.api.inspect_container(self.id)["State"]["Running"])
        except Exception:
            return False

    def check(self) -> None:
        """`SandboxError` saying so if the container stopped or is gone."""
        self.raise_if_broken("the sandbox container")

    def refresh_view(self) -> Refreshed | None:
        """The view at /vault brought up to date with the vault (before each turn). A view
        that could not be made right is a `WorkspaceError`: what asked for it does not run
        (the session goes on)."""
        if self.view is None:
            return None
        try:
            return self.view.refresh()
        except OSError as exc:
            raise WorkspaceError(
                f"could not update the sandbox's view of the vault (/vault): {one_line(exc, 120)}",
                hint=f"check the free space and permissions of {self.view.home.parent}",
            ) from None

    def remove(self) -> None:
        """Stop and delete the container (one already gone is fine), then its view."""
        try:
            remove_container(self.client, self.id)
        finally:
            self.remove_view()

    def remove_view(self) -> None:
        """Delete the view's copies (also when Docker is away and the container stays)."""
        if self.view is not None:
            self.view.remove()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.remove()

    # ------------------------------------------------------------------ commands
    def exec(
        self,
        argv: list[str],
        *,
        timeout: float = 60.0,
        stdin: bytes | None = None,
        workdir: str = WORKSPACE,
        max_output: int = OUTPUT_CAP,
    ) -> ExecResult:
        """Run `argv` in the container; its output (stdout and stderr merged) capped at
        `max_output` bytes; past `timeout` seconds it is killed, process group and all."""
        code, data, cut, timed_out = self._run(argv, timeout, stdin, workdir, max_output)
        text = data.decode("utf-8", errors="replace")
        if cut:
            text += ("" if text.endswith("\n") else "\n") + TRUNCATED
        return ExecResult(code, text, timed_out)

    def run_shell(self, command: str, timeout: float = 60.0) -> ExecResult:
        """`sh -c command` in /workspace."""
        return self.exec(["sh", "-c", command], timeout=timeout)

    def stream(
        self, argv: list[str], *, timeout: float, environment: dict[str, str] | None = None
    ) -> Streamed:
        """`argv` in /workspace, its stdout read line by line as it runs (`Streamed.lines`)."""

        return Streamed(self, argv, timeout, environment)

    def read_file(self, path: str, limit: int = 256_000) -> str:
        """The text of a workspace file (at most `limit` bytes, then "[... truncated]")."""
        _, data, _, _ = self._file_tool("read", path, limit=limit)
        if len(data) > limit:
            return data[:limit].decode("utf-8", errors="replace") + "\n" + TRUNCATED
        return data.decode("utf-8", errors="replace")

    def write_file(self, path: str, text: str) -> None:
        """Write `text` (UTF-8) to a workspace file, creating its folders."""
        self._file_tool("write", path, stdin=text.encode("utf-8"))

    def list_dir(self, path: str = ".") -> list[str]:
        """The names in a workspace folder, sorted; folders end with "/"."""
        _, data, cut, _ = self._file_tool("list", path)
        names = data.decode("utf-8", errors="replace").split("\0") if data else []
        return [*names[:-1], TRUNCATED] if cut else names

    def _file_tool(
        self, op: str, path: str, *, limit: int = 0, stdin: bytes | None = None
    ) -> tuple[int, bytes, bool, bool]:
        shown = path or "."
        inside = posixpath.normpath(posixpath.join(WORKSPACE, path or "."))
        if inside != WORKSPACE and not inside.startswith(WORKSPACE + "/"):
            raise WorkspaceError(
                FILE_ERRORS[3].format(path=shown), hint="use a path inside the workspace"
            )
        argv = ["python3", "-I", "-S", "-c", FILE_TOOL, op, inside, str(limit)]
        result = self._run(argv, 60.0, stdin, WORKSPACE, limit + 1 if op == "read" else LIST_CAP)
        code, data, _, timed_out = result
        if timed_out or code == -1:
            raise WorkspaceError(f"the {op} of {shown} took over 60 s", hint="try a smaller file")
        if code in FILE_ERRORS:
            raise WorkspaceError(FILE_ERRORS[code].format(path=shown))
        if code != 0:
            detail = one_line(data.decode("utf-8", errors="replace"), 160) or f"exit {code}"
            raise WorkspaceError(f"cannot {op} {shown}: {detail}")
        return result

    def start_exec(
        self, argv: list[str], timeout: float, **options: Any
    ) -> tuple[str, Any, socket.socket, float]:
        """`argv` under `timeout` (and `timeout -k`), behind the start gate (`GATE`: the caller
        opens it): its exec id, its connection, the raw socket and when it started."""
        command = [*GATE, "timeout", "-k", str(KILL_GRACE), f"{max(timeout, 0.001):.3f}", *argv]
        with self.errors_as("running a command in the sandbox"):
            exec_id = self.client.api.exec_create(self.id, command, stdin=True, **options)["Id"]
            conn = self.client.api.exec_start(exec_id, socket=True)
        return exec_id, conn, raw_socket(conn), time.monotonic()

    def _run(
        self, argv: list[str], timeout: float, stdin: bytes | None, workdir: str, cap: int
    ) -> tuple[int, bytes, bool, bool]:
        """(exit code, output, cut, timed out) of `argv` under `timeout` in the container."""
        if not argv:
            raise ValueError("an empty command")
        exec_id, conn, sock, started = self.start_exec(argv, timeout, workdir=workdir)
        deadline = started + timeout + KILL_GRACE + HOST_SLACK
        output = Output(cap)
        hung_up = False
        try:
            for chunk in received(sock, stdin, deadline):
                output.feed(chunk)
                if output.seen > cap + DRAIN_LIMIT:
                    hung_up = True  # a flood: the command's own timeout ends it
                    break
        except TimeoutError:
            hung_up = True
        except OSError as exc:
            hang_up(conn, sock)
            self.raise_if_broken(f"lost the output of a command ({one_line(exc, 80)})")
            hung_up = True
        finally:
            hang_up(conn, sock)
        code = self.ended(exec_id, hung_up)
        elapsed = time.monotonic() - started
        timed_out = (code in (124, KILLED) and elapsed >= timeout) or (
            code == -1 and not output.cut
        )
        return code, bytes(output.kept), output.cut, timed_out

    def ended(self, exec_id: str, hung_up: bool) -> int:
        """The exit code of an exec vb read to its end, or of one it stopped listening to
        (`hung_up`: killed with its process group, KILLED, unless it had ended already)."""
        if hung_up and self.kill_exec(exec_id):
            return KILLED
        return self.exit_code_of(exec_id, wait=2.0)

    def kill_exec(self, exec_id: str) -> bool:
        """Kill an exec vb stopped listening to (an output flood, or its timeout did not end
        it), with its process group: `timeout` leads one. Its pid in the container comes from
        the host's /proc (NSpid); an engine on another machine leaves it to `timeout`. False
        when it had ended already or could not be reached."""
        with self.errors_as("stopping a command in the sandbox"):
            state = self.client.api.exec_inspect(exec_id)
        pid = container_pid(state.get("Pid") or 0) if state.get("Running") else None
        if pid is None:
            return False
        with self.errors_as("stopping a command in the sandbox"):
            kill = self.client.api.exec_create(self.id, ["sh", "-c", f"kill -KILL -{pid}"])
            self.client.api.exec_start(kill["Id"])
        return True

    def exit_code_of(self, exec_id: str, wait: float) -> int:
        """The exec's exit code once it is over (its stream can end a moment before); -1 when
        it still runs after `wait` seconds."""
        end = time.monotonic() + wait
        while True:
            with self.errors_as("reading a command's exit code"):
                state = self.client.api.exec_inspect(exec_id)
            if not state.get("Running") and state.get("ExitCode") is not None:
                return int(state["ExitCode"])
            if time.monotonic() >= end:
                return -1
            time.sleep(0.01)

    # ------------------------------------------------------------------ errors
    def errors_as(self, action: str) -> AbstractContextManager[None]:
        """`docker_errors` for `action`, but a container that stopped or vanished is said so."""
        return _container_errors(self, action)

    def raise_if_broken(self, fallback: str) -> None:
        """A SandboxError saying what happened to the container, if anything did."""
        from docker.errors import NotFound

        with docker_errors("checking the sandbox container"):
            try:
                state = self.client.api.inspect_container(self.id)["State"]
            except NotFound:
                raise SandboxError(
                    f"the sandbox container {self.name} is gone (removed outside vb)",
                    hint="start a new session",
                ) from None
        if state.get("Running"):
            return
        if state.get("OOMKilled"):
            raise SandboxError(
                f"the sandbox container {self.name} was killed: out of memory",
                hint="start a new session (vb session --memory for a larger limit)",
            )
        raise SandboxError(
            f"the sandbox container {self.name} stopped (exit code {state.get('ExitCode')})",
            hint="start a new session",
        )


@contextmanager
def _container_errors(sandbox: Sandbox, action: str) -> Iterator[None]:
    """Docker errors become SandboxError; a stopped or removed container (the usual cause of a
    failing exec) is named as such rather than as the API's 409 or 404."""
    from docker.errors import APIError

    with docker_errors(action):
        try:
            yield
        except APIError as exc:
            if exc.status_code in (404, 409):
                sandbox.raise_if_broken(action)
            raise


def leftovers(client: Any, vault: Path) -> list[tuple[str, str]]:
    """(container id, session id) of every container labelled for this vault, running or not,
    oldest first: sessions a crashed host left behind."""
    label = f"{LABEL_VAULT}={vault.resolve()}"
    with docker_errors("listing the sandbox containers"):
        found = client.api.containers(all=True, filters={"label": label})
    found.sort(key=lambda item: item.get("Created", 0))
    return [(item["Id"], (item.get("Labels") or {}).get(LABEL_SESSION, "")) for item in found]


def remove_container(client: Any, container_id: str) -> None:
    """Kill and delete a container; one already gone (or going) is not an error."""
    from docker.errors import APIError, NotFound

    with docker_errors(f"removing the sandbox container {container_id[:12]}"):
        try:
            client.api.remove_container(container_id, force=True)
        except NotFound:
            pass
        except APIError as exc:
            if exc.status_code != 409:  # 409: its removal is already in progress
                raise


# -- a command whose output is read as it comes (`Sandbox.stream`) ---------------------------
STDERR = 2
STDERR_KEPT = 8192
SETTLE = 2.0  # seconds a killed container may take to be seen as stopped
LINE_CAP = 4 * 1024 * 1024  # one event longer than this is cut (and so not valid JSON)


class Streamed:
    """`lines()` yields stdout's lines as they come; then `exit_code` (-1: unknown, vb stopped
    waiting), `timed_out` and `stderr` say how it ended. A container that stopped or vanished
    under the command raises `SandboxError` (as `Sandbox.exec` does)."""

    def __init__(
        self,
        sandbox: Sandbox,
        argv: list[str],
        timeout: float,
        environment: dict[str, str] | None = None,
    ) -> None:
        self.sandbox, self.argv, self.timeout = sandbox, argv, timeout
        self.environment = environment
        self.exit_code = -1
        self.timed_out = False
        self.stderr = ""

    def lines(self) -> Iterator[str]:
        exec_id, conn, sock, started = self.sandbox.start_exec(
            self.argv, self.timeout, environment=self.environment
        )
        deadline = started + self.timeout + KILL_GRACE + HOST_SLACK
        frames = _Lines()
        hung_up = False
        try:
            for chunk in received(sock, None, deadline):
                yield from frames.feed(chunk)
            if frames.partial:
                yield frames.partial.decode("utf-8", errors="replace")
        except TimeoutError:
            hung_up = True
        except OSError:
            hang_up(conn, sock)
            self.sandbox.raise_if_broken("lost the output of a command")
            hung_up = True
        finally:
            hang_up(conn, sock)
            self.stderr = frames.errors.decode("utf-8", errors="replace")
        self.exit_code = self.sandbox.ended(exec_id, hung_up)
        elapsed = time.monotonic() - started
        self.timed_out = self.exit_code in (124, KILLED) and elapsed >= self.timeout
        if self.exit_code != 0:  # the container itself may be what ended it
            self._check_container()

    def _check_container(self) -> None:
        """`SandboxError` if the container stopped; a command killed by a signal (as when the
        container is killed: its state changes a moment after) gets SETTLE seconds to show it."""
        killed = self.exit_code in (-1, KILLED, 128 + 15)
        deadline = time.monotonic() + (SETTLE if killed else 0.0)
        while True:
            self.sandbox.raise_if_broken("a command ended")
            if time.monotonic() >= deadline:
                return
            time.sleep(0.1)


class _Lines(Frames):
    """The exec stream's frames: stdout cut into lines, stderr's tail kept."""

    def __init__(self) -> None:
        super().__init__()
        self.partial = bytearray()
        self.errors = bytearray()

    def feed(self, data: bytes) -> Iterator[str]:
        for stream, payload in self.split(data):
            if stream == STDERR:
                self.errors = (self.errors + payload)[-STDERR_KEPT:]
                continue
            self.partial += payload
            while (end := self.partial.find(b"\n")) >= 0:
                line = bytes(self.partial[:end])
                del self.partial[: end + 1]
                yield line.decode("utf-8", errors="replace")
            if len(self.partial) > LINE_CAP:
                yield self.partial[:LINE_CAP].decode("utf-8", errors="replace")
                self.partial.clear()
