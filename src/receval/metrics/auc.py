r"""ROC-AUC family: stacked, pooled and per-user (grouped) AUC, AUC inside the top-k list, limited AUC.

Notation (one user *u*; its ranked recommendations are its *candidates*):

* :math:`\ell_u` the number of ranked items of the user (the full ranking when every
  candidate item is scored), :math:`R_u` its relevant truth items;
* the *positives* are the ranked items that are relevant, :math:`P_u` of them; the
  *negatives* are the ranked items that are not relevant, :math:`N_u = \ell_u - P_u`;
* for a positive *p*, :math:`a_p` the negatives ranked above it. With ``tied=half``
  (default) a negative with the same score counts ½ (average ranks, Mann–Whitney); with
  ``tied=correct`` it counts 0 (only strictly greater scores are above: OpenRec); with
  ``tied=order`` the list positions decide (the items at earlier positions are above). Without a
  score column the positions decide for every rule; with ``tied=wrong`` it counts 1 (a tied pair
  is misranked: Cornac).

Per positive, :math:`s_p = 1 - a_p / N'_u`: the share of the user's negatives ranked below it.
:math:`N'_u = N_u` (``negatives=exact``) or :math:`\ell_u - |R_u| + 1` (``negatives=plus_one``,
Elliot: catalogue − train − |R_u| + 1 on a full ranking) or :math:`|I| - |R_u \cap I|`
(``negatives=catalog``: the whole catalogue *I*, the ``catalog`` side input, else the train
items (refused without either); the catalogue items missing from the list are negatives ranked
below every listed item and tied with each other, and a relevant item missing from the list
is tied with them).

Every function below is vectorised over the row arrays of the intermediate form (per-user sums
by ``bincount``); none loops over users.

The shared worked example (used by the doctests): user 1 is recommended items 10, 20, 30, 40
(scores 0.9, 0.8, 0.7, 0.6) and likes 20, 40 and 50: positives at positions 2 and 4
(:math:`a = 1, 2`), :math:`P = 2`, :math:`N = 2`, :math:`\ell = 4`, :math:`|R| = 3`.
"""

from __future__ import annotations

import numpy as np

from ..errors import DataError, SpecError
from ..hits import Hits
from ..options import Axis
from ..policy import policy_error, user_policy
from ..reduction import KeyedReduction, Run
from ..registry import register
from ..side import catalogue_reads
from ._common import safe_div
from ._exact import exact_sum, total
from ._ties import slot_draws, tie_group_table

TIED = Axis(
    "tied", "tied", "half", "how a (positive, negative) pair with equal scores counts",
    {
        "half": "½: average ranks, Mann–Whitney (sklearn roc_auc_score, RecBole)",
        "correct": "1: only a strictly greater score ranks a negative above (OpenRec)",
        "order": "by list position: the earlier item is above (Elliot, RePlay, RecSys2019 DL evaluation)",
        "wrong": "0: a negative with an equal score counts as above, only a strictly smaller one below (Cornac's AUC)",
    },
)
NEGATIVES = Axis(
    "negatives", "neg", "exact", "N'_u, the negative count that a_p is divided by",
    {
        "exact": "N_u = ℓ_u − P_u, the ranked items that are not relevant",
        "plus_one": "ℓ_u − |R_u| + 1: Elliot's count (catalogue − train − |R_u| + 1), one too many",
        "catalog": ("|I| − |R_u ∩ I|: every catalogue item that is not relevant to the user; the catalogue items "
                    "missing from the list rank below every listed item, tied with each other (Cornac's AUC, over "
                    "a ranking of the whole catalogue)"),
    },
)
DENOMINATOR = Axis(
    "denominator", "den", "list", "what the sum of the positives' s_p is divided by",
    {
        "list": "P_u, the positives in the list (the exact per-user AUC)",
        "r": "|R_u|: relevant items missing from the list score 0 (Elliot GAUC, OpenRec)",
    },
)
MAXFPR = Axis(
    "maxfpr", "maxfpr", None,
    "the standardised partial AUC over false-positive rates [0, maxfpr] (McClish 1989; scikit-learn's and "
    "torchmetrics' max_fpr); 'all' is the whole AUC",
    numeric=True,
)
_MISSING = {
    "zero": "the user scores 0",
    "one": "the user scores 1",
    "skip": "the user is left out of the mean (RecBole GAUC; only for the global `auc(form=users)`)",
}
NOPOS = Axis("nopos", "nopos", "zero", "a user whose (top-k) list holds no positive", dict(_MISSING))
NONEG = Axis("noneg", "noneg", "one", "a user whose (top-k) list holds no negative", dict(_MISSING))
FORM = Axis(
    "form", "form", "stacked", "how the (user, item) pairs are pooled into one AUC",
    {
        "stacked": "one ROC over all rows of all users pooled (sklearn roc_auc_score; RecBole AUC, MS Recommenders, Beta-RecSys)",
        "positives": "the mean of s_p over the positives of all users pooled (Elliot AUC)",
        "users": "the mean over users of the per-user AUC (GAUC), weighted by `weight`",
    },
)
ROWS = Axis(
    "rows", "rows", "all", "which rows a stacked AUC pools",
    {
        "all": "every ranked row of the truth users; rows that are not relevant are negatives",
        "judged": "only ranked rows that are truth rows (the inner join of truth and predictions: MS Recommenders, Beta-RecSys); truth rows below `rel` are the negatives",
    },
)
WEIGHT = Axis(
    "weight", "weight", "users", "the weight of a user's AUC in form=users",
    {
        "users": "1: the plain mean over users",
        "positives": "P_u, the positives in the user's list (RecBole GAUC)",
    },
)


# ------------------------------------------------------------------------------------------
# row level building blocks


def _rows(h: Hits) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Rows of truth users: (user, position, score, positive?) sorted by (user, position)."""
    if h.row_user is None:  # pragma: no cover - registration asks for rows
        raise AssertionError("AUC metrics need the row arrays of the intermediate form")
    user, pos = h.row_user, h.row_pos
    score = h.row_score
    t = h.row_truth
    label = (t >= 0) & h.truth_rel[np.maximum(t, 0)] if len(t) else np.zeros(0, dtype=bool)
    order = np.lexsort((pos, user))
    has_score = score is not None
    s = score[order].astype(np.float64) if has_score else -pos[order].astype(np.float64)
    return user[order], pos[order], s, label[order]


def _negatives_above(user: np.ndarray, score: np.ndarray, label: np.ndarray, tied: str, n_users: int) -> np.ndarray:
    """a_p for every row (meaningful at positives): the user's negatives ranked above it.

    Rows are sorted by (user, position). ``tied`` decides how equal scores count.
    """
    n = len(user)
    if n == 0:
        return np.zeros(0)
    neg = (~label).astype(np.int64)
    if tied == "order":
        perm = np.arange(n)
        u, sc, ng = user, None, neg
    else:
        perm = np.lexsort((-score, user))  # stable: within equal scores keeps position order
        u, sc, ng = user[perm], score[perm], neg[perm]
    excl = np.cumsum(ng) - ng  # negatives strictly before each row (all users)
    user_start = np.r_[True, u[1:] != u[:-1]]
    base = np.maximum.accumulate(np.where(user_start, np.arange(n), 0))
    above = excl - excl[base]
    if tied != "order":
        grp_start = user_start | np.r_[True, sc[1:] != sc[:-1]]
        gid = np.cumsum(grp_start) - 1
        gfirst = np.flatnonzero(grp_start)
        strict = above[gfirst][gid]
        if tied in ("half", "wrong"):
            gneg = np.bincount(gid, weights=ng)[gid]
            above = strict + (0.5 if tied == "half" else 1.0) * gneg
        else:
            above = strict
    out = np.empty(n, dtype=np.float64)
    out[perm] = above
    return out


def _per_user_parts(h: Hits, tied: str, k: int | None):
    """(P_u, ℓ_u, Σ a_p) over the full ranking (k None) or the top-k list; plus rows for reuse."""
    user, pos, score, label = _rows(h)
    if k is not None:
        keep = pos <= k
        user, pos, score, label = user[keep], pos[keep], score[keep], label[keep]
    a = _negatives_above(user, score, label, tied, h.n_users)
    p = np.bincount(user[label], minlength=h.n_users).astype(np.float64)
    ell = np.bincount(user, minlength=h.n_users).astype(np.float64)
    asum = np.bincount(user[label], weights=a[label], minlength=h.n_users)
    return p, ell, asum


_VALUE = {"zero": 0.0, "one": 1.0, "skip": np.nan}
#: the share of a tied (positive, negative) pair that counts the negative above the positive
_TIED_ABOVE = {"half": 0.5, "correct": 0.0, "wrong": 1.0}


def _nprime(h: Hits, o: dict, ell: np.ndarray, p: np.ndarray, metric: str) -> np.ndarray:
    """N'_u by ``negatives``: ℓ_u − P_u (exact), ℓ_u − |R_u| + 1 (plus_one) or |I| − |R_u ∩ I|
    (catalog; a listed item outside the catalogue is refused, :class:`receval.errors.OutsideCatalogue`)."""
    if o["negatives"] == "exact":
        return ell - p
    if o["negatives"] == "plus_one":
        return ell - h.n_rel + 1
    s = h.lists
    if s.catalog is None and s.train is None:  # the items seen: a batch of users sees only its own
        raise SpecError(f"{metric}(negatives=catalog) counts every catalogue item the user did not like as a negative: "
                        "pass the catalogue (catalog=, --catalog FILE) or the train items (train=, --train FILE)")
    s.check_in_catalog(s.row_code[s.row_code >= 0], metric)
    assert h.truth_rel is not None
    inside = s.to_catalog[s.truth_code[h.truth_rel]] >= 0
    return float(s.n_catalog) - np.bincount(h.rel_user[inside], minlength=h.n_users).astype(np.float64)


def _catalog_side(o: dict, given: frozenset[str]) -> set[str] | None:
    """``negatives=catalog`` reads the catalogue (:func:`receval.side.catalogue_reads`: ``catalog``,
    else train; without either :func:`_nprime` refuses, since the items seen in the inputs would
    depend on which users a batch holds); every other count none."""
    return catalogue_reads(o, given) if o.get("negatives") == "catalog" else None


def _user_auc(h: Hits, o: dict, k: int | None, empty_list: float | None = 0.0, metric: str = "gauc") -> np.ndarray:
    """Per-user AUC, NaN where a `skip` policy leaves the user out.

    An empty list scores ``empty_list`` (None: it counts as a list without positives).
    """
    if o.get("maxfpr") is not None:
        return _user_partial_roc(h, o, k, empty_list)
    p, ell, asum = _per_user_parts(h, o["tied"], k)
    n_exact = ell - p
    nprime = _nprime(h, o, ell, p, metric)
    den = p if o["denominator"] == "list" else h.n_rel.astype(np.float64)
    num = p - safe_div(asum, nprime)
    if o["negatives"] == "catalog":
        if o["denominator"] == "r":  # a relevant item missing from the list: below the N_u listed
            # negatives, tied with the N' − N_u missing ones
            num = num + (h.n_rel - p) * (1.0 - _TIED_ABOVE[o["tied"]]) * safe_div(nprime - n_exact, nprime)
        v = safe_div(num, den)
        v = np.where(nprime <= 0, _VALUE[o["noneg"]], v)
        v = np.where(den == 0, _VALUE[o["nopos"]], v)
    else:
        v = safe_div(num, den)
        v = np.where(n_exact <= 0, _VALUE[o["noneg"]], v)
        v = np.where(p == 0, _VALUE[o["nopos"]], v)
    return v if empty_list is None else np.where(ell == 0, empty_list, v)


def _user_partial_roc(h: Hits, o: dict, k: int | None, empty_list: float | None) -> np.ndarray:
    r"""Per-user standardised partial AUC over FPR in [0, m]: the area under the user's ROC
    (one vertex per distinct score, so tied pairs count ½) up to m, with the segment that
    crosses m interpolated, then :math:`\frac12\left(1 + \frac{A - m^2/2}{m - m^2/2}\right)`."""
    m = float(o["maxfpr"])
    user, pos, score, label = _rows(h)
    if k is not None:
        keep = pos <= k
        user, score, label = user[keep], score[keep], label[keep]
    p = np.bincount(user[label], minlength=h.n_users).astype(np.float64)
    ell = np.bincount(user, minlength=h.n_users).astype(np.float64)
    n = ell - p
    perm = np.lexsort((-score, user))
    u, sc, lb = user[perm], score[perm], label[perm]
    last = np.r_[(u[1:] != u[:-1]) | (sc[1:] != sc[:-1]), True] if len(u) else np.zeros(0, dtype=bool)
    tp, fp = np.cumsum(lb), np.cumsum(~lb)
    ustart = np.r_[True, u[1:] != u[:-1]] if len(u) else np.zeros(0, dtype=bool)
    base_tp = np.maximum.accumulate(np.where(ustart, np.arange(len(u)), 0)) if len(u) else np.zeros(0, dtype=np.int64)
    tp0, fp0 = (tp - lb)[base_tp], (fp - ~lb)[base_tp]  # counts before the user's first row
    vu, vt, vf = u[last], (tp - tp0)[last].astype(np.float64), (fp - fp0)[last].astype(np.float64)
    first = np.r_[True, vu[1:] != vu[:-1]] if len(vu) else np.zeros(0, dtype=bool)
    pt, pf = np.where(first, 0.0, np.r_[0.0, vt[:-1]]), np.where(first, 0.0, np.r_[0.0, vf[:-1]])
    pp, nn = p[vu], n[vu]
    ok = (pp > 0) & (nn > 0)
    y0, y1 = safe_div(pt, pp), safe_div(vt, pp)
    x0, x1 = safe_div(pf, nn), safe_div(vf, nn)
    full = x1 <= m
    cross = (x0 < m) & ~full
    ym = y0 + safe_div((y1 - y0) * (m - x0), x1 - x0)
    seg = np.where(full, (x1 - x0) * (y0 + y1) / 2, np.where(cross, (m - x0) * (y0 + ym) / 2, 0.0))
    area = np.bincount(vu[ok], weights=seg[ok], minlength=h.n_users)
    lo = m * m / 2
    v = 0.5 * (1 + (area - lo) / (m - lo))
    v = np.where(n <= 0, _VALUE[o["noneg"]], v)
    v = np.where(p == 0, _VALUE[o["nopos"]], v)
    return v if empty_list is None else np.where(ell == 0, empty_list, v)


def _check_maxfpr(o: dict) -> None:
    m = o.get("maxfpr")
    if m is None:
        return
    if not 0 < m <= 1:
        raise SpecError(f"maxfpr must lie in (0, 1], got {m}; write maxfpr=all for the whole AUC")
    bad = [f"{a}={o[a]}" for a, d in (("tied", "half"), ("negatives", "exact"), ("denominator", "list")) if o.get(a) != d]
    if bad:
        raise SpecError(
            f"maxfpr reads the ROC curve, where tied scores count ½ over the list's own negatives and positives; "
            f"it cannot be combined with {', '.join(bad)}: drop them or write maxfpr=all"
        )


def _check_catalog(o: dict) -> None:
    if o.get("negatives") == "catalog" and o.get("denominator") == "r" and o.get("tied") == "order":
        raise SpecError(
            "negatives=catalog with denominator=r ties a relevant item missing from the list with the catalogue items "
            "missing from it, which have no list position: write tied=half, tied=correct or tied=wrong (or denominator=list)"
        )


def _check_user_kind(o: dict, k: int | None = None) -> None:
    _check_maxfpr(o)
    _check_catalog(o)
    for axis in ("nopos", "noneg"):
        if o.get(axis) == "skip":
            raise SpecError(
                f"`{axis}=skip` cannot leave a user out of a per-user mean; use the global "
                f"auc(form=users,{axis}=skip), or {axis}=zero / {axis}=one"
            )


# ------------------------------------------------------------------------------------------


def _auc_resolve(o: dict, k: int | None = None) -> dict:
    o = dict(o)
    if k is not None:  # auc@k: the per-user AUC inside the top-k list; form, rows, weight do not apply
        o["form"] = o["rows"] = o["weight"] = None
        return o
    if o["form"] != "stacked":
        o["rows"] = None
    # pooled forms average no users, so the user-set policies (empty, norecs) do not apply
    if o["form"] == "stacked":
        for a in ("negatives", "denominator", "weight", "nopos", "noneg", "empty", "norecs"):
            o[a] = None
    elif o["form"] == "positives":
        for a in ("denominator", "weight", "nopos", "noneg", "empty", "norecs"):
            o[a] = None
    return o


def _auc_check(o: dict, k: int | None = None) -> None:
    if k is not None:
        _check_user_kind(o)
        return
    _check_catalog(o)
    if o["form"] == "stacked" and o["tied"] == "order":
        raise SpecError("auc(form=stacked) pools users, whose list positions are not comparable; use tied=half or tied=correct")


def _auc_partial(h: Hits, ks: list[int], o: dict) -> dict:
    """Sufficient statistics of one batch of users for ``auc`` without a cut-off.

    ``stacked``: ``by_score``, the distinct scores of the pooled rows with their positive and
    negative counts (one entry per distinct score, not per row: a batch engine that must not
    gather them aggregates them itself, see :func:`stacked_scan` / :func:`stacked_reduce`);
    ``positives``: the exact sum and
    count of :math:`s_p`; ``users``: the exact sums of :math:`w_u AUC_u` and :math:`w_u`, and
    the users that trigger an ``error`` policy (counted here, raised by :func:`_auc_combine`)."""
    form = o["form"]
    if form == "stacked":
        score, label = _stacked_rows(h, o["rows"])
        return {"by_score": _score_counts(score, label)}
    if form == "positives":
        user, pos, score, label = _rows(h)
        a = _negatives_above(user, score, label, o["tied"], h.n_users)
        p = np.bincount(user[label], minlength=h.n_users).astype(np.float64)
        ell = np.bincount(user, minlength=h.n_users).astype(np.float64)
        nprime = _nprime(h, o, ell, p, "auc")
        npos = nprime[user[label]]
        sp = np.where(npos != 0, 1.0 - safe_div(a[label], npos), 1.0)
        return {"sum": exact_sum(sp), "n": len(sp)}

    errors = {}
    no_rel = h.n_rel == 0
    no_recs = (h.length == 0) & ~no_rel
    for axis, bad in (("empty", no_rel), ("norecs", no_recs)):
        if o[axis] == "error" and bad.any():
            errors[axis] = (int(bad.sum()), h.user_ids[np.flatnonzero(bad)[0]])
    v = _user_auc(h, o, None, empty_list=None, metric="auc")
    keep, zero, _ = user_policy(h, {**o, **{a: "zero" for a in errors}}, ("empty", "norecs"))
    v = np.where(zero, 0.0, v)
    include = keep & ~np.isnan(v)
    if o["weight"] == "users":
        w = include.astype(np.float64)
    else:
        p, _, _ = _per_user_parts(h, "order", None)
        w = np.where(include, p, 0.0)
    return {"num": exact_sum(np.where(include, v, 0.0) * w), "den": exact_sum(w), "errors": errors}


def _auc_combine(parts: list[dict], ks: list[int], o: dict) -> np.ndarray:
    """``auc`` without a cut-off from the statistics of all batches (:func:`_auc_partial`)."""
    form = o["form"]
    if form == "stacked":
        if len(parts) == 1 and "reduced" in parts[0]:  # already reduced by the engine (Spark)
            num2, n_pos, n_neg = parts[0]["reduced"]
        else:
            _, pos, neg = _merge_by_score([p["by_score"] for p in parts])
            num2, n_pos, n_neg = stacked_scan(pos, neg, o["tied"])
        value = _stacked_value(num2, n_pos, n_neg, o["rows"])
    elif form == "positives":
        n = sum(p["n"] for p in parts)
        if n == 0:
            raise DataError("auc(form=positives) found no relevant item in any list")
        value = total(p["sum"] for p in parts) / n
    else:
        for axis in ("empty", "norecs"):
            errs = [p["errors"][axis] for p in parts if axis in p["errors"]]
            if errs:
                raise policy_error(axis, sum(n for n, _ in errs), min(u for _, u in errs))
        den = total(p["den"] for p in parts)
        if den == 0:
            raise DataError("auc(form=users): no user left to average (every user lacks positives or negatives, or was skipped)")
        value = total(p["num"] for p in parts) / den
    return np.array([float(value)] * len(ks))


def _stacked_holds(o: dict) -> bool:
    return o.get("form") == "stacked"


def _stacked_rows_of(part: object) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    return part["by_score"] if isinstance(part, dict) and "by_score" in part else None


def _stacked_range(score: np.ndarray, pos: np.ndarray, neg: np.ndarray, o: dict) -> Run:
    """(lowest score, 2 × numerator, P, N) of one range of scores (unsorted, maybe repeated)."""
    score, pos, neg = _merge_by_score([(score, pos, neg)])
    num2, n_pos, n_neg = stacked_scan(pos, neg, o["tied"])
    return float(score[0]), num2, n_pos, n_neg


def _stacked_runs(runs: list[Run], o: dict) -> dict:
    return stacked_reduce(runs, o["tied"])


#: the stacked AUC on a distributed backend: its by-score rows stay there (receval.reduction)
_STACKED = KeyedReduction(holds=_stacked_holds, rows=_stacked_rows_of, scan=_stacked_range, reduce=_stacked_runs)


@register(
    "auc",
    axes=[FORM, ROWS, TIED, NEGATIVES, DENOMINATOR, WEIGHT, NOPOS, NONEG],
    needs_k=False,
    optional_k=True,
    k_changes_meaning=True,
    kind="global",
    needs={"rows"},
    family="auc",
    side=_catalog_side,
    needs_when={"negatives": "catalog"},
    resolve_hook=_auc_resolve,
    check_hook=_auc_check,
    partial=_auc_partial,
    combine=_auc_combine,
    ties="closed",
    ties_settled={"tied": "order"},
    bounds=(0.0, 1.0),
    distributed=_STACKED,
)
def auc(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""AUC over full rankings (``auc``: stacked, pooled positives, or grouped), or inside the top k (``auc@k``).

    Formula
    -------
    ``auc@k`` is the per-user AUC inside each top-k list, averaged over users: the same
    quantity and options as ``gauc@k`` (RePlay ``RocAuc@k``, RecSys2019 DL evaluation
    ``roc_auc``); a dialect maps it to what its library calls RocAuc@k. Without a cut-off:

    ``form=stacked`` (default): one ROC over the rows of all truth users pooled, with the
    positives :math:`\mathcal P` and negatives :math:`\mathcal N` of all users together:

    .. math::

        AUC = \frac{1}{|\mathcal P|\,|\mathcal N|} \sum_{p \in \mathcal P} \sum_{n \in \mathcal N}
              \left(\mathbb 1[s_n < s_p] + t\,\mathbb 1[s_n = s_p]\right)

    with :math:`t = ½` (``tied=half``, = sklearn ``roc_auc_score``) or 1 (``tied=correct``),
    over every ranked row of the truth users (``rows=all``) or only the ranked rows that are
    truth rows, labelled by the relevance threshold (``rows=judged``, the inner join).
    ``form=positives`` (Elliot AUC): the mean over all positives of all users of
    :math:`s_p = 1 - a_p/N'_u`. ``form=users`` (GAUC):

    .. math::

        GAUC = \frac{\sum_u w_u\,AUC_u}{\sum_u w_u}, \qquad
        AUC_u = \frac{1}{D_u} \sum_{p \in P_u} \left(1 - \frac{a_p}{N'_u}\right)

    with :math:`w_u = 1` (``weight=users``) or :math:`P_u` (``weight=positives``, RecBole),
    :math:`D_u = P_u` (``denominator=list``) or :math:`|R_u|` (``denominator=r``). A user
    with no positive in the list scores by ``nopos``, one with no negative by ``noneg``
    (``zero``, ``one`` or ``skip``; a user without recommendations has no positive in its list,
    and ``norecs=skip`` leaves it out as well); truth users without relevant items follow ``empty``. With
    ``negatives=exact``, ``denominator=list`` and ``tied=half``, :math:`AUC_u` is the exact
    Mann–Whitney AUC of the user.

    Examples
    --------
    >>> from receval.examples import worked
    >>> worked("auc")                               # pairs: (20 > 30, 20 < 10, 40 < 10, 40 < 30) → 1/4
    0.25
    >>> worked("auc(form=positives)")               # mean(1 − 1/2, 1 − 2/2)
    0.25
    >>> worked("auc(form=users,negatives=plus_one,denominator=r)")   # (1/2 + 0) / 3, N' = 4 − 3 + 1
    0.166667
    >>> worked("auc@3")                             # list 10−, 20+, 30−: 1 − 1 / (1 · 2)
    0.5
    """
    if ks != [0]:  # auc@k: per-user values inside the top-k list (as gauc@k), averaged by the caller
        h.check_topk_settled(ks, "auc")  # ties=average: the top-k set must not depend on the tie order
        return np.stack([_user_auc(h, o, k, metric="auc") for k in ks], axis=1)
    return _auc_combine([_auc_partial(h, ks, o)], ks, o)


def _score_counts(score: np.ndarray, label: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(distinct scores ascending, positives per score, negatives per score) of pooled rows.

    Two native sorts of order-preserving 64-bit keys (every row; the positives) and run
    lengths, instead of a sort of (score, label) pairs; -0.0 and 0.0 are one score.
    """
    import polars as pl

    bits = (np.asarray(score, dtype=np.float64) + 0.0).view(np.uint64)
    sign = (bits.view(np.int64) >> 63).view(np.uint64)  # all ones for negative scores
    key = bits ^ (sign | np.uint64(1 << 63))  # ascending order of the floats
    label = np.asarray(label, dtype=bool)

    def runs(k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        srt = pl.Series(k, dtype=pl.UInt64).sort().to_numpy()
        start = np.flatnonzero(np.r_[True, srt[1:] != srt[:-1]]) if len(srt) else np.zeros(0, dtype=np.int64)
        return srt[start], np.diff(np.r_[start, len(srt)]).astype(np.int64)

    values_k, total = runs(key)
    pos_k, pos_n = runs(key[label])
    pos = np.zeros(len(values_k), dtype=np.int64)
    pos[np.searchsorted(values_k, pos_k)] = pos_n
    back = np.where(values_k >> np.uint64(63) == 1, values_k ^ np.uint64(1 << 63), ~values_k)
    return back.view(np.float64), pos, total - pos


def _merge_by_score(tables: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_score_counts` tables of several batches summed score by score."""
    if not tables:
        return np.zeros(0), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    if len(tables) == 1 and np.all(tables[0][0][1:] > tables[0][0][:-1]):  # already distinct and ascending
        return tables[0][0], np.asarray(tables[0][1], dtype=np.int64), np.asarray(tables[0][2], dtype=np.int64)
    values, inv = np.unique(np.concatenate([t[0] for t in tables]), return_inverse=True)
    inv = inv.reshape(-1)
    pos = np.zeros(len(values), dtype=np.int64)
    neg = np.zeros(len(values), dtype=np.int64)
    np.add.at(pos, inv, np.concatenate([t[1] for t in tables]).astype(np.int64))
    np.add.at(neg, inv, np.concatenate([t[2] for t in tables]).astype(np.int64))
    return values, pos, neg


_INT64_LIMIT = 2**62


def stacked_numerator(pos, neg, below, tied: str) -> int:
    r"""Twice the Mann–Whitney numerator, as an exact integer: the one place the formula lives.

    For distinct scores *s* with :math:`pos(s)` positives, :math:`neg(s)` negatives and
    :math:`below(s)` negatives with a smaller score,
    :math:`2 \sum_s pos(s)\,(below(s) + t\,neg(s))` with :math:`t = ½` (``tied=half``), 1
    (``tied=correct``) or 0 (``tied=wrong``). int64 when no product can overflow, Python integers otherwise.

    >>> stacked_numerator([1, 1], [1, 1], [0, 1], "half")   # scores 1, 2: one tie each, one pair below
    4
    """
    pos = np.asarray(pos, dtype=np.int64)
    neg = np.asarray(neg, dtype=np.int64)
    below = np.asarray(below, dtype=np.int64)
    if len(pos) == 0:
        return 0
    c = {"half": 1, "correct": 2, "wrong": 0}[tied]
    tmax = 2 * int(below.max()) + c * int(neg.max())
    if int(pos.max()) * tmax * len(pos) < _INT64_LIMIT and tmax < _INT64_LIMIT:
        return int((pos * (2 * below + c * neg)).sum())
    return sum(p * (2 * b + c * n) for p, n, b in zip(pos.tolist(), neg.tolist(), below.tolist()))


def stacked_scan(pos: np.ndarray, neg: np.ndarray, tied: str) -> tuple[int, int, int]:
    """(twice the numerator, positives, negatives) of a run of distinct scores in ascending
    order; ``below`` counts only the negatives of the run (a range partition of the scores adds
    the negatives of the lower partitions in :func:`stacked_reduce`)."""
    neg = np.asarray(neg, dtype=np.int64)
    below = np.cumsum(neg) - neg
    return stacked_numerator(pos, neg, below, tied), int(np.sum(pos)), int(neg.sum())


def stacked_reduce(runs: list[tuple[float, int, int, int]], tied: str) -> dict:
    """The stacked partial from :func:`stacked_scan` of disjoint score ranges, given as
    (lowest score, twice the numerator, positives, negatives): each range's positives also sit
    above every negative of the lower ranges, which counts as a score with no negative."""
    runs = sorted(runs, key=lambda r: r[0])
    negs = [int(r[3]) for r in runs]
    offsets = np.cumsum([0] + negs[:-1]) if runs else np.zeros(0, dtype=np.int64)
    poss = [int(r[2]) for r in runs]
    num2 = sum(int(r[1]) for r in runs) + stacked_numerator(poss, np.zeros(len(runs), np.int64), offsets, tied)
    return {"reduced": (num2, sum(poss), sum(negs))}


def _stacked_rows(h: Hits, rows: str = "all") -> tuple[np.ndarray, np.ndarray]:
    """(score, positive?) of the rows a stacked AUC pools."""
    if h.row_score is None:
        raise DataError("auc(form=stacked) compares scores across users: it needs a score column in the recommendations")
    score = h.row_score.astype(np.float64)
    t = h.row_truth
    label = (t >= 0) & h.truth_rel[np.maximum(t, 0)] if len(t) else np.zeros(0, dtype=bool)
    if rows == "judged":
        score, label = score[t >= 0], label[t >= 0]
    return score, label


def _stacked_value(num2: int, n_pos: int, n_neg: int, rows: str = "all") -> float:
    """The stacked (Mann–Whitney) AUC from twice its numerator (:func:`stacked_numerator`): one
    correctly rounded division of exact integers."""
    if n_pos == 0 or n_neg == 0:
        hint = (
            "; with rows=judged only recommended pairs that are truth rows are pooled, so the truth must hold "
            "non-relevant rows too (or use auc(rows=all), every recommended row)"
            if rows == "judged" else ""
        )
        raise DataError(
            f"auc(form=stacked) is undefined: the pooled rows hold {n_pos} positives and {n_neg} negatives{hint}"
        )
    return int(num2) / (2 * int(n_pos) * int(n_neg))


@register(
    "gauc",
    axes=[TIED, NEGATIVES, DENOMINATOR, NOPOS, NONEG, MAXFPR],
    needs_k=False,
    optional_k=True,
    needs={"rows"},
    side=_catalog_side,
    needs_when={"negatives": "catalog"},
    family="auc",
    check_hook=_check_user_kind,
    ties="closed",
    ties_settled={"tied": "order"},
    bounds=(0.0, 1.0),
)
def gauc(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""Per-user AUC over the full ranking (``gauc``) or inside the top-k list (``gauc@k``), averaged.

    Formula
    -------
    .. math:: AUC_u = \frac{1}{D_u} \sum_{p \in P_u} \left(1 - \frac{a_p}{N'_u}\right)

    over the user's whole ranking, or with ``@k`` over its first *k* items only (the positives,
    negatives and :math:`\ell_u` of the top-k list: RecSys2019 DL evaluation ``roc_auc``,
    RePlay ``RocAuc@k``, the paper's GAUC@k). :math:`D_u = P_u` (``denominator=list``, default)
    or :math:`|R_u|` (``denominator=r``), :math:`N'_u = N_u` (``negatives=exact``, default) or
    :math:`\ell_u - |R_u| + 1` (``negatives=plus_one``). With the defaults this is the exact
    Mann–Whitney AUC :math:`1 - \sum_p a_p / (P_u N_u)`. ``tied=wrong`` counts a negative with
    the positive's score above it (a tie counts 0). A list with no positive scores by
    ``nopos`` (default 0), one with no negative by ``noneg`` (default 1); an empty list scores 0.
    The mean over users is the ordinary per-user mean (``empty``, ``norecs``); for a weighted
    mean or for leaving users out, see ``auc(form=users)``.

    Examples
    --------
    >>> from receval.examples import worked
    >>> worked("gauc")                   # 1 − (1 + 2) / (2 · 2)
    0.25
    >>> worked("gauc@3")                 # list 10−, 20+, 30−: 1 − 1 / (1 · 2)
    0.5
    >>> worked("gauc@1")                 # list 10−: no positive
    0.0
    >>> worked("gauc(tied=order,negatives=plus_one,denominator=r)")   # Elliot: (1/2 + 0) / 3
    0.166667

    ``negatives=catalog`` ranks the user's list against the whole catalogue *I* (the ``catalog``
    side input, else the train items; refused without either): :math:`N'_u = |I| - |R_u \cap I|`,
    the catalogue items missing from the list rank below every listed one and tie with each
    other; with ``denominator=r`` a relevant item missing from the list counts too, below the
    :math:`N_u` listed negatives and tied with the :math:`N'_u - N_u` missing ones. With
    :math:`\tau = ½, 0, 1` for ``tied=half, correct, wrong``:

    .. math:: AUC_u = \frac{1}{|R_u|} \Big( \sum_{p \in P_u} \Big(1 - \frac{a_p}{N'_u}\Big)
              + (|R_u| - P_u)(1 - \tau) \frac{N'_u - N_u}{N'_u} \Big)

    ``gauc(negatives=catalog,denominator=r,tied=wrong)`` is Cornac's ``AUC`` (``cornac/metrics/ranking.py``
    in PreferredAI/cornac: ``(ui_scores > uj_scores).sum() / len(uj_scores)`` over every (positive,
    negative) pair of the scored catalogue, a tie counting 0). Cornac scores the whole
    catalogue and also leaves the user's train items out of its negatives; pass the catalogue
    without them, or full rankings, to reproduce it.

    >>> from receval import evaluate    # user 1: list 10−, 20+; likes 20 and 30 (30 unlisted); catalogue 10..50
    >>> recs = {"user_id": [1, 1], "item_id": [10, 20], "score": [2.0, 1.0]}
    >>> truth = {"user_id": [1, 1], "item_id": [20, 30]}
    >>> spec = "gauc(negatives=catalog,denominator=r,tied=wrong)"
    >>> round(evaluate(recs, truth, [spec], catalog=[10, 20, 30, 40, 50])[spec], 6)   # N' = 3: (1 − 1/3 + 0) / 2
    0.333333
    >>> spec = "gauc(negatives=catalog,denominator=r,tied=half)"   # 30 ties 40, 50: (2/3 + ½ · 2/3) / 2
    >>> round(evaluate(recs, truth, [spec], catalog=[10, 20, 30, 40, 50])[spec], 6)
    0.5

    ``maxfpr=m`` replaces the AUC by the standardised partial AUC over false-positive rates
    :math:`[0, m]` (McClish 1989; scikit-learn's and torchmetrics' ``max_fpr``): with
    :math:`A_m` the area under the user's ROC curve up to FPR *m* (the segment crossing *m*
    interpolated; tied scores form one diagonal segment, i.e. count ½),

    .. math:: pAUC_u = \tfrac12 \left(1 + \frac{A_m - m^2/2}{m - m^2/2}\right)

    >>> worked("gauc(maxfpr=0.5)")       # ROC (0,0) (½,0) (½,½) (1,½) (1,1): A = 0, (1 + (0 − 1/8)/(3/8))/2
    0.333333
    """
    h.check_topk_settled(ks, "gauc")  # ties=average: the top-k set must not depend on the tie order
    return np.stack([_user_auc(h, o, k if k else None) for k in ks], axis=1)


@register(
    "lauc",
    axes=[TIED, NEGATIVES],
    needs={"rows"},
    side=_catalog_side,
    needs_when={"negatives": "catalog"},
    family="auc",
    ties="closed",
    bounds=(0.0, 1.0),
)
def lauc(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""Limited AUC@k (Schröder, Thiele, Lehner 2011; Elliot LAUC): AUC credit of the positives in the top k.

    Formula
    -------
    .. math:: LAUC@k_u = \frac{1}{\min(k, |R_u|)} \sum_{p \in P_u,\ pos_p \le k} \left(1 - \frac{a_p}{N'_u}\right)

    with :math:`a_p` and :math:`N'_u` over the user's **full** ranking (only the positives are
    limited to the top k); 0 when :math:`|R_u| = 0`; a term with :math:`N'_u = 0` counts 1 (Elliot
    divides by zero there; :math:`N'_u < 0`, possible with ``plus_one`` when relevant items are
    missing from a list that is not a full ranking, is used as it is, like Elliot).
    Elliot's LAUC is ``lauc(tied=order,negatives=plus_one)``.

    With ``ties=average`` a positive's slot *t* in its tie group (*n* items, *b* of them
    negatives, *A* negatives in the groups above) is uniform:
    :math:`E = \frac{1}{n}\sum_{t<m} (1 - a(t)/N'_u)` over the *m* slots inside the top k, with
    :math:`a(t) = A + b/2` (``tied=half``), *A* (``correct``) or :math:`A + t\,b/(n-1)` (``order``).

    Examples
    --------
    >>> from receval.examples import worked
    >>> worked("lauc@2")                 # (1 − 1/2) / min(2, 3)
    0.25
    >>> worked("lauc@4")                 # (1/2 + 0) / 3
    0.166667
    """
    user, pos, score, label = _rows(h)
    a = _negatives_above(user, score, label, o["tied"], h.n_users)
    p = np.bincount(user[label], minlength=h.n_users).astype(np.float64)
    ell = np.bincount(user, minlength=h.n_users).astype(np.float64)
    nprime = _nprime(h, o, ell, p, "lauc")
    pu, pp, pa = user[label], pos[label], a[label]
    npos = nprime[pu]
    sp = np.where(npos != 0, 1.0 - safe_div(pa, npos), 1.0)
    r = h.n_rel.astype(np.float64)
    out = np.empty((h.n_users, len(ks)))
    if h.row_lo is not None:  # ties=average: the positive's slot t in its group is uniform
        order = np.lexsort((h.row_pos, h.row_user))
        lo, n = h.row_lo[order][label], (h.row_hi - h.row_lo + 1)[order][label]
        strict = _negatives_above(user, score, label, "correct", h.n_users)[label]  # A: the groups above
        b = 2.0 * (_negatives_above(user, score, label, "half", h.n_users)[label] - strict)  # the group's negatives
    for j, k in enumerate(ks):  # a loop over cut-offs, not users
        if h.row_lo is not None:
            # E[1(lo + t ≤ k)(1 − a(t)/N')] = (m − Σ_{t<m} a(t)/N') / n, a(t) = A + (b/2 | 0 | t·b/(n − 1))
            m = np.clip(k - lo + 1, 0, n).astype(np.float64)
            extra = {"half": m * b / 2, "correct": 0.0 * m, "wrong": m * b,
                     "order": np.where(n > 1, b / np.maximum(n - 1, 1), 0.0) * m * (m - 1) / 2}[o["tied"]]
            w = np.where(npos != 0, m - safe_div(m * strict + extra, npos), m) / n
            num = np.bincount(pu, weights=w, minlength=h.n_users)
        else:
            keep = pp <= k
            num = np.bincount(pu[keep], weights=sp[keep], minlength=h.n_users)
        out[:, j] = safe_div(num, np.minimum(float(k), r))
    return out


# ------------------------------------------------------------------------------------------
# partial AUC over the top-k negatives (RecTools PartialAUC / PAP)

INSUFFICIENT = Axis(
    "insufficient", "insuf", "ignore",
    "a user whose list holds fewer than k negatives while some relevant item is missing from it "
    "(so the metric cannot see where that item would rank among the top k negatives)",
    {
        "ignore": "computed as it is: a missing relevant item ranks below every negative (understates the value)",
        "exclude": "the user is left out of the mean",
        "error": "refuse the input, naming how many users and the fix",
    },
)


def _top_negative_parts(h: Hits) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per hit (sorted by user, position): its 1-based index among the user's hits, and
    :math:`f` = the negatives ranked above it (positions before it that hold no hit; a rank
    left out of a rank column counts as a negative, as RecTools' filled ranks do); per user
    the negatives of the list, :math:`\\max(\\ell_u, \\text{last position}) - H_u`."""
    hu, hp = h.hit_user, h.hit_pos
    idx = np.arange(len(hu))
    start = np.r_[True, hu[1:] != hu[:-1]] if len(hu) else np.zeros(0, dtype=bool)
    first = np.maximum.accumulate(np.where(start, idx, 0)) if len(hu) else idx
    j = idx - first + 1
    # hits at strictly smaller positions (equal positions: tied ranks or optimistic ties)
    key = hu * (int(hp.max()) + 2 if len(hp) else 1) + hp
    before = np.searchsorted(key, key, side="left") - first
    f = (hp - 1 - before).astype(np.float64)
    last = np.zeros(h.n_users, dtype=np.int64)
    if h.row_user is not None and len(h.row_user):
        np.maximum.at(last, h.row_user, h.row_pos)
    hits = np.bincount(hu, minlength=h.n_users)
    neg = np.maximum(h.length, last) - hits
    return j, f, neg


def _insufficient(h: Hits, neg: np.ndarray, k: int, o: dict, name: str) -> np.ndarray:
    """Users with fewer than k negatives in the list and a relevant item missing from it."""
    hits = np.bincount(h.hit_user, minlength=h.n_users)
    bad = (neg < k) & (h.n_rel > hits)
    if o["insufficient"] == "error" and bad.any():
        raise DataError(
            f"{name}@{k}: {int(bad.sum())} users have fewer than {k} non-relevant recommendations while a relevant "
            f"item is missing from their list (e.g. user {h.user_ids[np.flatnonzero(bad)[0]]}); recommend at least "
            f"|R| + {k} items per user, or pass insufficient=exclude (leave them out) or insufficient=ignore"
        )
    return bad if o["insufficient"] == "exclude" else np.zeros(h.n_users, dtype=bool)


def _expected_partial_auc(h: Hits, ks: list[int], o: dict, name: str, top_positives: bool) -> np.ndarray:
    """``ties=average``: E[pAUC@k] / E[pAp@k] over the orderings of the tie groups. A group at
    lo..lo+n−1 with r hits and b = n − r negatives, F negatives and H_b hits above it: a hit at
    slot t has y ~ Hypergeometric(n − 1, b, t) of the group's negatives above it (f = F + y)
    and t − y of its hits (j = H_b + t − y + 1); every hit of the group has the same law."""
    gu, lo, n, r, hb = tie_group_table(h)
    b = n - r
    F = lo - 1 - hb  # positions above the group that hold no hit (score order leaves no gaps)
    _, _, neg = _top_negative_parts(h)
    R = h.n_rel.astype(np.float64)
    out = np.empty((h.n_users, len(ks)))
    for c, k in enumerate(ks):  # a loop over cut-offs, not users
        room = np.clip(k - 1 - F, -1, None)  # y ≤ room keeps f < k
        tmax = np.where(room >= 0, np.minimum(n - 1, r - 1 + np.minimum(b, room)), -1)
        g2, t2, y, p = slot_draws(n, b, tmax + 1, cap=room)  # y of the group's b negatives above slot t
        val = (k - F[g2] - y).astype(np.float64)
        if top_positives:
            val = np.where(hb[g2] + t2 - y + 1 <= k, val, 0.0)
        per_group = np.bincount(g2, weights=p * val, minlength=len(gu)) * r / n
        num = np.bincount(gu, weights=per_group, minlength=h.n_users)
        den = (np.minimum(R, k) if top_positives else R) * k
        out[:, c] = np.where(_insufficient(h, neg, k, o, name), np.nan, safe_div(num, den))
    return out


def _partial_auc(h: Hits, ks: list[int], o: dict, name: str, top_positives: bool) -> np.ndarray:
    if h.hit_lo is not None:
        return _expected_partial_auc(h, ks, o, name, top_positives)
    j, f, neg = _top_negative_parts(h)
    out = np.empty((h.n_users, len(ks)))
    r = h.n_rel.astype(np.float64)
    for c, k in enumerate(ks):  # a loop over cut-offs, not users
        keep = f < k
        if top_positives:
            keep &= j <= k
        num = np.bincount(h.hit_user[keep], weights=k - f[keep], minlength=h.n_users)
        den = (np.minimum(r, k) if top_positives else r) * k
        v = safe_div(num, den)
        out[:, c] = np.where(_insufficient(h, neg, k, o, name), np.nan, v)
    return out


@register("pauc", axes=[INSUFFICIENT], needs={"rows"}, family="auc", skips=True, ties="closed", bounds=(0.0, 1.0))
def pauc(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""Partial AUC over the top-k negatives, pAUC@k (RecTools PartialAUC; Hiranandani et al., ICML 2020).

    Formula
    -------
    .. math:: pAUC@k_u = \frac{1}{k\,|R_u|} \sum_{p \in P_u,\ f_p < k} (k - f_p)

    the AUC of all of the user's relevant items against its *k* best-ranked negatives: a
    relevant item at a position with :math:`f_p` negatives above it beats the
    :math:`k - f_p` top negatives below it; a relevant item missing from the list beats none.
    Here *k* counts negatives, not list positions. With ``order=rank`` a rank left out of the
    rank column counts as a negative (RecTools fills the ranks 1..max). A list with fewer than
    *k* negatives while a relevant item is missing from it is ``insufficient``: ``ignore``
    (default, RecTools' default) computes it as it is, ``exclude`` leaves the user out of the
    mean, ``error`` refuses the input.

    With ``ties=average`` a hit at slot *t* of its tie group (*n* items, *r* hits, *b* = *n* − *r*
    negatives; *F* negatives above the group) has :math:`f = F + y`,
    :math:`y \sim \mathrm{Hypergeometric}(n-1, b, t)`, *t* uniform: the expectation is a finite
    sum over (t, y), the same for every hit of the group (``pap`` also counts
    :math:`j = H_b + t - y + 1`).

    Examples
    --------
    >>> from receval.examples import worked
    >>> worked("pauc@2")    # hits at positions 2 (f = 1) and 4 (f = 2): (2 − 1) / (2 · 3)
    0.166667
    >>> worked("pauc@3")    # ((3 − 1) + (3 − 2)) / (3 · 3)
    0.333333
    """
    return _partial_auc(h, ks, o, "pauc", top_positives=False)


@register("pap", axes=[INSUFFICIENT], needs={"rows"}, family="auc", skips=True, ties="closed", bounds=(0.0, 1.0))
def pap(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""Partial AUC + precision, pAp@k (RecTools PAP; Hiranandani et al., ICML 2020).

    Formula
    -------
    .. math:: pAp@k_u = \frac{1}{k \min(k, |R_u|)} \sum_{p \in P_u,\ j_p \le k,\ f_p < k} (k - f_p)

    the AUC of the user's first :math:`\min(k, |R_u|)` relevant items (:math:`j_p` is the index
    of the hit among the user's hits) against its *k* best-ranked negatives, with
    :math:`f_p` the negatives ranked above the hit. It behaves like precision@k when
    :math:`|R_u| \ge k` and like pAUC@k otherwise. ``insufficient`` as for ``pauc``.

    Examples
    --------
    >>> from receval.examples import worked
    >>> worked("pap@2")     # (2 − 1) / (2 · min(2, 3))
    0.25
    >>> worked("pap@3")     # ((3 − 1) + (3 − 2)) / (3 · 3)
    0.333333
    """
    return _partial_auc(h, ks, o, "pap", top_positives=True)
