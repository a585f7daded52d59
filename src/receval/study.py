"""The published numbers of the RecSys'21 consistency study, for comparison.

Tamm, Damdinov, Vasilev, *Quality Metrics in Recommender Systems: Do We Calculate Metrics
Consistently?* (RecSys 2021). Values at k = 20 on MovieLens-20M with EASE, as stored in the
study's companion repository (Darel13712/compare_metrics, ``res.csv`` and ``res_auc.csv`` at
88603f8; the RePlay row from the pre-publication ``res.csv`` at 4a6dee7; RecSys_PyTorch as
rounded there). ``None`` means the library has no such metric (or it failed: DaisyRec's AUC@20
raised, and the paper lists only the authors' repairs, 0.1914 | 0.4033, which are not shown).
"""

from __future__ import annotations

#: the study's columns, as receval metric strings
COLUMNS = ["hitrate@20", "precision@20", "recall@20", "mrr@20", "map@20", "ndcg@20", "auc@20", "auc"]
#: the study's column titles
TITLES = ["HitRate@20", "Precision@20", "Recall@20", "MRR@20", "MAP@20", "NDCG@20", "RocAuc@20", "RocAuc"]

#: the eleven libraries of the study, as dialect names, in the study's order
STUDY_DIALECTS = [
    "daisyrec", "recbole", "elliot", "beta_recsys", "ms_recommenders", "openrec",
    "neurec", "dlrs_eval", "rs_metrics", "replay", "recsys_pytorch",
]

#: the version of each library the study ran, named explicitly: an unversioned dialect name
#: means the newest verified version (:func:`receval.dialects.load_dialect`), not the study's
STUDY_VERSIONS = {
    "daisyrec": "daisyrec@1.1.2", "recbole": "recbole@0.2.1", "elliot": "elliot@0.3.1",
    "beta_recsys": "beta_recsys@0.3.2", "ms_recommenders": "ms_recommenders@2021.2.9", "openrec": "openrec@0.3.0",
    "neurec": "neurec@f8d3ab7", "dlrs_eval": "dlrs_eval@f5618c6", "rs_metrics": "rs_metrics@0.5.0",
    "replay": "replay@0.4.0", "recsys_pytorch": "recsys_pytorch@4787f1a",
}

_N = None
PUBLISHED: dict[str, list[float | None]] = {
    #                  HitRate@20           Precision@20          Recall@20            MRR@20               MAP@20                 NDCG@20              RocAuc@20            RocAuc
    "daisyrec":        [0.47457006952067327, 0.0575192096597146, 0.09632131280310641, 0.2748816881385201, 0.022970972145948697, 0.09326437896736813, _N, _N],
    "recbole":         [0.47457006952067327, 0.057519209659714604, 0.09632131280310642, 0.18632413351027097, 0.03927176078866248, 0.09326437896736814, _N, 0.686625474152309],
    "elliot":          [0.47457006952067327, 0.0575192096597146, 0.09632131280310641, 0.18632413351027094, 0.07298532565140084, 0.08984914516171721, _N, 0.6881719788628613],
    "beta_recsys":     [_N, 0.0575192096597146, 0.09632131280310642, _N, 0.031690245847362415, 0.09326437896736813, _N, 0.686625474152309],
    "ms_recommenders": [_N, 0.0575192096597146, 0.09632131280310642, _N, 0.031690245847362415, 0.09326437896736813, _N, 0.686625474152309],
    "openrec":         [_N, 0.0575192096597146, 0.096321315, _N, _N, 0.4626283, _N, 0.7048781],
    "neurec":          [0.47457007, 0.0575192096597146, 0.096321315, 0.18632413, 0.0028783712115732244, 0.09326437896736813, _N, _N],
    "dlrs_eval":       [1.150384193194292, 0.057519209659714604, 0.09632131280310642, 0.18632413351027025, 0.03927176078866242, 0.07981995730519437, 0.28317447310115185, _N],
    "rs_metrics":      [0.47457006952067327, 0.057519209659714604, 0.09632131280310642, 0.18632413351027097, 0.031690245847362415, 0.09326437896736813, _N, _N],
    "replay":          [0.4745700695206733, 0.057519209659714576, 0.09632131280310642, 0.18632413351027105, 0.03927176078866247, 0.09326437896736814, 0.2831744731011519, _N],
    "recsys_pytorch":  [_N, 0.0575, 0.0963, _N, _N, 0.0933, _N, _N],
}

#: the study's protocol as far as its companion repository shows it
PROTOCOL = {
    "dataset": "MovieLens-20M (a subset: test timestamps 2006-06-06 .. 2009-01-05)",
    "relevance": "rating >= 4.5",
    "split": "global timestamp split",
    "model": "EASE, binary X, lambda = 0.5",
    "ranking": "every train item not in the user's train history, full ranking",
    "k": 20,
    "test_users": 2733,
    "test_items": 4146,
    "test_rows": 38811,
}
