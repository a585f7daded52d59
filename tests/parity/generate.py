"""Seeded parity data: recs.parquet, truth.parquet, params.json for the peer runners.

    python tests/parity/generate.py OUT_DIR [--seed N] [--kind ties|distinct|dups]

Every dataset holds: short lists (shorter than the largest k), users whose list has no hit,
truth users without recommendations, recommendation users without truth, list items that are
all relevant, relevant items missing from the list, and truth ratings 1..5.

* ``ties``: scores rounded to one decimal, so many ties inside a list. The ``rank`` column
  (and the row order) breaks them by the LARGER item id first, the rule of RePlay; peers with
  another or no defined tie rule are compared on ``distinct`` only.
* ``distinct``: every score of a user is distinct (no ties anywhere).
* ``ties_truth``: ``ties`` without the recommendation-only users (for peers that pool every
  recommendation row, e.g. sklearn's stacked ``roc_auc_score``; receval reads the rows of truth
  users only).
* ``binary``: ``ties`` whose truth is labelled 0/1: every truth row rated 1 plus up to three
  recommended items per user rated 0 (explicit negatives, as Microsoft Recommenders' stacked
  ``auc`` over the truth⋈pred inner join needs).
* ``logits``: ``distinct`` shifted by −0.5, one score per list set to exactly 0: about half of
  every list is scored <= 0 (torchmetrics masks those targets in AP, precision, recall, RR).
* ``signed``: ``distinct`` with signed graded ratings: each truth rating redrawn from
  -2..5 (zero and negative grades included) and every truth user whose id ends in 7 rated
  negative throughout (LensKit clips negative gains to 0: such a user's graded NDCG is 0).
* ``rank_ties``: ``distinct`` with tied ranks and gaps (ranks 2, 3 → 2 and 4, 5 → 4), valid
  RecTools input: its positions are the rank values (``order=rank_value``).
* ``dups``: ``distinct`` plus repeated (user, item) rows in the recommendations (a lower score
  further down) and repeated truth rows, for the peers that tolerate them.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd

KS = [1, 3, 5, 10]


def generate(seed: int = 0, kind: str = "ties", n_users: int = 60, n_items: int = 40):
    """(recs, truth, params) as pandas frames and a dict."""
    if kind == "signed":
        recs, truth, params = generate(seed, "distinct", n_users, n_items)
        srng = np.random.default_rng([seed, 7])
        rating = srng.integers(-2, 6, size=len(truth)).astype(float)
        allneg = (truth["user_id"] % 10 == 7).to_numpy()
        rating[allneg] = -srng.integers(1, 4, size=int(allneg.sum())).astype(float)
        truth = truth.assign(rating=rating)
        return recs, truth, {**params, "kind": kind}
    rng = np.random.default_rng(seed)
    rows, trows = [], []
    for u in range(1, n_users + 1):
        shape = u % 10
        if shape == 9 and kind == "ties_truth":
            continue
        if shape == 9:  # recommendation user without truth
            length = int(rng.integers(1, 12))
        elif shape == 8:  # truth user without recommendations
            length = 0
        elif shape in (1, 2):  # short list
            length = int(rng.integers(1, 4))
        else:
            length = int(rng.integers(4, 25))
        items = rng.choice(np.arange(1, n_items + 1), size=length, replace=False)
        if kind.startswith("ties") or kind == "binary":
            scores = np.round(rng.random(length), 1)
        else:
            scores = rng.permutation(length).astype(float) / max(length, 1) + rng.random() * 1e-3
            if kind == "logits":  # raw logits: about half of each list scored <= 0, some exactly 0
                scores = scores - 0.5
                if length > 2:
                    scores[int(rng.integers(0, length))] = 0.0
        # ranking: score descending, ties by the larger item id
        order = np.lexsort((-items, -scores))
        items, scores = items[order], scores[order]
        for r, (i, s) in enumerate(zip(items, scores), start=1):
            rows.append((u, int(i), float(s), r))
        if shape == 9:
            continue
        if shape == 3 and length:  # every ranked item relevant
            truth = list(items)
        elif shape == 4:  # no hit anywhere
            truth = [int(x) for x in rng.choice(np.arange(n_items + 1, n_items + 10), size=2, replace=False)]
        else:
            m = int(rng.integers(1, 8))
            truth = [int(x) for x in rng.choice(np.arange(1, n_items + 6), size=m, replace=False)]
        for i in truth:
            trows.append((u, int(i), 1.0 if kind == "binary" else float(rng.integers(1, 6))))
        if kind == "binary":  # explicit negatives among the recommended items
            negatives = [int(i) for i in items if int(i) not in truth][:3]
            trows.extend((u, i, 0.0) for i in negatives)
    recs = pd.DataFrame(rows, columns=["user_id", "item_id", "score", "rank"])
    truth = pd.DataFrame(trows, columns=["user_id", "item_id", "rating"])
    if kind == "dups":
        extra = recs.sample(n=8, random_state=seed).copy()
        extra["score"] = extra["score"] - 10.0  # a worse copy further down the list
        recs = pd.concat([recs, extra])
        recs = recs.sort_values(["user_id", "score", "item_id"], ascending=[True, False, False], kind="stable")
        recs["rank"] = recs.groupby("user_id").cumcount() + 1
        truth = pd.concat([truth, truth.sample(n=5, random_state=seed)]).sort_values(["user_id"], kind="stable")
    if kind == "rank_ties":  # tied ranks with gaps, as RecTools accepts them: 2,3 -> 2 and 4,5 -> 4
        recs["rank"] = np.maximum(1, recs["rank"] - recs["rank"] % 2)
    recs = recs.reset_index(drop=True).astype({"user_id": "int64", "item_id": "int64", "score": "float64", "rank": "int64"})
    truth = truth.reset_index(drop=True).astype({"user_id": "int64", "item_id": "int64", "rating": "float64"})
    return recs, truth, {"k": KS, "threshold": None, "seed": seed, "kind": kind}


_FRAMES: dict[str, tuple[pd.DataFrame, pd.DataFrame]] = {}


def read_frames(path: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(recs, truth) of a written dataset folder, read once per session."""
    key = str(path)
    if key not in _FRAMES:
        _FRAMES[key] = (pd.read_parquet(path / "recs.parquet"), pd.read_parquet(path / "truth.parquet"))
    return _FRAMES[key]


def write(out: Path, seed: int = 0, kind: str = "ties") -> Path:
    out.mkdir(parents=True, exist_ok=True)
    recs, truth, params = generate(seed, kind)
    recs.to_parquet(out / "recs.parquet", index=False)
    truth.to_parquet(out / "truth.parquet", index=False)
    (out / "params.json").write_text(json.dumps(params))
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--kind", default="ties", choices=["ties", "ties_truth", "distinct", "dups", "binary", "logits", "signed", "rank_ties"])
    a = ap.parse_args()
    print(write(a.out, a.seed, a.kind))
