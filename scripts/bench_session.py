"""Benchmark `vb session` (issue 12 targets, with the sandbox image built): time from
`vb session` to its first prompt (<= 3 s), and the host's overhead per turn, the model's and
the container's time excluded (<= 100 ms).

    .venv/bin/python scripts/bench_session.py --notes 1000 --turns 20
    .venv/bin/python scripts/bench_session.py --agent opencode --turns 10

With `--agent opencode` each turn is an `opencode run` in the OpenCode image (built when
missing): the host's overhead is the turn's time outside that command, and OpenCode's own
time per turn (its start-up, its calls through `vb serve`, its tools) is reported beside it.

The model is the project's fake Chat Completions server (tests/fake_llm_server.py), which
answers at once: each turn calls memory_search and run_command, then answers. Turns follow
each other at once (no person reads or types in between: what vb leaves for those moments
is then done during the turns and measured with them); `--pause 2` waits two seconds
between turns instead, as a person would. Needs a running Docker engine. Prints one JSON
document on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))
import gen_vault  # noqa: E402
from bench_common import add_record_option, log, percentile, save_record  # noqa: E402

from fake_llm_server import FakeLLMServer, completion  # noqa: E402

TARGETS = {"first_prompt_s": 3.0, "turn_overhead_ms_p50": 100.0}


def scripted(body: dict[str, Any]) -> dict[str, Any]:
    """A tool round for each user message, then an answer."""
    messages = body["messages"]
    if messages[-1]["role"] == "tool":
        return completion("Done: the survey runs in March.")
    n = sum(1 for m in messages if m["role"] == "user")
    calls = [
        ("memory_search", {"query": "survey schedule"}),
        ("run_command", {"command": "date > last-run.txt"}),
    ]
    if any(t["function"]["name"] == "bash" for t in body.get("tools") or []):  # OpenCode
        command = {"command": "date > last-run.txt", "description": "Note the time"}
        calls = [("vb_memory_search", {"query": "survey schedule"}), ("bash", command)]
    return completion(
        None,
        tool_calls=[
            {
                "id": f"call_{n}_{i}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            for i, (name, args) in enumerate(calls)
        ],
    )


def first_prompt(vault: Path, workspace: Path, env: dict[str, str], agent: str) -> float:
    """Seconds from starting `vb session` to its ready line (then /quit)."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "vault_brain", "--vault", str(vault), "session",
         "--workspace", str(workspace), "--agent", agent],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    assert proc.stderr is not None and proc.stdin is not None
    for line in proc.stderr:
        if "/help for commands" in line:
            break
    ready = time.perf_counter() - started
    proc.stdin.write("/quit\n")
    proc.stdin.close()
    proc.wait(timeout=120)
    return ready


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--notes", type=int, default=1000)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--starts", type=int, default=3)
    parser.add_argument("--pause", type=float, default=0.0, help="seconds between turns")
    parser.add_argument("--agent", choices=("builtin", "opencode"), default="builtin")
    add_record_option(parser)
    args = parser.parse_args()

    from vault_brain.app.api import MemoryAPI
    from vault_brain.app.memory.vault import Vault
    from vault_brain.app.runtime.index_keeper import keep_index
    from vault_brain.app.runtime.session import SessionRunner
    from vault_brain.app.runtime.session_opencode import start_opencode
    from vault_brain.storage.env import Environment
    from vault_brain.storage.sandbox.build import ensure_image
    from vault_brain.storage.sandbox.container import Sandbox
    from vault_brain.storage.sandbox.engine import docker_client
    from vault_brain.storage.sandbox.opencode_image import ensure_opencode_image

    server = FakeLLMServer().start()
    server.max_requests = 10**9
    server.responder = scripted
    env = {
        **{k: v for k, v in os.environ.items() if k != "VB_VAULT"},
        "VB_LLM_BASE_URL": server.base_url,
        "VB_LLM_MODEL": "test-model",
        "VB_LLM_API_KEY": "test-key",
    }
    results: dict[str, Any] = {
        "agent": args.agent,
        "notes": args.notes,
        "turns": args.turns,
        "pause": args.pause,
    }
    try:
        with tempfile.TemporaryDirectory() as tmp:
            vault, workspace = Path(tmp) / "vault", Path(tmp) / "work"
            workspace.mkdir()
            gen_vault.generate(vault, args.notes, seed=7)
            subprocess.run([*gen_vault.vb_command(), "--vault", str(vault), "memory-file"],
                           check=True, capture_output=True, env=env)  # fmt: skip
            for git in (["add", "-A"], ["commit", "-qm", "generated"]):
                subprocess.run(["git", *git], cwd=vault, check=True, capture_output=True)
            client = docker_client()
            image = ensure_image(client)
            if args.agent == "opencode":
                image = ensure_opencode_image(client, image, os.environ, say=log)
            starts = [first_prompt(vault, workspace, env, args.agent) for _ in range(args.starts)]
            results["first_prompt_s"] = round(percentile(starts, 50), 3)
            log(f"first prompt: {starts}")

            opened = Vault.open(vault, Environment(env))
            api = MemoryAPI.live(opened, "bench-session", source="session")
            keep_index(api)  # as `vb session` does (a watcher, not a walk per call)
            llm = api.vault.llm()
            assert llm is not None
            runner: SessionRunner
            if args.agent == "opencode":
                runner = start_opencode(
                    api, llm, client, image, workspace=workspace, policy_rw=False,
                    say=lambda text: None, warn=log,
                )  # fmt: skip
            else:
                box = Sandbox.start(client, image, workspace=workspace, vault=vault, session="b")
                runner = SessionRunner(api, llm, box, "bench-session", lambda text: None)
            agent_ms: list[float] = []
            try:
                for n in range(args.turns):
                    turn = runner.turn(f"when does the survey run? ({n})")
                    agent_ms.append(turn.sandbox_seconds * 1000)
                    time.sleep(args.pause)
            finally:
                runner.close("bench")
                api.close()
            if args.agent == "opencode":
                results["opencode_turn_ms_p50"] = round(percentile(agent_ms[1:], 50), 1)
            overheads = [s * 1000 for s in runner.overheads[1:]]  # the first warms caches
            results["turn_overhead_ms_p50"] = round(percentile(overheads, 50), 1)
            results["turn_overhead_ms_p95"] = round(percentile(overheads, 95), 1)
            log(f"host overhead per turn: p50 {results['turn_overhead_ms_p50']} ms")
    finally:
        server.stop()
    results["met"] = {k: results[k] <= v for k, v in TARGETS.items()}
    if args.record:
        save_record(f"session-{args.agent}-{args.notes}", results)
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
