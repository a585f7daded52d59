"""Column names per input (issue 31): the recommendations and the ground truth may name their
id columns differently (``truth_user_col=`` / ``truth_item_col=``, ``--truth-user-col`` /
``--truth-item-col``, or ``user_col={"recs": ..., "truth": ...}``), on every engine; the value,
the signature and the fingerprints are those of the same data with the columns renamed."""

from __future__ import annotations

import json
import shutil

import polars as pl
import pytest

import receval
from receval.cli import main
from receval.errors import DataError, SpecError
from receval.runs import evaluate_runs

METRICS = ["ndcg@3", "recall@3", "map@3", "precision@2", "mrr@3"]

#: the recommendations as a recommender writes them, the truth as a dataset ships it
RECS = pl.DataFrame({"user": [1, 1, 1, 2, 2, 2, 3, 3], "item": [10, 11, 12, 20, 21, 22, 30, 31],
                     "prediction": [0.9, 0.5, 0.4, 0.8, 0.1, 0.3, 0.7, 0.7]})
TRUTH = pl.DataFrame({"user_id": [1, 1, 2, 2, 3, 4], "item_id": [11, 13, 20, 22, 31, 40],
                      "rating": [5.0, 3.0, 4.0, 2.0, 5.0, 1.0]})
#: the same recommendations renamed to the shared names (the reference)
RENAMED = RECS.rename({"user": "user_id", "item": "item_id", "prediction": "score"})
NAMES = dict(user_col="user", item_col="item", score_col="prediction", truth_user_col="user_id", truth_item_col="item_id")


def _same(a: receval.Results, b: receval.Results) -> None:
    assert a.values == b.values
    assert [e.signature for e in a.entries] == [e.signature for e in b.entries]
    assert a.per_user().equals(b.per_user())
    assert dict(a.fingerprints) == dict(b.fingerprints)


def _as(kind: str, frame: pl.DataFrame, path) -> object:
    if kind == "pandas":
        return frame.to_pandas()
    if kind == "csv":
        frame.write_csv(path)
        return str(path)
    return frame


@pytest.mark.parametrize("engine", [None, "polars"])
@pytest.mark.parametrize("kind", ["pandas", "polars", "csv"])
def test_truth_columns_give_the_renamed_result(engine, kind, tmp_path):
    recs, truth = _as(kind, RECS, tmp_path / "r.csv"), _as(kind, TRUTH, tmp_path / "t.csv")
    ref = receval.evaluate(_as(kind, RENAMED, tmp_path / "rr.csv"), truth, METRICS, engine=engine)
    _same(receval.evaluate(recs, truth, METRICS, engine=engine, **NAMES), ref)
    assert ref.values == receval.evaluate(RENAMED, TRUTH, METRICS).values  # every engine and input kind alike


def test_truth_columns_in_user_batches():
    from receval.backends.polars import evaluate_polars
    from receval.io import Columns

    cols = Columns("user", "item", "prediction", truth_user="user_id", truth_item="item_id")
    got = evaluate_polars(RECS.lazy(), TRUTH.lazy(), METRICS, columns=cols, n_batches=3, fingerprints=True)
    _same(got, receval.evaluate(RENAMED, TRUTH, METRICS))


def test_the_recs_and_the_truth_names_may_swap_or_clash():
    # the truth holds a column under the recommendations' user name that is not its user column
    truth = TRUTH.rename({"user_id": "uid"}).with_columns(pl.lit("x").alias("user"))
    ref = receval.evaluate(RENAMED, TRUTH, METRICS)
    for engine in (None, "polars"):
        got = receval.evaluate(RECS, truth, METRICS, engine=engine, user_col="user", item_col="item",
                               score_col="prediction", truth_user_col="uid", truth_item_col="item_id")
        _same(got, ref)
    # each side names the other's columns: the recommendations' item column is the truth's user column name
    recs = RECS.rename({"user": "a", "item": "b"})
    swapped = TRUTH.rename({"user_id": "b", "item_id": "a"})
    for engine in (None, "polars"):
        got = receval.evaluate(recs, swapped, METRICS, engine=engine, user_col="a", item_col="b",
                               score_col="prediction", truth_user_col="b", truth_item_col="a")
        _same(got, ref)


def test_mapping_form():
    got = receval.evaluate(RECS, TRUTH, METRICS, user_col={"recs": "user", "truth": "user_id"},
                           item_col={"recs": "item"}, truth_item_col="item_id", score_col="prediction")
    _same(got, receval.evaluate(RENAMED, TRUTH, METRICS))
    with pytest.raises(SpecError, match="^give user_col as a name or a mapping"):
        receval.evaluate(RECS, TRUTH, METRICS, user_col={"run": "user"})
    with pytest.raises(SpecError, match="^give the truth's user column once"):
        receval.evaluate(RECS, TRUTH, METRICS, user_col={"truth": "user_id"}, truth_user_col="user_id")


@pytest.mark.parametrize("engine", [None, "polars"])
def test_a_missing_truth_column_names_the_truth_option(engine):
    with pytest.raises(DataError, match=r"^ground truth is missing column 'uid' .*--truth-user-col / truth_user_col="):
        receval.evaluate(RECS, TRUTH, METRICS, engine=engine, **{**NAMES, "truth_user_col": "uid"})
    # without truth names the truth reads the shared ones, and its error still names its own option
    with pytest.raises(DataError, match=r"^ground truth is missing column 'item' .*--truth-item-col / truth_item_col="):
        receval.evaluate(RECS, TRUTH, METRICS, engine=engine, user_col="user", item_col="item",
                         score_col="prediction", truth_user_col="user_id")
    with pytest.raises(DataError, match=r"^recommendations are missing column 'user_id' .*--user-col / user_col="):
        receval.evaluate(RECS, TRUTH, METRICS, engine=engine, truth_user_col="user_id")


def test_evaluate_runs_with_truth_columns():
    other = RECS.with_columns(pl.col("prediction") * -1)
    got = evaluate_runs({"a": RECS, "b": other}, TRUTH, METRICS, **NAMES)
    ref = evaluate_runs({"a": RENAMED, "b": other.rename({"user": "user_id", "item": "item_id",
                                                                  "prediction": "score"})}, TRUTH, METRICS)
    assert got.table() == ref.table()
    for name in ("a", "b"):
        _same(got.results[name], ref.results[name])


def _cli_json(args, capsys) -> dict:
    assert main(args) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def test_cli_truth_columns(tmp_path, capsys):
    RECS.write_csv(tmp_path / "recs.csv")
    RENAMED.write_csv(tmp_path / "renamed.csv")
    TRUTH.write_csv(tmp_path / "truth.csv")
    metrics = [x for m in METRICS for x in ("-m", m)]
    names = ["--user-col", "user", "--item-col", "item", "--score-col", "prediction",
             "--truth-user-col", "user_id", "--truth-item-col", "item_id"]
    got = _cli_json(["evaluate", str(tmp_path / "recs.csv"), str(tmp_path / "truth.csv"), *metrics, *names,
                     "--format", "json"], capsys)
    ref = _cli_json(["evaluate", str(tmp_path / "renamed.csv"), str(tmp_path / "truth.csv"), *metrics, "--format", "json"],
                    capsys)
    assert got == ref
    got = _cli_json(["evaluate", str(tmp_path / "recs.csv"), str(tmp_path / "truth.csv"), *metrics, *names,
                     "--engine", "polars", "--format", "json"], capsys)
    assert got == ref
    shutil.copy(tmp_path / "recs.csv", tmp_path / "recs2.csv")
    runs = ["runs", str(tmp_path / "truth.csv"), f"a={tmp_path / 'recs.csv'}", f"b={tmp_path / 'recs2.csv'}", *metrics,
            "--format", "json", "--resamples", "200"]
    assert main([*runs, *names]) == 0
    with_names = capsys.readouterr().out
    RENAMED.write_csv(tmp_path / "recs2.csv")
    assert main(["runs", str(tmp_path / "truth.csv"), f"a={tmp_path / 'renamed.csv'}", f"b={tmp_path / 'recs2.csv'}",
                 *metrics, "--format", "json", "--resamples", "200"]) == 0
    assert with_names == capsys.readouterr().out
    # a missing truth column: one line naming the truth's option
    assert main(["evaluate", str(tmp_path / "recs.csv"), str(tmp_path / "truth.csv"), *metrics,
                 *names[:6], "--truth-user-col", "uid"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "missing column 'uid'" in err[0] and "--truth-user-col" in err[0]


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_spark_truth_columns(tmp_path):
    pytest.importorskip("pyspark")
    if shutil.which("java") is None:
        pytest.skip("Spark needs Java")
    ref = receval.evaluate(RENAMED, TRUTH, METRICS)
    RECS.write_csv(tmp_path / "r.csv")
    TRUTH.write_csv(tmp_path / "t.csv")
    for recs, truth in ((RECS.to_pandas(), TRUTH.to_pandas()), (str(tmp_path / "r.csv"), str(tmp_path / "t.csv"))):
        got = receval.evaluate(recs, truth, METRICS, engine="spark", **NAMES)
        assert got.values == pytest.approx(ref.values, rel=1e-12, abs=1e-15)
        assert [e.signature for e in got.entries] == [e.signature for e in ref.entries]
    with pytest.raises(DataError, match=r"^ground truth is missing column 'uid' .*--truth-user-col"):
        receval.evaluate(RECS.to_pandas(), TRUTH.to_pandas(), METRICS, engine="spark", **{**NAMES, "truth_user_col": "uid"})


def test_compare_and_verify_with_truth_columns():
    from receval.compare import compare
    from receval.verification import verify

    got = compare(RECS, TRUTH, ["ndcg@3", "map@3"], dialects="defaults", **NAMES)
    assert got.equals(compare(RENAMED, TRUTH, ["ndcg@3", "map@3"], dialects="defaults"))
    published = receval.evaluate(RENAMED, TRUTH, METRICS)
    assert verify(published, RECS, TRUTH, **NAMES).ok
