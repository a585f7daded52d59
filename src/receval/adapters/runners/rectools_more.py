"""Peer runner: RecTools 0.19.0 beyond-accuracy and data-quality metrics (env np1).

Public API used: rectools.metrics AvgRecPopularity, MeanInvUserFreq, Serendipity,
SufficientReco, UnrepeatedReco, CoveredUsers, Intersection and their calc_per_user / calc.
reco = recs (user_id, item_id, rank); interactions = truth (user_id, item_id);
prev_interactions = train.parquet; ref_reco = baseline.parquet; catalog = every item of
recs, truth and train. RecTools measures the users of reco (CoveredUsers: of interactions).
Emitted names: AvgRecPopularity@k, MeanInvUserFreq@k, Serendipity@k, SufficientReco@k,
SufficientReco(deep=True)@k, UnrepeatedReco@k, UnrepeatedReco(deep=True)@k, CoveredUsers@k,
Intersection@k, IntraListDiversity(hamming)@k (Hamming distance over one-hot item features
built from categories.parquet).
"""
import sys
import warnings

from _side import load_side  # noqa: E402  (before _common, which drops this folder from sys.path)
import _common  # noqa: E402
Result, load = _common.Result, _common.load

from importlib.metadata import version  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from rectools.metrics import (  # noqa: E402
    AvgRecPopularity, CoveredUsers, Intersection, IntraListDiversity, MeanInvUserFreq, Serendipity, SufficientReco,
    UnrepeatedReco,
)
from rectools.metrics.distances import PairwiseHammingDistanceCalculator  # noqa: E402


def main() -> None:
    recs, truth, params, out = load()
    train, base, cats = load_side(sys.argv[1])
    res = Result("rectools", version("rectools"))
    reco = recs[["user_id", "item_id", "rank"]].copy()
    interactions = truth[["user_id", "item_id"]].copy()
    prev = train[["user_id", "item_id"]].copy()
    ref = base[["user_id", "item_id", "rank"]].copy()
    features = pd.crosstab(cats["item_id"], cats["category"]).astype(float)  # one-hot item features
    hamming = PairwiseHammingDistanceCalculator(features)
    catalog = np.unique(np.concatenate([reco["item_id"], interactions["item_id"], prev["item_id"]]))
    with res.timed("compute_s"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for k in params["k"]:
            for name, m, args in [
                ("AvgRecPopularity", AvgRecPopularity(k=k), (reco, prev)),
                ("MeanInvUserFreq", MeanInvUserFreq(k=k), (reco, prev)),
                ("Serendipity", Serendipity(k=k), (reco, interactions, prev, catalog)),
                ("SufficientReco", SufficientReco(k=k), (reco,)),
                ("SufficientReco(deep=True)", SufficientReco(k=k, deep=True), (reco,)),
                ("UnrepeatedReco", UnrepeatedReco(k=k), (reco,)),
                ("UnrepeatedReco(deep=True)", UnrepeatedReco(k=k, deep=True), (reco,)),
                ("CoveredUsers", CoveredUsers(k=k), (reco, interactions)),
                ("Intersection", Intersection(k=k), (reco, ref)),
                ("IntraListDiversity(hamming)", IntraListDiversity(k=k, distance_calculator=hamming), (reco,)),
            ]:
                per = m.calc_per_user(*args)
                res.add(f"{name}@{k}", float(per.mean()), per.to_dict())
    res.write(out)


if __name__ == "__main__":
    main()
