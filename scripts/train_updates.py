#!/usr/bin/env python3
"""Train the learned judge of updates (`vault_brain/storage/index/updates.py`): whether a
newer statement of the user's gives a new value to what an older one said.

    .venv/bin/python scripts/train_updates.py [--check]

Needs the embeddings extra and scikit-learn (pip install -e '.[embeddings,train]'); vb
itself reads the weights with numpy alone.

Data: tests/data/facts/pairs_train.jsonl and pairs_train2.jsonl, pairs (old, new) labelled
`update` or `keep`, written to train on (the keep lines are mostly hard: a detail added,
another attribute of the same person, a temporary or hypothetical change, someone else's).
Each pair is also taken as vb stores it (the statements capture makes of the two
messages), so the model sees the third-person lines of entity notes it judges at run
time. Never the held-out `blind4.json` / `blind5.json`.

Features: the e5-small query vectors of the two statements in the first person (the newer
one's, their product and difference, and cosine) and the capture rules' signs
(`domain.capture.change.signs`), alone and times the cosine. Model: logistic regression.
Two thresholds: the probability at which a pair is an update, and a second one for pairs
the rules call an update (the model may overrule them). C and both thresholds are chosen
by 5-fold cross-validation grouped by the older statement: the most updates found while no
more keep pairs score as updates than the rules make of them (of the written ones and of
the crossed ones each): a wrong update hides a true fact, a missed one leaves two. The
fact-update sets the rules were developed on (`scripts/bench_fact_updates.py`, not the
held-out ones) are scored as a check: each first statement against each later one of its
set. A third bar, for the line of a note nearest in meaning to a newer statement that says
it is a change, is chosen on simulated notes (`nearest_cut`). `--check` trains again and
fails unless the result equals the shipped weights (training is deterministic).
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
from bench_common import ship_weights  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.metrics import roc_auc_score  # noqa: E402
from sklearn.model_selection import GroupKFold  # noqa: E402

from vault_brain.domain.capture.change import rules_say, signs  # noqa: E402
from vault_brain.domain.capture.conversation import capture  # noqa: E402
from vault_brain.domain.capture.facts import facts_of  # noqa: E402
from vault_brain.storage.index import updates  # noqa: E402

DATA = [ROOT / "tests" / "data" / "facts" / f"{n}.jsonl" for n in ("pairs_train", "pairs_train2")]
OUT = ROOT / "vault_brain" / "storage" / "index" / updates.WEIGHTS
CS = (0.25, 1.0, 4.0, 16.0)
RULED = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.01)  # 1.01: the rules add nothing
CROSSED = 3  # changes of other attributes paired with each update's older statement
NEAREST = (*(round(0.3 + 0.05 * i, 2) for i in range(13)), 1.01)  # 1.01: no such bar
LINES = 6  # the other lines of a simulated note (a user's note holds a handful or more)
# attributes close enough that one's change may be the other's (a new employer and role)
RELATED = (
    {"residence", "rent", "timezone"},
    {"employer", "role", "team", "manager", "project", "school"},
    {"exercise", "gym", "health", "diet", "drink", "smoking", "sleep"},
    {"meeting time", "schedule"},
    {"editor", "notes", "tracker", "email", "cloud storage"},
    {"phone", "laptop", "os"},
)


def stored(text: str) -> str | None:
    """The statement vb keeps of a message, when capture makes exactly one."""
    report = capture([{"id": "m0001", "type": "message", "role": "user", "content": text}])
    if len(report.candidates) != 1:
        return None
    return facts_of(report.candidates, "s", set())[0].statement


def examples() -> tuple[list[tuple[str, str]], np.ndarray, np.ndarray, np.ndarray]:
    """Pairs (old, new), their labels (1: update), groups (the older message) and whether
    each is a crossed pair. Besides
    the written pairs, each update's older statement is paired with the changes of
    `CROSSED` updates of unrelated attributes, as `keep`: in a note of many attributes a
    change is compared with every older line, and saying it is a change does not make it
    one of this line's attribute."""
    rows = [
        json.loads(line)
        for path in DATA
        if path.exists()
        for line in path.read_text(encoding="utf-8").splitlines()
        if line
    ]
    changes = [r for r in rows if r["label"] == "update"]
    rng = np.random.default_rng(7)
    crossed = []
    for row in changes:
        close = next((g for g in RELATED if row["attribute"] in g), {row["attribute"]})
        others = [r for r in changes if r["attribute"] not in close]
        for k in rng.choice(len(others), size=CROSSED, replace=False):
            crossed.append(
                {"old": row["old"], "new": others[k]["new"], "label": "keep", "crossed": True}
            )
    pairs, labels, groups, made = [], [], [], []
    for row in rows + crossed:
        old, new = row["old"], row["new"]
        variants = [(old, new)]
        kept_old, kept_new = stored(old), stored(new)
        if kept_old and kept_new and (kept_old, kept_new) != (old, new):
            variants.append((kept_old, kept_new))
        for pair in variants:
            pairs.append(pair)
            labels.append(int(row["label"] == "update"))
            groups.append(old)
            made.append(bool(row.get("crossed")))
    return pairs, np.array(labels), np.array(groups), np.array(made)


def design(pairs: list[tuple[str, str]]) -> np.ndarray:
    texts = list(dict.fromkeys(t for pair in pairs for t in pair))
    found = dict(
        zip(texts, updates.vectors_of(texts, None, trained=False), strict=True)
    )  # as vb embeds them
    return updates.features(
        [found[o] for o, _ in pairs],
        [found[n] for _, n in pairs],
        [signs(n, o) for o, n in pairs],
    )


def fit(x: np.ndarray, y: np.ndarray, c: float) -> LogisticRegression:
    return LogisticRegression(C=c, class_weight="balanced", max_iter=5000, tol=1e-6).fit(x, y)


def held_out(x: np.ndarray, y: np.ndarray, groups: np.ndarray, c: float) -> np.ndarray:
    found = np.zeros(len(y))
    for train, test in GroupKFold(5).split(x, y, groups):
        found[test] = fit(x[train], y[train], c).predict_proba(x[test])[:, 1]
    return found


def cut(
    p: np.ndarray, y: np.ndarray, crossed: np.ndarray, ruled: np.ndarray
) -> tuple[float, float]:
    """The thresholds (alone, where the rules find an update) that find the most updates
    while no more keep pairs score as updates than the rules make of them, written ones and
    crossed ones each."""
    keep_fp, crossed_fp = ruled[(y == 0) & ~crossed].mean(), ruled[(y == 0) & crossed].mean()
    best: tuple[float, float, float] = (-1.0, 1.0, 1.0)
    for t in np.unique(np.round(p, 3)):
        for low in RULED:
            found = (p >= t) | (ruled & (p >= low))
            keeps = found[(y == 0) & ~crossed].mean()
            if keeps <= keep_fp and found[(y == 0) & crossed].mean() <= crossed_fp:
                best = max(best, (found[y == 1].mean(), float(t), low))
    return best[1], best[2]


def nearest_cut(
    pairs: list[tuple[str, str]],
    x: np.ndarray,
    y: np.ndarray,
    groups: np.ndarray,
    crossed: np.ndarray,
    c: float,
    t: float,
    low: float,
) -> tuple[float, dict[float, tuple[int, int, int]]]:
    """The threshold for the older line nearest in meaning to a newer statement that says it
    is a change (`change.signs`' first sign). In a note, the line an update replaces is
    nearly always the nearest of its lines, which no single pair shows, so notes are
    simulated: each written pair's older statement among `LINES` older statements of other
    pairs, judged as `UpdateJudge.older` judges (the most probable line passing a
    threshold) by a model trained on the other half of the groups (two random halvings,
    each half in turn). Chosen: the most right retirements less wrong ones (another line,
    or any line for a keep), a wrong retirement costing what a right one gains. Also
    returns (right, wrong, keeps retiring a line) per threshold."""
    texts = list(dict.fromkeys(text for pair in pairs for text in pair))
    vec = dict(zip(texts, updates.vectors_of(texts, None, trained=False), strict=True))
    cases = []  # (label, probabilities, nearest line, its change sign, rules' verdicts)
    for seed in (3, 4):
        rng = np.random.default_rng(seed)
        halves = {g: i % 2 for i, g in enumerate(rng.permutation(sorted(set(groups))))}
        for half in (0, 1):
            train = np.array([halves[g] != half for g in groups])
            model = fit(x[train], y[train], c)
            tested = [i for i in range(len(pairs)) if halves[groups[i]] == half and not crossed[i]]
            pool = sorted({pairs[i][0] for i in tested})
            for i in tested:
                old, new = pairs[i]
                drawn = rng.choice(pool, size=LINES + 1, replace=False)
                lines = [*[o for o in drawn if o != old][:LINES], old]
                said = [signs(new, o) for o in lines]
                rows = updates.features([vec[o] for o in lines], [vec[new]] * len(lines), said)
                near = int(np.argmax([float(np.dot(vec[o], vec[new])) for o in lines]))
                cases.append(
                    (
                        y[i],
                        model.predict_proba(rows)[:, 1],
                        near,
                        said[near][0],
                        np.array([rules_say(s) for s in said]),
                    )
                )
    counts = {}
    for tn in NEAREST:
        right = wrong = keeps = 0
        for label, p, near, cue, ruled in cases:
            found = (p >= t) | (ruled & (p >= low))
            found[near] |= bool(cue) and p[near] >= tn
            chosen = int(np.argmax(np.where(found, p, -1.0))) if found.any() else None
            if label:
                right += chosen == len(p) - 1
                wrong += chosen is not None and chosen != len(p) - 1
            else:
                keeps += chosen is not None
        counts[tn] = (right, wrong, keeps)
    best = max(NEAREST, key=lambda tn: (counts[tn][0] - counts[tn][1] - counts[tn][2], tn))
    return best, counts


def report(name: str, found: np.ndarray, y: np.ndarray, crossed: np.ndarray) -> None:
    print(
        f"{name}: updates found {found[y == 1].mean():.1%}, keeps scored updates"
        f" {found[(y == 0) & ~crossed].mean():.1%} written,"
        f" {found[(y == 0) & crossed].mean():.1%} crossed"
    )


def dev_pairs() -> tuple[list[tuple[str, str]], np.ndarray]:
    """Each first statement of a fact-update set the rules were developed on against each
    later one of its set: its own later one is an update, the other attributes' are not."""
    from bench_fact_updates import HELD_OUT, SETS

    pairs, labels = [], []
    for name, sets in SETS.items():
        if name in HELD_OUT:
            continue
        for i, a in enumerate(sets):
            for j, b in enumerate(sets):
                pairs.append((a.first, b.later))
                labels.append(int(i == j))
    return pairs, np.array(labels)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--check", action="store_true", help="fail unless training gives the shipped weights"
    )
    args = parser.parse_args()
    pairs, y, groups, crossed = examples()
    x = design(pairs)
    ruled = np.array([rules_say(signs(n, o)) for o, n in pairs])
    print(f"{len(pairs)} pairs, {int(y.sum())} updates, {int(crossed.sum())} crossed")
    report("the rules", ruled, y, crossed)
    scored = {c: held_out(x, y, groups, c) for c in CS}
    found = {}
    for each in CS:
        t, low = cut(scored[each], y, crossed, ruled)
        found[each] = (t, low, (scored[each] >= t) | (ruled & (scored[each] >= low)))
        auc = roc_auc_score(y, scored[each])
        report(
            f"cross-validated, C {each} (AUC {auc:.3f}) at {t} / {low}", found[each][2], y, crossed
        )
    c = max(CS, key=lambda c: found[c][2][y == 1].mean())
    t, low = found[c][:2]
    print(f"chosen: C {c}, threshold {t} ({low} where the rules find an update)")
    near, counts = nearest_cut(pairs, x, y, groups, crossed, c, t, low)
    updates_in = sum(1 for i in range(len(y)) if y[i] and not crossed[i]) * 2
    keeps_in = sum(1 for i in range(len(y)) if not y[i] and not crossed[i]) * 2
    for tn, (right, wrong, keeps) in counts.items():
        print(
            f"simulated notes, nearest line at {tn}: updates retiring their line"
            f" {right / updates_in:.1%}, another {wrong / updates_in:.1%};"
            f" keeps retiring a line {keeps / keeps_in:.1%}"
        )
    print(f"chosen: {near} for the nearest line of a change")
    model = fit(x, y, c)
    dev, dev_y = dev_pairs()
    p = model.predict_proba(design(dev))[:, 1]
    dev_ruled = np.array([rules_say(signs(n, o)) for o, n in dev])
    on_dev = (p >= t) | (dev_ruled & (p >= low))
    report("fact-update sets (dev)", on_dev, dev_y, np.ones(len(dev_y), bool))
    name, model_id = updates.ENCODER
    meta = {
        "encoder": name,
        "model_id": model_id,
        "threshold": t,
        "ruled": low,
        "nearest": near,
        "bias": round(float(model.intercept_[0]), 6),
        "weights": [round(float(w), 6) for w in model.coef_[0]],
        "trained_on": f"{len(pairs)} labelled pairs (scripts/train_updates.py)",
    }
    return ship_weights(OUT, meta, args.check)


if __name__ == "__main__":
    raise SystemExit(main())
