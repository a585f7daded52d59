r"""IR measures users bring from trec_eval, ranx, LensKit and Cornac: R-precision, Bpref, RBP, ERR, NCRR.

Notation as in :mod:`receval.metrics.ranking`: :math:`R` the relevant truth items of a user,
:math:`rel_i \in \{0, 1\}` whether position *i* is a hit, :math:`H_k` the hits in the top
*k*, :math:`\ell_k` the length of the top-k list. Metrics whose cut-off is optional
(``bpref``, ``rbp``, ``err``, ``ncrr``) read the whole list when no ``@k`` is written.

Worked example shared by the doctests (:func:`receval.examples.worked`): user 1 is recommended
items 10, 20, 30, 40 and likes 20 (rating 5), 40 (rating 4) and 50 (rating 3), so |R| = 3
and the hits sit at positions 2 and 4.

``rprecision``, ``rbp`` and ``ncrr`` are sums of per-position weights over the hits, so their
tie-averaged value (``ties=average``, McSherry & Najork 2008) replaces a hit's weight by the
mean weight over the positions of its tie group (those inside the cut-off): a hit whose group
spans positions lo..hi contributes :math:`\frac{1}{hi - lo + 1}\sum_{i=lo}^{\min(hi, k)} w_i`.
``bpref`` and ``err`` are not linear in the hits and refuse ``ties=average``.
"""

from __future__ import annotations

import numpy as np

from ..errors import DataError, SpecError
from ..hits import Hits
from ..options import Axis
from ..registry import register
from ._common import safe_div
from ._ties import lncomb, ragged, slot_draws, tie_groups


def _cut(k: int) -> float:
    """The cut-off as a bound on positions (0 = no cut-off: the whole list)."""
    return np.inf if k == 0 else k


def _sum_hits(h: Hits, ks: list[int], weights: np.ndarray) -> np.ndarray:
    """``[U, len(ks)]``: Σ weights over the hits at positions <= k, in (user, position) order."""
    out = np.empty((h.n_users, len(ks)), dtype=np.float64)
    for j, k in enumerate(ks):  # a loop over cut-offs, not users
        keep = h.hit_pos <= _cut(k)
        out[:, j] = np.bincount(h.hit_user[keep], weights=weights[keep], minlength=h.n_users)
    return out


def _expected_sum(h: Hits, ks: list[int], gain: np.ndarray, prefix) -> np.ndarray:
    """``[U, len(ks)]`` with ``ties=average``: Σ over hits of gain × the mean of w_i over the
    positions lo..min(hi, k) of the hit's tie group (÷ its size); ``prefix(n)`` = Σ_{i≤n} w_i."""
    lo, hi = h.hit_lo.astype(np.float64), h.hit_hi.astype(np.float64)
    size = hi - lo + 1
    out = np.empty((h.n_users, len(ks)), dtype=np.float64)
    for j, k in enumerate(ks):  # a loop over cut-offs, not users
        top = np.minimum(hi, _cut(k))
        inside = top >= lo
        w = np.where(inside, prefix(np.where(inside, top, lo)) - prefix(lo - 1), 0.0) / size
        out[:, j] = np.bincount(h.hit_user, weights=gain * w, minlength=h.n_users)
    return out


def _harmonic(n: np.ndarray) -> np.ndarray:
    """H_n = Σ_{i≤n} 1/i for integer-valued n >= 0 (digamma: ψ(n + 1) + γ)."""
    from scipy.special import digamma

    return digamma(np.asarray(n, dtype=np.float64) + 1.0) + np.euler_gamma


# ---- R-precision ---------------------------------------------------------------------------


RPREC_R = Axis(
    "r", "r", "truth", "R, the cut-off and denominator of R-precision",
    {
        "truth": "|R|, the user's relevant truth items (trec_eval Rprec, ranx)",
        "listed": "|R ∩ L|, the relevant items present in the list (torchmetrics RetrievalRPrecision sees only the scored items)",
    },
)


@register("rprecision", axes=[RPREC_R], needs_k=False, family="classification", ties="closed", bounds=(0.0, 1.0))
def rprecision(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""R-precision: precision at the user's own number of relevant items (trec_eval Rprec, ranx r-precision).

    Formula
    -------
    .. math:: \mathrm{RPrec} = \frac{H_{|R|}}{|R|}

    the hits among the first :math:`|R|` recommendations over :math:`|R|` (0 when |R| = 0);
    a list shorter than |R| is not padded. It equals recall@|R| and precision@|R|. With
    ``r=listed`` (torchmetrics) :math:`|R|` is replaced by :math:`|R \cap L|`, the relevant
    items present in the list.

    Examples
    --------
    >>> from receval.examples import worked
    >>> worked("rprecision")          # one hit (position 2) in the first |R| = 3 positions, / 3
    0.333333
    >>> worked("rprecision(r=listed)")   # 2 relevant items listed: 1 hit in the first 2, / 2
    0.5

    With ``ties=average`` a hit in a tie group spanning lo..hi counts
    :math:`|[lo, hi] \cap [1, |R|]| / (hi - lo + 1)`.

    >>> from receval.examples import tied
    >>> tied("rprecision(ties=average)")   # 20 tied with 30 at 2-3: both inside |R| = 3
    0.333333
    """
    n_r = h.n_rel if o["r"] == "truth" else np.bincount(h.listed()[0], minlength=h.n_users)
    if h.hit_lo is not None and h.hit_hi is not None:
        r = n_r[h.hit_user]
        inside = np.clip(np.minimum(h.hit_hi, r) - h.hit_lo + 1, 0, None) / (h.hit_hi - h.hit_lo + 1.0)
    else:
        inside = (h.hit_pos <= n_r[h.hit_user]).astype(np.float64)
    hr = np.bincount(h.hit_user, weights=inside, minlength=h.n_users)
    return np.repeat(safe_div(hr, n_r)[:, None], len(ks), axis=1)


# ---- Bpref ---------------------------------------------------------------------------------


@register("bpref", needs_k=False, optional_k=True, needs={"rows"}, family="ranking", ties="closed", bounds=(0.0, 1.0))
def bpref(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""Bpref: binary preference (Buckley & Voorhees, SIGIR 2004), as trec_eval computes it.

    Formula
    -------
    .. math::

        \mathrm{bpref} = \frac{1}{|R|} \sum_{r \in R \cap L_k}
            \Bigl(1 - \frac{\min(n_r, |R|)}{\min(|R|, N)}\Bigr), \qquad
        \text{the term is } 1 \text{ when } n_r = 0

    :math:`N` the judged non-relevant items of the user (truth rows below the ``rel``
    threshold), :math:`n_r` the judged non-relevant items ranked above the relevant item *r*
    (strictly smaller position). Unjudged recommended items (not in the truth) are ignored.
    Without ``@k`` the whole list is read; 0 when |R| = 0. ranx 0.3.21 divides by
    :math:`\min(|R|, N)` even when N = 0 (giving NaN); trec_eval and receval score such a
    term 1.

    With ``ties=average`` each relevant item's term is its expectation over its slot *t* in its
    tie group (probability 1/n each, *t < m* for the *m* slots inside the cut-off) and over
    the judged non-relevant items placed before it: :math:`n_r = N_b + y` with :math:`N_b`
    those in the groups above and :math:`y \sim \mathrm{Hypergeometric}(n-1, b, t)`, *b*
    the judged non-relevant items of the group.

    Examples
    --------
    >>> from receval.examples import worked
    >>> worked("bpref", rel=4)   # R = {20, 40}, both listed; 50 (rating 3) is judged non-relevant, not listed
    1.0
    >>> worked("bpref")          # every truth row is relevant: N = 0, each hit counts 1: 2 / 3
    0.666667
    >>> recs = {"user_id": [1, 1, 1], "item_id": [50, 20, 40], "score": [3.0, 2.0, 1.0]}
    >>> worked("bpref", recs=recs, rel=4)   # 50 (non-relevant) above both hits: (2·(1 − 1/1)) / 2
    0.0
    >>> recs = {"user_id": [1, 1, 1], "item_id": [20, 50, 40], "score": [3.0, 2.0, 1.0]}
    >>> worked("bpref", recs=recs, rel=4)   # 20 counts 1, 40 has 50 above: (1 + (1 − 1/1)) / 2
    0.5
    >>> recs = {"user_id": [1, 1, 1], "item_id": [20, 50, 40], "score": [2.0, 2.0, 1.0]}
    >>> worked("bpref(ties=average)", recs=recs, rel=4)   # 20 above or below 50: ((1 + 0)/2 + 0) / 2
    0.25
    """
    if h.row_lo is not None:
        return _expected_bpref(h, ks)
    order = np.lexsort((h.row_pos, h.row_user))
    ru, rp, rt = h.row_user[order], h.row_pos[order], h.row_truth[order]
    judged = rt >= 0
    relevant = judged & h.truth_rel[np.maximum(rt, 0)]
    nonrel = judged & ~relevant
    n_nonrel = (h.n_truth - h.n_rel).astype(np.float64)
    R = h.n_rel.astype(np.float64)
    out = np.empty((h.n_users, len(ks)), dtype=np.float64)
    for j, k in enumerate(ks):  # a loop over cut-offs, not users
        keep = rp <= _cut(k)
        u, p, rl, nr = ru[keep], rp[keep], relevant[keep], nonrel[keep]
        # non-relevant items at strictly smaller positions of the same user: a cumulative count
        # by position (positions can repeat with ties=optimistic)
        width = int(p.max()) + 2 if len(p) else 1
        key = u * width + p
        nr_key = np.sort(key[nr])
        above = np.searchsorted(nr_key, key, side="left") - np.searchsorted(nr_key, u * width, side="left")
        Ru, Nu = R[u], n_nonrel[u]
        den = np.minimum(Ru, Nu)
        term = np.where(above > 0, 1.0 - safe_div(np.minimum(above, Ru), den), 1.0)
        out[:, j] = safe_div(np.bincount(u[rl], weights=term[rl], minlength=h.n_users), R)
    return out


def _expected_bpref(h: Hits, ks: list[int]) -> np.ndarray:
    """``[U, len(ks)]`` E[bpref] over the orderings of the tie groups (``ties=average``): for a
    group at lo..lo+n−1 with r relevant and b judged non-relevant items, N_b judged non-relevant
    items in the groups above, each relevant item at slot t < m (m slots inside the cut-off)
    sees N_b + y of them above, y ~ Hypergeometric(n − 1, b, t)."""
    judged = h.row_truth >= 0
    nonrel = judged & ~h.truth_rel[np.maximum(h.row_truth, 0)]
    R = h.n_rel.astype(np.float64)
    den = np.minimum(R, (h.n_truth - h.n_rel).astype(np.float64))
    width = int(h.row_hi.max()) + 2 if len(h.row_hi) else 1
    nr_key = np.sort(h.row_user[nonrel].astype(np.int64) * width + h.row_lo[nonrel])
    gu, lo, n_row, r = tie_groups(h)  # the groups holding relevant items (the hits)
    gkey = gu.astype(np.int64) * width + lo
    b = np.searchsorted(nr_key, gkey, side="right") - np.searchsorted(nr_key, gkey, side="left")
    nb = np.searchsorted(nr_key, gkey, side="left") - np.searchsorted(nr_key, gu * width, side="left")
    out = np.empty((h.n_users, len(ks)), dtype=np.float64)
    for j, k in enumerate(ks):  # a loop over cut-offs, not users
        m = n_row if k == 0 else np.clip(k - lo + 1, 0, n_row)
        rep2, _, y, p = slot_draws(n_row, b, m)  # y of the group's b judged non-relevant items above slot t
        nn = n_row[rep2]
        above = (nb[rep2] + y).astype(np.float64)
        u = gu[rep2]
        term = np.where(above > 0, 1.0 - safe_div(np.minimum(above, R[u]), den[u]), 1.0)
        out[:, j] = safe_div(np.bincount(u, weights=r[rep2] / nn * p * term, minlength=h.n_users), R)
    return out


# ---- RBP -----------------------------------------------------------------------------------

RBP_P = Axis("persistence", "p", 0.8, "p: the probability that the user goes on to the next position (Moffat & Zobel 2008: 0.5, 0.8, 0.95; LensKit: 0.85)", numeric=True)
RBP_NORM = Axis(
    "normalize", "norm", "no", "what the rank-biased sum is compared with",
    {
        "no": "(1 − p) Σ rel_i p^(i−1): an infinite perfect list scores 1 (Moffat & Zobel, ranx, LensKit's default)",
        "listed": "Σ rel_i p^(i−1) / Σ_{i ≤ min(|R|, ℓ_k)} p^(i−1): the best achievable with this list length (LensKit normalize=True)",
        "cut": "Σ rel_i p^(i−1) / Σ_{i ≤ min(|R|, k)} p^(i−1): the best achievable in k positions (|R| terms without a cut-off)",
    },
)
RBP_GAIN = Axis(
    "gain", "gain", "binary", "what a hit at position i contributes",
    {"binary": "1 (the standard)", "rating": "its truth rating, unscaled (ranx with graded qrels)"},
)


def _rbp_check(o: dict, *_: object) -> None:
    if not 0 < o["persistence"] < 1:
        raise SpecError(f"rbp: persistence must lie strictly between 0 and 1, got {o['persistence']}")
    if o["gain"] == "rating" and o["normalize"] != "no":
        raise SpecError("rbp: normalize=listed/cut is defined for gain=binary only; drop one of the two")


@register("rbp", axes=[RBP_P, RBP_NORM, RBP_GAIN], needs_k=False, optional_k=True, family="ranking", check_hook=_rbp_check, ties="closed", bounds=(0.0, 1.0))
def rbp(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""RBP: rank-biased precision (Moffat & Zobel, TOIS 2008) with persistence *p*.

    Formula
    -------
    .. math::

        \mathrm{RBP} = (1 - p) \sum_{i \le k} g_i\, p^{i-1}, \qquad
        \mathrm{RBP}_{norm} = \frac{\sum_{i \le k} rel_i\, p^{i-1}}{\sum_{i=1}^{m} p^{i-1}},\quad
        m = \min(|R|, \ell_k) \;|\; \min(|R|, k)

    :math:`g_i = rel_i` (``gain=binary``) or the truth rating of a hit (``gain=rating``);
    ``normalize=listed`` (LensKit ``normalize=True``) uses :math:`m = \min(|R|, \ell_k)`,
    ``normalize=cut`` :math:`m = \min(|R|, k)`. Without ``@k`` the whole list is read.

    Examples
    --------
    >>> from receval.examples import worked
    >>> worked("rbp(persistence=0.5)@4")                   # (1 − 0.5)(0.5 + 0.125)
    0.3125
    >>> worked("rbp(persistence=0.5,normalize=cut)@4")     # (0.5 + 0.125) / (1 + 0.5 + 0.25)
    0.357143
    >>> worked("rbp(persistence=0.5,gain=rating)@4")       # 0.5·(5·0.5 + 4·0.125)
    1.5

    With ``ties=average`` a hit's :math:`p^{i-1}` is averaged over the positions of its tie group.

    >>> from receval.examples import tied
    >>> tied("rbp(persistence=0.5,ties=average)@4")        # 0.5·((0.5 + 0.25)/2 + 0.125)
    0.25
    """
    p = float(o["persistence"])
    g = h.hit_rating if o["gain"] == "rating" else np.ones(len(h.hit_pos))
    if h.hit_lo is not None:  # ties=average: Σ_{i≤n} p^(i−1) = (1 − p^n) / (1 − p)
        s = _expected_sum(h, ks, g, lambda n: (1.0 - p**n) / (1.0 - p))
    else:
        s = _sum_hits(h, ks, g * p ** (h.hit_pos.astype(np.float64) - 1.0))
    if o["normalize"] == "no":
        return (1.0 - p) * s
    R = h.n_rel.astype(np.float64)[:, None]
    k = np.array([_cut(k) for k in ks], dtype=np.float64)[None, :]
    m = np.minimum(R, k) if o["normalize"] == "cut" else np.minimum(R, np.minimum(h.length.astype(np.float64)[:, None], k))
    ideal = (1.0 - p**m) / (1.0 - p)  # Σ_{i=1}^{m} p^(i−1)
    return safe_div(s, ideal)


# ---- ERR -----------------------------------------------------------------------------------

ERR_GRADE = Axis(
    "grade", "grade", "binary", "the grade g of a hit",
    {"binary": "g = 1 with g_max = 1: every hit stops the user with probability 1/2", "rating": "g = its truth rating, with `gmax` the top grade"},
)
ERR_GMAX = Axis("gmax", "gmax", None, "g_max, the top grade of grade=rating (e.g. 5 for 1-5 stars); required with grade=rating", numeric=True)


def _err_check(o: dict, *_: object) -> None:
    if o["grade"] == "rating" and o["gmax"] is None:
        raise SpecError("err(grade=rating) needs the top grade: write err(grade=rating,gmax=5)")
    if o["grade"] == "binary" and o["gmax"] is not None:
        raise SpecError("err: gmax applies to grade=rating only; drop gmax or add grade=rating")


@register("err", axes=[ERR_GRADE, ERR_GMAX], needs_k=False, optional_k=True, family="ranking", check_hook=_err_check, ties="closed", bounds=(0.0, 1.0))
def err(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""ERR: expected reciprocal rank (Chapelle et al., CIKM 2009), the cascade model.

    Formula
    -------
    .. math::

        \mathrm{ERR}@k = \sum_{r \le k} \frac{1}{r}\, \mathcal{R}_r \prod_{i < r} (1 - \mathcal{R}_i),
        \qquad \mathcal{R}_i = \frac{2^{g_i} - 1}{2^{g_{max}}}

    :math:`\mathcal{R}_i = 0` at a non-relevant position. ``grade=binary``: :math:`g = 1`,
    :math:`g_{max} = 1`, so every hit has :math:`\mathcal{R} = 1/2`; ``grade=rating``: *g* is
    the hit's truth rating and ``gmax`` must be given (a hit graded outside [0, g_max] is an
    error). Without ``@k`` the whole list is read.

    With ``ties=average`` the value is its expectation over the orderings of each tie group.
    A group at positions *lo..lo+n−1* holds *r* relevant items with
    :math:`x_j = 1 - \mathcal{R}_j`, :math:`P_b` is the product of *x* over the user's earlier
    groups, :math:`e_s` are the elementary symmetric polynomials of the group's *x*, and *m*
    of its slots lie inside the top *k*:

    .. math::

        E_g = \frac{P_b}{n} \sum_{s=0}^{r-1} \big((r-s)\,e_s - (s+1)\,e_{s+1}\big)
              \sum_{t=s}^{m-1} \frac{\binom{n-r}{t-s}}{\binom{n-1}{t}\,(lo+t)}

    (an item at slot *t* follows a uniform *t*-subset of the group's other items).

    Examples
    --------
    >>> from receval.examples import worked
    >>> worked("err@4")                       # 1/2 · 1/2 + 1/4 · 1/2 · (1 − 1/2)
    0.3125
    >>> worked("err(grade=rating,gmax=5)@4")  # 1/2 · 31/32 + 1/4 · 15/32 · 1/32
    0.488037

    >>> from receval.examples import tied     # 20 (relevant) ties with 30 at 2-3; 40 at 4
    >>> tied("err(ties=average)@4")           # (1/2 · 1/2 + 1/3 · 1/2) / 2 + 1/4 · 1/2 · 1/2
    0.270833
    """
    if o["grade"] == "binary":
        stop = np.full(len(h.hit_pos), 0.5)
    else:
        gmax = float(o["gmax"])
        g = h.hit_rating
        if len(g) and (g.min() < 0 or g.max() > gmax):
            bad = g[(g < 0) | (g > gmax)][0]
            raise DataError(f"err: a hit has grade {bad:g} outside [0, gmax={gmax:g}]; pass a larger gmax or rescale the ratings")
        stop = (np.exp2(g) - 1.0) / np.exp2(gmax)
    if h.hit_lo is not None:
        return _expected_err(h, ks, stop)
    # the probability of reaching each hit: the product of (1 − R) over the user's earlier hits,
    # multiplied in position order (a loop over hit ranks, not users)
    hu = h.hit_user
    idx = np.arange(len(hu))
    first = np.r_[True, hu[1:] != hu[:-1]] if len(hu) else np.zeros(0, dtype=bool)
    start = np.maximum.accumulate(np.where(first, idx, 0)) if len(hu) else idx
    rank = idx - start  # 0-based rank among the user's hits
    reach = _running_product(1.0 - stop, rank)
    return _sum_hits(h, ks, reach * stop / h.hit_pos.astype(np.float64))


def _running_product(factor: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """Exclusive running product within runs: ``out[i] = Π factor[j]`` over the earlier entries
    j of i's run (``rank`` = 0, 1, 2, … along each run), multiplied in order, one rank at a
    time (a loop over ranks, each entry touched once; no Python loop over users)."""
    out = np.ones(len(factor))
    if len(rank) == 0:
        return out
    order = np.argsort(rank, kind="stable")
    bounds = np.searchsorted(rank[order], np.arange(int(rank.max()) + 2))
    for j in range(1, int(rank.max()) + 1):
        at = order[bounds[j]:bounds[j + 1]]
        out[at] = out[at - 1] * factor[at - 1]
    return out


def _expected_err(h: Hits, ks: list[int], stop: np.ndarray) -> np.ndarray:
    r"""``[U, len(ks)]`` E[ERR@k] over the orderings of the tie groups (``ties=average``).

    A group at positions lo..lo+n−1 holds r relevant items with :math:`x_j = 1 - \mathcal{R}_j`;
    :math:`P_b` is the product of x over the user's earlier groups. Item d at slot t (each with
    probability 1/n) follows a uniform t-subset of the group's other items, so
    :math:`E[\prod x] = \sum_s e_s(x_{-d})\binom{n-r}{t-s}/\binom{n-1}{t}` (e_s the elementary
    symmetric polynomials), and summing :math:`\mathcal{R}_d = 1 - x_d` over d with
    :math:`\sum_d e_s(x_{-d}) = (r-s)e_s`, :math:`\sum_d x_d e_s(x_{-d}) = (s+1)e_{s+1}`:

    .. math:: E_g = \frac{P_b}{n}\sum_{s=0}^{r-1}\big[(r-s)e_s - (s+1)e_{s+1}\big]
              \sum_{t=s}^{m-1}\frac{\binom{n-r}{t-s}}{\binom{n-1}{t}\,(lo+t)}

    with m the group's slots inside the top k.
    """
    gu, lo, n, r = tie_groups(h)
    G = len(gu)
    x = 1.0 - stop
    gstart = np.cumsum(r) - r  # groups are contiguous runs of the (user, position)-sorted hits
    # e_0..e_r of each group, ragged (group g owns r_g + 1 slots from eoff[g]); Σ_g r_g² / 2 work
    eoff = np.cumsum(r + 1) - (r + 1)
    e = np.zeros(int((r + 1).sum()))
    e[eoff] = 1.0
    for j in range(int(r.max()) if G else 0):  # a loop over members of a group, not users
        act = np.flatnonzero(r > j)
        at = np.repeat(eoff[act], j + 1) + np.tile(np.arange(j + 1, 0, -1), len(act))
        e[at] = e[at] + np.repeat(x[gstart[act] + j], j + 1) * e[at - 1]
    # P_b: the product of x over the user's earlier groups, multiplied in group order (a loop
    # over a group's rank within its user, not over users: each user's product is the same
    # whatever other users are evaluated with it)
    whole = e[eoff + r]  # e_r = Π x over the group
    first = np.r_[True, gu[1:] != gu[:-1]] if G else np.zeros(0, dtype=bool)
    start = np.maximum.accumulate(np.where(first, np.arange(G), 0)) if G else np.zeros(0, dtype=np.int64)
    pb = _running_product(whole, np.arange(G) - start)
    # per (group, s): c_s = (r − s)e_s − (s + 1)e_{s+1}
    gs, s = ragged(r)
    c = (r[gs] - s) * e[eoff[gs] + s] - (s + 1) * e[eoff[gs] + s + 1]
    out = np.empty((h.n_users, len(ks)), dtype=np.float64)
    for jk, k in enumerate(ks):  # a loop over cut-offs, not users
        m = n if k == 0 else np.clip(k - lo + 1, 0, n)
        # (group, s, t) for t = s .. min(m − 1, s + n − r)
        cnt = np.maximum(0, np.minimum(m[gs] - 1, s + n[gs] - r[gs]) - s + 1)
        rep, off = ragged(cnt)
        t = s[rep] + off
        g = gs[rep]
        w = np.exp(lncomb(n[g] - r[g], t - s[rep]) - lncomb(n[g] - 1, t)) / (lo[g] + t)
        ws = np.bincount(rep, weights=w, minlength=len(gs))
        per_group = np.bincount(gs, weights=c * ws, minlength=G) * pb / n
        out[:, jk] = np.bincount(gu, weights=per_group, minlength=h.n_users)
    return out


# ---- NCRR ----------------------------------------------------------------------------------


@register("ncrr", needs_k=False, optional_k=True, family="ranking", ties="closed", bounds=(0.0, 1.0))
def ncrr(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""NCRR: normalised cumulative reciprocal rank (Cornac NCRR): Σ 1/i over the hits, over its ideal.

    Formula
    -------
    .. math:: \mathrm{NCRR}@k = \frac{\sum_{i \le k} rel_i / i}{\sum_{j=1}^{\min(k, |R|)} 1/j}

    0 when |R| = 0. Without ``@k`` the whole list is read and the ideal has :math:`\min(\ell, |R|)`
    terms (Cornac ranks every item, so its truncated list has k items).

    Examples
    --------
    >>> from receval.examples import worked
    >>> worked("ncrr@4")      # (1/2 + 1/4) / (1 + 1/2 + 1/3)
    0.409091

    With ``ties=average`` a hit's :math:`1/i` is averaged over the positions of its tie group.

    >>> from receval.examples import tied
    >>> tied("ncrr(ties=average)@4")   # ((1/2 + 1/3)/2 + 1/4) / (1 + 1/2 + 1/3)
    0.363636
    """
    if h.hit_lo is not None:
        s = _expected_sum(h, ks, np.ones(len(h.hit_pos)), _harmonic)
    else:
        s = _sum_hits(h, ks, 1.0 / h.hit_pos.astype(np.float64))
    R = h.n_rel.astype(np.float64)[:, None]
    out = np.empty_like(s)
    for j, k in enumerate(ks):
        m = np.minimum(R[:, 0], k if k else h.length.astype(np.float64)).astype(np.int64)
        top = int(m.max()) if len(m) else 0
        harmonic = np.r_[0.0, np.cumsum(1.0 / np.arange(1, top + 1))]
        out[:, j] = safe_div(s[:, j], harmonic[m])
    return out
