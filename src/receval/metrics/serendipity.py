r"""Serendipity (RecTools), categorical diversity (RePlay), subtopic recall (Elliot SRecall) and
miscalibration (Steck 2018).

Side inputs as in :mod:`receval.metrics.beyond`: ``categories`` (item → category rows),
``train`` (the history / popularity), ``catalog``.
"""

from __future__ import annotations

import numpy as np

from ..errors import SpecError
from ..hits import Hits
from ..lists import encoder, index_in, unique_pairs
from ..options import Axis
from ..registry import register
from ._common import LIST_DEN, list_den, per_k, safe_div

# ---- Serendipity (RecTools) -------------------------------------------------------------------


@register("serendipity", side={"train", "catalog"}, axes=[LIST_DEN], needs={"rows", "items"}, family="diversity", ties="closed", bounds=(0.0, 1.0))
def serendipity(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""Serendipity@k (RecTools Serendipity): relevant items ranked above their popularity rank.

    Formula
    -------
    .. math::

        \mathrm{Ser}@k = \frac{1}{D} \sum_{i=1}^{\ell_k} rel_i \,\max\bigl(p(i) - p_u(L_i), 0\bigr), \quad
        p(i) = \frac{n + 1 - i}{n}, \quad p_u(j) = \frac{n + 1 - \pi(j)}{n}

    *n* the catalogue size, :math:`\pi(j)` the dense popularity rank of item *j* by train rows
    (the most frequent count is rank 1, equal counts share a rank); an item absent from train
    has :math:`p_u = 0`. :math:`D = \ell_k` (``denominator=length``, what RecTools 0.19.0 computes:
    the mean over the top-k rows; its docstring writes ÷k) or *k*.

    With ``ties=average`` a relevant item's term is its mean over the positions of its tie
    group inside the top k, :math:`\frac{1}{n}\sum_{i=lo}^{\min(hi,k,\pi(j)-1)} (p(i) - p_u(j))`
    (an arithmetic series: the term is positive exactly for :math:`i < \pi(j)`).

    Examples
    --------
    >>> from receval import evaluate
    >>> train = {"user_id": [1, 2, 3, 1], "item_id": [10, 10, 10, 20]}   # π: 10 → 1, 20 → 2
    >>> recs = {"user_id": [1, 1], "item_id": [20, 30], "score": [2.0, 1.0]}
    >>> truth = {"user_id": [1, 1], "item_id": [20, 30]}
    >>> # n = 3: position 1 (item 20): 3/3 − 2/3; position 2 (item 30, cold): 2/3 − 0 → (1/3 + 2/3) / 2
    >>> evaluate(recs, truth, ["serendipity@2"], train=train, catalog=[10, 20, 30])["serendipity@2"]
    0.5
    """
    s = h.lists
    s.need("train", "serendipity")
    rows = np.bincount(encoder(s.universe)(s.train[1]), minlength=s.n_items)
    counts = np.unique(rows[rows > 0])[::-1]  # distinct counts, most frequent first
    rank = np.zeros(s.n_items)
    rank[rows > 0] = np.searchsorted(-counts, -rows[rows > 0]) + 1
    n = float(s.n_catalog)
    pu = np.r_[np.where(rows > 0, (n + 1 - rank) / n, 0.0), 0.0]

    # p(i) > p_u(j) exactly for positions i < π(j) (i ≤ n for an item absent from train)
    last = np.r_[np.where(rows > 0, rank - 1, n), 0.0]

    def one(k: int) -> np.ndarray:
        items, rel, _ = s.top(k)
        # n is the catalogue's size: a recommended item outside it is refused (the one rule of
        # every metric that reads a catalogue); under ties=average, every row that may enter the top k
        s.check_in_catalog(s.row_code[h.top_chance(k) > 0] if h.row_lo is not None else items[items >= 0], "serendipity")
        if h.row_lo is not None:  # ties=average: max(p(i) − p_u, 0) summed over the group's slots ≤ k, ÷ n_g
            t = h.row_truth
            r = (t >= 0) & h.truth_rel[np.maximum(t, 0)]
            lo, b = h.row_lo, np.minimum(np.minimum(h.row_hi, k), last[s.row_code])
            cnt = np.maximum(b - lo + 1, 0).astype(np.float64)
            total = cnt * ((n + 1) / n - pu[s.row_code]) - (lo + b) * cnt / 2 / n  # Σ_{i=lo}^{b} (n + 1 − i)/n − p_u
            # a row alone in its group: the plain formula's term exactly (the closed sum rounds
            # otherwise), so a user's value does not depend on ties elsewhere in the call
            alone = np.maximum((n + 1 - lo.astype(np.float64)) / n - pu[s.row_code], 0.0)
            total = np.where(h.row_hi == lo, np.where(lo <= k, alone, 0.0), total / (h.row_hi - lo + 1))
            gain = np.where(r, total, 0.0)
            return safe_div(np.bincount(h.row_user, weights=gain, minlength=h.n_users), list_den(items, k, o))
        p = (n + 1 - s.top_pos(k)) / n  # the rows' positions (tied rows share one under ties=optimistic)
        gain = np.maximum(p - pu[items], 0.0) * rel
        user = np.broadcast_to(np.arange(items.shape[0])[:, None], items.shape)  # summed in position order, as above
        return safe_div(np.bincount(user.ravel(), weights=gain.ravel(), minlength=items.shape[0]), list_den(items, k, o))

    return per_k(ks, one)


# ---- categorical diversity (RePlay) --------------------------------------------------------------


@register("catdiv", side={"categories"}, axes=[LIST_DEN], needs={"rows", "items"}, family="diversity", ties="topk_set", bounds=(0.0, float("inf")))
def catdiv(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""CatDiv@k: the number of distinct categories in the top k over k (RePlay CategoricalDiversity).

    Formula
    -------
    .. math:: \mathrm{CatDiv}@k = \frac{|\bigcup_{i \in L_k} C(i)|}{D}, \qquad D = \ell_k \;|\; k

    :math:`C(i)` the categories of item *i*. RePlay (``denominator=k``) takes one category per
    recommended row; with one category per item the two agree.

    Examples
    --------
    >>> from receval import evaluate
    >>> cats = {"item_id": [1, 2, 3], "category": ["a", "a", "b"]}
    >>> recs = {"user_id": [1, 1, 1], "item_id": [1, 2, 3], "score": [3.0, 2.0, 1.0]}
    >>> truth = {"user_id": [1], "item_id": [1]}
    >>> evaluate(recs, truth, ["catdiv@2", "catdiv(denominator=k)@5"], categories=cats).values   # 1/2; 2/5
    {'catdiv@2': 0.5, 'catdiv(denominator=k)@5': 0.4}
    """
    s = h.lists
    s.need("categories", "catdiv")
    A = s.aspects.tocsr()

    def one(k: int) -> np.ndarray:
        items = s.top(k)[0]
        valid = items >= 0
        u = np.repeat(np.arange(h.n_users), items.shape[1])[valid.ravel()]
        rows = A[items[valid]]
        coo = rows.tocoo()
        pairs = np.unique(u[coo.row].astype(np.int64) * A.shape[1] + coo.col)
        distinct = np.bincount(pairs // A.shape[1], minlength=h.n_users).astype(np.float64)
        return safe_div(distinct, list_den(items, k, o))

    return per_k(ks, one)


# ---- subtopic recall (Elliot SRecall) ------------------------------------------------------------


@register("srecall", side={"categories"}, needs={"rows", "items"}, family="diversity", ties="topk_set", bounds=(0.0, 1.0))
def srecall(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""SRecall@k: subtopic recall (Zhai et al. 2003; Elliot SRecall), categories of the relevant items found in the top k.

    Formula
    -------
    .. math:: \mathrm{SRecall}@k = \frac{|\bigcup_{i \in L_k \cap R} C(i)|}{|\bigcup_{i \in R} C(i)|}

    *R* the user's relevant items; 0 when they have no category.

    Examples
    --------
    >>> from receval import evaluate
    >>> cats = {"item_id": [1, 2, 3], "category": ["a", "b", "c"]}
    >>> recs = {"user_id": [1, 1], "item_id": [1, 4], "score": [2.0, 1.0]}
    >>> truth = {"user_id": [1, 1], "item_id": [1, 2]}
    >>> evaluate(recs, truth, ["srecall@2"], categories=cats)["srecall@2"]   # {a} of {a, b}
    0.5
    """
    s = h.lists
    s.need("categories", "srecall")
    A = s.aspects.tocsr()
    m = A.shape[1]
    # categories of the relevant truth items per user
    tu = np.repeat(np.arange(h.n_users), np.diff(s.t_offsets))[s.t_rel]
    coo = A[s.t_items[s.t_rel]].tocoo()
    allp = np.unique(tu[coo.row].astype(np.int64) * m + coo.col)
    den = np.bincount(allp // m, minlength=h.n_users).astype(np.float64)

    def one(k: int) -> np.ndarray:
        items, rel, _ = s.top(k)
        sel = rel & (items >= 0)
        u = np.repeat(np.arange(h.n_users), items.shape[1])[sel.ravel()]
        c = A[items[sel]].tocoo()
        pairs = np.unique(u[c.row].astype(np.int64) * m + c.col)
        return safe_div(np.bincount(pairs // m, minlength=h.n_users).astype(np.float64), den)

    return per_k(ks, one)


# ---- miscalibration (Steck 2018) ------------------------------------------------------------------

CAL_ALPHA = Axis("alpha", "alpha", 0.01, "smoothing α: q̃ = (1 − α) q + α p keeps the KL finite (Steck 2018: 0.01)", numeric=True)


def _cal_check(o: dict, *_: object) -> None:
    if not 0 < o["alpha"] < 1:
        raise SpecError(f"miscalibration: alpha must lie strictly between 0 and 1, got {o['alpha']}")


@register("miscalibration", side={"categories", "train"}, axes=[CAL_ALPHA], needs={"rows", "items"}, family="diversity", check_hook=_cal_check, ties="topk_set", higher_is_better=False, bounds=(0.0, float("inf")))
def miscalibration(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""Miscalibration@k (Steck, RecSys 2018): KL divergence of the list's category distribution from the history's.

    Formula
    -------
    .. math::

        p(g|u) = \frac{1}{|H_u|}\sum_{i \in H_u} p(g|i), \quad
        q(g|u) = \frac{1}{\ell'_k}\sum_{i \in L_k} p(g|i), \quad
        C_{KL} = \sum_g p(g|u) \ln \frac{p(g|u)}{(1-\alpha)\, q(g|u) + \alpha\, p(g|u)}

    :math:`H_u` the user's distinct train items that have a category, :math:`\ell'_k` the
    categorised items of the top k, :math:`p(g|i) = 1/|C(i)|` for each of the item's categories
    (uniform item and category weights; the paper allows others). Items without a category are
    left out. A user without a categorised history has no *p* and scores 0; a user without
    recommendations scores 0 under ``norecs=zero``. 0 is perfectly
    calibrated; no peer library offers this metric.

    Examples
    --------
    >>> from receval import evaluate
    >>> cats = {"item_id": [1, 2, 3], "category": ["a", "b", "a"]}
    >>> train = {"user_id": [1, 1], "item_id": [1, 2]}          # p = (a: 1/2, b: 1/2)
    >>> recs = {"user_id": [1, 1], "item_id": [3, 1], "score": [2.0, 1.0]}   # q = (a: 1, b: 0)
    >>> truth = {"user_id": [1], "item_id": [3]}
    >>> # ½ ln(½ / (0.99 + 0.005)) + ½ ln(½ / 0.005)
    >>> round(evaluate(recs, truth, ["miscalibration@2"], categories=cats, train=train)["miscalibration@2"], 6)
    1.958518
    """
    import scipy.sparse as sp

    s = h.lists
    s.need("categories", "miscalibration")
    s.need("train", "miscalibration")
    A = s.aspects.tocsr()
    per_item = np.asarray(A.sum(axis=1)).ravel()
    P_item = sp.diags(np.where(per_item > 0, 1.0 / np.maximum(per_item, 1), 0.0)) @ A  # p(g|i)
    # history: distinct (user, item) train pairs of the averaged users with a category
    tu, ti = s.train
    codes = encoder(s.universe)(ti)
    uidx, ok = index_in(h.user_ids, tu)
    pairs = unique_pairs(uidx[ok], codes[ok])
    pairs = pairs[per_item[pairs[:, 1]] > 0]
    Hm = sp.csr_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(h.n_users, s.n_items))
    n_hist = np.asarray(Hm.sum(axis=1)).ravel()
    p = np.asarray((Hm @ P_item).todense())
    p = p / np.maximum(n_hist, 1)[:, None]
    a = float(o["alpha"])

    def one(k: int) -> np.ndarray:
        items = s.top(k)[0]
        valid = (items >= 0) & (per_item[np.maximum(items, 0)] > 0)
        u = np.repeat(np.arange(h.n_users), items.shape[1])[valid.ravel()]
        L = sp.csr_matrix((np.ones(len(u)), (u, items[valid])), shape=(h.n_users, s.n_items))
        n_list = np.asarray(L.sum(axis=1)).ravel()
        q = np.asarray((L @ P_item).todense()) / np.maximum(n_list, 1)[:, None]
        qs = (1 - a) * q + a * p
        terms = np.zeros_like(p)
        np.multiply(p, np.log(np.divide(p, qs, out=np.ones_like(p), where=p > 0)), out=terms, where=p > 0)
        return np.where((n_hist > 0) & (h.length > 0), terms.sum(axis=1), 0.0)

    return per_k(ks, one)
