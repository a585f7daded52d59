"""Peer runner: rs_metrics (Darel13712/rs_metrics, PyPI rs-metrics 0.6.0).

Public API used: rs_metrics.{hitrate,precision,recall,mrr,mapr,ndcg}(true_df, pred_df, k=k,
apply_mean=...) with the library's default user_col='user_id', item_col='item_id'.
rs_metrics never sorts: the list order is the row order of pred_df (= our ranking order).
Users = users of the truth frame (iteration `for user in true`); a truth user without
recommendations gets precision NaN (empty list mean), which poisons the mean (written null).
Emitted names: hitrate@k precision@k recall@k mrr@k mapr@k ndcg@k.
"""
import sys
import warnings
from pathlib import Path

import _common  # noqa: E402  (first: it drops this folder from sys.path, see _common.py)
Result, load = _common.Result, _common.load

import numpy as np  # noqa: E402
import rs_metrics  # noqa: E402
from importlib.metadata import version  # noqa: E402


def main() -> None:
    recs, truth, params, out = load()
    res = Result("rs_metrics", version("rs-metrics"))
    with res.timed("prepare_s"):
        true_df = truth[["user_id", "item_id"]]
        pred_df = recs[["user_id", "item_id"]]  # row order is the ranking order
        users = sorted(true_df["user_id"].unique().tolist())  # = order of pandas_to_dict(true)
    with res.timed("compute_s"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ["hitrate", "precision", "recall", "mrr", "mapr", "ndcg"]:
            fn = getattr(rs_metrics, name)
            for k in params["k"]:
                per = fn(true_df, pred_df, k=k, apply_mean=False)
                mean = fn(true_df, pred_df, k=k)  # the library's own mean (np.mean over truth users)
                res.add(f"{name}@{k}", mean, dict(zip(users, per)))
    res.note("users = truth users; rows of pred_df taken in file order (no sorting by score)")
    res.write(out)


if __name__ == "__main__":
    main()
