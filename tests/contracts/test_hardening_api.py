"""Issue 33: the API's edge refuses wrongly typed arguments with a RecevalError, never a crash
(AttributeError, TypeError, ...) from deep inside."""

from __future__ import annotations

import numpy as np
import pandas as pd
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import receval
from receval.compare import compare
from receval.errors import RecevalError
from receval.runs import evaluate_runs

TRUTH = {"user_id": [1, 2], "item_id": [10, 20]}
RECS = {"user_id": [1, 2], "item_id": [10, 21], "score": [1.0, 0.5]}


def test_compare_dialects_given_a_number_is_refused():
    with pytest.raises(RecevalError, match="pass dialects as"):
        compare(RECS, TRUTH, ["ndcg@2"], dialects=3)


def test_compare_dialects_list_of_numbers_is_refused():
    with pytest.raises(RecevalError, match="pass dialect names as strings"):
        compare(RECS, TRUTH, ["ndcg@2"], dialects=[3])


@pytest.mark.parametrize("series", [pd.Series([1, 2]), pl.Series("user_id", [1, 2])], ids=["pandas", "polars"])
@pytest.mark.parametrize("side", ["recs", "truth"])
def test_a_series_where_a_frame_is_expected_is_refused(series, side):
    recs, truth = (series, TRUTH) if side == "recs" else (RECS, series)
    with pytest.raises(RecevalError, match="as a frame with named columns"):
        receval.evaluate(recs, truth, "ndcg@2")


#: values of the wrong type for any argument
WRONG = [3, 2.5, True, None, object(), [object()], {"a": object()}, b"bytes", pd.Series([1, 2]), np.array([[1, 2]]),
         lambda: None, {1, 2}, ("x", 3), pl.Series("x", [1])]


def _calls():
    """(name, function, good keyword arguments) of every public function."""
    return [
        ("evaluate", receval.evaluate, dict(recs=RECS, truth=TRUTH, metrics="ndcg@2")),
        ("sampled_evaluate", receval.sampled_evaluate,
         dict(scores=RECS, truth=TRUTH, metrics="hitrate@1", catalog=[10, 20, 21, 22], n=1)),
        ("compare", compare, dict(recs=RECS, truth=TRUTH, metrics=["ndcg@2"], dialects="standard")),
        ("evaluate_runs", evaluate_runs, dict(runs={"a": RECS}, truth=TRUTH, metrics=["ndcg@2"])),
        ("parse_spec", receval.parse_spec, dict(text="ndcg@2")),
        ("parse_signature", receval.parse_signature,
         dict(text="ndcg@2|gain:binary|ideal:cut|base:2|disc:log|rel:all|order:score|ties:average")),
    ]


CALLS = _calls()


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(range(len(CALLS))), st.data())
def test_every_public_function_refuses_wrong_types_with_a_receval_error(i, data):
    name, fn, good = CALLS[i]
    arg = data.draw(st.sampled_from(sorted(good)), label="argument")
    bad = data.draw(st.sampled_from(WRONG), label="value")
    kwargs = {**good, arg: bad}
    try:
        fn(**kwargs)
    except RecevalError as exc:
        assert "\n" not in str(exc).strip()
    except Exception as exc:  # pragma: no cover - the failure shown
        pytest.fail(f"{name}({arg}={bad!r}) raised {type(exc).__name__}: {exc}")
