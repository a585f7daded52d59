"""Sampled-negative evaluation (receval.sampled): the documented protocol reproduced
independently, the corrected estimator against a direct numerical minimisation, the limits
(every negative sampled → sampled = corrected = full), properties and refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from receval import DataError, SpecError
from receval.sampled import bv_correction, rank_distribution, sampled_evaluate


def _data(seed=0, n_users=6, n_items=20):
    rng = np.random.default_rng(seed)
    S = {u: np.round(rng.random(n_items), 1) for u in range(1, n_users + 1)}   # ties on purpose
    truth = {"user_id": [], "item_id": []}
    for u in S:
        for i in rng.choice(np.arange(100, 100 + n_items), size=2, replace=False):
            truth["user_id"].append(u)
            truth["item_id"].append(int(i))
    return S, truth, list(range(100, 100 + n_items))


def test_protocol_reproduced_independently():
    S, truth, catalog = _data()
    exclude = {"user_id": [1, 1], "item_id": [100, 101]}
    res = sampled_evaluate(lambda u: S[u], truth, ["hitrate@3"], catalog=catalog, n=5, seed=42, exclude=exclude)
    rng = np.random.default_rng(42)
    want_s, want_f = [], []
    for u in sorted(set(truth["user_id"])):
        pos = sorted(i for uu, i in zip(truth["user_id"], truth["item_id"]) if uu == u)
        ex = {100, 101} if u == 1 else set()
        cand = [j for j, c in enumerate(catalog) if c not in pos and c not in ex]
        for p in pos:
            sp = S[u][catalog.index(p)]
            above = sum(1 for j in cand if S[u][j] >= sp)                  # pessimistic: ties rank above
            want_s.append(1 + int(rng.hypergeometric(above, len(cand) - above, 5)))  # one scalar draw per instance
            want_f.append(1 + above)
    assert res.per_instance["sampled_rank"].tolist() == want_s
    assert res.per_instance["full_rank"].tolist() == want_f
    assert res[("hitrate@3", "uncorrected")] == pytest.approx(sum(r <= 3 for r in want_s) / len(want_s))
    assert res[("hitrate@3", "full")] == pytest.approx(sum(r <= 3 for r in want_f) / len(want_f))
    assert res.instances == 12


def test_the_hypergeometric_draw_is_the_law_of_sampling_negatives():
    """Drawing n of the C candidates without replacement and counting those above the positive
    (the textbook protocol, simulated) has the law the protocol draws from directly."""
    C, A, n, trials = 30, 9, 6, 20_000
    rng = np.random.default_rng(7)
    sim = (rng.random((trials, C)).argsort(axis=1)[:, :n] < A).sum(axis=1)  # the first A candidates are "above"
    from scipy.stats import hypergeom

    freq = np.bincount(sim, minlength=n + 1) / trials
    assert np.abs(freq - hypergeom.pmf(np.arange(n + 1), C, A, n)).max() < 0.015


def test_strings_and_shuffled_rows_give_the_same_values():
    S, truth, catalog = _data(2)
    frame = {"user_id": [], "item_id": [], "score": []}
    for u, row in S.items():
        for c, v in zip(catalog, row):
            frame["user_id"].append(f"u{u}"); frame["item_id"].append(f"i{c}"); frame["score"].append(float(v))
    order = np.random.default_rng(1).permutation(len(frame["score"]))
    shuffled = {k: [v[j] for j in order] for k, v in frame.items()}
    t2 = {"user_id": [f"u{u}" for u in truth["user_id"]], "item_id": [f"i{i}" for i in truth["item_id"]]}
    a = sampled_evaluate(lambda u: S[u], truth, ["ndcg@5"], catalog=catalog, n=6, seed=3)
    b = sampled_evaluate(shuffled, t2, ["ndcg@5"], catalog=[f"i{c}" for c in catalog], n=6, seed=3)
    # string ids sort differently ("u1" < "u10"...; "i100" < "i101"): same users here, same item order
    assert a.values == b.values


def test_every_negative_sampled_gives_the_full_value():
    S, truth, catalog = _data(1)
    res = sampled_evaluate(lambda u: S[u], truth, ["hitrate@3", "ndcg@5", "mrr"], catalog=catalog, n=18, seed=0, gamma=0.3)
    for m in ("hitrate@3", "ndcg@5", "mrr"):
        assert res[(m, "uncorrected")] == pytest.approx(res[(m, "full")], abs=1e-12)
        assert res[(m, "bv")] == pytest.approx(res[(m, "full")], abs=1e-9)


def test_golden_ranks_and_metrics():
    catalog = [1, 2, 3, 4, 5]
    truth = {"user_id": [7], "item_id": [4]}
    res = sampled_evaluate(lambda u: [0.9, 0.8, 0.7, 0.6, 0.5], truth, ["ndcg@10", "mrr", "mrr@2"], catalog=catalog, n=4)
    # full rank 4: ndcg = 1/log2 5, mrr = 1/4, mrr@2 = 0
    assert res[("ndcg@10", "full")] == pytest.approx(1 / math.log2(5))
    assert res[("mrr", "full")] == pytest.approx(0.25)
    assert res[("mrr@2", "full")] == 0.0
    # ties: optimistic counts equal scores below the positive
    tied = sampled_evaluate(lambda u: [0.9, 0.6, 0.7, 0.6, 0.5], truth, ["mrr"], catalog=catalog, n=4, ties="optimistic")
    assert tied[("mrr", "full")] == pytest.approx(1 / 3)
    assert sampled_evaluate(lambda u: [0.9, 0.6, 0.7, 0.6, 0.5], truth, ["mrr"], catalog=catalog, n=4)[("mrr", "full")] == pytest.approx(1 / 4)


def test_signature_names_the_protocol():
    S, truth, catalog = _data()
    res = sampled_evaluate(lambda u: S[u], truth, ["ndcg@5"], catalog=catalog, n=5, seed=9, gamma=0.05)
    sig = res.signatures[("ndcg@5", "bv")]
    assert "protocol:sampled|n:5|seed:9|ties:pessimistic" in sig and "estimator:bv|gamma:0.05" in sig
    assert "estimator:uncorrected" in res.signatures[("ndcg@5", "uncorrected")]


def test_frame_source_equals_callable():
    S, truth, catalog = _data(2)
    frame = {"user_id": [u for u in S for _ in catalog], "item_id": [c for _ in S for c in catalog],
             "score": [float(x) for u in S for x in S[u]]}
    a = sampled_evaluate(lambda u: S[u], truth, ["ndcg@5"], catalog=catalog, n=6, seed=3)
    b = sampled_evaluate(frame, truth, ["ndcg@5"], catalog=catalog, n=6, seed=3)
    assert a.values == b.values


def test_bv_matches_direct_minimisation():
    from scipy.optimize import minimize

    N, n, gamma = 12, 3, 0.2
    M = lambda r: np.where(r <= 5, 1 / np.log2(r + 1), 0.0)  # noqa: E731
    P = rank_distribution(N, n)
    target = M(np.arange(1, N + 1, dtype=float))

    def objective(x):
        mean = P @ x
        var = P @ (x**2) - mean**2
        return np.mean((mean - target) ** 2 + gamma * var)

    direct = minimize(objective, np.zeros(n + 1), method="BFGS", options={"gtol": 1e-12}).x
    assert bv_correction(M, N, n, gamma) == pytest.approx(direct, abs=1e-6)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(N=st.integers(2, 40), n=st.integers(1, 39))
def test_rank_distribution_rows_sum_to_one(N, n):
    if n > N - 1:
        return
    P = rank_distribution(N, n)
    assert P.shape == (N, n + 1)
    assert np.allclose(P.sum(axis=1), 1.0)


@settings(max_examples=30, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 15))
def test_sampled_rank_never_exceeds_full_rank(seed, n):
    S, truth, catalog = _data(seed % 7)
    res = sampled_evaluate(lambda u: S[u], truth, ["hitrate@3", "ndcg@3", "mrr"], catalog=catalog, n=n, seed=seed)
    assert np.all(res.per_instance["sampled_rank"] <= res.per_instance["full_rank"])
    for m in ("hitrate@3", "ndcg@3", "mrr"):
        assert res[(m, "uncorrected")] >= res[(m, "full")] - 1e-15


def test_refusals():
    S, truth, catalog = _data()
    with pytest.raises(SpecError, match="supports"):
        sampled_evaluate(lambda u: S[u], truth, ["precision@3"], catalog=catalog)
    with pytest.raises(DataError, match="fewer than n"):
        sampled_evaluate(lambda u: S[u], truth, ["hitrate@3"], catalog=catalog, n=100)
    with pytest.raises(DataError, match="one per catalogue item"):
        sampled_evaluate(lambda u: S[u][:3], truth, ["hitrate@3"], catalog=catalog, n=5)
    with pytest.raises(DataError, match="miss"):
        sampled_evaluate({"user_id": [1], "item_id": [100], "score": [1.0]}, truth, ["hitrate@3"], catalog=catalog, n=5)
    with pytest.raises(DataError, match="catalogue"):
        sampled_evaluate(lambda u: S[u], truth, ["hitrate@3"], catalog=catalog[:5], n=2)


@pytest.mark.parametrize(("N", "n"), [(5, 4), (30, 6), (200, 100), (1000, 3)])
def test_rank_distribution_equals_scipy_hypergeom(N, n):
    from scipy.stats import hypergeom

    R, r = np.arange(1, N + 1)[:, None], np.arange(1, n + 2)[None, :]
    assert np.allclose(rank_distribution(N, n), hypergeom.pmf(r - 1, N - 1, R - 1, n), rtol=1e-9, atol=1e-15)
