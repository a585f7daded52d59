"""`auc` / `auc@k` resolve per dialect to what the library calls AUC / RocAuc@k."""

import numpy as np
import pytest

from receval import SpecError, evaluate
from receval.cli import explain


def _data(seed=3):
    rng = np.random.default_rng(seed)
    users = np.repeat(np.arange(30), 25)
    items = np.concatenate([rng.permutation(60)[:25] for _ in range(30)])
    scores = rng.random(len(users)).round(2)  # some ties
    truth_u = np.repeat(np.arange(30), 6)
    truth_i = np.concatenate([rng.permutation(60)[:6] for _ in range(30)])
    return ({"user_id": users, "item_id": items, "score": scores}, {"user_id": truth_u, "item_id": truth_i})


def test_auc_at_k_is_the_top_k_user_auc():
    recs, truth = _data()
    res = evaluate(recs, truth, ["auc@10", "gauc@10", "auc", "gauc"], ties="input")  # rounded scores: ties straddle k
    assert res["auc@10"] == pytest.approx(res["gauc@10"], abs=1e-15)
    assert res["auc"] != pytest.approx(res["auc@10"])
    assert res.per_user()["auc@10"].to_list() == res.per_user()["gauc@10"].to_list()


def test_replay_rocauc_at_k():
    recs, truth = _data()
    replay = evaluate(recs, truth, ["auc@10"], dialect="replay@0.22")
    ref = evaluate(recs, truth, ["gauc(tied=order,nopos=zero,noneg=one)@10"], ties="item_desc")
    assert replay["auc@10"] == pytest.approx(ref.value("gauc(tied=order,nopos=zero,noneg=one)@10"), abs=1e-15)
    assert "tied:order" in replay.signature("auc@10")


def test_a_library_without_a_top_k_auc_says_so():
    recs, truth = _data()
    with pytest.raises(SpecError, match="has no metric 'auc@k'"):
        evaluate(recs, truth, ["auc@10"], dialect="recbole")
    # but its full-ranking AUC is there
    assert 0 <= evaluate(recs, truth, ["auc"], dialect="recbole")["auc"] <= 1


def test_explain_auc_at_k():
    text = explain("auc@20", "dlrs_eval")
    assert "tied: half -> order" in text
    assert "auc@20|" in text
