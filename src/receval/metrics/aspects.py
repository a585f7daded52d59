r"""Aspect-aware unified accuracy/diversity metrics: α-nDCG and αβ-nDCG.

Both kernels are pure numpy and vectorised over users: the only Python loops
run over the ``k`` rank positions (run DCG and the greedy ideal ranking), never
over users.  Their state lives on the (user, category) pairs that occur in the
lists and the truth, numbered, so memory follows the rows, never users x
categories (thousands of categories cost what ten do).

Input contract (shared with :mod:`receval.metrics.diversity`)
-------------------------------------------------------------
``items``
    int64 ``[U, K]`` item codes of each user's ranked list (column ``j`` is rank
    ``j+1``), ``-1`` where the list is shorter than ``K``.  Lists must not
    contain duplicates (``ndeval`` rejects duplicate docnos).
``aspects``
    ``scipy.sparse`` matrix or dense bool ``[n_items, C]``: item → category.
``rel``
    bool ``[U, K]``: the listed item is relevant for the user.
``rating``
    float64 ``[U, K]``: the user's truth rating of the listed item, NaN if unrated.
``truth_offsets, truth_items, truth_ratings``
    ragged CSR of every user's rated (truth) items: user ``u`` owns
    ``truth_items[truth_offsets[u]:truth_offsets[u+1]]``.

Discount
--------
Both metrics use ``ndeval``'s discount ``log(2) / log(j + 1)`` (= ``1/log2(j+1)``)
for 1-based rank ``j``, computed with that exact expression so that values
match ``ndeval`` to the last bit where possible.

Greedy ideal ranking
--------------------
Finding the ideal ranking is NP-complete (Clarke et al. 2008), so both metrics
normalise by a greedily built ideal list, as ``ndeval``'s ``idealResult``: at
each rank pick the candidate with the largest current gain.  Ties are broken
**without reading any id** (``ndeval`` keeps the largest docno, which makes the
value depend on how items are named): among the candidates of the largest gain,
the one with the largest label-free tie key :math:`\kappa` (:func:`_tie_keys`:
two rounds of colour refinement from the number of the user's candidates in
each category); candidates with the same content (categories, and P for αβ-nDCG)
are interchangeable; when candidates of equal gain and equal key still differ
in content, the ideal is the **largest** DCG over those choices
(:func:`_ideal_search`, run only for such users).  A gain's terms, one per category, are
summed (α) or multiplied (αβ) in ascending order of their values (:func:`_fold_sorted`), not
in category-code order, on the run side and the ideal side of every kernel, so the value is
the same, bit for bit, for every renaming of items and categories (γ's sums aside: they are
exact for ratings on a grid of halves).  It equals ``ndeval``'s whenever
``ndeval``'s tie choices lead to the same ideal (always when tied candidates
share their categories).  The greedy is an approximation: a run can, rarely,
beat it, so values slightly above 1 are possible (``ndeval`` does not clip
either; neither do we).

Compiled greedy ideal (issue 37)
--------------------------------
From :data:`JIT_MIN_CANDIDATES` ideal candidates on (``RECEVAL_JIT_ASPECTS_MIN``), when every
gain can only fall (α in [0, 1]; αβ: every P and every γ in [0, 1]), the greedy ideal runs in
a numba kernel (:mod:`receval._jit_aspects`, imported lazily and cached by :mod:`receval._numba`,
the loader :mod:`receval.kernels` uses too): per user the tie keys, the candidates grouped by content, the greedy
with lazily recomputed gains, and every choice among tied candidates of different content
followed, with the same floating point operations in the same order, so the same ideal bit for
bit. The same pass computes the run's DCG (both metrics) and, for αβ-nDCG with γ from the truth
ratings (every rating finite and >= 0, every P of the lists in [0, 1]), each user's γ, its row
sum in numpy's pairwise order. A user whose choices need more than :data:`JIT_BUDGET` steps (or a search larger than
:data:`JIT_MAX_CELLS` cells), smaller inputs, ``RECEVAL_NO_JIT=1`` and a missing numba take the
numpy path.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from .. import _numba
from ._ties import slot_draws

__all__ = [
    "alpha_ndcg",
    "alpha_beta_ndcg",
    "aspect_preferences",
    "expected_alpha_dcg",
    "ndeval_discount",
]


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------
def _aspects_csr(aspects) -> tuple[np.ndarray, np.ndarray, int]:
    """Return ``(indptr, indices, C)`` of a sorted, zero-free CSR view of ``aspects``."""
    if hasattr(aspects, "tocsr"):
        a = aspects.tocsr(copy=True)
        a.eliminate_zeros()
        a.sort_indices()
        return (
            np.asarray(a.indptr, dtype=np.int64),
            np.asarray(a.indices, dtype=np.int64),
            int(a.shape[1]),
        )
    a = np.asarray(aspects)
    if a.ndim != 2:
        raise ValueError("aspects must be 2-D [n_items, C]")
    rows, cols = np.nonzero(a)  # row-major, so columns ascend within a row
    indptr = np.zeros(a.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=a.shape[0]), out=indptr[1:])
    return indptr, cols.astype(np.int64), int(a.shape[1])


def _expand(items: np.ndarray, indptr: np.ndarray, indices: np.ndarray):
    """Ragged gather of the aspects of ``items``.

    Returns ``(rep, asp, deg)``: for every (entry, aspect) pair, the entry index
    ``rep`` into ``items`` and the aspect ``asp`` (ascending within an entry);
    ``deg`` is the number of aspects of each entry.
    """
    starts = indptr[items]
    deg = indptr[items + 1] - starts
    total = int(deg.sum())
    rep = np.repeat(np.arange(items.shape[0], dtype=np.int64), deg)
    first = np.cumsum(deg) - deg
    offs = np.arange(total, dtype=np.int64) - np.repeat(first, deg)
    asp = indices[starts[rep] + offs]
    return rep, asp, deg


def _aspect_table(indptr: np.ndarray, indices: np.ndarray, D: int, fill: int) -> np.ndarray:
    """``[D, n_items + 1]`` table: the ``t``-th aspect (ascending) of each item, ``fill``
    past its degree; the extra last column (item code ``-1``) is all ``fill``.
    Items with more than ``D`` aspects are left all ``fill`` (callers route them elsewhere)."""
    ideg = np.diff(indptr)
    nit = ideg.shape[0]
    tab = np.full((D, nit + 1), fill, dtype=np.int64)
    its = np.flatnonzero((ideg <= D) & (ideg > 0))
    if its.shape[0]:
        r_, a_, d_ = _expand(its, indptr, indices)
        p_ = np.arange(r_.shape[0], dtype=np.int64) - np.repeat(np.cumsum(d_) - d_, d_)
        tab[p_, its[r_]] = a_
    return tab


def _candidates(off: np.ndarray, m: np.ndarray, *cols):
    """Candidates = truth pairs with mask ``m``: ``(user, *[c[m] for c in cols])``."""
    cs = np.zeros(m.shape[0] + 1, dtype=np.int64)
    np.cumsum(m, out=cs[1:])
    n_u = cs[off[1:]] - cs[off[:-1]]
    cu = np.repeat(np.arange(off.shape[0] - 1, dtype=np.int64), n_u)
    return (cu,) + tuple(c[m] for c in cols)


#: a kernel's state is one slot per (user, aspect) pair, users x categories of them, when that
#: is at most this many times the pairs' occurrences (the rows) or at most _DENSE_MIN slots
#: (16 MB); else one slot per pair that occurs
_DENSE_FACTOR = 8
_DENSE_MIN = 1 << 21


class _Pairs:
    """State slots of the (user, aspect) pairs of a kernel; aspect ``width - 1`` is the
    padding dummy where there is one.

    Few categories (``U * width`` slots at most :data:`_DENSE_FACTOR` times ``n_keys``, the
    pairs' occurrences, or at most :data:`_DENSE_MIN`): one slot per pair, laid out
    aspect-major (``aspect * U + user``: a rank touches each aspect row in ascending user
    order) or user-major (``user * width + aspect``). Otherwise one slot per distinct pair that
    occurs, in the sorted order of ``user * width + aspect`` (``keys()`` returns every
    occurrence; called once). Either way memory follows the rows, never users x categories,
    and every slot holds the same values, computed in the same order."""

    def __init__(self, U: int, width: int, n_keys: int, keys, *, aspect_major: bool = False) -> None:
        self.U, self.width, self.amajor = U, width, aspect_major
        if U * width <= max(_DENSE_FACTOR * n_keys, _DENSE_MIN):
            self.keys, self.n = None, U * width
        else:
            self.keys = np.unique(keys())
            self.n = self.keys.shape[0]

    def code(self, users: np.ndarray, asp: np.ndarray) -> np.ndarray:
        """The slots of the pairs ``(users, asp)`` (every pair must occur)."""
        if self.keys is None:
            return asp * self.U + users if self.amajor else users * self.width + asp
        return np.searchsorted(self.keys, users * self.width + asp)

    def coder(self, tab: np.ndarray) -> Callable[[int, np.ndarray, np.ndarray], np.ndarray]:
        """``code(t, users, items)``: the slots of the pairs (user, the ``t``-th aspect of the
        user's item), ``tab`` the items' aspects (:func:`_aspect_table`), as :meth:`code`; the
        dense aspect-major layout reads ``aspect * U`` from ``tab * U``, computed once."""
        if self.keys is None and self.amajor:
            tab_u = tab * self.U

            def dense(t: int, users: np.ndarray, items: np.ndarray) -> np.ndarray:
                kk = tab_u[t].take(items)
                kk += users
                return kk

            return dense
        return lambda t, users, items: self.code(users, tab[t].take(items))

    def of_keys(self, keys: np.ndarray) -> np.ndarray:
        """The slots of the pairs ``keys = user * width + aspect`` (user-major slots only)."""
        assert not self.amajor
        return keys if self.keys is None else np.searchsorted(self.keys, keys)

    def ones(self, dummy: float | None = None) -> np.ndarray:
        """1.0 in every slot; ``dummy`` in the slots of the dummy aspect when given."""
        out = np.ones(self.n, dtype=np.float64)
        if dummy is not None:
            if self.keys is not None:
                out[self.keys % self.width == self.width - 1] = dummy
            elif self.amajor:
                out[(self.width - 1) * self.U:] = dummy
            else:
                out.reshape(self.U, self.width)[:, -1] = dummy
        return out

    def gamma(self, gam: _Gamma) -> np.ndarray:
        """γ in every slot, 0 in the dummy aspect's."""
        if self.keys is not None:
            return gam.at(self.keys // self.width, self.keys % self.width)
        out = np.zeros((self.U, self.width), dtype=np.float64)
        if gam.dense is not None:
            out[:, :gam.C] = gam.dense.reshape(self.U, gam.C)
        elif gam.keys is not None:
            out[gam.keys // gam.C, gam.keys % gam.C] = gam.values
        return np.ascontiguousarray(out.T).ravel() if self.amajor else out.ravel()


class _Gamma:
    """γ of (user, aspect) pairs: a dense ``[U, C]`` array as given, or the pairs a user's
    ratings touch (``keys`` = ``u * C + c`` sorted, ``values``; every other pair is 0)."""

    def __init__(self, C: int, dense: np.ndarray | None = None, keys: np.ndarray | None = None,
                 values: np.ndarray | None = None) -> None:
        self.C, self.dense, self.keys, self.values = C, dense, keys, values

    def at(self, users: np.ndarray, asp: np.ndarray) -> np.ndarray:
        """γ at the pairs ``(users, asp)``; ``asp == C`` (the padding dummy) reads 0."""
        out = np.zeros(users.shape[0], dtype=np.float64)
        real = asp < self.C
        key = users[real] * self.C + asp[real]
        if self.dense is not None:
            out[real] = self.dense[key]
        elif self.keys is not None and self.keys.shape[0]:
            pos = np.minimum(np.searchsorted(self.keys, key), self.keys.shape[0] - 1)
            out[real] = np.where(self.keys[pos] == key, self.values[pos], 0.0)
        return out


#: row sums computed on dense blocks of at most this many elements (see :func:`_row_sums`)
_ROWSUM_BLOCK = 1 << 18


def _row_sums(users: np.ndarray, cols: np.ndarray, vals: np.ndarray, C: int) -> np.ndarray:
    """For every entry of a sparse ``[U, C]`` matrix given by its entries sorted by
    ``(users, cols)``, the sum of its row, equal bit for bit to ``dense.sum(axis=1)``: a row of
    one or two entries sums exactly whatever the order (adding 0 changes nothing); rows of three
    or more are summed as numpy sums a dense row (pairwise), on blocks of at most
    :data:`_ROWSUM_BLOCK` elements, so the memory never follows users x categories."""
    n = users.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.float64)
    start = np.flatnonzero(np.r_[True, users[1:] != users[:-1]])
    cnt = np.diff(np.r_[start, n])
    first = vals[start]
    sums = first.astype(np.float64, copy=True)
    two = cnt == 2
    sums[two] = first[two] + vals[start[two] + 1]
    many = np.flatnonzero(cnt >= 3)
    rows = max(1, _ROWSUM_BLOCK // max(C, 1))
    for a in range(0, many.shape[0], rows):
        seg = many[a:a + rows]
        block = np.zeros((seg.shape[0], C), dtype=np.float64)
        r = np.repeat(np.arange(seg.shape[0]), cnt[seg])
        idx = np.repeat(start[seg] - np.cumsum(cnt[seg]) + cnt[seg], cnt[seg]) + np.arange(r.shape[0])
        block[r, cols[idx]] = vals[idx]
        sums[seg] = block.sum(axis=1)
    return np.repeat(sums, cnt)


def _gamma_pairs(off, tuser, it, r, indptr, indices, C) -> _Gamma:
    """:func:`_gamma` on the (user, aspect) pairs the ratings touch, bit for bit (the sums run
    over the same terms in the same order); dense when ``U x C`` is no more than the pairs."""
    U = off.shape[0] - 1
    if U * C <= max(_DENSE_FACTOR * int(np.diff(indptr)[it].sum()), _DENSE_MIN):
        return _Gamma(C, dense=_gamma(off, tuser, it, r, indptr, indices, C).ravel())
    rep, asp, _ = _expand(it, indptr, indices)
    keys, codes = np.unique(tuser[rep] * C + asp, return_inverse=True)
    num = np.bincount(codes.ravel(), weights=r[rep], minlength=keys.shape[0]).astype(np.float64, copy=False)
    den = _row_sums(keys // C, keys % C, num, C)
    out = np.zeros_like(num)
    np.divide(num, den, out=out, where=den > 0)
    return _Gamma(C, keys=keys, values=out)


def ndeval_discount(k: int) -> np.ndarray:
    """Discounts ``log(2)/log(j+1)`` for ranks ``j = 1..k``, as ``ndeval`` computes them.

    >>> ndeval_discount(3).round(6).tolist()
    [1.0, 0.63093, 0.5]
    """
    return math.log(2.0) / np.log(np.arange(2, k + 2, dtype=np.float64))


def _check_lists(items, k):
    items = np.asarray(items)
    if items.ndim != 2:
        raise ValueError("items must be 2-D [U, K]")
    K = items.shape[1]
    if k is None:
        k = K
    if k < 1:
        raise ValueError("k must be >= 1")
    k = int(k)
    if k > K:  # lists narrower than k: pad; the ideal still goes to depth k
        items = np.pad(items, ((0, 0), (0, k - K)), constant_values=-1)
    return items[:, :k].astype(np.int64, copy=False), k


def _pad_cols(a, k, fill):
    a = np.asarray(a)
    if a.shape[1] < k:
        a = np.pad(a, ((0, 0), (0, k - a.shape[1])), constant_values=fill)
    return a[:, :k]


def _truth_users(truth_offsets):
    off = np.asarray(truth_offsets, dtype=np.int64)
    return off, np.repeat(np.arange(off.shape[0] - 1, dtype=np.int64), np.diff(off))


def _fold_sorted(F: np.ndarray, add: bool, out: np.ndarray | None = None) -> np.ndarray:
    """The sum (``add``) or product of the terms ``F[0], F[1], ...`` of every cell, folded left
    to right in ascending order of their values (``F`` is sorted along axis 0 in place), so the
    result depends on the multiset of a cell's terms only, not on which category gave which:
    every kernel and :func:`_ideal_search` fold a gain's terms this way, so renaming categories
    cannot move its last bit. Two terms need no sort (``a + b == b + a``, ``a * b == b * a``);
    padding terms (0 for a sum, 1 for a product) change nothing wherever they sort. Up to 16
    terms sort by an odd-even transposition network (min/max: several times faster than
    ``sort(axis=0)``; a NaN may spread to its neighbours, which leaves the fold NaN as before)."""
    D = F.shape[0]
    if 3 <= D <= 16:
        lo = np.empty_like(F[0])
        for r in range(D):
            for i in range(r % 2, D - 1, 2):
                np.minimum(F[i], F[i + 1], out=lo)
                np.maximum(F[i], F[i + 1], out=F[i + 1])
                F[i] = lo
    elif D > 16:
        F.sort(axis=0)
    if out is None:
        out = F[0].copy()
    else:
        np.copyto(out, F[0])
    op = np.add if add else np.multiply
    for t in range(1, F.shape[0]):
        op(out, F[t], out=out)
    return out


def _fold_ragged(vals: np.ndarray, deg: np.ndarray, tstart: np.ndarray, add: bool) -> np.ndarray:
    """:func:`_fold_sorted` of ragged rows: row ``r`` holds ``vals[tstart[r]:tstart[r] + deg[r]]``
    (``deg >= 1``); the rows of one length are folded together."""
    out = np.empty(deg.shape[0], dtype=np.float64)
    for d in np.flatnonzero(np.bincount(deg)).tolist():
        rows = np.flatnonzero(deg == d)
        F = vals.take(tstart[rows][None, :] + np.arange(d, dtype=np.int64)[:, None])  # [d, rows]
        out[rows] = _fold_sorted(F, add)
    return out


def _segment_argmax_last(gain: np.ndarray, seg_starts: np.ndarray, seg_len: np.ndarray):
    """Per segment: the max gain and the index of the **last** position attaining it.

    Candidates are in the order of :func:`_order_by_tie_key` inside a segment, so "last"
    means "largest tie key" (then largest item code, among interchangeable candidates).
    """
    gmax = np.maximum.reduceat(gain, seg_starts)
    ismax = gain == np.repeat(gmax, seg_len)
    idx = np.where(ismax, np.arange(gain.shape[0], dtype=np.int64), -1)
    return gmax, np.maximum.reduceat(idx, seg_starts)


class ListRows(NamedTuple):
    """Top-k lists as the rows of a form (:mod:`receval.lists`), not as a dense ``[U, K]`` array:
    user ``u``'s list is the ``length[u]`` rows from ``starts[u]`` in ranked order, the row
    ``starts[u] + j`` at rank ``j + 1`` (the first ``k`` read), with item codes ``items`` and
    each row's truth row ``truth`` (-1: not in the truth), whose rating is in ``ratings`` and
    relevance in ``rel``. ``top(k)`` gives the same lists dense: items ``[U, k]`` (-1 pad),
    relevance, rating (NaN where unrated). The kernel reads the rows themselves (no ``[U, k]``
    array is made); the numpy path reads ``top(k)``."""

    starts: np.ndarray
    length: np.ndarray
    items: np.ndarray
    truth: np.ndarray
    ratings: np.ndarray
    rel: np.ndarray
    top: Callable[[int], tuple[np.ndarray, np.ndarray, np.ndarray]]


class _Greedy(NamedTuple):
    """What the greedy ideal of every user is computed from, but its candidates: the item ×
    aspect CSR (``indptr``, ``indices``) over ``C`` aspects, ``U`` users, the cut-off ``k``,
    ``alpha`` and, for αβ-nDCG, the γ of the (user, aspect) pairs (None for α-nDCG). One
    value the greedy kernels and :func:`_resolve_ambiguous` share."""

    indptr: np.ndarray
    indices: np.ndarray
    C: int
    U: int
    k: int
    alpha: float
    gamma: _Gamma | None


def _greedy_ideal_sparse(cand_user: np.ndarray, cand_item: np.ndarray, cand_p: np.ndarray | None, problem: _Greedy) -> np.ndarray:
    """Greedy ideal DCG@k for every user, vectorised over users (loop over ranks).

    Candidates must be grouped by user, in the order of :func:`_order_by_tie_key`, and each must have >= 1 aspect.
    ``cand_p is None`` selects α-nDCG gains ``Σ_c (1-α)^{count_c}``; otherwise
    αβ-nDCG gains ``1 - Π_c (1 - p γ_c s_c)`` with per-user-aspect state ``s``.
    Chosen candidates and finished users are compacted away after each step.
    """
    indptr, indices, C, U, k, alpha, gamma = problem
    disc = ndeval_discount(k)
    idcg = np.zeros(U, dtype=np.float64)
    if cand_user.shape[0] == 0:
        return idcg
    rep, asp, deg = _expand(cand_item, indptr, indices)
    tc = rep  # triple -> candidate
    tkey = cand_user[rep] * C + asp  # triple -> its (user, aspect) pair
    slots = _Pairs(U, C, tkey.shape[0], lambda: tkey)
    tkey = slots.of_keys(tkey)  # -> its state slot
    state = slots.ones()
    ab = cand_p is not None
    if ab:
        pg = cand_p[rep] * gamma.at(cand_user[rep], asp)  # constant over steps: P(a|u,i) * gamma_a
        om = 1.0 - cand_p[rep]  # state multiplier when the candidate is picked
    one_minus_alpha = 1.0 - alpha
    # per-user segments (candidates are sorted by user)
    seg_user, seg_len = np.unique(cand_user, return_counts=True)
    n = cand_user.shape[0]
    tstart = np.cumsum(deg) - deg  # first triple of each candidate
    for j in range(k):
        if n == 0:
            break
        if ab:
            gain = 1.0 - _fold_ragged(1.0 - pg * state[tkey], deg, tstart, False)
        else:
            gain = _fold_ragged(state[tkey], deg, tstart, True)
        seg_starts = np.cumsum(seg_len) - seg_len
        gmax, pick = _segment_argmax_last(gain, seg_starts, seg_len)
        idcg[seg_user] += gmax * disc[j]
        if j == k - 1:
            break
        picked = np.zeros(n, dtype=bool)
        picked[pick] = True
        tp = picked[tc]
        if ab:
            state[tkey[tp]] *= om[tp]
        else:
            state[tkey[tp]] *= one_minus_alpha
        # compact: drop picked candidates and exhausted users
        keep = ~picked
        tkeep = ~tp
        newidx = np.cumsum(keep) - 1
        tc = newidx[tc[tkeep]]
        tkey = tkey[tkeep]
        if ab:
            pg = pg[tkeep]
            om = om[tkeep]
        deg = deg[keep]
        tstart = np.cumsum(deg) - deg
        n = deg.shape[0]
        seg_len = seg_len - 1
        alive = seg_len > 0
        seg_len = seg_len[alive]
        seg_user = seg_user[alive]
    return idcg

# Dense greedy: users with at most _WCAP candidates whose items have at most
# _DCAP aspects.  Others (rare heavy users) go to the sparse kernel above.
_WCAP = 64
_DCAP = 6
_CHUNK = 1 << 16


def _greedy_ideal(cand_user: np.ndarray, cand_item: np.ndarray, cand_p: np.ndarray | None, problem: _Greedy,
                  gext: np.ndarray | None = None) -> np.ndarray:
    """Greedy ideal DCG@k for every user; same contract and arithmetic as
    :func:`_greedy_ideal_sparse`, evaluated on a dense layout.

    Every user's candidates form one column of ``[width, rows]`` arrays
    (candidates in the order of :func:`_order_by_tie_key` down the column; the aspects padded to
    ``D`` per candidate with a dummy state slot of gain 0).  A step evaluates
    all columns of the current width at once: column max, the **last** row
    attaining it (the last in the candidate order: largest tie key), state update, and the
    picked row is removed by shifting the rows below it up.  Users enter when
    the width reaches their candidate count, so users of all sizes share one
    loop over widths; each user advances one rank per iteration.  Gains are
    computed with exactly the same floating point operations, in the same
    order, as the sparse kernel, so picks and values are identical.

    ``gext``: γ as a dense ``[U, C + 1]`` table (flat, last column 0), read instead of
    ``gamma`` (the same values). αβ gains that can only fall (:func:`_falling_gains`) take
    :func:`_greedy_window`, other finite gains :func:`_greedy_cohorts`, the rest
    :func:`_dense_chunk`: the same picks and sums, bit for bit.
    """
    indptr, indices, C, U, k, alpha, gamma = problem
    disc = ndeval_discount(k)
    idcg = np.zeros(U, dtype=np.float64)
    n = cand_user.shape[0]
    if n == 0:
        return idcg
    ideg = np.diff(indptr)
    degc = ideg[cand_item]
    nu = np.bincount(cand_user, minlength=U)
    disc = np.concatenate((disc, np.zeros(min(int(nu.max()), _WCAP) + 1)))  # ranks past k weigh 0
    slow = nu > _WCAP
    if int(degc.max()) > _DCAP:
        slow[cand_user[degc > _DCAP]] = True
    if slow.any():
        sm = slow[cand_user]
        idcg_slow = _greedy_ideal_sparse(cand_user[sm], cand_item[sm], None if cand_p is None else cand_p[sm], problem)
        if sm.all():
            return idcg_slow
        fm = ~sm
        cand_user, cand_item, degc = cand_user[fm], cand_item[fm], degc[fm]
        if cand_p is not None:
            cand_p = cand_p[fm]
        nu = np.where(slow, 0, nu)
        idcg = idcg_slow
    cstart = np.cumsum(nu) - nu
    n = cand_user.shape[0]
    D = int(degc.max())
    # state per (user, aspect) pair of the candidates, numbered: each user's aspects plus one
    # dummy aspect C that padded aspects read (alpha: weight 0; alpha-beta: P gamma = 0, so the
    # factor is exactly 1)
    C1 = C + 1
    itab = _aspect_table(indptr, indices, D, C)
    ab = cand_p is not None
    PGc = None
    if ab:  # P(a|u,i) * gamma_a of every (candidate, aspect) (0 on the dummy): constant over the steps
        PGx = np.zeros((D, n + 1), dtype=np.float64)  # a spare candidate n (all 0) for the window kernel
        PGc = PGx[:, :n]
        base = cand_user * C1 if gext is not None else None
        for t in range(D):
            if gext is None:
                PGc[t] = gamma.at(cand_user, itab[t].take(cand_item))
            else:  # the same gamma values, read from the dense table (its dummy column is 0)
                a = itab[t].take(cand_item)
                a += base
                gext.take(a, out=PGc[t])
            PGc[t] *= cand_p
    if ab and _falling_gains(cand_p, PGc):  # gains only fall (so finite): the window kernel, fewest gains
        return _greedy_window(cand_user, cand_item, itab, PGx, cand_p, nu, cstart, C1, D, k, disc, idcg)
    if _finite_gains(alpha, cand_p, PGc):  # the cohort kernel: same gains, same picks, fewer passes
        return _greedy_cohorts(cand_user, cand_item, itab, PGc, cand_p, nu, cstart, C1, D, k, disc, 1.0 - alpha, idcg)
    base = cand_user * C1
    Kc = np.empty((D, n), dtype=np.int64)
    for t in range(D):
        np.add(base, itab[t].take(cand_item), out=Kc[t])
    slots = _Pairs(U, C1, Kc.size, lambda: Kc)
    Kc = slots.of_keys(Kc)
    if ab:
        state = slots.ones()
        gext = slots.gamma(gamma)  # gamma, 0 on the dummy slot
    else:
        state = slots.ones(dummy=0.0)
    # users in chunks of about _CHUNK candidates, so that the working arrays
    # stay cache-resident; each chunk runs the whole width loop
    users_all = np.flatnonzero(nu)
    cum = np.cumsum(nu[users_all])
    cuts = np.searchsorted(cum, np.arange(_CHUNK, int(cum[-1]), _CHUNK), side="left")
    for users in np.split(users_all, np.unique(cuts + 1)):
        if users.shape[0] == 0:
            continue
        _dense_chunk(users, nu, cstart, Kc, cand_p, gext if ab else None,
                     state, idcg, disc, k, D, 1.0 - alpha)
    return idcg


#: cells of one cohort block of the cohort kernel (users x candidates per array)
_COL_CELLS = 1 << 16


def _finite_gains(alpha: float, cand_p: np.ndarray | None, PGc: np.ndarray | None) -> bool:
    """Whether every gain of the greedy stays finite whatever the picks: every state then lies
    in [0, 1] (α in [0, 1]; αβ: every P in (0, 1]) and, for αβ, every factor
    ``1 - state (P γ)`` is bounded (``|P γ| <= 2^64``, at most _DCAP factors)."""
    if cand_p is None:
        return bool(0.0 <= alpha <= 1.0)
    if PGc is None or not (cand_p.shape[0] == 0 or float(cand_p.max()) <= 1.0):
        return False
    return bool(np.isfinite(PGc).all() and (PGc.size == 0 or float(np.abs(PGc).max()) <= 2.0 ** 64))


def _greedy_cohorts(cand_user, cand_item, itab, PGc, Pc, nu, cstart, C1, D, k, disc, oma, idcg):
    """The greedy of :func:`_greedy_ideal` by cohorts, for gains that are always finite
    (:func:`_finite_gains`): the same gains, by the same floating point operations in the same
    order (``(P γ) state`` is ``state (P γ)``), so the same picks and the same sums; only the
    bookkeeping differs from :func:`_dense_chunk`.

    A cohort is the users with the same number of candidates *m*: each is one column of
    ``[m, users]`` arrays laid out once, and the cohort runs its ``min(m, k)`` steps alone (a
    user's state is its own), so at every step every column holds the same number *w* of
    candidates in rows ``0..w-1``: the working arrays are contiguous prefixes, and the
    temporaries reuse buffers. A pick is removed by moving its column's last row into its
    place; the rows then no longer follow the candidate order, so each row carries its candidate's
    rank in the user's candidate order (``key``; ``pos`` maps it back to a row) and ties go to the
    largest rank: the largest tie key (:func:`_order_by_tie_key`). The users' state slots are numbered
    cohort by cohort (users by count, largest first), so a cohort reads a contiguous range."""
    ab = Pc is not None
    users = np.flatnonzero(nu)
    users = users[np.argsort(-nu[users], kind="stable")]
    urank = np.zeros(nu.shape[0], dtype=np.int64)
    urank[users] = np.arange(users.shape[0], dtype=np.int64)
    n = cand_user.shape[0]
    Kc = np.empty((D, n), dtype=np.int64)
    base = urank[cand_user] * C1
    for t in range(D):
        np.add(base, itab[t].take(cand_item), out=Kc[t])
    slots = _Pairs(users.shape[0], C1, Kc.size, lambda: Kc)
    Kc = slots.of_keys(Kc)
    state = slots.ones() if ab else slots.ones(dummy=0.0)
    counts = nu[users]
    starts = np.flatnonzero(np.r_[True, counts[1:] != counts[:-1]])
    ends = np.r_[starts[1:], users.shape[0]]
    for a, b in zip(starts.tolist(), ends.tolist()):
        m = int(counts[a])
        step = max(1, _COL_CELLS // m)
        for c0 in range(a, b, step):
            _cohort(users[c0:min(b, c0 + step)], m, cstart, Kc, PGc, Pc, state, idcg, disc, k, D, oma)
    return idcg


def _cohort(us, m, cstart, Kc, PGc, Pc, state, idcg, disc, k, D, oma):
    """The ``min(m, k)`` greedy steps of users ``us``, each with ``m`` candidates (see
    :func:`_greedy_cohorts`; updates ``state``, ``idcg``)."""
    ab = Pc is not None
    R = us.shape[0]
    idx = cstart[us][None, :] + np.arange(m, dtype=np.int64)[:, None]  # [m, R]
    Ks = [Kc[t].take(idx) for t in range(D)]
    moved = list(Ks)
    if ab:
        PGs = [PGc[t].take(idx) for t in range(D)]
        Ps = Pc.take(idx)
        moved += PGs + [Ps]
    key = np.repeat(np.arange(1, m + 1, dtype=np.int64)[:, None], R, axis=1)  # rank in the candidate order, + 1
    cols = np.arange(R, dtype=np.int64)
    posf = (np.arange(m, dtype=np.int64)[:, None] * R + cols).ravel()  # posf[rank * R + column]: its cell
    # flat views of the [m, R] arrays (cell = row * R + column): 1-D take/put are the fast gathers
    keyf = key.reshape(-1)
    Ksf = [A.reshape(-1) for A in Ks]
    moved = [A.reshape(-1) for A in moved]
    Psf = Ps.reshape(-1) if ab else None
    gbuf = np.empty((m, R), dtype=np.float64)
    tbuf = np.empty((D, m, R), dtype=np.float64)
    eq = np.empty((m, R), dtype=bool)
    kb = np.empty((m, R), dtype=np.int64)
    for j in range(min(m, k)):
        w = m - j
        g = gbuf[:w]
        T = tbuf[:, :w]
        for t in range(D):
            state.take(Ks[t][:w], out=T[t], mode="clip")
        if ab:  # 1 - prod_t (1 - state_t (P gamma_t)), the factors in ascending order
            for t in range(D):
                T[t] *= PGs[t][:w]
                np.subtract(1.0, T[t], out=T[t])
            _fold_sorted(T, False, g)
            np.subtract(1.0, g, out=g)
        else:  # sum_t state_t, the terms in ascending order
            _fold_sorted(T, True, g)
        if w == 1:
            idcg[us] += g[0] * disc[j]
            break
        gmax = g.max(axis=0)
        np.equal(g, gmax, out=eq[:w])
        np.multiply(eq[:w], key[:w], out=kb[:w])
        best = kb[:w].max(axis=0)  # the largest rank (+ 1) attaining the max
        best -= 1
        best *= R
        best += cols
        at = posf.take(best)  # flat index of the pick: row * R + column
        idcg[us] += gmax * disc[j]
        if j == k - 1:
            break
        mult = 1.0 - Psf.take(at) if ab else oma  # picked: state *= 1 - P
        for t in range(D):
            kk = Ksf[t].take(at)
            state.put(kk, state.take(kk) * mult)
        lastf = cols + (w - 1) * R  # the column's last row moves into the pick's place
        for A in moved:
            A.put(at, A.take(lastf))
        km = keyf.take(lastf)
        keyf.put(at, km)
        km -= 1
        km *= R
        km += cols
        posf.put(km, at)


def _falling_gains(Pc: np.ndarray, PGc: np.ndarray) -> bool:
    """Whether no αβ gain of the greedy can rise from one step to the next: every P and every
    ``P γ`` in [0, 1]. Then every state lies in [0, 1] and only falls (``s (1 - P)``), every
    factor ``1 - s (P γ)`` lies in [0, 1] and only rises, and so does their product: rounding
    is monotone, so this holds for the floating point values too, and a candidate's gain
    never exceeds its first one."""
    if Pc.shape[0] == 0:
        return True
    return bool(float(Pc.min()) >= 0.0 and float(Pc.max()) <= 1.0 and float(PGc.min()) >= 0.0 and float(PGc.max()) <= 1.0)


#: cells (candidates and padding) of one block of the window kernel
_WIN_CELLS = 1 << 16
#: candidates evaluated at every step of the window kernel (8: the fewest operations on the
#: issue-22 benchmark's users, ~16 candidates each; 4 reads the reservoir too often)
_WIN = 8
#: low bits of the window kernel's sort keys that hold a candidate's rank in its user's items
#: (at least log2 of _WCAP)
_KEY_BITS = 6
_ONE_BITS = int(np.float64(1.0).view(np.int64))
_DEAD_KEY = 1 << 62


def _greedy_window(cand_user, cand_item, itab, PGx, Pc, nu, cstart, C1, D, k, disc, idcg):
    """The αβ greedy of :func:`_greedy_ideal` when gains only fall (:func:`_falling_gains`):
    the same gains, by the same floating point operations in the same order, the same picks
    (ties to the last in the candidate order) and the same sums, computed for far fewer candidates.

    A candidate's gain never exceeds its first one, ``g0`` (every state 1). Each user's
    candidates are sorted once by ``(g0, item)``, descending; at every step a *window* of
    :data:`_WIN` of them gets its current gains, the rest (the *reservoir*, still in that
    order) does not: the window's best (largest gain, then largest item) is the pick when it
    beats the reservoir's first candidate's ``(g0, item)``, since no reservoir candidate can
    then gain more (or as much with a larger item). Otherwise the reservoir is read in order
    until its next ``(g0, item)`` cannot beat the best found.
    The pick leaves: the window's first row moves into its place (the window is a set) and the
    window slides one row down over the reservoir, whose next candidate joins it; a pick from
    the reservoir shifts the reservoir rows above it down one instead.

    Users are blocked by candidate count (within a quarter; shorter users are padded with
    dead cells of gain 0 that sort last and lose every tie), at most :data:`_WIN_CELLS` cells
    per block, laid out ``[row, user]``; every user of a block takes ``min(m, k)`` steps (dead
    steps add ``0 * disc`` and multiply a spare state by 1). ``PGx``: ``P γ`` of the candidates
    ``[D, n + 1]``, the last column (a spare dead candidate) 0."""
    users = np.flatnonzero(nu)
    users = users[np.argsort(nu[users], kind="stable")]  # by candidate count
    counts = nu[users]
    urank = np.zeros(nu.shape[0], dtype=np.int64)
    urank[users] = np.arange(users.shape[0], dtype=np.int64)
    n = cand_user.shape[0]
    # state slots of the candidates' (user, aspect) pairs, numbered in block order, plus one
    # spare slot that the dead cells read
    Kc = np.empty((D, n + 1), dtype=np.int64)
    base = urank[cand_user] * C1
    for t in range(D):
        np.add(base, itab[t].take(cand_item), out=Kc[t, :n])
    slots = _Pairs(users.shape[0], C1, D * n, lambda: Kc[:, :n])
    Kc[:, :n] = slots.of_keys(Kc[:, :n])
    Kc[:, n] = slots.n
    state = np.ones(slots.n + 1, dtype=np.float64)
    # each candidate's first gain (every state 1: 1 * (P gamma) is P gamma; the dead cell n: 0)
    g0 = _fold_sorted(np.subtract(1.0, PGx), False)  # the factors in ascending order, as _gains_of
    np.subtract(1.0, g0, out=g0)
    Px = np.append(Pc, 0.0)
    acc = np.zeros(users.shape[0], dtype=np.float64)
    a, U_ = 0, users.shape[0]
    while a < U_:
        m0 = int(counts[a])
        b = int(np.searchsorted(counts, max(m0 + 1, m0 + m0 // 4), side="right"))
        mb = int(counts[b - 1])
        b = min(b, a + max(1, _WIN_CELLS // mb))
        mb = int(counts[b - 1])
        _window_block(users[a:b], counts[a:b], a, mb, cstart, Kc, PGx, Px, g0, state, acc, disc, k, D, n)
        a = b
    idcg[users] += acc  # every user's idcg is 0 here (the sparse kernel had other users)
    return idcg


def _gains_of(state, K, PG):
    """αβ gains ``1 - prod_t (1 - state_t (P gamma_t))`` of the cells ``K[t], PG[t]`` (any
    shape), with the operations of :func:`_cohort`, in its order."""
    F = state.take(K)
    F *= PG
    np.subtract(1.0, F, out=F)
    g = _fold_sorted(F, False)
    np.subtract(1.0, g, out=g)
    return g


def _window_block(us, cnt, r0, mb, cstart, Kc, PGx, Px, g0, state, acc, disc, k, D, n):
    """The ``min(mb, k)`` greedy steps of users ``us`` (``cnt`` candidates each, at most
    ``mb``; block ranks from ``r0``) of :func:`_greedy_window`; adds to ``acc``, updates
    ``state``."""
    R = us.shape[0]
    cols = np.arange(R, dtype=np.int64)
    rows = np.arange(mb, dtype=np.int64)
    live = rows < cnt[:, None]  # [R, mb]
    # sort keys: g0 descending, then the item (its rank in the user's candidate order) descending;
    # g0's bits (>= 0: ordered as the values) lose their last _KEY_BITS bits to the rank; the
    # order of the few values that differ only there is checked and repaired below
    kmask = (1 << _KEY_BITS) - 1
    v = g0.view(np.int64).take(np.minimum(cstart[us][:, None] + rows, n))
    np.subtract(_ONE_BITS, v, out=v)
    v >>= _KEY_BITS
    v <<= _KEY_BITS
    v |= kmask - rows
    np.putmask(v, ~live, _DEAD_KEY)
    v.sort(axis=1)
    vT = np.ascontiguousarray(v.T)  # [mb, R]
    liveT = vT < _DEAD_KEY
    key = kmask - (vT & kmask)  # the candidate's rank in the user's candidate order
    cand = np.where(liveT, cstart[us] + key, n)  # dead cells: the spare candidate n
    G0 = g0.take(cand)
    np.putmask(G0, ~liveT, -1.0)  # dead cells sort last
    bad = G0[:-1] < G0[1:]
    if bad.any():  # near-ties the truncated keys misordered: sort those users exactly
        bc = np.flatnonzero(bad.any(axis=0))
        o = np.lexsort((-key[:, bc].T, -G0[:, bc].T)).T  # [mb, nb]: g0 descending, then the rank
        for A in (key, liveT, cand, G0):
            A[:, bc] = np.take_along_axis(A[:, bc], o, axis=0)
    code = np.where(liveT, (key + 1) * 64, 0)  # (rank + 1) * 64 + row: ties to the largest item
    code += rows[:, None]
    RK = np.empty((D, mb, R), dtype=np.int64)
    RPG = np.empty((D, mb, R), dtype=np.float64)
    for t in range(D):
        Kc[t].take(cand, out=RK[t])
        PGx[t].take(cand, out=RPG[t])
    RP = Px.take(cand)
    RKf, RPGf, RPf, codef = RK.reshape(-1), RPG.reshape(-1), RP.reshape(-1), code.reshape(-1)
    tMR = (np.arange(D, dtype=np.int64) * (mb * R))[:, None]
    accb = np.zeros(R, dtype=np.float64)
    for j in range(min(mb, k)):
        w = min(_WIN, mb - j)
        g = _gains_of(state, RK[:, j:j + w], RPG[:, j:j + w])  # [w, R]
        if w > 1:
            gmax = g.max(axis=0)
            cb = ((g == gmax) * code[j:j + w]).max(axis=0)
        else:
            gmax, cb = g[0], code[j].copy()
        h = j + w  # the reservoir's first row
        if h < mb:
            g0h = G0[h]
            ok = gmax > g0h
            tie = gmax == g0h
            if tie.any():
                ok |= tie & ((cb >> 6) > (code[h] >> 6))
            if not ok.all():
                _window_resolve(np.flatnonzero(~ok), h, mb, state, RK, RPG, code, G0, gmax, cb)
        accb += gmax * disc[j]
        if j == k - 1 or j == mb - 1:
            break
        p = cb & 63  # the pick's row
        pR = p * R
        pR += cols
        kidx = pR + tMR
        kk = RKf.take(kidx)
        mult = RPf.take(pR)
        np.subtract(1.0, mult, out=mult)  # picked: state *= 1 - P
        state[kk] = state.take(kk) * mult
        if h < mb:
            res = p >= h
            if res.any():  # picks from the reservoir: its rows above them move down one
                _window_take(np.flatnonzero(res), p, j, h, R, mb, D, RKf, RPGf, RPf, codef, G0)
                p = np.where(res, j, p)
                pR = p * R + cols
                kidx = pR + tMR
        # row j (the window's first) moves into the pick's place; then the window slides
        RKf[kidx] = RK[:, j]
        RPGf[kidx] = RPG[:, j]
        RPf[pR] = RP[j]
        codef[pR] = code[j] + (p - j)
    acc[r0:r0 + R] = accb


def _window_resolve(act, h, mb, state, RK, RPG, code, G0, gmax, cb):
    """Columns ``act``: the reservoir's first candidate may beat the window's best; read the
    reservoir in order, :data:`_WIN` rows at a time, until its next ``(g0, item)`` cannot beat
    the best found (updates ``gmax``, ``cb``). Reading more candidates than needed changes
    nothing: every gain read is exact, and none read can beat the true best."""
    bv, bc = gmax[act], cb[act]
    r = h
    while act.shape[0]:
        e = min(mb, r + _WIN)
        fr = _gains_of(state, RK[:, r:e][:, :, act], RPG[:, r:e][:, :, act])  # [rows, act]
        cr = code[r:e, act]
        fmax = fr.max(axis=0)
        cf = ((fr == fmax) * cr).max(axis=0)
        better = (fmax > bv) | ((fmax == bv) & (cf > bc))
        bv = np.where(better, fmax, bv)
        bc = np.where(better, cf, bc)
        gmax[act] = bv
        cb[act] = bc
        if e >= mb:
            break
        nxt = G0[e, act]
        go_on = (bv < nxt) | ((bv == nxt) & ((bc >> 6) < (code[e, act] >> 6)))
        act, bv, bc = act[go_on], bv[go_on], bc[go_on]
        r = e


def _window_take(rc, p, j, h, R, mb, D, RKf, RPGf, RPf, codef, G0):
    """Columns ``rc`` picked reservoir row ``p`` (>= ``h``): rows ``h .. p-1`` move down one and
    the window's first row ``j`` moves to row ``h`` (it slides out of the window otherwise)."""
    pr = p[rc]
    G0f = G0.reshape(-1)
    tMR = (np.arange(D, dtype=np.int64) * (mb * R))[:, None]

    def move(src, dst, sel):
        s, d = src * R + sel, dst * R + sel
        RKf[d + tMR] = RKf.take(s + tMR)
        RPGf[d + tMR] = RPGf.take(s + tMR)
        RPf[d] = RPf.take(s)
        codef[d] = codef.take(s) + (dst - src)
        G0f[d] = G0f.take(s)

    for q in range(int(pr.max()), h, -1):
        move(q - 1, q, rc[pr >= q])
    move(j, h, rc)


def _dense_chunk(users, nu, cstart, Kc, Pc, gext, state, idcg, disc, k, D, oma):
    """Width loop of :func:`_greedy_ideal` for one chunk of users (updates ``state``, ``idcg``)."""
    ab = Pc is not None
    # users grouped by candidate count, largest first
    W = int(nu[users].max())
    users = users[np.argsort(-nu[users], kind="stable")]
    ubounds = np.searchsorted(-nu[users], -np.arange(W + 1), side="left")
    ar = np.arange(W + 1, dtype=np.int64)
    Ks = [np.empty((W, 0), dtype=np.int64) for _ in range(D)]
    Pw = np.empty((W, 0), dtype=np.float64)  # P(a|u,i) of each candidate
    ru = np.empty(0, dtype=np.int64)  # user of each column
    rs = np.empty(0, dtype=np.int64)  # rank (0-based) of each column's next pick
    for w in range(W, 0, -1):
        new = users[ubounds[w] : ubounds[w - 1]]  # users with exactly w candidates
        if new.shape[0]:
            idx = cstart[new][None, :] + ar[:w, None]  # [w, new]
            if ru.shape[0] == 0:  # no column carried over from the previous width
                Ks = [Kc[t].take(idx) for t in range(D)]
                if ab:
                    Pw = Pc.take(idx)
                ru = new
                rs = np.zeros(new.shape[0], dtype=np.int64)
            else:
                Ks = [np.concatenate((Ks[t], Kc[t].take(idx)), axis=1) for t in range(D)]
                if ab:
                    Pw = np.concatenate((Pw, Pc.take(idx)), axis=1)
                ru = np.concatenate((ru, new))
                rs = np.concatenate((rs, np.zeros(new.shape[0], dtype=np.int64)))
        R = ru.shape[0]
        if R == 0:
            continue
        if ab:  # 1 - prod_t (1 - (P * gamma_t) * state_t), the factors in ascending order
            F = np.empty((D,) + Ks[0].shape, dtype=np.float64)
            for t in range(D):
                f = F[t]
                gext.take(Ks[t], out=f)
                f *= Pw
                f *= state.take(Ks[t])
                np.subtract(1.0, f, out=f)
            g = _fold_sorted(F, False)
            np.subtract(1.0, g, out=g)
        else:  # sum_t state_t, the terms in ascending order
            g = _fold_sorted(np.stack([state.take(Ks[t]) for t in range(D)]), True)
        if w == 1:
            idcg[ru] += g[0] * disc[rs]
            break
        gmax = g.max(axis=0)
        pick = np.where(g == gmax, ar[:w, None], -1).max(axis=0)
        idcg[ru] += gmax * disc[rs]
        flat = pick * R + np.arange(R, dtype=np.int64)
        mult = 1.0 - Pw.take(flat) if ab else oma  # picked: state *= 1 - P
        for t in range(D):
            kk = Ks[t].take(flat)
            state[kk] *= mult
        rs += 1
        # drop the picked row of every column; drop columns that reached rank k
        sel = ar[: w - 1, None] >= pick[None, :]
        # columns past rank k are dropped only in batches; until then they add
        # gain * 0.0 (disc is zero-padded past k), which leaves idcg unchanged,
        # and update only their own user's state
        alive = rs < k
        n_dead = R - int(np.count_nonzero(alive))
        keep = alive if 4 * n_dead > R else None

        def _shrink(A, sel=sel, keep=keep):
            B = A[:-1].copy()
            np.copyto(B, A[1:], where=sel)
            return B if keep is None else B[:, keep]

        Ks = [_shrink(A) for A in Ks]
        if ab:
            Pw = _shrink(Pw)
        if keep is not None:
            ru = ru[keep]
            rs = rs[keep]
    return idcg


def _run_triples(items, indptr, indices, C):
    """Expand all list slots once, in rank-major order.

    Returns ``(bounds, slot, key, starts_local)`` where for rank ``j`` the
    triples are ``bounds[j]:bounds[j+1]``; ``slot`` is the flat ``u*k+j`` index
    of each triple's slot (only slots with >= 1 aspect appear) and ``key`` the
    flat ``u*C + aspect``.
    """
    U, k = items.shape
    cm = items.T.ravel()  # rank-major: (j, u)
    sl = np.flatnonzero(cm >= 0)
    it = cm[sl]
    rep, asp, deg = _expand(it, indptr, indices)
    j_of = sl // U
    u_of = sl % U
    key = u_of[rep] * C + asp
    slot = u_of * k + j_of  # flat [U, k] index
    tj = j_of[rep]
    bounds = np.searchsorted(tj, np.arange(k + 1))
    return bounds, slot[rep], key, rep


def _sort_candidates(cu, ci, *rest):
    """Order candidates by (user, item); skips the sort when the CSR already is."""
    if cu.shape[0] > 1:
        d_u = np.diff(cu)
        if not ((d_u > 0) | ((d_u == 0) & (np.diff(ci) > 0))).all():
            order = np.lexsort((ci, cu))
            return (cu[order], ci[order]) + tuple(r[order] for r in rest)
    return (cu, ci) + rest


# ---------------------------------------------------------------------------
# the greedy ideal's tie rule: label-free (the same for any renaming of items and categories)
# ---------------------------------------------------------------------------

def _mix(x: np.ndarray, salt: int) -> np.ndarray:
    """SplitMix64's finaliser of ``x + salt`` (uint64, wrapping): the hash of the tie key."""
    with np.errstate(over="ignore"):
        z = x.astype(np.uint64) + np.uint64(salt)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def _tie_keys(cu: np.ndarray, ci: np.ndarray, indptr: np.ndarray, indices: np.ndarray, C: int,
              p: np.ndarray | None = None) -> np.ndarray:
    r"""The label-free tie key :math:`\kappa(d)` of every candidate (uint64): two rounds of
    colour refinement on the user's candidates and their categories, from counts only.

    With :math:`m_c` the number of the user's candidates in category *c* and *H* SplitMix64
    (:func:`_mix`, sums modulo :math:`2^{64}`):
    :math:`h_1(d) = \sum_{c \in d} H(m_c)`, :math:`b_c = \sum_{d' \ni c} H(h_1(d'))`,
    :math:`\kappa(d) = H(h_1(d)) + \sum_{c \in d} H(b_c)` (each *H* with its own salt); αβ-nDCG (``p``) adds :math:`H(\text{bits of } P(d))`
    to :math:`h_1(d)`. No id enters: renaming items or categories leaves every key unchanged."""
    if cu.shape[0] == 0:
        return np.zeros(0, dtype=np.uint64)
    rep, asp, deg = _expand(ci, indptr, indices)
    pair, inv, m = np.unique(cu[rep] * C + asp, return_inverse=True, return_counts=True)
    inv = inv.ravel()
    tstart = np.cumsum(deg) - deg
    with np.errstate(over="ignore"):
        h1 = np.add.reduceat(_mix(m, 1)[inv], tstart)
        if p is not None:
            h1 += _mix(np.ascontiguousarray(p, dtype=np.float64).view(np.uint64), 4)
        b = np.zeros(pair.shape[0], dtype=np.uint64)
        np.add.at(b, inv, _mix(h1, 2)[rep])
        return np.add.reduceat(_mix(b, 3)[inv], tstart) + _mix(h1, 5)


def _order_by_tie_key(cu, ci, *rest, indptr, indices, C, p=None):
    """Candidates ordered by (user, tie key, item): the kernels' "last of the maximal gains"
    is then the largest tie key (the item code only orders candidates of equal key)."""
    key = _tie_keys(cu, ci, indptr, indices, C, p)
    order = np.lexsort((ci, key, cu))
    return (cu[order], ci[order], key[order]) + tuple(r[order] for r in rest)


def _same_sets(a: np.ndarray, b: np.ndarray, indptr: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """For item pairs ``(a[j], b[j])``: the two items have the same categories."""
    da, db = np.diff(indptr)[a], np.diff(indptr)[b]
    out = da == db
    sel = np.flatnonzero(out & (da > 0))
    if sel.shape[0]:
        ra, ca, dg = _expand(a[sel], indptr, indices)
        _, cb, _ = _expand(b[sel], indptr, indices)
        diff = np.bincount(ra, weights=(ca != cb), minlength=sel.shape[0])
        out[sel] = diff == 0
    return out


def _private(cu, ci, indptr, indices, C):
    """Which categories are private: held, among the user's candidates, only by candidates of
    one category set. Returns ``(private, tstart, setid)``: per (candidate, category) triple
    (:func:`_expand` order), the first triple of each candidate, and an id of each candidate's
    category set within its user (equal sets found by a hash of the codes, checked exactly; a
    collision can only split a set, which makes fewer categories private)."""
    rep, asp, deg = _expand(ci, indptr, indices)
    tstart = np.cumsum(deg) - deg
    with np.errstate(over="ignore"):
        sh = np.add.reduceat(_mix(asp, 7), tstart)
    o = np.lexsort((sh, cu))
    same = (cu[o][1:] == cu[o][:-1]) & (sh[o][1:] == sh[o][:-1])
    j = np.flatnonzero(same)
    same[j] = _same_sets(ci[o][j], ci[o][j + 1], indptr, indices)
    setid = np.empty(cu.shape[0], dtype=np.int64)
    setid[o] = np.cumsum(np.r_[True, ~same])
    _, inv = np.unique(cu[rep] * C + asp, return_inverse=True)
    inv = inv.ravel()
    t = np.lexsort((setid[rep], inv))  # triples by (pair, set): a pair is private iff its first and last set agree
    starts = np.flatnonzero(np.r_[True, inv[t][1:] != inv[t][:-1]])
    ends = np.r_[starts[1:], t.shape[0]] - 1
    uniform = np.zeros(int(inv.max()) + 1, dtype=bool)
    uniform[inv[t][starts]] = setid[rep][t][starts] == setid[rep][t][ends]
    return uniform[inv], tstart, setid


def _ambiguous_users(cu, ci, key, indptr, indices, extra=None, C=None) -> np.ndarray:
    """The users with two candidates of equal tie key whose contents differ (categories, or
    ``extra``) in a way that may matter: the only users whose greedy ideal may depend on the
    item codes. Candidates are ordered by (user, key, ...).

    ``C`` given (gains that can only fall), two such candidates do not count when

    * either is *isolated* (all its categories private, :func:`_private`): an isolated category
      set forms its own stream of gains, independent of every other candidate and falling with
      each of its picks; the other candidates form another falling stream; the greedy merges the
      streams by largest gain, and a merge of falling streams yields the same gains whichever
      of two equal heads it takes;
    * (α-nDCG, ``extra`` None) both have the same shared categories, as many private ones and
      as many candidates of their set: swapping their private categories maps the candidates
      onto themselves and fixes every other set, so when they tie (the same number of picks of
      each, or α in {0, 1}) the two choices lead to mirrored, equal ideals."""
    if cu.shape[0] < 2:
        return np.zeros(0, dtype=np.int64)
    priv = None
    if C is not None:
        priv, tstart, setid = _private(cu, ci, indptr, indices, C)
        keep = ~np.logical_and.reduceat(priv, tstart)
        mult_of = np.bincount(setid)[setid]  # set ids are distinct across users
        idx = np.flatnonzero(keep)
        cu, ci, key, mult_of = cu[idx], ci[idx], key[idx], mult_of[idx]
        starts = tstart[idx]
        extra = None if extra is None else extra[idx]
    if cu.shape[0] < 2:
        return np.zeros(0, dtype=np.int64)
    same_key = (cu[1:] == cu[:-1]) & (key[1:] == key[:-1])
    j = np.flatnonzero(same_key)
    differ = ~_same_sets(ci[j], ci[j + 1], indptr, indices)
    if extra is not None:
        differ |= extra[j] != extra[j + 1]
    elif priv is not None:
        for x in np.flatnonzero(differ).tolist():
            a, b = j[x], j[x] + 1
            if mult_of[a] != mult_of[b]:
                continue
            ca, cb = indices[indptr[ci[a]]:indptr[ci[a] + 1]], indices[indptr[ci[b]]:indptr[ci[b] + 1]]
            pa, pb = priv[starts[a]:starts[a] + ca.shape[0]], priv[starts[b]:starts[b] + cb.shape[0]]
            if int(pa.sum()) == int(pb.sum()) and np.array_equal(ca[~pa], cb[~pb]):
                differ[x] = False
    return np.unique(cu[j[differ]])


def _ideal_search(cats: list[tuple[int, ...]], keys: list[int], ps: list[float] | None, k: int, *,
                  alpha: float, gamma: dict[int, float] | None = None) -> float:
    """The ideal DCG of one user by the rule of the kernels, every remaining choice explored.

    At each rank the candidates of the largest gain, among them those of the largest tie key;
    when these differ in content (categories, and P for αβ), the ideal is the largest DCG over
    the choices. Candidates of one content are interchangeable (one class with a multiplicity);
    two classes whose categories differ only in categories no other class holds, with the
    same states there and the same multiplicity, are interchangeable too (swapping those
    categories maps the state onto itself), so only one of them is explored. The floating point
    operations are the kernels', so a path's value is the kernels' value bit for bit: each
    state multiplied pick by pick along the path, a gain's terms folded in ascending order
    (:func:`_fold_sorted`) and the DCG summed rank by rank from 0."""
    content = sorted(set(zip(cats, keys, ps if ps is not None else [None] * len(cats))))
    cls = {c: i for i, c in enumerate(content)}
    mult0 = [0] * len(content)
    for c in zip(cats, keys, ps if ps is not None else [None] * len(cats)):
        mult0[cls[c]] += 1
    carriers: dict[int, list[int]] = {}
    for i, (cs, _, _) in enumerate(content):
        for c in cs:
            carriers.setdefault(c, []).append(i)
    disc = ndeval_discount(k).tolist()
    oma = 1.0 - alpha
    memo: dict[tuple, float] = {}

    def value(mult: tuple[int, ...], st: dict[int, float], acc: float, j: int) -> float:
        if j == k:
            return acc
        memo_key = (mult, tuple(sorted(st.items())), acc)
        got = memo.get(memo_key)
        if got is not None:
            return got
        best: tuple[float, int] | None = None
        tied: list[int] = []
        for i, m in enumerate(mult):
            if not m:
                continue
            cs, key, p = content[i]
            if p is None:
                g = 0.0
                for term in sorted(st.get(c, 1.0) for c in cs):
                    g += term
            else:
                f = 1.0
                for term in sorted(1.0 - p * gamma.get(c, 0.0) * st.get(c, 1.0) for c in cs):
                    f *= term
                g = 1.0 - f
            if best is None or (g, key) > best:
                best, tied = (g, key), [i]
            elif (g, key) == best:
                tied.append(i)
        if best is None:
            return acc
        acc = acc + best[0] * disc[j]
        seen = set()
        out = -math.inf
        for i in tied:
            cs, _, p = content[i]
            shared = frozenset(c for c in cs if any(mult[x] and x != i for x in carriers[c]))
            private = sorted((st.get(c, 1.0), 0.0 if gamma is None else gamma.get(c, 0.0)) for c in cs if c not in shared)
            sig = (shared, tuple(private), p, mult[i])
            if sig in seen:
                continue
            seen.add(sig)
            nxt = list(mult)
            nxt[i] -= 1
            st2 = dict(st)
            for c in cs:
                st2[c] = st2.get(c, 1.0) * (oma if p is None else 1.0 - p)
            out = max(out, value(tuple(nxt), st2, acc, j + 1))
        memo[memo_key] = out
        return out

    return value(tuple(mult0), {}, 0.0, 0)


def _resolve_ambiguous(idcg, cu, ci, key, problem: _Greedy, cp=None) -> None:
    """Replace the kernel's ideal of the users whose ties may read the item codes by
    :func:`_ideal_search` (in place)."""
    indptr, indices, C, _, k, alpha, gamma = problem
    if cp is None:  # alpha in [0, 1]: every weight (1 - alpha)^n falls with n
        falling = 0.0 <= alpha <= 1.0
    else:  # P in [0, 1] and gamma >= 0: every factor 1 - P gamma state rises, so every gain falls
        g = gamma.dense if gamma.dense is not None else gamma.values
        falling = _unit(cp) and (g is None or g.size == 0 or bool(np.nanmin(g) >= 0.0 and not np.isnan(g).any()))
    amb = _ambiguous_users(cu, ci, key, indptr, indices, cp, C if falling else None)
    if amb.shape[0] == 0:
        return
    lo = np.searchsorted(cu, amb, side="left")
    hi = np.searchsorted(cu, amb, side="right")
    for u, a, b in zip(amb.tolist(), lo.tolist(), hi.tolist()):
        cats = [tuple(indices[indptr[i]:indptr[i + 1]].tolist()) for i in ci[a:b].tolist()]
        g = None
        if gamma is not None:
            cs = np.unique(np.concatenate([np.asarray(c, dtype=np.int64) for c in cats]))
            g = dict(zip(cs.tolist(), gamma.at(np.full(cs.shape[0], u, dtype=np.int64), cs).tolist()))
        idcg[u] = _ideal_search(cats, key[a:b].tolist(), None if cp is None else cp[a:b].tolist(), k,
                                alpha=alpha, gamma=g)


def _ideal_numpy(off, m, titems, cp_all, problem: _Greedy, gext=None) -> np.ndarray:
    """The greedy ideal DCG@k of every user on the numpy path: the candidates (truth pairs with
    mask ``m``; ``cp_all`` their P for αβ-nDCG, None for α-nDCG) ordered by the tie key, the
    greedy kernels, then the users whose ties may read the item codes searched exactly."""
    ip, ix, C = problem.indptr, problem.indices, problem.C
    if cp_all is None:
        cu, ci = _sort_candidates(*_candidates(off, m, titems))
        cu, ci, key = _order_by_tie_key(cu, ci, indptr=ip, indices=ix, C=C)
        idcg = _greedy_ideal(cu, ci, None, problem)
        _resolve_ambiguous(idcg, cu, ci, key, problem)
        return idcg
    cu, ci, cp = _sort_candidates(*_candidates(off, m, titems, cp_all))
    cu, ci, key, cp = _order_by_tie_key(cu, ci, cp, indptr=ip, indices=ix, C=C, p=cp)
    idcg = _greedy_ideal(cu, ci, cp, problem, gext=gext)
    _resolve_ambiguous(idcg, cu, ci, key, problem, cp=cp)
    return idcg


# ---------------------------------------------------------------------------
# the greedy ideal compiled (numba, :mod:`receval._jit_aspects`) for large inputs
# ---------------------------------------------------------------------------
#: ideal candidates (the truth pairs the greedy ideal may pick) from which the ideal runs in the
#: compiled kernel: below it the numpy path runs and numba is never imported
#: (``RECEVAL_JIT_ASPECTS_MIN``; 0 forces the kernel on, e.g. to run a test suite)
JIT_MIN_CANDIDATES = 250_000

#: greedy steps of one user's tied choices the kernel follows before it leaves the user to the
#: numpy path (:func:`_ideal_search`, which merges equal states)
JIT_BUDGET = 2048

#: the most cells (ranks x classes, or ranks x categories) one user's search in the kernel may hold
#: per array (32 MB); a user past it takes the numpy path
JIT_MAX_CELLS = 1 << 22

def _jit_min() -> int:
    return int(os.environ.get("RECEVAL_JIT_ASPECTS_MIN", JIT_MIN_CANDIDATES))


def _jit_enabled(n: int) -> bool:
    """Whether ``n`` candidates go to the kernel: at least :func:`_jit_min`, ``RECEVAL_NO_JIT``
    unset (or 0) and numba installed (:func:`receval._numba.enabled`)."""
    return n >= _jit_min() and _numba.enabled()


def _jit() -> Any:
    """The kernel module, imported (and compiled, the first time on this install) on first use
    by :func:`receval._numba.load`; a line on stderr says when the kernel is compiled rather
    than loaded from the cache."""
    return _numba.load("_jit_aspects", "aspect kernels", _jit_warm, expect="15-60 s")


def _jit_warm(jit: Any) -> None:
    """Compile (or load) both signatures now, on a tiny input: one message, one wait."""
    one = np.ones(1, dtype=np.float64)
    for ab in (False, True):
        _jit_call(jit, np.array([0, 1], dtype=np.int64), np.zeros(1, dtype=np.int64), one if ab else None,
                  np.array([0, 1], dtype=np.int64), np.zeros(1, dtype=np.int64), 1, one, 0.5, 1,
                  _Gamma(1, dense=one) if ab else None)


def _jit_call(jit, coff, ci, cp, indptr, indices, C, disc, alpha, k, gamma, keys=False, side=None):
    """One call of :func:`receval._jit_aspects.greedy_ideals`: ``(idcg, ok, tie keys, dcg)`` (the
    keys only with ``keys``, else an empty array). ``side``: ``(items, P, rel, toff, titems,
    trat, rows, rows_p)`` to have the kernel compute the run DCG too (``dcg``, else None): α-nDCG
    with ``rel`` (P None), αβ-nDCG with ``P`` (rel None) and ``gamma`` None, γ then computed per
    user from the truth rows ``toff``, ``titems``, ``trat``; or, with ``rows`` (:class:`ListRows`),
    the lists as rows (``items``, ``P`` and ``rel`` None), αβ-nDCG's P from ``rows_p`` = (P of an
    unrated item, β, r_max)."""
    U = coff.shape[0] - 1
    ab = cp is not None
    cpa = np.ascontiguousarray(cp if ab else np.zeros(0), dtype=np.float64)
    empty_f, empty_i = np.zeros(0, dtype=np.float64), np.zeros(0, dtype=np.int64)
    gmode, gdense, gkeys, gvals = 1, empty_f, empty_i, empty_f
    empty_b = np.zeros(0, dtype=np.bool_)
    dcg = None
    s_items, s_p, s_rel, s_toff, s_ti, s_tr = empty_i, empty_f, empty_b, empty_i, empty_i, empty_f
    l_st, l_len, l_t, l_r, l_rel, pa, pb, prmax = empty_i, empty_i, empty_i, empty_f, empty_b, 0.0, 0.0, 1.0
    if side is not None:
        items, P, rel, toff, titems, trat, rows, rows_p = side
        dcg = np.empty(U, dtype=np.float64)
        if rows is not None:  # the lists as rows, P and relevance read through each row's truth row
            l_st = np.ascontiguousarray(rows.starts, dtype=np.int64)
            l_len = np.ascontiguousarray(rows.length, dtype=np.int64)
            l_t = np.ascontiguousarray(rows.truth, dtype=np.int64)
            l_r = np.ascontiguousarray(rows.ratings, dtype=np.float64)
            l_rel = np.ascontiguousarray(rows.rel, dtype=np.bool_)
            items, P, rel = rows.items, empty_f, empty_b
            if ab:
                pa, pb, prmax = (float(x) for x in rows_p)
        s_items = np.ascontiguousarray(items, dtype=np.int64).reshape(-1)
        if ab:
            assert gamma is None
            gmode = 2
            s_p = np.ascontiguousarray(P, dtype=np.float64).reshape(-1)
            s_toff = np.ascontiguousarray(toff, dtype=np.int64)
            s_ti = np.ascontiguousarray(titems, dtype=np.int64)
            s_tr = np.ascontiguousarray(trat, dtype=np.float64)
        else:
            s_rel = np.ascontiguousarray(rel, dtype=np.bool_).reshape(-1)
    elif ab and gamma.dense is not None:
        gmode, gdense = 0, np.ascontiguousarray(gamma.dense, dtype=np.float64)
    elif ab and gamma.keys is not None:
        gkeys = np.ascontiguousarray(gamma.keys, dtype=np.int64)
        gvals = np.ascontiguousarray(gamma.values, dtype=np.float64)
    idcg = np.empty(U, dtype=np.float64)
    ok = np.empty(U, dtype=np.bool_)
    keys = np.empty(ci.shape[0] if keys else 0, dtype=np.uint64)
    jit.greedy_ideals(coff, ci, cpa, cpa.view(np.uint64), ab, indptr, indices, int(C), gmode, gdense, gkeys, gvals,
                      float(1.0 - alpha), np.ascontiguousarray(disc, dtype=np.float64), int(k), int(JIT_BUDGET),
                      int(JIT_MAX_CELLS),
                      idcg, ok, keys, side is not None, s_items, s_p, s_rel, l_st, l_len, l_t, l_r, l_rel, pa, pb, prmax,
                      s_toff, s_ti, s_tr,
                      dcg if dcg is not None else empty_f)
    return idcg, ok, keys, dcg


def _ideal(off, m, titems, cp_all, problem: _Greedy, gext=None, side=None, numpy_gamma=None, cp_unit=False):
    """The greedy ideal DCG@k of every user: the compiled kernel for at least
    :data:`JIT_MIN_CANDIDATES` candidates when every gain can only fall (α in [0, 1]; αβ: every
    P and every γ in [0, 1]), else :func:`_ideal_numpy`; the same values, bit for bit (the
    kernel's users past :data:`JIT_BUDGET` steps of choices or :data:`JIT_MAX_CELLS` take the
    numpy path).

    ``side`` (see :func:`_jit_call`): the kernel computes the run DCG as well (and, for αβ-nDCG,
    γ: ``problem.gamma`` is None, ``numpy_gamma()`` gives ``(γ, gext)`` for the numpy path);
    returns ``(idcg, dcg)``, ``dcg`` None when the kernel did not run (the caller computes it).
    ``cp_unit``: the caller has established that every P of ``cp_all`` lies in [0, 1]."""
    indptr, indices, C, U, k, alpha, gamma = problem
    n = int(np.count_nonzero(m))

    def numpy_path():
        if side is not None and cp_all is not None:
            gam, gx = numpy_gamma()
            return _ideal_numpy(off, m, titems, cp_all, problem._replace(gamma=gam), gx), None
        idcg = _ideal_numpy(off, m, titems, cp_all, problem, gext)
        return (idcg, None) if side is not None else idcg

    if not _jit_enabled(n):
        return numpy_path()
    at = None if n == m.shape[0] else np.flatnonzero(m)  # the candidates' rows (None: every row)
    if cp_all is None:
        if not 0.0 <= alpha <= 1.0:
            return numpy_path()
        cp = None
    else:
        cp = cp_all if at is None else cp_all[at]
        g = None if gamma is None else gamma.dense if gamma.dense is not None else gamma.values
        if not (cp_unit or _unit(cp)) or (g is not None and g.size and not (bool(np.isfinite(g).all()) and _unit(g))):
            return numpy_path()
    # each user's candidates: from the first at or after its first row
    coff = np.ascontiguousarray(off, dtype=np.int64) if at is None else np.searchsorted(at, off)
    ci = np.ascontiguousarray(titems if at is None else titems[at], dtype=np.int64)  # (no copy when it is)
    del at
    idcg, ok, _, dcg = _jit_call(_jit(), coff, ci, cp, indptr, indices, C, ndeval_discount(k), alpha, k, gamma,
                                 side=side)
    if not ok.all():  # users whose choices grew past the budget: the numpy path
        bad = ~ok
        if side is not None and cp_all is not None:
            gam, gext = numpy_gamma()
            problem = problem._replace(gamma=gam)
        sub = _ideal_numpy(off, m & np.repeat(bad, np.diff(off)), titems, cp_all, problem, gext)
        idcg[bad] = sub[bad]
    return idcg if side is None else (idcg, dcg)


def _divide(dcg, idcg):
    out = np.zeros_like(dcg)
    np.divide(dcg, idcg, out=out, where=idcg > 0)
    return out


def _alpha_run_dcg(items, rel, indptr, indices, C, alpha, disc):
    """The run's α-DCG of every user (the numpy path): a loop over ranks over the relevant slots
    only (rank-major); per slot the gain is summed in ascending order of its terms from the
    per-(user, aspect) weights w = (1-alpha)^count, padded aspects read a weight-0 dummy slot;
    terms are cumulated in rank order."""
    U, k = items.shape
    one_minus_alpha = 1.0 - alpha
    dcg = np.zeros(U, dtype=np.float64)
    sl = np.flatnonzero((rel & (items >= 0)).T)
    if sl.shape[0]:
        j_of = sl // U
        u_of = sl - j_of * U
        it = items[u_of, j_of]
        ideg = np.diff(indptr)
        D = int(ideg[it].max())
        if D > 0:
            # one weight per (user, aspect) pair the slots touch, numbered; aspect C is a
            # weight-0 dummy per user that padded aspects read
            tab = _aspect_table(indptr, indices, D, C)
            slots = _Pairs(U, C + 1, D * sl.shape[0], lambda: np.concatenate(
                [u_of * (C + 1) + tab[t].take(it) for t in range(D)]), aspect_major=True)
            w = slots.ones(dummy=0.0)
            code = slots.coder(tab)
            bounds = np.searchsorted(j_of, np.arange(k + 1))
            for j in range(k):
                a, b = bounds[j], bounds[j + 1]
                if a == b:
                    continue
                u, itj = u_of[a:b], it[a:b]
                T = np.empty((D, b - a), dtype=np.float64)
                for t in range(D):
                    kk = code(t, u, itj)
                    c = T[t]
                    w.take(kk, out=c)
                    w.put(kk, c * one_minus_alpha)
                dcg[u] += _fold_sorted(T, True) * disc[j]

    return dcg


# ---------------------------------------------------------------------------
# α-nDCG
# ---------------------------------------------------------------------------
def alpha_ndcg(
    items,
    rel,
    aspects,
    truth_offsets,
    truth_items,
    truth_ratings,
    threshold: float,
    *,
    alpha: float = 0.5,
    k: int | None = None,
    return_parts: bool = False,
):
    r"""α-nDCG@k (Clarke et al., SIGIR 2008), computed as TREC ``ndeval`` v4.5 but for the ideal's ties.

    Mapping to ``ndeval``: user = topic, category = subtopic, item = document.
    The user's subtopics are the categories of their relevant truth items
    (``truth_ratings >= threshold``), and the binary judgment is

    .. math::
        J(d, c) = \mathbb 1[d \text{ relevant to } u] \cdot \mathbb 1[c \in \mathrm{cat}(d)],

    i.e. a relevant item is judged relevant to *all* its categories (every one
    of them is a user subtopic by construction) and a non-relevant or
    unjudged item to none.  Relevant items without any category carry no
    judgment and never gain (``ndeval`` never sees them).

    .. math::
        G[j] = \sum_{c=1}^{C} J(d_j, c)\,(1-\alpha)^{r_{c,j-1}},\qquad
        r_{c,j-1} = \sum_{i<j} J(d_i, c),

    .. math::
        \alpha\text{-DCG}@k = \sum_{j=1}^{k} \frac{G[j]}{\log_2(1+j)},\qquad
        \alpha\text{-nDCG}@k = \frac{\alpha\text{-DCG}@k}{\alpha\text{-DCG}^{*}@k}

    where :math:`\alpha\text{-DCG}^{*}` is the DCG of the greedy ideal list over
    the user's relevant categorised items: at each rank :math:`j` an item of

    .. math::
        \max_{d \notin S_{j-1}} \bigl(G_{S_{j-1}}(d),\ \kappa(d)\bigr)
        \quad\text{(lexicographic)},

    :math:`G_S(d)` the gain of *d* after the items :math:`S` and :math:`\kappa` the
    label-free tie key of :func:`_tie_keys` (no item or category id enters it);
    when items attaining the maximum differ in their categories, every choice is
    followed and :math:`\alpha\text{-DCG}^{*}` is the largest of the resulting DCGs
    (items with the same categories are interchangeable).  The value is the same,
    bit for bit, for every renaming of items and categories (a gain's terms are
    added in ascending order of their values, see the module notes).  ``ndeval`` instead breaks ties by
    the largest docno; the two agree whenever ``ndeval``'s choices give the same
    ideal DCG (e.g. when tied items share their categories).

    Symbols: :math:`d_j` the item at rank *j*; :math:`C` number of categories;
    :math:`\alpha\in[0,1]` redundancy intolerance (``ndeval`` default 0.5).

    Policies: a user with no relevant categorised truth item (ideal 0) or a
    run DCG of 0 scores 0.0 (``ndeval`` leaves nDCG at 0).  ``k`` defaults to
    ``K``; ``k > K`` is allowed (lists are padded, the ideal still goes to depth
    ``k``); unlike ``ndeval`` there is no depth limit of 20.  Per-user values are
    returned; averaging (and which users to average over) is the caller's job.

    Library differences: ``ndeval``/``ir_measures`` report ``alpha-nDCG@k``
    with this definition; ``ndeval``'s ``alpha-DCG@k`` instead divides by the
    collection-independent "ideal ideal" :math:`S\sum_j (1-\alpha)^{j-1}/\log_2(1+j)`.
    ``trec_eval`` has no α-nDCG.  Elliot's ``SRecall`` is subtopic recall, not this.

    Parameters
    ----------
    threshold : relevant iff ``truth_ratings >= threshold`` (ideal candidates);
        ``rel`` must be consistent with it for the run side.
    return_parts : also return ``(dcg, idcg)``.

    Examples
    --------
    One user, categories {0: drama, 1: comedy}; items 0=(drama), 1=(drama),
    2=(comedy); all three relevant; run = [0, 1, 2].

    >>> import numpy as np
    >>> asp = np.array([[1, 0], [1, 0], [0, 1]], dtype=bool)
    >>> items = np.array([[0, 1, 2]]); rel = np.ones((1, 3), bool)
    >>> off = np.array([0, 3]); ti = np.array([0, 1, 2]); tr = np.array([5.0, 5.0, 5.0])
    >>> v, dcg, idcg = alpha_ndcg(items, rel, asp, off, ti, tr, 4.0, return_parts=True)

    Run gains 1, 0.5, 1 → DCG = 1 + 0.5/log2(3) + 1/2 = 1.8155;
    ideal (greedy) = [2, 0, 1] or [2, 1, 0] (0 and 1 are interchangeable) gains 1, 1, 0.5 →
    1 + 1/log2(3) + 0.25 = 1.8809.

    >>> round(float(dcg[0]), 4), round(float(idcg[0]), 4), round(float(v[0]), 6)
    (1.8155, 1.8809, 0.965195)
    """
    rows = items if isinstance(items, ListRows) else None
    if rows is None:
        items, k = _check_lists(items, k)
        rel = _pad_cols(np.asarray(rel, dtype=bool), k, False)
        U = items.shape[0]
    else:
        k = _rows_k(k)
        U = rows.starts.shape[0]
    indptr, indices, C = _aspects_csr(aspects)
    disc = ndeval_discount(k)

    # ideal side: candidates = relevant, categorised truth items, sorted by (user, item); the
    # kernel (large inputs) computes the run side in the same pass
    off = np.asarray(truth_offsets, dtype=np.int64)
    titems = np.asarray(truth_items, dtype=np.int64)
    trat = np.asarray(truth_ratings, dtype=np.float64)
    m = trat >= threshold
    m &= (np.diff(indptr) > 0)[titems]
    problem = _Greedy(indptr, indices, C, U, k, alpha, None)
    idcg, dcg = _ideal(off, m, titems, None, problem, side=(items, None, rel, None, None, None, rows, None))
    if dcg is None:
        if rows is not None:
            items, rel, _ = rows.top(k)
        dcg = _alpha_run_dcg(items, rel, indptr, indices, C, alpha, disc)
    val = _divide(dcg, idcg)
    val[dcg == 0] = 0.0
    if return_parts:
        return val, dcg, idcg
    return val


# ---------------------------------------------------------------------------
# αβ-nDCG
# ---------------------------------------------------------------------------
def aspect_preferences(offsets, items_, ratings, aspects, *, zero_below: float | None = None):
    r"""MLE aspect preferences :math:`\gamma^u_\varphi` of every user (Parapar & Radlinski 2021).

    .. math::
        \gamma^u_\varphi = \frac{\sum_{i\in\mathcal I_u:\,\varphi\in i} r_{u,i}}
                                {\sum_{\varphi'}\sum_{i\in\mathcal I_u:\,\varphi'\in i} r_{u,i}}

    over the user's rated items :math:`\mathcal I_u` given as a ragged CSR
    (``offsets``, ``items_``, ``ratings``).  Users whose denominator is 0 get
    all-zero preferences.  ``zero_below``: ratings below it count as 0.
    Returns float64 ``[U, C]``.

    >>> import numpy as np
    >>> asp = np.array([[1, 0], [1, 1], [0, 1]], dtype=bool)
    >>> aspect_preferences([0, 2], [0, 1], [4.0, 2.0], asp).tolist()
    [[0.75, 0.25]]
    """
    indptr, indices, C = _aspects_csr(aspects)
    off, tuser = _truth_users(offsets)
    it = np.asarray(items_, dtype=np.int64)
    r = _zeroed(np.asarray(ratings, dtype=np.float64), zero_below)
    return _gamma(off, tuser, it, r, indptr, indices, C)


def _gamma(off, tuser, it, r, indptr, indices, C):
    U = off.shape[0] - 1
    D = int(np.diff(indptr)[it].max()) if it.shape[0] else 0
    if 0 < D <= _DCAP:
        # the (user, aspect) keys rating by rating, aspects ascending (as _expand lists them),
        # padded to D per rating with a spare column C: every bin sums the same terms in the
        # same order
        tab = _aspect_table(indptr, indices, D, C)
        keys = np.empty((it.shape[0], D), dtype=np.int64)
        ub = tuser * (C + 1)
        for t in range(D):
            np.add(ub, tab[t].take(it), out=keys[:, t])
        w = np.broadcast_to(r[:, None], (r.shape[0], D)).reshape(-1)  # each rating D times
        num = np.bincount(keys.reshape(-1), weights=w, minlength=U * (C + 1))
        num = np.ascontiguousarray(num.reshape(U, C + 1)[:, :C], dtype=np.float64)
    else:
        rep, asp, _ = _expand(it, indptr, indices)
        num = np.bincount(tuser[rep] * C + asp, weights=r[rep], minlength=U * C)
        num = num.astype(np.float64, copy=False).reshape(U, C)  # (int64 when there are no pairs)
    den = num.sum(axis=1, keepdims=True)
    out = np.zeros_like(num)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _zeroed(r: np.ndarray, zero_below):
    if zero_below is None:
        return r
    r = r.copy()
    r[r < zero_below] = 0.0
    return r


def _p_rated(r, beta, r_max):
    # P(a|u,i) for a rated item, β (r / r_max), in one array; one expression shared by run and ideal
    # (and the kernel, :func:`receval._jit_aspects._slot_p`)
    p = np.divide(r, r_max, dtype=np.float64)
    p *= beta
    return p


def alpha_beta_ndcg(
    items,
    rating,
    aspects,
    truth_offsets,
    truth_items,
    truth_ratings,
    *,
    alpha: float = 0.02,
    beta: float = 0.2,
    r_max: float | None = None,
    k: int | None = None,
    zero_below: float | None = None,
    gamma=None,
    gamma_offsets=None,
    gamma_items=None,
    gamma_ratings=None,
    return_parts: bool = False,
):
    r"""αβ-nDCG@k (Parapar & Radlinski, RecSys 2021), vectorised over users.

    Aspects :math:`a_\varphi` are item categories.  For user *u* and item *i*

    .. math::
        P(a_\varphi\mid u,i)=\begin{cases}
        0 & \varphi\notin i\\
        \alpha & \varphi\in i,\ u \text{ has not rated } i\ (\text{rating NaN})\\
        \beta\, r_{u,i}/r_{\max} & \varphi\in i,\ u \text{ rated } i
        \end{cases}

    The aspect preference :math:`\gamma^u_\varphi` is the MLE of
    :func:`aspect_preferences`.  With :math:`S=(i_1,\dots,i_{k-1})` the items
    ranked above *k*, the remaining interest is
    :math:`\gamma^u_\varphi\prod_{j<k}(1-P(a_\varphi\mid u,i_j))
    =\gamma^u_\varphi(1-\alpha)^{\tau_{\varphi,k-1}}\prod_r(1-\beta r/r_{\max})^{\rho_{r,\varphi,k-1}}`
    (τ: unrated items with φ above *k*; ρ: items rated *r* with φ above *k*), and

    .. math::
        G[k] = 1-\prod_{\varphi=1}^{C}\Bigl(1-P(a_\varphi\mid u,i_k)\,\gamma^u_\varphi
               \prod_{j<k}\bigl(1-P(a_\varphi\mid u,i_j)\bigr)\Bigr),

    .. math::
        \mathrm{DCG}@k=\sum_{j=1}^{k}\frac{G[j]}{\log_2(1+j)},\qquad
        \alpha\beta\text{-nDCG}@k=\frac{\mathrm{DCG}@k}{\mathrm{DCG}^{*}@k}.

    :math:`\mathrm{DCG}^{*}` is the DCG of a greedily built ideal list (max
    current gain at each rank; ties as :func:`alpha_ndcg`'s ideal, by the label-free key
    :math:`\kappa` of :func:`_tie_keys` with :math:`H(\text{bits of } P(d))` added, the largest DCG
    over the choices when tied candidates still differ in categories or P).

    Decisions (the paper's values/choices were not available — see
    docs/axioms.md and the reference notes §2.2):

    * **Defaults α = 0.02, β = 0.2.**  The paper's values are unknown.  β is
      the largest round value inside the region where αβ-nDCG satisfies the
      eight axioms as ``tests/test_axioms.py`` states them (r_max = 5; table
      and analysis in docs/axioms.md), with margin to both boundaries:
      TopHeavComp for relevant items with identical aspects needs β < 0.2564
      (the single-aspect, r = r_max case: later items gain (1-β)^t of the
      first), and Pri within the top 10 needs β < 0.253 for items sharing four
      equally preferred aspects (0.23 for 18).  A top-rated item thus
      satisfies 20% of each of its aspects.  β = 0.5 (Clarke-like halving)
      violates both.  Outside the region: Pri fails deeper than rank 14 for
      multi-aspect items at any β > 0 (deeper as β shrinks), and TopHeavComp
      fails when the top item covers more aspects than the deep ones; smaller
      β makes saturation slower (NonPriSatAsp then needs longer lists: 139
      same-aspect items in the worst case).  α (unrated items) is "a small
      constant" kept well below the β·r/r_max = 0.04 of a rating-1 item:
      α = β/10.  α does not affect the axioms other than MissOverNon (which
      holds for any α > 0).  Note this α is *not* Clarke's α of
      :func:`alpha_ndcg`.
    * **γ from the truth ratings by default** (the same ratings the metric
      judges).  Pass ``gamma_offsets/gamma_items/gamma_ratings`` (e.g. train
      ratings) to estimate γ elsewhere, or ``gamma`` [U, C] directly.
    * **r_max** defaults to the maximum of ``truth_ratings`` over all users;
      pass it explicitly (5.0 for MovieLens) so results do not depend on the subset.
    * **Ideal candidates = the user's rated (truth) items only**, with
      P = β r/r_max.  Unrated items (P = α) are not candidates: every
      unrated catalogue item would be a candidate, making the normaliser
      depend on the catalogue and cost O(U·|I|); the metric rewards accuracy
      first.  Consequence: a run whose unrated items add α-gains the rated
      items cannot (typically users with < k rated items) can exceed 1.
      Values are not clipped.
    * ``zero_below``: ratings below it are treated as 0 ("rated non-relevant",
      P = 0, no contribution to γ).  Default None: every rating counts with
      β r/r_max, as transcribed.
    * A user with zero ideal DCG scores 0.0.

    Parameters
    ----------
    rating : float64 [U, K] truth rating of each listed item, NaN if unrated.
    return_parts : also return ``(dcg, idcg)``.

    Examples
    --------
    One user, aspects {0, 1}; items 0=(0), 1=(0), 2=(1); ratings 5, 5, 2.5, β = 0.5
    (r_max = 5) → γ = (10/12.5, 2.5/12.5) = (0.8, 0.2).  Run = [0, 1, 2]:
    G1 = 0.5·0.8 = 0.4, G2 = 0.5·0.8·0.5 = 0.2, G3 = 0.25·0.2 = 0.05.

    >>> import numpy as np
    >>> asp = np.array([[1, 0], [1, 0], [0, 1]], dtype=bool)
    >>> items = np.array([[0, 1, 2]]); rating = np.array([[5.0, 5.0, 2.5]])
    >>> v, dcg, idcg = alpha_beta_ndcg(items, rating, asp, [0, 3], [0, 1, 2],
    ...                                [5.0, 5.0, 2.5], beta=0.5, return_parts=True)
    >>> round(float(dcg[0]), 6)
    0.551186

    0.4 + 0.2/log2(3) + 0.05/2.  The greedy ideal here is the run itself.

    >>> float(v[0])
    1.0
    """
    rows = items if isinstance(items, ListRows) else None
    if rows is not None and (zero_below is not None or gamma is not None or gamma_offsets is not None):
        items, _, rating = rows.top(_rows_k(k))  # (the kernel reads rows only with γ from the truth)
        rows = None
    if rows is None:
        items, k = _check_lists(items, k)
        U = items.shape[0]
        rating = _pad_cols(np.asarray(rating, dtype=np.float64), k, np.nan)
    else:
        k = _rows_k(k)
        U = rows.starts.shape[0]
    indptr, indices, C = _aspects_csr(aspects)
    off = np.asarray(truth_offsets, dtype=np.int64)
    titems = np.asarray(truth_items, dtype=np.int64)
    trat = _zeroed(np.asarray(truth_ratings, dtype=np.float64), zero_below)
    t_lo, t_hi = (float(trat.min()), float(trat.max())) if trat.shape[0] else (0.0, 0.0)  # (NaN if any is)
    if r_max is None:
        r_max = t_hi if trat.shape[0] and t_hi > 0 else 1.0
    disc = ndeval_discount(k)

    def run_p(rating):
        """P(a|u,i) of the lists' slots ([U, k], NaN ratings: unrated)."""
        rating = _zeroed(rating, zero_below)
        unrated = np.isnan(rating)
        P = _p_rated(rating, beta, r_max)  # (NaN where unrated, then α there: one array, the same values)
        P[unrated] = alpha
        return P

    if rows is None:
        P = run_p(rating)
        unit = _unit(P)
    else:  # every P a row can read: α, and β r / r_max at the truth's extreme ratings (P is monotone in r)
        P = None
        unit = 0.0 <= alpha <= 1.0 and _rated_unit(rows.ratings, beta, r_max)
    ideg = np.diff(indptr)
    # ideal side: candidates = rated truth items with P > 0 and >= 1 aspect
    cp_all = _p_rated(trat, beta, r_max)
    m = cp_all > 0
    m &= (ideg > 0)[titems]

    got: list[tuple[_Gamma, np.ndarray | None]] = []

    def gammas() -> tuple[_Gamma, np.ndarray | None]:
        """γ on the (user, aspect) pairs the ratings touch (0 elsewhere), or as given; and as a
        dense [U, C + 1] table (flat; the last column 0) when it is dense (computed once)."""
        if not got:
            if gamma is None:
                if gamma_offsets is None:
                    t_off, t_user = _truth_users(off)
                    gam = _gamma_pairs(t_off, t_user, titems, trat, indptr, indices, C)
                else:
                    g_off, g_user = _truth_users(gamma_offsets)
                    if g_off.shape[0] - 1 != U:
                        raise ValueError("gamma must be [U, C]")
                    g_r = _zeroed(np.asarray(gamma_ratings, dtype=np.float64), zero_below)
                    gam = _gamma_pairs(g_off, g_user, np.asarray(gamma_items, dtype=np.int64), g_r, indptr, indices, C)
            else:
                gflat = np.ascontiguousarray(gamma, dtype=np.float64).reshape(-1)
                if gflat.shape[0] != U * C:
                    raise ValueError("gamma must be [U, C]")
                gam = _Gamma(C, dense=gflat)
            gtab = None
            if gam.dense is not None:
                gtab = np.zeros((U, C + 1), dtype=np.float64)
                gtab[:, :C] = gam.dense.reshape(U, C)
                gtab = gtab.reshape(-1)
            got.append((gam, gtab))
        return got[0]

    # the kernel (large inputs) computes γ from the truth and the run side in the same pass as
    # the ideal when γ comes from the truth and every rating is finite and >= 0 (γ then lies in
    # [0, 1]) and every P of the lists in [0, 1]
    dcg = None
    # (every rating finite and >= 0: its extremes are; P = β r / r_max is monotone in r, so the
    # candidates' P lie in [0, 1] when the extremes' do)
    finite = trat.shape[0] == 0 or (math.isfinite(t_lo) and math.isfinite(t_hi) and t_lo >= 0.0)
    if (gamma is None and gamma_offsets is None and _jit_enabled(int(np.count_nonzero(m))) and finite and unit):
        problem = _Greedy(indptr, indices, C, U, k, alpha, None)
        idcg, dcg = _ideal(off, m, titems, cp_all, problem, side=(items, P, None, off, titems, trat, rows,
                                                                  (alpha, beta, r_max)), numpy_gamma=gammas,
                           cp_unit=_rated_unit(np.array([t_lo, t_hi]), beta, r_max))
    if dcg is None:
        if rows is not None:
            items, _, rating = rows.top(k)
            P = run_p(rating)
        gam, gtab = gammas()
        dcg = _ab_run_dcg(items, P, gam, gtab, indptr, indices, C, k, disc)
        problem = _Greedy(indptr, indices, C, U, k, alpha, gam)
        idcg = _ideal(off, m, titems, cp_all, problem, gext=gtab)
    val = _divide(dcg, idcg)
    if return_parts:
        return val, dcg, idcg
    return val


def _ab_run_dcg(items, P, gam, gtab, indptr, indices, C, k, disc):
    """The run's αβ-DCG of every user (the numpy path): P(a|u,i) per slot; a loop over ranks,
    per slot the factors 1 - P gamma_a state_a multiplied in ascending order of their values
    (padding: P gamma = 0)."""
    U = items.shape[0]
    dcg = np.zeros(U, dtype=np.float64)
    ideg = np.diff(indptr)
    if gtab is not None and _unit(P) and bool(np.isfinite(gtab).all()):
        D = int(ideg[items[items >= 0]].max()) if (items >= 0).any() else 0
        if D > 0:
            dcg = _run_dcg_blocks(items, P, gtab, _aspect_table(indptr, indices, D, C), C + 1, k, disc)
        valid = None
    else:
        valid = (P > 0) & (items >= 0)
    D = int(ideg[items[valid]].max()) if valid is not None and valid.any() else 0
    if D > 0:
        # state and gamma per (user, aspect) pair the valid slots touch, numbered; aspect C
        # is a dummy per user with gamma 0 that padded aspects read (keys are distinct within
        # a rank); slots in rank-major order
        tab = _aspect_table(indptr, indices, D, C)

        def keys() -> np.ndarray:  # every (user, aspect) pair of a valid slot, u * (C + 1) + aspect
            u_of, j_of = np.nonzero(valid)
            it = items[u_of, j_of]
            return np.concatenate([u_of * (C + 1) + tab[t].take(it) for t in range(D)])

        slots = _Pairs(U, C + 1, D * int(np.count_nonzero(valid)), keys, aspect_major=True)
        gext = slots.gamma(gam)
        state = slots.ones()
        itT = np.ascontiguousarray(items.T)
        PT = np.ascontiguousarray(P.T)
        vT = np.ascontiguousarray(valid.T)
        all_u = np.arange(U, dtype=np.int64)
        code = slots.coder(tab)
        for j in range(k):
            if vT[j].all():
                u, itj, Pj = all_u, itT[j], PT[j]
            else:
                u = np.flatnonzero(vT[j])
                if u.shape[0] == 0:
                    continue
                itj, Pj = itT[j].take(u), PT[j].take(u)
            om = 1.0 - Pj
            F = np.empty((D, u.shape[0]), dtype=np.float64)
            for t in range(D):
                _ab_factor(state, gext, code(t, u, itj), Pj, om, F[t])
            dcg[u] += (1.0 - _fold_sorted(F, False)) * disc[j]  # the factors in ascending order
    return dcg


def _rows_k(k) -> int:
    """The cut-off of lists given as rows (:class:`ListRows`: no width of their own to default to)."""
    if k is None or int(k) < 1:
        raise ValueError("lists given as rows need a cut-off k >= 1")
    return int(k)


def _rated_unit(r: np.ndarray, beta: float, r_max: float) -> bool:
    """Every P of a rated item, β r / r_max over the ratings ``r``, in [0, 1]: read at the
    extremes of ``r`` (P is monotone in r, rounding included), for r_max > 0."""
    ends = np.array([r.min(), r.max()] if r.shape[0] else [], dtype=np.float64)
    return bool(r_max > 0) and _unit(_p_rated(ends, beta, r_max))


def _unit(P: np.ndarray) -> bool:
    """Every P(a|u,i) in [0, 1] (then every state of the run lies in [0, 1])."""
    return P.size == 0 or bool(float(P.min()) >= 0.0 and float(P.max()) <= 1.0)


#: state slots (users x (categories + 1)) of one block of :func:`_run_dcg_blocks`
_RUN_SLOTS = 1 << 17


def _ab_factor(state: np.ndarray, gam: np.ndarray, kk: np.ndarray, Pj: np.ndarray, om: np.ndarray, out: np.ndarray) -> None:
    """One aspect of a rank step of the run's αβ-DCG, in place: ``out`` the factors
    ``1 - (P γ) s`` of the (user, aspect) slots ``kk`` (``γ`` read from ``gam``, ``s`` from
    ``state``), then ``state`` at ``kk`` times ``om`` (``1 - P``) (the slots of one rank are
    distinct). The one sequence of operations both run kernels use, so they agree bit for bit."""
    st = state.take(kk)
    gam.take(kk, out=out)
    out *= Pj
    out *= st
    np.subtract(1.0, out, out=out)  # 1 - (P gamma) state
    st *= om
    state[kk] = st


def _run_dcg_blocks(items, P, gext, tab, C1, k, disc):
    """The run's αβ-DCG when every P lies in [0, 1] and γ is a finite dense table ``gext``
    (``[U, C1]`` flat, last column 0): the same factors ``1 - (P γ) s`` in ascending aspect
    order, the same state products and the same sums as the rank loop of
    :func:`alpha_beta_ndcg`, bit for bit, by blocks of users whose state stays in cache.

    Every slot takes part: a slot the loop skips (P = 0, or no item) has P γ = 0 for every
    aspect (its item's, or the padding column's γ = 0), so every factor is exactly 1, its gain
    ``1 - 1`` is +0.0 and adds nothing (a sum from +0.0 of such terms is never -0.0), and its
    state multiplier ``1 - P`` is 1, or (no item) it multiplies the padding column's state only,
    which is never read but as ``0 * s`` (s in [0, 1])."""
    U = items.shape[0]
    D = tab.shape[0]
    dcg = np.zeros(U, dtype=np.float64)
    itT = np.ascontiguousarray(items.T)
    PT = np.ascontiguousarray(P.T)
    step = max(1, _RUN_SLOTS // C1)
    for u0 in range(0, U, step):
        u1 = min(U, u0 + step)
        base = np.arange(u1 - u0, dtype=np.int64) * C1
        gam = gext[u0 * C1:u1 * C1]
        state = np.ones((u1 - u0) * C1, dtype=np.float64)
        acc = np.zeros(u1 - u0, dtype=np.float64)
        for j in range(k):
            itj, Pj = itT[j, u0:u1], PT[j, u0:u1]
            om = np.subtract(1.0, Pj)
            F = np.empty((D, u1 - u0), dtype=np.float64)
            for t in range(D):
                kk = tab[t].take(itj)
                kk += base
                _ab_factor(state, gam, kk, Pj, om, F[t])
            prod = _fold_sorted(F, False)  # the factors in ascending order
            np.subtract(1.0, prod, out=prod)
            prod *= disc[j]
            acc += prod
        dcg[u0:u1] = acc
    return dcg


# ---------------------------------------------------------------------------
# ties=average: the expected α-DCG over the orderings of the tie groups
# ---------------------------------------------------------------------------
def expected_alpha_dcg(user, lo, n, items, aspects, n_users: int, ks, *, alpha: float = 0.5) -> np.ndarray:
    r"""``[U, len(ks)]`` E[α-DCG@k] over the orderings of the tie groups.

    Input: one entry per *relevant* listed item: its user, the first position ``lo`` and size
    ``n`` of its tie group (every item of the group, relevant or not), its item code.

    For an aspect *c*, a group with :math:`K_c` relevant items covering *c* and :math:`F_c`
    such items in the user's earlier groups, an item of the group at slot *t* (probability
    1/n) follows a uniform *t*-subset of the group's other n − 1 items, of which
    :math:`Y \sim \mathrm{Hypergeometric}(n-1, K_c-1, t)` cover *c*; so, with q = 1 − α,

    .. math:: E[\alpha\text{-DCG}@k] = \sum_{g, c} K_c\, q^{F_c} \frac{1}{n}
              \sum_{t=0}^{m-1} \frac{\log 2}{\log(lo+t+1)}
              \sum_{y} \frac{\binom{K_c-1}{y}\binom{n-K_c}{t-y}}{\binom{n-1}{t}} q^{y}

    with *m* the group's slots inside the top *k*. Untied items (n = 1) give
    :math:`q^{F_c} / \log_2(1 + pos)`, the plain α-DCG term.

    >>> import numpy as np, scipy.sparse as sp
    >>> asp = sp.csr_matrix(np.array([[1], [1]]))   # items 0 and 1 share aspect 0
    >>> # both relevant and tied at positions 1-2: one of them gains 1 at 1, the other q = 0.5 at 2
    >>> round(float(expected_alpha_dcg(np.array([0, 0]), np.array([1, 1]), np.array([2, 2]),
    ...                                np.array([0, 1]), asp, 1, [2])[0, 0]), 6)  # 1 + 0.5/log2 3
    1.315465
    """
    indptr, indices, _ = _aspects_csr(aspects)
    user, lo, n = (np.asarray(a, dtype=np.int64) for a in (user, lo, n))
    rep, asp, _ = _expand(np.asarray(items, dtype=np.int64), indptr, indices)
    u, g_lo, g_n = user[rep], lo[rep], n[rep]
    # (user, aspect, group) runs: K = items per run, F = items in the same (user, aspect) before it
    order = np.lexsort((g_lo, asp, u))
    u, asp, g_lo, g_n = u[order], asp[order], g_lo[order], g_n[order]
    new_run = np.r_[True, (u[1:] != u[:-1]) | (asp[1:] != asp[:-1]) | (g_lo[1:] != g_lo[:-1])] if len(u) else np.zeros(0, dtype=bool)
    new_ua = np.r_[True, (u[1:] != u[:-1]) | (asp[1:] != asp[:-1])] if len(u) else np.zeros(0, dtype=bool)
    starts = np.flatnonzero(new_run)
    K = np.diff(np.r_[starts, len(u)])
    idx = np.arange(len(u))
    ua_start = np.maximum.accumulate(np.where(new_ua, idx, 0)) if len(u) else idx
    F = (starts - ua_start[starts]).astype(np.float64)
    ru, rlo, rn = u[starts], g_lo[starts], g_n[starts]
    q = 1.0 - float(alpha)
    out = np.empty((n_users, len(ks)), dtype=np.float64)
    for j, k in enumerate(ks):  # a loop over cut-offs, not users
        m = np.clip(int(k) - rlo + 1, 0, rn)
        r2, tt, y, p = slot_draws(rn, K - 1, m)  # y of the run's other K − 1 items above slot t
        nn, kk = rn[r2], K[r2]
        disc = math.log(2.0) / np.log((rlo[r2] + tt + 1).astype(np.float64))
        w = kk * q ** (F[r2] + y) / nn * p * disc
        out[:, j] = np.bincount(ru[r2], weights=w, minlength=n_users)
    return out
