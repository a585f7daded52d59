"""The Poisson-bootstrap intervals of a Spark evaluation (only B sums per partition travel)
equal the in-memory ones for the same seed."""

from __future__ import annotations

import numpy as np
import pytest

import receval
from receval.runs import evaluate_runs

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]


@pytest.fixture(scope="module")
def spark():
    pytest.importorskip("pyspark")
    from receval.backends.spark import local_session

    return local_session(partitions=3)


def test_spark_poisson_intervals_equal_memory(spark):
    from receval.backends.spark import poisson_intervals
    from receval.stats import interval

    rng = np.random.default_rng(0)
    users = [f"u{u}" for u in range(200)]
    truth = {"user_id": [u for u in users for _ in range(3)], "item_id": list(rng.integers(0, 30, 600))}
    recs = {"user_id": [u for u in users for _ in range(10)], "item_id": list(rng.integers(0, 30, 2000)),
            "score": list(rng.random(2000))}
    specs = ["ndcg@5", "recall@10"]
    mem = evaluate_runs({"a": recs}, truth, specs, dup="first", tdup="first")
    pu = mem.arrays()["a"]
    sdf = spark.createDataFrame([{"user_id": u, "item_id": int(i), "score": float(s)} for u, i, s in
                                 zip(recs["user_id"], recs["item_id"], recs["score"])]).repartition(3)
    tdf = spark.createDataFrame([{"user_id": u, "item_id": int(i)} for u, i in zip(truth["user_id"], truth["item_id"])])
    res = receval.evaluate(sdf, tdf, specs, dup="first", tdup="first")
    got = poisson_intervals(res, level=0.9, resamples=300, seed=7)
    for m in specs:
        want = interval(pu[m], "poisson", 0.9, resamples=300, seed=7, ids=mem.user_ids)
        assert (got[m].low, got[m].high) == pytest.approx((want.low, want.high), rel=1e-12, abs=1e-15)
