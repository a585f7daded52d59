"""pAUC@k and pAp@k (RecTools PartialAUC / PAP): goldens as arithmetic, a brute-force pair
count under hypothesis, the insufficient-list policies, and the batched engine."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import receval
from receval.backends import evaluate_polars

RECS = {"user_id": [1, 1, 1, 1, 2, 2], "item_id": [10, 20, 30, 40, 10, 30], "rank": [1, 2, 3, 4, 1, 2]}
TRUTH = {"user_id": [1, 1, 1, 2, 2], "item_id": [20, 40, 50, 30, 70]}


def test_goldens():
    res = receval.evaluate(RECS, TRUTH, ["pauc@2", "pap@2", "pauc@1"])
    # user 1: hits at 2 (f=1) and 4 (f=2), |R|=3: (2−1)/(2·3); user 2: hit at 2 (f=1), |R|=2: (2−1)/(2·2)
    assert res["pauc@2"] == pytest.approx((1 / 6 + 1 / 4) / 2, abs=1e-12)
    # pAp@2: ÷ 2·min(2, |R|): user 1 (2−1)/4, user 2 (2−1)/4
    assert res["pap@2"] == pytest.approx((1 / 4 + 1 / 4) / 2, abs=1e-12)
    # k=1: only positives above the first negative: none for either user
    assert res["pauc@1"] == 0.0


def test_insufficient_lists():
    # user 1 has 2 negatives and misses item 50; user 2 has 1 negative and misses 70
    res = receval.evaluate(RECS, TRUTH, ["pauc(insufficient=exclude)@2", "pauc(insufficient=exclude)@1"])
    assert res["pauc(insufficient=exclude)@2"] == pytest.approx(1 / 6, abs=1e-12)  # user 2 left out
    assert res._entry("pauc(insufficient=exclude)@2").users == 1
    assert res._entry("pauc(insufficient=exclude)@1").users == 2
    assert "insuf:exclude" in res.signature("pauc(insufficient=exclude)@2")
    with pytest.raises(receval.DataError, match=r"pauc@2: 1 users have fewer than 2 .*insufficient=exclude"):
        receval.evaluate(RECS, TRUTH, ["pauc(insufficient=error)@2"])
    # a user whose every relevant item is listed is never insufficient: the hit at 2 (f = 1)
    # beats the k − 1 top negatives below it, those the list lacks included: (5 − 1) / (5 · 1)
    got = receval.evaluate(RECS, {"user_id": [1], "item_id": [20]}, ["pap(insufficient=error)@5"])
    assert got["pap(insufficient=error)@5"] == pytest.approx(0.8, abs=1e-12)


def test_rank_gaps_count_as_negatives():
    # ranks 1 and 3: RecTools fills rank 2 as a negative, so the hit at rank 3 has f = 2
    got = receval.evaluate({"user_id": [1, 1], "item_id": [5, 6], "rank": [1, 3]}, {"user_id": [1], "item_id": [6]}, ["pauc@3"])
    assert got["pauc@3"] == pytest.approx((3 - 2) / 3, abs=1e-12)


def _brute(ranked: list[int], relevant: set[int], k: int, top_positives: bool) -> float:
    """Pairs won by listed positives against the k top negatives; a list with fewer than k
    negatives is padded with negatives below its end (RecTools: k − f per positive);
    relevant items missing from the list win no pair."""
    where = {i: p for p, i in enumerate(ranked)}
    negatives = [where[i] for i in ranked if i not in relevant][:k]
    negatives += [len(ranked) + j for j in range(k - len(negatives))]
    pos_ranked = [i for i in ranked if i in relevant]
    positives = pos_ranked[:k] if top_positives else pos_ranked
    wins = sum(1 for p in positives for n in negatives if where[p] < n)
    den = k * (min(k, len(relevant)) if top_positives else len(relevant))
    return wins / den


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.permutations(list(range(8))), st.integers(0, 8), st.sets(st.integers(0, 11), min_size=1)),
                min_size=1, max_size=4), st.integers(1, 6))
def test_matches_pair_count(users, k):
    recs = {"user_id": [], "item_id": [], "score": []}
    truth = {"user_id": [], "item_id": []}
    want_pauc, want_pap = [], []
    for u, (perm, length, rel) in enumerate(users):
        ranked = list(perm[:length])
        for p, i in enumerate(ranked):
            recs["user_id"].append(u)
            recs["item_id"].append(i)
            recs["score"].append(float(len(ranked) - p))
        for i in sorted(rel):
            truth["user_id"].append(u)
            truth["item_id"].append(i)
        want_pauc.append(_brute(ranked, rel, k, False))
        want_pap.append(_brute(ranked, rel, k, True))
    if not recs["user_id"]:
        return
    res = receval.evaluate(recs, truth, [f"pauc@{k}", f"pap@{k}"])
    assert res[f"pauc@{k}"] == pytest.approx(sum(want_pauc) / len(users), abs=1e-12)
    assert res[f"pap@{k}"] == pytest.approx(sum(want_pap) / len(users), abs=1e-12)


def test_batched_engine_equals_memory():
    import polars as pl

    specs = ["pauc(insufficient=exclude)@2", "pap(insufficient=exclude)@1", "pauc@3"]
    a = receval.evaluate(RECS, TRUTH, specs)
    b = evaluate_polars(pl.DataFrame(RECS).lazy(), pl.DataFrame(TRUTH).lazy(), specs, n_batches=2)
    assert a.values == b.values
    assert [e.users for e in a.entries] == [e.users for e in b.entries]
