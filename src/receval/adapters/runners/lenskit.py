"""Peer runner: LensKit (lenskit/lkpy, PyPI lenskit 2026.4.0), env lk (Python 3.13, no torch).

Public API used: lenskit.metrics.{NDCG, DCG, Precision, Recall, Hit, RecipRank,
AveragePrecision, RBP} measured with lenskit.metrics.MeasurementCollector.add_list_measurement
(the per-list step of add_collection_measurements / measure_run) and summarised with its own
summary_metrics() (the metric's accumulator: mean over the lists, NaN lists dropped).
Input: one ordered ItemList per recommendation user (item_id in rank order, ``ordered=True``;
LensKit's rank is the list position, it has no tie rule of its own) against the user's test
ItemList (item_id, ``rating`` field). Users measured = recommendation users that have truth rows
(LensKit measures the output lists of the test users; a list without test data gets an empty
test list: NaN for most metrics, but Precision scores it 0 and AveragePrecision raises
ZeroDivisionError, so recommendation-only users are not passed). Truth users without a list
are never measured.
Emitted names (each @k, and without @k for n=None, the whole list):
NDCG, NDCG(gain=rating), DCG, DCG(gain=rating), Precision, Recall, Hit, RecipRank,
AveragePrecision, RBP, RBP(normalize=True), RBP(patience=0.5), NDCG(offset=1) (LogRankWeight(offset=1)).
torch: lenskit.data imports it, the list metrics never use it; without torch in the env the
stand-in src/receval/adapters/runners/_torch_stub.py is installed first (see receval/adapters/envs/lk.txt).
"""
import importlib.util
import sys
import warnings
from pathlib import Path

import _common  # noqa: E402  (first: it drops this folder from sys.path, see _common.py)
Result, load = _common.Result, _common.load

try:
    import torch  # noqa: F401
    TORCH = "torch " + torch.__version__
except ImportError:
    _spec = importlib.util.spec_from_file_location("_torch_stub", Path(__file__).resolve().parent / "_torch_stub.py")
    _stub = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_stub)
    _stub.install()
    TORCH = "torch stand-in (_torch_stub.py)"

from importlib.metadata import version  # noqa: E402

import numpy as np  # noqa: E402
from lenskit.data import ItemList  # noqa: E402
from lenskit.metrics import (  # noqa: E402
    DCG, NDCG, RBP, Hit, LogRankWeight, MeasurementCollector, Precision, Recall, RecipRank,
)
from lenskit.metrics.ranking import AveragePrecision  # noqa: E402


def metrics_for(n):
    sfx = "" if n is None else f"@{n}"
    return [
        (f"NDCG{sfx}", NDCG(n)),
        (f"NDCG(gain=rating){sfx}", NDCG(n, gain="rating")),
        (f"NDCG(offset=1){sfx}", NDCG(n, weight=LogRankWeight(offset=1))),
        (f"DCG{sfx}", DCG(n)),
        (f"DCG(gain=rating){sfx}", DCG(n, gain="rating")),
        (f"Precision{sfx}", Precision(n)),
        (f"Recall{sfx}", Recall(n)),
        (f"Hit{sfx}", Hit(n)),
        (f"RecipRank{sfx}", RecipRank(n)),
        (f"AveragePrecision{sfx}", AveragePrecision(n)),
        (f"RBP{sfx}", RBP(n)),
        (f"RBP(normalize=True){sfx}", RBP(n, normalize=True)),
        (f"RBP(patience=0.5){sfx}", RBP(n, patience=0.5)),
    ]


def main() -> None:
    recs, truth, params, out = load()
    res = Result("lenskit", version("lenskit"))
    with res.timed("prepare_s"):
        recs = recs.sort_values(["user_id", "rank"], kind="stable")
        tests = {
            int(u): ItemList(item_ids=g["item_id"].to_numpy(), rating=g["rating"].to_numpy())
            for u, g in truth.groupby("user_id", sort=True)
        }
        outputs = {
            int(u): ItemList(item_ids=g["item_id"].to_numpy(), scores=g["score"].to_numpy(), ordered=True)
            for u, g in recs.groupby("user_id", sort=True)
            if int(u) in tests
        }
        named = [m for n in [*params["k"], None] for m in metrics_for(n)]
        collector = MeasurementCollector()
        for label, metric in named:
            collector.add_metric(metric, label)
    with res.timed("compute_s"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for u, il in outputs.items():
            collector.add_list_measurement(il, tests[u], user_id=u)
        per = collector.list_metrics()
        summary = collector.summary_metrics()
    for label, _ in named:
        col = per[label]
        res.add(label, summary[f"{label}.mean"], {int(u): (np.nan if v is None else float(v)) for u, v in col.items()})
    res.note(f"users = recommendation users with truth rows ({len(outputs)}); list order = rank column; {TORCH}")
    res.write(out)


if __name__ == "__main__":
    main()
