"""Hypothesis fuzzing of the input step (issue 10): arbitrary frames of mixed types give a
value or a RecevalError, never another exception; equal inputs under any id relabelling, id
type or row order give equal values."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import receval
from receval import RecevalError

SPECS = ["precision@3", "recall@3", "ndcg@3", "map@3", "mrr@3"]

cell = st.one_of(
    st.integers(-3, 5), st.integers(2**62, 2**64 - 1), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=4), st.none(), st.booleans(), st.sampled_from(["007", "7", "nan", "inf", "", " 1", "1.0"]),
)


@st.composite
def mixed_frame(draw, cols):
    n = draw(st.integers(0, 6))
    kind = draw(st.sampled_from(["uniform", "mixed"]))
    out = {}
    for c in cols:
        if kind == "uniform":
            base = draw(st.sampled_from([st.integers(0, 4), st.text(alphabet="ab0", min_size=1, max_size=2),
                                         st.floats(-2, 6, allow_nan=False), st.booleans()]))
            out[c] = draw(st.lists(base, min_size=n, max_size=n))
        else:
            out[c] = draw(st.lists(cell, min_size=n, max_size=n))
    return out


def _frame(cols: dict, how: str):
    if how == "pandas":
        return pd.DataFrame({k: pd.Series(v, dtype=object) for k, v in cols.items()})
    return cols  # a dict of lists: polars infers (or refuses) the types


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(recs=mixed_frame(["user_id", "item_id", "score"]), truth=mixed_frame(["user_id", "item_id", "rating"]),
       how=st.sampled_from(["dict", "pandas"]), rel=st.sampled_from([None, 1, ">0", "all"]))
def test_mixed_frames_give_a_value_or_a_one_line_error(recs, truth, how, rel):
    kw = {} if rel is None else {"rel": rel}
    try:
        res = receval.evaluate(_frame(recs, how), _frame(truth, how), SPECS, **kw)
    except RecevalError as exc:
        assert "\n" not in str(exc).strip() and str(exc)
        return
    for spec in SPECS:
        v = res[spec]
        assert math.isfinite(v) and 0.0 <= v <= 1.0 + 1e-12, (spec, v)
        receval.parse_signature(res.signature(spec))


@st.composite
def dataset(draw):
    n_users = draw(st.integers(1, 5))
    recs = {"user_id": [], "item_id": [], "score": []}
    truth = {"user_id": [], "item_id": [], "rating": []}
    score = 1000.0
    for u in range(n_users):
        items = draw(st.lists(st.integers(0, 8), unique=True, max_size=5))
        for i in items:
            score -= draw(st.floats(0.5, 3.0))  # distinct scores: no tie rule reads an id
            recs["user_id"].append(u)
            recs["item_id"].append(i)
            recs["score"].append(score)
        rel = draw(st.lists(st.integers(0, 8), unique=True, min_size=1, max_size=4))
        for i in rel:
            truth["user_id"].append(u)
            truth["item_id"].append(i)
            truth["rating"].append(draw(st.sampled_from([1.0, 3.0, 4.5, 5.0])))
    return recs, truth


def _relabel(data: dict, users: dict, items: dict) -> dict:
    return {**data, "user_id": [users[u] for u in data["user_id"]], "item_id": [items[i] for i in data["item_id"]]}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=dataset(), seed=st.integers(0, 2**32 - 1), kind=st.sampled_from(["int", "str", "big", "padded"]),
       rel=st.sampled_from([None, 4.5]))
def test_values_do_not_depend_on_labels_types_or_row_order(data, seed, kind, rel):
    recs, truth = data
    rng = np.random.default_rng(seed)
    perm_u, perm_i = rng.permutation(10), rng.permutation(20)
    label = {
        "int": lambda p, x: int(p[x]) * 7 - 30,
        "str": lambda p, x: f"id-{p[x]}",
        "big": lambda p, x: 2**63 + int(p[x]),
        "padded": lambda p, x: f"{p[x]:03d}",
    }[kind]
    users = {u: label(perm_u, u) for u in range(10)}
    items = {i: label(perm_i, i) for i in range(20)}
    r2, t2 = _relabel(recs, users, items), _relabel(truth, users, items)
    order_r, order_t = rng.permutation(len(recs["user_id"])), rng.permutation(len(truth["user_id"]))
    r2 = {k: [v[j] for j in order_r] for k, v in r2.items()}
    t2 = {k: [v[j] for j in order_t] for k, v in t2.items()}
    if kind == "big":
        r2 = pl.DataFrame(r2, schema_overrides={"user_id": pl.UInt64, "item_id": pl.UInt64})
        t2 = pl.DataFrame(t2, schema_overrides={"user_id": pl.UInt64, "item_id": pl.UInt64})
    kw = {"rel": rel} if rel is not None else {}
    try:
        a = receval.evaluate(recs, truth, SPECS, **kw)
    except RecevalError as exc:
        with pytest.raises(RecevalError) as again:
            receval.evaluate(r2, t2, SPECS, **kw)
        assert type(again.value) is type(exc)
        return
    b = receval.evaluate(r2, t2, SPECS, **kw)
    for spec in SPECS:
        assert b[spec] == pytest.approx(a[spec], abs=1e-12), spec
