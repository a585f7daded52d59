r"""Rating-prediction errors: MAE and RMSE.

The recommendations carry the *predicted* rating in their score column; the ground truth
carries the true rating. Each (user, item) pair of the truth is matched with its prediction.
"""

from __future__ import annotations

import numpy as np

from ..errors import DataError
from ..hits import Hits
from ..options import Axis
from ..registry import register
from ._exact import exact_sum, total

AVERAGE = Axis(
    "average", "avg", "pairs", "what the errors are averaged over",
    {
        "pairs": "every (user, item) pair of the truth alike (the usual definition)",
        "users": "per user first, then over users (each user weighs the same)",
    },
)
MISSING = Axis(
    "missing", "missing", "error", "a truth pair with no prediction",
    {
        "error": "refuse the input and say how many",
        "skip": "leave the pair out (the signature records it)",
    },
)


def _pairs(h: Hits, o: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(user code, predicted, true) for every truth pair that has a prediction, and the number of
    truth pairs without one (an error with ``missing=error``, raised over all batches by ``combine``)."""
    if h.row_score is None:
        raise DataError("mae/rmse need predicted ratings in the score column of the recommendations")
    matched = h.row_truth >= 0
    t_idx = h.row_truth[matched]
    pred = h.row_score[matched]
    if o.get("tdup") == "keep" and h.truth_item is not None and len(t_idx):
        t_idx, pred = _every_row_of_the_pair(h, t_idx, pred)
    n_truth = int(h.n_truth.sum())
    n_missing = n_truth - len(np.unique(t_idx))
    return h.truth_user[t_idx], pred, h.truth_rating[t_idx], n_missing


def _every_row_of_the_pair(h: Hits, t_idx: np.ndarray, pred: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``tdup=keep``: every truth row of a repeated (user, item) pair is a pair of its own, so a
    prediction matched to one row of the pair (``t_idx``) is compared with each of them."""
    assert h.truth_user is not None and h.truth_item is not None
    _, icode = np.unique(h.truth_item, return_inverse=True)
    _, grp = np.unique(h.truth_user * (int(icode.max()) + 1) + icode.ravel(), return_inverse=True)
    grp = grp.ravel()
    size = np.bincount(grp)
    if size.max() == 1:
        return t_idx, pred
    by_grp = np.argsort(grp, kind="stable")
    start = np.r_[0, np.cumsum(size)[:-1]]
    reps = size[grp[t_idx]]
    first = np.repeat(start[grp[t_idx]], reps)
    within = np.arange(int(reps.sum())) - np.repeat(np.cumsum(reps) - reps, reps)
    return by_grp[first + within], np.repeat(pred, reps)


def _error_partial(h: Hits, o: dict, power: int) -> dict:
    """Sums and counts of one batch of users: Σ errors and pairs (``average=pairs``), or Σ of the
    per-user means and users (``average=users``); exact sums (:mod:`receval.metrics._exact`)."""
    user, pred, true, n_missing = _pairs(h, o)
    err = np.abs(pred - true) ** power
    if o["average"] == "pairs":
        return {"sum": exact_sum(err), "n": len(err), "missing": n_missing}
    s = np.bincount(user, weights=err, minlength=h.n_users)
    c = np.bincount(user, minlength=h.n_users)
    return {"sum": exact_sum(s[c > 0] / c[c > 0]), "n": int((c > 0).sum()), "missing": n_missing}


def _error_combine(parts: list[dict], o: dict, power: int) -> float:
    n_missing = sum(p["missing"] for p in parts)
    if n_missing and o["missing"] == "error":
        raise DataError(
            f"{n_missing} truth pairs have no predicted rating; pass missing='skip' to leave them out"
        )
    n = sum(p["n"] for p in parts)
    if n == 0:
        raise DataError("no truth pair has a prediction: nothing to average")
    m = total(p["sum"] for p in parts) / n
    return float(np.sqrt(m)) if power == 2 else float(m)


def _mae_partial(h: Hits, ks: list[int], o: dict) -> dict:
    return _error_partial(h, o, 1)


def _mae_combine(parts: list[dict], ks: list[int], o: dict) -> np.ndarray:
    return np.array([_error_combine(parts, o, 1)] * len(ks))


def _rmse_partial(h: Hits, ks: list[int], o: dict) -> dict:
    return _error_partial(h, o, 2)


def _rmse_combine(parts: list[dict], ks: list[int], o: dict) -> np.ndarray:
    return np.array([_error_combine(parts, o, 2)] * len(ks))


@register("mae", axes=[AVERAGE, MISSING], needs_k=False, kind="global", context=("dup", "tdup"), needs={"rows"}, needs_when={"tdup": "keep"}, family="rating",
          partial=_mae_partial, combine=_mae_combine, higher_is_better=False, bounds=(0.0, float("inf")))
def mae(h: Hits, ks: list[int], o: dict) -> None:
    r"""MAE: the mean absolute error of predicted ratings.

    Formula
    -------
    .. math:: MAE = \frac{1}{|T|} \sum_{(u,i) \in T} |\hat r_{ui} - r_{ui}|

    over the truth pairs *T* (``average=pairs``), or the mean over users of each user's MAE
    (``average=users``).

    Examples
    --------
    >>> from receval import evaluate
    >>> preds = {"user_id": [1, 1, 2], "item_id": [1, 2, 1], "score": [4.0, 3.0, 2.0]}
    >>> truth = {"user_id": [1, 1, 2], "item_id": [1, 2, 1], "rating": [5.0, 3.0, 4.0]}
    >>> evaluate(preds, truth, ["mae"])["mae"]            # (1 + 0 + 2) / 3
    1.0
    >>> evaluate(preds, truth, ["mae(average=users)"])["mae(average=users)"]   # ((1+0)/2 + 2) / 2
    1.25
    """


@register("rmse", axes=[AVERAGE, MISSING], needs_k=False, kind="global", context=("dup", "tdup"), needs={"rows"}, needs_when={"tdup": "keep"}, family="rating",
          partial=_rmse_partial, combine=_rmse_combine, higher_is_better=False, bounds=(0.0, float("inf")))
def rmse(h: Hits, ks: list[int], o: dict) -> None:
    r"""RMSE: the root of the mean squared error of predicted ratings.

    Formula
    -------
    .. math:: RMSE = \sqrt{\frac{1}{|T|} \sum_{(u,i) \in T} (\hat r_{ui} - r_{ui})^2}

    (``average=users`` takes the root of the mean over users of each user's mean squared error).

    Examples
    --------
    >>> from receval import evaluate
    >>> preds = {"user_id": [1, 1, 2], "item_id": [1, 2, 1], "score": [4.0, 3.0, 2.0]}
    >>> truth = {"user_id": [1, 1, 2], "item_id": [1, 2, 1], "rating": [5.0, 3.0, 4.0]}
    >>> round(evaluate(preds, truth, ["rmse"])["rmse"], 6)   # sqrt((1 + 0 + 4) / 3)
    1.290994
    """
