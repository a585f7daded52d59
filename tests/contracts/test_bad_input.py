"""User mistakes get one precise, actionable error; inputs are never mutated; every input
type gives the same numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import receval
from receval import DataError, RecevalError, SpecError

RECS = {
    "user_id": [1, 1, 1, 1, 2, 2, 3],
    "item_id": [10, 20, 30, 40, 10, 50, 60],
    "score": [0.9, 0.8, 0.7, 0.6, 0.5, 0.5, 0.1],
}
TRUTH = {"user_id": [1, 1, 1, 2, 4], "item_id": [20, 40, 50, 50, 70], "rating": [5.0, 4.0, 3.0, 2.0, 1.0]}
SPECS = ["ndcg@3", "map@4", "precision(denominator=length)@5", "recall@2", "mrr@10", "f1(aggregate=means)@3"]


def ev(recs=RECS, truth=TRUTH, specs=SPECS, **kw):
    return receval.evaluate(recs, truth, specs, **kw)


def with_(cols: dict, **changes) -> dict:
    return {**cols, **changes}


# ---- duplicates ------------------------------------------------------------------------------


def test_duplicate_recommendations_name_the_fix():
    recs = with_(RECS, item_id=[10, 20, 20, 40, 10, 50, 60])
    with pytest.raises(DataError) as exc:
        ev(recs)
    msg = str(exc.value)
    assert "1 duplicate (user, item) pairs in recommendations" in msg
    assert "(1, 20)" in msg
    assert "dup='first'" in msg and "dup='keep'" in msg


def test_duplicate_truth_names_the_fix():
    truth = with_(TRUTH, item_id=[20, 20, 50, 50, 70])
    with pytest.raises(DataError) as exc:
        ev(truth=truth)
    msg = str(exc.value)
    assert "duplicate (user, item) pairs in ground truth" in msg
    assert "tdup='first'" in msg and "tdup='keep'" in msg


def test_duplicates_of_users_outside_the_truth_are_ignored():
    """Rows of users absent from the truth are dropped before any check."""
    recs = {k: v + [w] for (k, v), w in zip(RECS.items(), [9, 10, 0.3])}
    recs = {k: v + [w] for (k, v), w in zip(recs.items(), [9, 10, 0.2])}
    assert ev(recs).values == ev().values


# ---- NaN / inf / empty -----------------------------------------------------------------------


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_scores(bad):
    recs = with_(RECS, score=[0.9, bad, 0.7, 0.6, 0.5, 0.5, 0.1])
    with pytest.raises(DataError, match="NaN or infinite"):
        ev(recs)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_ratings(bad):
    truth = with_(TRUTH, rating=[5.0, bad, 3.0, 2.0, 1.0])
    with pytest.raises(DataError, match="NaN or infinite"):
        ev(truth=truth)


def test_missing_values_in_ids():
    recs = pl.DataFrame(RECS).with_columns(pl.when(pl.col("score") < 0.2).then(None).otherwise(pl.col("item_id")).alias("item_id"))
    with pytest.raises(DataError, match="missing ids; drop those rows"):
        ev(recs)


def test_empty_truth():
    empty = pl.DataFrame({"user_id": [], "item_id": []}, schema={"user_id": pl.Int64, "item_id": pl.Int64})
    with pytest.raises(DataError, match="the ground truth is empty"):
        ev(truth=empty)


def test_empty_recommendations_score_zero():
    empty = pl.DataFrame(
        {"user_id": [], "item_id": [], "score": []},
        schema={"user_id": pl.Int64, "item_id": pl.Int64, "score": pl.Float64},
    )
    res = ev(empty, specs=["ndcg@3", "recall@3"])
    assert res.values == {"ndcg@3": 0.0, "recall@3": 0.0}
    with pytest.raises(DataError, match="no recommendations"):
        ev(empty, specs=["ndcg@3"], norecs="error")


# ---- id types --------------------------------------------------------------------------------


def test_user_ids_of_different_types():
    recs = with_(RECS, user_id=[str(u) for u in RECS["user_id"]])
    with pytest.raises(DataError, match="user ids have different types.*cast both to the same type"):
        ev(recs)


def test_item_ids_of_different_types():
    truth = with_(TRUTH, item_id=[str(i) for i in TRUTH["item_id"]])
    with pytest.raises(DataError, match="item ids have different types"):
        ev(truth=truth)


def test_string_ids_give_the_same_values():
    recs = with_(RECS, user_id=[f"user-{u}" for u in RECS["user_id"]], item_id=[f"item-{i:03d}" for i in RECS["item_id"]])
    truth = with_(TRUTH, user_id=[f"user-{u}" for u in TRUTH["user_id"]], item_id=[f"item-{i:03d}" for i in TRUTH["item_id"]])
    assert ev(recs, truth).values == pytest.approx(ev().values, abs=1e-15)
    assert ev(recs, truth, ties="item").values == pytest.approx(ev(ties="item").values, abs=1e-15)
    assert ev(recs, truth).per_user()["user_id"].to_list() == ["user-1", "user-2", "user-4"]


# ---- spec errors (verbatim messages) ---------------------------------------------------------


@pytest.mark.parametrize("k", ["0", "-1", "1.5", "x", "01x"])
def test_bad_k(k):
    with pytest.raises(SpecError) as exc:
        ev(specs=[f"ndcg@{k}"])
    assert str(exc.value) == f"`k` must be an integer >= 1, got {k}"


def test_k_zero_verbatim():
    with pytest.raises(SpecError) as exc:
        ev(specs=["ndcg@0"])
    assert str(exc.value) == "`k` must be an integer >= 1, got 0"


def test_missing_k_and_unwanted_k():
    with pytest.raises(SpecError, match=r"^write 'f1@10': f1 needs a cut-off \(it has no single whole-list meaning\)$"):
        ev(specs=["f1"])
    with pytest.raises(SpecError, match="takes no cut-off"):
        ev(specs=["rmse@10"])


def test_unknown_metric_verbatim():
    with pytest.raises(SpecError) as exc:
        ev(specs=["ndgc@10"])
    assert str(exc.value) == "unknown metric 'ndgc'; did you mean 'ndcg'?"


def test_unknown_option_and_value_suggest():
    with pytest.raises(SpecError) as exc:
        ev(specs=["ndcg(idael=cut)@10"])
    assert str(exc.value) == "metric 'ndcg' has no option `idael`; did you mean 'ideal'?"
    with pytest.raises(SpecError) as exc:
        ev(specs=["ndcg(ideal=cutt)@10"])
    assert str(exc.value) == "unknown value 'cutt' for option `ideal`; did you mean 'cut'?"
    with pytest.raises(SpecError) as exc:
        ev(ties="itme")
    assert str(exc.value) == "unknown value 'itme' for option `ties`; did you mean 'item'?"
    with pytest.raises(SpecError, match="choose one of"):
        ev(specs=["map(denominator=zzzzzz)@3"])


def test_malformed_specs():
    for bad in ["ndcg(ideal)@3", "ndcg((@3", "ndcg@3@4", "ndcg(ideal=cut,ideal=k)@3"]:
        with pytest.raises(SpecError):
            ev(specs=[bad])
    with pytest.raises(SpecError, match="no metric given"):
        ev(specs=[])
    with pytest.raises(SpecError, match="`base` cancels"):
        ev(specs=["ndcg(base=10)@3"])
    with pytest.raises(SpecError, match="`rel` must be a number"):
        ev(rel="high")


# ---- columns ---------------------------------------------------------------------------------


def test_missing_column_verbatim():
    recs = {"user_id": [1], "item": [1], "score": [1.0]}
    with pytest.raises(DataError) as exc:
        ev(recs)
    assert str(exc.value).startswith("recommendations are missing column 'item_id' (found: user_id, item, score)")
    assert "item_col=" in str(exc.value)
    # the column name can be given
    truth = {"user_id": [1], "item": [1]}
    assert receval.evaluate(recs, truth, ["ndcg@3"], item_col="item")["ndcg@3"] == 1.0


def test_missing_truth_column():
    with pytest.raises(DataError, match=r"missing column 'user_id' \(found: user, item_id\)"):
        ev(truth={"user": [1], "item_id": [1]})


def test_threshold_without_rating_column():
    truth = {k: v for k, v in TRUTH.items() if k != "rating"}
    with pytest.raises(DataError, match="needs a rating column"):
        ev(truth=truth, rel=3)


def test_order_without_its_column():
    recs = {k: v for k, v in RECS.items() if k != "score"}
    with pytest.raises(DataError, match="order='score' needs a score column"):
        ev(recs, order="score")


def test_equal_ranks_are_an_error():
    recs = {"user_id": [1, 1], "item_id": [20, 40], "rank": [1, 1]}
    with pytest.raises(DataError, match="same rank"):
        ev(recs)
    with pytest.raises(DataError, match=">= 1"):
        ev({"user_id": [1], "item_id": [20], "rank": [0]})


def test_unreadable_inputs(tmp_path):
    with pytest.raises(DataError, match="file not found"):
        ev(str(tmp_path / "nope.csv"))
    bad = tmp_path / "recs.json"
    bad.write_text("{}")
    with pytest.raises(DataError, match="use a .csv"):
        ev(str(bad))
    with pytest.raises(DataError, match="cannot read the recommendations from a list"):
        ev([1, 2, 3])


def test_every_user_error_is_a_value_error():
    assert issubclass(DataError, RecevalError) and issubclass(SpecError, RecevalError)
    assert issubclass(RecevalError, ValueError)


# ---- users on one side -----------------------------------------------------------------------


def test_users_only_in_recommendations_are_ignored():
    res = ev()
    assert res.per_user()["user_id"].to_list() == [1, 2, 4]  # user 3 has no truth
    assert res.info["ignored_rec_users"] == 1 and res.info["ignored_rec_rows"] == 1
    # dropping user 3's rows changes nothing
    keep = [i for i, u in enumerate(RECS["user_id"]) if u != 3]
    recs = {k: [v[i] for i in keep] for k, v in RECS.items()}
    assert ev(recs).values == res.values


def test_users_only_in_truth_score_zero_or_are_skipped():
    res = ev(specs=["recall@4"])
    # user 1: 2/3, user 2: 1/1 (50 at position 2), user 4: no recommendation -> 0
    assert res["recall@4"] == pytest.approx((2 / 3 + 1 + 0) / 3)
    assert ev(specs=["recall@4"], norecs="skip")["recall@4"] == pytest.approx((2 / 3 + 1) / 2)
    assert ev(specs=["recall@4"], norecs="skip")._entry("recall@4").users == 2


# ---- inputs are never mutated; every input type gives the same result ---------------------


def test_inputs_are_not_mutated():
    recs_pd = pd.DataFrame(RECS).iloc[::-1]
    truth_pd = pd.DataFrame(TRUTH)
    recs_pl = pl.DataFrame(RECS).reverse()
    truth_pl = pl.DataFrame(TRUTH)
    recs_dict = {k: list(v) for k, v in RECS.items()}
    before = (recs_pd.copy(deep=True), truth_pd.copy(deep=True), recs_pl.clone(), truth_pl.clone())
    specs = SPECS + ["ndcg(gain=exp2)@3"]
    ev(recs_pd, truth_pd, specs, ties="item", rel=2)
    ev(recs_pl, truth_pl, specs, ties="item_desc", dup="first", tdup="first")
    ev(recs_dict, TRUTH, specs, ties="optimistic")
    pd.testing.assert_frame_equal(recs_pd, before[0])
    pd.testing.assert_frame_equal(truth_pd, before[1])
    assert recs_pd.index.tolist() == before[0].index.tolist()
    assert recs_pl.equals(before[2]) and truth_pl.equals(before[3])
    assert recs_dict == RECS


def _all_input_kinds(tmp_path):
    recs_pl, truth_pl = pl.DataFrame(RECS), pl.DataFrame(TRUTH)
    recs_pl.write_csv(tmp_path / "recs.csv")
    truth_pl.write_csv(tmp_path / "truth.csv")
    recs_pl.write_parquet(tmp_path / "recs.parquet")
    truth_pl.write_parquet(tmp_path / "truth.parquet")
    return {
        "dict": (RECS, TRUTH),
        "pandas": (pd.DataFrame(RECS), pd.DataFrame(TRUTH)),
        "polars": (recs_pl, truth_pl),
        "lazy": (recs_pl.lazy(), truth_pl.lazy()),
        "arrow": (pa.table(RECS), pa.table(TRUTH)),
        "csv": (str(tmp_path / "recs.csv"), str(tmp_path / "truth.csv")),
        "csv-path": (tmp_path / "recs.csv", tmp_path / "truth.csv"),
        "parquet": (str(tmp_path / "recs.parquet"), str(tmp_path / "truth.parquet")),
    }


def test_every_input_type_gives_identical_results(tmp_path):
    kinds = _all_input_kinds(tmp_path)
    base = ev(*kinds["dict"])
    for name, (recs, truth) in kinds.items():
        res = ev(recs, truth)
        assert res.values == base.values, name
        assert res.signatures == base.signatures, name
        assert res.per_user().equals(base.per_user()), name


def test_numpy_integer_and_float_ids_match():
    recs = with_(RECS, item_id=np.asarray(RECS["item_id"], dtype=np.int32))
    assert ev(recs).values == ev().values
