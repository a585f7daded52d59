"""The users RePlay 0.22 averages over, per metric (dialect ``replay@0.22.0``).

RePlay's accuracy metrics (HitRate, Precision, Recall, MRR, MAP, NDCG, RocAuc) average the
ground-truth users, a user without recommendations scoring 0 (receval: ``norecs=zero``).
Surprisal, Unexpectedness and CategoricalDiversity take no ground truth: they average the
users of the recommendations, so a truth user without recommendations is not in their mean
(receval: ``norecs=skip``), where the dialect used to count it as 0.

The goldens are computed by hand below; the parity test runs RePlay itself (the peer env
``np2``, src/receval/adapters/envs/) through the parity runner src/receval/adapters/runners/replay_more.py.
Scores carry no ties.
"""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import receval
from receval.adapters import RUNNERS_DIR, env_root, runner_envs

D = "replay@0.22.0"
# truth users 1, 2, 3; user 3 has no recommendations
RECS = {"user_id": [1, 1, 2, 2], "item_id": [10, 20, 30, 10], "score": [0.9, 0.5, 0.8, 0.4]}
TRUTH = {"user_id": [1, 2, 3], "item_id": [20, 99, 10]}
# 4 train users: item 10 seen by all 4, 20 by one, 30 by two
TRAIN = {"user_id": [1, 2, 3, 4, 1, 2, 3], "item_id": [10, 10, 10, 10, 20, 30, 30]}
BASELINE = {"user_id": [1, 1, 2, 2], "item_id": [10, 40, 50, 60], "score": [2.0, 1.0, 2.0, 1.0]}
CATEGORIES = {"item_id": [10, 20, 30, 40, 50, 60, 99], "category": ["a", "b", "a", "c", "c", "b", "a"]}


def _replay(spec: str) -> float:
    res = receval.evaluate(RECS, TRUTH, [spec], dialect=D, train=TRAIN, baseline=BASELINE, categories=CATEGORIES)
    return res[spec]


def test_surprisal_averages_the_users_with_recommendations():
    # weight log2(N / u_i) / log2 N with N = 4: item 10 → 0, item 20 → 1, item 30 → 1/2; ÷ k = 2
    user1, user2 = (0.0 + 1.0) / 2, (0.5 + 0.0) / 2
    assert _replay("surprisal@2") == pytest.approx((user1 + user2) / 2, abs=1e-15)  # 0.375, not 0.25


def test_unexpectedness_averages_the_users_with_recommendations():
    # 1 − |L_2 ∩ B_2| / 2: user 1 shares item 10 with its baseline, user 2 nothing
    user1, user2 = 1 - 1 / 2, 1 - 0 / 2
    assert _replay("unexpectedness@2") == pytest.approx((user1 + user2) / 2, abs=1e-15)  # 0.75, not 0.5


def test_categorical_diversity_averages_the_users_with_recommendations():
    # distinct categories of the top 2 ÷ 2: user 1 {a, b}, user 2 {a}
    user1, user2 = 2 / 2, 1 / 2
    assert _replay("catdiv@2") == pytest.approx((user1 + user2) / 2, abs=1e-15)  # 0.75, not 0.5


@pytest.mark.parametrize("spec, want", [
    ("hitrate@2", (1 + 0 + 0) / 3),  # user 1 hits, user 2 misses, user 3 (no recommendations) scores 0
    ("precision@2", (1 / 2 + 0 + 0) / 3),
    ("recall@2", (1 + 0 + 0) / 3),
    ("mrr@2", (1 / 2 + 0 + 0) / 3),
    ("ndcg@2", ((1 / math.log2(3)) / 1 + 0 + 0) / 3),
])
def test_accuracy_metrics_average_the_truth_users(spec, want):
    assert _replay(spec) == pytest.approx(want, abs=1e-15)


def test_the_dialect_records_the_user_set_of_each_metric():
    from receval.dialects import load_dialect

    d = load_dialect(D)
    for name in ("surprisal", "unexpectedness", "catdiv"):
        assert d.options_for(name, 2)["norecs"] == "skip", name
    for name in ("hitrate", "precision", "recall", "mrr", "map", "ndcg"):
        assert d.options_for(name, 2)["norecs"] == "zero", name


# ---- parity: RePlay itself ---------------------------------------------------------------------

KS = [1, 3, 5, 10]


def _peer_python() -> Path:
    return env_root() / runner_envs()["replay_more"] / "bin" / "python"


def _parity_data(folder: Path, seed: int = 29) -> None:
    """40 truth users, 28 of them with recommendations (distinct scores); every recommended
    user is a truth user (RePlay would average a recommended user outside the truth too)."""
    rng = np.random.default_rng(seed)
    items = np.arange(1, 31)
    recs, truth, base = [], [], []
    for u in range(1, 41):
        truth += [(u, int(i), float(rng.integers(1, 6))) for i in rng.choice(items, int(rng.integers(1, 6)), replace=False)]
        if u % 10 in (3, 6, 9):  # no recommendations
            continue
        chosen = rng.choice(items, int(rng.integers(1, 13)), replace=False)
        recs += [(u, int(i), float(len(chosen) - r) + 0.25, r + 1) for r, i in enumerate(chosen)]
        if u % 4:
            b = rng.choice(items, int(rng.integers(1, 10)), replace=False)
            base += [(u, int(i), float(len(b) - r), r + 1) for r, i in enumerate(b)]
    train_u = np.r_[rng.integers(1, 61, len(items)), rng.integers(1, 61, 300)]
    train_i = np.r_[items, rng.choice(items, 300)]
    pd.DataFrame(recs, columns=["user_id", "item_id", "score", "rank"]).to_parquet(folder / "recs.parquet")
    pd.DataFrame(truth, columns=["user_id", "item_id", "rating"]).to_parquet(folder / "truth.parquet")
    pd.DataFrame({"user_id": train_u.astype("int64"), "item_id": train_i.astype("int64")}).to_parquet(folder / "train.parquet")
    pd.DataFrame(base, columns=["user_id", "item_id", "score", "rank"]).to_parquet(folder / "baseline.parquet")
    pd.DataFrame({"item_id": items.astype("int64"), "category": [f"g{int(c)}" for c in rng.integers(0, 5, len(items))]}
                 ).to_parquet(folder / "categories.parquet")
    (folder / "params.json").write_text(json.dumps({"k": KS, "threshold": None}))


@pytest.mark.parity
@pytest.mark.parametrize("peer, spec", [
    ("Surprisal", "surprisal"), ("Unexpectedness", "unexpectedness"), ("CategoricalDiversity", "catdiv"),
])
def test_parity_means_with_replay(peer, spec, tmp_path_factory):
    py = _peer_python()
    if not py.exists():
        pytest.skip(f"the RePlay peer env is absent ({py}); build it with `receval peers build {runner_envs()['replay_more']}`")
    folder = tmp_path_factory.getbasetemp() / "replay_users"
    out = folder / "replay_more.json"
    if not out.exists():
        folder.mkdir(exist_ok=True)
        _parity_data(folder)
        proc = subprocess.run([str(py), str(RUNNERS_DIR / "replay_more.py"), str(folder), str(out)],
                              capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(out.read_text())
    recs, truth = pd.read_parquet(folder / "recs.parquet"), pd.read_parquet(folder / "truth.parquet")
    assert set(recs["user_id"]) < set(truth["user_id"])  # truth users without recommendations exist
    side = dict(train=pd.read_parquet(folder / "train.parquet"), baseline=pd.read_parquet(folder / "baseline.parquet"),
                categories=pd.read_parquet(folder / "categories.parquet"))
    specs = [f"{spec}@{k}" for k in KS]
    res = receval.evaluate(recs, truth, specs, dialect=D, **side)
    for k, s in zip(KS, specs):
        got = doc["metrics"][f"{peer}@{k}"]
        assert len(got["per_user"]) == recs["user_id"].nunique()  # RePlay averaged the users of the recommendations
        assert res._entry(s).users == recs["user_id"].nunique()
        assert abs(res[s] - got["mean"]) <= 1e-9, (s, res[s], got["mean"])
