r"""The probability laws of ``ties=average`` (McSherry & Najork, ECIR 2008), shared by the metric families.

A tie group is a run of items with equal scores in one user's list: it occupies positions
:math:`lo..hi`, :math:`n = hi - lo + 1` items, and every ordering of it is equally likely.
Every tie-averaged value is an expectation under one of two laws.

**Uniform slot.** An item of the group sits at each of its positions with the same chance,
so a per-position weight :math:`w_i` counted inside the top *k* has the mean

.. math::

    E\big[w_{pos}\,\mathbb{1}(pos \le k)\big] = \frac{1}{n} \sum_{i=lo}^{\min(hi, k)} w_i ,
    \qquad P(lo + t = pos) = \frac{1}{n}, \quad t = 0, \dots, n - 1 .

**Hypergeometric draws.** A uniform *m*-subset of *N* items of which *K* are marked holds
*X* marked items with

.. math::

    P(X = x) = \frac{\binom{K}{x}\binom{N - K}{m - x}}{\binom{N}{m}}, \qquad
    \max(0, m - (N - K)) \le x \le \min(m, K),

:math:`X \sim \mathrm{Hypergeometric}(N, K, m)` (:func:`hypergeom`). The hits of a group
(*r* of its *n* items) among its *m* slots inside the top *k* follow it with
:math:`(N, K, m) = (n, r, m)`; the marked items placed before an item at slot *t* of its
group (the *t* items before it are a uniform *t*-subset of the other *n* − 1) with
:math:`(N, K, m) = (n - 1, K, t)` (:func:`slot_draws`).

>>> import numpy as np
>>> # a group of 4 items, 2 of the other 3 marked: the marked items before slots 0, 1, 2
>>> g, t, y, p = slot_draws(np.array([4]), np.array([2]), np.array([3]))
>>> [(int(a), int(b), round(float(c), 6)) for a, b, c in zip(t, y, p)]
[(0, 0, 1.0), (1, 0, 0.333333), (1, 1, 0.666667), (2, 1, 0.666667), (2, 2, 0.333333)]
>>> round(float(hypergeom(np.array(4), np.array(2), np.array(2), np.array(1))), 6)  # 2·2 / 6
0.666667
"""

from __future__ import annotations

import numpy as np

from ..hits import Hits


def tie_groups(h: Hits) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The tie groups holding hits: (user, lo, n = group size, r = relevant items in it)."""
    key = h.hit_user.astype(np.int64) * (int(h.hit_hi.max()) + 2 if len(h.hit_hi) else 1) + h.hit_lo
    _, first, r = np.unique(key, return_index=True, return_counts=True)
    return h.hit_user[first], h.hit_lo[first].astype(np.int64), (h.hit_hi[first] - h.hit_lo[first] + 1).astype(np.int64), r


def tie_group_table(h: Hits) -> tuple[np.ndarray, ...]:
    """The tie groups holding hits with the relevant items of the user's earlier groups:
    (user, lo, n, r, before), sorted by (user, lo)."""
    gu, lo, n, r = tie_groups(h)
    start = np.r_[True, gu[1:] != gu[:-1]] if len(gu) else np.zeros(0, dtype=bool)
    cum = np.cumsum(r)
    before = cum - r - np.maximum.accumulate(np.where(start, cum - r, 0))
    return gu, lo, n, r, before


def lncomb(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """log C(a, b) elementwise (−inf where b < 0 or b > a)."""
    from scipy.special import gammaln

    a, b = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
    out = np.full(a.shape, -np.inf)
    ok = (b >= 0) & (b <= a)
    out[ok] = gammaln(a[ok] + 1) - gammaln(b[ok] + 1) - gammaln(a[ok] - b[ok] + 1)
    return out


def hypergeom(N: np.ndarray, K: np.ndarray, m: np.ndarray, x: np.ndarray) -> np.ndarray:
    """P(X = x), X ~ Hypergeometric(N, K, m): x marked items in a uniform m-subset of N items, K marked."""
    return np.exp(lncomb(K, x) + lncomb(N - K, m - x) - lncomb(N, m))


def ragged(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Expand ``counts``: for every i, ``counts[i]`` entries (owner i, offset 0 .. counts[i] − 1)."""
    counts = np.asarray(counts, dtype=np.int64)
    owner = np.repeat(np.arange(len(counts)), counts)
    return owner, np.arange(len(owner)) - np.repeat(np.cumsum(counts) - counts, counts)


def slot_draws(n: np.ndarray, succ: np.ndarray, m: np.ndarray, cap: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
    """For each tie group i of ``n[i]`` items and each slot t < ``m[i]`` of one of its items,
    the law of y, how many of the ``succ[i]`` marked items among the other n − 1 are placed
    before it: y ~ Hypergeometric(n − 1, succ, t). Returns ``(group, t, y, P(y))`` over every
    possible y (at most ``cap[i]`` when given)."""
    g, t = ragged(m)
    y0 = np.maximum(0, t - (n[g] - 1 - succ[g]))
    y1 = np.minimum(t, succ[g]) if cap is None else np.minimum(np.minimum(t, succ[g]), cap[g])
    j, off = ragged(np.maximum(0, y1 - y0 + 1))
    g, t, y = g[j], t[j], y0[j] + off
    return g, t, y, hypergeom(n[g] - 1, succ[g], t, y)
