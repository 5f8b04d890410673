#!/usr/bin/env python3
"""Retrieval quality of `vb search` on two public data sets.

- LoCoMo (snap-research, CC BY-NC 4.0): evidence recall@5/10/25/50 per question category.
  One vault per conversation, one episode note per dialog turn, searched by `vb` itself.
- BEIR SciFact (claims CC BY 4.0, abstracts ODC-By 1.0): nDCG@10 and Recall@100 on the 300
  test queries, one note per abstract (title in front matter, abstract as body).

Every note is written as a plain file, indexed with `vb --vault DIR index` and searched with
the batch mode `vb --vault DIR search --queries FILE -k K`: one `vb` process per vault and
ranking variant. Variants only edit the generated vault's STRATEGY.md front matter.

    .venv/bin/python scripts/bench_retrieval.py [--only locomo|scifact] [--out bench-out/]
                                                 [--k1 X --b Y] [--rebuild]
                                                 [--split tune|test|all] [--variants A,B]
                                                 [--hybrid KEY=V,KEY=V ...]

Splits (issue 14: tune on one part, report the other): LoCoMo conversations 0-4 and SciFact's
train queries are the tuning split; conversations 5-9 and SciFact's test queries are held out.
`--split tune` runs the tuning split only (what a tuning loop may look at), `--split test` the
held-out one only, `all` (the default) both, reported separately and, for LoCoMo, in full.
The hybrid variants need the embeddings extra (`pip install -e '.[embeddings]'`).

Vaults are cached under --out (git-ignored); --rebuild regenerates them. The data is read in
place from ../shared/bench/ (or --data / $VB_BENCH_DATA) and never copied into the project.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from bench_common import add_record_option, save_record, set_strategy  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "bench"
VB = [sys.executable, "-m", "vault_brain"]
# Bump when the way notes are written changes: cached vaults are then rebuilt.
NOTE_FORMAT = 2

LOCOMO_KS = (5, 10, 25, 50)
LOCOMO_CATEGORIES = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
# Plain BM25, one turn per document, k1 0.9 b 0.4 (see ../shared/bench/README.md).
LOCOMO_TARGET = {5: 55.5, 10: 62.7, 25: 70.9, 50: 76.2}
# LoCoMo paper (Maharana et al., ACL 2024), Table 3, DRAGON, one dialog turn per unit.
LOCOMO_DRAGON = {5: 56.7, 10: 66.2, 25: 76.7, 50: 82.7}
SCIFACT_TARGET_NDCG10 = 0.66
SCIFACT_HYBRID_TARGET_NDCG10 = 0.70  # issue 14: with the embeddings extra, on test
SCIFACT_REFERENCE = {"BEIR BM25": (0.665, None), "Anserini BM25 k1 0.9 b 0.4": (0.679, 0.925)}

# name -> STRATEGY.md keys changed from the shipped template (empty: as shipped).
BASE_VARIANTS: dict[str, dict[str, float | str]] = {
    "shipped": {},
    "recency_weight=0": {"recency_weight": 0},
    "k1=0.9 b=0.4": {"bm25_k1": 0.9, "bm25_b": 0.4},
    "k1=0.9 b=0.4 recency_weight=0": {"bm25_k1": 0.9, "bm25_b": 0.4, "recency_weight": 0},
    "hybrid": {"search_mode": "hybrid"},
}
# The tuning split: LoCoMo conversations 0-4 (by position in locomo10.json); 5-9 are held out.
LOCOMO_TUNE = range(5)
SPLIT_NAMES = {"tune": "tuning split", "test": "held out"}


# ---------------------------------------------------------------------------
# small helpers


def log(msg: str) -> None:
    sys.stderr.write(f"[bench_retrieval] {msg}\n")
    sys.stderr.flush()


def vb(vault: Path, *args: str) -> str:
    """Run one `vb --vault VAULT ...` command; returns its stdout, fails loudly."""
    cmd = [*VB, "--vault", str(vault), *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if proc.returncode != 0:
        raise SystemExit(
            f"command failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr.strip()}"
        )
    return proc.stdout


def yaml_str(value: str) -> str:
    """A JSON string is a valid YAML double-quoted scalar: safe for any text."""
    return json.dumps(value, ensure_ascii=False)


def write_note(path: Path, meta: dict[str, str], body: str) -> None:
    lines = ["---", *(f"{k}: {v}" for k, v in meta.items()), "---", body.rstrip() + "\n"]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines), encoding="utf-8")


def file_stamp(path: Path) -> list[int]:
    st = path.stat()
    return [st.st_size, st.st_mtime_ns]


def read_stamp(vault: Path) -> Any:
    try:
        return json.loads((vault.parent / f"{vault.name}.stamp.json").read_text())
    except (OSError, ValueError):
        return None


def write_stamp(vault: Path, stamp: Any) -> None:
    (vault.parent / f"{vault.name}.stamp.json").write_text(json.dumps(stamp))


def fresh_vault(vault: Path, stamp: Any, rebuild: bool) -> bool:
    """True if the cached vault can be reused; otherwise it is removed and re-initialised."""
    if not rebuild and vault.is_dir() and read_stamp(vault) == stamp:
        return True
    if vault.exists():
        shutil.rmtree(vault)
    (vault.parent / f"{vault.name}.stamp.json").unlink(missing_ok=True)
    vault.parent.mkdir(parents=True, exist_ok=True)
    vb(vault, "init", "--json")
    return False


def shipped_strategy(out: Path) -> str:
    """STRATEGY.md exactly as `vb init` writes it today: every variant starts from it."""
    scratch = out / ".init-scratch"
    shutil.rmtree(scratch, ignore_errors=True)
    try:
        vb(scratch, "init", "--json")
        return (scratch / "STRATEGY.md").read_text(encoding="utf-8")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def index_vault(vault: Path, stamp: Any) -> dict[str, Any]:
    result = json.loads(vb(vault, "index", "--json"))
    write_stamp(vault, stamp)
    return result


def use_variant(vault: Path, shipped: str, changes: dict[str, float | str]) -> None:
    """Set the variant's STRATEGY.md keys; a hybrid variant then embeds every note with
    `vb index` first (a search embeds at most a few notes before answering, so without it
    the first queries of a new vault would be ranked by BM25 alone)."""
    set_strategy(vault, shipped, changes)
    if changes.get("search_mode") == "hybrid":
        vb(vault, "index")


def run_batch(vault: Path, queries_file: Path, k: int) -> dict[str, list[str]]:
    """`vb search --queries` -> query id -> ranked note ids."""
    out = vb(vault, "search", "--queries", str(queries_file), "-k", str(k))
    ranked: dict[str, list[str]] = {}
    for line in out.splitlines():
        if line.strip():
            item = json.loads(line)
            ranked[str(item["id"])] = [str(hit["id"]) for hit in item["results"]]
    return ranked


def write_queries(path: Path, queries: Iterable[tuple[str, str]]) -> None:
    path.write_text(
        "".join(
            json.dumps({"id": qid, "query": q}, ensure_ascii=False) + "\n" for qid, q in queries
        ),
        encoding="utf-8",
    )


def parse_value(text: str) -> float | str:
    try:
        return float(text)
    except ValueError:
        return text


def parse_variants(args: argparse.Namespace) -> dict[str, dict[str, float | str]]:
    variants = dict(BASE_VARIANTS)
    if args.k1 is not None or args.b is not None:
        custom: dict[str, float | str] = {}
        if args.k1 is not None:
            custom["bm25_k1"] = args.k1
        if args.b is not None:
            custom["bm25_b"] = args.b
        name = " ".join(f"{k.removeprefix('bm25_')}={v:g}" for k, v in custom.items())
        variants[name] = custom
    if args.variants:
        wanted = [v.strip() for v in args.variants.split(",") if v.strip()]
        unknown = [v for v in wanted if v not in variants]
        if unknown:
            raise SystemExit(f"unknown variants {unknown}; known: {sorted(variants)}")
        variants = {v: variants[v] for v in variants if v in wanted}
    for spec in args.hybrid or []:
        changes: dict[str, float | str] = {"search_mode": "hybrid"}
        for pair in filter(None, spec.split(",")):
            key, sep, value = pair.partition("=")
            if not sep:
                raise SystemExit(f"--hybrid: expected KEY=VALUE, not {pair!r}")
            changes[key.strip()] = parse_value(value.strip())
        variants[f"hybrid {spec}"] = changes
    return variants


# ---------------------------------------------------------------------------
# LoCoMo

_EVIDENCE = re.compile(r"^D:?(\d+):(\d+)$")
_SESSION = re.compile(r"^session_(\d+)$")


def normalize_evidence(raw: Iterable[Any], stats: dict[str, int]) -> list[str]:
    """Dirty evidence strings -> canonical `D<session>:<turn>` ids (deduplicated, order kept).

    Splits `"D8:6; D9:17"` and `"D9:1 D4:4"`, reads `D:11:26` as D11:26 and `D30:05` as D30:5,
    and drops tokens that are not dialog ids at all (a bare `D`). Ids that do not exist in the
    conversation are kept: they can never be retrieved and count as misses.
    """
    out: list[str] = []
    for item in raw:
        tokens = [t for t in re.split(r"[;,\s]+", str(item)) if t]
        if len(tokens) > 1:
            stats["split"] += 1
        for token in tokens:
            match = _EVIDENCE.match(token)
            if not match:
                stats["dropped"] += 1
                continue
            canon = f"D{int(match.group(1))}:{int(match.group(2))}"
            if canon != token:
                stats["rewritten"] += 1
            if canon not in out:
                out.append(canon)
    return out


def parse_session_date(text: str | None) -> dt.datetime | None:
    """'1:56 pm on 8 May, 2023' -> datetime(2023, 5, 8, 13, 56)."""
    if not text:
        return None
    cleaned = " ".join(str(text).replace(",", " ").split())
    for fmt in ("%I:%M %p on %d %B %Y", "%I:%M%p on %d %B %Y", "%d %B %Y"):
        try:
            return dt.datetime.strptime(cleaned, fmt)
        except ValueError:
            continue
    return None


def locomo_sessions(conv: dict[str, Any]) -> list[tuple[int, list[dict[str, Any]], Any]]:
    sessions = []
    for key, turns in conv.items():
        match = _SESSION.match(key)
        if match and isinstance(turns, list):
            n = int(match.group(1))
            sessions.append((n, turns, conv.get(f"session_{n}_date_time")))
    return sorted(sessions, key=lambda s: s[0])


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


def build_locomo_vault(
    sample: dict[str, Any], vault: Path, stamp: Any, rebuild: bool
) -> tuple[dict[str, str], dict[str, Any]]:
    """One episode note per dialog turn; returns note id -> dia_id and build info."""
    sample_id = str(sample["sample_id"])
    id_to_dia: dict[str, str] = {}
    notes: list[tuple[Path, dict[str, str], str]] = []
    undated = 0
    for n, turns, when_text in locomo_sessions(sample.get("conversation", {})):
        when = parse_session_date(when_text)
        if when is None:
            undated += 1
        for turn in turns:
            dia_id = str(turn.get("dia_id", "")).strip()
            if not dia_id:
                continue
            note_id = f"locomo-{slug(sample_id)}-{slug(dia_id)}"
            id_to_dia[note_id] = dia_id
            speaker = str(turn.get("speaker", "")).strip() or "unknown"
            body = f"{speaker}: {str(turn.get('text', '')).strip()}"
            caption = str(turn.get("blip_caption") or "").strip()
            if caption:
                body += f"\n\n[{speaker} shared an image: {caption}]"
            month = when.strftime("%Y-%m") if when else "undated"
            meta = {
                "id": yaml_str(note_id),
                "type": "episode",
                "category": "general",
                "title": yaml_str(f"{speaker}, session {n} ({dia_id})"),
            }
            if when:
                meta["created"] = when.isoformat(timespec="seconds")
            # vb indexes a file name that differs from the title as a search name, so the
            # name is made of tokens no question contains ("conv26-d1t3", not "conv-26-d1-3")
            name = f"{slug(sample_id).replace('-', '')}-{slug(dia_id).replace('-', 't')}.md"
            notes.append((vault / "episodes" / month / name, meta, body))
    info: dict[str, Any] = {"notes": len(notes), "undated_sessions": undated, "cached": True}
    if not fresh_vault(vault, stamp, rebuild):
        for path, meta, body in notes:
            write_note(path, meta, body)
        info["index"] = index_vault(vault, stamp)
        info["cached"] = False
    return id_to_dia, info


def locomo_scores(
    questions: list[dict[str, Any]], ranked: dict[str, list[str]], id_to_dia: dict[str, str]
) -> None:
    """Adds per-question recall@k (official rule) to each question dict."""
    for q in questions:
        dias = [id_to_dia.get(i) for i in ranked.get(q["qid"], [])]
        q["recall"] = {}
        for k in LOCOMO_KS:
            if not q["evidence"]:
                q["recall"][k] = 1.0
                continue
            top = set(dias[:k])
            q["recall"][k] = sum(e in top for e in q["evidence"]) / len(q["evidence"])


def summarize_locomo(questions: list[dict[str, Any]]) -> dict[str, Any]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for q in questions:
        groups.setdefault(LOCOMO_CATEGORIES.get(q["category"], f"cat-{q['category']}"), []).append(
            q
        )
    order = [c for c in LOCOMO_CATEGORIES.values() if c in groups]
    order += sorted(c for c in groups if c not in order)
    out: dict[str, Any] = {}
    for name, qs in [*((c, groups[c]) for c in order), ("overall", questions)]:
        out[name] = {
            "n": len(qs),
            **{
                f"R@{k}": round(100 * sum(q["recall"][k] for q in qs) / max(1, len(qs)), 2)
                for k in LOCOMO_KS
            },
        }
    return out


def bench_locomo(
    args: argparse.Namespace, variants: dict[str, dict[str, float | str]]
) -> dict[str, Any]:
    data_file = args.data / "locomo" / "locomo10.json"
    samples = json.loads(data_file.read_text(encoding="utf-8"))
    base = args.out / "locomo"
    stamp = {"format": NOTE_FORMAT, "data": file_stamp(data_file)}
    ev_stats = {"split": 0, "rewritten": 0, "dropped": 0, "missing": 0, "empty": 0}
    jobs = []
    questions_all: list[dict[str, Any]] = []
    build: dict[str, Any] = {}
    started = time.perf_counter()
    for position, sample in enumerate(samples):
        split = "tune" if position in LOCOMO_TUNE else "test"
        if args.split not in ("all", split):
            continue
        sample_id = str(sample["sample_id"])
        vault = base / slug(sample_id)
        id_to_dia, info = build_locomo_vault(sample, vault, stamp, args.rebuild)
        build[sample_id] = info
        existing = set(id_to_dia.values())
        questions = []
        for n, qa in enumerate(sample.get("qa", [])):
            evidence = normalize_evidence(qa.get("evidence") or [], ev_stats)
            ev_stats["missing"] += sum(e not in existing for e in evidence)
            ev_stats["empty"] += not evidence
            questions.append(
                {
                    "qid": f"{sample_id}#{n}",
                    "question": str(qa.get("question", "")),
                    "category": qa.get("category"),
                    "evidence": evidence,
                    "split": split,
                }
            )
        qfile = base / f"{slug(sample_id)}.queries.jsonl"
        write_queries(qfile, ((q["qid"], q["question"]) for q in questions))
        questions_all.extend(questions)
        jobs.append((vault, qfile, questions, id_to_dia))
    log(
        f"locomo: {len(samples)} vaults ready in {time.perf_counter() - started:.1f}s "
        f"({sum(not b['cached'] for b in build.values())} built)"
    )

    results: dict[str, Any] = {}
    for name, changes in variants.items():
        started = time.perf_counter()
        for vault, *_ in jobs:
            use_variant(vault, args.shipped, changes)

        def run(job: tuple[Path, Path, list[dict[str, Any]], dict[str, str]]) -> None:
            vault, qfile, questions, id_to_dia = job
            locomo_scores(questions, run_batch(vault, qfile, max(LOCOMO_KS)), id_to_dia)

        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            list(pool.map(run, jobs))
        results[name] = {
            "strategy": changes,
            "scores": summarize_locomo(questions_all),
            "splits": {
                split: summarize_locomo([q for q in questions_all if q["split"] == split])[
                    "overall"
                ]
                for split in SPLIT_NAMES
                if any(q["split"] == split for q in questions_all)
            },
            "seconds": round(time.perf_counter() - started, 1),
        }
        log(f"locomo: variant {name!r} done in {results[name]['seconds']}s")
    for vault, *_ in jobs:
        set_strategy(vault, args.shipped, {})
    return {
        "data": str(data_file),
        "split": args.split,
        "conversations": len(jobs),
        "turns": sum(b["notes"] for b in build.values()),
        "questions": len(questions_all),
        "evidence_normalisation": ev_stats,
        "build": build,
        "variants": results,
    }


# ---------------------------------------------------------------------------
# SciFact


def ndcg_at(ranked: list[str], rels: dict[str, int], k: int) -> float:
    dcg = sum((2 ** rels.get(d, 0) - 1) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted(rels.values(), reverse=True)[:k]
    idcg = sum((2**r - 1) / math.log2(i + 2) for i, r in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def recall_at(ranked: list[str], rels: dict[str, int], k: int) -> float:
    relevant = {d for d, r in rels.items() if r > 0}
    return len(relevant & set(ranked[:k])) / len(relevant) if relevant else 0.0


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8") as handle:
        for n, line in enumerate(handle):
            parts = line.rstrip("\n").split("\t")
            if n == 0 and not parts[-1].lstrip("-").isdigit():
                continue  # header
            if len(parts) >= 3:
                qrels.setdefault(parts[0], {})[parts[1]] = int(parts[2])
    return qrels


def bench_scifact(
    args: argparse.Namespace, variants: dict[str, dict[str, float | str]]
) -> dict[str, Any]:
    folder = args.data / "scifact"
    corpus_file = folder / "corpus.jsonl"
    vault = args.out / "scifact" / "vault"
    stamp = {"format": NOTE_FORMAT, "data": file_stamp(corpus_file)}
    started = time.perf_counter()
    info: dict[str, Any] = {"cached": True}
    if not fresh_vault(vault, stamp, args.rebuild):
        count = 0
        with corpus_file.open(encoding="utf-8") as handle:
            for line in handle:
                if not line.strip():
                    continue
                doc = json.loads(line)
                doc_id = str(doc["_id"])
                title = " ".join(str(doc.get("title") or "").split()) or doc_id
                meta = {
                    "id": yaml_str(doc_id),
                    "type": "note",
                    "category": "papers",
                    "title": yaml_str(title),
                }
                write_note(
                    vault / "papers" / f"{slug(doc_id)}.md", meta, str(doc.get("text") or "")
                )
                count += 1
        info = {"cached": False, "notes": count, "index": index_vault(vault, stamp)}
    log(f"scifact: vault ready in {time.perf_counter() - started:.1f}s")

    # the tuning split is SciFact's train queries, the held-out one its test queries
    splits = {"tune": "train", "test": "test"}
    qrels_of = {
        split: read_qrels(folder / "qrels" / f"{splits[split]}.tsv")
        for split in splits
        if args.split in ("all", split)
    }
    wanted = {qid for qrels in qrels_of.values() for qid in qrels}
    queries: dict[str, str] = {}
    with (folder / "queries.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                item = json.loads(line)
                if str(item["_id"]) in wanted:
                    queries[str(item["_id"])] = str(item["text"])
    qfiles = {}
    for split, qrels in qrels_of.items():
        qfiles[split] = args.out / "scifact" / f"{splits[split]}.queries.jsonl"
        write_queries(qfiles[split], ((q, queries[q]) for q in qrels if q in queries))

    results: dict[str, Any] = {}
    for name, changes in variants.items():
        started = time.perf_counter()
        use_variant(vault, args.shipped, changes)
        scores: dict[str, Any] = {}
        for split, qrels in qrels_of.items():
            ranked = run_batch(vault, qfiles[split], 100)
            per_query = {
                qid: (
                    ndcg_at(ranked.get(qid, []), rels, 10),
                    recall_at(ranked.get(qid, []), rels, 100),
                )
                for qid, rels in qrels.items()
            }
            n = max(1, len(per_query))
            scores[split] = {
                "n": len(per_query),
                "nDCG@10": round(sum(v[0] for v in per_query.values()) / n, 4),
                "R@100": round(sum(v[1] for v in per_query.values()) / n, 4),
            }
        results[name] = {
            "strategy": changes,
            "scores": scores.get("test", {}),
            "splits": scores,
            "seconds": round(time.perf_counter() - started, 1),
        }
        log(f"scifact: variant {name!r} done in {results[name]['seconds']}s")
    set_strategy(vault, args.shipped, {})
    return {
        "data": str(folder),
        "split": args.split,
        "queries": {split: len(qrels) for split, qrels in qrels_of.items()},
        "judgements": {split: sum(map(len, qrels.values())) for split, qrels in qrels_of.items()},
        "build": info,
        "variants": results,
    }


# ---------------------------------------------------------------------------
# report


def met(value: float, target: float) -> str:
    return "met" if value >= target else "NOT met"


def print_locomo(report: dict[str, Any]) -> None:
    print(
        f"\nLoCoMo evidence recall (%), {report['conversations']} conversations, "
        f"{report['turns']} turns, {report['questions']} questions"
    )
    print(f"evidence normalisation: {report['evidence_normalisation']}")
    head = f"{'':12} {'n':>5} " + " ".join(f"{'R@' + str(k):>6}" for k in LOCOMO_KS)
    for name, res in report["variants"].items():
        print(f"\n[{name}]")
        print(head)
        for cat, row in res["scores"].items():
            cells = " ".join(f"{row[f'R@{k}']:6.1f}" for k in LOCOMO_KS)
            print(f"{cat:12} {row['n']:5d} {cells}")
    print("\nOverall vs. targets (BM25 k1 0.9 b 0.4 one turn per doc | DRAGON, paper Table 3)")
    print(
        f"{'variant':34} "
        + " ".join(f"{'R@' + str(k):>6}" for k in LOCOMO_KS)
        + "  BM25 target  DRAGON"
    )
    for name, res in report["variants"].items():
        row = res["scores"]["overall"]
        cells = " ".join(f"{row[f'R@{k}']:6.1f}" for k in LOCOMO_KS)
        bm25 = all(row[f"R@{k}"] >= LOCOMO_TARGET[k] for k in LOCOMO_KS)
        dragon = sum(row[f"R@{k}"] >= LOCOMO_DRAGON[k] for k in LOCOMO_KS)
        print(f"{name:34} {cells}  {'met' if bm25 else 'NOT met':11}  {dragon}/4 above")
    print(f"{'target (plain BM25)':34} " + " ".join(f"{LOCOMO_TARGET[k]:6.1f}" for k in LOCOMO_KS))
    print(f"{'DRAGON (paper)':34} " + " ".join(f"{LOCOMO_DRAGON[k]:6.1f}" for k in LOCOMO_KS))
    print("\nBy split (conversations 0-4: tuning split; 5-9: held out)")
    for name, res in report["variants"].items():
        for split, row in res.get("splits", {}).items():
            cells = " ".join(f"{row[f'R@{k}']:6.1f}" for k in LOCOMO_KS)
            dragon = sum(row[f"R@{k}"] > LOCOMO_DRAGON[k] for k in LOCOMO_KS)
            label = f"{name} [{SPLIT_NAMES[split]}]"
            print(f"{label:48} {row['n']:5d} {cells}  {dragon}/4 above DRAGON")


def print_scifact(report: dict[str, Any]) -> None:
    print(f"\nSciFact: queries {report['queries']}, judgements {report['judgements']}")
    print("(train queries: tuning split; test queries: held out, the published figure)")
    print(
        f"{'variant':44} {'nDCG@10':>8} {'R@100':>7}  target (lexical {SCIFACT_TARGET_NDCG10}, "
        f"hybrid {SCIFACT_HYBRID_TARGET_NDCG10})"
    )
    for name, res in report["variants"].items():
        for split, s in res.get("splits", {"test": res["scores"]}).items():
            label = f"{name} [{'train' if split == 'tune' else 'test'}]"
            hybrid = res["strategy"].get("search_mode") == "hybrid"
            goal = SCIFACT_HYBRID_TARGET_NDCG10 if hybrid else SCIFACT_TARGET_NDCG10
            verdict = f"{met(s['nDCG@10'], goal)} (>= {goal})" if split == "test" else ""
            print(f"{label:44} {s['nDCG@10']:8.4f} {s['R@100']:7.4f}  {verdict}")
    for name, (ndcg, rec) in SCIFACT_REFERENCE.items():
        print(f"{name + ' (published, test)':44} {ndcg:8.3f} {rec if rec is not None else '':>7}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=["locomo", "scifact"], help="run one data set only")
    parser.add_argument(
        "--out",
        type=Path,
        default=ROOT / "bench-out",
        help="cache and result folder (default: bench-out/)",
    )
    parser.add_argument(
        "--data",
        type=Path,
        default=Path(os.environ.get("VB_BENCH_DATA") or DEFAULT_DATA),
        help="folder holding locomo/ and scifact/ (default: ../shared/bench)",
    )
    parser.add_argument("--k1", type=float, help="also run a variant with this bm25_k1")
    parser.add_argument("--b", type=float, help="also run a variant with this bm25_b")
    parser.add_argument("--rebuild", action="store_true", help="regenerate the cached vaults")
    parser.add_argument(
        "--split",
        choices=["tune", "test", "all"],
        default="all",
        help="tune: LoCoMo conversations 0-4 and SciFact train; test: conversations 5-9 and "
        "SciFact test; all (default): both, reported apart",
    )
    parser.add_argument(
        "--variants", help="run only these of the built-in variants (comma-separated names)"
    )
    parser.add_argument(
        "--hybrid",
        action="append",
        metavar="KEY=V,...",
        help="also run a hybrid variant with these STRATEGY.md keys (repeatable)",
    )
    parser.add_argument("--jobs", type=int, default=2, help="vb processes run at once (default 2)")
    add_record_option(parser)
    args = parser.parse_args()
    if args.b is not None and not 0.0 <= args.b <= 1.0:
        parser.error("--b must be between 0 and 1")
    args.out = args.out.resolve()
    args.data = args.data.resolve()
    args.out.mkdir(parents=True, exist_ok=True)
    variants = parse_variants(args)
    args.shipped = shipped_strategy(args.out)
    version = subprocess.run([*VB, "--version"], capture_output=True, text=True).stdout.strip()

    run_info = {
        "date": dt.datetime.now().astimezone().replace(microsecond=0).isoformat(),
        "command": " ".join(["python", *sys.argv]),
        "vb": version,
    }
    # --only updates its own data set in retrieval.json and keeps the other one
    target = args.out / "retrieval.json"
    report: dict[str, Any] = {}
    if args.only and target.is_file():
        try:
            report = json.loads(target.read_text(encoding="utf-8"))
        except ValueError:
            report = {}
    report["targets"] = {
        "locomo_bm25": LOCOMO_TARGET,
        "locomo_dragon": LOCOMO_DRAGON,
        "scifact_ndcg10": SCIFACT_TARGET_NDCG10,
    }
    if args.only in (None, "locomo"):
        report["locomo"] = {**run_info, **bench_locomo(args, variants)}
        print_locomo(report["locomo"])
    if args.only in (None, "scifact"):
        report["scifact"] = {**run_info, **bench_scifact(args, variants)}
        print_scifact(report["scifact"])
    target.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"\nwrote {target}")
    if args.record and args.only in (None, "locomo"):
        save_record("retrieval-locomo", {"variants": locomo_figures(report["locomo"])})
    if args.record and args.only in (None, "scifact"):
        save_record("retrieval-scifact", {"variants": report["scifact"]["variants"]})


def locomo_figures(report: dict[str, Any]) -> dict[str, Any]:
    """Each variant's overall and per-split recall, with how many k are above DRAGON."""
    figures: dict[str, Any] = {}
    for name, res in report["variants"].items():
        rows = {"overall": res["scores"]["overall"], **res.get("splits", {})}
        figures[name] = {
            part: {**row, "above_dragon": sum(row[f"R@{k}"] > LOCOMO_DRAGON[k] for k in LOCOMO_KS)}
            for part, row in rows.items()
        }
    return figures


if __name__ == "__main__":
    main()
