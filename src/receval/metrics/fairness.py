r"""Fairness over item or user groups: REO, RSP (item groups), MAD (user groups) and bias
disparity (user groups × item categories).

Groups are side inputs of :func:`receval.evaluate`:

* ``item_groups``: a frame with ``item_id`` and ``group`` (one group per item; items without a
  group belong to none and are left out), e.g. providers or popularity classes;
* ``user_groups``: a frame with ``user_id`` and ``group`` (one group per user; truth users
  without a group are left out), e.g. activity or demographic classes.

The metrics are aggregates: one value per cut-off over the truth users (bias disparity's
source bias reads the train users too). With two groups REO
and RSP equal :math:`|P_1 - P_2| / (P_1 + P_2)`. ``popreo`` / ``poprsp`` in
:mod:`receval.metrics.popularity` are the same measures over the popularity split.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import DataError, SpecError
from ..hits import Hits
from ..lists import encoder, index_in, unique_ids, unique_pairs
from ..options import Axis
from ..registry import register, registered
from ._common import ratio_combine

_CTX = ("rel", "order", "ties", "dup", "tdup")


def _item_group_codes(h: Hits, metric: str, min_groups: int = 2) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Group code of every item code (−1: no group; one extra −1 slot for padding), group names,
    and the group sizes (items per group in ``item_groups``)."""
    s = h.lists
    given = h.side.read("item_groups") if h.side is not None else None
    if given is None:
        raise DataError(f"{metric} needs item groups: pass item_groups= (item_id, group)")
    ids, groups = given
    names, gcode = np.unique(groups, return_inverse=True)
    out = np.full(s.n_items + 1, -1, dtype=np.int64)
    if len(ids):
        if (ids.dtype == object) != (s.universe.dtype == object):
            raise DataError("item ids of item_groups and the recommendations differ in type; cast them alike")
        pos = np.minimum(np.searchsorted(s.universe, ids), len(s.universe) - 1)
        found = s.universe[pos] == ids
        out[pos[found]] = gcode[found]
    if len(names) < min_groups:
        raise DataError(f"{metric} compares groups: item_groups must name at least two")
    return out, names, np.bincount(gcode, minlength=len(names)).astype(np.float64)


def _reo_partial(h: Hits, ks: list[int], o: dict) -> dict:
    s = h.lists
    g, names, _ = _item_group_codes(h, "reo")
    G = len(names)
    t_items = s.t_items[s.t_rel]
    tg = g[t_items]
    den = np.bincount(tg[tg >= 0], minlength=G).astype(np.float64)
    nums = []
    for k in ks:
        items, rel, _ = s.top(k)
        lg = g[items][rel]
        nums.append(np.bincount(lg[lg >= 0], minlength=G).astype(np.float64))
    return {"num": np.array(nums), "den": np.tile(den, (len(ks), 1)), "names": names}


def _reo_combine(parts: list[dict], ks: list[int], o: dict) -> np.ndarray:
    return ratio_combine(parts, "reo", parts[0]["names"])


@register("reo", side={"item_groups"}, kind="global", context=_CTX, needs={"rows", "items"}, family="fairness", partial=_reo_partial, combine=_reo_combine, ties="topk_set", higher_is_better=False, bounds=(0.0, float("inf")))
def reo(h: Hits, ks: list[int], o: dict) -> None:
    r"""REO@k: ranking-based equal opportunity over item groups (Zhu et al. 2020; Elliot REO).

    Formula
    -------
    .. math::

        P_g = \frac{\sum_u |L^u_k \cap R_u \cap g|}{\sum_u |R_u \cap g|}, \qquad
        \mathrm{REO}@k = \frac{\operatorname{std}_g P_g}{\operatorname{mean}_g P_g}

    over the truth users (:math:`R_u` their relevant items) and the groups of ``item_groups``
    (population standard deviation); 0 is equal opportunity. A group without relevant items
    is an error.

    Examples
    --------
    >>> from receval import evaluate
    >>> groups = {"item_id": [1, 2, 3, 4], "group": ["a", "a", "b", "b"]}
    >>> recs = {"user_id": [1, 1], "item_id": [1, 3], "score": [2.0, 1.0]}
    >>> truth = {"user_id": [1, 1, 1], "item_id": [1, 2, 3]}
    >>> # P_a = 1/2, P_b = 1/1 → |1/2 − 1| / (1/2 + 1)
    >>> round(evaluate(recs, truth, ["reo@2"], item_groups=groups)["reo@2"], 6)
    0.333333
    """


def _rsp_partial(h: Hits, ks: list[int], o: dict) -> dict:
    s = h.lists
    g, names, size = _item_group_codes(h, "rsp")
    G = len(names)
    den = h.n_users * size
    if s.train is not None:
        tu, ti = s.train
        codes = encoder(s.universe)(ti)
        uidx, ok = index_in(h.user_ids, tu)
        if ok.any():
            pairs = unique_pairs(uidx[ok], codes[ok])
            pg = g[pairs[:, 1]]
            den = den - np.bincount(pg[pg >= 0], minlength=G)
    nums = []
    for k in ks:
        items = s.top(k)[0]
        lg = g[items][items >= 0]
        nums.append(np.bincount(lg[lg >= 0], minlength=G).astype(np.float64))
    return {"num": np.array(nums), "den": np.tile(den, (len(ks), 1)), "names": names}


def _rsp_combine(parts: list[dict], ks: list[int], o: dict) -> np.ndarray:
    return ratio_combine(parts, "rsp", parts[0]["names"])


@register("rsp", side={"item_groups", "train"}, kind="global", context=_CTX, needs={"rows", "items"}, family="fairness", partial=_rsp_partial, combine=_rsp_combine, ties="topk_set", higher_is_better=False, bounds=(0.0, float("inf")))
def rsp(h: Hits, ks: list[int], o: dict) -> None:
    r"""RSP@k: ranking-based statistical parity over item groups (Zhu et al. 2020; Elliot RSP).

    Formula
    -------
    .. math::

        P_g = \frac{\sum_u |L^u_k \cap g|}{\sum_u |g \setminus I^{tr}_u|}, \qquad
        \mathrm{RSP}@k = \frac{\operatorname{std}_g P_g}{\operatorname{mean}_g P_g}

    over the truth users; |g| counts the items ``item_groups`` puts in *g*; :math:`I^{tr}_u` the
    user's ``train`` items (none without ``train``);
    population standard deviation; 0 is parity.

    Examples
    --------
    >>> from receval import evaluate
    >>> groups = {"item_id": [1, 2, 3, 4], "group": ["a", "a", "b", "b"]}
    >>> recs = {"user_id": [1, 1], "item_id": [1, 2], "score": [2.0, 1.0]}
    >>> truth = {"user_id": [1], "item_id": [1]}
    >>> evaluate(recs, truth, ["rsp@2"], item_groups=groups)["rsp@2"]   # P_a = 2/2, P_b = 0/2 → 1
    1.0
    """


MAD_OF = Axis(
    "of", "of", "ndcg", "the per-user value whose group means are compared",
    {
        "ndcg": "NDCG@k (binary gain, ideal cut at k) of each user with a relevant item (Elliot UserMADranking)",
        "score": "the mean score of the user's top-k items (Elliot UserMADrating); needs a score column",
    },
)


def _mad_partial(h: Hits, ks: list[int], o: dict) -> dict:
    """Per k and user group: the sum and count of the per-user values of one batch of users."""
    given = h.side.read("user_groups") if h.side is not None else None
    if given is None:
        raise DataError("mad needs user groups: pass user_groups= (user_id, group)")
    ids, groups = given
    names, gcode = np.unique(groups, return_inverse=True)
    ug = np.full(h.n_users, -1, dtype=np.int64)
    if len(ids):
        if (ids.dtype == object) != (h.user_ids.dtype == object):
            raise DataError("user ids of user_groups and the ground truth differ in type; cast them alike")
        pos, found = index_in(h.user_ids, ids)
        ug[pos[found]] = gcode[found]
    if o["of"] == "ndcg":
        ndcg = registered()["ndcg"].compute  # through the registry: a family imports no other family
        v = ndcg(h, ks, {**o, "gain": "binary", "ideal": "cut", "base": 2.0, "t": None})
        use = h.n_rel > 0
    else:
        if h.row_score is None:
            raise DataError("mad(of=score) needs a score column in the recommendations")
        v = np.empty((h.n_users, len(ks)))
        for j, k in enumerate(ks):
            keep = h.row_pos <= k
            tot = np.bincount(h.row_user[keep], weights=h.row_score[keep], minlength=h.n_users)
            n = np.bincount(h.row_user[keep], minlength=h.n_users)
            v[:, j] = np.divide(tot, n, out=np.zeros(h.n_users), where=n > 0)
        use = h.length > 0
    sums, counts = [], []
    for j in range(len(ks)):
        sel = use & (ug >= 0)
        counts.append(np.bincount(ug[sel], minlength=len(names)).astype(np.float64))
        sums.append(np.bincount(ug[sel], weights=v[sel, j], minlength=len(names)))
    return {"sum": np.array(sums), "cnt": np.array(counts)}


def _mad_combine(parts: list[dict], ks: list[int], o: dict) -> np.ndarray:
    tot = sum(p["sum"] for p in parts)
    cnt = sum(p["cnt"] for p in parts)
    out = []
    for j in range(len(ks)):
        means = tot[j][cnt[j] > 0] / cnt[j][cnt[j] > 0]
        if len(means) < 2:
            raise DataError("mad compares user groups: fewer than two groups have a measured user")
        diffs = np.abs(means[:, None] - means[None, :])[np.triu_indices(len(means), 1)]
        out.append(float(diffs.mean()))
    return np.array(out)


@register("mad", side={"user_groups"}, axes=[MAD_OF], kind="global", context=_CTX, needs={"rows"}, family="fairness",
          partial=_mad_partial, combine=_mad_combine, ties="closed", ties_settled={"of": "ndcg"}, higher_is_better=False, bounds=(0.0, float("inf")))
def mad(h: Hits, ks: list[int], o: dict) -> None:
    r"""MAD@k: mean absolute difference between user groups of a per-user value (Deldjoo et al. 2020; Elliot UserMADranking / UserMADrating).

    Formula
    -------
    .. math::

        \bar v_g = \frac{1}{|U_g|}\sum_{u \in U_g} v_u, \qquad
        \mathrm{MAD}@k = \frac{2}{G(G-1)} \sum_{g < g'} |\bar v_g - \bar v_{g'}|

    :math:`v_u` by ``of``: NDCG@k (``of=ndcg``, users with a relevant item; a user without
    recommendations scores 0) or the mean score of the top-k items (``of=score``, users with
    recommendations; tied items share their score, so under ``ties=average`` it does not depend
    on their order). Groups from ``user_groups``; users without a group are left out, and so
    is a group left with no user.

    Examples
    --------
    >>> from receval import evaluate
    >>> ug = {"user_id": [1, 2], "group": ["new", "old"]}
    >>> recs = {"user_id": [1, 1, 2], "item_id": [1, 2, 1], "score": [0.9, 0.5, 0.4]}
    >>> truth = {"user_id": [1, 2], "item_id": [1, 2]}
    >>> evaluate(recs, truth, ["mad@2"], user_groups=ug)["mad@2"]          # |1 − 0|
    1.0
    >>> round(evaluate(recs, truth, ["mad(of=score)@2"], user_groups=ug)["mad(of=score)@2"], 6)   # |0.7 − 0.4|
    0.3
    """


# ---- bias disparity (Tsintzou et al. 2019; Elliot BiasDisparityBS / BR / BD) ------------------

BD_OF = Axis(
    "of", "of", "bd", "which quantity of the (user group, item category) cell",
    {
        "bd": "bias disparity (BR − BS) / BS: the relative change of the bias from the train data to the top-k lists (Elliot BiasDisparityBD)",
        "br": "bias in the recommendations B_R: the category's share of the group's top-k items over its share of item_groups (Elliot BiasDisparityBR)",
        "bs": "bias in the source B_S: the category's share of the group's distinct train interactions over its share of item_groups (Elliot BiasDisparityBS); k is not read",
    },
)
BD_UGROUP = Axis(
    "ugroup", "ugroup", "*",
    "the user group G: a group of user_groups (names compare in lower case); * pools every user, with a group or without, into one group (Elliot without a user clustering)",
    free=True,
)
BD_ICAT = Axis(
    "icat", "icat", "*",
    "the item category C: a group of item_groups (names compare in lower case); required (* names no cell)",
    free=True,
)


def _named(names: np.ndarray, want: str, side: str, option: str) -> int:
    """The code of the group ``want`` (the lower-cased name an option gives) among ``names``."""
    low = np.char.lower(names.astype(str))
    at = np.flatnonzero(low == want)
    if len(at) == 0:
        shown = ", ".join(str(n) for n in names[:20]) + (", ..." if len(names) > 20 else "")
        raise DataError(f"bias_disparity: {side} have no group '{want}' ({option}={want}); its groups: {shown}")
    if len(at) > 1:
        raise DataError(
            f"bias_disparity: the {side} groups {' and '.join(repr(str(n)) for n in names[at])} differ only in case "
            f"and {option}= compares in lower case; rename one"
        )
    return int(at[0])


def _user_members(h: Hits, o: dict) -> tuple[np.ndarray, Callable[[np.ndarray], np.ndarray]]:
    """Whether each truth user is in G, and a function giving it for other user ids (train users)."""
    if o["ugroup"] == "*":
        return np.ones(h.n_users, dtype=bool), lambda ids: np.ones(len(ids), dtype=bool)
    given = h.side.read("user_groups") if h.side is not None else None
    if given is None:
        raise DataError(f"bias_disparity(ugroup={o['ugroup']}) needs user groups: pass user_groups= (user_id, group), or ugroup=* to pool every user")
    ids, groups = given
    names, gcode = np.unique(groups, return_inverse=True)
    members = np.sort(ids[gcode == _named(names, o["ugroup"], "user_groups", "ugroup")])

    def member(query: np.ndarray) -> np.ndarray:
        if not len(members) or not len(query):
            return np.zeros(len(query), dtype=bool)
        if (members.dtype == object) != (query.dtype == object):
            raise DataError("user ids of user_groups and the ground truth or train differ in type; cast them alike")
        pos = np.minimum(np.searchsorted(members, query), len(members) - 1)
        return members[pos] == query

    return member(h.user_ids), member


def _bd_partial(h: Hits, ks: list[int], o: dict) -> dict:
    """The cell's counts: top-k items of the batch's users of G (per k) in C and in any
    category; the distinct train pairs of G in C and in any category (whole train: the same
    in every batch); the share |C| / |item_groups|."""
    if o["icat"] == "*":
        raise SpecError("bias_disparity is one cell: name its item category, e.g. bias_disparity(icat=<a group of item_groups>)@10")
    s = h.lists
    g, names, size = _item_group_codes(h, "bias_disparity", min_groups=1)
    c = _named(names, o["icat"], "item_groups", "icat")
    in_g, member = _user_members(h, o)
    out: dict = {"pc": size[c] / size.sum()}
    if o["of"] != "bs":
        num, tot = [], []
        for k in ks:
            lg = g[s.top(k)[0][in_g]]  # padding (−1) reads the −1 slot
            num.append(float(np.count_nonzero(lg == c)))
            tot.append(float(np.count_nonzero(lg >= 0)))
        out["r_num"], out["r_tot"] = np.array(num), np.array(tot)
    if o["of"] != "br":
        if s.train is None:
            raise DataError(f"bias_disparity(of={o['of']}) needs the train interactions (the source data): pass train= or --train FILE")
        tu, ti = s.train
        users = unique_ids(tu)
        pairs = unique_pairs(encoder(users)(tu), encoder(s.universe)(ti))
        lg = g[pairs[member(users)[pairs[:, 0]], 1]]
        out["s_num"], out["s_tot"] = float(np.count_nonzero(lg == c)), float(np.count_nonzero(lg >= 0))
    return out


def _bd_combine(parts: list[dict], ks: list[int], o: dict) -> np.ndarray:
    pc = parts[0]["pc"]
    cell = f"(ugroup={o['ugroup']}, icat={o['icat']})"
    if o["of"] != "br":
        if parts[0]["s_tot"] == 0:
            raise DataError(f"bias_disparity{cell}: the train users of the group have no interaction with a categorised item; B_S divides by that count, choose another ugroup")
        bs = parts[0]["s_num"] / parts[0]["s_tot"] / pc
        if o["of"] == "bs":
            return np.full(len(ks), bs)
    r_num = sum(p["r_num"] for p in parts)
    r_tot = sum(p["r_tot"] for p in parts)
    if (r_tot == 0).any():
        raise DataError(f"bias_disparity{cell}: the group's top-{ks[int(np.argmax(r_tot == 0))]} lists hold no categorised item; B_R divides by that count, choose another ugroup")
    br = r_num / r_tot / pc
    if o["of"] == "br":
        return br
    if bs == 0:
        raise DataError(f"bias_disparity{cell}: the group has no train interaction in the category (B_S = 0) and BD divides by B_S; report of=br and of=bs instead")
    return (br - bs) / bs


def _bias_side(o: dict, given: frozenset[str]) -> set[str]:
    """The item groups; train for the preference ratio of the input (``of`` other than ``br``);
    the user groups when one is chosen."""
    return {"item_groups"} | ({"train"} if o.get("of") != "br" else set()) | ({"user_groups"} if o.get("ugroup", "*") != "*" else set())


@register("bias_disparity", side=_bias_side, axes=[BD_OF, BD_UGROUP, BD_ICAT], kind="global", context=_CTX, needs={"rows", "items"},
          family="fairness", partial=_bd_partial, combine=_bd_combine, ties="topk_set")
def bias_disparity(h: Hits, ks: list[int], o: dict) -> None:
    r"""Bias disparity@k of one (user group, item category) cell: source bias, recommendation bias and their relative change (Tsintzou et al. 2019; Elliot BiasDisparityBS / BR / BD).

    Formula
    -------
    .. math::

        B_X(G, C) = \frac{N_X(G, C) / N_X(G)}{|C| / |I_g|}, \qquad
        \mathrm{BD}(G, C) = \frac{B_R(G, C) - B_S(G, C)}{B_S(G, C)}

    :math:`B_S` (``of=bs``, the source): :math:`N_S(G, C)` counts the distinct ``train``
    pairs (u, i) with u in G and i in C, :math:`N_S(G)` those with i in any category; every
    train user of G is read, not only the truth users. :math:`B_R` (``of=br``, the
    recommendations): :math:`N_R(G, C) = \sum_{u \in G} |L^u_k \cap C|` over the truth users
    of G, each list position counted (a repeated item under ``dup=keep`` twice), and
    :math:`N_R(G)` the positions holding an item with a category. :math:`|C|` counts the items
    ``item_groups`` puts in C, :math:`|I_g|` its items. ``of=bd`` (the default) is BD.

    One value is one cell: C is ``icat`` (required), G is ``ugroup`` (a group of
    ``user_groups``; ``*``, the default, pools every user). 1 is no bias (B_S, B_R); BD > 0:
    the lists over-represent C for G more than the train data did, BD < 0 less. A zero count
    in a denominator (or :math:`B_S = 0` for BD) is an error.

    Examples
    --------
    >>> from receval import evaluate
    >>> groups = {"item_id": [1, 2, 3, 4], "group": ["a", "a", "b", "b"]}   # P(a) = 2/4
    >>> users = {"user_id": [1, 2], "group": ["x", "y"]}
    >>> train = {"user_id": [1, 1, 1, 2], "item_id": [1, 2, 3, 3]}
    >>> recs = {"user_id": [1, 1], "item_id": [1, 3], "score": [2.0, 1.0]}
    >>> truth = {"user_id": [1], "item_id": [4]}
    >>> specs = ["bias_disparity(of=bs,icat=a,ugroup=x)@2", "bias_disparity(of=br,icat=a,ugroup=x)@2",
    ...          "bias_disparity(icat=a,ugroup=x)@2", "bias_disparity(of=bs,icat=a)@2"]
    >>> r = evaluate(recs, truth, specs, item_groups=groups, user_groups=users, train=train)
    >>> # B_S = (2/3)/(2/4); B_R = (1/2)/(2/4); BD = (1 − 4/3)/(4/3); pooled B_S = (2/4)/(2/4)
    >>> [round(v, 6) for v in r.values.values()]
    [1.333333, 1.0, -0.25, 1.0]
    """
