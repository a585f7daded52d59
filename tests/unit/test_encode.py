"""The engine's input step: ids of any type, rows in any order, one sort; checks with fixes."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import receval
from receval.encode import rank_order
from receval.errors import DataError

SPECS = ["precision@3", "recall@3", "ndcg@3", "map@3", "mrr@3", "hitrate@3", "auc", "ndcg(gain=linear)@5"]


@st.composite
def ranked(draw):
    n = draw(st.integers(2, 60))
    users = draw(st.lists(st.integers(0, 5), min_size=n, max_size=n))
    # few distinct scores: many ties, near-ties and signed zeros
    pool = [0.0, -0.0, 1.0, 1.0 + 2**-40, -2.5, 3.0, 1e-300, -1e-300]
    scores = draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n))
    items = draw(st.permutations(range(n)))
    return np.array(users, dtype=np.int64), np.array(scores), np.array(items, dtype=np.int64)


@settings(max_examples=150, deadline=None)
@given(ranked(), st.sampled_from(["input", "item", "item_desc"]))
def test_one_sort_equals_lexsort(data, ties):
    user, score, item = data
    perm = rank_order(user, score, None, "score", ties, item)
    perm = np.arange(len(user)) if perm is None else perm
    tie = {"input": np.arange(len(user)), "item": item, "item_desc": -item}[ties]
    expected = np.lexsort((tie, -(score + 0.0), user))
    assert np.array_equal(perm, expected)


def test_rank_and_input_orders():
    user = np.array([2, 0, 2, 0, 1])
    rank = np.array([2, 3, 1, 1, 1])
    assert list(rank_order(user, None, rank, "rank", "input")) == [3, 1, 4, 2, 0]
    assert list(rank_order(user, None, None, "input", "input")) == [1, 3, 4, 0, 2]
    assert rank_order(np.array([0, 0, 1]), np.array([3.0, 2.0, 1.0]), None, "score", "input") is None  # sorted: no sort


def _frames(n_users=40, k=8, seed=0, tied=False):
    rng = np.random.default_rng(seed)
    u = np.repeat(np.arange(n_users), k)
    i = rng.integers(0, 60, size=len(u))
    score = rng.integers(0, 5, size=len(u)).astype(float) if tied else rng.random(len(u))
    recs = pl.DataFrame({"user_id": u, "item_id": i, "score": score})
    recs = recs.unique(["user_id", "item_id"], keep="first", maintain_order=True)
    tu = np.repeat(np.arange(n_users + 3), 4)
    truth = pl.DataFrame({"user_id": tu, "item_id": rng.integers(0, 60, size=len(tu)), "rating": rng.integers(1, 6, size=len(tu)).astype(float)})
    return recs, truth.unique(["user_id", "item_id"], keep="first", maintain_order=True)


@pytest.mark.parametrize("shape", ["strings", "uint64_wide", "negative_wide", "categorical"])
def test_any_id_type_and_row_order_gives_the_same_values(shape):
    recs, truth = _frames(tied=shape == "uint64_wide")
    base = receval.evaluate(recs, truth, SPECS, rel=3, ties="item")
    if shape == "strings":
        f = lambda c: pl.format("id-{}", pl.col(c))  # noqa: E731
    elif shape == "uint64_wide":
        f = lambda c: (pl.col(c).cast(pl.UInt64) * 2**57 + 2**63 + 12345).cast(pl.UInt64)  # noqa: E731
    elif shape == "negative_wide":
        f = lambda c: pl.col(c) * -(2**55) + 7  # noqa: E731
    else:
        f = lambda c: pl.format("c{}", pl.col(c)).cast(pl.Categorical)  # noqa: E731
    r2 = recs.with_columns(f("user_id").alias("user_id"), f("item_id").alias("item_id")).sample(fraction=1.0, shuffle=True, seed=3)
    t2 = truth.with_columns(f("user_id").alias("user_id"), f("item_id").alias("item_id")).sample(fraction=1.0, shuffle=True, seed=4)
    # ties=item (uint64_wide keeps the id order and has tied scores; the others have none)
    res = receval.evaluate(r2, t2, SPECS, rel=3, ties="item")
    for s in SPECS:
        assert res[s] == pytest.approx(base[s], abs=1e-12), s


def test_csv_ids_keep_their_identity(tmp_path):
    (tmp_path / "recs.csv").write_text("user_id,item_id,score\n1,007,0.9\n1,7,0.5\n")
    (tmp_path / "truth.csv").write_text("user_id,item_id\n1,7\n")
    # "007" and "7" are two items: the relevant one is ranked second
    assert receval.evaluate(tmp_path / "recs.csv", tmp_path / "truth.csv", ["mrr@2"])["mrr@2"] == 0.5
    # canonical integers on both sides stay integers
    (tmp_path / "r2.csv").write_text("user_id,item_id,score\n10,7,0.9\n9,7,0.5\n")
    (tmp_path / "t2.csv").write_text("user_id,item_id\n9,7\n10,7\n")
    res = receval.evaluate(tmp_path / "r2.csv", tmp_path / "t2.csv", ["mrr@2"])
    assert res.per_user()["user_id"].to_list() == [9, 10]


@pytest.mark.parametrize(
    "recs, message",
    [
        ({"user_id": [1.0, 1.0], "item_id": [1, 2], "score": [1.0, 0.5]}, "holds floats"),
        ({"user_id": [1, None], "item_id": [1, 2], "score": [1.0, 0.5]}, "missing ids; drop those rows"),
        ({"user_id": [1, 1], "item_id": [1.0, float("nan")], "score": [1.0, 0.5]}, "NaN ids"),
        ({"user_id": [1, 1], "item_id": [1, 2], "score": ["a", "b"]}, "not a number"),
        ({"user_id": [1, 1], "item_id": [1, 2], "rank": [1.0, 1.5]}, "not whole numbers"),
        ({"user_id": ["1", "1"], "item_id": [1, 2], "score": [1.0, 0.5]}, "different types"),
    ],
)
def test_bad_columns_are_refused_with_the_fix(recs, message):
    with pytest.raises(DataError, match=message):
        receval.evaluate(recs, {"user_id": [1], "item_id": [1]}, ["ndcg@2"])


def test_integral_float_ranks_are_ranks():
    recs = {"user_id": [1, 1], "item_id": [1, 2], "rank": [2.0, 1.0]}
    assert receval.evaluate(recs, {"user_id": [1], "item_id": [1]}, ["mrr@2"])["mrr@2"] == 0.5


def test_uint64_ids_beyond_int64():
    big = 2**64 - 5
    recs = pl.DataFrame({"user_id": [big, big], "item_id": [big - 1, big], "score": [1.0, 0.5]}, schema_overrides={"user_id": pl.UInt64, "item_id": pl.UInt64})
    truth = pl.DataFrame({"user_id": [big], "item_id": [big]}, schema_overrides={"user_id": pl.UInt64, "item_id": pl.UInt64})
    res = receval.evaluate(recs, truth, ["mrr@2"])
    assert res["mrr@2"] == 0.5
    assert res.per_user()["user_id"].to_list() == [big]


def test_duplicates_with_string_ids_are_found_and_named():
    recs = {"user_id": ["a", "a", "a"], "item_id": ["x", "y", "x"], "score": [0.9, 0.5, 0.1]}
    truth = {"user_id": ["a"], "item_id": ["y"]}
    with pytest.raises(DataError, match=r"1 duplicate \(user, item\) pairs in recommendations, e.g. \('a', 'x'\)"):
        receval.evaluate(recs, truth, ["mrr@3"])
    # dup=first keeps the best-ranked row: y moves up to position 2
    assert receval.evaluate(recs, truth, ["mrr@3"], dup="first")["mrr@3"] == 0.5


def test_no_duplicate_check_is_exact_when_hashes_collide(monkeypatch):
    from receval import encode as enc

    ru = pl.Series(["a", "a", "b"])
    ri = pl.Series(["x", "y", "x"])
    # every hash equal: the candidates are compared as values, so distinct pairs pass
    monkeypatch.setattr(pl.Series, "hash", lambda self, seed=0: pl.Series([7] * len(self), dtype=pl.UInt64))
    assert enc._no_duplicates(np.zeros(3, dtype=np.int64), ru, ri)
    assert not enc._no_duplicates(np.zeros(3, dtype=np.int64), pl.Series(["a", "a", "a"]), pl.Series(["x", "y", "x"]))


_VALUES = st.one_of(
    st.integers(-3, 3), st.integers(2**62, 2**64 - 1), st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["7", "007", "", "a", "é", " 7", "1e3"]), st.none(), st.booleans(),
)


@st.composite
def _column(draw, n):
    kind = draw(st.sampled_from(["int", "uint", "float", "str", "mixed", "null", "bool"]))
    if kind == "int":
        return draw(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=n, max_size=n))
    if kind == "uint":
        return pl.Series(draw(st.lists(st.integers(0, 2**64 - 1), min_size=n, max_size=n)), dtype=pl.UInt64)
    if kind == "float":
        return draw(st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=n, max_size=n))
    if kind == "str":
        return draw(st.lists(st.text(max_size=3), min_size=n, max_size=n))
    if kind == "bool":
        return draw(st.lists(st.booleans(), min_size=n, max_size=n))
    if kind == "null":
        return pl.Series([None] * n, dtype=pl.Null)
    vals = draw(st.lists(_VALUES, min_size=n, max_size=n))
    return pl.Series(vals, dtype=pl.Object) if len({type(v) for v in vals}) > 1 else vals


@st.composite
def _frame(draw, cols):
    n = draw(st.integers(0, 6))
    data = {}
    for c in cols:
        col = draw(_column(n))
        data[c] = col if isinstance(col, pl.Series) else pl.Series(col, strict=False)
    return pl.DataFrame(data)


@settings(max_examples=300, deadline=None)
@given(_frame(["user_id", "item_id", "score"]), _frame(["user_id", "item_id", "rating"]),
       st.sampled_from(["ndcg@3", "auc", "map@2", "precision@1"]))
def test_arbitrary_frames_never_raise_anything_but_a_user_error(recs, truth, spec):
    from receval.errors import RecevalError

    try:
        res = receval.evaluate(recs, truth, [spec])
    except RecevalError:
        return
    v = res[spec]
    assert v == v and -1e-12 <= v  # a number, never NaN


@st.composite
def _valid_ids_frames(draw):
    kind = draw(st.sampled_from(["int", "str", "uint"]))
    ids = {"int": st.integers(-3, 3), "str": st.sampled_from(["7", "007", "", "é", "a"]),
           "uint": st.integers(2**64 - 4, 2**64 - 1)}[kind]
    dtype = pl.UInt64 if kind == "uint" else None

    def side(extra):
        n = draw(st.integers(1, 8))
        d = {"user_id": pl.Series(draw(st.lists(ids, min_size=n, max_size=n)), dtype=dtype),
             "item_id": pl.Series(draw(st.lists(ids, min_size=n, max_size=n)), dtype=dtype)}
        col = draw(_column(n))
        d[extra] = col if isinstance(col, pl.Series) else pl.Series(col, strict=False)
        return pl.DataFrame(d)

    return side("score"), side("rating")


@settings(max_examples=300, deadline=None)
@given(_valid_ids_frames(), st.sampled_from(["ndcg@3", "auc", "map@2", "mrr@2"]), st.sampled_from(["error", "first"]))
def test_valid_ids_with_arbitrary_values_never_crash(frames, spec, dup):
    from receval.errors import RecevalError

    recs, truth = frames
    try:
        res = receval.evaluate(recs, truth, [spec], dup=dup, tdup=dup, rel=None)
    except RecevalError:
        return
    v = res[spec]
    assert v == v and -1e-12 <= v <= 1 + 1e-12


def test_a_truth_read_once_serves_several_runs(tmp_path):
    from receval.engine import read_truth
    from receval.io import Columns

    (tmp_path / "truth.csv").write_text("user_id,item_id\n1,007\n")
    t = read_truth(tmp_path / "truth.csv", Columns())
    a = receval.evaluate({"user_id": ["1", "1"], "item_id": ["7", "007"], "score": [0.9, 0.1]}, t, ["mrr@2"])
    b = receval.evaluate({"user_id": ["1"], "item_id": ["007"], "score": [0.5]}, t, ["mrr@2"])
    assert (a["mrr@2"], b["mrr@2"]) == (0.5, 1.0)


@settings(max_examples=150, deadline=None)
@given(ranked(), st.sampled_from(["input", "item", "item_desc"]), st.sampled_from([1, 2, 3, 16]))
def test_packed_sort_with_few_score_bits_equals_lexsort(data, ties, bits):
    """The packed sort keeps only a few leading bits of each score: nearly every row then
    collides with another, and the exact ordering of the runs must still give lexsort's order."""
    import receval.encode as enc

    user, score, item = data
    old = enc._SCORE_BITS_MAX
    enc._SCORE_BITS_MAX = bits
    try:
        sorted_user: list = []
        perm = rank_order(user, score, None, "score", ties, item, sorted_user)
    finally:
        enc._SCORE_BITS_MAX = old
    perm = np.arange(len(user)) if perm is None else perm
    tie = {"input": np.arange(len(user)), "item": item, "item_desc": -item}[ties]
    expected = np.lexsort((tie, -(score + 0.0), user))
    assert np.array_equal(perm, expected)
    if sorted_user:
        assert np.array_equal(sorted_user[0], user[expected])
