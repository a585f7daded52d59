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


def _pairs(h: Hits, o: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(user code, predicted, true) for every truth pair that has a prediction."""
    if h.row_score is None:
        raise DataError("mae/rmse need predicted ratings in the score column of the recommendations")
    matched = h.row_truth >= 0
    t_idx = h.row_truth[matched]
    n_truth = int(h.n_truth.sum())
    n_missing = n_truth - len(np.unique(t_idx))
    if n_missing and o["missing"] == "error":
        raise DataError(
            f"{n_missing} truth pairs have no predicted rating; pass missing='skip' to leave them out"
        )
    return h.truth_user[t_idx], h.row_score[matched], h.truth_rating[t_idx]


def _mean_error(h: Hits, o: dict, power: int) -> float:
    user, pred, true = _pairs(h, o)
    if len(user) == 0:
        raise DataError("no truth pair has a prediction: nothing to average")
    err = np.abs(pred - true) ** power
    if o["average"] == "pairs":
        m = err.mean()
    else:
        s = np.bincount(user, weights=err, minlength=h.n_users)
        c = np.bincount(user, minlength=h.n_users)
        m = (s[c > 0] / c[c > 0]).mean()
    return float(np.sqrt(m)) if power == 2 else float(m)


@register("mae", axes=[AVERAGE, MISSING], needs_k=False, kind="global", context=("dup", "tdup"), needs={"rows"}, family="rating")
def mae(h: Hits, ks: list[int], o: dict) -> np.ndarray:
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
    return np.array([_mean_error(h, o, 1)] * len(ks))


@register("rmse", axes=[AVERAGE, MISSING], needs_k=False, kind="global", context=("dup", "tdup"), needs={"rows"}, family="rating")
def rmse(h: Hits, ks: list[int], o: dict) -> np.ndarray:
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
    return np.array([_mean_error(h, o, 2)] * len(ks))
