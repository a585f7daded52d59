"""Issue 12's deviations, each a named option value with a golden written as arithmetic:
LensKit's clipped rank discount and clipped negative gains, trec_eval's docno-as-text ties."""

from __future__ import annotations

import math

import pytest

import receval

RECS = {"user_id": [1, 1, 1], "item_id": [2, 3, 1], "score": [3.0, 2.0, 1.0]}
TRUTH = {"user_id": [1, 1, 1], "item_id": [1, 2, 3]}


def test_lenskit_discount_clips_ranks_at_two():
    # LensKit's own example: recs [2, 3, 1], truth {1, 2, 3}: 1/log2 2 + 1/log2 2 + 1/log2 3
    res = receval.evaluate(RECS, TRUTH, ["dcg@3", "dcg(discount=log)@3"], dialect="lenskit")
    assert res["dcg@3"] == pytest.approx(1 + 1 + 1 / math.log2(3), abs=1e-12)
    assert res["dcg(discount=log)@3"] == pytest.approx(1 + 1 / math.log2(3) + 1 / 2, abs=1e-12)
    assert "disc:logmax2" in res.signature("dcg@3")
    # a perfect list is 1 under either discount (the same discount in the ideal)
    assert receval.evaluate(RECS, TRUTH, ["ndcg(discount=logmax2)@3"]).values == {"ndcg(discount=logmax2)@3": 1.0}


def test_logmax2_with_a_miss_on_top():
    recs = {"user_id": [1, 1, 1], "item_id": [9, 2, 3], "score": [3.0, 2.0, 1.0]}
    truth = {"user_id": [1, 1], "item_id": [2, 3]}
    # DCG = 1/log2 2 (position 2) + 1/log2 3 (position 3); IDCG = 1/log2 2 + 1/log2 2
    got = receval.evaluate(recs, truth, ["ndcg(discount=logmax2)@3"])["ndcg(discount=logmax2)@3"]
    assert got == pytest.approx((1 + 1 / math.log2(3)) / 2, abs=1e-12)


def test_lenskit_clips_negative_gains():
    truth = dict(TRUTH, rating=[-1.0, -2.0, -3.0])
    assert receval.evaluate(RECS, truth, ["ndcg(gain=linear)@3"], dialect="lenskit")["ndcg(gain=linear)@3"] == 0.0
    with pytest.raises(receval.DataError, match="neg=zero"):  # rel=all: the negative ratings are relevant
        receval.evaluate(RECS, truth, ["ndcg(gain=linear)@3"], rel="all")


@pytest.mark.parametrize(("items", "relevant", "rr"), [
    ([9, 10, 11], 10, 1 / 3),      # as text, descending: "9" > "11" > "10"
    ([9, 10, 100, 2], 100, 1 / 3),  # "9" > "2" > "100" > "10"
    ([9, 10, 100, 2], 2, 1 / 2),
])
def test_trec_eval_ties_by_docno_as_text(items, relevant, rr):
    recs = {"user_id": [1] * len(items), "item_id": items, "score": [0.5] * len(items)}
    truth = {"user_id": [1], "item_id": [relevant]}
    res = receval.evaluate(recs, truth, ["mrr@10"], dialect="trec_eval")
    assert res["mrr@10"] == pytest.approx(rr, abs=1e-12)
    assert "ties:text_desc" in res.signature("mrr@10")
    # the same ids as numbers, descending, would put 100 (or 11) first
    by_value = receval.evaluate(recs, truth, ["mrr(ties=item_desc)@10"], dialect="trec_eval")["mrr(ties=item_desc)@10"]
    assert by_value != pytest.approx(rr) or relevant == 2


def test_daisyrec_1x_ndcg_ideal_reads_the_whole_given_list():
    # daisy/utils/metrics.py ndcg_at_k(r, k): IDCG = dcg_at_k(sorted(r, reverse=True), k) over the
    # relevance vector of the WHOLE list given, cut at k after sorting. List [10, 20*, 30, 40*], k = 2:
    # DCG@2 = 1/log2 3 (20 at position 2); IDCG@2 = 1 + 1/log2 3 (two relevant items in the list)
    recs = {"user_id": [1] * 4, "item_id": [10, 20, 30, 40], "score": [4.0, 3.0, 2.0, 1.0]}
    truth = {"user_id": [1, 1, 1], "item_id": [20, 40, 50]}
    got = receval.evaluate(recs, truth, ["ndcg@2"], dialect="daisyrec@1.1.2")
    d3 = 1 / math.log2(3)
    assert got["ndcg@2"] == pytest.approx(d3 / (1 + d3), abs=1e-12)
    assert "ideal:listed" in got.signature("ndcg@2")
    # only the top-k hits in the ideal (ideal=hits) would give 1/log2 3 / 1
    assert receval.evaluate(recs, truth, ["ndcg(ideal=hits)@2"])["ndcg(ideal=hits)@2"] == pytest.approx(d3, abs=1e-12)


# torchmetrics >= 1.8 (PR #3160): a target whose prediction is <= 0 is not a hit in AP,
# precision, recall and RR, but recall still divides by every positive passed
LOGITS = {"user_id": [1, 1, 1, 1], "item_id": [1, 2, 3, 4], "score": [0.9, 0.0, -0.3, -0.5]}
LOGIT_TRUTH = {"user_id": [1, 1, 1], "item_id": [2, 3, 9]}


def test_hitscore_positive_masks_hits_scored_at_most_zero():
    specs = ["precision@4", "recall(denominator=listed)@4", "mrr@4", "map(denominator=hits)@4", "hitrate@4"]
    anyhit = receval.evaluate(LOGITS, LOGIT_TRUTH, specs)
    # hits at positions 2 and 3 (scores 0.0 and -0.3)
    assert anyhit.values == pytest.approx({
        "precision@4": 2 / 4, "recall(denominator=listed)@4": 2 / 2, "mrr@4": 1 / 2,
        "map(denominator=hits)@4": (1 / 2 + 2 / 3) / 2, "hitrate@4": 1.0,
    }, abs=1e-12)
    masked = receval.evaluate(LOGITS, LOGIT_TRUTH, specs, hitscore="positive")
    # no hit is left; recall's listed denominator still counts the two masked positives
    assert masked.values == {s: 0.0 for s in specs}
    assert "hitscore:positive" in masked.signature("precision@4")
    # one positive score among the hits: 0.1 at position 2
    recs = dict(LOGITS, score=[0.9, 0.1, -0.3, -0.5])
    got = receval.evaluate(recs, LOGIT_TRUTH, specs + ["ndcg(ideal=listed)@4"], hitscore="positive")
    assert got["recall(denominator=listed)@4"] == pytest.approx(1 / 2, abs=1e-12)
    assert got["map(denominator=hits)@4"] == pytest.approx(1 / 2, abs=1e-12)
    # the ideal holds both listed positives: 1/log2 3 / (1 + 1/log2 3)
    assert got["ndcg(ideal=listed)@4"] == pytest.approx((1 / math.log2(3)) / (1 + 1 / math.log2(3)), abs=1e-12)


def test_torchmetrics_dialect_masks_where_the_library_does():
    res = receval.evaluate(LOGITS, LOGIT_TRUTH, ["precision@4", "hitrate@4", "mrr@4"], dialect="torchmetrics")
    assert res["precision@4"] == 0.0 and res["mrr@4"] == 0.0
    assert res["hitrate@4"] == 1.0  # hit_rate.py does not mask
    with pytest.raises(receval.DataError, match="score column"):
        receval.evaluate({"user_id": [1], "item_id": [2], "rank": [1]}, LOGIT_TRUTH, ["precision@1"], hitscore="positive")


def test_rank_value_positions_are_the_given_ranks():
    # RecTools input: two items at rank 1, then rank 3 (rank 2 is skipped)
    recs = {"user_id": [1, 1, 1], "item_id": [5, 6, 7], "rank": [1, 1, 3]}
    truth = {"user_id": [1, 1], "item_id": [6, 7]}
    with pytest.raises(receval.DataError, match="same rank"):
        receval.evaluate(recs, truth, ["precision@1"], order="rank")
    res = receval.evaluate(recs, truth, ["precision@1", "mrr@3", "ndcg@3", "recall@2"], order="rank_value")
    assert res["precision@1"] == 1.0          # item 6 sits at position 1
    assert res["mrr@3"] == 1.0
    assert res["recall@2"] == 1 / 2           # position 3 is beyond 2
    assert res["ndcg@3"] == pytest.approx((1 + 1 / math.log2(4)) / (1 + 1 / math.log2(3)), abs=1e-12)
    assert "order:rank_value" in res.signature("precision@1")
    # the rectools dialect reads ranks this way; its MAP adds one P@r per distinct hit rank
    got = receval.evaluate(recs, truth, ["precision@1", "map@3"], dialect="rectools")
    assert got["precision@1"] == 1.0
    assert got["map@3"] == pytest.approx((1 / 1 + 2 / 3) / 2, abs=1e-15)  # P@1 = 1 (item 6), P@3 = 2/3 (item 7)
    recs2 = {"user_id": [1, 1, 1], "item_id": [5, 6, 7], "rank": [1, 2, 2]}  # both hits share rank 2
    got = receval.evaluate(recs2, truth, ["map@3", "map(indicator=yes)@3"], dialect="rectools")
    assert got["map@3"] == pytest.approx((2 / 2) / 2, abs=1e-15)  # one term: P@2 = 2/2
    assert got["map(indicator=yes)@3"] == pytest.approx(2 * (2 / 2) / 2, abs=1e-15)  # one per hit
