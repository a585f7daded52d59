"""Issue 34: the bootstrap intervals drawn once for every column give scipy's numbers (seeded)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from receval.stats import bootstrap_intervals, compare, interval


def _scipy(x, method, resamples, seed):
    res = sps.bootstrap((x,), np.mean, n_resamples=resamples, confidence_level=0.95, method=method,
                        random_state=np.random.default_rng(seed), vectorized=True, batch=max(1, (1 << 24) // len(x)))
    return res.confidence_interval.low, res.confidence_interval.high


@pytest.mark.parametrize("method", ["bca", "percentile"])
@pytest.mark.parametrize("n", [5, 60, 700])
def test_one_draw_for_every_column_gives_scipys_intervals(method, n):
    rng = np.random.default_rng(n)
    cols = [rng.integers(0, 2, n).astype(float),            # 0/1: resampled means tie the mean exactly
            rng.integers(0, 11, n) / 10,                    # precision@10-like: ties within rounding
            rng.random(n) * (rng.random(n) < 0.3),          # zero-inflated, like a top-k metric
            np.full(n, 0.25)]                               # no spread: the point
    cols.append(cols[1] - cols[2])
    got = bootstrap_intervals(cols, method, resamples=400, seed=7)
    for x, iv in zip(cols, got):
        lo, hi = (x.mean(), x.mean()) if np.all(x == x[0]) else _scipy(x, method, 400, 7)
        assert iv.low == pytest.approx(lo, rel=1e-12, abs=1e-15) and iv.high == pytest.approx(hi, rel=1e-12, abs=1e-15)
        alone = interval(x, method, resamples=400, seed=7)  # alone or beside other columns: the same to rounding
        assert (alone.low, alone.high) == pytest.approx((iv.low, iv.high), rel=1e-12, abs=1e-15)


def test_compare_draws_once_and_keeps_the_numbers():
    rng = np.random.default_rng(3)
    pu = {r: {m: rng.random(300) * (rng.random(300) < 0.4) for m in ("m@1", "m@2")} for r in ("a", "b", "c")}
    c = compare(pu, resamples=300, seed=2, progress=False)
    for (r, m), iv in c.intervals.items():
        lo, hi = _scipy(pu[r][m], "bca", 300, 2)
        assert iv.low == pytest.approx(lo, rel=1e-12) and iv.high == pytest.approx(hi, rel=1e-12)
    for t in c.pairs:
        lo, hi = _scipy(pu[t.a][t.metric] - pu[t.b][t.metric], "bca", 300, 2)
        assert t.ci.low == pytest.approx(lo, rel=1e-12) and t.ci.high == pytest.approx(hi, rel=1e-12)


@pytest.mark.parametrize("gather", [0, 1 << 30])
def test_both_ways_of_summing_the_resamples_give_scipys_intervals(monkeypatch, gather):
    """Counting (bincount x columns) and summing the drawn rows (sparse product), in parts and
    on threads, are the same numbers: scipy's, to 1e-12."""
    import receval.stats as st

    monkeypatch.setattr(st, "_GATHER_CELLS", gather)
    monkeypatch.setattr(st, "_GATHER_PART", 3 * 250 + 7)   # parts that do not divide the block
    monkeypatch.setattr(st, "_COUNT_BINS", 5 * 250 + 3)
    rng = np.random.default_rng(11)
    cols = [rng.random(250) * (rng.random(250) < 0.3), rng.integers(0, 11, 250) / 10]
    for x, iv in zip(cols, bootstrap_intervals(cols, "bca", resamples=500, seed=3)):
        lo, hi = _scipy(x, "bca", 500, 3)
        assert iv.low == pytest.approx(lo, rel=1e-12, abs=1e-15) and iv.high == pytest.approx(hi, rel=1e-12, abs=1e-15)


def test_int32_draws_are_numpys_int64_draws():
    """The resamples are drawn as int32: numpy's bounded integers below 2^32 are the same values
    (and leave the generator in the same state) whatever the integer type."""
    from receval.stats import _draw_blocks

    for n, B in ((7, 300), (1000, 17_000)):  # 1000 users: blocks of 16,777 resamples, so two blocks
        rng = np.random.default_rng(5)
        blocks = list(_draw_blocks(n, B, 5))
        assert blocks[0].dtype == np.int32
        for idx in blocks:
            assert np.array_equal(idx, rng.integers(0, n, idx.shape))
        assert sum(len(b) for b in blocks) == B


@pytest.mark.parametrize("gather", [0, 1 << 30])
def test_differences_from_the_columns_sums_give_scipys_intervals(monkeypatch, gather):
    """A difference's resampled means are its two columns' subtracted: scipy's intervals of the
    differences themselves, to 1e-12, also when the runs differ by little more than rounding
    (the resamples at the mean recomputed from the differences) or one column has no spread."""
    import receval.stats as st

    monkeypatch.setattr(st, "_GATHER_CELLS", gather)
    rng = np.random.default_rng(4)
    n = 300
    a = rng.random(n) * (rng.random(n) < 0.4)
    b = rng.integers(0, 11, n) / 10
    c = a + rng.integers(-1, 2, n) * 1e-13            # a, up to a few last bits
    flat = np.full(n, 0.5)                            # no spread of its own; its differences have some
    cols = [a, b, c, flat]
    pairs = [(0, 1), (1, 0), (0, 2), (3, 1), (2, 3)]
    for method in ("bca", "percentile"):
        got = bootstrap_intervals(cols, method, resamples=400, seed=9, differences=pairs)
        assert len(got) == len(cols) + len(pairs)
        for (i, j), iv in zip(pairs, got[len(cols):]):
            lo, hi = _scipy(cols[i] - cols[j], method, 400, 9)
            assert iv.low == pytest.approx(lo, rel=1e-12, abs=1e-15) and iv.high == pytest.approx(hi, rel=1e-12, abs=1e-15)
    with pytest.raises(Exception, match="positions"):
        bootstrap_intervals(cols, differences=[(0, 9)])
