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
