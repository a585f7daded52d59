"""Memory and time follow the data, never k beyond the longest list."""

from __future__ import annotations

import tracemalloc

import pytest

import receval
from receval.metrics import all_metrics

RECS = {"user_id": [1, 1, 2], "item_id": [1, 2, 1], "score": [0.9, 0.5, 0.3]}
TRUTH = {"user_id": [1, 2], "item_id": [2, 1], "rating": [4.0, 5.0]}
CATS = {"item_id": [1, 2], "category": ["a", "b"]}
TRAIN = {"user_id": [1, 2, 3], "item_id": [2, 1, 2]}
SIDE = dict(
    categories=CATS, train=TRAIN, baseline=RECS,
    item_groups={"item_id": [1, 2], "group": ["a", "b"]}, user_groups={"user_id": [1, 2], "group": ["x", "y"]},
)
HUGE = 10**9
#: options some metrics need on this tiny input (a tail that is not empty, repeats let through,
#: the category of a bias-disparity cell)
OPTIONS = {"popreo": "(split=count,cut=1)", "poprsp": "(split=count,cut=1)", "unrepeated": "(dup=keep)",
           "bias_disparity": "(icat=a)"}


@pytest.mark.parametrize("name", [m.name for m in all_metrics() if m.needs_k or m.optional_k])
def test_a_huge_cut_off_costs_what_the_lists_cost(name):
    spec = f"{name}{OPTIONS.get(name, '')}@{HUGE}"
    tracemalloc.start()
    try:
        res = receval.evaluate(RECS, TRUTH, [spec], **SIDE)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * 2**20, f"{spec} allocated {peak / 2**20:.0f} MiB"
    assert res[spec] == res[spec]  # a number


def test_values_at_a_huge_cut_off():
    specs = [f"{m}@{HUGE}" for m in ("precision", "recall", "ndcg", "mrr", "map", "map(indicator=no)", "ndcg(ideal=k)")]
    res = receval.evaluate(RECS, TRUTH, specs)
    assert res[f"precision@{HUGE}"] == pytest.approx(1 / HUGE)  # one hit each, divided by k
    assert res[f"recall@{HUGE}"] == 1.0
    assert res[f"ndcg@{HUGE}"] == receval.evaluate(RECS, TRUTH, ["ndcg@3"])["ndcg@3"]
    assert res[f"mrr@{HUGE}"] == 0.75
    # indicator=no sums P@i over all k positions: user 1 (hit at 2): Σ_{i>=2} 1/i, user 2: Σ_{i>=1} 1/i,
    # each divided by min(k, |R|) = 1: harmonic numbers, H_n = ln n + γ + 1/(2n) - ...
    import math

    h = math.log(HUGE) + 0.5772156649015329 + 1 / (2 * HUGE)
    assert res[f"map(indicator=no)@{HUGE}"] == pytest.approx(((h - 1) + h) / 2, rel=1e-12)
