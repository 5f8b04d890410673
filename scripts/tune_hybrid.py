#!/usr/bin/env python3
"""Grid search of the hybrid fusion settings on the tuning split only.

Reads the vaults `scripts/bench_retrieval.py` built (run it first with `--split tune` and a
hybrid variant: that also writes each vault's embeddings) and looks only at the tuning
split: LoCoMo conversations 0-4 and SciFact's *train* queries. The held-out conversations
5-9 and SciFact's test queries are never read here. For each query it takes the BM25
candidates (`Searcher`) and the similarity of every note (`HybridSearcher`'s vectors) once,
then ranks them with `domain.notes.ranking.fuse` under each setting, as `HybridSearcher` does
(credit and recency are left out: neither data set has credit, and their dates are years
old, so the recency factor is 1 to 1e-11).

    .venv/bin/python scripts/tune_hybrid.py [--out bench-out/] [--data ../shared/bench]
                                            [--only locomo|scifact]

The chosen setting is then confirmed by `bench_retrieval.py`, which runs the real `vb search`.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_retrieval as bench

from vault_brain.app.memory.vault import Vault
from vault_brain.domain.notes.ranking import fuse
from vault_brain.storage.index.hybrid import HybridSearcher
from vault_brain.storage.index.search import Searcher

POOLS = (100, 200, 300, 500)
WEIGHTS = (0.1, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7, 0.8)
RRF_KS = (3, 5, 10, 20, 60)

Case = tuple[dict[str, float], dict[str, float], list[str]]
"""(BM25 of the lexical candidates, similarity of every note, note paths by similarity)."""


def cases_of(vault_dir: Path, queries: list[str]) -> tuple[list[Case], dict[str, str]]:
    vault = Vault.open(vault_dir)
    vault.reconcile()
    lexical = Searcher(vault.index, vault.policy)
    hybrid = HybridSearcher(vault.index, vault.policy)
    hybrid.sync()
    vectors = hybrid._vectors
    assert vectors is not None
    id_of = {str(row["path"]): str(row["id"]) for _, row in vault.index.rows(True)}
    cases: list[Case] = []
    for text in queries:
        hits = lexical.search(text, max(POOLS), snippets=False)
        sims = vectors.similarity(text)
        order = np.argsort(-sims, kind="stable")[: max(POOLS)]
        by_sim = [vectors.rels[i] for i in order]
        sim = {vectors.rels[i]: float(sims[i]) for i in order}
        for hit in hits:
            sim.setdefault(hit.path, float(sims[vectors.row_of[hit.path]]))
        cases.append(({h.path: h.bm25 for h in hits}, sim, by_sim))
    return cases, id_of


def ranked(case: Case, setting: dict[str, Any], k: int) -> list[str]:
    bm25_all, sim_all, by_sim = case
    pool = setting["pool"]
    bm25 = dict(sorted(bm25_all.items(), key=lambda kv: -kv[1])[:pool])
    if setting["weight"] == 0:
        return sorted(bm25, key=lambda p: (-bm25[p], p))[:k]
    sim = {p: sim_all[p] for p in by_sim[:pool]}
    for p in bm25:
        sim[p] = sim_all[p]
    fused = fuse(
        bm25, sim, rule=setting["rule"], weight=setting["weight"], rrf_k=setting.get("k", 60)
    )
    return sorted(fused, key=lambda p: (-fused[p], p))[:k]


def settings() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"rule": "lexical", "weight": 0, "pool": 100}]
    for pool, w in itertools.product(POOLS, WEIGHTS):
        out.append({"rule": "mix", "weight": w, "pool": pool})
        out.extend({"rule": "rrf", "weight": w, "pool": pool, "k": k} for k in RRF_KS)
    return out


def locomo(args: argparse.Namespace) -> tuple[list[Any], list[Any]]:
    samples = json.loads((args.data / "locomo" / "locomo10.json").read_text(encoding="utf-8"))
    stats = {"split": 0, "rewritten": 0, "dropped": 0}
    groups = []
    for position in bench.LOCOMO_TUNE:  # the tuning split only
        sample = samples[position]
        vault = args.out / "locomo" / bench.slug(str(sample["sample_id"]))
        if not (vault / ".vb" / "embeddings.npz").is_file():
            raise SystemExit(f"{vault}: run bench_retrieval.py --split tune with hybrid first")
        qas = sample.get("qa", [])
        evidence = [bench.normalize_evidence(qa.get("evidence") or [], stats) for qa in qas]
        cases, id_of = cases_of(vault, [str(qa.get("question", "")) for qa in qas])
        id_to_dia: dict[str, str] = {}
        for _n, turns, _when in bench.locomo_sessions(sample.get("conversation", {})):
            for turn in turns:
                dia = str(turn.get("dia_id", "")).strip()
                note = f"locomo-{bench.slug(str(sample['sample_id']))}-{bench.slug(dia)}"
                id_to_dia[note] = dia
        dia_of = {path: id_to_dia.get(note, "") for path, note in id_of.items()}
        groups.append((cases, evidence, dia_of))
    return groups, []


def locomo_scores(groups: list[Any], setting: dict[str, Any]) -> dict[int, float]:
    sums = dict.fromkeys(bench.LOCOMO_KS, 0.0)
    count = 0
    for cases, evidence, dia_of in groups:
        for case, ev in zip(cases, evidence, strict=True):
            top = [dia_of[p] for p in ranked(case, setting, max(bench.LOCOMO_KS))]
            for k in bench.LOCOMO_KS:
                sums[k] += sum(e in top[:k] for e in ev) / len(ev) if ev else 1.0
            count += 1
    return {k: round(100 * v / count, 2) for k, v in sums.items()}


def scifact(args: argparse.Namespace) -> tuple[list[Case], list[dict[str, int]], dict[str, str]]:
    folder = args.data / "scifact"
    qrels = bench.read_qrels(folder / "qrels" / "train.tsv")  # the tuning split only
    queries: dict[str, str] = {}
    with (folder / "queries.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                item = json.loads(line)
                if str(item["_id"]) in qrels:
                    queries[str(item["_id"])] = str(item["text"])
    qids = [q for q in qrels if q in queries]
    cases, id_of = cases_of(args.out / "scifact" / "vault", [queries[q] for q in qids])
    return cases, [qrels[q] for q in qids], id_of


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=bench.ROOT / "bench-out")
    parser.add_argument(
        "--data", type=Path, default=Path(os.environ.get("VB_BENCH_DATA") or bench.DEFAULT_DATA)
    )
    parser.add_argument(
        "--only", choices=("locomo", "scifact"), help="tune on one data set (the other: 0)"
    )
    args = parser.parse_args()
    groups, _ = locomo(args) if args.only != "scifact" else ([], [])
    sf_cases, sf_rels, sf_ids = scifact(args) if args.only != "locomo" else ([], [], {})
    rows = []
    for setting in settings():
        lo = locomo_scores(groups, setting) if groups else dict.fromkeys(bench.LOCOMO_KS, 0.0)
        ndcg = sum(
            bench.ndcg_at([sf_ids[p] for p in ranked(c, setting, 10)], rels, 10)
            for c, rels in zip(sf_cases, sf_rels, strict=True)
        ) / max(1, len(sf_cases))
        margin = min(lo[k] - bench.LOCOMO_DRAGON[k] for k in bench.LOCOMO_KS)
        rows.append((setting, lo, round(ndcg, 4), round(margin, 2)))
    rows.sort(key=lambda r: -(r[3] + 100 * (r[2] - 0.70)))
    print("setting | LoCoMo 0-4 R@5 R@10 R@25 R@50 | min margin on DRAGON | SciFact train nDCG@10")
    for setting, lo, ndcg, margin in rows:
        cells = " ".join(f"{lo[k]:5.1f}" for k in bench.LOCOMO_KS)
        print(f"{json.dumps(setting):60} {cells} | {margin:6.2f} | {ndcg:.4f}")


if __name__ == "__main__":
    main()
