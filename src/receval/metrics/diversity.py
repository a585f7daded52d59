r"""Beyond-accuracy metrics: aggregate (entropy, coverage, Gini) and per-list (novelty, ILD).

Pure numpy, vectorised over users (no Python loop per user).

Input contract (shared with :mod:`receval.metrics.aspects`)
-----------------------------------------------------------
``items``
    int64 ``[U, K]`` item codes ``0..n_items-1`` of each user's ranked top-k
    list, ``-1`` where a list is shorter than ``K``.  Cut the columns to the
    wanted ``k`` before calling (``items[:, :k]``).
``aspects``
    ``scipy.sparse`` or dense bool ``[n_items, C]`` item → category.
``popularity``
    float64 ``[n_items]`` train popularity; for :func:`novelty` this must be
    the number of *distinct train users* per item (Zhou et al. 2010).

Notation: :math:`L_u` the top-k list of user *u* (ℓ_u = its length);
:math:`\mathrm{cnt}(i)` the number of lists containing *i*;
:math:`p(i)=\mathrm{cnt}(i)/\sum_j \mathrm{cnt}(j)`; :math:`I` the catalogue.

Aggregate metrics return a Python ``float``; per-user metrics float64 ``[U]``.
"""

from __future__ import annotations

import math

import numpy as np

from ._common import row_sum
from .aspects import _aspects_csr, _expand

__all__ = [
    "recommendation_counts",
    "shannon_entropy",
    "shannon_entropy_recbole",
    "shannon_entropy_elliot",
    "catalog_coverage",
    "gini_index",
    "entropy_of_counts",
    "entropy_recbole_of_counts",
    "entropy_elliot_of_counts",
    "gini_of_counts",
    "novelty",
    "intra_list_diversity",
]


def _items2d(items) -> np.ndarray:
    a = np.asarray(items)
    if a.ndim != 2:
        raise ValueError("items must be 2-D [U, K] (pad with -1)")
    return a.astype(np.int64, copy=False)


def recommendation_counts(items, n_items: int | None = None) -> np.ndarray:
    """How many lists contain each item: float64 ``[n_items]`` (``-1`` padding ignored).

    >>> recommendation_counts([[0, 1], [0, -1]], 3).tolist()
    [2.0, 1.0, 0.0]
    """
    a = _items2d(items)
    v = a[a >= 0]
    if n_items is None:
        n_items = int(v.max()) + 1 if v.size else 0
    if v.size and v.max() >= n_items:
        raise ValueError("item code >= n_items")
    return np.bincount(v, minlength=n_items).astype(np.float64)


def _log(x, base):
    if base in ("e", math.e):
        return np.log(x)
    if base in (2, "2", 2.0):
        return np.log2(x)
    return np.log(x) / math.log(float(base))


# ---------------------------------------------------------------------------
# entropy
# ---------------------------------------------------------------------------
def shannon_entropy(items, *, base="e", normalize: str | None = None, n_catalog: int | None = None) -> float:
    r"""Shannon entropy of the distribution of recommended items over all top-k lists.

    .. math::
        H = -\sum_{i\in I,\ \mathrm{cnt}(i)>0} p(i)\,\log_b p(i),\qquad
        p(i) = \frac{\mathrm{cnt}(i)}{\sum_j \mathrm{cnt}(j)}

    (Adomavicius & Kwon 2012).  Every occurrence in every list counts once;
    ``-1`` padding is ignored, so short lists simply contribute fewer events.

    Options
    -------
    base : ``"e"`` (default, nats; the seed example's 1.609 = ln 5), ``2`` (bits) or any float.
    normalize :
        * ``None`` (default): raw :math:`H`.
        * ``"catalog"``: :math:`H/\log|I|` with :math:`|I|` = ``n_catalog``
          (Kaminskas & Bridge), in [0, 1]; 1 iff every catalogue item is
          recommended equally often.  Base-free.
        * ``"recommended"``: :math:`H/\log m`, *m* = number of distinct
          recommended items (Pielou evenness): measures only how *evenly*
          exposure is spread over what was recommended, not how much of the
          catalogue was reached; 0 when m = 1.  Base-free.

    Library differences: RecBole divides the ln-entropy by *m* (not log m):
    :func:`shannon_entropy_recbole`; Elliot uses log2 and weights each list by
    1/ℓ_u: :func:`shannon_entropy_elliot`; Microsoft Recommenders'
    ``distributional_coverage`` is ``base=2``.  No recommendations → 0.0.

    Examples (seed 001): five users all recommended item A → 0; five users
    each recommended a different item → ln 5 ≈ 1.609 ("1.6").

    >>> shannon_entropy([[0], [0], [0], [0], [0]])
    0.0
    >>> round(shannon_entropy([[0], [1], [2], [3], [4]]), 4)
    1.6094
    >>> shannon_entropy([[0], [1], [2], [3], [4]], base=2) == math.log2(5)
    True
    >>> round(shannon_entropy([[0], [1], [2], [3], [4]], normalize="catalog", n_catalog=25), 12)
    0.5
    >>> round(shannon_entropy([[0], [1], [2], [3], [4]], normalize="recommended"), 12)
    1.0
    """
    return entropy_of_counts(recommendation_counts(items), base=base, normalize=normalize, n_catalog=n_catalog)


def entropy_of_counts(cnt, *, base="e", normalize: str | None = None, n_catalog: int | None = None) -> float:
    """:func:`shannon_entropy` from the recommendation counts (any order; zeros ignored).

    >>> round(entropy_of_counts([1.0, 1.0, 0.0, 1.0, 1.0, 1.0]), 4)
    1.6094
    """
    cnt = np.asarray(cnt, dtype=np.float64)
    cnt = cnt[cnt > 0]
    total = cnt.sum()
    if total == 0:
        return 0.0
    p = cnt / total
    h = float(-(p * _log(p, base)).sum())
    h = h + 0.0  # normalise -0.0
    if normalize is None:
        return h
    if normalize == "catalog":
        if n_catalog is None:
            raise ValueError("normalize='catalog' needs n_catalog")
        d = float(_log(float(n_catalog), base))
    elif normalize == "recommended":
        d = float(_log(float(cnt.shape[0]), base))
    else:
        raise ValueError(f"unknown normalize={normalize!r}")
    return h / d if d > 0 else 0.0


def shannon_entropy_recbole(items) -> float:
    r"""RecBole ``ShannonEntropy@k``: natural-log entropy divided by the number of distinct recommended items.

    .. math::
        H_{\mathrm{RecBole}} = \frac{-\sum_i p(i)\ln p(i)}{m},\qquad
        m = |\{i : \mathrm{cnt}(i) > 0\}|

    (RUCAIBox/RecBole ``ShannonEntropy.get_entropy``; its docstring omits the
    division by *m*.)  RecBole always has full lists; here *p* is over the
    non-padding entries.  No recommendations → 0.0.

    >>> round(shannon_entropy_recbole([[0], [1], [2], [3], [4]]), 6)  # ln 5 / 5
    0.321888
    """
    return entropy_recbole_of_counts(recommendation_counts(items))


def entropy_recbole_of_counts(cnt) -> float:
    """:func:`shannon_entropy_recbole` from the recommendation counts (zeros ignored)."""
    cnt = np.asarray(cnt, dtype=np.float64)
    cnt = cnt[cnt > 0]
    if cnt.shape[0] == 0:
        return 0.0
    p = cnt / cnt.sum()
    return float(-(p * np.log(p)).sum()) / cnt.shape[0] + 0.0


def shannon_entropy_elliot(items) -> float:
    r"""Elliot ``ShannonEntropy``: log2, each list weighted by 1/ℓ_u.

    .. math::
        H_{\mathrm{Elliot}} = \frac{1}{|U^+|}\sum_{i} w_i\bigl(-\log_2 p(i)\bigr),\qquad
        w_i = \sum_{u:\, i\in L_u}\frac{1}{\ell_u}

    with :math:`U^+` the users with a non-empty list.  Equals
    ``shannon_entropy(items, base=2)`` when all lists have the same length.

    Two users, lists (0, 1) and (0): p = (2/3, 1/3), w = (1/2 + 1, 1/2), so
    H = (1.5·log2(3/2) + 0.5·log2 3)/2:

    >>> round(shannon_entropy_elliot([[0, 1], [0, -1]]), 6)
    0.834963
    >>> shannon_entropy_elliot([[0, 1], [2, 3]]) == shannon_entropy([[0, 1], [2, 3]], base=2)
    True
    """
    a = _items2d(items)
    valid = a >= 0
    ell = valid.sum(axis=1)
    users = ell > 0
    if not users.any():
        return 0.0
    cnt = np.bincount(a[valid], minlength=int(a.max()) + 1).astype(np.float64)
    w_entry = np.broadcast_to((1.0 / np.maximum(ell, 1))[:, None], a.shape)[valid]
    w = np.bincount(a[valid], weights=w_entry, minlength=cnt.shape[0])
    return entropy_elliot_of_counts(cnt, w, int(users.sum()))


def entropy_elliot_of_counts(cnt, w, n_users: int) -> float:
    """:func:`shannon_entropy_elliot` from the counts, the per-item weights Σ 1/ℓ_u and |U⁺|."""
    cnt, w = np.asarray(cnt, dtype=np.float64), np.asarray(w, dtype=np.float64)
    if n_users == 0:
        return 0.0
    nz = cnt > 0
    p = cnt[nz] / cnt.sum()
    return float((w[nz] * -np.log2(p)).sum() / n_users) + 0.0


# ---------------------------------------------------------------------------
# coverage
# ---------------------------------------------------------------------------
def catalog_coverage(items, n_catalog: int | None = None, *, variant: str = "catalog", popularity=None) -> float:
    r"""Catalogue coverage of the union of all top-k lists (Ge et al., RecSys 2010).

    .. math::
        \mathrm{Cov} = \frac{|\bigcup_u L_u|}{|I|}

    Variants
    --------
    * ``"catalog"`` (default): denominator :math:`|I|` = ``n_catalog``.
    * ``"train"`` (RePlay ``Coverage@K``): :math:`|\bigcup_u L_u \cap T| / |T|`
      with :math:`T=\{i:\text{popularity}_i>0\}` the items seen in train.
    * ``"count"`` (Elliot ``ItemCoverage``): the absolute number :math:`|\bigcup_u L_u|`.
    * ``"recbole"`` (RecBole ``ItemCoverage@k``): denominator ``n_catalog + 1``
      (RecBole's item count includes the [PAD] token).

    >>> catalog_coverage([[0, 1], [1, 2]], 10)
    0.3
    >>> catalog_coverage([[0, 1], [1, 2]], variant="count")
    3.0
    >>> catalog_coverage([[0, 1], [1, 2]], variant="train", popularity=[5, 0, 1, 1])
    0.6666666666666666
    """
    a = _items2d(items)
    v = a[a >= 0]
    rec = np.flatnonzero(np.bincount(v)) if v.size else v  # distinct items, O(n) not a sort
    if variant == "count":
        return float(rec.shape[0])
    if variant == "train":
        if popularity is None:
            raise ValueError("variant='train' needs popularity")
        pop = np.asarray(popularity, dtype=np.float64)
        train = pop > 0
        nt = int(train.sum())
        if nt == 0:
            return 0.0
        inside = rec[rec < pop.shape[0]]
        return float(train[inside].sum()) / nt
    if n_catalog is None:
        raise ValueError(f"variant={variant!r} needs n_catalog")
    if variant == "catalog":
        return rec.shape[0] / n_catalog if n_catalog > 0 else 0.0
    if variant == "recbole":
        return rec.shape[0] / (n_catalog + 1)
    raise ValueError(f"unknown variant={variant!r}")


# ---------------------------------------------------------------------------
# Gini
# ---------------------------------------------------------------------------
def gini_index(items, n_catalog: int, *, variant: str = "castells") -> float:
    r"""Gini index of item exposure in the top-k lists.

    .. math::
        G = \frac{1}{|I|-1}\sum_{j=1}^{|I|}(2j-|I|-1)\,p(i_{(j)}),\qquad
        p(i_{(1)})\le\dots\le p(i_{(|I|)})

    over the **whole catalogue** of ``n_catalog`` items, never-recommended
    items counting with p = 0 (Castells, Hurley & Vargas, RecSys Handbook).
    0 = perfectly equal exposure, 1 = one item gets everything.

    Variants
    --------
    * ``"castells"`` (default): the formula above.
    * ``"recbole"`` (RecBole ``GiniIndex@k``): divisor :math:`|I|` instead of :math:`|I|-1`,
      i.e. :math:`G\cdot(|I|-1)/|I|`.
    * ``"elliot"`` (Elliot ``GiniIndex``): returns :math:`1-G` (higher = more diverse).

    Policies: no recommendations → NaN (p undefined); ``n_catalog = 1`` → 0.0.

    >>> gini_index([[0], [0], [0], [0], [0]], 5)       # everything on one item
    1.0
    >>> gini_index([[0], [1], [2], [3], [4]], 5)       # equal exposure
    0.0
    >>> gini_index([[0, 1], [0, -1]], 4)               # p = (0, 0, 1/3, 2/3)
    0.7777777777777778
    >>> gini_index([[0, 1], [0, -1]], 4, variant="recbole")
    0.5833333333333334
    """
    return gini_of_counts(recommendation_counts(items, int(n_catalog)), n_catalog, variant=variant)


def gini_of_counts(cnt, n_catalog: int, *, variant: str = "castells") -> float:
    """:func:`gini_index` from the recommendation counts of catalogue items (any order;
    items missing from ``cnt`` count 0)."""
    n = int(n_catalog)
    cnt = np.asarray(cnt, dtype=np.float64)
    if cnt.shape[0] > n:
        raise ValueError("more counts than catalogue items")
    cnt = np.r_[cnt, np.zeros(n - cnt.shape[0])]
    total = cnt.sum()
    if total == 0:
        return float("nan")
    if n <= 1:
        g = 0.0
    else:
        # exact integer numerator: equal exposure gives exactly 0
        c = np.sort(cnt.astype(np.int64))
        j = np.arange(1, n + 1, dtype=np.int64)
        s = float(((2 * j - n - 1) * c).sum())
        if variant == "recbole":
            return s / (float(total) * n)
        g = s / (float(total) * (n - 1))
    if variant == "castells":
        return g
    if variant == "elliot":
        return 1.0 - g
    if variant == "recbole":
        return g
    raise ValueError(f"unknown variant={variant!r}")


# ---------------------------------------------------------------------------
# novelty
# ---------------------------------------------------------------------------
def novelty(items, popularity, n_train_users: int, *, unknown: str = "max", normalize: bool = False,
            k: int | None = None, denominator: str = "length") -> np.ndarray:
    r"""Mean self-information of each user's recommended items (Zhou et al., PNAS 2010).

    .. math::
        \mathrm{Nov}(L_u) = \frac{1}{\ell_u}\sum_{i\in L_u} -\log_2\frac{\mathrm{pop}_i}{|U_{\mathrm{train}}|}

    ``pop_i`` = number of distinct train users who interacted with *i*,
    :math:`|U_{\mathrm{train}}|` = ``n_train_users``; the value lies in
    :math:`[0,\log_2|U_{\mathrm{train}}|]` (with interaction *counts* instead of
    user counts it can go negative).

    Options
    -------
    unknown : policy for items with ``pop_i = 0`` (cold / unseen in train,
        self-information +∞):

        * ``"max"`` (default, as RePlay ``Surprisal``): count them as seen by one
          user, i.e. :math:`\log_2|U_{\mathrm{train}}|`, the maximum finite value;
        * ``"skip"`` (as Microsoft Recommenders): drop them from the user's mean.
    normalize : divide by :math:`\log_2|U_{\mathrm{train}}|` (RePlay ``Surprisal``, in [0, 1]).
    denominator : ``"length"`` (default) divides the sum by the items counted, :math:`\ell_u`;
        ``"k"`` by the cut-off ``k`` (required), even when the list is shorter (recmetrics).
    k : the cut-off of ``items`` (a top-k view, wider than k under ``ties=optimistic``): the
        sums are then in bits that do not depend on the view's width (:func:`receval.metrics._common.row_sum`).

    Policies: empty list (or everything skipped) → NaN.  Not to be confused
    with RePlay ``Novelty`` (share of items unseen by the user in train) or
    RecBole ``Novelty`` (1 − min-max-normalised popularity).

    >>> pop = np.array([4.0, 2.0, 1.0, 0.0])         # 8 train users
    >>> novelty([[0, 1], [2, 3], [-1, -1]], pop, 8).tolist()
    [1.5, 3.0, nan]
    >>> novelty([[0, 1], [2, 3]], pop, 8, unknown="skip").tolist()
    [1.5, 3.0]
    >>> novelty([[0, 1], [2, 3]], pop, 8, normalize=True).tolist()
    [0.5, 1.0]
    >>> novelty([[0, -1], [2, 3]], pop, 8, k=2, denominator="k").tolist()   # (1 + 0) / 2, (3 + 3) / 2
    [0.5, 3.0]
    """
    if denominator == "k" and k is None:
        raise ValueError("denominator='k' needs the cut-off k")
    a = _items2d(items)
    pop = np.asarray(popularity, dtype=np.float64)
    valid = a >= 0
    safe = np.where(valid, a, 0)
    p = pop[safe]
    known = p > 0
    if unknown == "max":
        p = np.where(known, p, 1.0)
        use = valid
    elif unknown == "skip":
        use = valid & known
        p = np.where(known, p, 1.0)
    else:
        raise ValueError(f"unknown policy {unknown!r}")
    si = -np.log2(p / float(n_train_users))
    n = use.sum(axis=1)
    s = np.where(use, si, 0.0)
    if k is None:
        s = s.sum(axis=1)
    else:
        s = row_sum(s, k)
    if denominator == "k":
        out = s / float(k)  # type: ignore[arg-type]
    else:
        out = np.full(a.shape[0], np.nan)
        np.divide(s, n, out=out, where=n > 0)
    if normalize:
        out = out / math.log2(n_train_users)
    return out + 0.0


# ---------------------------------------------------------------------------
# intra-list diversity
# ---------------------------------------------------------------------------
def _aspect_csr(aspects):
    return _aspects_csr(aspects)


def _shared_categories(a, indptr, indices, C, deg_all, chunk_size):
    """Per block of ``chunk_size`` lists of ``a`` ([U, K] item codes, −1 padding): the block's
    first row, its mask of real items [B, K], the categories each pair of its items shares
    [B, K, K] and each item's number of categories [B, K] (0 for padding)."""
    dense = np.zeros((a.shape[0] and indptr.shape[0] - 1, C), dtype=np.float32)
    rows = np.repeat(np.arange(indptr.shape[0] - 1), np.diff(indptr))
    dense[rows, indices] = 1.0
    for s in range(0, a.shape[0], chunk_size):
        blk = a[s:s + chunk_size]
        v = blk >= 0
        X = dense[np.where(v, blk, 0)] * v[:, :, None]  # [B, K, C]
        inter = np.matmul(X, X.transpose(0, 2, 1)).astype(np.float64)  # [B, K, K]
        yield s, v, inter, np.where(v, deg_all[np.where(v, blk, 0)], 0.0)


def intra_list_diversity(items, aspects, *, distance: str = "jaccard", chunk_size: int = 16384) -> np.ndarray:
    r"""Intra-list diversity over item categories (Ziegler et al. 2005; Vargas & Castells 2011).

    .. math::
        \mathrm{ILD}(L_u) = \frac{2}{\ell_u(\ell_u-1)}\sum_{i<j\in L_u} d(i,j)

    over the :math:`\ell_u` valid (non-padding) items of the list, with
    :math:`x_i\in\{0,1\}^C` the category vector of item *i* and

    * ``distance="jaccard"`` (default): :math:`d = 1-|x_i\wedge x_j|/|x_i\vee x_j|`;
    * ``distance="cosine"``: :math:`d = 1-\frac{x_i\cdot x_j}{\|x_i\|\|x_j\|}`,
      computed in O(ℓC) per user via
      :math:`\sum_{i<j}\cos = \tfrac12(\|\sum_i \hat x_i\|^2-\sum_i\|\hat x_i\|^2)`
      (equal to the pairwise sum up to float rounding, ~1e-15).

    Policies: an item without categories has similarity 0 (distance 1) to
    every item, including another uncategorised one (so jaccard and cosine
    agree on it); lists with ℓ_u < 2 → NaN (no pair).  Duplicated items in a
    list are treated as distinct entries.  RePlay ``CategoricalDiversity`` is
    a different metric (distinct categories / K).

    >>> import numpy as np
    >>> asp = np.array([[1, 0, 0], [1, 1, 0], [0, 0, 1]], dtype=bool)
    >>> intra_list_diversity([[0, 1, 2], [0, -1, -1]], asp).round(6).tolist()
    [0.833333, nan]

    Pairs: d(0,1) = 1 − 1/2, d(0,2) = 1, d(1,2) = 1 → (0.5 + 1 + 1)/3.

    >>> intra_list_diversity([[0, 1, 2]], asp, distance="cosine").round(6).tolist()
    [0.764298]
    """
    a = _items2d(items)
    U, K = a.shape
    indptr, indices, C = _aspect_csr(aspects)
    valid = a >= 0
    ell = valid.sum(axis=1).astype(np.float64)
    npairs = ell * (ell - 1) / 2.0
    out = np.full(U, np.nan)
    deg_all = np.diff(indptr).astype(np.float64)
    if distance == "cosine":
        uu, jj = np.nonzero(valid)
        it = a[uu, jj]

        rep, asp, deg = _expand(it, indptr, indices)
        w = 1.0 / np.sqrt(deg_all[it][rep])
        S = np.bincount(uu[rep] * C + asp, weights=w, minlength=U * C).reshape(U, C)
        sq = (S * S).sum(axis=1)
        self_ = np.bincount(uu, weights=(deg_all[it] > 0).astype(np.float64), minlength=U)
        simsum = (sq - self_) / 2.0
    elif distance == "jaccard":
        simsum = np.zeros(U)
        iu = np.triu_indices(K, 1)
        for s, v, inter, d in _shared_categories(a, indptr, indices, C, deg_all, chunk_size):
            union = d[:, :, None] + d[:, None, :] - inter
            sim = np.zeros_like(inter)
            np.divide(inter, union, out=sim, where=union > 0)
            simsum[s:s + chunk_size] = sim[:, iu[0], iu[1]].sum(axis=1)
    elif distance == "hamming":  # |x_i XOR x_j| = deg_i + deg_j − 2·|x_i ∧ x_j|, a distance sum
        distsum = np.zeros(U)
        iu = np.triu_indices(K, 1)
        for s, v, inter, d in _shared_categories(a, indptr, indices, C, deg_all, chunk_size):
            dist = (d[:, :, None] + d[:, None, :] - 2.0 * inter) * (v[:, :, None] & v[:, None, :])  # padding pairs add 0
            distsum[s:s + chunk_size] = dist[:, iu[0], iu[1]].sum(axis=1)
        ok = npairs > 0
        out[ok] = distsum[ok] / npairs[ok]
        return out
    else:
        raise ValueError(f"unknown distance {distance!r}")
    ok = npairs > 0
    out[ok] = 1.0 - simsum[ok] / npairs[ok]
    return out
