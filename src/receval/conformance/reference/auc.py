"""A slow per-user reference for the per-user AUC (``gauc``, ``gauc@k``, ``auc@k``) and the limited
AUC (``lauc@k``): plain Python over every
(positive, negative) pair of a user, written from the docstrings of receval/metrics/auc.py (the
``tied``, ``negatives``, ``denominator``, ``nopos`` and ``noneg`` options); nothing imports
receval's formulas.

Per user, over its whole list (or its first k items): the positives are the listed items that
are hits, the negatives the other listed items. For a positive *p*, ``a_p`` counts the negatives
ranked above it: a greater score counts 1, an equal score ½ (``tied=half``), 0 (``correct``) or
1 (``wrong``); with ``tied=order`` (or without a score column) an earlier list position counts 1.
``s_p = 1 − a_p / N'`` (1 when N' = 0), N' = the listed negatives (``exact``), ℓ − |R| + 1
(``plus_one``) or the catalogue items that are not relevant (``catalog``: a listed item outside
the catalogue is refused). With ``catalog`` and ``denominator=r`` every relevant item missing from
the list adds ``(1 − τ)(N' − N) / N'``: below the N listed negatives, tied with the N' − N missing
ones (τ the share a tie counts a negative above: ½, 0, 1). The value is Σ / P (``list``) or
Σ / |R| (``r``); no negative (N ≤ 0, or N' ≤ 0 with ``catalog``) scores by ``noneg``, no positive
averaged by ``nopos`` (which wins), an empty list 0. ``auc@k`` is the same quantity inside the
top-k list. ``lauc@k`` sums ``s_p`` over the positives at positions ≤ k only, a_p and N' over the
whole list, and divides by min(k, |R|) (0 when |R| = 0).
"""

from __future__ import annotations

from .ranking import RefError, policy_values, prepare, split_options

AUC_DEFAULTS = {
    "gauc": {"tied": "half", "negatives": "exact", "denominator": "list", "nopos": "zero", "noneg": "one", "maxfpr": None},
    # auc@k: the per-user AUC inside the top-k list, the quantity and options of gauc@k (form, rows
    # and weight do not apply at a cut-off); auc without a cut-off (the pooled forms) is not covered
    "auc": {"tied": "half", "negatives": "exact", "denominator": "list", "nopos": "zero", "noneg": "one", "maxfpr": None,
            "form": None, "rows": None, "weight": None},
    "lauc": {"tied": "half", "negatives": "exact"},
}
AUC_VALUES = {
    "gauc": {"tied": ["half", "correct", "order", "wrong"], "negatives": ["exact", "plus_one", "catalog"],
             "denominator": ["list", "r"], "nopos": ["zero", "one"], "noneg": ["zero", "one"]},
    "lauc": {"tied": ["half", "correct", "order", "wrong"], "negatives": ["exact", "plus_one", "catalog"]},
}
_MISSING = {"zero": 0.0, "one": 1.0}
_TIE = {"half": 0.5, "correct": 0.0, "wrong": 1.0}


def _above(o: dict, neg: tuple, pos: tuple) -> float:
    """How much the negative ``neg`` = (list index, score) counts above the positive ``pos``."""
    (jn, sn), (jp, sp) = neg, pos
    if o["tied"] == "order" or sn is None or sp is None:
        return 1.0 if jn < jp else 0.0
    if sn > sp:
        return 1.0
    return _TIE[o["tied"]] if sn == sp else 0.0


def per_user_auc(o: dict, k: int | None, user: dict, catalogue: set) -> float:
    top = [(j, pos, item) for j, (pos, item) in enumerate(user["ranked"]) if k is None or pos <= k]
    if not top:
        return 0.0
    R = len(user["rel"])
    positives = [(j, user["scores"][j]) for j, _, _ in top if j in user["hit_rows"]]
    negatives = [(j, user["scores"][j]) for j, _, _ in top if j not in user["hit_rows"]]
    P, N = len(positives), len(negatives)
    if o["negatives"] == "exact":
        nprime = float(N)
    elif o["negatives"] == "plus_one":
        nprime = float(len(top) - R + 1)
    else:
        nprime = float(len(catalogue) - sum(1 for i in user["rel_items"] if i in catalogue))
    total = 0.0
    for p in positives:
        a = sum(_above(o, n, p) for n in negatives)
        total += 1.0 if nprime == 0 else 1.0 - a / nprime
    catalog = o["negatives"] == "catalog"
    if catalog and o["denominator"] == "r":
        if o["tied"] == "order":
            raise RefError("negatives=catalog, denominator=r, tied=order")  # refused as a spec
        total += (R - P) * (1.0 - _TIE[o["tied"]]) * (0.0 if nprime == 0 else (nprime - N) / nprime)
    den = P if o["denominator"] == "list" else R
    value = 0.0 if den == 0 else total / den
    if (nprime if catalog else N) <= 0:
        value = _MISSING[o["noneg"]]
    if (den if catalog else P) == 0:
        value = _MISSING[o["nopos"]]
    return value


def per_user_lauc(o: dict, k: int, user: dict, catalogue: set) -> float:
    """LAUC@k: Σ over the positives at positions ≤ k of ``1 − a_p / N'`` (1 when N' = 0), a_p and
    N' over the user's whole list (N' = N, ℓ − |R| + 1 or |I| − |R ∩ I|), over min(k, |R|)."""
    listed = list(enumerate(user["ranked"]))
    R = len(user["rel"])
    negatives = [(j, user["scores"][j]) for j, _ in listed if j not in user["hit_rows"]]
    if o["negatives"] == "exact":
        nprime = float(len(negatives))
    elif o["negatives"] == "plus_one":
        nprime = float(len(listed) - R + 1)
    else:
        nprime = float(len(catalogue) - sum(1 for i in user["rel_items"] if i in catalogue))
    total = 0.0
    for j, (pos, _) in listed:
        if j in user["hit_rows"] and pos <= k:
            a = sum(_above(o, n, (j, user["scores"][j])) for n in negatives)
            total += 1.0 if nprime == 0 else 1.0 - a / nprime
    den = min(k, R)
    return 0.0 if den == 0 else total / den


def reference_auc(recs, truth, metric, k, options=None, *, train=None, catalog=None):
    """``(per_user, mean)`` of ``gauc`` (``k`` None: the whole list), ``auc@k`` and ``lauc@k``."""
    options = options or {}
    if metric not in AUC_DEFAULTS:
        raise KeyError(metric)
    if metric != "gauc" and k is None:
        raise NotImplementedError(f"{metric} without a cut-off has no reference here")
    ctx, o = split_options(options, AUC_DEFAULTS[metric])
    if metric == "auc" and any(o[a] is not None for a in ("form", "rows", "weight")):
        raise NotImplementedError("auc@k: form, rows and weight do not apply")
    if o.get("maxfpr") is not None or o.get("nopos", "zero") not in _MISSING or o.get("noneg", "one") not in _MISSING:
        raise NotImplementedError("maxfpr and skip have no reference here")
    users = prepare(recs, truth, ctx, metric)
    if "score" not in recs:
        for data in users.values():
            data["scores"] = [None] * len(data["ranked"])
    if catalog is not None:
        cat = set(catalog)
    elif train is not None:
        cat = set(train["item_id"])
    else:
        cat = set(recs["item_id"]) | set(truth["item_id"])
    ratings: dict = {}  # (user, item) -> the ratings of its truth rows, in order
    has_rating = "rating" in truth
    for j in range(len(truth["user_id"])):
        r = float(truth["rating"][j]) if has_rating else 1.0
        ratings.setdefault((truth["user_id"][j], truth["item_id"][j]), []).append(r)
    rel_items: dict = {u: [] for u in users}
    for (u, i), rs in ratings.items():  # the kept rows: tdup=first the first, max the highest, keep all
        kept = rs if ctx["tdup"] == "keep" else [max(rs) if ctx["tdup"] == "max" else rs[0]]
        rel_items[u].extend(i for r in kept if ctx["rel"] is None or r >= ctx["rel"])
    if o["negatives"] == "catalog":
        if any(i not in cat for data in users.values() for _, i in data["ranked"]):
            raise RefError("recommended item outside the catalogue")  # the one rule of every catalogue reader
    if metric == "lauc":
        return policy_values(users, ctx, lambda u, data: per_user_lauc(o, k, dict(data, rel_items=rel_items[u]), cat))
    return policy_values(users, ctx, lambda u, data: per_user_auc(o, k, dict(data, rel_items=rel_items[u]), cat))
