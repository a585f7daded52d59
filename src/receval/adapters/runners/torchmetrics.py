"""Peer runner: torchmetrics retrieval (Lightning-AI/torchmetrics, PyPI torchmetrics 1.9.0, torch 2.13.0+cpu).

Public API used: torchmetrics.retrieval.Retrieval{Precision,Recall,HitRate,MRR,MAP,
NormalizedDCG,AUROC,RPrecision}(top_k=k, ...) via metric(preds, target, indexes=indexes)
with flat tensors built from the recommendation rows only:
  preds = score (float64), target = 1 if (user,item) is a truth row else 0, indexes = user_id.
So every metric sees only the recommended items: Recall divides by the positives present
in the list (not |R|), NDCG's ideal comes from the list's own targets, etc. Order inside a
query is by preds (topk/argsort; ties unspecified; NDCG averages tied gains).
Since 1.4/1.9 (PR #3160) AP/Precision/Recall/RR mask targets whose pred <= 0.
Users = users with recommendation rows; a query with no positive row counts 0
(empty_target_action='neg', default). Per-user values via aggregation=callable.
Emitted names: RetrievalPrecision@k, RetrievalPrecision(adaptive_k=True)@k, RetrievalRecall@k,
RetrievalHitRate@k, RetrievalMRR@k, RetrievalMAP@k, RetrievalNormalizedDCG@k,
RetrievalNormalizedDCG(graded)@k (target = rating of the truth row, 0 otherwise),
RetrievalAUROC@k, RetrievalAUROC(max_fpr=0.3)@k, RetrievalRPrecision (no k).
"""
import sys
import warnings
from pathlib import Path

import _common  # noqa: E402  (first: it drops this folder from sys.path, see _common.py)
Result, load = _common.Result, _common.load

from importlib.metadata import version  # noqa: E402

import torch  # noqa: E402
from torchmetrics import retrieval as R  # noqa: E402


def _identity(values, dim=None):
    return values


def main() -> None:
    recs, truth, params, out = load()
    res = Result("torchmetrics", version("torchmetrics"))
    res.doc["env"]["torch"] = torch.__version__
    with res.timed("prepare_s"):
        # first truth row wins for the graded target
        rating = truth.drop_duplicates(["user_id", "item_id"]).set_index(["user_id", "item_id"])["rating"]
        key = list(zip(recs["user_id"].tolist(), recs["item_id"].tolist()))
        grade = rating.reindex(key).fillna(0.0).to_numpy()
        preds = torch.tensor(recs["score"].to_numpy(), dtype=torch.float64)
        target = torch.tensor(rating.reindex(key).notna().to_numpy(), dtype=torch.long)
        graded = torch.tensor(grade, dtype=torch.float64)
        indexes = torch.tensor(recs["user_id"].to_numpy(), dtype=torch.long)
        users = sorted(set(recs["user_id"].tolist()))
    specs = []
    for k in params["k"]:
        specs += [
            (f"RetrievalPrecision@{k}", R.RetrievalPrecision, dict(top_k=k), target),
            (f"RetrievalPrecision(adaptive_k=True)@{k}", R.RetrievalPrecision, dict(top_k=k, adaptive_k=True), target),
            (f"RetrievalRecall@{k}", R.RetrievalRecall, dict(top_k=k), target),
            (f"RetrievalHitRate@{k}", R.RetrievalHitRate, dict(top_k=k), target),
            (f"RetrievalMRR@{k}", R.RetrievalMRR, dict(top_k=k), target),
            (f"RetrievalMAP@{k}", R.RetrievalMAP, dict(top_k=k), target),
            (f"RetrievalNormalizedDCG@{k}", R.RetrievalNormalizedDCG, dict(top_k=k), target),
            (f"RetrievalNormalizedDCG(graded)@{k}", R.RetrievalNormalizedDCG, dict(top_k=k), graded),
            (f"RetrievalAUROC@{k}", R.RetrievalAUROC, dict(top_k=k), target),
            (f"RetrievalAUROC(max_fpr=0.3)@{k}", R.RetrievalAUROC, dict(top_k=k, max_fpr=0.3), target),
        ]
    specs.append(("RetrievalRPrecision", R.RetrievalRPrecision, {}, target))
    with res.timed("compute_s"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, cls, kw, tgt in specs:
            if len(preds) == 0:
                res.add(name, float("nan"), {})
                continue
            mean = cls(**kw)(preds, tgt, indexes=indexes)
            per = cls(aggregation=_identity, **kw)(preds, tgt, indexes=indexes)
            res.add(name, float(mean), dict(zip(users, per.reshape(-1).tolist())))
    res.write(out)


if __name__ == "__main__":
    main()
