#!/usr/bin/env python3
"""First-hit quality of `vb search` on real documentation vaults, against plain BM25.

The vaults are public documentation repositories, adopted as they are (`vb init --adopt`:
no note changed), and the questions are natural ones written by reading the notes before any
system ran on them (`scripts/data/doc_questions/`, with their README). Two systems answer
each question over the same files:

- `vb`: the shipped lexical default (`vb search`, through the API the CLI uses), with any
  `--variant KEY=VALUE,...` of STRATEGY.md keys as extra rows;
- `bm25`: plain Whoosh with its defaults: a title (the file name) and a body (the file's
  text) field with Whoosh's default analyzer, BM25F (B 0.75, K1 1.2), the question parsed
  with `MultifieldParser` over both fields and an OR group (the default AND group would
  answer almost no natural question).

A question is a hit at k when one of its answer notes is in the top k; MRR@10 counts the
first answer found. `--explain` prints, for each question where the two first hits differ,
what vb's score of its first hit and of the right note is made of.

    .venv/bin/python scripts/bench_docs.py [--split tune|heldout|all] [--vault NAME ...]
                                           [--variant KEY=V,KEY=V ...] [--explain] [--record]

The repositories are read from bare git copies under --mirror (default ../.mirror, where
`owner+name/repo` is a bare clone); when one is missing the script says how to get it. The
vault is extracted at the commit the question file names, into --out (git-ignored).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))
from bench_common import add_record_option, log, save_record, set_strategy  # noqa: E402

QUESTIONS = REPO / "scripts" / "data" / "doc_questions"
# name -> (GitHub repository, commit, vault root folder): as the questions' README says
VAULTS = {
    "obsidian-help": (
        "obsidianmd/obsidian-help",
        "fa179e91e86eaff5859226cc045c81000d64e3cd",
        "en",
    ),
    "obsidian-developer-docs": (
        "obsidianmd/obsidian-developer-docs",
        "29188ec93405e932dcf364d6e29cff01940a0207",
        "en",
    ),
}
KS = (1, 3, 10)


def questions(name: str, split: str) -> list[dict[str, Any]]:
    lines = (QUESTIONS / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    found = [json.loads(line) for line in lines if line.strip()]
    return [q for q in found if split == "all" or q["split"] == split]


def extract(name: str, mirror: Path, out: Path) -> Path:
    """The vault's folder at its commit, extracted once under `out`."""
    repo, commit, folder = VAULTS[name]
    target = out / name / "files"
    if (target / ".extracted").is_file():
        return target
    git_dir = mirror / repo.replace("/", "+") / "repo"
    if not git_dir.is_dir():
        raise SystemExit(
            f"{name}: no bare copy of {repo} at {git_dir}; get one with\n"
            f"  git clone --bare https://github.com/{repo} {git_dir}\n"
            "(commit {commit}) or pass --mirror"
        )
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    git = ["git", "--git-dir", str(git_dir)]
    listing = subprocess.run(
        [*git, "ls-tree", "-r", "-z", commit, folder], capture_output=True, check=True
    ).stdout.decode()
    # the Markdown notes only: a mirror may leave out large media blobs
    blobs = []  # (sha, path): two files with the same text are two entries
    for entry in filter(None, listing.split("\0")):
        meta, path = entry.split("\t", 1)
        if path.endswith(".md"):
            blobs.append((meta.split()[2], path))
    batch = subprocess.run(
        [*git, "cat-file", "--batch"],
        input="".join(f"{sha}\n" for sha, _ in blobs).encode(),
        capture_output=True,
        check=True,
    ).stdout
    at = 0
    for _sha, path in blobs:
        header_end = batch.index(b"\n", at)
        size = int(batch[at:header_end].split()[2])
        body = batch[header_end + 1 : header_end + 1 + size]
        at = header_end + 1 + size + 1
        dest = target / path[len(folder.rstrip("/")) + 1 :]
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(body)
    (target / ".extracted").write_text(commit, encoding="utf-8")
    return target


def notes_of(files: Path) -> list[Path]:
    return sorted(p for p in files.rglob("*.md") if not any(s.startswith(".") for s in p.parts))


# ---------------------------------------------------------------------------------------
# the systems


def plain_bm25(files: Path, work: Path) -> Any:
    """A search function over plain Whoosh (defaults everywhere but the OR group)."""
    from whoosh import index
    from whoosh.fields import ID, TEXT, Schema
    from whoosh.qparser import MultifieldParser, OrGroup

    folder = work / "plain-whoosh"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    schema = Schema(path=ID(stored=True, unique=True), title=TEXT(), body=TEXT())
    ix = index.create_in(folder, schema)
    with ix.writer() as writer:
        for path in notes_of(files):
            rel = path.relative_to(files).as_posix()
            text = path.read_text(encoding="utf-8", errors="replace")
            writer.add_document(path=rel, title=path.stem, body=text)
    parser = MultifieldParser(["title", "body"], schema, group=OrGroup)
    searcher = ix.searcher()

    def search(text: str, k: int) -> list[str]:
        return [hit["path"] for hit in searcher.search(parser.parse(text), limit=k)]

    return search


def vb_vault(files: Path, work: Path, variant: dict[str, str]) -> Path:
    """A copy of the files adopted by vb, with the variant's STRATEGY.md keys."""
    from vault_brain.app.api import create_vault

    vault = work / ("vb-" + ("-".join(f"{k}={v}" for k, v in variant.items()) or "shipped"))
    shutil.rmtree(vault, ignore_errors=True)
    shutil.copytree(files, vault, ignore=shutil.ignore_patterns(".extracted"))
    with contextlib.redirect_stdout(io.StringIO()):
        create_vault(vault, adopt=True)
    if variant:
        set_strategy(vault, (vault / "STRATEGY.md").read_text(encoding="utf-8"), variant)
    return vault


def vb_search(vault: Path) -> Any:
    from vault_brain.app.api import MemoryAPI

    api = MemoryAPI.open(vault)
    api.index()

    def search(text: str, k: int) -> list[str]:
        return [hit.path for hit in api.search(text, k).results]

    return search, api


# ---------------------------------------------------------------------------------------
# scores


def score(ranked: dict[int, list[str]], qs: list[dict[str, Any]]) -> dict[str, float]:
    hits = {k: 0 for k in KS}
    rr = 0.0
    for n, q in enumerate(qs):
        answers = set(q["answers"])
        ranks = [i for i, p in enumerate(ranked[n][:10], 1) if p in answers]
        for k in KS:
            hits[k] += bool(ranks and ranks[0] <= k)
        rr += 1 / ranks[0] if ranks else 0.0
    total = len(qs) or 1
    found = {f"hit@{k}": hits[k] / total for k in KS}
    found["mrr@10"] = rr / total
    return found


def explain(api: Any, q: dict[str, Any], vb_top: str, bm25_top: str) -> None:
    """What vb's score of its first hit and of the right note is made of (`--explain`)."""
    from vault_brain.interfaces.cli.warm import explained

    print(
        f"\n  Q: {q['q']}\n     answers {q['answers']}\n     vb first: {vb_top}  bm25 first: "
        f"{bm25_top}"
    )
    for hit in api.search(q["q"], 50, explain=True).results:
        if hit.path in (vb_top, q["answers"][0]) and hit.explain:
            print(f"     {hit.path}: {explained(hit.explain)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=("tune", "heldout", "all"), default="tune")
    parser.add_argument("--vault", action="append", choices=sorted(VAULTS), help="(repeatable)")
    parser.add_argument(
        "--variant", action="append", default=[], help="also run vb with KEY=V,KEY=V changes"
    )
    parser.add_argument("--explain", action="store_true", help="why the first hits differ")
    parser.add_argument("--mirror", type=Path, default=REPO.parent / ".mirror")
    parser.add_argument("--out", type=Path, default=REPO / "bench-out" / "docs")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    add_record_option(parser)
    args = parser.parse_args()
    report: dict[str, Any] = {"split": args.split, "vaults": {}}
    variants: list[dict[str, str]] = [{}]
    for spec in args.variant:
        variants.append(dict(pair.split("=", 1) for pair in spec.split(",")))
    for name in args.vault or sorted(VAULTS):
        files = extract(name, args.mirror, args.out)
        qs = questions(name, args.split)
        work = args.out / name
        log(f"{name}: {len(notes_of(files))} notes, {len(qs)} questions ({args.split})")
        bm25 = plain_bm25(files, work)
        ranked_bm25 = {n: bm25(q["q"], 10) for n, q in enumerate(qs)}
        rows = {"bm25 (plain Whoosh)": score(ranked_bm25, qs)}
        for variant in variants:
            label = "vb " + (",".join(f"{k}={v}" for k, v in variant.items()) or "shipped")
            search, api = vb_search(vb_vault(files, work, variant))
            ranked = {n: search(q["q"], 10) for n, q in enumerate(qs)}
            rows[label] = score(ranked, qs)
            if args.explain and not variant:
                for n, q in enumerate(qs):
                    vb_top = (ranked[n] or [""])[0]
                    bm_top = (ranked_bm25[n] or [""])[0]
                    if (vb_top in q["answers"]) != (bm_top in q["answers"]):
                        explain(api, q, vb_top, bm_top)
        report["vaults"][name] = rows
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for name, rows in report["vaults"].items():
            print(f"\n{name} ({args.split})")
            print(f"  {'system':40} hit@1  hit@3  hit@10  MRR@10")
            for label, s in rows.items():
                print(
                    f"  {label:40} {s['hit@1']:.3f}  {s['hit@3']:.3f}  {s['hit@10']:.3f}"
                    f"   {s['mrr@10']:.3f}"
                )
    if args.record:
        measures = {
            f"{name}.{args.split}.{label.split(' ')[0]}.{key}": value
            for name, rows in report["vaults"].items()
            for label, s in rows.items()
            if label in ("bm25 (plain Whoosh)", "vb shipped")
            for key, value in s.items()
        }
        save_record(f"docs-{args.split}", measures)


if __name__ == "__main__":
    main()
