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

# This file's name equals the library's: drop the script dir from sys.path so that
# `import rs_metrics` finds the library, and load the shared helper by path.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
import importlib.util as _ilu  # noqa: E402

_spec = _ilu.spec_from_file_location("_peer_common", _HERE / "_common.py")
_common = _ilu.module_from_spec(_spec)
_spec.loader.exec_module(_common)
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
