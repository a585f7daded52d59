r"""Fairness over item or user groups: REO, RSP (item groups) and MAD (user groups).

Groups are side inputs of :func:`receval.evaluate`:

* ``item_groups``: a frame with ``item_id`` and ``group`` (one group per item; items without a
  group belong to none and are left out), e.g. providers or popularity classes;
* ``user_groups``: a frame with ``user_id`` and ``group`` (one group per user; truth users
  without a group are left out), e.g. activity or demographic classes.

The metrics are aggregates: one value per cut-off over the truth users. With two groups REO
and RSP equal :math:`|P_1 - P_2| / (P_1 + P_2)`. ``popreo`` / ``poprsp`` in
:mod:`receval.metrics.popularity` are the same measures over the popularity split.
"""

from __future__ import annotations

import numpy as np

from ..errors import DataError
from ..hits import Hits
from ..options import Axis
from ..registry import register
from .beyond import _encoder, _space
from .popularity import _ratio_combine

_CTX = ("rel", "order", "ties", "dup", "tdup")


def _read_groups(obj, key_col: str, what: str, role: str = "item") -> tuple[np.ndarray, np.ndarray]:
    import polars as pl

    from ..io import columns_of, read_frame

    frame = read_frame(obj, what)
    if "group" not in frame.columns:
        raise DataError(f"{what} are missing column 'group' (found: {', '.join(frame.columns)})")
    ids = columns_of(frame, what, {role: key_col}, {})[role]
    groups = frame.get_column("group").cast(pl.String).to_numpy().astype(object)
    if len(np.unique(ids)) != len(ids):
        raise DataError(f"{what}: an id has more than one group; give each one group")
    return ids, groups


def _item_group_codes(h: Hits, metric: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Group code of every item code (−1: no group; one extra −1 slot for padding), group names,
    and the group sizes (items per group in ``item_groups``)."""
    s = _space(h)
    side = getattr(h, "side", None)
    if side is None or getattr(side, "item_groups", None) is None:
        raise DataError(f"{metric} needs item groups: pass item_groups= (item_id, group)")
    ids, groups = _read_groups(side.item_groups, side.cols.item, "item groups")
    names, gcode = np.unique(groups, return_inverse=True)
    out = np.full(s.n_items + 1, -1, dtype=np.int64)
    if len(ids):
        if (ids.dtype == object) != (s.universe.dtype == object):
            raise DataError("item ids of item_groups and the recommendations differ in type; cast them alike")
        pos = np.minimum(np.searchsorted(s.universe, ids), len(s.universe) - 1)
        found = s.universe[pos] == ids
        out[pos[found]] = gcode[found]
    if len(names) < 2:
        raise DataError(f"{metric} compares groups: item_groups must name at least two")
    return out, names, np.bincount(gcode, minlength=len(names)).astype(np.float64)


def _reo_partial(h: Hits, ks: list[int], o: dict) -> dict:
    s = _space(h)
    g, names, _ = _item_group_codes(h, "reo")
    G = len(names)
    t_items = s.t_items[s.t_rel]
    tg = g[t_items]
    den = np.bincount(tg[tg >= 0], minlength=G).astype(np.float64)
    nums = []
    for k in ks:
        items, rel, _ = s.lists(h, k)
        lg = g[items][rel]
        nums.append(np.bincount(lg[lg >= 0], minlength=G).astype(np.float64))
    return {"num": np.array(nums), "den": np.tile(den, (len(ks), 1)), "names": names}


def _reo_combine(parts: list[dict], ks: list[int], o: dict) -> np.ndarray:
    return _ratio_combine(parts, "reo", parts[0]["names"])


@register("reo", kind="global", context=_CTX, needs={"rows", "items"}, family="fairness", partial=_reo_partial, combine=_reo_combine)
def reo(h: Hits, ks: list[int], o: dict) -> np.ndarray:
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
    return _reo_combine([_reo_partial(h, ks, o)], ks, o)


def _rsp_partial(h: Hits, ks: list[int], o: dict) -> dict:
    s = _space(h)
    g, names, size = _item_group_codes(h, "rsp")
    G = len(names)
    den = h.n_users * size
    if s.train is not None:
        tu, ti = s.train
        codes = _encoder(s.universe)(ti)
        uidx = np.searchsorted(h.user_ids, tu)
        ok = uidx < h.n_users
        ok[ok] = h.user_ids[uidx[ok]] == tu[ok]
        if ok.any():
            pairs = np.unique(np.stack([uidx[ok], codes[ok]], axis=1), axis=0)
            pg = g[pairs[:, 1]]
            den = den - np.bincount(pg[pg >= 0], minlength=G)
    nums = []
    for k in ks:
        items = s.lists(h, k)[0]
        lg = g[items][items >= 0]
        nums.append(np.bincount(lg[lg >= 0], minlength=G).astype(np.float64))
    return {"num": np.array(nums), "den": np.tile(den, (len(ks), 1)), "names": names}


def _rsp_combine(parts: list[dict], ks: list[int], o: dict) -> np.ndarray:
    return _ratio_combine(parts, "rsp", parts[0]["names"])


@register("rsp", kind="global", context=_CTX, needs={"rows", "items"}, family="fairness", partial=_rsp_partial, combine=_rsp_combine)
def rsp(h: Hits, ks: list[int], o: dict) -> np.ndarray:
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
    return _rsp_combine([_rsp_partial(h, ks, o)], ks, o)


MAD_OF = Axis(
    "of", "of", "ndcg", "the per-user value whose group means are compared",
    {
        "ndcg": "NDCG@k (binary gain, ideal cut at k) of each user with a relevant item (Elliot UserMADranking)",
        "score": "the mean score of the user's top-k items (Elliot UserMADrating); needs a score column",
    },
)


def _user_group_codes(users: np.ndarray, ids: np.ndarray, gcode: np.ndarray, sorted_users: bool = True) -> np.ndarray:
    """Group code of each of ``users`` (−1: no group) from the (``ids``, ``gcode``) pairs."""
    out = np.full(len(users), -1, dtype=np.int64)
    if not len(ids) or not len(users):
        return out
    if (ids.dtype == object) != (users.dtype == object):
        raise DataError("user ids of user_groups and the ground truth differ in type; cast them alike")
    if sorted_users:  # look the group ids up in the sorted users
        pos = np.minimum(np.searchsorted(users, ids), len(users) - 1)
        found = users[pos] == ids
        out[pos[found]] = gcode[found]
        return out
    order = np.argsort(ids, kind="stable")
    sid, sg = ids[order], gcode[order]
    pos = np.minimum(np.searchsorted(sid, users), len(sid) - 1)
    found = sid[pos] == users
    out[found] = sg[pos[found]]
    return out


def _user_groups(h: Hits, metric: str, required: bool = True):
    """(ids, group codes, group names) of ``user_groups``, or None when not given and not required."""
    side = getattr(h, "side", None)
    if side is None or getattr(side, "user_groups", None) is None:
        if not required:
            return None
        raise DataError(f"{metric} needs user groups: pass user_groups= (user_id, group)")
    ids, groups = _read_groups(side.user_groups, side.cols.user, "user groups", "user")
    names, gcode = np.unique(groups, return_inverse=True)
    return ids, gcode, names


def _mad_partial(h: Hits, ks: list[int], o: dict) -> dict:
    """Per k and user group: the sum and count of the per-user values of one batch of users."""
    ids, gcode, names = _user_groups(h, "mad")
    ug = _user_group_codes(h.user_ids, ids, gcode)
    if o["of"] == "ndcg":
        from .ranking import ndcg

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


@register("mad", axes=[MAD_OF], kind="global", context=_CTX, needs={"rows"}, family="fairness",
          partial=_mad_partial, combine=_mad_combine)
def mad(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""MAD@k: mean absolute difference between user groups of a per-user value (Deldjoo et al. 2020; Elliot UserMADranking / UserMADrating).

    Formula
    -------
    .. math::

        \bar v_g = \frac{1}{|U_g|}\sum_{u \in U_g} v_u, \qquad
        \mathrm{MAD}@k = \frac{2}{G(G-1)} \sum_{g < g'} |\bar v_g - \bar v_{g'}|

    :math:`v_u` by ``of``: NDCG@k (``of=ndcg``, users with a relevant item; a user without
    recommendations scores 0) or the mean score of the top-k items (``of=score``, users with
    recommendations). Groups from ``user_groups``; users without a group are left out, and so
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
    return _mad_combine([_mad_partial(h, ks, o)], ks, o)


# ---- bias disparity ----------------------------------------------------------------------

BD_OF = Axis(
    "of", "of", "bd", "which cell value of the (user group × item category) bias tables",
    {
        "bd": "bias disparity (B_R − B_S) / B_S: the relative change from the training data to the recommendations (Elliot BiasDisparityBD)",
        "br": "B_R: the bias of the top-k recommendations (Elliot BiasDisparityBR)",
        "bs": "B_S: the bias of the training data, the source (Elliot BiasDisparityBS); needs train=",
    },
)
BD_UGROUP = Axis(
    "ugroup", "ugroup", None,
    "the user group of the cell: its 0-based index among the user_groups labels in sorted order "
    "('all': every user as one group, only without user_groups)",
    numeric=True,
)
BD_ICAT = Axis(
    "icat", "icat", None,
    "the item category of the cell: its 0-based index among the item_groups labels in sorted order",
    numeric=True,
)


def _cell(value, names: np.ndarray, axis: str, what: str) -> int:
    listing = ", ".join(f"{i}={n}" for i, n in enumerate(names))
    if value is None:
        raise DataError(f"biasdisp needs the {what} of the cell: write {axis}=N with N one of {listing}")
    i = int(value)
    if i != value or not 0 <= i < len(names):
        raise DataError(f"biasdisp: {axis}={value:g} is not a {what}; use one of {listing}")
    return i


def _bias_counts(item_codes: np.ndarray, ug: np.ndarray, g: np.ndarray, G: int, C: int) -> np.ndarray:
    """[G, C] rows per (user group, item category); rows without either are left out."""
    ic = g[item_codes]
    keep = (ug >= 0) & (ic >= 0)
    return np.bincount(ug[keep] * C + ic[keep], minlength=G * C).reshape(G, C).astype(np.float64)


def _bd_partial(h: Hits, ks: list[int], o: dict) -> dict:
    """Per k the [G, C] counts of top-k rows of this batch's users; the training counts (the
    side input is whole, so every batch carries the same) and the category shares P(C)."""
    sp = _space(h)
    g, cats, size = _item_group_codes(h, "biasdisp")
    C = len(cats)
    groups = _user_groups(h, "biasdisp", required=False)
    if groups is None:
        names = np.array(["all"], dtype=object)
        ug = np.zeros(h.n_users, dtype=np.int64)
    else:
        ids, gcode, names = groups
        ug = _user_group_codes(h.user_ids, ids, gcode)
    G = len(names)
    rec = []
    for k in ks:
        items = sp.lists(h, k)[0]
        users = np.broadcast_to(ug[:, None], items.shape)
        listed = items >= 0
        rec.append(_bias_counts(items[listed], users[listed], g, G, C))
    src = None
    if o["of"] != "br":
        if sp.train is None:
            raise DataError(f"biasdisp(of={o['of']}) compares with the training data: pass train= (user_id, item_id)")
        tu, ti = sp.train
        tug = np.zeros(len(tu), dtype=np.int64) if groups is None else _user_group_codes(tu, groups[0], groups[1], sorted_users=False)
        src = _bias_counts(_encoder(sp.universe)(ti), tug, g, G, C)
    return {"rec": np.array(rec), "src": src, "share": size / size.sum(), "ugroups": names, "icats": cats}


def _bias(counts: np.ndarray, share: np.ndarray, gi: int, ci: int, where: str, names, cats) -> float:
    tot = counts[gi].sum()
    if tot == 0:
        raise DataError(f"biasdisp: user group {names[gi]!r} has no {where} row with a categorised item")
    return float(counts[gi, ci] / tot / share[ci])


def _bd_combine(parts: list[dict], ks: list[int], o: dict) -> np.ndarray:
    p0 = parts[0]
    names, cats, share = p0["ugroups"], p0["icats"], p0["share"]
    gi = 0 if o["ugroup"] is None and len(names) == 1 and names[0] == "all" else _cell(o["ugroup"], names, "ugroup", "user group")
    ci = _cell(o["icat"], cats, "icat", "item category")
    rec = sum(p["rec"] for p in parts)
    bs = None if p0["src"] is None else _bias(p0["src"], share, gi, ci, "training", names, cats)
    out = []
    for j in range(len(ks)):
        if o["of"] == "bs":
            out.append(bs)
            continue
        br = _bias(rec[j], share, gi, ci, "recommended", names, cats)
        if o["of"] == "br":
            out.append(br)
        elif bs == 0:
            raise DataError(f"biasdisp: B_S is 0 for user group {names[gi]!r} and category {cats[ci]!r} (no training row), so (B_R − B_S)/B_S is undefined")
        else:
            out.append((br - bs) / bs)  # type: ignore[operator]
    return np.array(out, dtype=np.float64)


@register("biasdisp", axes=[BD_OF, BD_UGROUP, BD_ICAT], kind="global", context=_CTX, needs={"rows", "items"},
          family="fairness", partial=_bd_partial, combine=_bd_combine)
def biasdisp(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""Bias disparity@k of one (user group, item category) cell (Tsintzou, Pitoura, Tsaparas 2019; Elliot BiasDisparityBS / BR / BD).

    Formula
    -------
    .. math::

        P(C) = \frac{|\{i \in C\}|}{|\{i\}|}, \qquad
        B(G, C) = \frac{n(G, C) / n(G)}{P(C)}, \qquad
        \mathrm{BD}(G, C) = \frac{B_R(G, C) - B_S(G, C)}{B_S(G, C)}

    :math:`P(C)` is the share of the categorised items (``item_groups``) in category *C*;
    :math:`n(G, C)` counts the rows of users in group *G* (``user_groups``; without it every
    user is one group) whose item is in *C*, and :math:`n(G)` those whose item has a
    category. :math:`B_S` counts the rows of ``train`` (every train user with a group),
    :math:`B_R` the top-k recommendation rows of the truth users. ``ugroup`` and ``icat`` pick
    the cell by the 0-based index of its label in sorted order; each cell of the table is one
    value with its own signature. 1 is no bias for *B*; 0 no disparity for BD.

    Examples
    --------
    >>> from receval import evaluate
    >>> cats = {"item_id": [1, 2, 3, 4], "group": ["drama", "drama", "drama", "horror"]}
    >>> train = {"user_id": [1, 1, 2, 2], "item_id": [1, 4, 2, 4]}
    >>> recs = {"user_id": [1, 1, 2, 2], "item_id": [4, 3, 4, 1], "score": [2.0, 1.0, 2.0, 1.0]}
    >>> truth = {"user_id": [1, 2], "item_id": [3, 1]}
    >>> kw = dict(item_groups=cats, train=train)
    >>> evaluate(recs, truth, ["biasdisp(of=bs,icat=1)@1"], **kw)["biasdisp(of=bs,icat=1)@1"]   # (2/4) / (1/4)
    2.0
    >>> evaluate(recs, truth, ["biasdisp(of=br,icat=1)@1"], **kw)["biasdisp(of=br,icat=1)@1"]   # (2/2) / (1/4)
    4.0
    >>> evaluate(recs, truth, ["biasdisp(icat=1)@1"], **kw)["biasdisp(icat=1)@1"]               # (4 − 2) / 2
    1.0
    """
    return _bd_combine([_bd_partial(h, ks, o)], ks, o)
