"""Sampled evaluation does not depend on the order the catalogue is given in.

The score callable returns one score per catalogue item *in the order given* (module docs);
``sampled_evaluate`` once sorted the catalogue but read those scores as if they were sorted
too, so any unsorted catalogue was scored against the wrong items. Here the ``full``
estimator is checked against a brute-force full ranking written independently (pessimistic
ties: an equal-scored candidate ranks above the positive), and every estimator against
itself over several orders of the same catalogue."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from receval.sampled import ESTIMATORS, sampled_evaluate

SCORES = [-2.0, 0.0, 0.25, 0.5, 0.5, 1.0, 3.0]  # few values: ties are frequent


def _metric(spec: str, R: int) -> float:
    """The metric of one positive at full rank R, from the module docs (written out again)."""
    name, _, k = spec.partition("@")
    cut = int(k) if k else math.inf
    if R > cut:
        return 0.0
    return {"hitrate": 1.0, "ndcg": 1.0 / math.log2(R + 1), "mrr": 1.0 / R}[name]


def brute_full(score, truth, exclude, catalog, ties, spec):
    """Mean metric of the full rank over every distinct (user, relevant item) pair: the
    candidates of u are the catalogue items neither relevant to u nor excluded for u; the rank
    is 1 + the candidates scoring above the positive (or equal, with pessimistic ties)."""
    pos: dict = {}
    for u, i in zip(truth["user_id"], truth["item_id"]):
        pos.setdefault(u, set()).add(i)
    ex: dict = {}
    for u, i in zip(exclude["user_id"], exclude["item_id"]):
        ex.setdefault(u, set()).add(i)
    vals = []
    for u, items in pos.items():
        cand = [c for c in catalog if c not in items and c not in ex.get(u, set())]
        for p in items:
            sp = score[u][p]
            above = sum(1 for c in cand if (score[u][c] >= sp if ties == "pessimistic" else score[u][c] > sp))
            vals.append(_metric(spec, 1 + above))
    return sum(vals) / len(vals)


@st.composite
def cases(draw):
    text = draw(st.booleans())
    n_items = draw(st.integers(2, 12))
    if text:
        ids = draw(st.lists(st.text("abcXYZ019_", min_size=1, max_size=3), min_size=n_items, max_size=n_items, unique=True))
        users = draw(st.lists(st.text("uvw12", min_size=1, max_size=2), min_size=1, max_size=4, unique=True))
    else:
        ids = draw(st.lists(st.integers(-10_000, 10_000), min_size=n_items, max_size=n_items, unique=True))
        users = draw(st.lists(st.integers(-50, 50), min_size=1, max_size=4, unique=True))
    orders = [draw(st.permutations(ids)) for _ in range(2)]
    score = {u: {i: draw(st.sampled_from(SCORES)) for i in ids} for u in users}
    truth = {"user_id": [], "item_id": []}
    exclude = {"user_id": [], "item_id": []}
    least = n_items
    for u in users:
        chosen = draw(st.lists(st.sampled_from(ids), min_size=1, max_size=n_items - 1, unique=True))
        rest = [i for i in ids if i not in chosen]
        excl = draw(st.lists(st.sampled_from(rest), max_size=len(rest) - 1, unique=True))
        least = min(least, len(rest) - len(excl))
        for i in chosen + chosen[: draw(st.integers(0, 1))]:  # sometimes a repeated truth row
            truth["user_id"].append(u)
            truth["item_id"].append(i)
        for i in excl:
            exclude["user_id"].append(u)
            exclude["item_id"].append(i)
    n = draw(st.integers(1, least))
    k = draw(st.integers(1, n_items + 1))
    ties = draw(st.sampled_from(["pessimistic", "optimistic"]))
    seed = draw(st.integers(0, 2**32))
    return dict(ids=ids, orders=orders, score=score, truth=truth, exclude=exclude, n=n, k=k, ties=ties, seed=seed)


def _run(c, catalog, source="callable"):
    score = c["score"]
    if source == "callable":
        src = lambda u: [score[u][i] for i in catalog]  # noqa: E731  one score per item, in the catalogue's order
    else:
        src = {"user_id": [u for u in score for _ in catalog], "item_id": [i for _ in score for i in catalog],
               "score": [score[u][i] for u in score for i in catalog]}
    specs = [f"hitrate@{c['k']}", f"ndcg@{c['k']}", "mrr", f"mrr@{c['k']}"]
    return specs, sampled_evaluate(src, c["truth"], specs, catalog=catalog, n=c["n"], seed=c["seed"], ties=c["ties"],
                                   exclude=c["exclude"], gamma=0.05)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(c=cases())
def test_full_equals_brute_force_full_ranking_in_any_catalogue_order(c):
    for catalog in c["orders"]:
        specs, res = _run(c, catalog)
        for spec in specs:
            want = brute_full(c["score"], c["truth"], c["exclude"], catalog, c["ties"], spec)
            assert res[(spec, "full")] == pytest.approx(want, abs=1e-12), (spec, catalog)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(c=cases())
def test_every_estimator_is_the_same_in_any_catalogue_order(c):
    specs, ref = _run(c, sorted(c["ids"]))
    for catalog in c["orders"]:
        for source in ("callable", "frame"):
            _, res = _run(c, catalog, source)
            assert set(res.values) == {(s, e) for s in specs for e in ESTIMATORS}
            assert res.values == ref.values, (catalog, source)
            assert res.instances == ref.instances
            for key in ("sampled_rank", "full_rank"):
                assert res.per_instance[key].tolist() == ref.per_instance[key].tolist()


def test_lowest_score_is_not_ranked_first():
    """The issue's case: catalogue [3, 1, 2], scores aligned to it, item 3 scores lowest."""
    res = sampled_evaluate(lambda u: [0.1, 0.5, 0.9], {"user_id": [1], "item_id": [3]}, ["hitrate@1", "mrr"],
                           catalog=[3, 1, 2], n=1)
    assert res[("hitrate@1", "full")] == 0.0
    assert res[("mrr", "full")] == pytest.approx(1 / 3)
    assert res.per_instance["full_rank"].tolist() == [3.0]


def test_shuffled_large_catalogue_matches_brute_force():
    """An EASE-like run: 400 items in a shuffled order, one positive per user near the top."""
    rng = np.random.default_rng(5)
    catalog = [int(x) for x in rng.permutation(np.arange(1000, 1400))]
    S = {u: {i: float(v) for i, v in zip(catalog, rng.normal(size=len(catalog)))} for u in range(20)}
    truth = {"user_id": list(S), "item_id": [sorted(S[u], key=S[u].get)[-int(rng.integers(1, 30))] for u in S]}
    empty = {"user_id": [], "item_id": []}
    res = sampled_evaluate(lambda u: [S[u][i] for i in catalog], truth, ["hitrate@10", "ndcg@10"], catalog=catalog, n=50)
    for spec in ("hitrate@10", "ndcg@10"):
        assert res[(spec, "full")] == pytest.approx(brute_full(S, truth, empty, catalog, "pessimistic", spec), abs=1e-12)
    assert res[("hitrate@10", "full")] > 0.2  # most positives sit in the top 30 of 400
