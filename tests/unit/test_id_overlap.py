"""Inputs whose ids never (or barely) meet, ids written as floats, NaN in text columns.

"One signature, one number" needs the number to come from data that meet: recommendations
and ground truth with no user (or no item) in common are refused with examples of both sides
and the likely fix; a small overlap is reported (a ``RecevalWarning`` and the counts in
``Results.info``); float-written ids ("1.0") never silently miss integer ids ("1"); a NaN in
a score or rating column of a text file is refused naming the column, however far down the
file it is. Every case also through the command line: exit status 2, one ``receval: error:``
line, no traceback. The tie rule is always given (never the default).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import polars as pl
import pytest

import receval
from receval.backends.polars import evaluate_polars
from receval.cli import main
from receval.errors import DataError, RecevalWarning

TIES = {"ties": "item"}  # explicit: another tie rule may become the default
OVERLAP_KEYS = ("users_in_both", "users_only_in_recs", "users_only_in_truth")


def ev(recs, truth, metrics=("precision@2",), **kw):
    return receval.evaluate(recs, truth, list(metrics), **TIES, **kw)


def _one_line(msg: str) -> str:
    assert "\n" not in msg.strip(), f"not one line: {msg!r}"
    assert "Traceback" not in msg
    return msg


def _refused(recs, truth, **kw) -> str:
    with pytest.raises(DataError) as exc:
        ev(recs, truth, **kw)
    return _one_line(str(exc.value))


def _cli(tmp_path, capsys, recs: str, truth: str, extra=()) -> tuple[int, str, str]:
    r, t = tmp_path / "recs.csv", tmp_path / "truth.csv"
    r.write_text(recs, encoding="utf-8")
    t.write_text(truth, encoding="utf-8")
    code = main(["evaluate", str(r), str(t), "-m", "precision@2", "--ties", "item", "--format", "json", *extra])
    out, err = capsys.readouterr()
    return code, out, err


def _cli_refused(tmp_path, capsys, recs: str, truth: str, *fragments: str) -> str:
    code, out, err = _cli(tmp_path, capsys, recs, truth)
    assert code == 2, (code, out, err)
    assert err.startswith("receval: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for f in fragments:
        assert f in err, (f, err)
    return err


def _overlap_warnings(record) -> list[str]:
    return [str(w.message) for w in record if issubclass(w.category, RecevalWarning) and "overlap" in str(w.message)]


# ---- 1. users that never meet ----------------------------------------------------------------

RECS_NUM = pl.DataFrame({"user_id": ["1", "1", "2"], "item_id": ["a", "b", "a"], "score": [3.0, 2.0, 1.0]})
TRUTH_U = pl.DataFrame({"user_id": ["u1", "u2"], "item_id": ["a", "b"]})


def test_no_user_in_common_is_refused_with_examples_of_both_sides():
    msg = _refused(RECS_NUM, TRUTH_U)
    assert "no user" in msg and "in common" in msg
    assert "'1'" in msg and "'2'" in msg  # the recommendation side
    assert "'u1'" in msg and "'u2'" in msg  # the truth side
    assert "prefix 'u'" in msg  # the likely fix: the truth ids carry a prefix the others lack


def test_no_user_in_common_names_the_user_column_when_nothing_is_recognised():
    recs = pl.DataFrame({"user_id": ["alice", "bob"], "item_id": ["a", "b"], "score": [1.0, 2.0]})
    truth = pl.DataFrame({"user_id": ["carol", "dave"], "item_id": ["a", "b"]})
    msg = _refused(recs, truth)
    assert "'alice'" in msg and "'carol'" in msg and "user_col=" in msg


def test_no_user_in_common_integers_and_swapped_columns():
    recs = pl.DataFrame({"user_id": [100, 100, 101], "item_id": [1, 2, 1], "score": [3.0, 2.0, 1.0]})
    truth = pl.DataFrame({"user_id": [1, 2], "item_id": [100, 101]})  # the truth has users and items swapped
    msg = _refused(recs, truth)
    assert "100" in msg and "swapped" in msg


def test_no_user_in_common_leading_zeros():
    recs = pl.DataFrame({"user_id": ["007", "008"], "item_id": ["a", "b"], "score": [1.0, 2.0]})
    truth = pl.DataFrame({"user_id": ["7", "8"], "item_id": ["a", "b"]})
    assert "leading zeros" in _refused(recs, truth)


def test_no_user_in_common_through_the_cli(tmp_path, capsys):
    recs = "user_id,item_id,score\n1,a,3\n1,b,2\n2,a,1\n"
    truth = "user_id,item_id\nu1,a\nu2,b\n"
    _cli_refused(tmp_path, capsys, recs, truth, "no user", "'1'", "'u1'", "prefix 'u'")


def test_a_small_overlap_is_warned_and_counted():
    recs = pl.DataFrame({"user_id": [1, 1, 9, 9, 8], "item_id": [10, 20, 10, 20, 10], "score": [2.0, 1.0, 2.0, 1.0, 1.0]})
    truth = pl.DataFrame({"user_id": [1, 2, 3, 4], "item_id": [10, 10, 20, 20]})
    with pytest.warns(RecevalWarning, match="overlap") as record:
        res = ev(recs, truth)
    msg = _overlap_warnings(record)[0]
    assert "1 of 4" in msg and "1 of 3" in msg
    assert {k: res.info[k] for k in OVERLAP_KEYS} == {"users_in_both": 1, "users_only_in_recs": 2, "users_only_in_truth": 3}


def test_most_recommended_users_outside_the_truth_is_warned():
    recs = pl.DataFrame({"user_id": [1, 2, 3, 4, 5], "item_id": [10] * 5, "score": [1.0] * 5})
    truth = pl.DataFrame({"user_id": [1, 2], "item_id": [10, 10]})
    with pytest.warns(RecevalWarning, match="overlap"):
        res = ev(recs, truth)
    assert res.info["users_in_both"] == 2 and res.info["users_only_in_recs"] == 3 and res.info["users_only_in_truth"] == 0


def test_a_full_overlap_is_silent_and_counted():
    recs = pl.DataFrame({"user_id": [1, 1, 2], "item_id": [10, 20, 10], "score": [2.0, 1.0, 1.0]})
    truth = pl.DataFrame({"user_id": [1, 2], "item_id": [10, 20]})
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        res = ev(recs, truth)
    assert not _overlap_warnings(record)
    assert {k: res.info[k] for k in OVERLAP_KEYS} == {"users_in_both": 2, "users_only_in_recs": 0, "users_only_in_truth": 0}


def test_the_small_overlap_warning_is_one_line_on_the_cli(tmp_path, capsys):
    recs = "user_id,item_id,score\n1,10,2\n1,20,1\n"
    truth = "user_id,item_id\n1,10\n2,10\n3,20\n"
    code, out, err = _cli(tmp_path, capsys, recs, truth)
    assert code == 0, err
    lines = [line for line in err.splitlines() if "overlap" in line]
    assert lines and all(line.startswith("receval: warning: ") for line in lines), err
    assert "Traceback" not in err


def test_no_item_in_common_is_refused_with_examples():
    recs = pl.DataFrame({"user_id": ["u1", "u1", "u2"], "item_id": ["i1", "i2", "i1"], "score": [3.0, 2.0, 1.0]})
    truth = pl.DataFrame({"user_id": ["u1", "u2"], "item_id": ["1", "2"]})
    msg = _refused(recs, truth)
    assert "no recommended item" in msg and "'i1'" in msg and "'1'" in msg and "prefix 'i'" in msg


def test_no_item_in_common_through_the_cli(tmp_path, capsys):
    recs = "user_id,item_id,score\n1,i1,3\n1,i2,2\n2,i1,1\n"
    truth = "user_id,item_id\n1,1\n2,2\n"
    _cli_refused(tmp_path, capsys, recs, truth, "no recommended item", "'i1'", "'1'")


def test_a_total_miss_with_ids_written_alike_is_evaluated_and_reported():
    # one user, one wrong recommendation: a true total miss, not ids that cannot meet
    recs = pl.DataFrame({"user_id": [0], "item_id": [0], "score": [0.0]})
    truth = pl.DataFrame({"user_id": [0], "item_id": [1]})
    with pytest.warns(RecevalWarning, match="no recommended item"):
        assert ev(recs, truth).values["precision@2"] == 0.0
    with pytest.warns(RecevalWarning, match="no recommended item"):
        assert evaluate_polars(recs.lazy(), truth.lazy(), ["precision@2"], overrides=TIES, n_batches=2)["precision@2"] == 0.0


def test_the_polars_backend_refuses_items_written_apart():
    recs = pl.DataFrame({"user_id": ["u1", "u1", "u2"], "item_id": ["i1", "i2", "i1"], "score": [3.0, 2.0, 1.0]})
    truth = pl.DataFrame({"user_id": ["u1", "u2"], "item_id": ["1", "2"]})
    with pytest.raises(DataError, match="no recommended item") as exc:
        evaluate_polars(recs.lazy(), truth.lazy(), ["precision@2"], overrides=TIES, n_batches=2)
    assert "prefix 'i'" in _one_line(str(exc.value))


def test_items_that_meet_somewhere_are_not_refused():
    recs = pl.DataFrame({"user_id": [1, 1, 2], "item_id": [10, 20, 30], "score": [3.0, 2.0, 1.0]})
    truth = pl.DataFrame({"user_id": [1, 2], "item_id": [40, 10]})  # item 10 is recommended to user 1 only
    assert ev(recs, truth).values["precision@2"] == 0.0


def test_items_that_meet_only_across_batches_are_not_refused_in_batches():
    """No user is recommended an item of its own batch's truth, yet the item of user 1 is the
    truth of user 2: the whole-input check finds it, with any number of batches."""
    recs = pl.DataFrame({"user_id": [1, 2], "item_id": [10, 30], "score": [3.0, 1.0]})
    truth = pl.DataFrame({"user_id": [1, 2], "item_id": [40, 10]})
    for n in (1, 2, 3):
        assert evaluate_polars(recs.lazy(), truth.lazy(), ["precision@2"], overrides=TIES, n_batches=n)["precision@2"] == 0.0


def test_a_batch_whose_items_meet_spares_the_whole_input_item_check(monkeypatch):
    import receval.encode as E

    rng = np.random.default_rng(1)
    recs = pl.DataFrame({"user_id": np.repeat(np.arange(50), 4), "item_id": np.tile(np.arange(4), 50), "score": rng.random(200)})
    truth = pl.DataFrame({"user_id": np.arange(50), "item_id": np.zeros(50, dtype=np.int64)})
    monkeypatch.setattr(E, "_id_kind", lambda dtype: pytest.fail("the whole inputs were read for the item check"))
    got = evaluate_polars(recs.lazy(), truth.lazy(), ["hitrate@4"], overrides=TIES, n_batches=4)
    assert got["hitrate@4"] == 1.0


def test_the_polars_backend_refuses_and_counts_as_in_memory():
    with pytest.raises(DataError, match="no user is in common") as exc:
        evaluate_polars(RECS_NUM.lazy(), TRUTH_U.lazy(), ["precision@2"], overrides=TIES, n_batches=3)
    assert "'1'" in str(exc.value) and "'u1'" in str(exc.value) and "prefix 'u'" in str(exc.value)
    # a partial overlap: some batches hold no common user; refused by none, counted as in memory
    rng = np.random.default_rng(3)
    recs = pl.DataFrame({"user_id": np.repeat(np.arange(0, 40), 2), "item_id": rng.integers(0, 9, 80),
                         "score": rng.random(80)}).unique(["user_id", "item_id"], maintain_order=True)
    truth = pl.DataFrame({"user_id": np.arange(30, 100), "item_id": rng.integers(0, 9, 70)})
    with pytest.warns(RecevalWarning, match="overlap"):
        mem = ev(recs, truth)
    with pytest.warns(RecevalWarning, match="overlap"):
        bat = evaluate_polars(recs.lazy(), truth.lazy(), ["precision@2"], overrides=TIES, n_batches=7)
    assert mem.values == bat.values
    assert {k: mem.info[k] for k in OVERLAP_KEYS} == {k: bat.info[k] for k in OVERLAP_KEYS} == {
        "users_in_both": 10, "users_only_in_recs": 30, "users_only_in_truth": 60}


# ---- 2. float-written ids against integer ids ----------------------------------------------


def test_float_text_user_ids_against_integer_text_are_refused(tmp_path, capsys):
    recs = "user_id,item_id,score\n1.0,10,3\n1.0,20,2\n2.0,10,1\n"
    truth = "user_id,item_id\n1,10\n2,20\n"
    err = _cli_refused(tmp_path, capsys, recs, truth, "'1.0'", "'1'", "float")
    assert "Int64" in err  # the fix: write them as integers
    (tmp_path / "r.csv").write_text(recs)
    (tmp_path / "t.csv").write_text(truth)
    msg = _refused(str(tmp_path / "r.csv"), str(tmp_path / "t.csv"))
    assert "float" in msg and "user ids" in msg


def test_float_text_item_ids_against_integer_ids_are_refused(tmp_path):
    (tmp_path / "r.csv").write_text("user_id,item_id,score\n1,10.0,3\n1,20.0,2\n2,10.0,1\n")
    (tmp_path / "t.csv").write_text("user_id,item_id\n1,10\n2,20\n")
    msg = _refused(str(tmp_path / "r.csv"), str(tmp_path / "t.csv"))
    assert "item ids" in msg and "float" in msg and "'10.0'" in msg
    # the same text file against an in-memory integer truth, and a pandas string truth
    msg = _refused(str(tmp_path / "r.csv"), pl.DataFrame({"user_id": [1, 2], "item_id": [10, 20]}))
    assert "float" in msg and "'10.0'" in msg
    msg = _refused(str(tmp_path / "r.csv"), pd.DataFrame({"user_id": ["1", "2"], "item_id": ["10", "20"]}))
    assert "float" in msg and "'10.0'" in msg


def test_float_text_ids_on_both_sides_still_meet(tmp_path):
    (tmp_path / "r.csv").write_text("user_id,item_id,score\n1.0,10,3\n1.0,20,2\n2.0,10,1\n")
    (tmp_path / "t.csv").write_text("user_id,item_id\n1.0,10\n2.0,20\n")
    # user 1.0: item 10 of (10, 20) relevant; user 2.0: item 10 of (10) not relevant
    assert ev(str(tmp_path / "r.csv"), str(tmp_path / "t.csv")).values["precision@2"] == (1 / 2 + 0 / 2) / 2


def test_float_columns_of_ids_stay_refused():
    recs = pd.DataFrame({"user_id": [1.0, 2.0], "item_id": [10, 20], "score": [1.0, 2.0]})
    msg = _refused(recs, pd.DataFrame({"user_id": [1, 2], "item_id": [10, 20]}))
    assert "floats" in msg and "cast" in msg


# ---- 3. NaN in score / rating columns of text files -------------------------------------------


def test_nan_scores_name_the_column_and_the_fix(tmp_path, capsys):
    recs = "user_id,item_id,pred\n1,10,nan\n1,20,0.5\n2,10,0.4\n"
    truth = "user_id,item_id\n1,10\n2,10\n"
    code, out, err = _cli(tmp_path, capsys, recs, truth, ["--score-col", "pred"])
    assert code == 2 and err.startswith("receval: error: ") and err.count("\n") == 1, err
    assert "'pred'" in err and "NaN" in err and "drop those rows" in err


def test_nan_ratings_name_the_column_and_the_fix(tmp_path, capsys):
    recs = "user_id,item_id,score\n1,10,0.6\n1,20,0.5\n2,10,0.4\n"
    truth = "user_id,item_id,stars\n1,10,NaN\n2,10,4\n"
    code, out, err = _cli(tmp_path, capsys, recs, truth, ["--rating-col", "stars"])
    assert code == 2 and err.count("\n") == 1, err
    assert "'stars'" in err and "NaN" in err and "fill" in err


def _long(n: int, last: str) -> str:
    return "user_id,item_id,rating\n" + "".join(f"{u},{u % 7},{1 + u % 5}\n" for u in range(n)) + f"{n},3,{last}\n"


@pytest.mark.parametrize("cell", ["NaN", "nan", "inf"])
def test_nan_rating_past_the_first_10000_rows_is_refused_naming_the_column(tmp_path, cell):
    (tmp_path / "t.csv").write_text(_long(10_001, cell))
    recs = pl.DataFrame({"user_id": [0, 1], "item_id": [0, 1], "score": [1.0, 0.5]})
    msg = _refused(recs, str(tmp_path / "t.csv"))
    assert "'rating'" in msg and "NaN or infinite" in msg


def test_a_fractional_rating_past_the_first_10000_rows_is_read(tmp_path):
    text = _long(10_001, "4.5")
    (tmp_path / "t.csv").write_text(text)
    recs = pl.DataFrame({"user_id": [10_001, 10_001, 0], "item_id": [3, 1, 0], "score": [1.0, 0.5, 0.2]})
    from io import StringIO

    truth = pl.read_csv(StringIO(text), infer_schema_length=None)
    assert truth["rating"].dtype == pl.Float64 and truth["rating"][-1] == 4.5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RecevalWarning)  # 2 of 10,002 truth users have recommendations
        got = ev(recs, str(tmp_path / "t.csv"), metrics=["ndcg(gain=linear)@2"])
        want = ev(recs, truth, metrics=["ndcg(gain=linear)@2"])
    assert got.values == want.values


def test_a_text_cell_past_the_first_10000_rows_names_the_column(tmp_path):
    (tmp_path / "t.csv").write_text(_long(10_001, "five"))
    recs = pl.DataFrame({"user_id": [0], "item_id": [0], "score": [1.0]})
    msg = _refused(recs, str(tmp_path / "t.csv"))
    assert "'rating'" in msg and "'five'" in msg and "rating_col=" in msg
