"""A slow per-user reference for the per-user AUC (``gauc``, ``gauc@k``): plain Python over every
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
averaged by ``nopos`` (which wins), an empty list 0.
"""

from __future__ import annotations

from .ranking import CONTEXT_DEFAULTS, RefError, policy_values, prepare

AUC_DEFAULTS = {
    "gauc": {"tied": "half", "negatives": "exact", "denominator": "list", "nopos": "zero", "noneg": "one", "maxfpr": None},
}
AUC_VALUES = {
    "gauc": {"tied": ["half", "correct", "order", "wrong"], "negatives": ["exact", "plus_one", "catalog"],
             "denominator": ["list", "r"], "nopos": ["zero", "one"], "noneg": ["zero", "one"]},
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


def reference_auc(recs, truth, metric, k, options=None, *, train=None, catalog=None):
    """``(per_user, mean)`` of ``gauc`` (``k`` None: the whole list)."""
    options = options or {}
    if metric not in AUC_DEFAULTS:
        raise KeyError(metric)
    ctx = {**CONTEXT_DEFAULTS, **{a: v for a, v in options.items() if a in CONTEXT_DEFAULTS}}
    o = {**AUC_DEFAULTS[metric], **{a: v for a, v in options.items() if a not in CONTEXT_DEFAULTS}}
    if o.get("maxfpr") is not None or o["nopos"] not in _MISSING or o["noneg"] not in _MISSING:
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
    return policy_values(users, ctx, lambda u, data: per_user_auc(o, k, dict(data, rel_items=rel_items[u]), cat))
