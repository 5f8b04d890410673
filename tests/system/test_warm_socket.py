"""The warm path: a running `vb watch` answers `vb search` on a unix socket in `.vb/`, with
the same results and the same JSON and text output as the in-process search; every edit
made before a search is seen; a killed watcher's stale socket sends searches in-process
again, with the same answers. Real `vb watch` and `vb search` processes, real files."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import REPO, run_vb, stop_process, watching

sys.path.insert(0, str(REPO / "scripts"))
import gen_vault

SEARCHES = [
    ["search", "project alpha", "--json"],
    ["search", "manager", "-k", "5", "--json"],
    ["search", "meeting plan", "--type", "entity", "--json"],
    ["search", "design", "--category", "projects", "--json"],
    ["search", "design", "--tag", "topic/design", "--json"],
    ["search", "week retro", "--include-archive", "--scope", "global", "--json"],
    ["search", "project", "--in", "memory", "-k", "3", "--json"],
    ["search", "project manager", "--in", "all", "-k", "3", "--json"],
    ["search", "nothing-matches-this-word", "--json"],
    ["search", "project alpha"],  # the text table
    ["search", "meeting secret", "-k", "4", "--type", "episode"],
    ["search", "nothing-matches-this-word"],
]


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root: Path = gen_vault.generate(tmp_path_factory.mktemp("warm") / "v", notes=300, seed=3).root
    assert run_vb("--vault", str(root), "index").exit_code == 0
    return root


def outputs(root: Path) -> list[str]:
    found = []
    for args in SEARCHES:
        res = run_vb("--vault", str(root), *args)
        assert res.exit_code == 0, res.stderr
        found.append(res.stdout)
    return found


def warm(root: Path) -> dict[str, object]:
    report = json.loads(run_vb("--vault", str(root), "status", "--json").stdout)
    state: dict[str, object] = report["watcher"]["warm"]
    return state


@pytest.fixture
def watcher(generated: Path) -> Iterator[subprocess.Popen[str]]:
    with watching(generated) as proc:
        yield proc


def test_warm_and_in_process_print_the_same(
    generated: Path, watcher: subprocess.Popen[str]
) -> None:
    with_watcher = outputs(generated)
    assert warm(generated) == {
        "alive": True,
        "socket": str(generated / ".vb/search.sock"),
        "searches": len(SEARCHES),  # every one was answered warm
        "last_search": "warm",
    }
    stop_process(watcher)
    assert not (generated / ".vb/search.sock").exists()  # removed on exit
    assert warm(generated)["alive"] is False
    assert outputs(generated) == with_watcher
    assert warm(generated)["last_search"] == "in-process"
    assert any(json.loads(out)["results"] for out in with_watcher[:8])
    assert with_watcher[9].startswith("score") and with_watcher[-1] == "no results\n"


def test_socket_is_private_and_status_names_the_path(
    generated: Path, watcher: subprocess.Popen[str]
) -> None:
    mode = os.stat(generated / ".vb/search.sock").st_mode
    assert stat.S_ISSOCK(mode) and stat.S_IMODE(mode) == 0o600
    text = run_vb("--vault", str(generated), "status").stdout
    assert f"search:  warm: vb watch answers on {generated / '.vb/search.sock'}" in text
    run_vb("--vault", str(generated), "search", "manager")
    text = run_vb("--vault", str(generated), "status").stdout
    assert "; the last search was answered warm)" in text


def test_every_edit_is_seen_by_the_next_warm_search(tmp_path: Path) -> None:
    root = gen_vault.generate(tmp_path / "v", notes=50, seed=5).root
    note = root / "entities/projects/fresh-check.md"
    note.parent.mkdir(parents=True, exist_ok=True)
    with watching(root):
        for n in range(24):
            word = f"zqfresh{n}x"
            text = f"---\ntitle: Fresh check\n---\nThe word of round {n}: {word}.\n"
            if n % 2:  # an editor's atomic save
                tmp = note.with_name(f".{note.name}.tmp")
                tmp.write_text(text, encoding="utf-8")
                os.replace(tmp, note)
            else:  # a write in place
                with open(note, "w", encoding="utf-8") as fh:
                    fh.write(text)
            res = run_vb("--vault", str(root), "search", word, "--json")
            assert [h["path"] for h in json.loads(res.stdout)["results"]] == [
                "entities/projects/fresh-check.md"
            ], f"round {n}: {res.stdout} {res.stderr}"
        assert warm(root)["searches"] == 24


def test_a_killed_watchers_socket_falls_back_then_is_replaced(generated: Path) -> None:
    sock = generated / ".vb/search.sock"
    with watching(generated) as proc:
        warm_out = outputs(generated)[:3]
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=15)
    assert sock.exists() and warm(generated)["alive"] is False  # stale: nobody listens
    assert outputs(generated)[:3] == warm_out  # answered in-process, the same
    text = run_vb("--vault", str(generated), "status").stdout
    assert "search:  in-process" in text
    with watching(generated):  # a new watcher replaces the stale socket
        assert outputs(generated)[:3] == warm_out
        assert warm(generated) == {
            "alive": True,
            "socket": str(sock),
            "searches": len(SEARCHES),
            "last_search": "warm",
        }


def raw(path: Path, data: bytes) -> bytes:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(10)
        s.connect(str(path))
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        return s.recv(65536)


def test_a_bad_request_never_takes_the_watcher_down(generated: Path) -> None:
    sock = generated / ".vb/search.sock"
    with watching(generated) as proc:
        expected = outputs(generated)[0]
        for bad in [
            b"not json\n",
            b"[1, 2]\n",
            b'{"v": 99, "op": "search"}\n',
            b'{"v": 1, "op": "search", "vault": "/elsewhere", "query": "x", "k": 1}\n',
            b'{"v": 1, "op": "search", "vault": "%s", "query": 3, "k": 1}\n'
            % str(generated).encode(),
            b'{"v": 1, "op": "drop tables"}\n',
            b"",
        ]:
            answer = json.loads(raw(sock, bad))
            assert answer["ok"] is False and answer["v"] == 1
        assert proc.poll() is None
        time.sleep(2.2)  # (the status file is written every 2 s)
        status = json.loads((generated / ".vb/watch.json").read_text(encoding="utf-8"))
        assert status["last_error"]["error"].startswith("warm search: request not answered")
        assert outputs(generated)[0] == expected
        assert warm(generated)["searches"] == 2 * len(SEARCHES)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    assert err.count("warm search: request not answered") == 7


def test_a_session_search_runs_in_process(generated: Path) -> None:
    with watching(generated):
        res = run_vb("--vault", str(generated), "search", "manager", "--session", "s1")
        assert res.exit_code == 0, res.stderr
        assert warm(generated)["searches"] == 0
    assert (generated / "sessions/s1.jsonl").exists()  # the retrieval was recorded


ARGS = ["search", "manager", "--json"]


def test_a_warm_search_imports_nothing_heavy(generated: Path) -> None:
    with watching(generated):
        proc = subprocess.run(
            [
                sys.executable,
                "-X",
                "importtime",
                "-m",
                "vault_brain",
                "--vault",
                str(generated),
                *ARGS,
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 0 and json.loads(proc.stdout)["results"]
        assert warm(generated)["searches"] == 1
    loaded = {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if "|" in line}
    heavy = {"whoosh", "yaml", "ruamel", "frontmatter", "watchdog", "typer", "click"}
    heavy |= {"vault_brain.app.api", "vault_brain.interfaces.cli.app"}
    assert not {m for m in loaded if m.split(".")[0] in heavy or m in heavy}


def test_a_cold_plain_search_skips_the_framework_and_prints_the_same(generated: Path) -> None:
    """Without a watcher, a plain `vb search` runs in-process without importing typer, and
    prints byte for byte what the typer command prints (`--vault=PATH` is a spelling the
    early path does not read, so the command answers it)."""
    assert not (generated / ".vb/search.sock").exists()
    early = outputs(generated)
    framework = []
    for args in SEARCHES:
        res = run_vb(f"--vault={generated}", *args)
        assert res.exit_code == 0, res.stderr
        framework.append(res.stdout)
    assert early == framework
    assert warm(generated)["last_search"] == "in-process"
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "vault_brain", "--vault", str(generated), *ARGS],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0 and json.loads(proc.stdout)["results"]
    loaded = {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if "|" in line}
    assert "vault_brain.app.api" in loaded
    assert not {m for m in loaded if m.split(".")[0] in ("typer", "click")}
    # a search of memory alone leaves the knowledge index and its extraction rules unloaded
    assert not loaded & {"vault_brain.app.memory.sources", "vault_brain.domain.knowledge.extract"}


@pytest.mark.parametrize(
    "args",
    [
        ["search", "manager", "--type", "bogus"],
        ["search", "manager", "--in", "nowhere", "--json"],
        ["search", "manager", "--scope", "no such scope!"],
    ],
)
def test_a_cold_search_that_fails_says_what_the_command_says(
    generated: Path, args: list[str]
) -> None:
    early = run_vb("--vault", str(generated), *args)
    framework = run_vb(f"--vault={generated}", *args)
    assert early.exit_code == framework.exit_code != 0
    assert (early.stdout, early.stderr) == (framework.stdout, framework.stderr)
    assert "vb: error:" in early.stderr or '"error"' in early.stdout


def test_other_spellings_go_warm_through_the_command(generated: Path) -> None:
    """A command line the early path does not read (`--limit=3`, `-k3`) is still answered
    warm, by the typer command, the same as in-process."""
    spellings = [["search", "manager", "--limit=3", "--json"], ["search", "-k3", "manager"]]
    cold = [run_vb("--vault", str(generated), *args).stdout for args in spellings]
    with watching(generated):
        assert [run_vb("--vault", str(generated), *args).stdout for args in spellings] == cold
        assert warm(generated)["searches"] == 2


@pytest.mark.parametrize(
    "reply",
    [
        {"v": 2, "ok": True},  # another protocol version
        {"v": 1, "ok": True, "vault": "/another/vault"},  # a server for another vault
        {"v": 1, "ok": False, "error": "no"},
        None,  # the connection closed without an answer
    ],
)
def test_an_unusable_answer_means_an_in_process_search(
    generated: Path, reply: dict[str, object] | None
) -> None:
    """Whatever listens on the socket, a search it does not answer properly runs in-process
    and prints what it prints with no socket at all."""
    args = ["--vault", str(generated), "search", "manager", "--json"]
    expected = run_vb(*args).stdout
    fake = {"results": [], "query": "manager", "version": 2}
    path = generated / ".vb/search.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(4)

    def answer() -> None:
        conn, _ = server.accept()
        with conn:
            conn.recv(65536)
            if reply is not None:
                conn.sendall(json.dumps({**reply, "result": fake}).encode() + b"\n")

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    try:
        assert run_vb(*args).stdout == expected
        thread.join(timeout=10)
        assert not thread.is_alive()  # the client did ask
    finally:
        server.close()
        path.unlink()


def test_a_strategy_change_reaches_warm_searches(tmp_path: Path) -> None:
    """STRATEGY.md's ranking settings edited under a running watcher: the warm answer is the
    in-process one under the new settings."""
    root = gen_vault.generate(tmp_path / "v", notes=200, seed=9).root
    args = ["--vault", str(root), "search", "project plan", "--json"]
    with watching(root):
        before = run_vb(*args).stdout
        strategy = root / "STRATEGY.md"
        text = strategy.read_text(encoding="utf-8")
        strategy.write_text(
            text.replace("# credit_weight: 0.3", "credit_weight: 0.9").replace(
                "# bm25_k1: 1.0", "bm25_k1: 2.5"
            ),
            encoding="utf-8",
        )
        after = run_vb(*args).stdout
        assert warm(root) == {
            "alive": True,
            "socket": str(root / ".vb/search.sock"),
            "searches": 2,
            "last_search": "warm",
        }
    assert after != before  # (the settings do change the scores)
    assert run_vb(*args).stdout == after
