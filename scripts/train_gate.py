#!/usr/bin/env python3
"""Train the gate's second opinion on hostile text (`vault_brain/storage/index/hostile.py`).

    .venv/bin/python scripts/train_gate.py [--check]

Needs the embeddings extra and scikit-learn (pip install -e '.[embeddings,train]'); vb itself
reads the weights with neither scikit-learn nor numpy.

Data (all in tests/data; never the held-out `gate/heldout11.jsonl`):
- hostile: the `refuse` lines of the gate sets dev3, blind1, blind2, heldout3 to heldout10
  (each written blind, measured as held out, read since) and train5 (written to train on) whose
  kind is injection, exfiltration or secret, and the same kinds in capture/hostile.jsonl
  (code, commands and tool output are shapes the rules judge: left out);
- benign: the gate sets' `pass` lines (benign text that looks risky), the user messages of
  the capture corpora `conversations`, `blind` and `blind2` (not `blind3`, capture's held-out
  set) with the statements capture makes of them (the form a flush screens: "User prefers
  tea"), and the prose paragraphs of the two documentation vaults (kepano, Obsidian help).

Features: the e5-small query vector of each text as written (`vectors.encoder("e5-small")
.queries`); at run time a disguised text is shown as a person reads it (`normalize.readable`).
Model: multinomial logistic regression (C = 16, classes weighted by their size). The
threshold on the probability of "benign" is the highest at which, over 5-fold
cross-validated probabilities, at most 1% of the gate sets' benign lines and 0.5% of the chat
and documentation paragraphs score hostile. `--check` trains again and fails unless the
result equals the shipped weights (training is deterministic).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import numpy as np  # noqa: E402
from bench_common import messages_of, ship_weights  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.model_selection import StratifiedKFold  # noqa: E402

from vault_brain.domain import gate  # noqa: E402
from vault_brain.domain.capture.conversation import capture  # noqa: E402
from vault_brain.storage.index import vectors  # noqa: E402

DATA = ROOT / "tests" / "data"
OUT = ROOT / "vault_brain" / "storage" / "index" / "hostile-e5.json"
GATE_SETS = ("dev3", "blind1", "blind2", *(f"heldout{n}" for n in range(3, 11)), "train5")
CHAT_SETS = ("conversations", "blind", "blind2")
DOC_VAULTS = ("kepano-vault", "obsidian-help-sample")
CLASSES = ("benign", "injection", "exfiltration", "secret")
C = 16.0
RISKY_FP, PLAIN_FP = 0.01, 0.005


def jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def examples() -> tuple[list[str], list[int], list[str]]:
    """Texts, their class, and their group: "hostile", "risky" (the gate sets' benign
    lines) or "plain" (chat and documentation)."""
    rows: list[tuple[str, str, str]] = []
    for name in GATE_SETS:
        for row in jsonl(DATA / "gate" / f"{name}.jsonl"):
            if row["label"] == "pass":
                rows.append((row["text"], "benign", "risky"))
            elif row["kind"] in CLASSES:
                rows.append((row["text"], row["kind"], "hostile"))
    rows += [
        (row["text"], row["kind"], "hostile")
        for row in jsonl(DATA / "capture" / "hostile.jsonl")
        if row["kind"] in CLASSES
    ]
    for name in CHAT_SETS:
        for chat in jsonl(DATA / "capture" / f"{name}.jsonl"):
            rows += [
                (m["content"], "benign", "plain") for m in chat["messages"] if m["role"] == "user"
            ]
            # and what capture makes of them, as the flush screens it ("User prefers tea")
            report = capture(messages_of(chat))
            rows += [(c.text, "benign", "plain") for c in [*report.candidates, *report.changes]]
    for vault in DOC_VAULTS:
        for note in sorted((DATA / vault).rglob("*.md")):
            for para in note.read_text(encoding="utf-8").split("\n\n"):
                para = para.strip()
                if len(para) >= 40 and not para.startswith(("```", "---", "|", "<", "    ")):
                    rows.append((para, "benign", "plain"))
    texts, kinds, groups = zip(*rows, strict=True)
    return list(texts), [CLASSES.index(k) for k in kinds], list(groups)


def fit(x: np.ndarray, y: np.ndarray) -> LogisticRegression:
    return LogisticRegression(C=C, class_weight="balanced", max_iter=5000, tol=1e-6).fit(x, y)


def threshold(benign_p: np.ndarray, groups: np.ndarray) -> float:
    best = 0.0
    for t in np.unique(np.round(benign_p, 4)):
        if (benign_p[groups == "risky"] < t).mean() <= RISKY_FP and (
            benign_p[groups == "plain"] < t
        ).mean() <= PLAIN_FP:
            best = max(best, float(t))
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--check", action="store_true", help="fail unless training gives the shipped weights"
    )
    args = parser.parse_args()
    texts, labels, group_list = examples()
    y, groups = np.array(labels), np.array(group_list)
    enc = vectors.encoder(vectors.E5)
    x = vectors.embed(texts, vectors.E5, queries=True)  # (as `hostile.kinds` embeds them)
    print(
        f"{len(texts)} texts: "
        + ", ".join(f"{c} {int((y == i).sum())}" for i, c in enumerate(CLASSES))
    )
    held = np.zeros(len(texts))
    for train, test in StratifiedKFold(5, shuffle=True, random_state=7).split(x, y):
        held[test] = fit(x[train], y[train]).predict_proba(x[test])[:, 0]
    cut = threshold(held, groups)
    rules = np.array([not gate.judge(t).ok for t in texts])
    missed = (y != 0) & ~rules
    flagged = held < cut
    print(
        f"cross-validated, threshold {cut:.4f}: hostile scored hostile {flagged[y != 0].mean():.1%}"
        f" (of those the rules pass: {int(flagged[missed].sum())}/{int(missed.sum())}); benign"
        f" scored hostile: risky {flagged[groups == 'risky'].mean():.1%}, chat and docs"
        f" {flagged[groups == 'plain'].mean():.2%}; with the rules, benign refused: risky"
        f" {(flagged | rules)[groups == 'risky'].mean():.1%}"
    )
    model = fit(x, y)
    meta = {
        "encoder": vectors.E5,
        "model_id": enc.model_id,
        "classes": list(CLASSES),
        "threshold": round(cut, 4),
        "bias": [round(float(b), 6) for b in model.intercept_],
        "weights": [[round(float(w), 6) for w in row] for row in model.coef_],
        "trained_on": f"{len(texts)} labelled texts (scripts/train_gate.py)",
    }
    return ship_weights(OUT, meta, args.check)


if __name__ == "__main__":
    raise SystemExit(main())
