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
  :math:`\phi(i) \le` ``cut`` (no default).

Items tied in popularity at the cut go by ``boundary``: ``level`` (the default) puts every
item as popular as the last one the rule takes on the same side (the head for
``interactions``, the tail for ``items``), so the split depends on the popularities only and
not on the ids; ``id`` breaks the tie by item id, the smaller first (Elliot, RecBole).

Per-user metrics read the top-k list :math:`L_k` (:math:`\ell_k` items) of each truth user.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DataError, SpecError
from ..hits import Hits
from ..lists import ListSpace, encoder, index_in, unique_pairs
from ..options import Axis
from ..registry import register

# ---- shared pieces ---------------------------------------------------------------------------

COUNT = Axis(
    "count", "count", "rows", "what the popularity φ(i) of an item counts in the train interactions",
    {"rows": "its train rows (RecTools AvgRecPopularity, RecBole AveragePopularity)", "users": "its distinct train users (Elliot)"},
)
SPLIT = Axis(
    "split", "split", "interactions", "how the catalogue is split into short head and long tail",
    {
        "interactions": "the head is the most popular items holding at least `cut` of the train interactions (Elliot pop_ratio, default 0.8); ties at the cut by `boundary`",
        "items": "the tail is the max(⌊cut·|I|⌋, 1) least popular items (RecBole tail_ratio ≤ 1, default 0.1); ties at the cut by `boundary`",
        "count": "the tail is the items with φ(i) ≤ cut (RecBole tail_ratio > 1)",
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
LIST_DEN = Axis(
    "denominator", "den", "length", "what a per-user sum over the list is divided by",
    {"length": "ℓ_k, the user's list length (RecTools, Elliot)", "k": "the cut-off k (RecBole, RePlay)"},
)


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
    else:
        tail[cat[p <= o["cut"]]] = True
    return tail


def _lists(h: Hits, k: int, metric: str) -> np.ndarray:
    """Top-k item codes [U, k] (−1 pad), every item in the catalogue (else a one-line error)."""
    s = h.lists
    s.catalog_top(k, metric)  # the check
    return s.top(k)[0]


def _top_weights(h: Hits, k: int, metric: str | None = None) -> np.ndarray:
    """``ties=average``: each row's chance to be in the top k over the orderings of its tie group
    (1 inside, m/n for a group with m of its n slots inside, 0 beyond); with ``metric``, a row
    that may enter the top k and is outside the catalogue is refused as in :func:`_lists`."""
    w = h.top_chance(k)
    if metric is not None:
        s = h.lists
        s.check_in_catalog((w > 0) & (s.to_catalog[s.row_code] < 0), metric)
    return w


def _top_sum(h: Hits, k: int, f: np.ndarray, metric: str | None = None) -> np.ndarray:
    """``ties=average``: per user E[Σ_{i ∈ L_k} f(i)] = Σ over rows of the row's chance to be in
    the top k × f of its item (``f`` indexed by item code)."""
    w = _top_weights(h, k, metric)
    return np.bincount(h.row_user, weights=w * f[h.lists.row_code], minlength=h.n_users)


def _den(items: np.ndarray, k: int, o: dict) -> np.ndarray:
    return np.full(items.shape[0], float(k)) if o["denominator"] == "k" else (items >= 0).sum(axis=1).astype(np.float64)


def _safe(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out = np.zeros(np.broadcast(num, den).shape)
    np.divide(num, den, out=out, where=den != 0)
    return out


def _per_k(ks: list[int], fn) -> np.ndarray:
    return np.stack([fn(k) for k in ks], axis=1)


# ---- ARP -----------------------------------------------------------------------------------

ARP_SCALE = Axis(
    "scale", "scale", "count", "the unit of φ(i)",
    {"count": "φ(i) itself", "share": "φ(i) / Σ_j φ(j), its share of the train interactions (RecTools normalize=True, count=rows)"},
)


@register("arp", axes=[COUNT, LIST_DEN, ARP_SCALE], needs={"rows", "items"}, family="popularity")
def arp(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""ARP@k: average recommendation popularity, the mean train popularity of a user's top-k items.

    Formula
    -------
    .. math:: \mathrm{ARP}@k = \frac{1}{D} \sum_{i \in L_k} \phi(i), \qquad D = \ell_k \;|\; k

    :math:`\phi(i)` counts train rows (``count=rows``) or distinct train users
    (``count=users``); items absent from train have :math:`\phi = 0`; ``scale=share`` divides
    by :math:`\sum_j \phi(j)`. 0 for an empty list (the ``norecs`` policy applies).

    ``ties=average``: each row weighs its chance (m/n) to be in the top k, which is the
    expectation over the orderings of the ties, the value being linear in the rows.

    Examples
    --------
    >>> from receval import evaluate
    >>> train = {"user_id": [1, 2, 3, 1, 1], "item_id": [10, 10, 10, 20, 20]}
    >>> recs = {"user_id": [1, 1], "item_id": [10, 20], "score": [2.0, 1.0]}
    >>> truth = {"user_id": [1], "item_id": [10]}
    >>> evaluate(recs, truth, ["arp@2"], train=train)["arp@2"]               # (3 + 2) / 2
    2.5
    >>> evaluate(recs, truth, ["arp(count=users)@2"], train=train)["arp(count=users)@2"]   # (3 + 1) / 2
    2.0
    """
    pop = np.r_[_popularity(h, o["count"], "arp"), 0.0]
    if o["scale"] == "share":
        pop = pop / pop.sum()

    def one(k: int) -> np.ndarray:
        items = h.lists.top(k)[0]
        if h.row_lo is not None:  # ties=average: rows weighted by their chance to be in the top k
            return _safe(_top_sum(h, k, pop), _den(items, k, o))
        return _safe(pop[items].sum(axis=1), _den(items, k, o))

    return _per_k(ks, one)


# ---- APLT / ACLT ---------------------------------------------------------------------------


@register("aplt", axes=[COUNT, SPLIT, CUT, BOUNDARY, LIST_DEN], needs={"rows", "items"}, family="popularity", resolve_hook=_split_hook)
def aplt(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""APLT@k: average percentage of long-tail items, the share of a user's top k in the long tail Γ.

    Formula
    -------
    .. math:: \mathrm{APLT}@k = \frac{|L_k \cap \Gamma|}{D}, \qquad D = \ell_k \;|\; k

    Γ by ``split`` and ``cut`` (module docs). Elliot APLT: ``split=interactions,count=users``;
    RecBole TailPercentage: ``split=items`` (or ``count``), ``count=rows``, ``denominator=k``.

    ``ties=average``: each row weighs its chance (m/n) to be in the top k, which is the
    expectation over the orderings of the ties, the value being linear in the rows.

    Examples
    --------
    >>> from receval import evaluate
    >>> train = {"user_id": [1, 2, 3, 4, 1], "item_id": [10, 10, 10, 10, 20]}   # φ: 10 → 4, 20 → 1
    >>> recs = {"user_id": [1, 1], "item_id": [10, 20], "score": [2.0, 1.0]}
    >>> truth = {"user_id": [1], "item_id": [10]}
    >>> evaluate(recs, truth, ["aplt@2"], train=train)["aplt@2"]   # head {10} holds 4/5 ≥ 0.8: tail {20}, 1/2
    0.5
    """
    tail = _tail(h, o, "aplt")

    def one(k: int) -> np.ndarray:
        if h.row_lo is not None:  # ties=average: rows weighted by their chance to be in the top k
            return _safe(_top_sum(h, k, tail.astype(np.float64), "aplt"), _den(h.lists.top(k)[0], k, o))
        items = _lists(h, k, "aplt")
        return _safe(tail[items].sum(axis=1).astype(np.float64), _den(items, k, o))

    return _per_k(ks, one)


@register("aclt", axes=[COUNT, SPLIT, CUT, BOUNDARY], needs={"rows", "items"}, family="popularity", resolve_hook=_split_hook)
def aclt(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""ACLT@k: average coverage of long-tail items, how many of a user's top k are in the long tail Γ.

    Formula
    -------
    .. math:: \mathrm{ACLT}@k = |L_k \cap \Gamma|

    Γ by ``split`` and ``cut`` (module docs); Elliot ACLT: ``split=interactions,count=users``.

    ``ties=average``: each row weighs its chance (m/n) to be in the top k, which is the
    expectation over the orderings of the ties, the value being linear in the rows.

    Examples
    --------
    >>> from receval import evaluate
    >>> train = {"user_id": [1, 2, 3, 4, 1], "item_id": [10, 10, 10, 10, 20]}
    >>> recs = {"user_id": [1, 1], "item_id": [10, 20], "score": [2.0, 1.0]}
    >>> truth = {"user_id": [1], "item_id": [10]}
    >>> evaluate(recs, truth, ["aclt(split=count,cut=1)@2"], train=train)["aclt(split=count,cut=1)@2"]   # 20 has φ = 1 ≤ 1
    1.0
    """
    tail = _tail(h, o, "aclt")
    if h.row_lo is not None:  # ties=average: rows weighted by their chance to be in the top k
        return _per_k(ks, lambda k: _top_sum(h, k, tail.astype(np.float64), "aclt"))
    return _per_k(ks, lambda k: tail[_lists(h, k, "aclt")].sum(axis=1).astype(np.float64))


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


def _ratio_combine(parts: list[dict], metric: str, names: Any = None) -> np.ndarray:
    """std/mean (population) over groups of Σ num / Σ den, one value per k."""
    num = sum(p["num"] for p in parts)
    den = sum(p["den"] for p in parts)
    if (den == 0).any():
        j = np.flatnonzero((den == 0).any(axis=0))[0]
        which = (names[j] if names is not None else ("short head", "long tail")[j])
        raise DataError(f"{metric}: the group '{which}' is empty for these users (it divides by it); choose other groups or another split/cut")
    p = num / den
    m = p.mean(axis=1)
    return np.where(m == 0, 0.0, p.std(axis=1) / np.where(m == 0, 1.0, m))


GROUP_USERS = Axis(
    "users", "users", "truth", "whose lists and truth enter the group sums",
    {"truth": "every truth user (Zhu et al. 2020)", "listed": "the truth users with a recommendation list (Elliot iterates its recommendation lists)"},
)


def _popreo_partial(h: Hits, ks: list[int], o: dict) -> dict:
    return _group_partial(h, ks, o, "popreo")


def _popreo_combine(parts: list[dict], ks: list[int], o: dict) -> np.ndarray:
    return _ratio_combine(parts, "popreo")


def _poprsp_partial(h: Hits, ks: list[int], o: dict) -> dict:
    return _group_partial(h, ks, o, "poprsp")


def _poprsp_combine(parts: list[dict], ks: list[int], o: dict) -> np.ndarray:
    return _ratio_combine(parts, "poprsp")


@register("popreo", axes=[COUNT, SPLIT, CUT, BOUNDARY, GROUP_USERS], kind="global", context=("rel", "order", "ties", "dup", "tdup"), needs={"rows", "items"},
          family="popularity", resolve_hook=_split_hook, partial=_popreo_partial, combine=_popreo_combine, topk_set=True)
def popreo(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""PopREO@k: popularity-based ranking-based equal opportunity (Zhu et al. 2020; Elliot PopREO).

    Formula
    -------
    .. math::

        P_g = \frac{\sum_u |L^u_k \cap R_u \cap g|}{\sum_u |R_u \cap g|}, \quad g \in \{H, \Gamma\},
        \qquad \mathrm{PopREO}@k = \frac{\operatorname{std}(P_H, P_\Gamma)}{\operatorname{mean}(P_H, P_\Gamma)} = \frac{|P_H - P_\Gamma|}{P_H + P_\Gamma}

    over the truth users (``users=truth``) or those with a recommendation list
    (``users=listed``, Elliot); :math:`R_u` their relevant items; population standard
    deviation; 0 is equal opportunity. The split by ``split``/``cut`` (module docs).

    Examples
    --------
    >>> from receval import evaluate
    >>> train = {"user_id": [1, 2, 3, 4, 1], "item_id": [10, 10, 10, 10, 20]}
    >>> recs = {"user_id": [1, 1], "item_id": [10, 30], "score": [2.0, 1.0]}
    >>> truth = {"user_id": [1, 1], "item_id": [10, 20]}
    >>> # head {10}: P_H = 1/1; tail {20}: P_Γ = 0/1 → |1 − 0| / (1 + 0)
    >>> evaluate(recs, truth, ["popreo@2"], train=train, catalog=[10, 20, 30])["popreo@2"]
    1.0
    """
    return _popreo_combine([_popreo_partial(h, ks, o)], ks, o)


@register("poprsp", axes=[COUNT, SPLIT, CUT, BOUNDARY, GROUP_USERS], kind="global", context=("rel", "order", "ties", "dup", "tdup"), needs={"rows", "items"},
          family="popularity", resolve_hook=_split_hook, partial=_poprsp_partial, combine=_poprsp_combine, topk_set=True)
def poprsp(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""PopRSP@k: popularity-based ranking-based statistical parity (Zhu et al. 2020; Elliot PopRSP).

    Formula
    -------
    .. math::

        P_g = \frac{\sum_u |L^u_k \cap g|}{\sum_u |g \setminus I^{tr}_u|}, \quad g \in \{H, \Gamma\},
        \qquad \mathrm{PopRSP}@k = \frac{\operatorname{std}(P_H, P_\Gamma)}{\operatorname{mean}(P_H, P_\Gamma)}

    over the truth users (``users=truth``) or those with a recommendation list
    (``users=listed``, Elliot); :math:`I^{tr}_u` the user's train items (population standard
    deviation; 0 is parity).

    Examples
    --------
    >>> from receval import evaluate
    >>> train = {"user_id": [1, 2, 3, 4, 1], "item_id": [10, 10, 10, 10, 20]}
    >>> recs = {"user_id": [5, 5], "item_id": [10, 30], "score": [2.0, 1.0]}
    >>> truth = {"user_id": [5], "item_id": [30]}
    >>> # user 5 has no train items: head {10}: P_H = 1/1, tail {20, 30}: P_Γ = 1/2 → (1/4) / (3/4)
    >>> round(evaluate(recs, truth, ["poprsp@2"], train=train, catalog=[10, 20, 30])["poprsp@2"], 6)
    0.333333
    """
    return _poprsp_combine([_poprsp_partial(h, ks, o)], ks, o)


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
            return _safe(num, np.bincount(h.row_user, weights=w, minlength=h.n_users))
        items, rel, _ = s.top(k)
        pos = np.arange(1, items.shape[1] + 1, dtype=np.float64)
        disc = 1.0 / np.log2(pos + 1.0) if o["discount"] == "log" else np.ones(items.shape[1])
        valid = items >= 0
        w = np.where(valid, disc[None, :], 0.0)
        use = rel if o["relevance"] == "hits" else valid
        return _safe((w * use * nov[items]).sum(axis=1), w.sum(axis=1))

    return _per_k(ks, one)


@register("epc", axes=[DISCOUNT, RELEVANCE], needs={"rows", "items"}, family="popularity")
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
    >>> from receval import evaluate
    >>> train = {"user_id": [1, 2, 3, 4, 1], "item_id": [10, 10, 10, 10, 20]}
    >>> recs = {"user_id": [1, 1], "item_id": [10, 20], "score": [2.0, 1.0]}
    >>> truth = {"user_id": [1], "item_id": [20]}
    >>> # hit at 2: (1/log2 3)(1 − 1/4) / (1 + 1/log2 3)
    >>> round(evaluate(recs, truth, ["epc@2"], train=train)["epc@2"], 6)
    0.29014
    >>> evaluate(recs, truth, ["epc(discount=none,relevance=any)@2"], train=train)["epc(discount=none,relevance=any)@2"]  # (0 + 3/4)/2
    0.375
    """
    return _expected(h, ks, o, "epc")


@register("efd", axes=[DISCOUNT, RELEVANCE], needs={"rows", "items"}, family="popularity")
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
    >>> from receval import evaluate
    >>> train = {"user_id": [1, 2, 3, 4, 1], "item_id": [10, 10, 10, 10, 20]}
    >>> recs = {"user_id": [1, 1], "item_id": [10, 20], "score": [2.0, 1.0]}
    >>> truth = {"user_id": [1], "item_id": [20]}
    >>> evaluate(recs, truth, ["efd(discount=none,relevance=any)@2"], train=train)["efd(discount=none,relevance=any)@2"]  # (0 + 2)/2
    1.0
    """
    return _expected(h, ks, o, "efd")


# ---- Surprisal (RePlay) ----------------------------------------------------------------------


@register("surprisal", axes=[LIST_DEN], needs={"rows", "items"}, family="popularity")
def surprisal(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""Surprisal@k: normalised self-information of the recommended items (RePlay Surprisal).

    Formula
    -------
    .. math::

        \mathrm{Surprisal}@k = \frac{1}{D}\sum_{i \in L_k} \frac{\log_2 (|U_{tr}| / \phi(i))}{\log_2 |U_{tr}|},
        \qquad D = k \;|\; \ell_k

    :math:`\phi` the distinct train users; an item unseen in train weighs 1. RePlay divides by
    k (``denominator=k``). Needs at least two train users.

    ``ties=average``: each row weighs its chance (m/n) to be in the top k, which is the
    expectation over the orderings of the ties, the value being linear in the rows.

    Examples
    --------
    >>> from receval import evaluate
    >>> train = {"user_id": [1, 2, 3, 4, 1], "item_id": [10, 10, 10, 10, 20]}
    >>> recs = {"user_id": [1, 1], "item_id": [20, 30], "score": [2.0, 1.0]}
    >>> truth = {"user_id": [1], "item_id": [20]}
    >>> evaluate(recs, truth, ["surprisal(denominator=k)@4"], train=train)["surprisal(denominator=k)@4"]  # (log2 4 / log2 4 + 1) / 4
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
            return _safe(_top_sum(h, k, w), _den(items, k, o))
        return _safe(w[items].sum(axis=1), _den(items, k, o))

    return _per_k(ks, one)


# ---- comparisons with a baseline run ---------------------------------------------------------


def _baseline_rows(h: Hits, metric: str):
    """The baseline's rows of the truth users, ranked: (user index, item code, 0-based position,
    1-based first and last position of the row's tie group). Ordered by its rank column if it
    has one, else by score descending, else in row order; repeated (user, item) rows keep the
    best-ranked. Equally scored rows form a tie group (``ties=average`` weighs each by its
    chance to be in the top k; any other rule keeps their input order)."""
    s = h.lists
    b = h.side.read("baseline") if h.side is not None else None
    if b is None:
        raise DataError(f"{metric} compares with a second run: pass baseline= or --baseline FILE (recommendations with user_id, item_id and a score or rank)")
    return h.memo(("baseline",), lambda: _rank_baseline(h, s, b))


def _rank_baseline(h: Hits, s: ListSpace, b: dict[str, np.ndarray]) -> tuple:
    """The rows of :func:`_baseline_rows` from the baseline's columns (read by :mod:`receval.side`)."""
    if len(b["item"]) and (b["item"].dtype == object) != (s.universe.dtype == object):
        raise DataError("item ids of the baseline and the recommendations differ in type; cast them alike")
    if "rank" in b:
        sort_key = b["rank"].astype(np.float64)
    elif "score" in b:
        sort_key = -b["score"].astype(np.float64)
    else:
        sort_key = np.arange(len(b["user"]), dtype=np.float64)
    uidx, ok = index_in(h.user_ids, b["user"])
    uidx, item, sort_key = uidx[ok], b["item"][ok], sort_key[ok]
    order = np.lexsort((sort_key, uidx))  # stable: ties keep input order
    uidx, item, sort_key = uidx[order], item[order], sort_key[order]
    if len(item):
        code, known = index_in(s.universe, item)
        code = np.where(known, code, -2)
    else:
        code = np.zeros(0, dtype=np.int64)
    # drop repeated (user, item) rows, keeping the first
    pair = uidx.astype(np.int64) * (len(s.universe) + 2) + (code + 2)
    _, first = np.unique(pair, return_index=True)
    keep = np.zeros(len(pair), dtype=bool)
    keep[first] = True
    keep |= code == -2  # items outside the space cannot repeat a recommended item
    uidx, code, sort_key = uidx[keep], code[keep], sort_key[keep]
    start = np.r_[0, np.cumsum(np.bincount(uidx, minlength=h.n_users))]
    pos = np.arange(len(uidx)) - start[uidx]
    lo = hi = pos + 1
    if "rank" not in b and "score" in b and len(uidx):  # tie groups: runs of equal scores of one user
        new_group = np.r_[True, (uidx[1:] != uidx[:-1]) | (sort_key[1:] != sort_key[:-1])]
        gst = np.flatnonzero(new_group)
        glen = np.diff(np.r_[gst, len(uidx)])
        lo = np.repeat(pos[gst] + 1, glen)
        hi = lo + np.repeat(glen, glen) - 1
    return uidx, code, pos, lo, hi


def _baseline_lists(h: Hits, k: int, metric: str) -> np.ndarray:
    """The baseline's top-k item codes per truth user [U, k] (−1 pad, −2 for items outside the
    space), tied scores in input order (see :func:`_baseline_rows`)."""
    uidx, code, pos, _, _ = _baseline_rows(h, metric)
    k = min(k, int(pos.max()) + 1 if len(pos) else 1)  # no wider than the longest baseline list
    out = np.full((h.n_users, k), -1, dtype=np.int64)
    sel = pos < k
    out[uidx[sel], pos[sel]] = code[sel]
    return out


def _expected_overlap(h: Hits, k: int, ref: int, metric: str) -> np.ndarray:
    """``ties=average``: E|L_k ∩ B_ref| per user = Σ over the list's rows whose item the
    baseline also lists of (the row's chance to be in the top k) × (the baseline row's chance
    to be in the baseline's top ref): the two lists' tie orders are independent, each chance
    1 inside, m/n for a tie group with m of its n slots inside, 0 beyond."""
    s = h.lists
    uidx, code, pos, lo, hi = _baseline_rows(h, metric)
    inside = lo <= ref
    b_w = np.where(hi <= ref, 1.0, (np.minimum(hi, ref) - lo + 1) / (hi - lo + 1))[inside]
    width = s.n_items + 3
    b_key = uidx[inside].astype(np.int64) * width + (code[inside] + 2)
    if h.row_lo is not None:
        r_w = h.top_chance(k)
    else:
        r_w = (h.row_pos <= k).astype(np.float64)
    r_key = h.row_user.astype(np.int64) * width + (s.row_code + 2)
    srt = np.argsort(b_key, kind="stable")
    b_key, b_w = b_key[srt], b_w[srt]
    at = np.minimum(np.searchsorted(b_key, r_key), max(len(b_key) - 1, 0))
    found = (b_key[at] == r_key) if len(b_key) else np.zeros(len(r_key), dtype=bool)
    w = np.where(found, r_w * (b_w[at] if len(b_w) else 0.0), 0.0)
    return np.bincount(h.row_user, weights=w, minlength=h.n_users)


def _overlap(items: np.ndarray, base: np.ndarray) -> np.ndarray:
    """|L ∩ B| per row: the list positions whose item is among the baseline's, by (row, item) keys."""
    width = int(max(items.max(initial=-1), base.max(initial=-1))) + 1
    rows_i, rows_b = np.nonzero(items >= 0), np.nonzero(base >= 0)
    key_i = rows_i[0].astype(np.int64) * width + items[rows_i]
    key_b = rows_b[0].astype(np.int64) * width + base[rows_b]
    found = key_i[np.isin(key_i, key_b)]
    return np.bincount(found // max(width, 1), minlength=items.shape[0]).astype(np.float64)


@register("unexpectedness", needs={"rows", "items"}, family="popularity")
def unexpectedness(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""Unexpectedness@k: the share of the top k not in a baseline run's top k (RePlay Unexpectedness).

    Formula
    -------
    .. math:: \mathrm{Unexp}@k = 1 - \frac{|L_k \cap B_k|}{k}

    :math:`B_k` the top k of the ``baseline`` run (ordered by its rank, else score, else rows).
    A user without recommendations or without baseline recommendations scores 0 (RePlay).

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
        base = _baseline_lists(h, k, "unexpectedness")
        has = ((items >= 0).any(axis=1)) & ((base != -1).any(axis=1))
        if h.options.get("ties") == "average":  # the expected overlap over the ties of both lists
            return np.where(has, 1.0 - _expected_overlap(h, k, k, "unexpectedness") / k, 0.0)
        return np.where(has, 1.0 - _overlap(items, base) / k, 0.0)

    return _per_k(ks, one)
