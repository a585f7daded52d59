"""A slow reference for the rating errors (mae, rmse) under the duplicate rules: plain Python
from the docstrings of receval/metrics (``mae``, ``rmse``) and the option docs; nothing imports
receval's formulas.

The truth pairs T are the truth rows kept by ``tdup`` (``error``: a repeated (user, item) is
refused; ``first``: its first row, refused when its rows disagree on the rating; ``max``: the row
of the highest rating; ``keep``: every row is a pair of T). The predicted rating r̂_ui is the score
of the recommendation row of (u, i), kept by ``dup`` (``error``: a repeated row is refused;
``first``: the best-ranked row, by the rank column, else the highest score; ``keep``: every row is
a prediction, so a pair of T is counted once per prediction row). A pair of T without a
prediction is refused (``missing=error``) or left out (``skip``).

MAE = Σ |r̂ − r| / n over the n (prediction, truth row) pairs (``average=pairs``), or the mean
over users of each user's mean; RMSE the root of the mean of the squares (``average=users``:
the root of the mean over users of each user's mean square).
"""

from __future__ import annotations

import math

from .ranking import RefError

ERROR_DEFAULTS = {"mae": {"average": "pairs", "missing": "error"}, "rmse": {"average": "pairs", "missing": "error"}}


def reference_errors(recs, truth, metric, options=None):
    """``(None, value)``."""
    options = options or {}
    if metric not in ERROR_DEFAULTS:
        raise KeyError(metric)
    o = {**ERROR_DEFAULTS[metric], "dup": "error", "tdup": "error", **options}
    rows: dict = {}
    for u, i, r in zip(truth["user_id"], truth["item_id"], truth["rating"]):
        rows.setdefault((u, i), []).append(float(r))
    pairs = []
    for (u, i), rs in rows.items():
        if len(rs) > 1:
            if o["tdup"] == "error":
                raise RefError("truth duplicates")
            if o["tdup"] == "first":
                if len(set(rs)) > 1:
                    raise RefError("tdup=first: repeats disagree")
                rs = rs[:1]
            elif o["tdup"] == "max":
                rs = [max(rs)]
        pairs.extend((u, i, r) for r in rs)
    preds: dict = {}
    has_rank = "rank" in recs
    for j, (u, i, s) in enumerate(zip(recs["user_id"], recs["item_id"], recs["score"])):
        preds.setdefault((u, i), []).append((recs["rank"][j] if has_rank else -s, float(s)))
    for key, ps in preds.items():
        if len(ps) > 1:
            if o["dup"] == "error":
                raise RefError("prediction duplicates")
            if o["dup"] == "first":
                preds[key] = [min(ps, key=lambda t: t[0])]
    errs: list = []
    for u, i, r in pairs:
        ps = preds.get((u, i))
        if not ps:
            if o["missing"] == "error":
                raise RefError("a truth pair without a prediction")
            continue
        errs.extend((u, abs(p - r)) for _, p in ps)
    if not errs:
        raise RefError("no pair left")
    sq = metric == "rmse"

    def mean(values):
        return sum(e * e if sq else e for e in values) / len(values)

    if o["average"] == "pairs":
        m = mean([e for _, e in errs])
    else:
        users = sorted({u for u, _ in errs})
        m = sum(mean([e for uu, e in errs if uu == u]) for u in users) / len(users)
    return None, (math.sqrt(m) if sq else m)
