"""Peer runner: Microsoft Recommenders (recommenders-team/recommenders, PyPI recommenders 1.2.1,
installed --no-deps), module recommenders.evaluation.python_evaluation.

Public API used: precision_at_k, recall_at_k, ndcg_at_k, map, map_at_k, r_precision_at_k, auc
with rating_true = truth frame (user_id, item_id, rating), rating_pred = recs frame
(user_id, item_id, score), col_user='user_id', col_item='item_id', col_rating='rating',
col_prediction='score', relevancy_method='top_k', k=k. MS takes the top k per user itself by
sorting on the prediction (stable sort: ties keep the input row order). Every truth row is
relevant whatever its rating. Users: truth ∩ pred for precision/recall/map/map_at_k;
ndcg_at_k averages over ALL truth users (missing ones count 0); r_precision_at_k only over
users with a hit at rank <= |R|. The library returns means only (no per_user).
Emitted names: precision_at_k@k recall_at_k@k map@k (÷|R|) map_at_k@k (÷min(k,|R|))
r_precision_at_k@k ndcg_at_k@k (defaults: score_type='binary', discfun_type='loge'),
"ndcg_at_k(score_type=<binary|raw|exp>,discfun_type=<loge|log2>)@k" for all 6 combinations,
auc (stacked sklearn ROC over the inner join; only when every truth rating is 0 or 1).
"""
import sys
import warnings
from pathlib import Path

import _common  # noqa: E402  (first: it drops this folder from sys.path, see _common.py)
Result, load = _common.Result, _common.load

from importlib.metadata import version  # noqa: E402

from recommenders.evaluation import python_evaluation as pe  # noqa: E402


def main() -> None:
    recs, truth, params, out = load()
    res = Result("recommenders", version("recommenders"))
    cols = dict(col_user="user_id", col_item="item_id", col_prediction="score")
    with res.timed("prepare_s"):
        rating_true = truth[["user_id", "item_id", "rating"]]
        rating_pred = recs[["user_id", "item_id", "score"]]
    with res.timed("compute_s"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for k in params["k"]:
            kw = dict(cols, relevancy_method="top_k", k=k)
            for fn in ["precision_at_k", "recall_at_k", "map", "map_at_k", "r_precision_at_k", "ndcg_at_k"]:
                extra = {"col_rating": "rating"} if fn == "ndcg_at_k" else {}
                res.add(f"{fn}@{k}", getattr(pe, fn)(rating_true, rating_pred, **kw, **extra))
            for st in ["binary", "raw", "exp"]:
                for dt in ["loge", "log2"]:
                    v = pe.ndcg_at_k(rating_true, rating_pred, col_rating="rating", score_type=st, discfun_type=dt, **kw)
                    res.add(f"ndcg_at_k(score_type={st},discfun_type={dt})@{k}", v)
        if len(truth) and truth["rating"].isin([0.0, 1.0]).all():
            res.add("auc", pe.auc(rating_true, rating_pred, col_rating="rating", **cols))
        else:
            res.note("auc skipped: needs binary 0/1 truth labels (stacked ROC over the truth⋈pred inner join)")
    res.write(out)


if __name__ == "__main__":
    main()
