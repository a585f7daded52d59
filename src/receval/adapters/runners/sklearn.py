"""Peer runner: scikit-learn (PyPI scikit-learn 1.8.0): sklearn.metrics.ndcg_score, roc_auc_score.

Input preparation (sklearn wants dense (n_users, n_items) matrices):
  rows = users in recs ∪ truth (sorted), columns = items in recs ∪ truth (sorted);
  y_score = the recs' score; for items the user was not recommended: (global min score - 1)
  for non-truth items and (global min score - 2) for truth items, i.e. ranked after the list
  with misses first (a duplicated (user,item) row keeps its first score); y_true = 1 for truth rows (binary) or the rating (graded), else 0.
ndcg_score(y_true, y_score, k=k) ranks by y_score with ties AVERAGED (ignore_ties=False,
the default), IDCG from y_true (top-k true gains, so min(k,|R|) when binary); a row whose
y_true is all 0 scores 0 and still counts in the mean. Per-user values: ndcg_score on each
single row (the library only returns the mean).
roc_auc_score(y_true, y_score) "stacked": ONE ROC over all recommendation rows of all users
(label = row is a truth pair, score = score), as MS Recommenders/Beta-RecSys `auc` pool it.
Emitted names: ndcg_score@k, ndcg_score(ignore_ties=True)@k, ndcg_score(graded)@k,
roc_auc_score (stacked, no k), roc_auc_score(per_user_mean) (mean over users having both
classes among their recommendation rows of per-user roc_auc_score).
"""
import sys
import warnings
from pathlib import Path

import _common  # noqa: E402  (first: it drops this folder from sys.path, see _common.py)
Result, load = _common.Result, _common.load

from importlib.metadata import version  # noqa: E402

import numpy as np  # noqa: E402
from sklearn.metrics import ndcg_score, roc_auc_score  # noqa: E402


def main() -> None:
    recs, truth, params, out = load()
    res = Result("sklearn", version("scikit-learn"))
    with res.timed("prepare_s"):
        users = sorted(set(recs["user_id"].tolist()) | set(truth["user_id"].tolist()))
        items = sorted(set(recs["item_id"].tolist()) | set(truth["item_id"].tolist()))
        ui = {u: n for n, u in enumerate(users)}
        ii = {i: n for n, i in enumerate(items)}
        r = recs.drop_duplicates(["user_id", "item_id"], keep="first")
        low = (float(r["score"].min()) - 1.0) if len(r) else 0.0
        y_score = np.full((len(users), len(items)), low)
        y_score[[ui[u] for u in r["user_id"]], [ii[i] for i in r["item_id"]]] = r["score"].to_numpy()
        t = truth.drop_duplicates(["user_id", "item_id"], keep="first")
        tu = [ui[u] for u in t["user_id"]]
        ti = [ii[i] for i in t["item_id"]]
        y_bin = np.zeros_like(y_score)
        y_bin[tu, ti] = 1.0
        # unrecommended truth items go below every unrecommended non-truth item, so a short
        # list is padded with misses first (no tie credit from the padding)
        y_score = np.where(y_score == low, low - y_bin, y_score)
        y_grad = np.zeros_like(y_score)
        y_grad[tu, ti] = t["rating"].to_numpy()
        truth_pairs = set(zip(t["user_id"].tolist(), t["item_id"].tolist()))
        rec_label = np.array([(u, i) in truth_pairs for u, i in zip(recs["user_id"], recs["item_id"])], dtype=int)
    with res.timed("compute_s"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if len(items) >= 2:
            for k in params["k"]:
                for name, yt, kw in [
                    (f"ndcg_score@{k}", y_bin, {}),
                    (f"ndcg_score(ignore_ties=True)@{k}", y_bin, {"ignore_ties": True}),
                    (f"ndcg_score(graded)@{k}", y_grad, {}),
                ]:
                    mean = ndcg_score(yt, y_score, k=k, **kw)
                    per = {u: ndcg_score(yt[[n]], y_score[[n]], k=k, **kw) for u, n in ui.items()}
                    res.add(name, mean, per)
        else:
            res.note("ndcg_score skipped: needs at least 2 items")
        if 0 < rec_label.sum() < len(rec_label):
            res.add("roc_auc_score", roc_auc_score(rec_label, recs["score"].to_numpy()))
        else:
            res.add("roc_auc_score", float("nan"))
            res.note("roc_auc_score undefined: recommendation rows are all positive or all negative")
        per = {}
        for u, g in recs.assign(label=rec_label).groupby("user_id"):
            if 0 < g["label"].sum() < len(g):
                per[u] = roc_auc_score(g["label"].to_numpy(), g["score"].to_numpy())
        res.add("roc_auc_score(per_user_mean)", float(np.mean(list(per.values()))) if per else float("nan"), per)
    res.write(out)


if __name__ == "__main__":
    main()
