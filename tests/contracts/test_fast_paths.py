"""Issue 22's slow corners: the faster kernels give the values of the kernels they replaced.

* α/αβ-nDCG's greedy ideal by cohorts (``aspects._greedy_cohorts``) against the kernel it
  replaced (``aspects._dense_chunk``, still the path for gains that may be non-finite), bit
  for bit, with small cohort blocks so that a cohort spans several blocks.
* αβ-nDCG's greedy by windows (``aspects._greedy_window``, gains that only fall) against the
  cohort kernel, bit for bit: windows of 1, 2 and 4 candidates (many reads of the reservoir and
  picks from it), small blocks, and sort keys that keep so few bits of the first gains that
  many users need their exact sort; the run side by user blocks (``aspects._run_dcg_blocks``)
  against the rank loop over all users; γ from the aspect table against the ragged expansion.
* The sampled BV correction: the cells of the table by broadcasting / the shared log-binomial
  table bit for bit; the corrections to 1e-12 of the dense formula; the cache; the progress
  bar only on a terminal.
"""

from __future__ import annotations

import io

import numpy as np
import pytest
import scipy.sparse as sp

from receval import sampled as S
from receval.metrics import aspects as A
from receval.sampled import _metric_of, sampled_evaluate


# ---------------------------------------------------------------------------- α / αβ-nDCG


def _data(rng, heavy: bool = False):
    U, n_items = int(rng.integers(1, 60)), int(rng.integers(2, 150))
    C = int(rng.choice([1, 2, 3, 9, 40, 300]))
    K = int(rng.integers(1, 15))
    p = float(rng.choice([0.02, 0.2, 0.6])) if C < 50 else min(1.0, 4.0 / C * int(rng.integers(1, 5)))
    asp = rng.random((n_items, C)) < p
    asp = sp.csr_matrix(asp) if rng.random() < 0.5 else asp
    items = np.stack([np.r_[rng.permutation(n_items), -np.ones(max(K - n_items, 0), dtype=int)][:K] for _ in range(U)])
    items[rng.random(items.shape) < 0.1] = -1
    nt = rng.integers(0, min(n_items, 90 if heavy else 30) + 1, size=U)
    off = np.r_[0, np.cumsum(nt)]
    ti = np.concatenate([np.sort(rng.permutation(n_items)[:m]) for m in nt]).astype(np.int64)
    tr = rng.choice([0.5, 1, 2, 3, 3.5, 4, 5], size=ti.shape[0]).astype(float)
    if rng.random() < 0.3:
        tr = np.round(tr)  # many equal gains: the tie rule decides
    rating = np.full(items.shape, np.nan)
    for u in range(U):
        rated = dict(zip(ti[off[u]:off[u + 1]].tolist(), tr[off[u]:off[u + 1]].tolist()))
        for j, i in enumerate(items[u]):
            rating[u, j] = rated.get(int(i), np.nan)
    return asp, items, off, ti, tr, rating


def _both(monkeypatch, fn):
    """``fn()`` with the cohort kernel (small blocks) and with the dense kernel it replaced."""
    with monkeypatch.context() as m:
        m.setattr(A, "_COL_CELLS", 16)
        new = fn()
    with monkeypatch.context() as m:
        m.setattr(A, "_finite_gains", lambda *a: False)
        m.setattr(A, "_falling_gains", lambda *a: False)
        old = fn()
    return new, old


@pytest.mark.parametrize("seed", range(6))
def test_greedy_by_cohorts_is_bit_identical_to_the_dense_kernel(monkeypatch, seed):
    rng = np.random.default_rng(100 + seed)
    for _ in range(15):
        asp, items, off, ti, tr, rating = _data(rng, heavy=seed % 2 == 1)
        k = int(rng.integers(1, 25))
        alpha = float(rng.choice([0.5, 0.1, 0.9, 0.0, 1.0]))
        thr = float(rng.choice([0, 3, 4]))
        rel = np.nan_to_num(rating, nan=-9) >= thr
        args = (items, rel, asp, off, ti, tr, thr)
        new, old = _both(monkeypatch, lambda args=args, alpha=alpha, k=k: A.alpha_ndcg(*args, alpha=alpha, k=k, return_parts=True))
        assert all(np.array_equal(a, b) for a, b in zip(new, old))
        kw = dict(alpha=float(rng.choice([0.02, 0.2])), beta=float(rng.choice([0.2, 0.5, 1.0])), k=k,
                  r_max=[None, 5.0][int(rng.integers(2))], zero_below=[None, 3.0][int(rng.integers(2))])
        args = (items, rating, asp, off, ti, tr)
        new, old = _both(monkeypatch, lambda args=args, kw=kw: A.alpha_beta_ndcg(*args, return_parts=True, **kw))
        assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(new, old))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("win", [1, 2, 4])
def test_window_greedy_and_run_blocks_are_bit_identical(monkeypatch, seed, win):
    rng = np.random.default_rng(300 + seed)
    for _ in range(12):
        asp, items, off, ti, tr, rating = _data(rng, heavy=seed % 2 == 1)
        if rng.random() < 0.3:
            tr = np.abs(tr)
        k = int(rng.integers(1, 25))
        kw = dict(alpha=float(rng.choice([0.02, 0.2, 0.0])), beta=float(rng.choice([0.2, 0.5, 1.0])), k=k,
                  r_max=[None, 5.0][int(rng.integers(2))], zero_below=[None, 3.0][int(rng.integers(2))])
        if rng.random() < 0.2:  # γ given: every candidate its own (random) preference
            kw["gamma"] = rng.random((items.shape[0], asp.shape[1]))
        args = (items, rating, asp, off, ti, tr)
        with monkeypatch.context() as m:
            m.setattr(A, "_WIN", win)
            m.setattr(A, "_WIN_CELLS", int(rng.choice([8, 64, 1 << 16])))
            m.setattr(A, "_RUN_SLOTS", int(rng.choice([1, 30, 1 << 17])))
            m.setattr(A, "_KEY_BITS", int(rng.choice([6, 40])))  # 40: most first gains tie in their kept bits
            new = A.alpha_beta_ndcg(*args, return_parts=True, **kw)
        with monkeypatch.context() as m:  # the cohort kernel and the rank loop over all users
            m.setattr(A, "_falling_gains", lambda *a: False)
            m.setattr(A, "_unit", lambda *a: False)
            old = A.alpha_beta_ndcg(*args, return_parts=True, **kw)
        assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(new, old))


def test_window_kernel_is_taken_and_guarded():
    """The window kernel runs where gains only fall, not where a P or a P γ leaves [0, 1]."""
    p = np.array([0.2, 1.0, 0.0])
    assert A._falling_gains(p, np.array([[0.1, 1.0, 0.0]]))
    assert not A._falling_gains(np.array([0.2, 1.5]), np.array([[0.1, 0.0]]))
    assert not A._falling_gains(p, np.array([[0.1, -0.5, 0.0]]))
    assert not A._falling_gains(p, np.array([[0.1, 1.5, 0.0]]))
    assert not A._falling_gains(p, np.array([[0.1, np.nan, 0.0]]))
    assert A._unit(np.array([0.0, 0.5, 1.0])) and not A._unit(np.array([0.5, 1.5])) and not A._unit(np.array([np.nan]))


def test_gamma_from_the_aspect_table_is_bit_identical_to_the_expansion():
    rng = np.random.default_rng(7)
    for _ in range(30):
        asp, items, off, ti, tr, rating = _data(rng)
        indptr, indices, C = A._aspects_csr(asp)
        o, tuser = A._truth_users(off)
        got = A._gamma(o, tuser, ti, tr, indptr, indices, C)
        rep, a, _ = A._expand(ti, indptr, indices)  # the expansion it replaced
        num = np.bincount(tuser[rep] * C + a, weights=tr[rep], minlength=(len(off) - 1) * C).astype(np.float64).reshape(-1, C)
        den = num.sum(axis=1, keepdims=True)
        want = np.zeros_like(num)
        np.divide(num, den, out=want, where=den > 0)
        assert np.array_equal(got, want)


def test_finite_gains_guard():
    p = np.array([0.2, 1.0])
    assert A._finite_gains(0.5, None, None) and A._finite_gains(0.0, None, None) and A._finite_gains(1.0, None, None)
    assert not A._finite_gains(1.5, None, None) and not A._finite_gains(float("nan"), None, None)
    assert A._finite_gains(0.02, p, np.array([[0.1, 0.0]]))
    assert not A._finite_gains(0.02, np.array([0.2, 1.5]), np.array([[0.1, 0.0]]))  # P > 1: a state may leave [0, 1]
    assert not A._finite_gains(0.02, p, np.array([[np.nan, 0.0]]))
    assert not A._finite_gains(0.02, p, np.array([[np.inf, 0.0]]))
    assert not A._finite_gains(0.02, p, np.array([[2.0 ** 70, 0.0]]))


def test_ab_ndcg_beyond_the_guard_takes_the_dense_kernel():
    """P = β r / r_max > 1 (r_max below the ratings): the dense kernel, values as before."""
    asp = np.array([[1, 0], [1, 1], [0, 1]], dtype=bool)
    items = np.array([[0, 1, 2]])
    rating = np.array([[5.0, 4.0, 3.0]])
    v = A.alpha_beta_ndcg(items, rating, asp, [0, 3], [0, 1, 2], [5.0, 4.0, 3.0], beta=1.0, r_max=2.0, return_parts=True)
    assert all(np.isfinite(x).all() for x in v)


# ---------------------------------------------------------------------------- sampled BV


@pytest.mark.parametrize(("N", "n"), [(2, 1), (7, 6), (8, 6), (300, 20), (1001, 100), (9000, 100), (5003, 37)])
def test_rank_rows_and_the_shared_table_give_the_cells_of_the_formula(N, n):
    from scipy.special import gammaln

    lg = gammaln(np.arange(1, N + 2, dtype=np.float64))
    table = S._log_table(n, N + 5)
    rng = np.random.default_rng(N)
    for lo, hi in [(0, N), (0, 1), (N - 1, N)] + [tuple(sorted(rng.integers(0, N + 1, 2))) for _ in range(4)]:
        if hi <= lo:
            continue
        want = S._rank_rows_cells(N, n, lo, hi, lg)
        assert np.array_equal(S._rank_rows(N, n, lo, hi, lg), want)
        if n <= N - 1:
            x = np.add(table[lo:hi], table[N - hi:N - lo][::-1, ::-1])
            x -= (lg[N - 1] - lg[n]) - lg[N - 1 - n]
            assert np.array_equal(np.exp(x), want)
            assert np.array_equal(want[::-1, ::-1], S._rank_rows_cells(N, n, N - hi, N - lo, lg))  # the mirror


def _dense(metric, N, n, gamma):
    P = S._rank_rows_cells(N, n, 0, N, __import__("scipy.special", fromlist=["gammaln"]).gammaln(np.arange(1, N + 2.0)))
    d = np.full(N, 1.0 / N)
    A_ = (1 - gamma) * (P.T * d) @ P + gamma * np.diag(P.T @ d)
    return np.linalg.lstsq(A_, (P.T * d) @ metric(np.arange(1, N + 1, dtype=np.float64)), rcond=None)[0]


@pytest.mark.parametrize(("N", "n"), [(1300, 100), (1301, 100), (4000, 30)])
def test_mirrored_half_with_or_without_the_table_within_1e12_of_the_dense_formula(N, n):
    fns = [_metric_of("hitrate", 10), _metric_of("ndcg", 10), _metric_of("mrr", None)]
    table = S._log_table(n, N)
    for gamma in (0.001, 0.01, 0.3, 1.0):
        got = S._bv_corrections(fns, N, n, gamma)
        shared = S._bv_corrections(fns, N, n, gamma, table)
        for fn, g, s in zip(fns, got, shared):
            assert np.array_equal(g, s)  # the table gives the same cells
            assert np.abs(g - _dense(fn, N, n, gamma)).max() <= 1e-12


def _case():
    rng = np.random.default_rng(7)
    cat = list(range(400))
    scores = {u: np.round(rng.random(400), 3) for u in range(30)}
    truth = {"user_id": [u for u in scores for _ in range(2)],
             "item_id": [int(i) for u in scores for i in rng.choice(400, 2, replace=False)]}
    ex_u = [u for u in scores for _ in range(u % 7)]
    exclude = {"user_id": ex_u, "item_id": [300 + j for u in scores for j in range(u % 7)]}
    return scores, truth, dict(catalog=cat, n=50, seed=2, exclude=exclude)


def test_sampled_values_are_cached_and_unchanged_by_the_cache():
    scores, truth, kw = _case()
    specs = ["hitrate@10", "ndcg@10", "mrr"]
    S._BV_CACHE.clear()
    first = sampled_evaluate(lambda u: scores[u], truth, specs, **kw)
    assert 1 <= len(S._BV_CACHE) <= 7 + 2  # one entry per candidate-set size (u % 7 excluded items, 2 positives)
    again = sampled_evaluate(lambda u: scores[u], truth, specs, **kw)
    assert again.values == first.values
    S._BV_CACHE.clear()
    assert sampled_evaluate(lambda u: scores[u], truth, specs, **kw).values == first.values
    entry = next(iter(S._BV_CACHE.values()))
    assert not entry[0].flags.writeable


class _Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_no_progress_bar_when_stderr_is_not_a_terminal(monkeypatch, capsys):
    scores, truth, kw = _case()
    monkeypatch.setattr(S, "_PROGRESS_WORK", 0)  # even a long evaluation
    err = _Stream(tty=False)
    monkeypatch.setattr("sys.stderr", err)
    S._BV_CACHE.clear()
    sampled_evaluate(lambda u: scores[u], truth, ["ndcg@10"], **kw)
    assert err.getvalue() == ""
    assert capsys.readouterr().out == ""


def test_progress_bar_on_a_terminal_only_for_long_work(monkeypatch):
    shown = []
    real = S._Progress.__init__

    def spy(self, total, text, show, *, weight=0):
        real(self, total, text, show, weight=weight)
        shown.append(self.bar is not None)

    monkeypatch.setattr(S._Progress, "__init__", spy)
    monkeypatch.setattr("sys.stderr", _Stream(tty=True))
    scores, truth, kw = _case()
    S._BV_CACHE.clear()
    sampled_evaluate(lambda u: scores[u], truth, ["ndcg@10"], **kw)  # short: no bar
    monkeypatch.setattr(S, "_PROGRESS_WORK", 0)
    S._BV_CACHE.clear()
    ref = sampled_evaluate(lambda u: scores[u], truth, ["ndcg@10"], **kw)
    S._BV_CACHE.clear()
    off = sampled_evaluate(lambda u: scores[u], truth, ["ndcg@10"], progress=False, **kw)
    assert shown == [False, True, False]
    assert off.values == ref.values
