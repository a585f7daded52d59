"""Peer runner: RePlay (sb-ai-lab/RePlay, PyPI replay-rec 0.22.0), replay.metrics.

Public API used: replay.metrics.{HitRate,Precision,Recall,MRR,MAP,NDCG,RocAuc}(topk=ks,
query_column='user_id', item_column='item_id', rating_column='score', mode=Mean()|PerUser())
called as metric(recommendations, ground_truth).

Two input paths, both public:
  * pandas DataFrames (the documented default): recs frame (user_id, item_id, score); RePlay
    sorts by (score, item_id) descending itself, so score ties go to the LARGER item id.
    Names: "HitRate@k", "Precision@k", ... (RePlay's own result keys).
  * dicts: {user: [(item, score), ...]} in our ranking order and {user: [items]}; RePlay keeps
    the order if the scores are non-increasing, else re-sorts by score with a stable sort.
    Names: "dict:HitRate@k", ...
Users = ground-truth users; users without recs count 0; users only in recs are ignored.
"""
import sys
import warnings
from pathlib import Path

import _common  # noqa: E402  (first: it drops this folder from sys.path, see _common.py)
Result, load = _common.Result, _common.load

from importlib.metadata import version  # noqa: E402

from replay.metrics import MAP, MRR, NDCG, HitRate, Precision, Recall, RocAuc  # noqa: E402
from replay.metrics.descriptors import Mean, PerUser  # noqa: E402

CLASSES = [HitRate, Precision, Recall, MRR, MAP, NDCG, RocAuc]


def main() -> None:
    recs, truth, params, out = load()
    ks = sorted(params["k"])
    res = Result("replay", version("replay-rec"))
    kw = dict(query_column="user_id", item_column="item_id", rating_column="score")
    with res.timed("prepare_s"):
        pd_recs = recs[["user_id", "item_id", "score"]]
        pd_truth = truth[["user_id", "item_id"]]
        d_recs = {}
        for u, i, s in zip(recs["user_id"].tolist(), recs["item_id"].tolist(), recs["score"].tolist()):
            d_recs.setdefault(u, []).append((i, s))
        d_truth = {}
        for u, i in zip(truth["user_id"].tolist(), truth["item_id"].tolist()):
            d_truth.setdefault(u, []).append(i)
    with res.timed("compute_s"), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for prefix, r, t in [("", pd_recs, pd_truth), ("dict:", d_recs, d_truth)]:
            for cls in CLASSES:
                means = cls(ks, mode=Mean(), **kw)(r, t)
                per = cls(ks, mode=PerUser(), **kw)(r, t)
                for k in ks:
                    name = f"{cls.__name__}@{k}"
                    per_name = f"{cls.__name__}-PerUser@{k}"
                    res.add(prefix + name, means[name], per[per_name])
    for w in {str(w.message) for w in caught if "duplicat" in str(w.message).lower()}:
        res.note(f"warning: {w}")
    res.write(out)


if __name__ == "__main__":
    main()
