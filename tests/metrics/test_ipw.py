"""Propensity-weighted accuracy metrics (``weight=pop``, Yang et al., RecSys 2018) against a
plain-Python brute force on random data, on the memory and Polars engines, and their refusals."""

from __future__ import annotations

import math
import random
from itertools import permutations

import polars as pl
import pytest

from receval import evaluate
from receval.backends.polars import evaluate_polars
from receval.errors import DataError, SpecError


def _propensity_weights(train_items, items, gamma, floor):
    n = {}
    for i in train_items:
        n[i] = n.get(i, 0) + 1
    top = max(n.values())
    out = {}
    for i in items:
        c = max(n.get(i, 0), floor or 0)
        out[i] = 1.0 / (c / top) ** gamma
    return out


def _user(ranked, rel, w, metric, k):
    """One user's value, straight from the definitions (lists without ties)."""
    wsum = sum(w[i] for i in rel)
    wt = {i: w[i] * len(rel) / wsum for i in rel}  # mean 1 over R
    top = ranked[:k]
    hits = [(p + 1, i) for p, i in enumerate(top) if i in rel]
    if metric == "recall":
        return sum(w[i] for _, i in hits) / wsum
    if metric == "precision":
        return sum(wt[i] for _, i in hits) / k
    if metric == "hitrate":
        return sum(wt[i] for _, i in hits)
    if metric == "map":
        num = 0.0
        for p, i in hits:
            num += wt[i] * sum(1 for q, _ in hits if q <= p) / p
        return num / min(k, len(rel))
    if metric == "ndcg":
        dcg = sum(w[i] / math.log2(p + 1) for p, i in hits)
        best = sorted((w[i] for i in rel), reverse=True)[:k]
        return dcg / sum(g / math.log2(r + 2) for r, g in enumerate(best))
    raise AssertionError(metric)


SPEC = {"recall": "recall", "precision": "precision", "hitrate": "hitrate(count=hits,", "map": "map", "ndcg": "ndcg"}


def _spec(metric, gamma, floor, k):
    head = SPEC[metric]
    opts = f"weight=pop,gamma={gamma},floor={floor}"
    return f"{head}{opts})@{k}" if head.endswith(",") else f"{head}({opts})@{k}"


def _data(seed):
    rnd = random.Random(seed)
    items = list(range(1, 16))
    recs = {"user_id": [], "item_id": [], "score": []}
    truth = {"user_id": [], "item_id": []}
    lists, rels = {}, {}
    for u in range(1, 9):
        ranked = rnd.sample(items, rnd.randint(1, 8))
        for p, i in enumerate(ranked):  # distinct scores: no ties
            recs["user_id"].append(u)
            recs["item_id"].append(i)
            recs["score"].append(float(100 - p))
        rel = rnd.sample(items, rnd.randint(1, 5))
        truth["user_id"] += [u] * len(rel)
        truth["item_id"] += rel
        lists[u], rels[u] = ranked, set(rel)
    train_items = [rnd.choice(items[:12]) for _ in range(60)]  # items 13-15 never in train
    train = {"user_id": list(range(len(train_items))), "item_id": train_items}
    return recs, truth, train, lists, rels, train_items


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("metric", sorted(SPEC))
def test_weighted_metrics_equal_brute_force(metric, seed):
    recs, truth, train, lists, rels, train_items = _data(seed)
    gamma, floor = [0.5, 1.0, 2.0][seed % 3], 1.0
    w = _propensity_weights(train_items, range(1, 16), gamma, floor)
    for k in (1, 3, 5):
        spec = _spec(metric, gamma, 1, k)
        want = sum(_user(lists[u], rels[u], w, metric, k) for u in lists) / len(lists)
        mem = evaluate(recs, truth, [spec], train=train)
        assert mem[spec] == pytest.approx(want, rel=1e-12), spec
        pol = evaluate_polars(pl.DataFrame(recs).lazy(), pl.DataFrame(truth).lazy(), [spec], train=train, n_batches=3)
        assert pol[spec] == mem[spec], spec  # the same bits on every engine and batch split


def test_gamma_zero_is_the_unweighted_metric():
    recs, truth, train, *_ = _data(1)
    for plain, weighted in [("recall@5", "recall(weight=pop,gamma=0,floor=1)@5"), ("ndcg@5", "ndcg(weight=pop,gamma=0,floor=1)@5"),
                            ("map@5", "map(weight=pop,gamma=0,floor=1)@5"), ("precision@5", "precision(weight=pop,gamma=0,floor=1)@5")]:
        res = evaluate(recs, truth, [plain, weighted], train=train)
        assert res[weighted] == pytest.approx(res[plain], rel=1e-12)


def test_ties_average_is_the_mean_over_orderings():
    """recall, precision, ndcg: the closed form of ties=average extends (each hit's term times its
    weight): the value is the mean of the brute force over every ordering of the tied items."""
    recs = {"user_id": [1] * 5, "item_id": [1, 2, 3, 4, 5], "score": [5.0, 3.0, 3.0, 3.0, 1.0]}
    truth = {"user_id": [1, 1, 1], "item_id": [2, 4, 5]}
    train = {"user_id": list(range(7)), "item_id": [1, 2, 2, 2, 4, 5, 5]}
    w = _propensity_weights(train["item_id"], range(1, 6), 1.0, 1)
    for metric in ("recall", "precision", "ndcg", "hitrate"):
        for k in (2, 3, 4):
            orders = [[1, *mid, 5] for mid in permutations([2, 3, 4])]
            want = sum(_user(o, {2, 4, 5}, w, metric, k) for o in orders) / len(orders)
            spec = _spec(metric, 1, 1, k)
            assert evaluate(recs, truth, [spec], train=train)[spec] == pytest.approx(want, rel=1e-12), spec


def test_worked_example_and_signature():
    train = {"user_id": [1, 2, 3, 4, 1, 2, 3, 4, 5], "item_id": [10, 10, 10, 10, 20, 20, 40, 40, 50]}
    recs = {"user_id": [1, 1, 1, 1], "item_id": [10, 20, 30, 40], "score": [4.0, 3.0, 2.0, 1.0]}
    truth = {"user_id": [1, 1, 1], "item_id": [20, 40, 50]}
    res = evaluate(recs, truth, ["recall(weight=pop,gamma=1)@4", "recall@4"], train=train)
    assert res["recall(weight=pop,gamma=1)@4"] == 0.5  # (2 + 2) / (2 + 2 + 4)
    sig = res.signatures["recall(gamma=1,weight=pop)@4"]
    assert "|weight:pop|gamma:1|" in sig and "side:train" in sig
    assert "weight" not in res.signatures["recall@4"] and "side" not in res.signatures["recall@4"]


def test_refusals_start_with_the_fix():
    recs = {"user_id": [1, 1], "item_id": [10, 20], "score": [2.0, 1.0]}
    truth = {"user_id": [1, 1], "item_id": [20, 30]}
    train = {"user_id": [1, 2], "item_id": [10, 20]}
    with pytest.raises(DataError, match=r"^pass floor=1 .*no propensity for 1 relevant items \(e\.g\. 30\)"):
        evaluate(recs, truth, ["recall(weight=pop,gamma=0.5)@2"], train=train)
    with pytest.raises(DataError, match=r"^pass train="):
        evaluate(recs, truth, ["recall(weight=pop,gamma=0.5,floor=1)@2"])
    with pytest.raises(SpecError, match=r"^write gamma= with weight=pop"):
        evaluate(recs, truth, ["recall(weight=pop)@2"], train=train)
    with pytest.raises(SpecError, match=r"^write weight=pop with gamma="):
        evaluate(recs, truth, ["recall(gamma=1)@2"], train=train)
    for spec in ("hitrate(weight=pop,gamma=1,floor=1)@2", "recall(weight=pop,gamma=1,floor=1,denominator=listed)@2",
                 "ndcg(weight=pop,gamma=1,floor=1,ideal=hits)@2", "map(weight=pop,gamma=1,floor=1,indicator=no)@2"):
        with pytest.raises(SpecError, match=r"^write \w+\(weight=pop\) without"):
            evaluate(recs, truth, [spec], train=train)


def test_map_refuses_ties_that_reach_the_top_k():
    recs = {"user_id": [1, 1, 1], "item_id": [10, 20, 30], "score": [2.0, 2.0, 1.0]}
    truth = {"user_id": [1], "item_id": [20]}
    train = {"user_id": [1, 2], "item_id": [10, 20]}
    with pytest.raises(DataError):
        evaluate(recs, truth, ["map(weight=pop,gamma=1)@2"], train=train)
    assert evaluate(recs, truth, ["map(weight=pop,gamma=1,ties=item)@2"], train=train)["map(gamma=1,ties=item,weight=pop)@2"] == 0.5
