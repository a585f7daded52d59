"""tdup=first refuses duplicated truth rows that disagree on the rating (the first row would
depend on the row order); tdup=max keeps the highest rating, whatever the row order."""

import polars as pl
import pytest

from receval import evaluate
from receval.backends.polars import evaluate_polars
from receval.errors import DataError

RECS = {"user_id": [1, 1, 2], "item_id": [1, 2, 1], "score": [3.0, 2.0, 1.0]}
LOW_FIRST = {"user_id": [1, 1, 2], "item_id": [1, 1, 1], "rating": [1.0, 5.0, 4.0]}
HIGH_FIRST = {"user_id": [1, 1, 2], "item_id": [1, 1, 1], "rating": [5.0, 1.0, 4.0]}
SPECS = ["ndcg@2", "precision@2", "mae"]


def _runs(truth, **kw):
    yield evaluate(RECS, truth, SPECS, rel=3.0, **kw)
    yield evaluate(RECS, truth, SPECS, rel=3.0, engine="polars", **kw)
    for n in (1, 2):
        yield evaluate_polars(pl.DataFrame(RECS).lazy(), pl.DataFrame(truth).lazy(), SPECS,
                              overrides={"rel": 3.0, **kw}, n_batches=n)


@pytest.mark.parametrize("truth", [LOW_FIRST, HIGH_FIRST])
def test_first_refuses_disagreeing_duplicates(truth):
    for call in (lambda: evaluate(RECS, truth, SPECS, rel=3.0, tdup="first"),
                 lambda: evaluate(RECS, truth, SPECS, rel=3.0, tdup="first", engine="polars"),
                 lambda: evaluate_polars(pl.DataFrame(RECS).lazy(), pl.DataFrame(truth).lazy(), SPECS,
                                         overrides={"rel": 3.0, "tdup": "first"}, n_batches=2)):
        with pytest.raises(DataError) as e:
            call()
        msg = str(e.value)
        assert msg.startswith("pass tdup='max'") and len(msg) <= 200 and "\n" not in msg
        assert "1 (user, item) pairs repeat in the ground truth with different ratings, e.g. (1, 1)" in msg


def test_first_keeps_agreeing_duplicates():
    truth = {"user_id": [1, 1, 2], "item_id": [1, 1, 1], "rating": [5.0, 5.0, 4.0]}
    for res in _runs(truth, tdup="first"):
        assert res["ndcg@2"] == pytest.approx(1.0) and "tdup:first" in res.signature("ndcg@2")


def test_max_keeps_the_highest_rating_in_any_row_order():
    got = []
    for truth in (LOW_FIRST, HIGH_FIRST):
        for res in _runs(truth, tdup="max"):
            got.append((res["ndcg@2"], res["precision@2"], res["mae"]))
            assert "tdup:max" in res.signature("ndcg@2")
    # user 1: item 1 rated 5 (relevant), item 2 not in the truth; user 2: item 1 rated 4
    assert all(g == pytest.approx((1.0, 0.5, got[0][2])) for g in got)
    assert len(set(got)) == 1


@pytest.mark.spark
def test_spark_engine_agrees():
    pytest.importorskip("pyspark")
    import shutil

    if shutil.which("java") is None:
        pytest.skip("Spark needs Java")
    from receval.backends.spark import local_session

    session = local_session(partitions=2)
    try:
        got = []
        for truth in (LOW_FIRST, HIGH_FIRST):
            rs = session.createDataFrame(pl.DataFrame(RECS).to_pandas())
            ts = session.createDataFrame(pl.DataFrame(truth).to_pandas())
            with pytest.raises(DataError, match="^pass tdup='max'"):
                evaluate(rs, ts, ["ndcg@2"], engine="spark", rel=3.0, tdup="first")
            res = evaluate(rs, ts, ["ndcg@2", "precision@2"], engine="spark", rel=3.0, tdup="max")
            got.append((res["ndcg@2"], res["precision@2"]))
        assert got == [pytest.approx((1.0, 0.5))] * 2
    finally:
        session.stop()


def test_rating_errors_under_keep_compare_every_row_of_a_repeated_pair():
    """tdup=keep: each truth row of a repeated (user, item) pair is a pair of T, compared with the
    pair's prediction (it was refused: "1 truth pairs have no predicted rating"); every engine."""
    recs = {"user_id": ["u1", "u1", "u2"], "item_id": ["i1", "i2", "i3"], "score": [2.0, 3.0, 1.0]}
    truth = {"user_id": ["u1", "u1", "u1", "u2"], "item_id": ["i1", "i1", "i2", "i3"], "rating": [4.0, 4.0, 1.0, 2.0]}
    specs = ["mae(tdup=keep)", "rmse(tdup=keep)", "mae(tdup=keep,average=users)", "mae(tdup=max)"]
    got = evaluate(recs, truth, specs)
    want = [(2 + 2 + 2 + 1) / 4, ((4 + 4 + 4 + 1) / 4) ** 0.5, (2 + 1) / 2, (2 + 2 + 1) / 3]
    assert [got[s] for s in specs] == pytest.approx(want, abs=1e-15)
    batched = evaluate_polars(pl.DataFrame(recs).lazy(), pl.DataFrame(truth).lazy(), specs, n_batches=2)
    assert [batched[s] for s in specs] == [got[s] for s in specs]
