"""The `rectools` dialect reads a rank column (RecTools' metrics require one); recommendations
with scores and no rank are ranked as RecTools users rank them: by score, descending, ties in
row order (a stable sort and ``groupby().cumcount() + 1``), and the signature says so
(``order:score|ties:input``)."""

from __future__ import annotations

import pandas as pd
import pytest

import receval
from receval import parse_spec
from receval.report import fmt_num

pytestmark = pytest.mark.filterwarnings("ignore::receval.errors.RecevalWarning")

RECS = pd.DataFrame({
    "user_id": [1, 1, 1, 1, 2, 2, 2, 3, 3],
    "item_id": [10, 11, 12, 13, 10, 14, 15, 11, 12],
    "score": [0.2, 0.9, 0.5, 0.5, 0.7, 0.7, 0.1, 0.3, 0.8],
})
TRUTH = pd.DataFrame({"user_id": [1, 1, 2, 3, 4], "item_id": [13, 10, 14, 11, 10]})
SPECS = ["precision@2", "recall@2", "hitrate@1", "mrr@3", "map@3", "ndcg@3"]


def _ranked_as_rectools_users_do(recs: pd.DataFrame) -> pd.DataFrame:
    out = recs.sort_values(["user_id", "score"], ascending=[True, False], kind="stable")
    return out.assign(rank=out.groupby("user_id", sort=False).cumcount() + 1)


def test_scores_without_rank_are_ranked_by_score_ties_in_row_order():
    ranked = _ranked_as_rectools_users_do(RECS)
    by_rank = receval.evaluate(ranked.drop(columns="score"), TRUTH, SPECS, dialect="rectools")
    by_score = receval.evaluate(RECS, TRUTH, SPECS, dialect="rectools")
    assert by_score.values == pytest.approx(by_rank.values, abs=1e-12)
    # ties matter on these data: user 1 has 12 and 13 tied at 0.5 (13 relevant), user 2 10 and 14 at 0.7
    swapped = receval.evaluate(RECS.iloc[[0, 1, 3, 2, 5, 4, 6, 7, 8]], TRUTH, SPECS, dialect="rectools")
    assert swapped.values != by_score.values


def test_the_signature_records_the_derived_order_and_reproduces_the_value():
    res = receval.evaluate(RECS, TRUTH, ["map@3"], dialect="rectools")
    sig = res.signature("map@3")
    assert "|order:score|ties:input|" in sig and "dialect:rectools@0.19.0" in sig
    again = receval.evaluate(RECS, TRUTH, [parse_spec(sig)])
    assert next(iter(again.values.values())) == pytest.approx(res["map@3"], abs=1e-12)


def test_a_rank_column_still_wins_over_scores():
    ranked = _ranked_as_rectools_users_do(RECS)
    reversed_ranks = ranked.assign(rank=ranked.groupby("user_id")["rank"].transform(lambda r: r.max() + 1 - r))
    res = receval.evaluate(reversed_ranks, TRUTH, ["map@3"], dialect="rectools")
    assert "|order:rank_value|" in res.signature("map@3")
    by_score = receval.evaluate(RECS, TRUTH, ["map@3"], dialect="rectools")
    assert res["map@3"] != by_score["map@3"]


def test_neither_rank_nor_score_is_still_refused():
    with pytest.raises(receval.DataError, match="rank"):
        receval.evaluate(RECS.drop(columns="score"), TRUTH, ["map@3"], dialect="rectools")


def test_an_explicit_order_is_not_overridden():
    with pytest.raises(receval.DataError, match="needs a rank column"):
        receval.evaluate(RECS, TRUTH, ["map(order=rank_value)@3"], dialect="rectools")


def test_compare_computes_the_rectools_row_from_scores():
    from receval.compare import compare_results

    res = compare_results(RECS, TRUTH, ["precision@2"], dialects="standard,rectools")
    assert not res.errors
    want = receval.evaluate(_ranked_as_rectools_users_do(RECS), TRUTH, ["precision@2"], dialect="rectools")
    assert res.cell("rectools@0.19.0", "precision@2") == fmt_num(want['precision@2'])
