"""Peer runner: RecTools (MobileTeleSystems/RecTools, PyPI rectools 0.19.0), rectools.metrics.

Runs in the numpy<2 env 'np1'. Public API used: metric objects from rectools.metrics with
.calc(reco, interactions) (mean) and .calc_per_user(reco, interactions) (per user).
reco = our recs frame with the library's column names user_id, item_id, rank (RecTools
orders by the explicit `rank` column, never by score; scores are not used). interactions =
truth frame (user_id, item_id) -- every row is a test positive (duplicates are not removed).
Users = interactions (test) users; users without recommendations score 0; users only in reco
are ignored.

Emitted names (k in params):
  Precision@k, Precision(r_precision=True)@k, Recall@k, HitRate@k, MRR@k,
  MAP@k (default: / |R|), MAP(divide_by_k=True)@k,
  NDCG@k (default: IDCG = all k slots relevant), NDCG(divide_by_achievable=True)@k (min(k,|R|)),
  PartialAUC@k, PAP@k (insufficient_handling="ignore", the default),
  PartialAUC(exclude)@k, PAP(exclude)@k (insufficient_handling="exclude").
"""
import sys
import warnings
from pathlib import Path

import _common  # noqa: E402  (first: it drops this folder from sys.path, see _common.py)
Result, load = _common.Result, _common.load

from importlib.metadata import version  # noqa: E402

from rectools.metrics import MAP, MRR, NDCG, PAP, HitRate, PartialAUC, Precision, Recall  # noqa: E402

VARIANTS = [
    ("Precision", Precision, {}),
    ("Precision(r_precision=True)", Precision, {"r_precision": True}),
    ("Recall", Recall, {}),
    ("HitRate", HitRate, {}),
    ("MRR", MRR, {}),
    ("MAP", MAP, {}),
    ("MAP(divide_by_k=True)", MAP, {"divide_by_k": True}),
    ("NDCG", NDCG, {}),
    ("NDCG(divide_by_achievable=True)", NDCG, {"divide_by_achievable": True}),
    ("PartialAUC", PartialAUC, {}),
    ("PAP", PAP, {}),
    ("PartialAUC(exclude)", PartialAUC, {"insufficient_handling": "exclude"}),
    ("PAP(exclude)", PAP, {"insufficient_handling": "exclude"}),
]


def main() -> None:
    recs, truth, params, out = load()
    res = Result("rectools", version("rectools"))
    with res.timed("prepare_s"):
        reco = recs[["user_id", "item_id", "rank"]].copy()
        interactions = truth[["user_id", "item_id"]].copy()
    with res.timed("compute_s"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, cls, kw in VARIANTS:
            for k in params["k"]:
                m = cls(k=k, **kw)
                per = m.calc_per_user(reco, interactions)
                mean = m.calc(reco, interactions)
                res.add(f"{name}@{k}", mean, per.to_dict())
    res.write(out)


if __name__ == "__main__":
    main()
