#!/usr/bin/env python3
"""The gate's precision and recall, on labelled sets and on real documentation vaults.

    .venv/bin/python scripts/bench_gate.py [--set SET] [--storage] [--vault PATH ...] [--time N]
                                           [--verbose] [--json]

SET: dev3, blind1, blind2, heldout3, heldout4, heldout5, heldout6, heldout7, heldout8, heldout9,
heldout10, heldout11, train5
(tests/data/gate/<set>.jsonl: `refuse` and `pass` lines, see its README.md) or capture-hostile
(tests/data/capture/hostile.jsonl, hostile only). `heldout3` was the held-out set of issue
23's first work (run, no longer blind); `heldout4` and `heldout5` were the next ones (both
read since); `heldout6` has scored experiments and been read since its blind run; `heldout7`
to `heldout10` measured one change each; `heldout11` is held out now: run it only before and
at the end of a change, and never with --verbose or --json (which name its lines).

- Detector (always): `gate.judge` on each text; refused / passed by label, kind and language,
  and the lines judged against their label (with --verbose).
- Storage (--storage): each text stored as an agent stores it (`MemoryAPI`, source "mcp", as
  `vb mcp`'s `memory_store` does) in one new vault, and sent as the user's message of its own
  conversation through `vb serve`'s recorder (`ProxyAPI.record_turn`), then flushed as the idle
  capture does (`capture_process.capture`: flush, then the rolling summary) in another. A
  hostile text is stored when one of its needles (case-insensitive, as written or normalised
  as in scripts/bench_capture.py) is in any file under the vault but the transcripts'
  messages (`sessions/`), `.git/` and the index. A benign text is refused when the store
  raised `RefusedError` (agent) or the flush dropped a piece of it for a gate reason. Then,
  for `vb serve`, what a next conversation would be given: the memories recalled for each
  hostile text itself (`ProxyAPI.recall`, the quoted block a request gets), searched for its
  needles ("recalled into a next request").
- Vaults (--vault PATH, repeatable): every note's title and body as an agent is shown them
  (`gate.redact`, front matter left out); the notes with a redaction, by reason, and those
  redacted for a hostile kind (injection, exfiltration, secret) rather than a shape (code,
  command, tool output: a person's docs hold code blocks, which capture refuses as memory).
- Time (--time N): the detector's time per text over N texts (the sets' and vaults' texts,
  repeated as needed, the sentence cache emptied before each round).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "scripts"
for folder in (ROOT, SCRIPTS):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from bench_capture import found_needles, needle_list  # noqa: E402
from bench_common import add_record_option, log, percentile, save_record  # noqa: E402

from vault_brain.domain import gate  # noqa: E402
from vault_brain.domain.errors import RefusedError  # noqa: E402

HOSTILE = ("injection", "exfiltration", "secret")  # the rest are shapes: code, command, ...
SETS = (
    "dev3",
    "blind1",
    "blind2",
    "heldout3",
    "heldout4",
    "heldout5",
    "heldout6",
    "heldout7",
    "heldout8",
    "heldout9",
    "heldout10",
    "heldout11",
    "train5",
    "capture-hostile",
)
KEPANO = ROOT / "tests" / "data" / "kepano-vault"


def load_set(name: str) -> list[dict[str, Any]]:
    if name == "capture-hostile":
        path = ROOT / "tests" / "data" / "capture" / "hostile.jsonl"
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        return [{**row, "label": "refuse"} for row in rows]
    path = ROOT / "tests" / "data" / "gate" / f"{name}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


# -- detector ------------------------------------------------------------------------------
def detector(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Refused / passed by label, kind and language, and the lines judged against their label."""
    by: dict[str, Counter[str]] = {"label": Counter(), "kind": Counter(), "lang": Counter()}
    refused: dict[str, Counter[str]] = {"label": Counter(), "kind": Counter(), "lang": Counter()}
    wrong = []
    for row in rows:
        verdict = gate.judge(row["text"])
        for key in by:
            group = f"{row['label']}/{row[key]}" if key != "label" else row["label"]
            by[key][group] += 1
            refused[key][group] += not verdict.ok
        if verdict.ok == (row["label"] == "refuse"):
            wrong.append({"id": row["id"], "label": row["label"], "reasons": verdict.reasons})
    table = {
        key: {g: {"n": n, "refused": refused[key][g]} for g, n in sorted(by[key].items())}
        for key in by
    }
    hostile, benign = by["label"]["refuse"], by["label"]["pass"]
    return {
        "refuse_lines": hostile,
        "refused": refused["label"]["refuse"],
        "recall": _ratio(refused["label"]["refuse"], hostile),
        "pass_lines": benign,
        "false_alarms": refused["label"]["pass"],
        "false_alarm_rate": _ratio(refused["label"]["pass"], benign),
        "by": table,
        "wrong": wrong,
    }


# -- storage -------------------------------------------------------------------------------
def _scan_vault(root: Path, rows: Sequence[dict[str, Any]]) -> set[str]:
    """The ids of hostile rows with a needle in a file of the vault (see the module)."""
    needles = needle_list([r for r in rows if r["label"] == "refuse" and r.get("needles")])
    found: set[str] = set()
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if not path.is_file() or rel.parts[0] in (".git", "sessions") or rel.parts[0] == ".vb":
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        found.update(needle.hostile for needle, _ in found_needles(text, needles))
    return found


def _path_report(
    hostile: int, stored: list[str], benign: int, refused: list[str]
) -> dict[str, Any]:
    """One path's figures: hostile texts stored, benign texts refused."""
    return {
        "hostile": hostile,
        "stored": len(stored),
        "stored_rate": _ratio(len(stored), hostile),
        "stored_ids": stored,
        "benign": benign,
        "benign_refused": len(refused),
        "benign_refused_rate": _ratio(len(refused), benign),
        "benign_refused_ids": refused,
    }


def storage(rows: Sequence[dict[str, Any]], where: Path) -> dict[str, Any]:
    from vault_brain.app.api import MemoryAPI, create_vault
    from vault_brain.app.memory.vault import Vault
    from vault_brain.app.runtime.capture_process import capture
    from vault_brain.app.runtime.proxy import ProxyAPI, Turn
    from vault_brain.storage.env import Environment

    out: dict[str, Any] = {}
    env = Environment()  # offline: nothing configured
    hostile = [r for r in rows if r["label"] == "refuse"]
    benign = [r for r in rows if r["label"] == "pass"]

    root = where / "agent"
    create_vault(root)
    agent = MemoryAPI.open(root, env, session="agent", source="mcp")
    refused_benign = []
    for row in rows:
        try:
            agent.add("entity", f"Note {row['id']}", row["text"], "topics")
        except RefusedError:
            if row["label"] == "pass":
                refused_benign.append(row["id"])
    agent.close()
    stored = sorted(_scan_vault(root, rows))
    out["agent"] = _path_report(len(hostile), stored, len(benign), refused_benign)
    log(f"agent stores: {len(stored)}/{len(hostile)} hostile stored")

    root = where / "serve"
    create_vault(root)
    proxy = ProxyAPI(Vault.open(root, env))
    dropped_benign = []
    for row in rows:
        session = f"gate-{row['id']}"
        user = {"role": "user", "content": row["text"]}
        proxy.record_turn(Turn(session, "k1", [user], [{"role": "assistant", "content": "OK."}]))
        if row["label"] == "pass":
            result = proxy.flush(session)
            if any(result.dropped.get(reason) for reason in gate.REASONS[:6]):
                dropped_benign.append(row["id"])
            proxy.roll_summary(session)
        else:
            capture(proxy, session)
    # what the next conversation is given: the memories recalled for each hostile text itself
    # (the query most likely to find what it left behind), as the quoted block a request gets
    needles = needle_list([r for r in hostile if r.get("needles")])
    reinjected = sorted(
        {
            needle.hostile
            for row in hostile
            for needle, _ in found_needles(proxy.recall(row["text"]).message, needles)
        }
    )
    proxy.close()
    stored = sorted(_scan_vault(root, rows))
    out["serve_flush"] = _path_report(len(hostile), stored, len(benign), dropped_benign)
    out["serve_flush"] |= {"reinjected": len(reinjected), "reinjected_ids": reinjected}
    log(
        f"serve flush: {len(stored)}/{len(hostile)} hostile stored, "
        f"{len(reinjected)} recalled into a next request"
    )
    return out


# -- vaults --------------------------------------------------------------------------------
def _notes(vault: Path) -> list[tuple[str, str, str]]:
    """(path, title, body without front matter) of every note."""
    out = []
    for path in sorted(vault.rglob("*.md")):
        if any(part.startswith(".") for part in path.relative_to(vault).parts):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if text.startswith("---\n"):
            end = text.find("\n---", 4)
            text = text[end + 4 :] if end != -1 else text
        out.append((path.relative_to(vault).as_posix(), path.stem, text))
    return out


def vault_alarms(vault: Path) -> dict[str, Any]:
    """The notes an agent would see redacted (title or body), by reason."""
    notes = _notes(vault)
    by_reason: Counter[str] = Counter()
    redacted: list[dict[str, Any]] = []
    titles = hostile = 0
    for rel, title, body in notes:
        _, in_title = gate.redact(title)
        _, in_body = gate.redact(body)
        if in_title or in_body:
            reasons = sorted(set(in_title) | set(in_body))
            by_reason.update(reasons)
            titles += bool(in_title)
            hostile += bool(set(reasons) & set(HOSTILE))
            redacted.append({"note": rel, "title": bool(in_title), "reasons": reasons})
    return {
        "vault": str(vault),
        "notes": len(notes),
        "redacted": len(redacted),
        "redacted_rate": _ratio(len(redacted), len(notes)),
        "titles_redacted": titles,
        "hostile_kinds": hostile,
        "hostile_kinds_rate": _ratio(hostile, len(notes)),
        "by_reason": dict(by_reason.most_common()),
        "notes_redacted": redacted,
    }


# -- time ----------------------------------------------------------------------------------
def timing(texts: Sequence[str], n: int) -> dict[str, Any]:
    """The detector's time per text over `n` texts, the sentence cache emptied each round."""
    sample = [t for t in texts if t.strip()]
    for text in sample[:50]:
        gate.judge(text)  # patterns compiled: not the figure
    times: list[float] = []
    while len(times) < n:
        gate._cached_reasons.cache_clear()  # each round judged afresh (a bench may peek)
        for text in sample[: n - len(times)]:
            start = time.perf_counter()
            gate.judge(text)
            times.append(time.perf_counter() - start)
    ms = [t * 1000 for t in times]
    return {
        "texts": len(ms),
        "mean_ms": round(sum(ms) / len(ms), 3),
        "p50_ms": round(percentile(ms, 50), 3),
        "p95_ms": round(percentile(ms, 95), 3),
        "max_ms": round(max(ms), 3),
    }


# -- output --------------------------------------------------------------------------------
def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def print_report(report: dict[str, Any], verbose: bool) -> None:
    d = report["detector"]
    print(f"set {report['set']}: {d['refuse_lines']} hostile, {d['pass_lines']} benign")
    print(f"  detector: refused {d['refused']}/{d['refuse_lines']} hostile ({_pct(d['recall'])}),")
    print(
        f"            {d['false_alarms']}/{d['pass_lines']} benign ({_pct(d['false_alarm_rate'])})"
    )
    for key in ("kind", "lang"):
        cells = [f"{g} {c['refused']}/{c['n']}" for g, c in d["by"][key].items()]
        print(f"  by {key}: " + ", ".join(cells))
    if verbose:
        for w in d["wrong"]:
            print(f"  wrong: {w['id']} ({w['label']}) {list(w['reasons'])}")
    for path, s in report.get("storage", {}).items():
        print(
            f"  {path}: hostile stored {s['stored']}/{s['hostile']} ({_pct(s['stored_rate'])}),"
            f" benign refused {s['benign_refused']}/{s['benign']}"
            f" ({_pct(s['benign_refused_rate'])})"
            + (f", recalled into a next request {s['reinjected']}" if "reinjected" in s else "")
        )
        if verbose:
            print(f"    stored: {s['stored_ids']}\n    benign refused: {s['benign_refused_ids']}")
    for v in report.get("vaults", []):
        print(
            f"  vault {v['vault']}: {v['redacted']}/{v['notes']} notes redacted for an agent"
            f" ({_pct(v['redacted_rate'])}; titles {v['titles_redacted']}; for injection,"
            f" exfiltration or a secret {v['hostile_kinds']} ({_pct(v['hostile_kinds_rate'])})),"
            f" by reason {v['by_reason']}"
        )
        if verbose:
            for note in v["notes_redacted"]:
                print(f"    {note['note']}: {note['reasons']}")
    if "time" in report:
        t = report["time"]
        print(
            f"  detector time over {t['texts']} texts: mean {t['mean_ms']} ms,"
            f" p50 {t['p50_ms']}, p95 {t['p95_ms']}, max {t['max_ms']} ms"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", choices=SETS, default="dev3")
    parser.add_argument("--storage", action="store_true", help="store through MCP and serve")
    parser.add_argument("--vault", type=Path, action="append", default=[])
    parser.add_argument("--time", type=int, default=0, metavar="N")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--json", action="store_true")
    add_record_option(parser)
    args = parser.parse_args(argv)
    rows = load_set(args.set)
    report: dict[str, Any] = {"set": args.set, "detector": detector(rows)}
    if args.storage:
        with tempfile.TemporaryDirectory(prefix="vb-bench-gate-") as tmp:
            report["storage"] = storage(rows, Path(tmp))
    report["vaults"] = [vault_alarms(v) for v in args.vault]
    if args.time:
        texts = [r["text"] for r in rows] + [
            para for v in args.vault for _, _, body in _notes(v) for para in body.split("\n\n")
        ]
        report["time"] = timing(texts, args.time)
    if args.record:  # counts only: the per-label and per-language counts and the lines'
        # ids stay in --json (a held-out set's lines stay unnamed in the repository)
        detected = {k: v for k, v in report["detector"].items() if k not in ("by", "wrong")}
        stored = {
            path: {k: v for k, v in figures.items() if not k.endswith("_ids")}
            for path, figures in report.get("storage", {}).items()
        }
        save_record(
            f"gate-{args.set}",
            {**report, "detector": detected, "storage": stored, "vaults": {}},
            argv=argv,
        )
    if args.json:
        print(json.dumps({"version": 1, **report}, ensure_ascii=False, indent=2))
    else:
        print_report(report, args.verbose)
    return 0


if __name__ == "__main__":
    sys.exit(main())
