"""`vb session`'s sandbox against a real Docker engine: the hardening checked from inside the
container, the workspace tools, timeouts and output caps, leftovers, the content-tagged image,
and the one-line errors when Docker cannot be reached. Skipped without Docker, except in CI."""

from __future__ import annotations

import os
import re
import socket
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from vault_brain.storage.sandbox.build import BASE_TAG, DOCKERFILE, ensure_image, image_tag
from vault_brain.storage.sandbox.container import TRUNCATED, Sandbox, leftovers, remove_container
from vault_brain.storage.sandbox.engine import SandboxError, WorkspaceError, docker_client
from vault_brain.storage.sandbox.mounts import container_user

pytestmark = pytest.mark.docker

CANARY = "sk-test-canary-" + uuid.uuid4().hex


def folders(root: Path) -> tuple[Path, Path]:
    workspace, vault = root / "workspace", root / "vault"
    workspace.mkdir(parents=True)
    (vault / "notes").mkdir(parents=True)
    (vault / "notes" / "tea.md").write_text("green tea at 80 degrees\n")
    # writable by anyone: only the read-only mount may stop a write from inside
    for path in (vault, vault / "notes", vault / "notes" / "tea.md"):
        path.chmod(0o777 if path.is_dir() else 0o666)
    return workspace, vault


def start(client: Any, image: str, root: Path, session: str | None = None) -> Sandbox:
    workspace, vault = folders(root)
    return Sandbox.start(
        client,
        image,
        workspace=workspace,
        vault=vault,
        session=session or f"test-{uuid.uuid4().hex[:8]}",
    )


@pytest.fixture(scope="module")
def sandbox(
    docker_engine: Any, sandbox_image: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Sandbox]:
    """One sandbox for the tests that only look (started with a canary key in vb's own
    environment, which must not reach the container)."""
    saved = {name: os.environ.get(name) for name in ("OPENAI_API_KEY", "VB_LLM_API_KEY")}
    os.environ.update({"OPENAI_API_KEY": CANARY, "VB_LLM_API_KEY": CANARY})
    try:
        box = start(docker_engine, sandbox_image, tmp_path_factory.mktemp("sandbox"))
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    yield box
    box.remove()


# ---------------------------------------------------------------- hardening, seen from inside


def test_the_container_cannot_reach_the_network(sandbox: Sandbox) -> None:
    probe = (
        "import socket\n"
        "try:\n"
        "    socket.create_connection(('1.1.1.1', 53), 3)\n"
        "    print('connected')\n"
        "except OSError as exc:\n"
        "    print('refused', exc.errno)\n"
    )
    result = sandbox.exec(["python3", "-c", probe])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("refused"), result.output
    interfaces = sandbox.run_shell("ls /sys/class/net").output.split()
    assert interfaces == ["lo"]


def test_no_capabilities_no_new_privileges_and_not_root(sandbox: Sandbox) -> None:
    status = sandbox.run_shell("cat /proc/self/status").output
    fields = dict(re.findall(r"^(\w+):\s+(\S+)", status, flags=re.MULTILINE))
    assert fields["CapEff"] == "0" * 16
    assert fields["CapPrm"] == "0" * 16
    assert fields["CapBnd"] == "0" * 16
    assert fields["NoNewPrivs"] == "1"
    uid = sandbox.run_shell("id -u").output.strip()
    assert uid != "0" and uid == sandbox.user.split(":")[0]


def test_the_root_filesystem_and_the_vault_are_read_only(sandbox: Sandbox) -> None:
    for target in ("/etc/vb-test", "/usr/vb-test", "/vault/vb-test", "/vault/notes/tea.md"):
        result = sandbox.run_shell(f"echo x >> {target}")
        assert result.exit_code != 0, target
        assert "Read-only file system" in result.output, result.output
    assert sandbox.run_shell("cat /vault/notes/tea.md").output == "green tea at 80 degrees\n"
    assert sandbox.run_shell("echo x > /tmp/scratch && cat /tmp/scratch").output == "x\n"


def test_policy_rw_mounts_policy_read_write_and_nothing_else(
    docker_engine: Any, sandbox_image: str, tmp_path: Path
) -> None:
    workspace, vault = folders(tmp_path)
    (vault / ".vb").mkdir(mode=0o777)
    (vault / ".vb").chmod(0o777)
    box = Sandbox.start(
        docker_engine,
        sandbox_image,
        workspace=workspace,
        vault=vault,
        session=f"test-{uuid.uuid4().hex[:8]}",
        policy_rw=True,
    )
    try:
        wrote = box.run_shell("printf 'prune: \"True\"\\n' > /vault/policy/rules.yaml")
        assert wrote.exit_code == 0, wrote.output
        assert (vault / "policy" / "rules.yaml").read_text() == 'prune: "True"\n'
        for target in ("/vault/other", "/vault/notes/tea.md"):
            result = box.run_shell(f"echo x >> {target}")
            assert result.exit_code != 0, target
            assert "Read-only file system" in result.output, result.output
        assert "No such file" in box.run_shell("ls /vault/.vb").output  # not in the view
    finally:
        box.remove()
    assert not (vault / "other").exists() and not (vault / ".vb" / "policy-approved.json").exists()


def test_limits_are_set_and_memory_is_enforced(sandbox: Sandbox) -> None:
    host = sandbox.client.api.inspect_container(sandbox.id)["HostConfig"]
    assert host["Memory"] == 512 * 1024 * 1024 and host["PidsLimit"] == 256
    assert host["NetworkMode"] == "none" and host["ReadonlyRootfs"] is True
    assert "size=128m" in host["Tmpfs"]["/tmp"]
    hog = sandbox.exec(["python3", "-c", "bytearray(700 << 20)"], timeout=30)
    assert hog.exit_code != 0 and not hog.timed_out
    assert sandbox.alive()


def test_no_key_token_or_vb_variable_exists_inside(sandbox: Sandbox) -> None:
    """vb's process had OPENAI_API_KEY and VB_LLM_API_KEY set when it started the container."""
    env = sandbox.run_shell("env").output
    names = [line.split("=", 1)[0] for line in env.splitlines() if "=" in line]
    assert names and not [n for n in names if re.search("KEY|TOKEN|SECRET|^VB_", n, re.I)]
    environs = sandbox.run_shell("cat /proc/1/environ /proc/self/environ | tr '\\0' '\\n'")
    assert environs.exit_code == 0 and "HOME=/tmp" in environs.output
    needle = CANARY[:8] + "[" + CANARY[8] + "]" + CANARY[9:]  # the grep itself must not match
    found = sandbox.run_shell(
        f"grep -rls --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev '{needle}' /; "
        f"cat /proc/[0-9]*/environ | grep -c '{needle}'",
        timeout=120,
    )
    assert found.output.strip() == "0", found.output


# ---------------------------------------------------------------- workspace tools


def test_files_written_inside_are_the_host_users_and_listed(sandbox: Sandbox) -> None:
    sandbox.write_file("src/app/main.py", "print('héllo')\n")
    mounts = {
        m["Destination"]: m for m in sandbox.client.api.inspect_container(sandbox.id)["Mounts"]
    }
    host_file = Path(mounts["/workspace"]["Source"]) / "src" / "app" / "main.py"
    assert host_file.read_text(encoding="utf-8") == "print('héllo')\n"
    owner = host_file.stat().st_uid
    assert owner == (os.getuid() if os.getuid() != 0 else int(sandbox.user.split(":")[0]))
    assert sandbox.read_file("src/app/main.py") == "print('héllo')\n"
    assert sandbox.list_dir("src") == ["app/"]
    assert "src/" in sandbox.list_dir()
    sandbox.run_shell("mkdir many && cd many && seq -f 'file-%05g.txt' 1 3000 | xargs touch")
    assert len(sandbox.list_dir("many")) == 3000
    ran = sandbox.run_shell("python3 src/app/main.py")
    assert (ran.exit_code, ran.output, ran.timed_out) == (0, "héllo\n", False)


def test_paths_leaving_the_workspace_are_refused(sandbox: Sandbox, tmp_path: Path) -> None:
    sandbox.run_shell("ln -sfn /etc etc-link && ln -sfn /vault vault-link")
    for path in ("../etc/passwd", "/etc/passwd", "a/../../vault/notes/tea.md", "etc-link/passwd"):
        with pytest.raises(WorkspaceError, match="outside /workspace"):
            sandbox.read_file(path)
    with pytest.raises(WorkspaceError, match="outside /workspace"):
        sandbox.write_file("vault-link/notes/new.md", "x")
    with pytest.raises(WorkspaceError, match="outside /workspace"):
        sandbox.list_dir("..")
    with pytest.raises(WorkspaceError, match="no such file"):
        sandbox.read_file("missing.txt")
    sandbox.write_file("inside.txt", "fine")
    assert sandbox.read_file("/workspace/inside.txt") == "fine"


def test_exit_code_stderr_and_stdin(sandbox: Sandbox) -> None:
    result = sandbox.run_shell("echo out; echo err >&2; exit 3")
    assert result.exit_code == 3 and sorted(result.output.split()) == ["err", "out"]
    assert sandbox.exec(["cat"], stdin=b"from stdin").output == "from stdin"


def test_no_output_is_lost_when_vb_reads_the_engines_reply_late(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Output the engine sends at once (stderr of a failing `ls`) is not lost when vb reads
    the engine's reply late, as on a loaded host: here busy threads hold the interpreter
    while `exec_start` waits for it (without the start gate most outputs came back empty)."""
    real = sandbox.client.api.exec_start

    def late(*args: Any, **kwargs: Any) -> Any:
        stop = threading.Event()
        interval = sys.getswitchinterval()
        sys.setswitchinterval(0.05)  # each busy thread holds the interpreter 50 ms at a time
        busy = [threading.Thread(target=_spin, args=(stop,), daemon=True) for _ in range(2)]
        for thread in busy:
            thread.start()
        try:
            return real(*args, **kwargs)
        finally:
            stop.set()
            for thread in busy:
                thread.join()
            sys.setswitchinterval(interval)

    monkeypatch.setattr(sandbox.client.api, "exec_start", late)
    outputs = [sandbox.run_shell("ls /nonexistent").output for _ in range(6)]
    assert [o for o in outputs if "No such file" not in o] == []
    assert sandbox.exec(["cat"]).output == ""  # (no stdin given: the command sees its end)


def _spin(stop: threading.Event) -> None:
    while not stop.is_set():
        pass


def test_a_command_past_its_timeout_is_killed_with_its_children(sandbox: Sandbox) -> None:
    began = time.monotonic()
    result = sandbox.run_shell("sleep 60 & trap '' TERM; sleep 61", timeout=1)
    assert result.timed_out and result.exit_code != 0
    assert time.monotonic() - began < 8
    left = sandbox.run_shell("cat /proc/[0-9]*/cmdline | tr '\\0' ' '").output
    assert "sleep 60" not in left and "sleep 61" not in left, left


def test_big_output_is_truncated(sandbox: Sandbox) -> None:
    result = sandbox.run_shell("seq 1 200000; echo done")  # 1.3 MB
    assert result.exit_code == 0 and not result.timed_out
    assert result.output.startswith("1\n2\n3\n") and result.output.endswith(TRUNCATED)
    assert len(result.output.encode()) <= 64 * 1024 + len(TRUNCATED) + 1
    flood = sandbox.exec(["yes"], timeout=30)  # never ends by itself: vb hangs up and kills it
    assert flood.output.endswith(TRUNCATED) and not flood.timed_out
    assert "yes" not in sandbox.run_shell("cat /proc/[0-9]*/cmdline | tr '\\0' ' '").output
    big = "x" * 300_000
    sandbox.write_file("big.txt", big)
    assert sandbox.read_file("big.txt", limit=1000) == "x" * 1000 + "\n" + TRUNCATED


# ---------------------------------------------------------------- life cycle


def test_leftovers_are_found_and_removed(
    docker_engine: Any, sandbox_image: str, tmp_path: Path
) -> None:
    box = start(docker_engine, sandbox_image, tmp_path / "a", session="left-1")
    other = start(docker_engine, sandbox_image, tmp_path / "b", session="left-2")
    try:
        vault = tmp_path / "a" / "vault"
        assert box.name == "vb-session-left-1" and box.alive()
        assert leftovers(docker_engine, vault) == [(box.id, "left-1")]
        remove_container(docker_engine, box.id)
        assert leftovers(docker_engine, vault) == []
        assert not box.alive()
        box.remove()  # already gone: fine
        remove_container(docker_engine, box.id)
        with pytest.raises(SandboxError, match="is gone"):
            box.run_shell("true")
        assert leftovers(docker_engine, tmp_path / "b" / "vault") == [(other.id, "left-2")]
    finally:
        box.remove()
        other.remove()


def test_a_workspace_overlapping_the_vault_is_refused(
    docker_engine: Any, sandbox_image: str, tmp_path: Path
) -> None:
    _, vault = folders(tmp_path)
    with pytest.raises(SandboxError, match="overlap"):
        Sandbox.start(
            docker_engine, sandbox_image, workspace=vault / "notes", vault=vault, session="x"
        )
    with pytest.raises(SandboxError, match="overlap"):
        Sandbox.start(docker_engine, sandbox_image, workspace=tmp_path, vault=vault, session="x")
    assert leftovers(docker_engine, vault) == []


def test_an_image_present_is_not_rebuilt(docker_engine: Any, sandbox_image: str) -> None:
    assert re.fullmatch(r"vb-sandbox:[0-9a-f]{12}", sandbox_image)
    began = time.monotonic()
    assert ensure_image(docker_engine) == sandbox_image
    assert time.monotonic() - began < 2
    base = docker_engine.images.get(BASE_TAG)
    assert sandbox_image == image_tag(DOCKERFILE.read_bytes(), base.id)
    assert image_tag(DOCKERFILE.read_bytes() + b"\n", base.id) != sandbox_image
    with pytest.raises(SandboxError, match="no local image named vb-nothing:here"):
        ensure_image(docker_engine, base="vb-nothing:here")


# ---------------------------------------------------------------- errors without an engine


def test_docker_client_names_a_socket_nobody_listens_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dead = tmp_path / "docker.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(dead))  # bound, never listening: connections are refused
    try:
        monkeypatch.setenv("DOCKER_HOST", f"unix://{dead}")
        with pytest.raises(SandboxError) as caught:
            docker_client()
        assert caught.value.message == f"Docker is not running (nothing listens on {dead})"
        assert caught.value.hint and "dockerd" in caught.value.hint
        monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path / 'none.sock'}")
        with pytest.raises(SandboxError, match=r"Docker is not running \(no socket at "):
            docker_client()
    finally:
        listener.close()


def test_the_container_user_is_never_root(tmp_path: Path) -> None:
    assert container_user(tmp_path, host_uid=1234, host_gid=99) == "1234:99"
    owner = tmp_path.stat()
    expected = f"{owner.st_uid}:{owner.st_gid}" if owner.st_uid else "1000:1000"
    assert container_user(tmp_path, host_uid=0, host_gid=0) == expected


def test_a_daemon_gone_mid_session_is_a_sandbox_error(tmp_path: Path) -> None:
    """Every call on a sandbox whose engine stopped answering fails at once with one line."""
    import docker

    gone = docker.DockerClient(base_url=f"unix://{tmp_path / 'gone.sock'}", version="1.41")
    box = Sandbox(gone, "0" * 64, name="vb-session-gone", session="gone", user="1000:1000")
    for call in (lambda: box.run_shell("true"), lambda: box.read_file("a.txt"), box.remove):
        with pytest.raises(SandboxError, match="lost contact with Docker") as caught:
            call()
        assert not isinstance(caught.value, WorkspaceError)
    assert not box.alive()
