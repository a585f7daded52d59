r"""Popularity bias and novelty: ARP, APLT, ACLT, PopREO, PopRSP, EPC, EFD, Surprisal, Unexpectedness.

Item popularity :math:`\phi(i)` is read from the ``train`` side input (``user_id``, ``item_id``):
``count=rows`` counts its rows (RecTools, RecBole), ``count=users`` its distinct users
(Elliot). :math:`|U_{tr}|` is the number of distinct train users. The catalogue *I* is
``catalog`` if given, else the train items (see :mod:`receval.metrics.beyond`).

**The long-tail split** (``split`` and ``cut``) divides the catalogue into a short head *H*
and a long tail :math:`\Gamma = I \setminus H`:

* ``split=interactions`` (Elliot, Abdollahpouri et al. 2019): items by decreasing
  popularity, the head is the shortest prefix holding at least
  ``cut`` (default 0.8) of all train interactions of the catalogue;
* ``split=items`` (RecBole ``tail_ratio`` ≤ 1): the tail is the ``max(⌊cut·|I|⌋, 1)`` least
  popular items (default ``cut`` 0.1);
* ``split=count`` (RecBole ``tail_ratio`` > 1): the tail is the items with
  :math:`\phi(i) \le` ``cut`` (no default), an item unseen in train (:math:`\phi = 0`)
  included; ``aplt`` and ``aclt`` then read no catalogue.

A recommended item outside the catalogue is refused when the metric reads one
(:class:`receval.errors.OutsideCatalogue`, one rule for every such metric).

Items tied in popularity at the cut go by ``boundary``: ``level`` (the default) puts every
item as popular as the last one the rule takes on the same side (the head for
``interactions``, the tail for ``items``), so the split depends on the popularities only and
not on the ids; ``id`` breaks the tie by item id, the smaller first (Elliot, RecBole).

Per-user metrics read the top-k list :math:`L_k` (:math:`\ell_k` items) of each truth user:
every row at a position :math:`\le k`, so more than *k* rows when ``ties=optimistic`` puts
several at one position.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from ..errors import DataError, SpecError
from ..hits import Hits
from ..lists import ListSpace, encoder, index_in, unique_pairs
from ..options import Axis
from ..registry import register
from ..side import split_reads
from ._common import LIST_DEN, baseline_rows, baseline_top, expected_overlap, list_den, overlap, per_k, ratio_combine, row_sum, safe_div, ties_by_row_chance

# ---- shared pieces ---------------------------------------------------------------------------

_F = TypeVar("_F", bound=Callable[..., Any])

COUNT = Axis(
    "count", "count", "rows", "what the popularity φ(i) of an item counts in the train interactions",
    {"rows": "its train rows (RecTools AvgRecPopularity, RecBole AveragePopularity)", "users": "its distinct train users (Elliot)"},
)
SPLIT = Axis(
    "split", "split", "interactions", "how the catalogue is split into short head and long tail",
    {
        "interactions": "the head is the most popular items holding at least `cut` of the train interactions (Elliot pop_ratio, default 0.8); ties at the cut by `boundary`",
        "items": "the tail is the max(⌊cut·|I|⌋, 1) least popular items (RecBole tail_ratio ≤ 1, default 0.1); ties at the cut by `boundary`",
        "count": "the tail is the items with φ(i) ≤ cut, an item unseen in train (φ = 0) included; reads no catalogue (RecBole tail_ratio > 1)",
    },
)
BOUNDARY = Axis(
    "boundary", "bnd", "level", "which side of the head/tail split items tied in popularity at the cut go to",
    {
        "level": (
            "all items as popular as the last one the rule takes join it: the head for split=interactions, the tail "
            "for split=items (the split depends on the popularities only: the same for every renaming of the ids)"
        ),
        "id": "ties at the cut broken by item id, the smaller id first (Elliot's item index order, RecBole)",
    },
)
CUT = Axis("cut", "cut", None, "the parameter of `split`: head share of interactions (0.8), tail share of items (0.1), or a popularity count", numeric=True)


def _split_hook(o: dict, *_: object) -> dict:
    if o.get("cut") is None and "split" in o:
        if o["split"] == "count":
            raise SpecError("split=count needs the popularity bound: write cut=N (items with φ(i) ≤ N are the tail)")
        o = dict(o, cut={"interactions": 0.8, "items": 0.1}[o["split"]])
    if "split" in o and o["split"] != "count" and not 0 < o["cut"] <= 1:
        raise SpecError(f"split={o['split']} needs 0 < cut ≤ 1, got {o['cut']}")
    return o


def _popularity(h: Hits, count: str, metric: str) -> np.ndarray:
    """φ over the item codes of the shared space (0 for items outside train)."""
    s = h.lists
    s.need("train", metric)
    if count == "users":
        return h.memo(("popularity", count), lambda: s.popularity)
    return h.memo(("popularity", count), lambda: np.bincount(encoder(s.universe)(s.train[1]), minlength=s.n_items).astype(np.float64))


def _tail(h: Hits, o: dict, metric: str) -> np.ndarray:
    """Boolean over item codes (plus a False padding slot): whether the item is in the long tail Γ."""
    s = h.lists
    pop = _popularity(h, o["count"], metric)
    level = o.get("boundary", "level") == "level"
    return h.memo(("tail", o["count"], o["split"], o["cut"], level), lambda: _tail_of(s, pop, o, level))


def _tail_of(s: ListSpace, pop: np.ndarray, o: dict, level: bool) -> np.ndarray:
    cat = np.flatnonzero(s.to_catalog[:-1] >= 0)  # catalogue items in code (= id) order
    tail = np.zeros(s.n_items + 1, dtype=bool)
    p = pop[cat]
    if o["split"] == "interactions":
        order = cat[np.lexsort((cat, -p))]
        cum = np.cumsum(pop[order])
        j = int(np.searchsorted(cum, o["cut"] * cum[-1], side="left")) if len(cum) else 0
        if level and len(order):  # the head takes every item as popular as its last one
            j = int(np.flatnonzero(pop[order] >= pop[order[min(j, len(order) - 1)]])[-1])
        tail[order[j + 1:]] = True
    elif o["split"] == "items":
        order = cat[np.lexsort((cat, p))]
        n = max(int(len(cat) * o["cut"]), 1)
        if level and len(order):  # the tail takes every item as unpopular as its last one
            n = int(np.flatnonzero(pop[order] <= pop[order[min(n, len(order)) - 1]])[-1]) + 1
        tail[order[:n]] = True
    else:  # split=count reads no catalogue: every item with φ(i) ≤ cut (0 outside train) is in the tail
        tail[:-1] = pop <= o["cut"]
    return tail


def _lists(h: Hits, k: int, metric: str, o: dict | None = None) -> np.ndarray:
    """Top-k item codes [U, k] (−1 pad), every item in the catalogue (else
    :class:`receval.errors.OutsideCatalogue`); ``split=count`` (in ``o``) reads no catalogue
    and checks none."""
    s = h.lists
    if o is None or o.get("split") != "count":
        s.catalog_top(k, metric)  # the check
    return s.top(k)[0]


def _top_weights(h: Hits, k: int, metric: str | None = None) -> np.ndarray:
    """``ties=average``: each row's chance to be in the top k over the orderings of its tie group
    (1 inside, m/n for a group with m of its n slots inside, 0 beyond); with ``metric``, a row
    that may enter the top k and is outside the catalogue is refused as in :func:`_lists`."""
    w = h.top_chance(k)
    if metric is not None:
        s = h.lists
        s.check_in_catalog(s.row_code[w > 0], metric)
    return w


def _checked(o: dict, metric: str) -> str | None:
    """The metric name when its split reads the catalogue (so its items are checked), else None."""
    return None if o.get("split") == "count" else metric


def _top_sum(h: Hits, k: int, f: np.ndarray, metric: str | None = None) -> np.ndarray:
    """``ties=average``: per user E[Σ_{i ∈ L_k} f(i)] = Σ over rows of the row's chance to be in
    the top k × f of its item (``f`` indexed by item code)."""
    w = _top_weights(h, k, metric)
    return np.bincount(h.row_user, weights=w * f[h.lists.row_code], minlength=h.n_users)


# ---- ARP -----------------------------------------------------------------------------------

ARP_SCALE = Axis(
    "scale", "scale", "count", "the unit of φ(i)",
    {"count": "φ(i) itself", "share": "φ(i) / Σ_j φ(j), its share of the train interactions (RecTools normalize=True, count=rows)"},
)


@ties_by_row_chance
@register("arp", side={"train"}, axes=[COUNT, LIST_DEN, ARP_SCALE], needs={"rows", "items"}, family="popularity", ties="closed", bounds=(0.0, float("inf")))
def arp(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""ARP@k: average recommendation popularity, the mean train popularity of a user's top-k items.

    Formula
    -------
    .. math:: \mathrm{ARP}@k = \frac{1}{D} \sum_{i \in L_k} \phi(i), \qquad D = \ell_k \;|\; k

    :math:`\phi(i)` counts train rows (``count=rows``) or distinct train users
    (``count=users``); items absent from train have :math:`\phi = 0`; ``scale=share`` divides
    by :math:`\sum_j \phi(j)`. 0 for an empty list (the ``norecs`` policy applies).

    Examples
    --------
    The popularity example (:func:`receval.examples.popular`: items 10 then 20 for user 1)
    with a train where 20 has three rows from two users:

    >>> from receval.examples import popular
    >>> train = {"user_id": [1, 2, 3, 1, 1], "item_id": [10, 10, 10, 20, 20]}
    >>> popular("arp@2", train=train)               # (3 + 2) / 2
    2.5
    >>> popular("arp(count=users)@2", train=train)  # (3 + 1) / 2
    2.0
    """
    pop = np.r_[_popularity(h, o["count"], "arp"), 0.0]
    if o["scale"] == "share":
        pop = pop / pop.sum()

    def one(k: int) -> np.ndarray:
        items = h.lists.top(k)[0]
        if h.row_lo is not None:  # ties=average: rows weighted by their chance to be in the top k
            return safe_div(_top_sum(h, k, pop), list_den(items, k, o))
        return safe_div(row_sum(pop[items], k), list_den(items, k, o))

    return per_k(ks, one)


# ---- APLT / ACLT ---------------------------------------------------------------------------


@ties_by_row_chance
@register("aplt", side=split_reads, axes=[COUNT, SPLIT, CUT, BOUNDARY, LIST_DEN], needs={"rows", "items"}, family="popularity", resolve_hook=_split_hook, ties="closed", bounds=(0.0, 1.0))
def aplt(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""APLT@k: average percentage of long-tail items, the share of a user's top k in the long tail Γ.

    Formula
    -------
    .. math:: \mathrm{APLT}@k = \frac{|L_k \cap \Gamma|}{D}, \qquad D = \ell_k \;|\; k

    Γ by ``split`` and ``cut`` (module docs). Elliot APLT: ``split=interactions,count=users``;
    RecBole TailPercentage: ``split=items`` (or ``count``), ``count=rows``, ``denominator=k``.

    Examples
    --------
    On the popularity example (:func:`receval.examples.popular`: φ(10) = 4, φ(20) = 1; user 1
    is recommended 10 then 20):

    >>> from receval.examples import popular
    >>> popular("aplt@2")   # head {10} holds 4/5 ≥ 0.8: tail {20}, 1/2
    0.5
    """
    tail = _tail(h, o, "aplt")

    def one(k: int) -> np.ndarray:
        if h.row_lo is not None:  # ties=average: rows weighted by their chance to be in the top k
            return safe_div(_top_sum(h, k, tail.astype(np.float64), _checked(o, "aplt")), list_den(h.lists.top(k)[0], k, o))
        items = _lists(h, k, "aplt", o)
        return safe_div(tail[items].sum(axis=1).astype(np.float64), list_den(items, k, o))

    return per_k(ks, one)


@ties_by_row_chance
@register("aclt", side=split_reads, axes=[COUNT, SPLIT, CUT, BOUNDARY], needs={"rows", "items"}, family="popularity", resolve_hook=_split_hook, ties="closed", bounds=(0.0, float("inf")))
def aclt(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""ACLT@k: average coverage of long-tail items, how many of a user's top k are in the long tail Γ.

    Formula
    -------
    .. math:: \mathrm{ACLT}@k = |L_k \cap \Gamma|

    Γ by ``split`` and ``cut`` (module docs); Elliot ACLT: ``split=interactions,count=users``.

    Examples
    --------
    On the popularity example (:func:`receval.examples.popular`: φ(10) = 4, φ(20) = 1; user 1
    is recommended 10 then 20):

    >>> from receval.examples import popular
    >>> popular("aclt(split=count,cut=1)@2")   # 20 has φ = 1 ≤ 1
    1.0
    """
    tail = _tail(h, o, "aclt")
    if h.row_lo is not None:  # ties=average: rows weighted by their chance to be in the top k
        return per_k(ks, lambda k: _top_sum(h, k, tail.astype(np.float64), _checked(o, "aclt")))
    return per_k(ks, lambda k: tail[_lists(h, k, "aclt", o)].sum(axis=1).astype(np.float64))


# ---- PopREO / PopRSP -----------------------------------------------------------------------


def _group_partial(h: Hits, ks: list[int], o: dict, metric: str) -> dict:
    """Sufficient statistics of one batch of users: per k the numerators and denominators of
    (P_H, P_Γ); sums over disjoint batches (the split depends on the whole side inputs only)."""
    s = h.lists
    tail = _tail(h, o, metric)
    um = h.length > 0 if o["users"] == "listed" else np.ones(h.n_users, dtype=bool)
    nums, dens = [], []
    for k in ks:
        items = _lists(h, k, metric)
        valid = items >= 0
        in_tail = tail[items] & valid
        in_head = ~tail[items] & valid
        if metric == "popreo":
            t_user = np.repeat(np.arange(h.n_users), np.diff(s.t_offsets))
            t_items = s.t_items[s.t_rel & um[t_user]]
            t_items = t_items[s.to_catalog[t_items] >= 0]  # relevant items outside the catalogue belong to no group
            den = np.array([(~tail[t_items]).sum(), tail[t_items].sum()], dtype=np.float64)
            _, rel, _ = s.top(k)
            num = np.array([(in_head & rel).sum(), (in_tail & rel).sum()], dtype=np.float64)
        else:
            # Σ_u |g \ I_u^train| over the averaged users
            cat = np.flatnonzero(s.to_catalog[:-1] >= 0)
            n_head, n_tail = float((~tail[cat]).sum()), float(tail[cat].sum())
            tu, ti = s.train
            codes = encoder(s.universe)(ti)
            uidx, known = index_in(h.user_ids, tu)
            known &= (s.to_catalog[codes] >= 0) & um[uidx]
            pairs = unique_pairs(uidx[known], codes[known])
            seen_tail = float(tail[pairs[:, 1]].sum())
            seen_head = float(len(pairs)) - seen_tail
            n_u = float(um.sum())
            den = np.array([n_u * n_head - seen_head, n_u * n_tail - seen_tail])
            num = np.array([in_head.sum(), in_tail.sum()], dtype=np.float64)
        nums.append(num)
        dens.append(den)
    return {"num": np.array(nums), "den": np.array(dens)}


GROUP_USERS = Axis(
    "users", "users", "truth", "whose lists and truth enter the group sums",
    {"truth": "every truth user (Zhu et al. 2020)", "listed": "the truth users with a recommendation list (Elliot iterates its recommendation lists)"},
)


def _popreo_partial(h: Hits, ks: list[int], o: dict) -> dict:
    return _group_partial(h, ks, o, "popreo")


def _popreo_combine(parts: list[dict], ks: list[int], o: dict) -> np.ndarray:
    return ratio_combine(parts, "popreo")


def _poprsp_partial(h: Hits, ks: list[int], o: dict) -> dict:
    return _group_partial(h, ks, o, "poprsp")


def _poprsp_combine(parts: list[dict], ks: list[int], o: dict) -> np.ndarray:
    return ratio_combine(parts, "poprsp")


def _register_group(name: str, partial: Callable[..., dict], combine: Callable[..., np.ndarray]) -> Callable[[_F], _F]:
    """Register a head/tail group metric (PopREO, PopRSP): global over the split, 0 best."""
    return register(name, side={"train", "catalog"}, axes=[COUNT, SPLIT, CUT, BOUNDARY, GROUP_USERS], kind="global",
                    context=("rel", "order", "ties", "dup", "tdup"), needs={"rows", "items"}, family="popularity", resolve_hook=_split_hook,
                    partial=partial, combine=combine, ties="topk_set", higher_is_better=False, bounds=(0.0, float("inf")))


@_register_group("popreo", _popreo_partial, _popreo_combine)
def popreo(h: Hits, ks: list[int], o: dict) -> None:
    r"""PopREO@k: popularity-based ranking-based equal opportunity (Zhu et al. 2020; Elliot PopREO).

    Formula
    -------
    .. math::

        P_g = \frac{\sum_u |L^u_k \cap R_u \cap g|}{\sum_u |R_u \cap g|}, \quad g \in \{H, \Gamma\},
        \qquad \mathrm{PopREO}@k = \frac{\operatorname{std}(P_H, P_\Gamma)}{\operatorname{mean}(P_H, P_\Gamma)} = \frac{|P_H - P_\Gamma|}{P_H + P_\Gamma}

    over the users ``users`` names; :math:`R_u` their relevant items; population standard
    deviation; 0 is equal opportunity. The split by ``split``/``cut`` (module docs).

    Examples
    --------
    The popularity example's train (:func:`receval.examples.popular`: head {10}), user 1
    recommended 10 and 30 and liking 10 and 20:

    >>> from receval.examples import popular
    >>> recs = {"user_id": [1, 1], "item_id": [10, 30], "score": [2.0, 1.0]}
    >>> truth = {"user_id": [1, 1], "item_id": [10, 20]}
    >>> # head {10}: P_H = 1/1; tail {20}: P_Γ = 0/1 → |1 − 0| / (1 + 0)
    >>> popular("popreo@2", recs=recs, truth=truth, catalog=[10, 20, 30])
    1.0
    """


@_register_group("poprsp", _poprsp_partial, _poprsp_combine)
def poprsp(h: Hits, ks: list[int], o: dict) -> None:
    r"""PopRSP@k: popularity-based ranking-based statistical parity (Zhu et al. 2020; Elliot PopRSP).

    Formula
    -------
    .. math::

        P_g = \frac{\sum_u |L^u_k \cap g|}{\sum_u |g \setminus I^{tr}_u|}, \quad g \in \{H, \Gamma\},
        \qquad \mathrm{PopRSP}@k = \frac{\operatorname{std}(P_H, P_\Gamma)}{\operatorname{mean}(P_H, P_\Gamma)}

    over the users ``users`` names; :math:`I^{tr}_u` the user's train items (population
    standard deviation; 0 is parity).

    Examples
    --------
    The popularity example's train (:func:`receval.examples.popular`: head {10}), a user 5
    without train items recommended 10 and 30:

    >>> from receval.examples import popular
    >>> recs = {"user_id": [5, 5], "item_id": [10, 30], "score": [2.0, 1.0]}
    >>> truth = {"user_id": [5], "item_id": [30]}
    >>> # head {10}: P_H = 1/1, tail {20, 30}: P_Γ = 1/2 → (1/4) / (3/4)
    >>> popular("poprsp@2", recs=recs, truth=truth, catalog=[10, 20, 30])
    0.333333
    """


# ---- EPC / EFD -----------------------------------------------------------------------------

DISCOUNT = Axis(
    "discount", "disc", "log", "the rank discount disc(i)",
    {"log": "1 / log2(i + 1) (Vargas & Castells 2011 with the nDCG discount)", "none": "1 at every position"},
)
RELEVANCE = Axis(
    "relevance", "relv", "hits", "which recommended items contribute",
    {"hits": "only the user's relevant items (relevance-aware, Vargas & Castells' rel(i, u))", "any": "every recommended item (relevance-unaware)"},
)


def _expected(h: Hits, ks: list[int], o: dict, metric: str) -> np.ndarray:
    s = h.lists
    pop = _popularity(h, "users", metric)
    n = float(s.n_train_users)
    if metric == "epc":
        nov = 1.0 - pop / n
    else:
        nov = -np.log2(np.maximum(pop, 1.0) / n)  # items unseen in train count as seen by one user
    nov = np.r_[nov, 0.0]

    def one(k: int) -> np.ndarray:
        if h.row_lo is not None:  # ties=average: each row's disc averaged over its group's slots ≤ k
            pos = np.arange(1, h.max_pos + 1, dtype=np.float64)
            w = h.slot_mean(k, 1.0 / np.log2(pos + 1.0) if o["discount"] == "log" else np.ones(len(pos)))
            t = h.row_truth
            use = ((t >= 0) & h.truth_rel[np.maximum(t, 0)]) if o["relevance"] == "hits" else np.ones(len(w), dtype=bool)
            num = np.bincount(h.row_user, weights=w * use * nov[s.row_code], minlength=h.n_users)
            return safe_div(num, np.bincount(h.row_user, weights=w, minlength=h.n_users))
        items, rel, _ = s.top(k)
        pos = s.top_pos(k)  # the rows' positions (tied rows share one under ties=optimistic)
        disc = 1.0 / np.log2(pos + 1.0) if o["discount"] == "log" else np.ones(items.shape)
        valid = items >= 0
        w = np.where(valid, disc, 0.0)
        use = rel if o["relevance"] == "hits" else valid
        # summed row by row in position order, as the tie-averaged form above sums: a user's value
        # is the same bits whether or not other users (another batch) have ties
        user = np.broadcast_to(np.arange(items.shape[0])[:, None], items.shape)[valid]
        num = np.bincount(user, weights=(w * use * nov[items])[valid], minlength=items.shape[0])
        return safe_div(num, np.bincount(user, weights=w[valid], minlength=items.shape[0]))

    return per_k(ks, one)


@register("epc", side={"train"}, axes=[DISCOUNT, RELEVANCE], needs={"rows", "items"}, family="popularity", ties="closed", bounds=(0.0, 1.0))
def epc(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""EPC@k: expected popularity complement (Vargas & Castells, RecSys 2011).

    Formula
    -------
    .. math::

        \mathrm{EPC}@k = \frac{\sum_{i=1}^{\ell_k} \mathrm{disc}(i)\, r_i \,\bigl(1 - \phi(L_i)/|U_{tr}|\bigr)}{\sum_{i=1}^{\ell_k} \mathrm{disc}(i)}

    :math:`\phi` the distinct train users of the item, :math:`r_i = rel_i` (``relevance=hits``)
    or 1 (``relevance=any``), disc by ``discount``. 0 for an empty list. Elliot is not installed
    here: its EPC is not verified against this form.

    With ``ties=average`` each item's :math:`\mathrm{disc}(i)` is its mean over the positions
    of its tie group inside the top k, :math:`\frac{1}{n}\sum_{i=lo}^{\min(hi,k)} \mathrm{disc}(i)`
    (the expectation over the orderings of the ties; the denominator does not depend on them).

    Examples
    --------
    On the popularity example (:func:`receval.examples.popular`: φ(10) = 4, φ(20) = 1 of
    |U_tr| = 4; user 1 is recommended 10 then 20 and likes 20):

    >>> from receval.examples import popular
    >>> popular("epc@2")   # hit at 2: (1/log2 3)(1 − 1/4) / (1 + 1/log2 3)
    0.29014
    >>> popular("epc(discount=none,relevance=any)@2")   # (0 + 3/4)/2
    0.375
    """
    return _expected(h, ks, o, "epc")


@register("efd", side={"train"}, axes=[DISCOUNT, RELEVANCE], needs={"rows", "items"}, family="popularity", ties="closed", bounds=(0.0, float("inf")))
def efd(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""EFD@k: expected free discovery (Vargas & Castells, RecSys 2011), the discounted mean self-information.

    Formula
    -------
    .. math::

        \mathrm{EFD}@k = \frac{\sum_{i=1}^{\ell_k} \mathrm{disc}(i)\, r_i \,\bigl(-\log_2 \max(\phi(L_i), 1)/|U_{tr}|\bigr)}{\sum_{i=1}^{\ell_k} \mathrm{disc}(i)}

    as EPC with the self-information :math:`-\log_2 \phi/|U_{tr}|` (items unseen in train count
    as seen by one user). Elliot is not installed here: its EFD is not verified against this form.
    ``ties=average`` as for EPC.

    Examples
    --------
    On the popularity example (:func:`receval.examples.popular`, as for EPC):

    >>> from receval.examples import popular
    >>> popular("efd(discount=none,relevance=any)@2")   # (−log2(4/4) − log2(1/4))/2 = (0 + 2)/2
    1.0
    """
    return _expected(h, ks, o, "efd")


# ---- Surprisal (RePlay) ----------------------------------------------------------------------


@ties_by_row_chance
@register("surprisal", side={"train"}, axes=[LIST_DEN], needs={"rows", "items"}, family="popularity", ties="closed", bounds=(0.0, 1.0))
def surprisal(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""Surprisal@k: normalised self-information of the recommended items (RePlay Surprisal).

    Formula
    -------
    .. math::

        \mathrm{Surprisal}@k = \frac{1}{D}\sum_{i \in L_k} \frac{\log_2 (|U_{tr}| / \phi(i))}{\log_2 |U_{tr}|},
        \qquad D = k \;|\; \ell_k

    :math:`\phi` the distinct train users; an item unseen in train weighs 1. RePlay divides by
    k (``denominator=k``). Needs at least two train users.

    Examples
    --------
    The popularity example's train (:func:`receval.examples.popular`: φ(20) = 1 of
    |U_tr| = 4), user 1 recommended 20 and the unseen 30:

    >>> from receval.examples import popular
    >>> recs = {"user_id": [1, 1], "item_id": [20, 30], "score": [2.0, 1.0]}
    >>> popular("surprisal(denominator=k)@4", recs=recs)   # (log2 4 / log2 4 + 1) / 4
    0.5
    """
    s = h.lists
    pop = _popularity(h, "users", "surprisal")
    n = float(s.n_train_users)
    if n < 2:
        raise DataError("surprisal needs at least two train users (it divides by log2 |U_train|)")
    w = np.where(pop > 0, np.log2(n / np.maximum(pop, 1.0)) / np.log2(n), 1.0)
    w = np.r_[w, 0.0]

    def one(k: int) -> np.ndarray:
        items = s.top(k)[0]
        if h.row_lo is not None:  # ties=average: rows weighted by their chance to be in the top k
            return safe_div(_top_sum(h, k, w), list_den(items, k, o))
        return safe_div(row_sum(w[items], k), list_den(items, k, o))

    return per_k(ks, one)


# ---- comparisons with a baseline run ---------------------------------------------------------


@register("unexpectedness", side={"baseline"}, needs={"rows", "items"}, family="popularity", ties="closed", bounds=(0.0, 1.0))
def unexpectedness(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""Unexpectedness@k: the share of the top k not in a baseline run's top k (RePlay Unexpectedness).

    Formula
    -------
    .. math:: \mathrm{Unexp}@k = 1 - \frac{|L_k \cap B_k|}{k}

    :math:`B_k` the top k of the ``baseline`` run (ordered by its rank, else score, else rows).
    :math:`|L_k \cap B_k|` counts list positions: under ``dup=keep`` a repeated row is a
    position in it as in *k*, as in every other list metric. A user without recommendations or
    without baseline recommendations scores 0 (RePlay).

    ``ties=average``: each row weighs its chance (m/n) to be in the top k, and each baseline row
    its chance to be in the baseline's top k (the two lists' tie orders are independent), which
    is the expectation over the orderings of the ties of both, the value being linear in them.

    Examples
    --------
    >>> from receval import evaluate
    >>> recs = {"user_id": [1, 1], "item_id": [10, 20], "score": [2.0, 1.0]}
    >>> base = {"user_id": [1, 1], "item_id": [20, 30], "score": [2.0, 1.0]}
    >>> truth = {"user_id": [1], "item_id": [10]}
    >>> evaluate(recs, truth, ["unexpectedness@2"], baseline=base)["unexpectedness@2"]   # 1 − 1/2
    0.5
    """
    s = h.lists

    def one(k: int) -> np.ndarray:
        items = s.top(k)[0]
        rows = baseline_rows(h, "unexpectedness")
        base = baseline_top(rows, h.n_users, k)
        has = ((items >= 0).any(axis=1)) & ((base != -1).any(axis=1))
        if h.options.get("ties") == "average":  # the expected overlap over the ties of both lists
            return np.where(has, 1.0 - expected_overlap(h, rows, k, k, s.row_code, s.n_items) / k, 0.0)
        return np.where(has, 1.0 - overlap(items, base) / k, 0.0)

    return per_k(ks, one)
