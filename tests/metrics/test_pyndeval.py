"""α-nDCG against TREC ``ndeval`` (via ``pyndeval``) on generated data.

Mapping (see :func:`receval.metrics.aspects.alpha_ndcg`): user → topic,
category → subtopic, item → docno ``f"{item:08d}"`` (zero-padded so that
``ndeval``'s ``strcmp`` docno tie-break = largest item code), qrels line
``(user, category, item, 1)`` for every relevant item and each of its
categories.  The run is given by scores ``K - j`` so ``pyndeval``'s
score-then-docno sort reproduces our rank order.

The greedy ideal breaks ties differently (ndeval: the largest docno; receval: a label-free
rule, see :func:`receval.metrics.aspects.alpha_ndcg`), so :func:`_check` compares the DCG
(ndeval's value times the ideal of ndeval's rule, rebuilt here) on every user, and the values
where both ideals agree.
"""

from __future__ import annotations

import numpy as np
import pytest

from receval.metrics.aspects import alpha_ndcg

pyndeval = pytest.importorskip(
    "pyndeval", reason="pyndeval (dev extra, TREC ndeval.c binding) is not importable"
)

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


def _make(seed, U, n_items, C, K, p_aspect, max_truth, p_rel, p_short):
    rng = np.random.default_rng(seed)
    asp = rng.random((n_items, C)) < p_aspect
    asp[rng.random(n_items) < 0.1] = False  # some items without category
    offsets = [0]
    titems, tratings = [], []
    items = np.full((U, K), -1, dtype=np.int64)
    for u in range(U):
        n_t = int(rng.integers(0, max_truth + 1))
        t = rng.choice(n_items, size=n_t, replace=False)
        r = np.where(rng.random(n_t) < p_rel, 5.0, 2.0)
        titems.extend(t.tolist())
        tratings.extend(r.tolist())
        offsets.append(offsets[-1] + n_t)
        ln = K if rng.random() > p_short else int(rng.integers(0, K + 1))
        # mix truth items and random items, no duplicates
        pool = np.unique(np.concatenate([t, rng.choice(n_items, size=K, replace=False)]))
        rng.shuffle(pool)
        items[u, :ln] = pool[:ln]
    offsets = np.array(offsets, dtype=np.int64)
    titems = np.array(titems, dtype=np.int64)
    tratings = np.array(tratings, dtype=np.float64)
    # rel[u, j] from the truth (threshold 4)
    rel = np.zeros((U, K), dtype=bool)
    for u in range(U):
        good = set(titems[offsets[u]:offsets[u + 1]][tratings[offsets[u]:offsets[u + 1]] >= 4].tolist())
        rel[u] = [x in good for x in items[u]]
    return asp, items, rel, offsets, titems, tratings


def _ndeval_ideal(asp, offsets, titems, tratings, k, alpha):
    """The ideal DCG@k of ndeval's greedy (ties to the largest docno = item code) per user."""
    out = []
    for u in range(len(offsets) - 1):
        cands = [int(i) for i, r in zip(titems[offsets[u]:offsets[u + 1]], tratings[offsets[u]:offsets[u + 1]])
                 if r >= 4 and asp[i].any()]
        cnt = np.zeros(asp.shape[1])
        idcg, left = 0.0, sorted(cands)
        for j in range(min(k, len(left))):
            gains = [sum((1 - alpha) ** cnt[c] for c in np.flatnonzero(asp[d])) for d in left]
            b = max(range(len(left)), key=lambda x: (gains[x], left[x]))
            idcg += gains[b] * np.log(2.0) / np.log(j + 2.0)
            cnt[np.flatnonzero(asp[left.pop(b)])] += 1
        out.append(idcg)
    return np.array(out)


def _check(ref, items, rel, asp, off, ti, tr, k, alpha):
    got, dcg, idcg = alpha_ndcg(items, rel, asp, off, ti, tr, 4.0, alpha=alpha, k=k, return_parts=True)
    nd_idcg = _ndeval_ideal(asp, off, ti, tr, k, alpha)
    np.testing.assert_allclose(np.where(dcg > 0, ref * nd_idcg, 0.0), dcg, rtol=1e-12, atol=1e-9, err_msg=f"k={k}")
    same = np.abs(idcg - nd_idcg) <= 1e-12
    np.testing.assert_allclose(got[same], ref[same], rtol=0, atol=1e-9, err_msg=f"k={k}")
    return same


def _ndeval(asp, items, offsets, titems, tratings, C, ks, alpha):
    qrels = [("dummy", str(c), "x", 0) for c in range(C)]  # fixes subtopic id order = category order
    U = items.shape[0]
    for u in range(U):
        for it, r in zip(titems[offsets[u]:offsets[u + 1]], tratings[offsets[u]:offsets[u + 1]]):
            cats = np.flatnonzero(asp[it])
            for c in cats:
                qrels.append((f"u{u:05d}", str(c), f"{it:08d}", 1 if r >= 4 else 0))
    run = []
    K = items.shape[1]
    for u in range(U):
        for j, it in enumerate(items[u]):
            if it >= 0:
                run.append((f"u{u:05d}", f"{it:08d}", float(K - j)))
    res = pyndeval.ndeval(qrels, run, measures=[f"alpha-nDCG@{k}" for k in ks], alpha=alpha)
    out = {k: np.zeros(U) for k in ks}
    for q, vals in res.items():
        u = int(q[1:])
        for k in ks:
            out[k][u] = vals[f"alpha-nDCG@{k}"]
    return out


@pytest.mark.parametrize("alpha", [0.5, 0.25, 0.0, 1.0, 0.9])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_alpha_ndcg_matches_ndeval(seed, alpha):
    U, n_items, C, K = 60, 40, 6, 20
    asp, items, rel, off, ti, tr = _make(seed, U, n_items, C, K, 0.3, 25, 0.6, 0.3)
    ks = [1, 3, 5, 10, 20]
    ref = _ndeval(asp, items, off, ti, tr, C, ks, alpha)
    for k in ks:
        _check(ref[k], items, rel, asp, off, ti, tr, k, alpha)


def test_alpha_ndcg_matches_ndeval_many_ties():
    # few categories, many items with identical category sets: the tie rule matters
    U, n_items, C, K = 80, 30, 3, 20
    asp, items, rel, off, ti, tr = _make(7, U, n_items, C, K, 0.5, 25, 0.8, 0.2)
    ref = _ndeval(asp, items, off, ti, tr, C, [5, 10, 20], 0.5)
    for k in (5, 10, 20):
        assert _check(ref[k], items, rel, asp, off, ti, tr, k, 0.5).all()  # identical category sets: one ideal


def test_sparse_aspects_equal_dense():
    import scipy.sparse as sp

    asp, items, rel, off, ti, tr = _make(3, 30, 40, 5, 10, 0.3, 15, 0.6, 0.3)
    a = alpha_ndcg(items, rel, asp, off, ti, tr, 4.0)
    b = alpha_ndcg(items, rel, sp.csr_matrix(asp), off, ti, tr, 4.0)
    np.testing.assert_array_equal(a, b)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**31 - 1),
    C=st.integers(1, 6),
    K=st.integers(1, 20),
    p_aspect=st.sampled_from([0.2, 0.5, 0.9]),
    alpha=st.sampled_from([0.5, 0.1, 0.75]),
)
def test_alpha_ndcg_matches_ndeval_property(seed, C, K, p_aspect, alpha):
    asp, items, rel, off, ti, tr = _make(seed, 12, 25, C, K, p_aspect, 12, 0.7, 0.3)
    ref = _ndeval(asp, items, off, ti, tr, C, [K], alpha)
    _check(ref[K], items, rel, asp, off, ti, tr, K, alpha)
