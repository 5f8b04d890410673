#!/usr/bin/env python3
"""Search-speed benchmark of vault_brain on synthetic vaults.

    python scripts/bench_search.py --sizes 1000,10000 [--out bench-out/]

For each size a vault is generated with scripts/gen_vault.py (cached under
OUT/search-vaults/ keyed by size, seed and generator version, so reruns skip generation) and
these are measured:

* full index: `vb index --rebuild --json` as a process (wall time, notes/s);
* reconcile after one changed note: in-process `Index.reconcile()` (median of rounds);
* warm search p50/p95: in-process `Vault.searcher.search(q, k=10)` over deterministic
  queries of 1-4 vocabulary words;
* cold search: `vb search Q -k 10 --json` as a whole process vs. a minimal Whoosh script
  on the same `.vb/index` (BM25F, top 10) vs. a minimal SQLite FTS5 script (the FTS5
  table is built once, and that build is timed too); runs are interleaved;
* edit-to-searchable under `vb watch -q`: atomic saves (temp file + os.replace) of a
  unique token into a note, polled with the in-process searcher until found; then the
  watcher's resident memory (VmRSS, and its peak VmHWM, from /proc/<pid>/status);
* `vb --help` wall time (with `python -c pass` as the interpreter floor).

Targets are judged on wall time; CPU time (user+sys of this process for in-process measures,
of the waited-for child processes otherwise) is reported next to it because other load on
the machine inflates wall times. Extra context: read+parse share of indexing, a step-by-step
breakdown of a cold `vb search`, the watcher's own batch times.

Prints a table per size and writes OUT/search-<size>.json. The vault is restored
(edited notes put back) at the end; an interrupted run marks the cached vault dirty so
the next run regenerates it. "Cold" means a new process; the OS file cache is warm.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import platform
import random
import resource
import signal
import sqlite3
import statistics
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen_vault
from bench_common import add_record_option, log, percentile, process_memory_mb, save_record

REPO = Path(__file__).resolve().parent.parent

# Targets (at 10k notes). Each: (key in results, comparison, limit, unit, label).
# Targets (at 10k notes), judged on wall time. Each: (key, comparison, limit, unit, label, key
# of the same measure in CPU time -- user+sys, much less sensitive to other load on the machine).
TARGETS: list[tuple[str, str, float, str, str, str | None]] = [
    ("index_full_s", "<=", 5.0, "s", "full index (vb index --rebuild)", "index_full_cpu_s"),
    (
        "reconcile_one_change_ms",
        "<=",
        150.0,
        "ms",
        "reconcile after one change",
        "reconcile_one_change_cpu_ms",
    ),
    ("warm_search_p50_ms", "<=", 10.0, "ms", "warm search p50", "warm_search_cpu_p50_ms"),
    (
        "cold_vb_vs_whoosh_ratio",
        "<=",
        1.3,
        "x",
        "cold vb search / minimal Whoosh",
        "cold_vb_vs_whoosh_cpu_ratio",
    ),
    (
        "watch_edit_to_searchable_p95_ms",
        "<=",
        500.0,
        "ms",
        "edit-to-searchable, vb watch p95",
        None,
    ),
    ("vb_help_ms", "<=", 120.0, "ms", "vb --help", "vb_help_cpu_ms"),
]

MIN_WHOOSH = textwrap.dedent('''\
    """Minimal Whoosh search: open the index, BM25F over the same fields, print the top 10."""
    import sys

    from whoosh import index, scoring
    from whoosh.analysis import StemmingAnalyzer
    from whoosh.query import Or, Term

    ix = index.open_dir(sys.argv[1])
    terms = []
    for token in StemmingAnalyzer(minsize=1)(sys.argv[2]):
        if token.text not in terms:
            terms.append(token.text)
    query = Or([Term(f, t) for t in terms for f in ("title", "aliases", "tagtext", "body")])
    with ix.searcher(weighting=scoring.BM25F(B=0.75, K1=1.2)) as searcher:
        for hit in searcher.search(query, limit=10):
            print(f"{hit.score:.4f}\\t{hit['id']}\\t{hit['title']}")
''')

FTS_BUILD = textwrap.dedent('''\
    """Minimal SQLite FTS5 index of a vault's notes: path, title, front matter, body."""
    import os
    import re
    import sqlite3
    import sys

    root, db = sys.argv[1], sys.argv[2]
    skip = {".vb", ".git", ".obsidian", ".trash", "sessions", "logs"}
    title_re = re.compile(r"^title:[ \\t]*(.*)$", re.M)
    rows = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in skip and not d.startswith(".")]
        for name in files:
            if not name.endswith(".md"):
                continue
            if folder == root and name in ("MEMORY.md", "STRATEGY.md"):
                continue
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8", errors="replace") as handle:
                text = handle.read()
            meta, body = "", text
            if text.startswith("---\\n"):
                end = text.find("\\n---", 4)
                if end != -1:
                    meta, body = text[4:end], text[end + 4 :]
            match = title_re.search(meta)
            title = match.group(1).strip().strip('"') if match else name[:-3]
            rows.append((os.path.relpath(path, root), title, meta, body))
    if os.path.exists(db):
        os.remove(db)
    con = sqlite3.connect(db)
    con.execute("CREATE VIRTUAL TABLE notes USING fts5(path UNINDEXED, title, meta, body, "
                "tokenize='porter unicode61')")
    with con:
        con.executemany("INSERT INTO notes VALUES (?, ?, ?, ?)", rows)
    con.execute("INSERT INTO notes(notes) VALUES ('optimize')")
    con.commit()
    con.close()
    print(len(rows))
''')

FTS_QUERY = textwrap.dedent('''\
    """Minimal SQLite FTS5 search: OR of the query words, weighted BM25, print the top 10."""
    import re
    import sqlite3
    import sys

    words = re.findall(r"\\w+", sys.argv[2].lower())
    match = " OR ".join(f'"{w}"' for w in words)
    con = sqlite3.connect(sys.argv[1])
    sql = ("SELECT path, title, bm25(notes, 0.0, 2.0, 1.2, 1.0) AS score FROM notes "
           "WHERE notes MATCH ? ORDER BY score LIMIT 10")
    for path, title, score in con.execute(sql, (match,)):
        print(f"{-score:.4f}\\t{path}\\t{title}")
''')


COLD_BREAKDOWN = textwrap.dedent('''\
    """Where a cold `vb search` spends its time: the same steps as the command, timed."""
    import json
    import sys
    import time

    marks = [time.perf_counter()]
    import typer  # noqa: F401

    marks.append(time.perf_counter())
    import vault_brain.interfaces.cli.app  # noqa: F401

    marks.append(time.perf_counter())
    import whoosh.index, whoosh.searching, whoosh.scoring, whoosh.analysis  # noqa: E401,F401

    marks.append(time.perf_counter())
    from vault_brain.app.memory.vault import Vault

    vault = Vault.open(sys.argv[1])
    vault.reconcile()
    marks.append(time.perf_counter())
    hits = vault.searcher.search(sys.argv[2], 10)
    json.dumps([h.__dict__ for h in hits])
    marks.append(time.perf_counter())
    names = ["import_typer", "import_vault_brain_cli", "import_whoosh", "open_and_reconcile",
             "search_and_json"]
    print(json.dumps({n: (b - a) * 1000 for n, a, b in zip(names, marks, marks[1:])}))
''')


class BenchError(Exception):
    """A failure with a message meant for the person running the benchmark."""


# ---------------------------------------------------------------------------
# small helpers


def ms(seconds: float) -> float:
    return round(seconds * 1000.0, 2)


@dataclass
class Timed:
    wall: float  # seconds, what a person waits
    cpu: float  # user + system seconds of the process and the children it waited for
    proc: subprocess.CompletedProcess[str]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_timed(
    cmd: Sequence[str], timeout: float, what: str, env: dict[str, str] | None = None
) -> Timed:
    """Run `cmd` to completion and time it. Raises BenchError on failure or timeout."""
    cpu_before = _children_cpu()
    started = time.perf_counter()
    try:
        proc = subprocess.run(
            list(cmd),
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=False,
            env=env,
        )
    except subprocess.TimeoutExpired as exc:
        raise BenchError(f"{what}: no result after {timeout:.0f}s ({' '.join(cmd)})") from exc
    except OSError as exc:
        raise BenchError(f"{what}: cannot run {cmd[0]}: {exc}") from exc
    seconds = time.perf_counter() - started
    cpu = _children_cpu() - cpu_before
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
        raise BenchError(f"{what}: exit code {proc.returncode}: {' / '.join(tail) or 'no output'}")
    return Timed(seconds, cpu, proc)


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("VB_VAULT", None)
    return env


def atomic_save(path: Path, data: bytes) -> None:
    """Save like an editor: write a temp file in the same folder, then os.replace."""
    tmp = path.with_name(f".{path.name}.benchtmp")
    with open(tmp, "wb") as handle:
        handle.write(data)
    os.replace(tmp, path)


def git_revision() -> str:
    try:
        proc = subprocess.run(
            ["git", "-C", str(REPO), "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return proc.stdout.strip() or "unknown"


def machine_info() -> dict[str, Any]:
    import whoosh

    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "whoosh": ".".join(str(p) for p in whoosh.__version__),
        "sqlite": sqlite3.sqlite_version,
        "revision": git_revision(),
    }


# ---------------------------------------------------------------------------
# the vault: generated once per (size, seed, generator version), restored after each run


@dataclass
class CachedVault:
    root: Path
    ready: Path
    dirty: Path
    notes: list[gen_vault.NoteSpec]
    generated_seconds: float | None


def prepare_vault(out: Path, size: int, seed: int, regenerate: bool) -> CachedVault:
    key = f"n{size}-s{seed}-g{gen_vault.GENERATOR_VERSION}"
    base = out / "search-vaults"
    base.mkdir(parents=True, exist_ok=True)
    root, ready, dirty = base / key, base / f"{key}.ready.json", base / f"{key}.dirty"
    if ready.is_file() and not dirty.exists() and not regenerate and root.is_dir():
        # Plans are deterministic: re-plan the notes without writing anything.
        specs = [spec for spec, _ in gen_vault._plan(random.Random(seed), size)]
        log(f"reusing cached vault {root}")
        return CachedVault(root, ready, dirty, specs, None)
    log(f"generating {size} notes (seed {seed}) in {root} ...")
    ready.unlink(missing_ok=True)
    try:
        made = gen_vault.generate(root, size, seed, force=True)
    except (RuntimeError, OSError, ValueError) as exc:
        raise BenchError(f"cannot generate the vault: {exc}") from exc
    ready.write_text(
        json.dumps(
            {"notes": size, "seed": seed, "words": made.words, "seconds": round(made.seconds, 3)}
        ),
        encoding="utf-8",
    )
    dirty.unlink(missing_ok=True)
    log(f"generated in {made.seconds:.1f}s ({made.words} words)")
    return CachedVault(root, ready, dirty, made.notes, made.seconds)


class Edits:
    """Remembers the original bytes of every note the benchmark edits, to put them back."""

    def __init__(self, vault: CachedVault) -> None:
        self.vault = vault
        self.originals: dict[Path, bytes] = {}

    def save(self, rel: str, data: bytes) -> None:
        path = self.vault.root / rel
        if path not in self.originals:
            if not self.vault.dirty.exists():
                self.vault.dirty.write_text("edited by bench_search.py\n", encoding="utf-8")
            self.originals[path] = path.read_bytes()
        atomic_save(path, data)

    def original(self, rel: str) -> bytes:
        path = self.vault.root / rel
        return self.originals.get(path) or path.read_bytes()

    def restore(self) -> None:
        for path, data in self.originals.items():
            atomic_save(path, data)
        self.originals.clear()


# ---------------------------------------------------------------------------
# measures


def measure_help(runs: int) -> dict[str, Any]:
    vb = gen_vault.vb_command()
    env = child_env()
    floor = [
        run_timed([sys.executable, "-c", "pass"], 30, "python -c pass", env) for _ in range(10)
    ]
    run_timed([*vb, "--help"], 60, "vb --help", env)  # warm the OS cache and .pyc files
    helps = [run_timed([*vb, "--help"], 60, "vb --help", env) for _ in range(runs)]
    return {
        "vb_help_ms": ms(statistics.median(t.wall for t in helps)),
        "vb_help_cpu_ms": ms(statistics.median(t.cpu for t in helps)),
        "vb_help_runs": runs,
        "python_startup_ms": ms(statistics.median(t.wall for t in floor)),
    }


def measure_index(vault: CachedVault, runs: int, timeout: float) -> dict[str, Any]:
    vb = gen_vault.vb_command()
    walls, cpus, internal = [], [], []
    total = 0
    for n in range(runs):
        timed = run_timed(
            [*vb, "--vault", str(vault.root), "index", "--rebuild", "--json"],
            timeout,
            "vb index --rebuild",
            child_env(),
        )
        seconds, proc = timed.wall, timed.proc
        cpus.append(timed.cpu)
        try:
            payload = json.loads(proc.stdout)
        except ValueError as exc:
            raise BenchError(f"vb index --json printed no JSON: {proc.stdout[:200]!r}") from exc
        total = int(payload.get("total", 0))
        walls.append(seconds)
        internal.append(float(payload.get("seconds", 0.0)))
        log(f"index run {n + 1}/{runs}: {seconds:.2f}s wall, {timed.cpu:.2f}s cpu")
    if total != len(vault.notes):
        raise BenchError(f"vb indexed {total} notes, the generator wrote {len(vault.notes)}")
    wall = statistics.median(walls)
    parse_s: float | None = None
    try:  # in-process: read + parse every note + build its index document (no Whoosh writes)
        from vault_brain.storage.index.schema import document
        from vault_brain.storage.notes.read import note_from_bytes

        started = time.process_time()
        for spec in vault.notes:
            document(note_from_bytes(spec.rel, (vault.root / spec.rel).read_bytes()))
        parse_s = time.process_time() - started
    except Exception as exc:  # vault_brain internals moved: this extra measure is optional
        log(f"skipping the parse-share measure: {exc!r}")
    return {
        "index_parse_only_cpu_s": None if parse_s is None else round(parse_s, 3),
        "index_full_s": round(wall, 3),
        "index_full_cpu_s": round(statistics.median(cpus), 3),
        "index_full_runs_s": [round(w, 3) for w in walls],
        "index_full_in_vb_s": round(statistics.median(internal), 3),
        "index_notes_per_s": round(total / wall, 1),
        "index_notes": total,
    }


def measure_reconcile(v: Any, vault: CachedVault, edits: Edits, rounds: int) -> dict[str, Any]:
    # A reconcile with nothing changed is the stat scan every command pays.
    idle = []
    for _ in range(5):
        started = time.perf_counter()
        result = v.index.reconcile()
        idle.append(time.perf_counter() - started)
        if result.changed:
            raise BenchError(f"index not current before the reconcile rounds: {result}")
    rng = random.Random(99)
    changed, changed_cpu = [], []
    for n in range(rounds):
        spec = vault.notes[rng.randrange(len(vault.notes))]
        data = edits.original(spec.rel) + f"\nreconcile edit {n} benchrecon{n}x\n".encode()
        edits.save(spec.rel, data)
        started, cpu = time.perf_counter(), time.process_time()
        result = v.index.reconcile()
        changed.append(time.perf_counter() - started)
        changed_cpu.append(time.process_time() - cpu)
        if result.updated != [spec.rel] or result.added or result.removed:
            raise BenchError(f"reconcile after editing {spec.rel} saw {result}")
    return {
        "reconcile_one_change_ms": ms(statistics.median(changed)),
        "reconcile_one_change_cpu_ms": ms(statistics.median(changed_cpu)),
        "reconcile_one_change_runs_ms": [ms(s) for s in changed],
        "reconcile_no_change_ms": ms(statistics.median(idle)),
    }


def measure_warm(v: Any, queries: list[str]) -> dict[str, Any]:
    searcher = v.searcher
    for query in gen_vault.sample_queries(20, seed=1):  # warm-up: caches, lazy imports
        searcher.search(query, k=10)
    times, cpu_times, empty = [], [], 0
    for query in queries:
        started, cpu = time.perf_counter(), time.process_time()
        hits = searcher.search(query, k=10)
        times.append(time.perf_counter() - started)
        cpu_times.append(time.process_time() - cpu)
        empty += not hits
    return {
        "warm_search_p50_ms": ms(percentile(times, 50)),
        "warm_search_p95_ms": ms(percentile(times, 95)),
        "warm_search_mean_ms": ms(statistics.fmean(times)),
        "warm_search_cpu_p50_ms": ms(percentile(cpu_times, 50)),
        "warm_search_queries": len(queries),
        "warm_search_empty": empty,
    }


def measure_cold(
    vault: CachedVault, out: Path, queries: list[str], runs: int, timeout: float
) -> dict[str, Any]:
    scripts = out / "search-scripts"
    scripts.mkdir(parents=True, exist_ok=True)
    files = {
        "whoosh": scripts / "min_whoosh.py",
        "fts_build": scripts / "fts5_build.py",
        "fts_query": scripts / "fts5_query.py",
    }
    for path, source in zip(files.values(), (MIN_WHOOSH, FTS_BUILD, FTS_QUERY), strict=True):
        if not path.exists() or path.read_text(encoding="utf-8") != source:
            path.write_text(source, encoding="utf-8")
    db = out / "search-vaults" / f"{vault.root.name}.fts5.sqlite"
    env = child_env()
    build = run_timed(
        [sys.executable, str(files["fts_build"]), str(vault.root), str(db)],
        timeout,
        "FTS5 build",
        env,
    )
    build_s, proc = build.wall, build.proc
    fts_rows = int(proc.stdout.strip() or 0)
    if fts_rows != len(vault.notes):
        raise BenchError(f"FTS5 build saw {fts_rows} notes, expected {len(vault.notes)}")
    log(f"FTS5 table built in {build_s:.2f}s ({fts_rows} notes)")
    manifest = json.loads((vault.root / ".vb" / "manifest.json").read_text(encoding="utf-8"))
    index_dir = str(vault.root / ".vb" / manifest["index"])  # the current index generation
    commands: dict[str, Callable[[str], list[str]]] = {
        "vb": lambda q: [
            *gen_vault.vb_command(),
            "--vault",
            str(vault.root),
            "search",
            q,
            "-k",
            "10",
            "--json",
        ],
        "whoosh": lambda q: [sys.executable, str(files["whoosh"]), index_dir, q],
        "fts5": lambda q: [sys.executable, str(files["fts_query"]), str(db), q],
    }
    picked = [q for q in queries if len(q.split()) >= 2][:5] or queries[:5]
    times: dict[str, list[float]] = {name: [] for name in commands}
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    lines: dict[str, int] = {name: 0 for name in commands}
    for name, make in commands.items():  # one untimed run each: .pyc files, OS cache
        run_timed(make(picked[0]), timeout, f"cold {name} search", env)
    for n in range(runs):
        query = picked[n % len(picked)]
        for name, make in commands.items():
            timed = run_timed(make(query), timeout, f"cold {name} search", env)
            proc = timed.proc
            times[name].append(timed.wall)
            cpu[name].append(timed.cpu)
            if name == "vb":
                lines[name] += len(json.loads(proc.stdout).get("results", []))
            else:
                lines[name] += len(proc.stdout.splitlines())
    med = {name: statistics.median(values) for name, values in times.items()}
    med_cpu = {name: statistics.median(values) for name, values in cpu.items()}
    breakdown = cold_breakdown(vault, scripts, picked, env, timeout)
    return {
        "cold_vb_search_ms": ms(med["vb"]),
        "cold_min_whoosh_ms": ms(med["whoosh"]),
        "cold_fts5_ms": ms(med["fts5"]),
        "cold_runs": runs,
        "cold_queries": picked,
        "cold_vb_vs_whoosh_ratio": round(med["vb"] / med["whoosh"], 3),
        "cold_vb_vs_fts5_ratio": round(med["vb"] / med["fts5"], 3),
        "cold_cpu_ms": {name: ms(value) for name, value in med_cpu.items()},
        "cold_vb_vs_whoosh_cpu_ratio": round(med_cpu["vb"] / med_cpu["whoosh"], 3),
        "cold_hits_per_run": {name: round(count / runs, 1) for name, count in lines.items()},
        "cold_vb_breakdown_ms": breakdown,
        "fts5_build_s": round(build_s, 3),
        "fts5_db_mb": round(db.stat().st_size / 2**20, 2),
    }


def cold_breakdown(
    vault: CachedVault,
    scripts: Path,
    queries: list[str],
    env: dict[str, str],
    timeout: float,
    runs: int = 7,
) -> dict[str, float] | None:
    """Median time of each step of a cold `vb search`, timed inside a fresh process."""
    path = scripts / "cold_breakdown.py"
    path.write_text(COLD_BREAKDOWN, encoding="utf-8")
    samples: list[dict[str, float]] = []
    for n in range(runs):
        cmd = [sys.executable, str(path), str(vault.root), queries[n % len(queries)]]
        try:
            samples.append(json.loads(run_timed(cmd, timeout, "cold breakdown", env).proc.stdout))
        except (BenchError, ValueError) as exc:  # optional measure; vault_brain may have moved
            log(f"skipping the cold breakdown: {exc}")
            return None
    return {key: ms(statistics.median(s[key] for s in samples) / 1000) for key in samples[0]}


@contextlib.contextmanager
def watcher(vault: CachedVault, startup_timeout: float) -> Iterator[subprocess.Popen[bytes]]:
    from vault_brain.app.memory.vault import Vault
    from vault_brain.storage.index.watch import read_status

    log_path = vault.root.parent / f"{vault.root.name}.watch.log"
    with open(log_path, "wb") as log_file:
        cmd = [*gen_vault.vb_command(), "--vault", str(vault.root), "watch", "-q"]
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            env=child_env(),
        )
        try:
            status_vault = Vault.open(vault.root)
            deadline = time.monotonic() + startup_timeout
            while True:
                status = read_status(status_vault.paths)
                if status.get("alive") and status.get("pid") == proc.pid:
                    break
                if proc.poll() is not None:
                    raise BenchError(
                        f"vb watch exited with {proc.returncode} before it was ready; "
                        f"see {log_path}"
                    )
                if time.monotonic() > deadline:
                    raise BenchError(
                        f"vb watch not alive after {startup_timeout:.0f}s; see {log_path}"
                    )
                time.sleep(0.05)
            yield proc
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    log("vb watch ignored SIGINT for 15s; killing it")
                    proc.kill()
                    proc.wait(timeout=15)


def measure_watch(
    v: Any,
    vault: CachedVault,
    edits: Edits,
    rounds: int,
    round_timeout: float,
    startup_timeout: float,
) -> dict[str, Any]:
    from vault_brain.storage.index.watch import read_status

    rng = random.Random(1234)
    latencies: list[float] = []
    batch_seconds: list[float] = []
    misses = 0
    started_at = time.perf_counter()
    with watcher(vault, startup_timeout) as proc:
        startup = time.perf_counter() - started_at
        searcher = v.searcher
        for n in range(rounds):
            spec = vault.notes[rng.randrange(len(vault.notes))]
            token = "benchwatch" + "".join(rng.choice("bcdfghjklmnpqrstvwxz") for _ in range(8))
            before = int(read_status(v.paths).get("batches", 0))
            data = edits.original(spec.rel) + f"\nwatch edit {n}: {token}\n".encode()
            saved = time.perf_counter()
            edits.save(spec.rel, data)
            deadline = saved + round_timeout
            found = False
            while time.perf_counter() < deadline:
                if any(hit.path == spec.rel for hit in searcher.search(token, k=3)):
                    found = True
                    break
                time.sleep(0.002)
            if not found:
                misses += 1
                log(f"watch round {n}: {spec.rel} not searchable after {round_timeout:.0f}s")
                continue
            latencies.append(time.perf_counter() - saved)
            # The watcher's own time for the batch (status is written right after a batch).
            for _ in range(100):
                status = read_status(v.paths)
                if int(status.get("batches", 0)) > before and status.get("last_batch"):
                    batch_seconds.append(float(status["last_batch"].get("seconds", 0.0)))
                    break
                time.sleep(0.01)
            time.sleep(0.3)  # let the debounce window close before the next save
        memory = process_memory_mb(proc.pid)  # (after the rounds: its searcher is warm)
    if not latencies:
        raise BenchError("no edit became searchable under vb watch")
    return {
        "watch_edit_to_searchable_p50_ms": ms(percentile(latencies, 50)),
        "watch_edit_to_searchable_p95_ms": ms(percentile(latencies, 95)),
        "watch_edit_to_searchable_max_ms": ms(max(latencies)),
        "watch_rounds": rounds,
        "watch_misses": misses,
        "watch_debounce_s": 0.2,
        "watch_batch_p50_ms": ms(percentile(batch_seconds, 50)) if batch_seconds else None,
        "watch_batch_p95_ms": ms(percentile(batch_seconds, 95)) if batch_seconds else None,
        "watch_startup_s": round(startup, 3),
        "watch_rss_mb": memory.get("rss_mb"),
        "watch_peak_rss_mb": memory.get("peak_rss_mb"),
    }


# ---------------------------------------------------------------------------
# driver


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def wait_quiet(limit: float, load: float) -> None:
    deadline = time.monotonic() + limit
    while os.getloadavg()[0] >= load and time.monotonic() < deadline:
        time.sleep(5)
    now = os.getloadavg()[0]
    if now >= load:
        log(f"machine still busy after {limit:.0f}s (load {now:.2f}); measuring anyway")


def check_targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for key, op, limit, unit, label, cpu_key in TARGETS:
        value = results.get(key)
        met = None if value is None else (value <= limit if op == "<=" else value >= limit)
        rows.append(
            {
                "key": key,
                "label": label,
                "value": value,
                "cpu_value": results.get(cpu_key) if cpu_key else None,
                "target": f"{op} {limit:g} {unit}",
                "met": met,
            }
        )
    return rows


def bench_size(size: int, args: argparse.Namespace, out: Path) -> dict[str, Any]:
    try:
        from vault_brain.app.memory.vault import Vault
    except ImportError as exc:
        raise BenchError(
            f"cannot import vault_brain ({exc}); run with the project's venv "
            "(.venv/bin/python) after `make venv`"
        ) from exc

    vault = prepare_vault(out, size, args.seed, args.regenerate)
    results: dict[str, Any] = {
        "size": size,
        "seed": args.seed,
        "vault": str(vault.root),
        "generated_s": (
            round(vault.generated_seconds, 3) if vault.generated_seconds is not None else None
        ),
    }
    timeout = 120 + size * 0.03
    log("timing vb --help ...")
    results.update(measure_help(args.help_runs))
    index_runs = args.index_runs or (3 if size <= 10_000 else 1)
    log(f"full index x{index_runs} ...")
    results.update(measure_index(vault, index_runs, timeout))
    queries = gen_vault.sample_queries(args.queries, seed=7)
    edits = Edits(vault)
    v = Vault.open(vault.root)
    try:
        v.reconcile()
        log("warm searches ...")
        results.update(measure_warm(v, queries))
        log("reconcile after one change ...")
        results.update(measure_reconcile(v, vault, edits, args.reconcile_rounds))
        edits.restore()
        v.index.reconcile()
        log("cold process searches ...")
        results.update(measure_cold(vault, out, queries, args.cold_runs, timeout))
        if args.watch_rounds > 0:
            log(f"edit-to-searchable under vb watch x{args.watch_rounds} ...")
            results.update(
                measure_watch(
                    v, vault, edits, args.watch_rounds, args.watch_timeout, startup_timeout=timeout
                )
            )
    finally:
        edits.restore()  # notes back byte for byte: the cached vault is clean again
        vault.dirty.unlink(missing_ok=True)
        with contextlib.suppress(Exception):
            v.index.reconcile()
        v.index.close()
    results["targets"] = check_targets(results)
    return results


def format_table(results: dict[str, Any]) -> str:
    size = results["size"]
    rows: list[tuple[str, str, str, str, str]] = []
    for row in results["targets"]:
        unit = row["target"].split()[-1]
        value, cpu = row["value"], row["cpu_value"]
        shown = "-" if value is None else f"{value:g} {unit}"
        cpu_shown = "-" if cpu is None else f"{cpu:g} {unit}"
        met = "n/a" if row["met"] is None else ("met" if row["met"] else "NOT met")
        rows.append((row["label"], shown, cpu_shown, row["target"], met))
    w, p = "watch_edit_to_searchable", "index_parse_only"
    cpu_cold: dict[str, float] = results.get("cold_cpu_ms") or {}
    extra = [
        ("index notes/s", f"{results.get('index_notes_per_s', '-')}"),
        ("index time inside vb (s)", f"{results.get('index_full_in_vb_s', '-')}"),
        ("  read+parse all notes, in-process cpu (s)", f"{results.get(f'{p}_cpu_s', '-')}"),
        ("reconcile, nothing changed (ms)", f"{results.get('reconcile_no_change_ms', '-')}"),
        ("warm search p95 (ms)", f"{results.get('warm_search_p95_ms', '-')}"),
        ("cold vb search (ms)", f"{results.get('cold_vb_search_ms', '-')}"),
        ("cold minimal Whoosh (ms)", f"{results.get('cold_min_whoosh_ms', '-')}"),
        ("cold minimal FTS5 (ms)", f"{results.get('cold_fts5_ms', '-')}"),
        ("cold cpu ms (vb, whoosh, fts5)", ", ".join(map(str, cpu_cold.values())) or "-"),
        ("FTS5 build (s)", f"{results.get('fts5_build_s', '-')}"),
        *[
            (f"  cold vb: {name} (ms)", f"{value:g}")
            for name, value in (results.get("cold_vb_breakdown_ms") or {}).items()
        ],
        ("watch edit-to-searchable p50 (ms)", f"{results.get(f'{w}_p50_ms', '-')}"),
        ("watch batch time in vb p50 (ms)", f"{results.get('watch_batch_p50_ms', '-')}"),
        ("watch batch time in vb p95 (ms)", f"{results.get('watch_batch_p95_ms', '-')}"),
        ("vb watch resident memory, peak (MB)", f"{results.get('watch_peak_rss_mb', '-')}"),
        ("python -c pass (ms)", f"{results.get('python_startup_ms', '-')}"),
    ]
    width = max(len(label) for label, *_ in [*rows, *extra])
    lines = [
        f"== {size} notes (targets are for 10k notes; judged on wall time) ==",
        f"{'measure'.ljust(width)}  {'wall':>12}  {'cpu':>12}  {'target':>10}  result",
    ]
    lines += [f"{a.ljust(width)}  {b:>12}  {c:>12}  {d:>10}  {e}" for a, b, c, d, e in rows]
    lines += [f"{a.ljust(width)}  {b:>12}" for a, b in extra]
    return "\n".join(lines)


def parse_sizes(text: str) -> list[int]:
    sizes = []
    for part in text.split(","):
        part = part.strip().lower()
        if not part:
            continue
        mult = 1000 if part.endswith("k") else 1
        try:
            value = int(part.rstrip("k")) * mult
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a size: {part!r}") from None
        if value < 10:
            raise argparse.ArgumentTypeError(f"size {value} is too small (>= 10 notes)")
        sizes.append(value)
    if not sizes:
        raise argparse.ArgumentTypeError("give at least one size")
    return sizes


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="vault_brain search-speed benchmark")
    parser.add_argument(
        "--sizes",
        type=parse_sizes,
        default=[1000, 10_000],
        help="comma-separated note counts, e.g. 1000,10000,50000 (or 1k,10k)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=REPO / "bench-out",
        help="results and cached vaults (default: bench-out/)",
    )
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--queries", type=int, default=200, help="warm queries (default 200)")
    parser.add_argument("--cold-runs", type=int, default=15, help="cold process runs per engine")
    parser.add_argument("--help-runs", type=int, default=20, help="`vb --help` runs")
    parser.add_argument(
        "--index-runs",
        type=int,
        default=0,
        help="full index runs (default: 3 up to 10k notes, else 1)",
    )
    parser.add_argument("--reconcile-rounds", type=int, default=7)
    parser.add_argument("--watch-rounds", type=int, default=20, help="0 skips the watch measure")
    parser.add_argument(
        "--watch-timeout",
        type=float,
        default=10.0,
        help="seconds to wait for one edit to become searchable",
    )
    parser.add_argument(
        "--skip-if-index-over",
        type=float,
        default=180.0,
        help="skip larger sizes once a full index took longer than this (s)",
    )
    parser.add_argument("--regenerate", action="store_true", help="ignore cached vaults")
    parser.add_argument(
        "--wait-quiet",
        type=float,
        default=0.0,
        help="before each size, wait up to this many seconds for the 1-min load average "
        "to drop under --quiet-load (other work on the machine skews every number)",
    )
    parser.add_argument("--quiet-load", type=float, default=0.5)
    add_record_option(parser)
    args = parser.parse_args(argv)
    # Started in the background SIGINT may be ignored; make both signals unwind through the
    # `finally` blocks that stop the watcher and put edited notes back.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _interrupt)
    for name in ("queries", "cold_runs", "help_runs", "reconcile_rounds"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1")
    out: Path = args.out.expanduser().resolve()
    out.mkdir(parents=True, exist_ok=True)
    machine = machine_info()
    exe = os.path.relpath(sys.executable, Path.cwd())
    exe = exe if not exe.startswith("..") else sys.executable
    command = " ".join([exe, *sys.argv] if argv is None else [exe, sys.argv[0], *argv])
    log(f"python {machine['python']}, {machine['cpus']} cpus, whoosh {machine['whoosh']}")
    summary: list[dict[str, Any]] = []
    for size in sorted(args.sizes):
        if summary and summary[-1].get("index_full_s", 0) > args.skip_if_index_over:
            log(
                f"skipping {size}: the full index of {summary[-1]['size']} notes took "
                f"{summary[-1]['index_full_s']}s (> {args.skip_if_index_over:g}s)"
            )
            continue
        if args.wait_quiet > 0:
            wait_quiet(args.wait_quiet, args.quiet_load)
        load_start = os.getloadavg()[0]
        started = time.perf_counter()
        try:
            results = bench_size(size, args, out)
        except BenchError as exc:
            print(f"bench_search: error at {size} notes: {exc}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            print("bench_search: interrupted", file=sys.stderr)
            return 130
        results.update(
            {
                "command": command,
                "machine": machine,
                "date": dt.datetime.now().astimezone().replace(microsecond=0).isoformat(),
                "bench_seconds": round(time.perf_counter() - started, 1),
                "loadavg_1min_start_end": [round(load_start, 2), round(os.getloadavg()[0], 2)],
            }
        )
        path = out / f"search-{size}.json"
        path.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
        if args.record:
            save_record(f"search-{size}", results, argv=argv)
        print(format_table(results), flush=True)
        print(f"(written to {path})\n", flush=True)
        summary.append(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
