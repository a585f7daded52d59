"""One request for every engine and one statistics-options object (issue 32)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import receval
from receval import api
from receval.errors import SpecError
from receval.examples import WORKED_RECS, WORKED_TRUTH
from receval.inputs import Request
from receval.resampling import StatsOptions
from receval.runs import evaluate_runs
from receval.stats import compare


def test_evaluate_hands_one_frozen_request_to_the_engine_table(monkeypatch):
    assert set(api.ENGINES) == {"memory", "polars", "spark"}
    seen = []

    def engine(req):
        seen.append(req)
        return api.ENGINES["memory"](req)

    monkeypatch.setitem(api.ENGINES, "mine", engine)
    train = {"user_id": [1], "item_id": [1]}
    got = receval.evaluate(WORKED_RECS, WORKED_TRUTH, ["ndcg@4"], engine="mine", train=train, ties="item")
    assert got["ndcg@4"] == receval.evaluate(WORKED_RECS, WORKED_TRUTH, ["ndcg@4"], train=train, ties="item")["ndcg@4"]
    (req,) = seen
    assert req.train is train and req.overrides["ties"] == "item" and req.columns.user == "user_id"
    with pytest.raises(dataclasses.FrozenInstanceError):
        req.metrics = ["mrr"]  # type: ignore[misc]
    with pytest.raises(SpecError, match="unknown engine 'nope'"):
        receval.evaluate(WORKED_RECS, WORKED_TRUTH, ["ndcg@4"], engine="nope")  # type: ignore[arg-type]


def test_the_engines_agree_on_one_request():
    from receval.backends.polars import run_polars

    req = Request(WORKED_RECS, WORKED_TRUTH, ["ndcg@4", "precision@2"])
    a, b = api.ENGINES["memory"](req), run_polars(req, n_batches=2)
    assert [e.value for e in a.entries] == [e.value for e in b.entries]
    assert [e.signature for e in a.entries] == [e.signature for e in b.entries]


PU = {"a": {"m@1": np.array([1.0, 1.0, 0.0, 1.0, 1.0])}, "b": {"m@1": np.array([0.0, 1.0, 0.0, 0.0, 1.0])}}


def test_one_stats_options_object_for_stats_runs_and_segments():
    o = StatsOptions(test="permutation", correction="none", ci="percentile", resamples=200, seed=3)
    assert compare(PU, options=o) == compare(PU, test="permutation", correction="none", ci="percentile", resamples=200, seed=3)
    assert StatsOptions.of(o, {"seed": 4}).seed == 4
    truth = {"user_id": [1, 2, 3, 4], "item_id": [10, 20, 30, 40]}
    a = {"user_id": [1, 2, 3, 4], "item_id": [10, 20, 31, 40], "score": [1.0] * 4}
    b = {"user_id": [1, 2, 3, 4], "item_id": [11, 20, 30, 41], "score": [1.0] * 4}
    runs = evaluate_runs({"a": a, "b": b}, truth, ["hitrate@1"])
    o = StatsOptions(ci="t", correction="bonferroni")
    x, y = runs.compare(o), runs.compare(ci="t", correction="bonferroni")
    assert (x.values, x.intervals, x.pairs, x.signatures) == (y.values, y.intervals, y.pairs, y.signatures)
    with pytest.raises(TypeError, match=r"compare\(\) got an unexpected keyword argument 'tests'"):
        runs.compare(tests="t")
    with pytest.raises(SpecError, match="`level` must be a number between 0 and 1"):
        runs.compare(StatsOptions(level=95))
