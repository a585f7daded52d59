"""The compiled greedy ideal of α-nDCG and αβ-nDCG (:mod:`receval._jit_aspects`) against the numpy
path (issue 37): the kernel forced on (``RECEVAL_JIT_ASPECTS_MIN=0``) and forced off
(``RECEVAL_NO_JIT=1``) give the same run DCG, ideal DCG and value, bit for bit, on random inputs
made to tie: few categories, several per item, items without any, ratings on a coarse grid,
users without truth, ``k`` beyond the lists. The ideal's label-free tie rule (the tie key, then
every choice among tied candidates of different content) is the kernel's own, so a kernel that
broke ties another way (by item code, by the first or last candidate) fails here."""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import contextmanager

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import receval.metrics.aspects as A

pytest.importorskip("numba")

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def make(seed, U=40, n_items=30, C=5, K=6, max_deg=3, n_truth=10, grid=(1.0, 2.0, 3.0, 4.0, 5.0), sparse=False):
    """Random lists and truth that tie: ``C`` categories, 0..``max_deg`` per item, ratings on
    ``grid``, a fifth of the users without truth, lists shorter than ``K`` padded with -1."""
    rng = np.random.default_rng(seed)
    asp = np.zeros((n_items, C), dtype=bool)
    deg = rng.integers(0, max_deg + 1, size=n_items)
    for i in range(n_items):
        asp[i, rng.choice(C, size=min(int(deg[i]), C), replace=False)] = True
    items = np.full((U, K), -1, dtype=np.int64)
    off = [0]
    ti: list[int] = []
    tr: list[float] = []
    for u in range(U):
        ell = int(rng.integers(0, K + 1))
        items[u, :ell] = rng.choice(n_items, size=ell, replace=False)
        nt = 0 if rng.random() < 0.2 else int(rng.integers(1, n_truth + 1))
        t = np.sort(rng.choice(n_items, size=min(nt, n_items), replace=False))
        ti += t.tolist()
        tr += rng.choice(grid, size=t.shape[0]).tolist()
        off.append(len(ti))
    truth = {(u, i): r for u in range(U) for i, r in zip(ti[off[u]:off[u + 1]], tr[off[u]:off[u + 1]])}
    rating = np.array([[truth.get((u, int(i)), np.nan) if i >= 0 else np.nan for i in items[u]] for u in range(U)])
    aspects = sp.csr_matrix(asp) if sparse else asp
    return aspects, items, rating, np.array(off, dtype=np.int64), np.array(ti, dtype=np.int64), np.array(tr)


@pytest.fixture
def calls(monkeypatch):
    """Counts the kernel's calls (so that a test sees it ran, not the numpy path for it)."""
    seen = []
    real = A._jit_call

    def spy(*args, **kwargs):
        seen.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(A, "_jit_call", spy)
    return seen


def both(monkeypatch, fn):
    """``fn()`` with the kernel forced off, then forced on."""
    monkeypatch.setenv("RECEVAL_NO_JIT", "1")
    off = fn()
    monkeypatch.setenv("RECEVAL_NO_JIT", "0")
    monkeypatch.setenv("RECEVAL_JIT_ASPECTS_MIN", "0")
    on = fn()
    return off, on


def same(off, on):
    for a, b in zip(off, on):
        np.testing.assert_array_equal(a, b)  # bit for bit (NaN nowhere)
        assert a.tobytes() == b.tobytes()


@contextmanager
def spied():
    """(a MonkeyPatch, the kernel's calls) for a hypothesis test (function-scoped fixtures are not
    reset between its examples), undone on the way out."""
    mp = pytest.MonkeyPatch()
    seen: list[int] = []
    real = A._jit_call
    mp.setattr(A, "_jit_call", lambda *a, **kw: seen.append(1) or real(*a, **kw))
    try:
        yield mp, seen
    finally:
        mp.undo()


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), alpha=st.sampled_from([0.5, 0.2, 0.0, 1.0, 0.75]), k=st.integers(1, 12),
       C=st.sampled_from([1, 2, 3, 5, 8]))
def test_alpha_ndcg_kernel_equals_numpy(seed, alpha, k, C):
    with spied() as (mp, seen):
        asp, items, rating, off, ti, tr = make(seed, C=C)
        rel = np.nan_to_num(rating, nan=0.0) >= 3.0
        got = both(mp, lambda: A.alpha_ndcg(items, rel, asp, off, ti, tr, 3.0, alpha=alpha, k=k, return_parts=True))
        same(*got)
        assert seen, "the kernel did not run"


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(1, 12), C=st.sampled_from([1, 2, 3, 5, 8]),
       beta=st.sampled_from([0.2, 0.5, 1.0]), zero_below=st.sampled_from([None, 2.5]))
def test_ab_ndcg_kernel_equals_numpy(seed, k, C, beta, zero_below):
    with spied() as (mp, seen):
        asp, items, rating, off, ti, tr = make(seed, C=C, grid=(1.0, 3.0, 5.0))
        got = both(mp, lambda: A.alpha_beta_ndcg(items, rating, asp, off, ti, tr, beta=beta, r_max=5.0, k=k,
                                                 zero_below=zero_below, return_parts=True))
        same(*got)
        if (tr >= (zero_below or 0)).any():
            assert seen, "the kernel did not run"


@pytest.mark.parametrize("seed", range(6))
def test_many_categories_and_sparse_gamma(monkeypatch, calls, seed):
    # U x C past the dense layouts: gamma on the pairs the ratings touch (the kernel's sorted keys)
    asp, items, rating, off, ti, tr = make(seed, U=500, n_items=400, C=6000, max_deg=4, n_truth=12, sparse=True)
    asp = sp.csr_matrix(asp)
    gam = A._gamma_pairs(*A._truth_users(off), ti, tr, *A._aspects_csr(asp))
    assert gam.dense is None  # the sparse γ is what this test reaches
    got = both(monkeypatch, lambda: A.alpha_beta_ndcg(items, rating, asp, off, ti, tr, r_max=5.0, k=8, return_parts=True))
    same(*got)
    rel = np.nan_to_num(rating, nan=0.0) >= 3.0
    same(*both(monkeypatch, lambda: A.alpha_ndcg(items, rel, asp, off, ti, tr, 3.0, k=8, return_parts=True)))
    assert calls


@pytest.mark.parametrize("budget, cells", [(1, 1 << 22), (7, 1 << 22), (40, 1 << 22), (2048, 1), (2048, 30)])
def test_users_past_the_budget_take_the_numpy_path(monkeypatch, calls, budget, cells):
    # a user whose tied choices need more steps than the budget (or a search larger than the
    # cells) is computed by the numpy path, the others by the kernel: the same values either way
    monkeypatch.setattr(A, "JIT_BUDGET", budget)
    monkeypatch.setattr(A, "JIT_MAX_CELLS", cells)
    asp, items, rating, off, ti, tr = make(3, U=80, C=2, max_deg=2, n_truth=14, grid=(4.0, 5.0))
    rel = np.nan_to_num(rating, nan=0.0) >= 4.0
    same(*both(monkeypatch, lambda: A.alpha_ndcg(items, rel, asp, off, ti, tr, 4.0, k=10, return_parts=True)))
    same(*both(monkeypatch, lambda: A.alpha_beta_ndcg(items, rating, asp, off, ti, tr, r_max=5.0, k=10,
                                                      return_parts=True)))
    assert calls


@pytest.mark.parametrize("k", [25, 300])
def test_cut_offs_beyond_every_list_and_every_candidate(monkeypatch, calls, k):
    asp, items, rating, off, ti, tr = make(8, U=50, C=3, max_deg=2, n_truth=20, grid=(4.0, 5.0))
    rel = np.nan_to_num(rating, nan=0.0) >= 4.0
    same(*both(monkeypatch, lambda: A.alpha_ndcg(items, rel, asp, off, ti, tr, 4.0, k=k, return_parts=True)))
    same(*both(monkeypatch, lambda: A.alpha_beta_ndcg(items, rating, asp, off, ti, tr, r_max=5.0, k=k,
                                                      return_parts=True)))
    assert calls


def test_the_kernels_tie_keys_are_the_numpy_keys():
    # kappa of every candidate, as receval.metrics.aspects._tie_keys (with and without P)
    asp, items, rating, off, ti, tr = make(11, U=60, C=4, n_truth=12)
    indptr, indices, C = A._aspects_csr(asp)
    m = np.diff(indptr)[ti] > 0
    cs = np.zeros(m.shape[0] + 1, dtype=np.int64)
    np.cumsum(m, out=cs[1:])
    coff = cs[off]
    ci = ti[m]
    cu = np.repeat(np.arange(off.shape[0] - 1), np.diff(coff))
    cp = 0.2 * tr[m] / 5.0
    jit = A._jit()
    disc = A.ndeval_discount(5)
    _, ok, keys, _ = A._jit_call(jit, coff, ci, None, indptr, indices, C, disc, 0.5, 5, None, keys=True)
    assert ok.all()
    np.testing.assert_array_equal(keys, A._tie_keys(cu, ci, indptr, indices, C))
    gam = A._gamma_pairs(*A._truth_users(off), ti, tr, indptr, indices, C)
    _, ok, keys, _ = A._jit_call(jit, coff, ci, cp, indptr, indices, C, disc, 0.02, 5, gam, keys=True)
    np.testing.assert_array_equal(keys, A._tie_keys(cu, ci, indptr, indices, C, cp))


@pytest.mark.parametrize("seed", range(4))
def test_renamed_items_and_categories_give_the_same_ideal(monkeypatch, calls, seed):
    # the kernel's ideal reads no item or category code: renaming both leaves every value
    # unchanged, bit for bit (a kernel breaking ties by code would fail where the choice matters)
    asp, items, rating, off, ti, tr = make(seed, U=60, C=3, max_deg=2, n_truth=12, grid=(4.0, 5.0))
    rng = np.random.default_rng(seed + 100)
    n_items, C = asp.shape
    pi, pc = rng.permutation(n_items), rng.permutation(C)
    asp2 = np.zeros_like(asp)
    asp2[pi[:, None], pc[None, :]] = asp
    items2 = np.where(items >= 0, pi[np.maximum(items, 0)], -1)
    ti2 = pi[ti]
    order = np.lexsort((ti2, np.repeat(np.arange(off.shape[0] - 1), np.diff(off))))
    ti2, tr2 = ti2[order], tr[order]
    rel = np.nan_to_num(rating, nan=0.0) >= 4.0
    monkeypatch.setenv("RECEVAL_JIT_ASPECTS_MIN", "0")
    monkeypatch.setenv("RECEVAL_NO_JIT", "0")
    for fn in (lambda a_, it_, ti_, tr_: A.alpha_ndcg(it_, rel, a_, off, ti_, tr_, 4.0, k=10, return_parts=True),
               lambda a_, it_, ti_, tr_: A.alpha_beta_ndcg(it_, rating, a_, off, ti_, tr_, r_max=5.0, k=10,
                                                          return_parts=True)):
        same(fn(asp, items, ti, tr), fn(asp2, items2, ti2, tr2))
    assert calls


#: inputs ``make(seed, U=40, C=C, max_deg=D, n_truth=T, grid=G)`` with a user whose greedy ideal
#: depends on the choice between tied candidates (equal gain and key) of different content: the
#: greedy that takes one of them (the largest item code) gives a smaller ideal than the search
#: (found by trying seeds); (seed, C, D, T, G, user, alpha-beta)
SEARCHED = [(35, 4, 2, 12, (4.0, 5.0), 15, False), (124, 4, 2, 12, (4.0, 5.0), 4, False),
            (265, 4, 2, 12, (4.0, 5.0), 19, False), (392, 4, 2, 12, (4.0, 5.0), 7, False),
            (15, 6, 3, 16, (5.0,), 8, True), (19, 4, 2, 16, (5.0,), 27, True), (32, 4, 2, 16, (5.0,), 15, True),
            (34, 5, 2, 16, (5.0,), 32, True)]


@pytest.mark.parametrize("case", SEARCHED, ids=[f"seed{c[0]}-{'ab' if c[-1] else 'alpha'}" for c in SEARCHED])
def test_tied_choices_that_matter_are_searched(monkeypatch, calls, case):
    # the kernel follows every choice where the numpy path searches, and finds the same ideal
    seed, C, D, T, G, user, ab = case
    asp, items, rating, off, ti, tr = make(seed, U=40, C=C, max_deg=D, n_truth=T, grid=G)
    indptr, indices, C = A._aspects_csr(asp)
    U, k = off.shape[0] - 1, 10
    if ab:
        got = both(monkeypatch, lambda: A.alpha_beta_ndcg(items, rating, asp, off, ti, tr, r_max=5.0, k=k,
                                                          return_parts=True))
        cp_all = 0.2 * (tr / 5.0)
        m = np.diff(indptr)[ti] > 0
        cu, ci, cp = A._sort_candidates(*A._candidates(off, m, ti, cp_all))
        cu, ci, _, cp = A._order_by_tie_key(cu, ci, cp, indptr=indptr, indices=indices, C=C, p=cp)
        gam = A._gamma_pairs(*A._truth_users(off), ti, tr, indptr, indices, C)
        greedy = A._greedy_ideal(cu, ci, cp, A._Greedy(indptr, indices, C, U, k, 0.02, gam))
    else:
        rel = np.nan_to_num(rating, nan=0.0) >= 4.0
        got = both(monkeypatch, lambda: A.alpha_ndcg(items, rel, asp, off, ti, tr, 4.0, k=k, return_parts=True))
        m = (tr >= 4.0) & (np.diff(indptr)[ti] > 0)
        cu, ci = A._sort_candidates(*A._candidates(off, m, ti))
        cu, ci, _ = A._order_by_tie_key(cu, ci, indptr=indptr, indices=indices, C=C)
        greedy = A._greedy_ideal(cu, ci, None, A._Greedy(indptr, indices, C, U, k, 0.5, None))
    same(*got)
    assert got[1][2][user] > greedy[user]  # the choice matters for this user
    assert calls


def test_gains_that_may_rise_stay_on_the_numpy_path(monkeypatch, calls):
    # alpha outside [0, 1], P above 1 or gamma outside [0, 1]: the kernel is not called
    asp, items, rating, off, ti, tr = make(5)
    rel = np.nan_to_num(rating, nan=0.0) >= 3.0
    same(*both(monkeypatch, lambda: A.alpha_ndcg(items, rel, asp, off, ti, tr, 3.0, alpha=1.5, k=5, return_parts=True)))
    same(*both(monkeypatch, lambda: A.alpha_beta_ndcg(items, rating, asp, off, ti, tr, beta=2.0, r_max=5.0, k=5,
                                                      return_parts=True)))
    g = np.full((items.shape[0], asp.shape[1]), 1.5)
    same(*both(monkeypatch, lambda: A.alpha_beta_ndcg(items, rating, asp, off, ti, tr, r_max=5.0, k=5, gamma=g,
                                                      return_parts=True)))
    assert not calls
    g[:] = 0.25  # gamma given, inside [0, 1]: the kernel
    same(*both(monkeypatch, lambda: A.alpha_beta_ndcg(items, rating, asp, off, ti, tr, r_max=5.0, k=5, gamma=g,
                                                      return_parts=True)))
    assert calls


def test_small_inputs_never_import_numba():
    # below the threshold (and with RECEVAL_NO_JIT=1 at any size) numba is never imported
    code = (
        "import sys, numpy as np\n"
        "import receval.metrics.aspects as A\n"
        "asp = np.eye(3, dtype=bool)\n"
        "A.alpha_ndcg(np.array([[0, 1, 2]]), np.ones((1, 3), bool), asp, [0, 3], [0, 1, 2], [5.0, 5.0, 5.0], 4.0)\n"
        "A.alpha_beta_ndcg(np.array([[0, 1, 2]]), np.full((1, 3), 5.0), asp, [0, 3], [0, 1, 2], [5.0, 5.0, 5.0])\n"
        "print('numba' in sys.modules)\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("RECEVAL_NO_JIT", "RECEVAL_JIT_ASPECTS_MIN")}
    src = str(__import__("pathlib").Path(A.__file__).resolve().parents[2])
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out.stderr
    env["RECEVAL_NO_JIT"] = "1"
    env["RECEVAL_JIT_ASPECTS_MIN"] = "0"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out.stderr


@pytest.mark.parametrize("C", [3, 9, 20, 64, 65, 130, 300])
def test_gamma_in_the_kernel_is_numpys_bit_for_bit(monkeypatch, calls, C):
    # the kernel computes γ per user from the truth (its row sums as numpy's pairwise sums, the
    # dense row up to 64 categories, the nonzero places past it): ratings off any grid, so the
    # order of the additions shows in the last bits
    rng = np.random.default_rng(C)
    grid = tuple((rng.random(40) * 5.0 + 1e-3).tolist())
    asp, items, rating, off, ti, tr = make(C, U=300, n_items=200, C=C, K=8, max_deg=min(C, 12), n_truth=40,
                                           grid=grid)
    got = both(monkeypatch, lambda: A.alpha_beta_ndcg(items, rating, asp, off, ti, tr, r_max=5.0, k=8,
                                                      return_parts=True))
    same(*got)
    assert calls


def test_the_kernels_pairwise_sum_is_numpys(monkeypatch):
    # numpy's add.reduce of a contiguous row, from its nonzero places only (blocks of 128, halves
    # rounded to multiples of 8 above)
    monkeypatch.delenv("RECEVAL_NO_JIT", raising=False)
    jit = A._jit()
    rng = np.random.default_rng(7)
    for C in list(range(1, 140)) + [255, 256, 257, 1000, 1031, 5000]:
        for _ in range(4):
            row = rng.random(C) * 10.0 ** rng.integers(-3, 4, size=C)
            row[rng.random(C) < rng.random()] = 0.0
            cat = np.flatnonzero(row).astype(np.int64)
            got = jit._pairwise(cat, row[cat].copy(), cat.shape[0], C)
            assert got == row.sum(), (C, got, row.sum())


def as_rows(items, rating, seed):
    """The lists of ``items``/``rating`` ``[U, K]`` as :class:`receval.metrics.aspects.ListRows`:
    the users' rows in a shuffled user order (a list's rows are followed by another user's),
    ratings read through a truth row (with truth rows no list reads)."""
    rng = np.random.default_rng(seed)
    U, K = items.shape
    starts, length = np.zeros(U, dtype=np.int64), np.zeros(U, dtype=np.int64)
    r_items: list[int] = []
    r_truth: list[int] = []
    ratings = [9.0, 9.0]  # decoys: no row reads them
    for u in rng.permutation(U):
        ell = int((items[u] >= 0).sum())
        starts[u], length[u] = len(r_items), ell
        for j in range(ell):
            r_items.append(int(items[u, j]))
            if np.isnan(rating[u, j]):
                r_truth.append(-1)
            else:
                r_truth.append(len(ratings))
                ratings.append(float(rating[u, j]))
    lr = np.array(ratings)

    def top(k):
        pad = max(0, k - K)
        it = np.pad(items, ((0, 0), (0, pad)), constant_values=-1)[:, :k]
        rt = np.pad(rating, ((0, 0), (0, pad)), constant_values=np.nan)[:, :k]
        return it, np.nan_to_num(rt, nan=0.0) >= 3.0, rt

    return A.ListRows(starts, length, np.array(r_items, dtype=np.int64), np.array(r_truth, dtype=np.int64), lr,
                      lr >= 3.0, top)


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(1, 12), C=st.sampled_from([1, 2, 3, 5, 8]),
       beta=st.sampled_from([0.2, 0.5, 1.0]))
def test_lists_as_rows_give_the_dense_lists_values(seed, k, C, beta):
    """The kernel reading the lists as the form's rows (no dense [U, k] array) gives the numpy path's
    values on the dense lists, bit for bit, α-nDCG and αβ-nDCG; the rows given to the numpy path too."""
    with spied() as (mp, seen):
        asp, items, rating, off, ti, tr = make(seed, C=C, grid=(1.0, 3.0, 5.0))
        rows = as_rows(items, rating, seed)
        rel = np.nan_to_num(rating, nan=0.0) >= 3.0
        for dense, as_r in (
            (lambda: A.alpha_beta_ndcg(items, rating, asp, off, ti, tr, beta=beta, r_max=5.0, k=k, return_parts=True),
             lambda: A.alpha_beta_ndcg(rows, None, asp, off, ti, tr, beta=beta, r_max=5.0, k=k, return_parts=True)),
            (lambda: A.alpha_ndcg(items, rel, asp, off, ti, tr, 3.0, alpha=0.5, k=k, return_parts=True),
             lambda: A.alpha_ndcg(rows, None, asp, off, ti, tr, 3.0, alpha=0.5, k=k, return_parts=True)),
        ):
            mp.setenv("RECEVAL_NO_JIT", "1")
            want = dense()
            same(want, as_r())
            mp.setenv("RECEVAL_NO_JIT", "0")
            mp.setenv("RECEVAL_JIT_ASPECTS_MIN", "0")
            n = len(seen)
            same(want, as_r())
            if (tr > 0).any() and C:
                assert len(seen) > n, "the kernel did not run"


def test_lists_as_rows_need_a_cut_off():
    asp, items, rating, off, ti, tr = make(0)
    with pytest.raises(ValueError, match="cut-off"):
        A.alpha_beta_ndcg(as_rows(items, rating, 0), None, asp, off, ti, tr, r_max=5.0)


def test_scratch_counted_for_many_candidates_and_categories(monkeypatch, calls):
    """A part whose most candidates times most categories passes the scratch bound
    (``SCRATCH_CELLS``) counts its own triples: the values are still the numpy path's."""
    import receval._jit_aspects as J

    asp, items, rating, off, ti, tr = make(3, U=12, n_items=400, C=300, max_deg=240, n_truth=300, K=10)
    assert int(np.diff(off).max()) * int(asp.sum(axis=1).max()) > J.SCRATCH_CELLS
    same(*both(monkeypatch, lambda: A.alpha_beta_ndcg(items, rating, asp, off, ti, tr, r_max=5.0, k=10,
                                                      return_parts=True)))
    assert calls
