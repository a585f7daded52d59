"""Parity of the popularity, list-quality and diversity metrics with RecTools, RePlay and RecBole.

The parity datasets (tests/parity/generate.py) carry no side inputs: ``side_dataset(kind)``
adds a seeded train.parquet (every item 1..40 interacted with at least once, repeated rows
included, so rows ≠ distinct users), baseline.parquet (a second run) and categories.parquet
(one category per item), read by the runners src/receval/adapters/runners/{rectools_more,replay_more,recbole_more}.py.
The peers measure the users of their recommendations where receval averages truth users, so
those metrics are compared per user (to 1e-9); CoveredUsers and the RecBole runner average
truth users and are compared on the mean too.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from receval import evaluate

pytestmark = [pytest.mark.parity, pytest.mark.xdist_group("parity")]

KS = [1, 3, 5, 10]
TOL = 1e-9


def write_side(folder, seed: int = 7) -> None:
    if (folder / "train.parquet").exists():
        return
    rng = np.random.default_rng(seed)
    items = np.arange(1, 41)
    tu = np.r_[rng.integers(1, 81, size=len(items)), rng.integers(1, 81, size=400)]
    ti = np.r_[items, rng.choice(items, size=400, p=np.linspace(2, 0.1, 40) / np.linspace(2, 0.1, 40).sum())]
    pd.DataFrame({"user_id": tu.astype("int64"), "item_id": ti.astype("int64")}).to_parquet(folder / "train.parquet")
    rows = []
    for u in range(1, 61):
        n = int(rng.integers(0, 13))
        chosen = rng.choice(items, size=n, replace=False)
        for r, i in enumerate(chosen, start=1):
            rows.append((u, int(i), float(n - r) + 0.5, r))
    pd.DataFrame(rows, columns=["user_id", "item_id", "score", "rank"]).astype({"user_id": "int64", "item_id": "int64"}).to_parquet(folder / "baseline.parquet")
    pd.DataFrame({"item_id": items.astype("int64"), "category": [f"g{int(c)}" for c in rng.integers(0, 6, size=len(items))]}).to_parquet(folder / "categories.parquet")


@pytest.fixture(scope="session")
def side_dataset(dataset):
    def get(kind):
        path = dataset(kind)
        write_side(path)
        return path

    return get


# (runner, peer name with {k}, receval spec with {k}, dialect, compare the mean)
CASES = [
    ("rectools_more", "AvgRecPopularity@{k}", "arp(count=rows,denominator=length)@{k}", "rectools@0.19.0", False),
    ("rectools_more", "MeanInvUserFreq@{k}", "novelty(unknown=max)@{k}", "rectools@0.19.0", False),
    ("rectools_more", "Serendipity@{k}", "serendipity@{k}", "rectools@0.19.0", False),
    ("rectools_more", "SufficientReco@{k}", "filled@{k}", "rectools@0.19.0", False),
    ("rectools_more", "SufficientReco(deep=True)@{k}", "filled(form=share)@{k}", "rectools@0.19.0", False),
    ("rectools_more", "UnrepeatedReco@{k}", "unrepeated(dup=keep)@{k}", "rectools@0.19.0", False),
    ("rectools_more", "UnrepeatedReco(deep=True)@{k}", "unrepeated(form=share,dup=keep)@{k}", "rectools@0.19.0", False),
    ("rectools_more", "CoveredUsers@{k}", "covered@{k}", "rectools@0.19.0", True),
    ("rectools_more", "Intersection@{k}", "intersection@{k}", "rectools@0.19.0", False),
    ("rectools_more", "IntraListDiversity(hamming)@{k}", "ild(distance=hamming)@{k}", "rectools@0.19.0", False),
    ("replay_more", "Surprisal@{k}", "surprisal(denominator=k)@{k}", "replay@0.22.0", False),
    ("replay_more", "Unexpectedness@{k}", "unexpectedness@{k}", "replay@0.22.0", False),
    ("replay_more", "CategoricalDiversity@{k}", "catdiv(denominator=k)@{k}", "replay@0.22.0", False),
    # RePlay scores a train user without recommendations 1; receval follows norecs (skip: not compared)
    ("replay_more", "Novelty@{k}", "unseen(norecs=skip)@{k}", "replay@0.22.0", False),
    ("replay_more", "Coverage@{k}", "coverage@{k}", "replay@0.22.0", True),
    ("recbole_more", "AveragePopularity@{k}", "arp(count=rows,denominator=k)@{k}", "recbole@1.2.1", True),
    ("recbole_more", "TailPercentage(tail_ratio=0.1)@{k}", "aplt(split=items,cut=0.1,count=rows,denominator=k)@{k}", "recbole@1.2.1", True),
    ("recbole_more", "TailPercentage(tail_ratio=0.5)@{k}", "aplt(split=items,cut=0.5,count=rows,denominator=k)@{k}", "recbole@1.2.1", True),
    ("recbole_more", "TailPercentage(tail_ratio=3)@{k}", "aplt(split=count,cut=3,count=rows,denominator=k)@{k}", "recbole@1.2.1", True),
]


@pytest.mark.parametrize("runner, peer, spec, dialect, mean", [
    pytest.param(*c, id=f"{c[0]}-{c[1]}") for c in CASES])
@pytest.mark.parametrize("k", KS)
def test_parity_beyond(runner, peer, spec, dialect, mean, k, peer_run, side_dataset):
    kind = "distinct"
    path = side_dataset(kind)
    doc = peer_run(runner, kind)
    name = peer.format(k=k)
    if name not in doc["metrics"]:
        pytest.skip(f"{runner} did not emit {name}")
    got = doc["metrics"][name]
    recs, truth = pd.read_parquet(path / "recs.parquet"), pd.read_parquet(path / "truth.parquet")
    train = pd.read_parquet(path / "train.parquet")
    # RecTools' Serendipity reads n = |catalog| (every item of reco, interactions and train); RecBole's
    # tail split ranks the train items only (receval's catalogue when no catalog is given)
    catalog = sorted(set(recs["item_id"]) | set(truth["item_id"]) | set(train["item_id"])) if runner == "rectools_more" else None
    spec = spec.format(k=k)
    res = evaluate(recs, truth, [spec], dialect=dialect, train=train, catalog=catalog,
                   baseline=pd.read_parquet(path / "baseline.parquet"), categories=pd.read_parquet(path / "categories.parquet"))
    problems = []
    if mean and got["mean"] is not None and abs(res[spec] - got["mean"]) > TOL:
        problems.append(f"mean: peer {got['mean']!r} receval {res[spec]!r}")
    if got.get("per_user") is None:  # a global value (Coverage): the means only
        assert mean and got["mean"] is not None, f"{runner} {name}: nothing to compare"
        assert not problems, f"{runner} {name} vs {spec} [{dialect}]: " + "; ".join(problems)
        return
    ent = res._entry(spec)
    ours = {int(u): float(v) for u, v in zip(res.user_ids.tolist(), ent.per_user.tolist())}
    bad = [(int(u), v, ours[int(u)]) for u, v in (got.get("per_user") or {}).items()
           if int(u) in ours and v is not None and not math.isnan(ours[int(u)]) and abs(ours[int(u)] - v) > TOL]
    compared = sum(1 for u, v in (got.get("per_user") or {}).items() if int(u) in ours and v is not None and not math.isnan(ours[int(u)]))
    if bad:
        problems.append(f"per-user: {len(bad)} of {compared} differ, e.g. (user, peer, receval) {bad[:4]}")
    assert compared > 0, f"no user compared for {name}"
    assert not problems, f"{runner} {name} vs {spec} [{dialect}]: " + "; ".join(problems)
