r"""Beyond-accuracy metrics reachable by name: entropy, coverage, Gini, novelty, ILD, α-nDCG, αβ-nDCG.

The kernels live in :mod:`receval.metrics.diversity` and :mod:`receval.metrics.aspects`
(pure numpy, vectorised over users); this module cuts their inputs from the list layer of the
intermediate form (:attr:`receval.hits.Hits.lists`) and the side inputs given to
:func:`receval.evaluate` (read once by :mod:`receval.side`):

* ``categories``: item categories, a frame with ``item_id`` and ``category`` columns (one row
  per item–category pair) or a MovieLens ``movies.csv`` / ``movies.dat`` path (pipe-separated
  ``genres``); needed by ``ild``, ``alpha_ndcg``, ``ab_ndcg``;
* ``train``: train interactions (``user_id``, ``item_id``); popularity for ``novelty``, and the
  catalogue for ``coverage`` when no ``catalog`` is given;
* ``catalog``: the item catalogue (a sequence of item ids, or a frame with ``item_id``).

The catalogue *I* is ``catalog`` if given, else the train items, else every item seen in the
recommendations, the truth or the categories. Aggregate metrics read the top-k lists of the
averaged users (truth users).
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import OutsideCatalogue
from ..hits import WIDE, Hits
from ..lists import ListSpace, encoder, index_in
from ..options import Axis
from ..registry import register
from ..side import catalogue_reads
from . import aspects as _asp
from . import diversity as _div
from ._common import ties_by_row_chance

_BUILD_CTX = ("rel", "order", "ties", "dup", "tdup")


def _per_k(h: Hits, ks: list[int], fn) -> np.ndarray:
    return np.stack([fn(k) for k in ks], axis=1)


# ---- aggregate metrics ---------------------------------------------------------------------

ENTROPY_FORM = Axis(
    "form", "form", "standard", "which entropy",
    {
        "standard": "−Σ p_i log p_i over recommendation frequencies",
        "per_item": "−Σ p_i ln p_i divided by the number of distinct recommended items (RecBole ShannonEntropy)",
        "length_weighted": "−Σ_i w_i log2 p_i / |U⁺|, each occurrence weighted 1/ℓ_u by its list's length (Elliot ShannonEntropy)",
    },
    aliases={"recbole": "per_item", "elliot": "length_weighted"},
)
ENTROPY_BASE = Axis("base", "base", math.e, "logarithm base of the standard form (e or 2)", numeric=True)
ENTROPY_NORM = Axis(
    "normalize", "norm", "no", "normalisation of the standard form",
    {"no": "H itself", "catalog": "H / log|I| (in [0, 1], base-free)", "recommended": "H / log(#distinct recommended items)"},
)


def _exposure_partial(h: Hits, ks: list[int], o: dict, metric: str, weights: bool = False) -> dict:
    """Sufficient statistics of the top-k lists of one batch of users, keyed by item id (the
    item codes of a batch are not those of another): per k the recommended item ids, how many
    lists hold each, Σ 1/ℓ_u over those lists (``weights``), the users with a non-empty list
    and the entries outside the catalogue; plus the catalogue (its size when a catalog or train
    items define it, else this batch's item ids, whose union over batches is the catalogue)."""
    s = h.lists
    per_k = []
    for k in ks:
        items = s.top(k)[0]
        valid = items >= 0
        inside = valid & (s.to_catalog[items] >= 0)
        ell = valid.sum(axis=1)
        cnt = np.bincount(items[valid], minlength=s.n_items)
        nz = np.flatnonzero(cnt)
        stats = {"ids": s.universe[nz], "cnt": cnt[nz], "users": int((ell > 0).sum()), "outside": s.outside(items[valid & ~inside])}
        if weights:  # lists of each length holding each item: integers, exact in any batching
            length = np.broadcast_to(ell[:, None], items.shape)[valid]
            span = items.shape[1] + 1  # a list holds up to items.shape[1] rows (more than k under ties=optimistic)
            key, n = np.unique(items[valid].astype(np.int64) * span + length, return_counts=True)
            stats["w"] = (s.universe[key // span], key % span, n)
        per_k.append(stats)
    own = s.catalog is None and s.train is None
    return {"k": per_k, "catalog": s.universe if own else None, "n_catalog": None if own else s.n_catalog}


def _exposure_merge(parts: list[dict], j: int, metric: str | None) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, int, int]:
    """(item ids sorted, counts, weights or None, users, catalogue size) of cut-off ``j`` over all batches."""
    stats = [p["k"][j] for p in parts]
    outside = [i for st in stats for i in st["outside"].tolist()]
    if metric is not None and outside:  # the one rule of ListSpace.check_in_catalog, over every batch's items
        raise OutsideCatalogue(metric, outside)
    ids, inv = np.unique(np.concatenate([st["ids"] for st in stats]), return_inverse=True)
    cnt = np.bincount(inv, weights=np.concatenate([st["cnt"] for st in stats]).astype(np.float64), minlength=len(ids))
    w = None
    if stats and "w" in stats[0]:  # w_i = Σ_ℓ (lists of length ℓ holding i) / ℓ, summed in (i, ℓ) order
        item = np.searchsorted(ids, np.concatenate([st["w"][0] for st in stats]))
        length = np.concatenate([st["w"][1] for st in stats]).astype(np.int64)
        width = int(length.max()) + 1 if len(length) else 1
        key, kinv = np.unique(item * width + length, return_inverse=True)
        n = np.bincount(kinv, weights=np.concatenate([st["w"][2] for st in stats]).astype(np.float64), minlength=len(key))
        w = np.bincount(key // width, weights=n / (key % width), minlength=len(ids))
    if parts[0]["n_catalog"] is not None:
        n_catalog = parts[0]["n_catalog"]
    else:
        n_catalog = len(np.unique(np.concatenate([p["catalog"] for p in parts])))
    return ids, cnt, w, sum(st["users"] for st in stats), n_catalog


def _entropy_partial(h: Hits, ks: list[int], o: dict) -> dict:
    return _exposure_partial(h, ks, o, "entropy", weights=o["form"] == "length_weighted")


def _entropy_combine(parts: list[dict], ks: list[int], o: dict) -> np.ndarray:
    def one(j: int) -> float:
        _, cnt, w, users, n_catalog = _exposure_merge(parts, j, "entropy")
        if o["form"] == "per_item":
            return _div.entropy_recbole_of_counts(cnt)
        if o["form"] == "length_weighted":
            return _div.entropy_elliot_of_counts(cnt, w, users)
        norm = None if o["normalize"] == "no" else o["normalize"]
        base = "e" if o["base"] == math.e else o["base"]
        return _div.entropy_of_counts(cnt, base=base, normalize=norm, n_catalog=n_catalog)

    return np.array([one(j) for j in range(len(ks))])


def _entropy_side(o: dict, given: frozenset[str]) -> set[str] | None:
    """Only the standard form normalised by log|I| reads the catalogue (the others use it to
    refuse items outside it, which changes no value)."""
    if o.get("form", "standard") == "standard" and o.get("normalize") == "catalog":
        return catalogue_reads(o, given)
    return None


@register("entropy", side=_entropy_side, axes=[ENTROPY_FORM, ENTROPY_BASE, ENTROPY_NORM], kind="global", context=_BUILD_CTX, needs={"rows", "items"},
          family="diversity", partial=_entropy_partial, combine=_entropy_combine, ties="topk_set", bounds=(0.0, float("inf")))
def entropy(h: Hits, ks: list[int], o: dict) -> None:
    r"""Entropy@k: Shannon entropy of how often each item is recommended across all top-k lists.

    Formula
    -------
    .. math:: H = -\sum_{i \in I} p_i \log_b p_i, \qquad p_i = \frac{\mathrm{cnt}(i)}{\sum_j \mathrm{cnt}(j)}

    ``normalize=catalog`` divides by :math:`\log_b |I|` (the base cancels); ``form=per_item``
    is :math:`-\sum p_i \ln p_i / |\{i: \mathrm{cnt}(i) > 0\}|`; ``form=length_weighted`` weights each
    occurrence by :math:`1/\ell_u` and uses log2 (equal to the standard log2 form when all
    lists are equally long). Seed 001: five users all given item A → 0; each a different item →
    ln 5 ≈ 1.609.

    Examples
    --------
    >>> from receval import evaluate
    >>> truth = {"user_id": [1, 2, 3, 4, 5], "item_id": [9] * 5}
    >>> same = {"user_id": [1, 2, 3, 4, 5], "item_id": [7] * 5, "score": [1.0] * 5}
    >>> evaluate(same, truth, ["entropy@1"])["entropy@1"]
    0.0
    >>> diff = {"user_id": [1, 2, 3, 4, 5], "item_id": [1, 2, 3, 4, 5], "score": [1.0] * 5}
    >>> round(evaluate(diff, truth, ["entropy@1"])["entropy@1"], 6)   # ln 5
    1.609438
    """


COVERAGE_DEN = Axis(
    "denominator", "den", "catalog", "what the distinct recommended items are divided by",
    {
        "catalog": "|I|, the catalogue",
        "train": "the distinct train items, counting only recommended train items (RePlay Coverage)",
        "count": "nothing: the absolute number of distinct recommended items (Elliot ItemCoverage)",
        "catalog_plus_one": "|I| + 1: the catalogue and one padding item (RecBole ItemCoverage counts its [PAD] token)",
    },
    aliases={"recbole": "catalog_plus_one"},
)
#: ``denominator`` -> the ``variant`` of :func:`receval.metrics.diversity.catalog_coverage`
_COVERAGE_VARIANT = {"catalog_plus_one": "recbole"}


def _coverage_partial(h: Hits, ks: list[int], o: dict) -> dict:
    out = _exposure_partial(h, ks, o, "coverage")
    if o["denominator"] == "train":
        s = h.lists
        s.need("train", "coverage(denominator=train)")
        out["train"] = s.universe[s.train_items]
    return out


def _coverage_combine(parts: list[dict], ks: list[int], o: dict) -> np.ndarray:
    variant = _COVERAGE_VARIANT.get(o["denominator"], o["denominator"])

    def one(j: int) -> float:
        if variant == "train":  # recommended items outside the catalogue are allowed here
            ids = _exposure_merge(parts, j, None)[0]
            universe = np.unique(np.concatenate([ids, parts[0]["train"]]))
            pop = np.zeros(len(universe))
            pop[np.searchsorted(universe, parts[0]["train"])] = 1.0
            items = np.searchsorted(universe, ids)[:, None]
            return _div.catalog_coverage(items, len(universe), variant="train", popularity=pop)
        ids, _, _, _, n_catalog = _exposure_merge(parts, j, "coverage")
        return _div.catalog_coverage(np.arange(len(ids))[:, None], n_catalog, variant=variant)

    return np.array([one(j) for j in range(len(ks))])


def _coverage_side(o: dict, given: frozenset[str]) -> set[str] | None:
    """The catalogue (or train) as denominator; ``denominator=count`` reads it only to refuse
    items outside it, which changes no value."""
    den = o.get("denominator")
    if den == "count":
        return None
    return {"train"} if den == "train" else catalogue_reads(o, given)


@register("coverage", side=_coverage_side, axes=[COVERAGE_DEN], kind="global", context=_BUILD_CTX, needs={"rows", "items"}, family="diversity",
          partial=_coverage_partial, combine=_coverage_combine, ties="topk_set", bounds=(0.0, 1.0))
def coverage(h: Hits, ks: list[int], o: dict) -> None:
    r"""Coverage@k: the share of the catalogue recommended to at least one user.

    Formula
    -------
    .. math:: \mathrm{Coverage}@k = \frac{|\bigcup_u L_k(u)|}{|I|}

    (``denominator`` chooses |I|, the train items, 1, or |I| + 1).

    Examples
    --------
    >>> from receval import evaluate
    >>> recs = {"user_id": [1, 1, 2, 2], "item_id": [1, 2, 2, 3], "score": [2.0, 1.0, 2.0, 1.0]}
    >>> truth = {"user_id": [1, 2], "item_id": [1, 3]}
    >>> evaluate(recs, truth, ["coverage@2"], catalog=[1, 2, 3, 4, 5, 6])["coverage@2"]   # 3 / 6
    0.5
    """


GINI_FORM = Axis(
    "form", "form", "castells", "which Gini index",
    {
        "castells": "Σ_j (2j − |I| − 1) p_(j) / (|I| − 1), items sorted by p ascending, never-recommended items with p = 0",
        "catalog_divisor": "the same sum divided by |I| instead of |I| − 1 (RecBole GiniIndex)",
        "complement": "1 − G: higher = more diverse (Elliot GiniIndex)",
    },
    aliases={"recbole": "catalog_divisor", "elliot": "complement"},
)
#: ``form`` -> the ``variant`` of :func:`receval.metrics.diversity.gini_of_counts`
_GINI_VARIANT = {"castells": "castells", "catalog_divisor": "recbole", "complement": "elliot"}


GINI_PAD = Axis(
    "pad", "pad", "no", "an extra never-recommended item in the catalogue",
    {
        "no": "the catalogue as given",
        "yes": "one more item with no recommendation (RecBole's [PAD] id 0, counted in dataset.num(item_id) as coverage(denominator=catalog_plus_one) counts it)",
    },
)


def _gini_partial(h: Hits, ks: list[int], o: dict) -> dict:
    return _exposure_partial(h, ks, o, "gini")


def _gini_combine(parts: list[dict], ks: list[int], o: dict) -> np.ndarray:
    def one(j: int) -> float:
        _, cnt, _, _, n_catalog = _exposure_merge(parts, j, "gini")
        return _div.gini_of_counts(cnt, n_catalog + (o.get("pad") == "yes"), variant=_GINI_VARIANT[o["form"]])

    return np.array([one(j) for j in range(len(ks))])


@register("gini", side=catalogue_reads, axes=[GINI_FORM, GINI_PAD], kind="global", context=_BUILD_CTX, needs={"rows", "items"}, family="diversity",
          partial=_gini_partial, combine=_gini_combine, ties="topk_set", higher_is_better=False, bounds=(0.0, 1.0))
def gini(h: Hits, ks: list[int], o: dict) -> None:
    r"""Gini@k: the Gini index of item exposure over all top-k lists (0 = equal, 1 = one item).

    Formula
    -------
    .. math:: G = \frac{1}{|I|-1} \sum_{j=1}^{|I|} (2j - |I| - 1)\, p_{(j)}

    with :math:`p_{(1)} \le \dots \le p_{(|I|)}` the recommendation shares, never-recommended
    catalogue items counted with p = 0.

    Examples
    --------
    >>> from receval import evaluate
    >>> recs = {"user_id": [1, 2], "item_id": [1, 1], "score": [1.0, 1.0]}
    >>> truth = {"user_id": [1, 2], "item_id": [1, 2]}
    >>> evaluate(recs, truth, ["gini@1"], catalog=[1, 2, 3])["gini@1"]   # (2·3 − 3 − 1)·1 / 2
    1.0
    >>> evaluate(recs, truth, ["gini(form=catalog_divisor,pad=yes)@1"], catalog=[1, 2, 3]).values   # n = 4: (2·4 − 4 − 1)·2 / (2·4)
    {'gini(form=catalog_divisor,pad=yes)@1': 0.75}
    """


# ---- per-user list metrics ------------------------------------------------------------------

NOV_UNKNOWN = Axis(
    "unknown", "unknown", "max", "items no train user has seen",
    {"max": "count them as seen by one user (RePlay Surprisal)", "skip": "leave them out of the user's mean (MS Recommenders)"},
)
NOV_DEN = Axis(
    "denominator", "den", "length", "what a user's summed self-information is divided by",
    {
        "length": "the items counted: ℓ_k = min(k, ℓ), or the known ones with unknown=skip (Zhou et al.; RePlay, MS Recommenders)",
        "k": "the cut-off k, even when the list is shorter (recmetrics' novelty divides by n, the list length asked for)",
    },
    silent=True,
)


@register("novelty", side={"train"}, axes=[NOV_UNKNOWN, NOV_DEN], needs={"rows", "items"}, family="diversity", ties="closed", bounds=(0.0, float("inf")))
def novelty(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""Novelty@k: the mean self-information of a user's recommended items (Zhou et al. 2010).

    Formula
    -------
    .. math:: \mathrm{Nov}(L_k) = \frac{1}{\ell_k}\sum_{i \in L_k} -\log_2 \frac{\mathrm{pop}_i}{|U_{train}|}

    :math:`\mathrm{pop}_i` = distinct train users of *i*. A user without recommendations
    scores 0 (the ``norecs`` policy applies). ``denominator=k`` divides the same sum by the
    cut-off instead of the list's length, so a list shorter than k scores less:

    .. math:: \mathrm{Nov}_k(L_k) = \frac{1}{k}\sum_{i \in L_k} -\log_2 \frac{\mathrm{pop}_i}{|U_{train}|}

    as recmetrics computes it (``novelty(predicted, pop, u, n)`` divides each list's sum by *n*,
    the recommendation length asked for; ``recmetrics/metrics.py`` in
    statisticianinstilettos/recmetrics, whose ``pop`` counts train rows, not users).

    Examples
    --------
    >>> from receval import evaluate
    >>> train = {"user_id": [1, 2, 3, 4, 1, 2], "item_id": [1, 1, 1, 1, 2, 2]}
    >>> recs = {"user_id": [1, 1], "item_id": [1, 2], "score": [2.0, 1.0]}
    >>> truth = {"user_id": [1], "item_id": [1]}
    >>> evaluate(recs, truth, ["novelty@2"], train=train)["novelty@2"]   # (−log2 4/4 − log2 2/4) / 2
    0.5
    >>> evaluate(recs, truth, ["novelty(denominator=k)@4"], train=train)["novelty(denominator=k)@4"]   # (0 + 1) / 4
    0.25
    >>> evaluate(recs, truth, ["novelty@4"], train=train)["novelty@4"]   # (0 + 1) / 2: the list holds 2
    0.5

    RePlay's Novelty (the share of items unseen by the user in train) is :func:`unseen`.

    With ``ties=average`` and ``unknown=max`` each row counts with its chance to be in the top k
    (m/n for a tie group with m of its n slots inside k); with ``unknown=skip`` the number of
    known items in the top k depends on the order, so the value is defined only when no tie
    group straddles k.
    """
    s = h.lists
    s.need("train", "novelty")
    if h.row_lo is not None:  # ties=average
        if o["unknown"] != "max":  # the known items of the top k (the denominator) depend on the order
            h.check_topk_settled(ks, "novelty(unknown=skip)")
        else:  # linear in the top-k rows: each row weighted by its chance to be in the top k
            si = -np.log2(np.where(s.popularity > 0, s.popularity, 1.0) / float(s.n_train_users))

            def expected(k: int) -> np.ndarray:
                w = h.top_chance(k)
                num = np.bincount(h.row_user, weights=w * si[s.row_code], minlength=h.n_users)
                out = np.zeros(h.n_users)
                if o.get("denominator") == "k":
                    return num / float(k)
                np.divide(num, np.minimum(h.length, k), out=out, where=h.length > 0)
                return out

            return _per_k(h, ks, expected)
    return np.nan_to_num(_per_k(h, ks, lambda k: _div.novelty(s.top(k)[0], s.popularity, s.n_train_users, unknown=o["unknown"], k=k,
                                                                     denominator=o.get("denominator", "length"))))


@ties_by_row_chance
@register("unseen", side={"train"}, needs={"rows", "items"}, family="diversity", ties="closed", bounds=(0.0, 1.0))
def unseen(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""Unseen@k: the share of a user's top-k items the user has not interacted with in train (RePlay's Novelty).

    Formula
    -------
    .. math:: \mathrm{Unseen}@k(u) = 1 - \frac{|L_k \cap T_u|}{\ell_k}

    :math:`T_u` the user's train items, :math:`\ell_k = \min(k, \ell)`. A user without
    recommendations follows ``norecs``; a user without train rows scores 1. RePlay 0.22 calls
    this Novelty (its docstring writes ÷K, its code divides by the list length) and averages
    the users of train; receval averages the truth users. Not :func:`novelty` (self-information).

    Examples
    --------
    >>> from receval import evaluate
    >>> train = {"user_id": [1, 1, 2], "item_id": [10, 30, 20]}
    >>> recs = {"user_id": [1, 1, 1], "item_id": [10, 20, 30], "score": [3.0, 2.0, 1.0]}
    >>> truth = {"user_id": [1], "item_id": [20]}
    >>> evaluate(recs, truth, ["unseen@2"], train=train)["unseen@2"]   # 10 seen, 20 not: 1 − 1/2
    0.5
    """
    s = h.lists
    s.need("train", "unseen")
    tu, ti = s.train
    uidx, ok = index_in(h.user_ids, tu)
    seen = np.unique(uidx[ok].astype(np.int64) * s.n_items + encoder(s.universe)(ti)[ok])
    key = h.row_user.astype(np.int64) * s.n_items + s.row_code
    was_seen = np.isin(key, seen)

    def one(k: int) -> np.ndarray:
        top = h.row_pos <= k
        n = np.bincount(h.row_user[top], minlength=h.n_users).astype(np.float64)
        if h.row_lo is not None:  # ties=average: each row weighted by its chance to be in the top k
            w = h.top_chance(k)
            hit = np.bincount(h.row_user, weights=w * was_seen, minlength=h.n_users)
        else:
            hit = np.bincount(h.row_user[top & was_seen], minlength=h.n_users).astype(np.float64)
        out = np.zeros(h.n_users)  # no recommendations: 0 (norecs=zero; skip and error act before)
        np.subtract(1.0, hit / np.maximum(n, 1.0), out=out, where=n > 0)
        return out

    return _per_k(h, ks, one)


ILD_DIST = Axis(
    "distance", "dist", "jaccard", "distance between two items' category sets",
    {"jaccard": "1 − |A∩B| / |A∪B|", "cosine": "1 − cosine of the binary category vectors",
     "hamming": "|A △ B|, the categories (binary features) the two items differ in (RecTools PairwiseHammingDistanceCalculator over one-hot features)"},
)


@register("ild", side={"categories"}, axes=[ILD_DIST], needs={"rows", "items"}, family="diversity", ties="topk_set", bounds=(0.0, 1.0))
def ild(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""ILD@k: intra-list diversity, the mean pairwise category distance inside the top k.

    Formula
    -------
    .. math:: \mathrm{ILD}(L_k) = \frac{2}{\ell_k(\ell_k-1)} \sum_{i<j \in L_k} d(i, j)

    with *d* the Jaccard (default) or cosine distance of the items' category sets, or the
    Hamming distance :math:`|A \triangle B|` of their binary category (feature) vectors
    (``distance=hamming``, RecTools IntraListDiversity with a Hamming calculator over one-hot
    item features; unnormalised). Lists of fewer than two items score 0.

    Examples
    --------
    >>> from receval import evaluate
    >>> cats = {"item_id": [1, 2, 2, 3], "category": ["a", "a", "b", "c"]}
    >>> recs = {"user_id": [1, 1, 1], "item_id": [1, 2, 3], "score": [3.0, 2.0, 1.0]}
    >>> truth = {"user_id": [1], "item_id": [1]}
    >>> round(evaluate(recs, truth, ["ild@3"], categories=cats)["ild@3"], 6)   # (1/2 + 1 + 1) / 3
    0.833333
    >>> evaluate(recs, truth, ["ild(distance=hamming)@3"], categories=cats)["ild(distance=hamming)@3"]   # (1 + 3 + 2) / 3
    2.0
    """
    s = h.lists
    s.need("categories", "ild")
    return np.nan_to_num(_per_k(h, ks, lambda k: _div.intra_list_diversity(s.top(k)[0], s.aspects, distance=o["distance"])))


ALPHA = Axis("alpha", "alpha", 0.5, "redundancy penalty α: each repeat of a subtopic gains (1−α) times less", numeric=True)


@register("alpha_ndcg", side={"categories"}, axes=[ALPHA], needs={"rows", "items"}, family="diversity", ties="closed", bounds=(0.0, float("inf")))
def alpha_ndcg(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""α-nDCG@k (Clarke et al. 2008) with item categories as subtopics, as TREC ndeval but for the ideal's ties.

    Formula
    -------
    .. math::

        G[j] = \sum_{c} J(d_j, c)\,(1-\alpha)^{r_{c,j-1}}, \qquad
        \alpha\text{-nDCG}@k = \frac{\sum_{j \le k} G[j] / \log_2(1+j)}{\sum_{j \le k} G^*[j] / \log_2(1+j)}

    :math:`J(d, c) = 1` when *d* is relevant to the user and has category *c*;
    :math:`r_{c,j-1}` counts the items above *j* covering *c*; :math:`G^*` is the greedy ideal
    list over the user's relevant items: at each rank an item of the largest gain, among them one
    of the largest label-free tie key :math:`\kappa` (counts of the user's items per category,
    :func:`receval.metrics.aspects._tie_keys`), and where such items still differ in their
    categories the largest DCG over the choices; no id is read, so renaming items or categories
    leaves the value unchanged (ndeval takes the largest docno; the two agree whenever that
    choice reaches the same ideal).

    With ``ties=average`` the run's α-DCG is its expectation over the orderings of the tie
    groups (the ideal does not read the order): an item at slot *t* of a group of *n* follows
    a uniform *t*-subset of the group's other items, so the number of them covering *c* is
    hypergeometric and :math:`E[(1-\alpha)^{Y}]` is a finite sum
    (:func:`receval.metrics.aspects.expected_alpha_dcg`).

    Examples
    --------
    >>> from receval import evaluate
    >>> cats = {"item_id": [1, 2, 3], "category": ["a", "a", "b"]}
    >>> recs = {"user_id": [1, 1, 1], "item_id": [1, 2, 3], "score": [3.0, 2.0, 1.0]}
    >>> truth = {"user_id": [1, 1, 1], "item_id": [1, 2, 3]}
    >>> # run: 1 + 0.5/log2 3 + 1/log2 4; greedy ideal (items 3, 2, 1): 1 + 1/log2 3 + 0.5/log2 4
    >>> round(evaluate(recs, truth, ["alpha_ndcg@3"], categories=cats)["alpha_ndcg@3"], 6)
    0.965195
    >>> recs["score"] = [2.0, 2.0, 1.0]      # 1 and 2 tied: the same DCG in either order
    >>> round(evaluate(recs, truth, ["alpha_ndcg(ties=average)@3"], categories=cats)["alpha_ndcg(ties=average)@3"], 6)
    0.965195
    """
    s = h.lists
    s.need("categories", "alpha_ndcg")
    s.check_order_of_shared(ks, "alpha_ndcg")
    thr = o["rel"] if o["rel"] is not None else -np.inf
    ratings = np.where(s.t_rel, s.t_ratings, -np.inf) if o["rel"] is not None else np.where(s.t_rel, 1.0, -np.inf)
    thr = thr if o["rel"] is not None else 0.0

    rows = _row_lists(h, s) if h.row_lo is None else None

    def one(k: int) -> np.ndarray:
        k = _deepest(h, s, k)
        if rows is not None:
            return _asp.alpha_ndcg(rows, None, s.aspects, s.t_offsets, s.t_items, ratings, thr, alpha=o["alpha"], k=k)
        items, rel, _ = s.top(k)
        if h.row_lo is None:
            return _asp.alpha_ndcg(items, rel, s.aspects, s.t_offsets, s.t_items, ratings, thr, alpha=o["alpha"], k=k)
        # ties=average: the greedy ideal does not read the order; the run's DCG is its expectation
        _, _, idcg = _asp.alpha_ndcg(items, rel, s.aspects, s.t_offsets, s.t_items, ratings, thr, alpha=o["alpha"], k=k,
                                     return_parts=True)
        t = h.row_truth
        hit = np.flatnonzero((t >= 0) & h.truth_rel[np.maximum(t, 0)])
        lo = h.row_lo[hit]
        dcg = _asp.expected_alpha_dcg(h.row_user[hit], lo, h.row_hi[hit] - lo + 1, s.row_code[hit], s.aspects,
                                      h.n_users, [k], alpha=o["alpha"])[:, 0]
        out = np.zeros(h.n_users)
        np.divide(dcg, idcg, out=out, where=idcg > 0)
        return out

    return _per_k(h, ks, one)


def _row_lists(h: Hits, s: ListSpace) -> _asp.ListRows | None:
    """The lists as the form's rows (:class:`receval.metrics.aspects.ListRows`: the compiled
    kernel reads them without a dense ``[U, k]`` copy), when the form holds each user's rows
    together at the positions 1..ℓ; else None (the dense :meth:`ListSpace.top`)."""
    got = s.row_lists()
    if got is None:
        return None
    assert h.row_truth is not None and h.truth_rating is not None and h.truth_rel is not None
    return _asp.ListRows(got[0], got[1], s.row_code, h.row_truth, h.truth_rating, h.truth_rel, s.top)


def _deepest(h: Hits, s: ListSpace, k: int) -> int:
    """The cut-off that reads what ``k`` reads: no list and no ideal list (the truth items of
    a user) is longer, so the values at ``k`` and at this depth are equal."""
    longest_truth = int(np.diff(s.t_offsets).max()) if len(s.t_offsets) > 1 else 0
    return k if k <= WIDE else max(1, min(k, max(h.max_pos, longest_truth)))


AB_ALPHA = Axis("alpha", "alpha", 0.02, "P(a|u,i) of an item the user has not rated: a small constant, β/10 (half a rating-1 item at r_max = 5); the paper's value is not known", numeric=True)
AB_BETA = Axis("beta", "beta", 0.2, "β: a rated item contributes β·r/r_max to each of its aspects. 0.2 lies inside the region where all eight axioms of docs/axioms.md hold (β < 0.253 at r_max = 5); β = 0.5 violates Pri and TopHeavComp; the paper's value is not known", numeric=True)
AB_RMAX = Axis("rmax", "rmax", None, "r_max of the rating scale (default: the largest truth rating; MovieLens: 5)", numeric=True)


@register("ab_ndcg", side={"categories"}, axes=[AB_ALPHA, AB_BETA, AB_RMAX], needs={"rows", "items"}, family="diversity", ties="settled", bounds=(0.0, float("inf")))
def ab_ndcg(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""αβ-nDCG@k (Parapar & Radlinski, RecSys 2021): accuracy and aspect diversity in one metric.

    Formula
    -------
    .. math::

        G[k] = 1 - \prod_{\varphi}\Bigl(1 - P(a_\varphi \mid u, i_k)\,\gamma^u_\varphi\,
               (1-\alpha)^{\tau_{\varphi,k-1}} \prod_r \bigl(1 - \beta\tfrac{r}{r_{max}}\bigr)^{\rho_{r,\varphi,k-1}}\Bigr)

    :math:`P(a_\varphi|u,i)` is 0 if *i* lacks aspect φ, α if the user has not rated *i*,
    :math:`\beta r_{u,i}/r_{max}` if rated; :math:`\gamma^u_\varphi` is the rating-weighted share
    of aspect φ among the user's truth items; τ and ρ count unrated and rated items with φ above
    rank *k*. DCG uses 1/log2(1+j); the normaliser is a greedy ideal list over the user's rated
    items, its ties broken without reading ids as alpha_ndcg's (the tie key also reads P). Defaults α = 0.02, β = 0.2 are receval's choice (the paper's values are unknown).

    Examples
    --------
    >>> from receval import evaluate
    >>> cats = {"item_id": [1, 2], "category": ["a", "b"]}
    >>> recs = {"user_id": [1, 1], "item_id": [1, 2], "score": [2.0, 1.0]}
    >>> truth = {"user_id": [1, 1], "item_id": [1, 2], "rating": [5.0, 5.0]}
    >>> evaluate(recs, truth, ["ab_ndcg@2"], categories=cats)["ab_ndcg@2"]   # the ideal order itself
    1.0
    """
    s = h.lists
    s.need("categories", "ab_ndcg")
    s.check_order_of_shared(ks, "ab_ndcg")
    t_offsets, t_items, t_ratings = s.kept_truth()  # the rows tdup keeps: γ and the ideal's candidates

    rows = _row_lists(h, s)

    def one(k: int) -> np.ndarray:
        k = _deepest(h, s, k)
        items, rating = (rows, None) if rows is not None else s.top(k)[::2]
        return _asp.alpha_beta_ndcg(items, rating, s.aspects, t_offsets, t_items, t_ratings,
                                    alpha=o["alpha"], beta=o["beta"], r_max=r_max, k=k)

    # rmax's default, the largest truth rating, is over all truth users (a batched engine
    # passes it in: no batch may see only its own users' maximum)
    r_max = o["rmax"] if o["rmax"] is not None else (h.side.truth_max if h.side is not None else None)

    return _per_k(h, ks, one)
