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


def _mad_partial(h: Hits, ks: list[int], o: dict) -> dict:
    """Per k and user group: the sum and count of the per-user values of one batch of users."""
    side = getattr(h, "side", None)
    if side is None or getattr(side, "user_groups", None) is None:
        raise DataError("mad needs user groups: pass user_groups= (user_id, group)")
    ids, groups = _read_groups(side.user_groups, side.cols.user, "user groups", "user")
    names, gcode = np.unique(groups, return_inverse=True)
    ug = np.full(h.n_users, -1, dtype=np.int64)
    if len(ids):
        if (ids.dtype == object) != (h.user_ids.dtype == object):
            raise DataError("user ids of user_groups and the ground truth differ in type; cast them alike")
        pos = np.minimum(np.searchsorted(h.user_ids, ids), h.n_users - 1)
        found = h.user_ids[pos] == ids
        ug[pos[found]] = gcode[found]
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
