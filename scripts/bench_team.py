#!/usr/bin/env python3
"""A team of agents on one git remote (issue 26): N agent processes, each in its own clone with
its own VB_MACHINE, all syncing to one bare repository on this machine for a fixed time.

    .venv/bin/python scripts/bench_team.py --agents 50 --minutes 10 --record

Each agent, until the time is up, in a loop with a pause between steps:
- adds notes (mostly episodes, some entities), each with a token no other note has;
- searches with a session (every hit counts one access on its note: the ledger records it);
- gives feedback on its session's last search;
- edits by hand, as a person would in Obsidian: appends a line to one of its own notes,
  rewrites its own line of a shared board note (a line no other agent touches), and, on
  purpose now and then, rewrites line 3 of the clash note it shares with four other agents
  (true same-line conflicts: the only place conflict copies may appear);
- syncs on its own schedule (`--sync-every`, jittered), with `vb sync`'s own retry.

When the time is up each agent syncs until its push lands, then every clone syncs twice more
in turn. Then the benchmark checks, and fails (exit 1) unless all hold:
- every clone is at the remote's HEAD (convergence);
- every note any agent added is present exactly once (by its token), every hand-appended line
  and each agent's last board line is there (0 lost writes);
- every note's access_count equals the exact sum of the accesses all agents recorded;
- conflict copies exist only beside clash notes;
- no clone is left with MERGE_HEAD, git's index.lock or a held vault lock.

It reports commits landed per minute, p50/p95 sync time, retries (pushes rejected because
another agent pushed first), pushes left pending at the bound, repository growth per 1,000
writes, and the largest folder. `--record` writes benchmarks/team-<agents>.json.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench_common import add_record_option, log, percentile, save_record

REPO = Path(__file__).resolve().parents[1]
VB = [sys.executable, "-m", "vault_brain"]
WORDS = (  # noqa: SIM905 (a word list reads better as text)
    "release deploy budget roadmap latency outage customer onboarding migration invoice "
    "review design hiring feedback metrics sprint backlog incident rollback contract vendor "
    "pricing security audit backup schedule retro workshop interview training dashboard"
).split()
SHARED = 12  # shared project notes every agent searches
CLASH_GROUP = 5  # agents sharing one clash note
TOKEN = re.compile(r"\btok\d+x\d+\b")
IDENTITY = {
    "GIT_AUTHOR_NAME": "Team bench",
    "GIT_AUTHOR_EMAIL": "team@example.org",
    "GIT_COMMITTER_NAME": "Team bench",
    "GIT_COMMITTER_EMAIL": "team@example.org",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(*args: str, cwd: Path) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return proc.stdout.strip()


def machine(i: int) -> str:
    return f"agent-{i:02d}"


def board_line(name: str, status: str) -> str:
    return f"- {name}: {status}"


# --------------------------------------------------------------------------- set-up


def set_up(out: Path, agents: int) -> tuple[Path, list[Path]]:
    """The bare remote with a seed vault (shared notes, the board, the clash notes) and one
    clone per agent."""
    from vault_brain.app.api import MemoryAPI

    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    bare = out / "remote.git"
    git("init", "--bare", "-q", "-b", "main", str(bare), cwd=out)
    seed = out / "seed"
    subprocess.run([*VB, "init", str(seed)], check=True, capture_output=True)
    git("branch", "-M", "main", cwd=seed)
    api = MemoryAPI.open(seed)
    for k in range(SHARED):
        words = " ".join(WORDS[(k * 3 + j) % len(WORDS)] for j in range(6))
        api.add("entity", f"Shared project {k}", f"Project {k} of the team: {words}.", "projects")
    board = "The board: each agent keeps its own line.\n\n" + "\n\n".join(
        board_line(machine(i), "starting") for i in range(agents)
    )
    api.add("entity", "Team board", board, "projects")
    for c in range((agents + CLASH_GROUP - 1) // CLASH_GROUP):
        text = "Line 1 stays.\nLine 2 stays.\nLine 3 is argued over.\nLine 4 stays."
        api.add("entity", f"Clash {c}", text, "clash")
    git("remote", "add", "origin", str(bare), cwd=seed)
    subprocess.run([*VB, "--vault", str(seed), "sync", "--json"], check=True, capture_output=True)
    clones = []
    for i in range(agents):
        target = out / "clones" / machine(i)
        git("clone", "-q", str(bare), str(target), cwd=out)
        clones.append(target)
    return bare, clones


# --------------------------------------------------------------------------- one agent


class Agent:
    def __init__(self, index: int, root: Path, seed: int, sync_every: float, pause: float):
        from vault_brain.app.api import MemoryAPI

        self.index, self.root, self.name = index, root, machine(index)
        self.rng = random.Random(seed * 1000 + index)
        self.sync_every, self.pause = sync_every, pause
        self.api = MemoryAPI.open(root)
        self.session: Any = None
        self.session_no = 0
        self.searches_in_session = 0
        self.n = 0
        self.ledger: dict[str, Any] = {
            "machine": self.name,
            "added": [],  # [token, path]
            "accesses": Counter(),  # path -> accesses recorded
            "appended": [],  # [path, line]
            "board": "starting",
            "clash_edits": 0,
            "feedback": 0,
            "searches": 0,
            "syncs": [],  # {seconds, attempts, pushed, pending, copies}
            "errors": [],
        }

    def token(self) -> str:
        self.n += 1
        return f"tok{self.index}x{self.n}"

    def words(self, k: int) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(k))

    def add(self) -> None:
        token = self.token()
        text = f"{self.name} noted {token} about {self.words(8)}."
        if self.rng.random() < 0.8:
            result = self.api.add("episode", f"{self.name} episode {self.n}", text)
        else:
            category = self.rng.choice(["projects", "people", "preferences", "tools"])
            result = self.api.add("entity", f"{self.name} {category} {self.n}", text, category)
        self.ledger["added"].append([token, result.note.path])

    def search(self) -> None:
        from vault_brain.app.api import MemoryAPI

        if self.session is None or self.searches_in_session >= 4:
            self.session_no += 1
            self.searches_in_session = 0
            self.session = MemoryAPI.open(self.root, session=f"{self.name}-s{self.session_no}")
        query = self.words(2) + (" project team" if self.rng.random() < 0.5 else "")
        found = self.session.search(query, k=5)
        self.searches_in_session += 1
        self.ledger["searches"] += 1
        for hit in found.results:
            if hit.source == "memory":
                self.ledger["accesses"][hit.path] += 1

    def feedback(self) -> None:
        if self.session is None or not self.searches_in_session:
            return self.search()
        self.session.feedback(self.rng.choice(["good", "bad", "completed"]))
        self.ledger["feedback"] += 1
        return None

    def hand_edit(self) -> None:
        roll = self.rng.random()
        if roll < 0.45 and self.ledger["added"]:
            path = self.rng.choice(self.ledger["added"])[1]
            line = f"Hand note {self.token()} by {self.name}."
            file = self.root / path
            file.write_text(file.read_text(encoding="utf-8").rstrip("\n") + f"\n\n{line}\n")
            self.ledger["appended"].append([path, line])
        elif roll < 0.9:
            status = f"status {self.token()}"
            file = self.root / "entities/projects/team-board.md"
            text = file.read_text(encoding="utf-8")
            old = re.search(rf"^- {re.escape(self.name)}: .*$", text, re.M)
            if old is None:
                raise RuntimeError(f"{self.name}'s board line is gone")
            file.write_text(text[: old.start()] + board_line(self.name, status) + text[old.end() :])
            self.ledger["board"] = status
        else:  # on purpose: the line the clash group argues over
            file = self.root / f"entities/clash/clash-{self.index // CLASH_GROUP}.md"
            text = file.read_text(encoding="utf-8")
            new = f"Line 3 as {self.name} has it ({self.token()})."
            file.write_text(re.sub(r"^Line 3 .*$", new, text, count=1, flags=re.M))
            self.ledger["clash_edits"] += 1

    def sync(self, retry_for: float) -> bool:
        doc = self.api.sync(retry_for=retry_for)
        self.ledger["syncs"].append(
            {
                "seconds": doc.seconds,
                "attempts": doc.attempts,
                "pushed": doc.pushed,
                "pending": doc.push_pending,
                "copies": doc.conflict_copies,
            }
        )
        return doc.push_pending is None

    def run(self, until: float, retry_for: float) -> None:
        steps = [(self.add, 35), (self.search, 35), (self.feedback, 10), (self.hand_edit, 20)]
        actions, weights = zip(*steps, strict=True)
        next_sync = time.time() + self.rng.uniform(0.2, 1.0) * self.sync_every
        while time.time() < until:
            try:
                if time.time() >= next_sync:
                    self.sync(retry_for)
                    next_sync = time.time() + self.sync_every * self.rng.uniform(0.5, 1.5)
                else:
                    self.rng.choices(actions, weights)[0]()
            except Exception as exc:  # a failed step is reported, not fatal to the run
                self.ledger["errors"].append(f"{type(exc).__name__}: {exc}")
            time.sleep(self.pause * self.rng.uniform(0.5, 1.5))
        if self.session is not None:
            self.session.close()
        for _ in range(20):  # the time is up: sync until this agent's commits have landed
            if self.sync(retry_for=max(retry_for, 120.0)):
                break


def agent_main(args: argparse.Namespace) -> None:
    root = args.out / "clones" / machine(args.agent)
    agent = Agent(args.agent, root, args.seed, args.sync_every, args.pause)
    agent.run(args.until, args.retry_for)
    ledger = {**agent.ledger, "accesses": dict(agent.ledger["accesses"])}
    (args.out / "ledgers").mkdir(exist_ok=True)
    (args.out / "ledgers" / f"{agent.name}.json").write_text(json.dumps(ledger))


# --------------------------------------------------------------------------- the checks


def folder_sizes(root: Path) -> tuple[str, int]:
    """The folder of the vault with the most entries (not .git or .vb) and that count."""
    largest = ("", 0)
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in (".git", ".vb")]
        count = len(dirs) + len(files)
        if count > largest[1]:
            largest = (Path(folder).relative_to(root).as_posix() or ".", count)
    return largest


def held(lock: Path) -> bool:
    import filelock

    if not lock.exists():
        return False
    try:
        filelock.FileLock(str(lock)).acquire(timeout=0).lock.release()
    except filelock.Timeout:
        return True
    return False


def repo_bytes(bare: Path) -> int:
    return sum(p.stat().st_size for p in (bare / "objects").rglob("*") if p.is_file())


def check(bare: Path, clones: list[Path], ledgers: list[dict[str, Any]]) -> dict[str, Any]:
    from vault_brain.storage.notes.frontmatter import parse_text

    head = git("rev-parse", "main", cwd=bare)
    problems: list[str] = []
    for root in clones:
        if git("rev-parse", "HEAD", cwd=root) != head:
            problems.append(f"{root.name} is not at the remote's HEAD")
        for stuck in (".git/MERGE_HEAD", ".git/index.lock"):
            if (root / stuck).exists():
                problems.append(f"{root.name} is left with {stuck}")
        if held(root / ".vb/vault.lock") or held(root / ".vb/sync.lock"):
            problems.append(f"{root.name} still holds a vb lock")
        if git("status", "--porcelain", cwd=root):
            problems.append(f"{root.name} has uncommitted changes after the last sync")
    root = clones[0]
    copies, tokens, access, texts = [], Counter[str](), {}, {}
    for path in root.rglob("*.md"):
        rel = path.relative_to(root).as_posix()
        if rel.startswith((".git/", ".vb/")) or rel in ("MEMORY.md", "STRATEGY.md"):
            continue
        if "(conflict " in path.name:
            copies.append(rel)
            continue
        data = path.read_bytes()
        texts[rel] = data.decode("utf-8")
        tokens.update(set(TOKEN.findall(texts[rel].split("\n\nHand note")[0])))
        access[rel] = int(parse_text(data).meta.get("access_count") or 0)
    lost, doubled = 0, 0
    expected = Counter[str]()
    for ledger in ledgers:
        for token, path in ledger["added"]:
            found = tokens.get(token, 0)
            if found == 0 or token not in texts.get(path, ""):
                lost += 1
                problems.append(f"lost: {ledger['machine']}'s note {token} ({path})")
            elif found > 1:
                doubled += 1
                problems.append(f"{token} is in {found} notes")
        for path, line in ledger["appended"]:
            if line not in texts.get(path, ""):
                lost += 1
                problems.append(f"lost: {ledger['machine']}'s hand edit of {path}: {line!r}")
        board = texts.get("entities/projects/team-board.md", "")
        if board_line(ledger["machine"], ledger["board"]) not in board:
            lost += 1
            problems.append(f"lost: {ledger['machine']}'s board line ({ledger['board']})")
        expected.update(ledger["accesses"])
    wrong_counts = [
        f"{path}: access_count {access.get(path)} != {n} recorded"
        for path, n in expected.items()
        if access.get(path) != n
    ]
    problems += wrong_counts[:20]
    stray = [c for c in copies if not c.startswith("entities/clash/")]
    problems += [f"a conflict copy beside a note no one clashed on: {c}" for c in stray]
    folder, entries = folder_sizes(root)
    return {
        "head": head,
        "notes": len(texts),
        "lost_writes": lost,
        "doubled_notes": doubled,
        "counters_checked": len(expected),
        "counters_wrong": len(wrong_counts),
        "conflict_copies": len(copies),
        "stray_conflict_copies": len(stray),
        "largest_folder": folder,
        "largest_folder_entries": entries,
        "problems": problems,
    }


# --------------------------------------------------------------------------- the run


def run(
    out: Path,
    agents: int,
    minutes: float,
    seed: int = 1,
    sync_every: float = 30.0,
    pause: float = 5.0,
    retry_for: float = 60.0,
) -> dict[str, Any]:
    env = {**os.environ, **IDENTITY, "HOME": str(out / "home")}
    with _env(env):
        log(f"setting up a remote and {agents} clones in {out}")
        bare, clones = set_up(out, agents)
    (out / "home").mkdir(exist_ok=True)
    seed_commits = int(git("rev-list", "--count", "main", cwd=bare))
    size_before = repo_bytes(bare)
    started = time.time()
    until = started + minutes * 60
    with contextlib.ExitStack() as logs:
        procs = [
            subprocess.Popen(
                [
                    *(sys.executable, __file__, "--agent", str(i), "--out", str(out)),
                    *("--until", str(until), "--seed", str(seed), "--pause", str(pause)),
                    *("--sync-every", str(sync_every), "--retry-for", str(retry_for)),
                ],
                env={**env, "VB_MACHINE": machine(i)},
                stdout=subprocess.DEVNULL,
                stderr=logs.enter_context(open(out / f"{machine(i)}.log", "w")),
            )
            for i in range(agents)
        ]
        log(f"{agents} agents running for {minutes:g} min")
        failed = [p.args for p in procs if p.wait() != 0]
    ended = time.time()
    landed = int(git("rev-list", "--count", "main", cwd=bare)) - seed_commits
    log(f"agents done in {ended - started:.0f} s; {landed} commits landed; converging")
    for _ in range(2):  # every clone receives what the others pushed last
        for i, root in enumerate(clones):
            subprocess.run(
                [*VB, "--vault", str(root), "sync", "--json"],
                env={**env, "VB_MACHINE": machine(i)},
                check=True,
                capture_output=True,
            )
    ledgers = [json.loads(p.read_text()) for p in sorted((out / "ledgers").glob("*.json"))]
    result = check(bare, clones, ledgers)
    if failed or len(ledgers) != agents:
        result["problems"].insert(0, f"{agents - len(ledgers)} agents did not finish: see logs")
    syncs = [s for ledger in ledgers for s in ledger["syncs"]]
    seconds = [s["seconds"] for s in syncs]
    writes = sum(
        len(ledger["added"]) + len(ledger["appended"]) + ledger["feedback"] + ledger["searches"]
        for ledger in ledgers
    ) + sum(1 + ledger["clash_edits"] for ledger in ledgers)
    git("gc", "-q", cwd=bare)
    grown = repo_bytes(bare) - size_before
    result.update(
        {
            "agents": agents,
            "minutes": minutes,
            "wall_s": round(ended - started, 1),
            "commits_landed": landed,
            "commits_per_minute": round(landed / ((ended - started) / 60), 1),
            "syncs": len(syncs),
            "sync_p50_s": round(percentile(seconds, 50), 3),
            "sync_p95_s": round(percentile(seconds, 95), 3),
            "retries": sum(s["attempts"] - 1 for s in syncs),
            "syncs_retried": sum(s["attempts"] > 1 for s in syncs),
            "pending_at_bound": sum(s["pending"] is not None for s in syncs),
            "writes": writes,
            "notes_added": sum(len(ledger["added"]) for ledger in ledgers),
            "repo_growth_kb_per_1000_writes": round(grown / 1024 / max(writes / 1000, 1e-9), 1),
            "step_errors": sum(len(ledger["errors"]) for ledger in ledgers),
        }
    )
    errors = [e for ledger in ledgers for e in ledger["errors"]]
    result["error_samples"] = errors[:10]
    return result


@contextlib.contextmanager
def _env(env: dict[str, str]) -> Any:
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", type=int, default=50)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sync-every", type=float, default=30.0, help="seconds, jittered")
    parser.add_argument("--pause", type=float, default=5.0, help="seconds between steps, jittered")
    parser.add_argument("--retry-for", type=float, default=60.0, help="vb sync --retry-for")
    parser.add_argument("--out", type=Path, default=REPO / "bench-out" / "team")
    parser.add_argument("--agent", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--until", type=float, help=argparse.SUPPRESS)
    add_record_option(parser)
    args = parser.parse_args()
    args.out = args.out.resolve()
    if args.agent is not None:
        agent_main(args)
        return 0
    result = run(
        args.out, args.agents, args.minutes, args.seed, args.sync_every, args.pause, args.retry_for
    )
    print(json.dumps(result, indent=1))
    if args.record:
        save_record(f"team-{args.agents}", result)
    return 1 if result["problems"] else 0


if __name__ == "__main__":
    sys.exit(main())
