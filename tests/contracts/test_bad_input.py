"""User mistakes get one precise, actionable error; inputs are never mutated; every input
type gives the same numbers.

A corpus of bad and awkward inputs (issue 10): every case, through the API and the command
line, gives either the right value (checked against arithmetic) or a one-line error that names
the fix — a RecevalError from the API, exit status 2 and one ``receval: error:`` line from the
CLI, never a traceback, never a wrong number, never a lost file.

File cases run through both; in-memory cases (pandas dtypes, Python option values, Spec
objects) through the API; output cases (``--per-user``) through both writers.
"""

from __future__ import annotations

import csv
import gzip
import html as _html
import io as _io
import json
import math
import os
import re
import subprocess
import sys
import tracemalloc
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
import scipy.sparse as sp

import receval
from receval import DataError, RecevalError, SpecError
from receval.cli import main
from receval.metrics import aspects as A
from receval.metrics.aspects import (
    _CHUNK,
    _DCAP,
    _WCAP,
    _aspect_table,
    _aspects_csr,
    _candidates,
    _check_lists,
    _dense_chunk,
    _divide,
    _expand,
    _gamma,
    _p_rated,
    _pad_cols,
    _segment_argmax_last,
    _sort_candidates,
    _truth_users,
    _zeroed,
    aspect_preferences,
    ndeval_discount,
)
from receval.spec import Spec
from receval.stats import compare as stats_compare
from receval.tables import render_pairs, render_table

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


def L(i: int) -> float:
    """The discount of position i: 1 / log2(i + 1)."""
    return 1.0 / math.log2(i + 1)


RECS_CSV = "user_id,item_id,score\n1,10,0.9\n1,20,0.8\n1,30,0.7\n2,10,0.5\n2,40,0.4\n"
TRUTH_CSV = "user_id,item_id,rating\n1,20,5\n1,30,3\n2,40,4\n"
# user 1 ranks 10, 20, 30 (20 and 30 relevant), user 2 ranks 10, 40 (40 relevant)
P2 = (1 / 2 + 1 / 2) / 2  # precision@2
R2 = (1 / 2 + 1 / 1) / 2  # recall@2
N3 = ((L(2) + L(3)) / (L(1) + L(2)) + L(2) / L(1)) / 2  # ndcg@3
N3_LIN = ((5 * L(2) + 3 * L(3)) / (5 * L(1) + 3 * L(2)) + 4 * L(2) / (4 * L(1))) / 2  # ndcg(gain=linear)@3


@dataclass
class Case:
    """One input: files (name -> text or bytes), metrics, options; ``want`` is the value of
    ``metrics[0]`` or the fragment the one-line error must contain."""

    name: str
    want: float | str
    recs: Any = RECS_CSV
    truth: Any = TRUTH_CSV
    metrics: list[str] = field(default_factory=lambda: ["precision@2"])
    opts: dict[str, Any] = field(default_factory=dict)
    recs_name: str = "recs.csv"
    truth_name: str = "truth.csv"
    extra: dict[str, tuple[str, Any]] = field(default_factory=dict)  # option -> (file name, contents)


def _rows(text: str, **repl: str) -> str:
    for a, b in repl.items():
        text = text.replace(a, b)
    return text


CASES = [
    # ---- formats, encodings, quoting --------------------------------------------------------
    Case("plain csv", P2),
    Case("bom in recs", P2, recs="\ufeff" + RECS_CSV),
    Case("bom in truth", P2, truth="\ufeff" + TRUTH_CSV),
    Case("crlf line ends", P2, recs=RECS_CSV.replace("\n", "\r\n"), truth=TRUTH_CSV.replace("\n", "\r\n")),
    Case("no final newline", P2, recs=RECS_CSV.rstrip("\n")),
    Case("quoted fields", P2, recs='"user_id","item_id","score"\n"1","10","0.9"\n"1","20","0.8"\n"1","30","0.7"\n"2","10","0.5"\n"2","40","0.4"\n'),
    Case("extra unused column", P2, recs=RECS_CSV.replace("score\n", "score,note\n").replace("\n1,", ",x\n1,").replace("\n2,", ",y\n2,").rstrip("\n") + ",z\n"),
    Case("columns reordered", P2, recs="score,item_id,user_id\n0.9,10,1\n0.8,20,1\n0.7,30,1\n0.5,10,2\n0.4,40,2\n"),
    Case("rows shuffled", P2, recs="user_id,item_id,score\n2,40,0.4\n1,30,0.7\n2,10,0.5\n1,10,0.9\n1,20,0.8\n"),
    Case("scientific scores", P2, recs=_rows(RECS_CSV, **{"0.9": "9e-1", "0.8": "8E-1", "0.7": "7.0e-1"})),
    Case("negative scores", P2, recs=_rows(RECS_CSV, **{"0.9": "-0.1", "0.8": "-0.2", "0.7": "-0.3", "0.5": "-5", "0.4": "-6"})),
    Case("integer scores", P2, recs=_rows(RECS_CSV, **{"0.9": "9", "0.8": "8", "0.7": "7", "0.5": "5", "0.4": "4"})),
    Case("huge scores", P2, recs=_rows(RECS_CSV, **{"0.9": "1e308", "0.8": "1e307", "0.7": "1e306"})),
    Case("string ids", P2, recs=_rows(RECS_CSV, **{"\n1,": "\nu1,", "\n2,": "\nu2,"}), truth=_rows(TRUTH_CSV, **{"\n1,": "\nu1,", "\n2,": "\nu2,"})),
    Case("unicode ids", P2, recs=_rows(RECS_CSV, **{"\n1,": "\nüser,", "\n2,": "\n日本,"}), truth=_rows(TRUTH_CSV, **{"\n1,": "\nüser,", "\n2,": "\n日本,"})),
    Case("emoji item ids", P2, recs=_rows(RECS_CSV, **{",20,": ",🎬,", ",40,": ",🎵,"}), truth=_rows(TRUTH_CSV, **{",20,": ",🎬,", ",40,": ",🎵,"})),
    Case("quoted ids with commas", P2, recs=_rows(RECS_CSV, **{",20,": ',"a,b",', ",40,": ',"c,d",'}), truth=_rows(TRUTH_CSV, **{",20,": ',"a,b",', ",40,": ',"c,d",'})),
    Case("zero-padded ids stay distinct", (0 / 2 + 1 / 2) / 2, recs=_rows(RECS_CSV, **{",20,": ",020,"})),
    Case("zero-padded ids match themselves", P2, recs=_rows(RECS_CSV, **{",20,": ",007,"}), truth=_rows(TRUTH_CSV, **{",20,": ",007,"})),
    Case("20-digit ids", P2, recs=_rows(RECS_CSV, **{",20,": ",12345678901234567890,"}), truth=_rows(TRUTH_CSV, **{",20,": ",12345678901234567890,"})),
    Case("uint64 ids above 2^63", P2, recs=_rows(RECS_CSV, **{",20,": f",{2**63 + 5},"}), truth=_rows(TRUTH_CSV, **{",20,": f",{2**63 + 5},"})),
    Case("negative ids", P2, recs=_rows(RECS_CSV, **{",20,": ",-20,"}), truth=_rows(TRUTH_CSV, **{",20,": ",-20,"})),
    Case("1000-char ids", P2, recs=_rows(RECS_CSV, **{",20,": "," + "x" * 1000 + ","}), truth=_rows(TRUTH_CSV, **{",20,": "," + "x" * 1000 + ","})),
    Case("empty-string-like id", P2, recs=_rows(RECS_CSV, **{",20,": ',"_",'}), truth=_rows(TRUTH_CSV, **{",20,": ',"_",'})),
    Case("tsv file", P2, recs=RECS_CSV.replace(",", "\t"), recs_name="recs.tsv"),
    Case("gzip csv", P2, recs=gzip.compress(RECS_CSV.encode()), recs_name="recs.csv.gz"),
    Case("parquet", P2, recs=("parquet", RECS_CSV), recs_name="recs.parquet"),
    Case("semicolon csv", "--sep ';'", recs=RECS_CSV.replace(",", ";")),
    Case("semicolon csv with sep", P2, recs=RECS_CSV.replace(",", ";"), opts={"sep": ";"}),
    Case("semicolon csv with sep name", P2, recs=RECS_CSV.replace(",", ";"), opts={"sep": "semicolon"}),
    Case("tab txt", "--sep tab", recs=RECS_CSV.replace(",", "\t"), recs_name="recs.txt"),
    Case("tab txt with sep", P2, recs=RECS_CSV.replace(",", "\t"), recs_name="recs.txt", opts={"sep": "tab"}),
    Case("pipe csv", "--sep '|'", recs=RECS_CSV.replace(",", "|")),
    Case("semicolon truth", "--sep ';'", truth=TRUTH_CSV.replace(",", ";")),
    Case("bad sep", "`sep` must be one character", opts={"sep": "ab"}),
    Case("header-only recs", "has a header", recs="user_id,item_id,score\n"),
    Case("header-only truth", "has a header", truth="user_id,item_id,rating\n"),
    Case("empty recs file", "is empty", recs=""),
    Case("empty truth file", "is empty", truth=""),
    Case("directory as recs", "is a directory", recs=("dir", None)),
    Case("missing recs file", "not found", recs=("missing", None)),
    Case("unknown extension", "use a .csv", recs_name="recs.xlsx"),
    Case("corrupt parquet", "cannot read", recs=b"PAR1 not really parquet", recs_name="recs.parquet"),
    Case("binary garbage csv", "not a text file", recs=bytes(range(256)) * 4),
    Case("latin-1 bytes in ids", "save the file as UTF-8", recs=RECS_CSV.encode().replace(b"\n2,", b"\n\xe9,")),
    Case("symlink to recs", P2, recs=("symlink", RECS_CSV)),
    Case("broken symlink", "not found", recs=("broken", None)),
    # ---- columns and types ------------------------------------------------------------------
    Case("missing user column", "missing column 'user_id'", recs=RECS_CSV.replace("user_id", "uid")),
    Case("missing item column", "missing column 'item_id'", truth=TRUTH_CSV.replace("item_id", "iid")),
    Case("renamed columns named", P2, recs=RECS_CSV.replace("user_id", "uid").replace("item_id", "iid"),
         truth=TRUTH_CSV.replace("user_id", "uid").replace("item_id", "iid"), opts={"user_col": "uid", "item_col": "iid"}),
    Case("spaces around header names", "missing column", recs=RECS_CSV.replace("user_id,item_id", " user_id , item_id ")),
    Case("duplicate header names, sep given", "repeats the column name", recs=RECS_CSV.replace("item_id,score", "item_id,item_id"), opts={"sep": ","}),
    Case("duplicate header names", "repeats the column name 'item_id'", recs=RECS_CSV.replace("item_id,score", "item_id,item_id")),
    Case("no score nor rank", "neither a score column", recs=RECS_CSV.replace("score", "prediction")),
    Case("score named", P2, recs=RECS_CSV.replace("score", "prediction"), opts={"score_col": "prediction"}),
    Case("input order asked", P2, recs=RECS_CSV.replace("score", "prediction"), opts={"order": "input"}),
    Case("text scores", "not a number (row 1: 'high')", recs=_rows(RECS_CSV, **{"0.9": "high"})),
    Case("scores padded with spaces", P2, recs=_rows(RECS_CSV, **{"0.9": " 0.9 "})),
    Case("nan score", "NaN or infinite", recs=_rows(RECS_CSV, **{"0.9": "nan"})),
    Case("inf score", "NaN or infinite", recs=_rows(RECS_CSV, **{"0.9": "inf"})),
    Case("empty score cell", "missing", recs=_rows(RECS_CSV, **{"0.9": ""})),
    Case("empty user cell", "1 missing ids; drop those rows", recs=_rows(RECS_CSV, **{"\n2,40": "\n,40"})),
    Case("empty item cell", "1 missing ids; drop those rows", recs=_rows(RECS_CSV, **{",40,": ",,"})),
    Case("empty truth user cell", "1 missing ids; drop those rows", truth=_rows(TRUTH_CSV, **{"\n2,": "\n,"})),
    Case("text rating", "not a number (row 1: 'five')", truth=_rows(TRUTH_CSV, **{",5\n": ",five\n"})),
    Case("empty rating cell", "missing", truth=_rows(TRUTH_CSV, **{",5\n": ",\n"})),
    Case("rank only", P2, recs="user_id,item_id,rank\n1,10,1\n1,20,2\n1,30,3\n2,10,1\n2,40,2\n"),
    Case("rank only, replay@0.22 dialect", P2, recs="user_id,item_id,rank\n1,10,1\n1,20,2\n1,30,3\n2,10,1\n2,40,2\n",
         opts={"dialect": "replay@0.22"}),
    Case("fractional ranks", "not whole numbers", recs="user_id,item_id,rank\n1,10,1.5\n1,20,2\n1,30,3\n2,10,1\n2,40,2\n"),
    Case("rank 0", ">= 1", recs="user_id,item_id,rank\n1,10,0\n1,20,2\n1,30,3\n2,10,1\n2,40,2\n"),
    Case("negative rank", ">= 1", recs="user_id,item_id,rank\n1,10,-1\n1,20,2\n1,30,3\n2,10,1\n2,40,2\n"),
    Case("equal ranks", "same rank", recs="user_id,item_id,rank\n1,10,1\n1,20,1\n1,30,3\n2,10,1\n2,40,2\n"),
    Case("text ranks", "not a number (row 1: 'a')", recs="user_id,item_id,rank\n1,10,a\n1,20,b\n1,30,c\n2,10,a\n2,40,b\n"),
    Case("duplicate recommendations", "dup='first'", recs=RECS_CSV + "1,20,0.1\n"),
    Case("duplicates kept first", P2, recs=RECS_CSV + "1,20,0.1\n", opts={"dup": "first"}),
    Case("duplicate truth", "tdup='first'", truth=TRUTH_CSV + "1,20,4\n"),
    Case("threshold without ratings", "needs a rating column", truth="user_id,item_id\n1,20\n1,30\n2,40\n", opts={"rel": "4"}),
    Case("no rating column", P2, truth="user_id,item_id\n1,20\n1,30\n2,40\n"),
    # CSV ids are text: "1" is not "u1", so no user is in both inputs: refused with examples and the fix
    Case("int vs string ids", "prefix 'u'", truth=_rows(TRUTH_CSV, **{"\n1,": "\nu1,", "\n2,": "\nu2,"})),
    Case("users only in recs", 0.5 / 1, truth="user_id,item_id,rating\n1,20,5\n"),
    Case("no user in common", "no user is in common", truth="user_id,item_id,rating\n9,20,5\n"),
    # ---- options ----------------------------------------------------------------------------
    Case("recall", R2, metrics=["recall@2"]),
    Case("ndcg", N3, metrics=["ndcg@3"]),
    Case("threshold 4", 1.0, metrics=["recall@2"], opts={"rel": "4"}),
    Case("threshold >=4", 1.0, metrics=["recall@2"], opts={"rel": ">=4"}),
    Case("strict threshold >4", 1.0, metrics=["recall@2"], opts={"rel": ">4"}),  # user 2 (rating 4) has none: skipped
    Case("strict threshold >3 keeps 4", 1.0, metrics=["recall@2"], opts={"rel": ">3"}),
    Case("threshold leaving no relevant row", "no user left to average", metrics=["recall@2"], opts={"rel": "6"}),
    Case("threshold text", "`rel` must be a number", opts={"rel": "high"}),
    Case("threshold nan", "finite", opts={"rel": "nan"}),
    Case("unknown tie rule", "unknown value", opts={"ties": "random"}),
    Case("unknown order", "unknown value", opts={"order": "best"}),
    Case("unknown dup", "unknown value", opts={"dup": "drop"}),
    Case("unknown metric", "did you mean 'ndcg'", metrics=["ndgc@3"]),
    Case("k zero", "`k` must be an integer >= 1", metrics=["ndcg@0"]),
    Case("k negative", "`k` must be an integer >= 1", metrics=["ndcg@-1"]),
    Case("k text", "`k` must be an integer >= 1", metrics=["ndcg@ten"]),
    Case("k float", "`k` must be an integer >= 1", metrics=["ndcg@2.5"]),
    Case("k 1e9", N3, metrics=["ndcg@1000000000"]),
    Case("missing k", "needs a cut-off", metrics=["f1"]),
    Case("unknown option", "has no option", metrics=["ndcg(gian=linear)@3"]),
    Case("option without value", "key=value", metrics=["ndcg(linear)@3"]),
    Case("option twice", "given twice", metrics=["ndcg(gain=linear,gain=exp2)@3"]),
    Case("empty metric", "cannot parse", metrics=[""]),
    Case("unbalanced spec", "cannot parse", metrics=["ndcg(gain=linear@3"]),
    Case("graded gain", N3_LIN, metrics=["ndcg(gain=linear)@3"]),
    # rel=all: the negative rating is relevant, and a graded gain must be told what to do with it
    Case("negative ratings refused", "neg=zero", metrics=["ndcg(gain=linear)@3"], truth="user_id,item_id,rating\n1,20,5\n1,30,-3\n2,40,4\n",
         opts={"rel": "all"}),
    # the default rel:>0 (a rating column): the -3 row is not relevant, so no gain is negative
    Case("negative ratings not relevant by default", (5 * L(2) / (5 * L(1)) + L(2) / L(1)) / 2, metrics=["ndcg(gain=linear)@3"],
         truth="user_id,item_id,rating\n1,20,5\n1,30,-3\n2,40,4\n"),
    # ratings 5, -3 -> gains 5, 0: DCG 5 L(2), ideal 5 L(1); user 2 as before
    Case("negative ratings clipped", (5 * L(2) / (5 * L(1)) + L(2)) / 2, metrics=["ndcg(gain=linear,neg=zero)@3"],
         truth="user_id,item_id,rating\n1,20,5\n1,30,-3\n2,40,4\n", opts={"rel": "all"}),
    Case("negative ratings, binary gain", N3, metrics=["ndcg@3"], truth="user_id,item_id,rating\n1,20,5\n1,30,-3\n2,40,4\n",
         opts={"rel": "all"}),
    Case("negative ratings, binary gain, default rel", L(2) / L(1), metrics=["ndcg@3"],
         truth="user_id,item_id,rating\n1,20,5\n1,30,-3\n2,40,4\n"),
    Case("unknown dialect", "unknown dialect", opts={"dialect": "nodialect"}),
    Case("dialect without the metric", "has no metric", metrics=["precision@2"], opts={"dialect": "openrec"}),
    Case("empty policy error", "empty='skip'", metrics=["recall@2"], opts={"rel": "5", "empty": "error"}),
    Case("norecs policy error", "norecs='zero'", truth=TRUTH_CSV + "3,50,5\n", opts={"norecs": "error"}),
    Case("norecs zero", (0.5 + 0.5 + 0.0) / 3, truth=TRUTH_CSV + "3,50,5\n"),
    Case("polars engine", P2, opts={"engine": "polars"}),
    Case("polars engine, semicolon", "--sep ';'", recs=RECS_CSV.replace(",", ";"), opts={"engine": "polars"}),
    # ---- side inputs ------------------------------------------------------------------------
    Case("categories", 1.0, metrics=["ild@2"], extra={"categories": ("cats.csv", "item_id,category\n10,a\n20,b\n30,a\n40,b\n")}),
    Case("categories empty cell", "empty 'category'", metrics=["ild@2"],
         extra={"categories": ("cats.csv", "item_id,category\n10,a\n20,\n30,a\n40,b\n")}),
    Case("categories missing column", "missing column", metrics=["ild@2"], extra={"categories": ("cats.csv", "item_id,genre\n10,a\n")}),
    Case("categories semicolon", "--sep ';'", metrics=["ild@2"], extra={"categories": ("cats.csv", "item_id;category\n10;a\n")}),
    Case("categories header only", "has a header", metrics=["ild@2"], extra={"categories": ("cats.csv", "item_id,category\n")}),
    Case("train header only", "has a header", metrics=["novelty@2"], extra={"train": ("train.csv", "user_id,item_id\n")}),
    Case("catalog directory", "is a directory", metrics=["coverage@2"], extra={"catalog": ("catdir", None)}),
]


def _write(path: Path, content: Any) -> Path:
    if isinstance(content, tuple):
        kind, value = content
        if kind == "dir":
            path.mkdir()
        elif kind == "missing":
            pass
        elif kind == "parquet":
            import io

            pl.read_csv(io.StringIO(value)).write_parquet(path)
        elif kind == "symlink":
            target = path.with_name("target-" + path.name)
            target.write_text(value, encoding="utf-8")
            path.symlink_to(target)
        elif kind == "broken":
            path.symlink_to(path.with_name("nowhere-" + path.name))
        return path
    if content is None:
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_bytes(content.encode("utf-8"))
    return path


def _files(case: Case, tmp: Path) -> tuple[str, str, dict[str, str]]:
    recs = _write(tmp / case.recs_name, case.recs)
    truth = _write(tmp / case.truth_name, case.truth)
    extra = {opt: str(_write(tmp / name, content)) for opt, (name, content) in case.extra.items()}
    return str(recs), str(truth), extra


def _check_error(msg: str, want: str) -> None:
    assert "\n" not in msg.strip(), f"not one line: {msg!r}"
    assert "Traceback" not in msg
    assert want in msg, (want, msg)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_api(case, tmp_path):
    recs, truth, extra = _files(case, tmp_path)
    if isinstance(case.want, str):
        with pytest.raises(RecevalError) as exc:
            receval.evaluate(recs, truth, case.metrics, **case.opts, **extra)
        _check_error(str(exc.value), case.want)
        return
    res = receval.evaluate(recs, truth, case.metrics, **case.opts, **extra)
    assert res.values[res.keys()[0]] == pytest.approx(case.want, abs=1e-12)
    for sig in res.signatures.values():  # every signature parses back
        receval.parse_signature(sig)


def _argv(case: Case, recs: str, truth: str, extra: dict[str, str]) -> list[str]:
    argv = ["evaluate", recs, truth, "--format", "json"]
    for m in case.metrics:
        argv += ["-m", m]
    for key, value in {**case.opts, **extra}.items():
        argv += [f"--{key.replace('_', '-')}", str(value)]
    return argv


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_cli(case, tmp_path, capsys):
    recs, truth, extra = _files(case, tmp_path)
    code = main(_argv(case, recs, truth, extra))
    out, err = capsys.readouterr()
    if isinstance(case.want, str):
        assert code == 2, (code, out, err)
        assert err.startswith("receval: error: ")
        _check_error(err, case.want)
        return
    assert code == 0, err
    doc = json.loads(out)
    assert doc["results"][0]["value"] == pytest.approx(case.want, abs=1e-12)


def test_corpus_size():
    assert len(CASES) >= 120


# ---- in-memory inputs and Python option values (API) -----------------------------------------

R = {"user_id": [1, 1, 1, 2, 2], "item_id": [10, 20, 30, 10, 40], "score": [0.9, 0.8, 0.7, 0.5, 0.4]}
T = {"user_id": [1, 1, 2], "item_id": [20, 30, 40], "rating": [5.0, 3.0, 4.0]}

API_CASES: list[tuple[str, dict[str, Any], float | str]] = [
    ("dict columns", {}, P2),
    ("pandas", {"recs": pd.DataFrame(R), "truth": pd.DataFrame(T)}, P2),
    ("pandas categorical ids", {"recs": pd.DataFrame(R).astype({"item_id": "category"}),
                                "truth": pd.DataFrame(T).astype({"item_id": "category"})}, P2),
    ("pandas nullable ids with NA", {"recs": pd.DataFrame(R).astype({"item_id": "Int64"}).mask(pd.DataFrame(R)["score"] < 0.45)}, "missing ids"),
    ("pandas object ids mixing int and str", {"recs": pd.DataFrame({**R, "item_id": [10, "20", 30, 10, 40]})}, "astype(str)"),
    ("polars lazy", {"recs": pl.LazyFrame(R)}, P2),
    ("pyarrow", {"recs": pa.table(R), "truth": pa.table(T)}, P2),
    ("dict of dicts", {"recs": {"1": {"10": 0.9, "20": 0.8, "30": 0.7}, "2": {"10": 0.5, "40": 0.4}},
                       "truth": {"1": {"20": 5, "30": 3}, "2": {"40": 4}}}, P2),
    ("uint64 ids", {"recs": pl.DataFrame(R).with_columns(pl.col("user_id").cast(pl.UInt64) + 2**63),
                    "truth": pl.DataFrame(T).with_columns(pl.col("user_id").cast(pl.UInt64) + 2**63)}, P2),
    ("float ids", {"recs": {**R, "user_id": [1.0, 1.0, 1.0, 2.0, 2.0]}}, "ids must be integers or strings"),
    ("nan user id", {"recs": {**R, "user_id": [1.0, 1.0, 1.0, 2.0, float("nan")]}}, "NaN"),
    ("date ids", {"recs": pl.DataFrame(R).with_columns(pl.col("item_id").cast(pl.Date))}, "ids must be integers or strings"),
    ("decimal scores", {"recs": pl.DataFrame(R).with_columns(pl.col("score").cast(pl.Decimal(10, 2)))}, P2),
    # True > False: user 1 ranks 10, then 20 and 30 in input order; user 2 ranks 10, 40
    ("bool scores", {"recs": {**R, "score": [True, False, False, True, False]}}, P2),
    ("list column scores", {"recs": pl.DataFrame(R).with_columns(pl.col("score").map_elements(lambda v: [v], return_dtype=pl.List(pl.Float64)))}, "type"),
    ("unequal column lengths", {"recs": {**R, "score": [0.9]}}, "does not match height"),
    ("recs None", {"recs": None}, "cannot read"),
    ("recs int", {"recs": 5}, "cannot read"),
    ("recs list of dicts", {"recs": [{"user_id": 1}]}, "cannot read"),
    ("recs numpy array", {"recs": np.zeros((2, 3))}, "cannot read"),
    ("metrics None", {"metrics": None}, "no metric given"),
    ("metrics int", {"metrics": 5}, "metric string"),
    ("metrics empty", {"metrics": []}, "no metric given"),
    ("metrics list with None", {"metrics": ["ndcg@3", None]}, "metric must be a string"),
    ("metrics list with int", {"metrics": [3]}, "metric must be a string"),
    ("dialect int", {"dialect": 5}, "dialect must be a name"),
    ("dialect object", {"dialect": object()}, "dialect must be a name"),
    ("engine unknown", {"engine": "gpu"}, "unknown engine"),
    ("dup True", {"dup": True}, "option `dup` takes a name"),
    ("ties int", {"ties": 3}, "option `ties` takes a name"),
    ("order None", {"order": None}, "option `order` takes a name"),
    ("empty int", {"empty": 0}, "option `empty` takes a name"),
    ("rel bool", {"rel": True}, "`rel` must be a number"),
    ("rel list", {"rel": [4]}, "`rel` must be a number"),
    ("rel nan", {"rel": float("nan")}, "finite"),
    ("rel inf", {"rel": float("inf")}, "finite"),
    ("rel numpy float", {"rel": np.float64(4.0), "metrics": ["recall@2"]}, 1.0),
    ("rel strict", {"rel": ">4", "metrics": ["recall@2"]}, 1.0),
    ("order upper case", {"order": "SCORE"}, P2),
    ("sep int", {"sep": 5}, "`sep` must be one character"),
    ("spec object", {"metrics": [Spec("precision", 2)]}, P2),
    ("spec with bool option", {"metrics": [Spec("precision", 2, (("dup", True),))]}, "option `dup` takes a name"),
    ("spec with int option", {"metrics": [Spec("ndcg", 3, (("ties", 3),))]}, "option `ties` takes a name"),
    ("spec with k 0", {"metrics": [Spec("ndcg", 0)]}, "`k` must be an integer >= 1"),
    ("spec with k True", {"metrics": [Spec("ndcg", True)]}, "`k` must be an integer >= 1"),  # type: ignore[arg-type]
    ("spec without k", {"metrics": [Spec("f1")]}, "needs a cut-off"),
    ("spec with int name", {"metrics": [Spec(3, 2)]}, "metric name must be a string"),  # type: ignore[arg-type]
    ("spec with unknown option", {"metrics": [Spec("ndcg", 3, (("gian", "linear"),))]}, "has no option"),
    ("spec with graded gain", {"metrics": [Spec("ndcg", 3, (("gain", "LINEAR"),))]}, N3_LIN),
]


@pytest.mark.parametrize("name,kw,want", API_CASES, ids=[c[0] for c in API_CASES])
def test_api_values(name, kw, want):
    kw = dict(kw)
    recs, truth, metrics = kw.pop("recs", R), kw.pop("truth", T), kw.pop("metrics", ["precision@2"])
    if isinstance(want, str):
        with pytest.raises(RecevalError) as exc:
            receval.evaluate(recs, truth, metrics, **kw)
        _check_error(str(exc.value), want)
        return
    res = receval.evaluate(recs, truth, metrics, **kw)
    assert res.values[res.keys()[0]] == pytest.approx(want, abs=1e-12)
    for sig in res.signatures.values():
        spec, _, _ = receval.parse_signature(sig)
        assert str(spec)  # parses back to a spec


# ---- outputs: nothing replaced or deleted unasked ---------------------------------------------


@pytest.fixture
def inputs(tmp_path):
    (tmp_path / "r.csv").write_text(RECS_CSV)
    (tmp_path / "t.csv").write_text(TRUTH_CSV)
    return tmp_path


def _cli(tmp: Path, *extra: str, capsys) -> tuple[int, str]:
    code = main(["evaluate", str(tmp / "r.csv"), str(tmp / "t.csv"), "-m", "precision@2", "--format", "json", *extra])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("name", ["r.csv", "t.csv"])
@pytest.mark.parametrize("force", [False, True])
def test_per_user_never_overwrites_an_input(inputs, capsys, name, force):
    before = (inputs / name).read_bytes()
    code, err = _cli(inputs, "--per-user", str(inputs / name), *(["--force"] if force else []), capsys=capsys)
    assert code == 2 and "is one of the inputs" in err and err.count("\n") == 1
    assert (inputs / name).read_bytes() == before


def test_per_user_input_through_a_symlink(inputs, capsys):
    (inputs / "link.csv").symlink_to(inputs / "t.csv")
    before = (inputs / "t.csv").read_bytes()
    code, err = _cli(inputs, "--per-user", str(inputs / "link.csv"), "--force", capsys=capsys)
    assert code == 2 and "is one of the inputs" in err
    assert (inputs / "t.csv").read_bytes() == before


def test_per_user_existing_file_needs_force(inputs, capsys):
    out = inputs / "pu.csv"
    out.write_text("precious\n")
    code, err = _cli(inputs, "--per-user", str(out), capsys=capsys)
    assert code == 2 and "already exists" in err and "--force" in err
    assert out.read_text() == "precious\n"
    code, err = _cli(inputs, "--per-user", str(out), "--force", capsys=capsys)
    assert code == 0, err
    assert pl.read_csv(out)["precision@2"].to_list() == [0.5, 0.5]


@pytest.mark.parametrize("suffix,read", [
    (".csv", pl.read_csv), (".tsv", lambda p: pl.read_csv(p, separator="\t")), (".parquet", pl.read_parquet),
    (".pq", pl.read_parquet), (".json", pl.read_json),
])
def test_per_user_format_follows_the_extension(inputs, capsys, suffix, read):
    out = inputs / f"pu{suffix}"
    code, err = _cli(inputs, "--per-user", str(out), capsys=capsys)
    assert code == 0, err
    frame = read(out)
    assert frame["user_id"].to_list() == [1, 2]
    assert frame["precision@2"].to_list() == [0.5, 0.5]


@pytest.mark.parametrize("target,fragment", [
    ("pu.txt", "from its extension"), ("pu", "from its extension"), ("nodir/pu.csv", "does not exist"), ("adir.csv", "is a directory"),
])
def test_per_user_bad_targets(inputs, capsys, target, fragment):
    (inputs / "adir.csv").mkdir()
    code, err = _cli(inputs, "--per-user", str(inputs / target), capsys=capsys)
    assert code == 2 and fragment in err and err.count("\n") == 1
    assert not (inputs / "pu.txt").exists() and not (inputs / "nodir").exists()


def test_per_user_checked_before_the_work(inputs, capsys):
    """A refused output is refused before anything is read: a bad input is not even reported."""
    (inputs / "pu.csv").write_text("x\n")
    code = main(["evaluate", str(inputs / "nope.csv"), str(inputs / "t.csv"), "-m", "precision@2", "--per-user", str(inputs / "pu.csv")])
    assert code == 2 and "already exists" in capsys.readouterr().err


def test_api_writer_overwrite_parameter(tmp_path):
    res = receval.evaluate(R, T, ["precision@2"])
    out = tmp_path / "pu.json"
    res.write_per_user(str(out))
    first = out.read_bytes()
    with pytest.raises(RecevalError, match="already exists"):
        res.write_per_user(str(out))
    assert out.read_bytes() == first
    res.write_per_user(str(out), overwrite=True)
    assert json.loads(out.read_text())[0] == {"user_id": 1, "precision@2": 0.5}
    with pytest.raises(RecevalError, match="extension"):
        res.write_per_user(str(tmp_path / "pu.xlsx"))


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes into read-only folders")
def test_per_user_read_only_folder(inputs, capsys):
    ro = inputs / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        code, err = _cli(inputs, "--per-user", str(ro / "pu.csv"), capsys=capsys)
        assert code == 2 and err.count("\n") == 1
    finally:
        ro.chmod(0o700)


# =============================================================================================
# Adversarial inputs, round 2: user text in the renderers, the messages, the environment, and
# the memory of the aspect metrics. Every case: the right output, or one line and exit 2 (CLI) /
# a RecevalError (API); never a traceback.
# =============================================================================================




#: run names that carry the specials of every format a name reaches: matplotlib mathtext ($),
#: Markdown (| * _ ` [ ] #), line breaks, LaTeX (& % _ # { } ~ ^ \), HTML (< > &), rich markup
NAMES = ["a$b$", "$x", "$_$", "$\\frac$", "a|b", "a\nb", "a\r\nb", "x[/b]", "[bold]y", "a&b%_#", "<i>&amp;",
         "`tick` *x*", "a\\b{c}~^", "q|w\n$e$ & %", "_base"]
METRICS2 = ["ndcg@1", "ndcg@2"]


def _comparison(first: str, metrics: list[str] = METRICS2):
    pu = {first: {m: np.array([1.0, 0.5, 0.0, 1.0, 0.2]) for m in metrics},
          "other": {m: np.array([0.0, 0.5, 0.1, 0.0, 0.2]) for m in metrics}}
    return stats_compare(pu, test="t", correction="none", ci="t", progress=False)


def _md_cells(line: str) -> list[str]:
    """A Markdown table row's cells (split at the pipes no backslash escapes)."""
    cells, cur, i = [], "", 0
    while i < len(line):
        ch = line[i]
        if ch == "\\" and i + 1 < len(line):
            cur += line[i: i + 2]
            i += 2
            continue
        if ch == "|":
            cells.append(cur)
            cur = ""
        else:
            cur += ch
        i += 1
    return cells[1:]  # the text before the first pipe


def _md_text(cell: str) -> str:
    """What Markdown shows of an escaped cell."""
    cell = cell.strip().replace("<br>", "\n")
    cell = re.sub(r"\\(.)", r"\1", cell)
    return _html.unescape(cell)


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.cells, self._td = [], [], None

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag in ("td", "th"):
            self._td = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._td is not None:
            self.cells.append(self._td)
            self._td = None

    def handle_data(self, data):
        if self._td is not None:
            self._td += data


HTML_TAGS = {"html", "head", "meta", "title", "style", "body", "table", "caption", "thead", "tbody", "tr", "th", "td",
             "sup", "span", "div", "p"}


@pytest.mark.parametrize("name", NAMES, ids=[repr(n) for n in NAMES])
def test_run_names_render_as_written_in_every_table(name):
    cmp = _comparison(name)
    # Markdown: every row one line with its cells; the name reads back as written
    md = render_table(cmp, "markdown")
    rows = [ln for ln in md.splitlines() if ln.startswith("|")]
    assert len(rows) == 2 + 2, md
    assert all(len(_md_cells(r)) == 1 + len(METRICS2) for r in rows), md
    assert _md_text(_md_cells(rows[2])[0]) == f"{name.replace(chr(13) + chr(10), chr(10))} (a)"  # a line break shown as one
    assert all(ln.startswith(("- `", "- ``")) for ln in md.splitlines() if ln.startswith("- "))
    pairs = [ln for ln in render_pairs(cmp, "markdown").splitlines() if ln.startswith("|")]
    assert all(len(_md_cells(r)) == 15 for r in pairs) and _md_text(_md_cells(pairs[2])[1]) == name.replace("\r\n", "\n")
    # LaTeX: each row one line, its cells split only at the column separators, no special unescaped
    tex = render_table(cmp, "latex")
    row = next(ln for ln in tex.splitlines() if r"\textsuperscript{(a)}" in ln)
    assert row.endswith(r"\\") and len(re.findall(r"(?<!\\)&", row)) == len(METRICS2)
    shown = row.split(r"\textsuperscript{(a)}")[0]
    assert not re.search(r"(?<!\\)[&%$#_{}]", shown.replace(r"\textbackslash{}", "").replace(r"\textasciitilde{}", "")
                         .replace(r"\textasciicircum{}", "").replace(r"\textbar{}", "").replace(r"\textless{}", "")
                         .replace(r"\textgreater{}", "")), row
    ptex = [ln for ln in render_pairs(cmp, "latex").splitlines() if ln.startswith("ndcg@")]
    # the compact pair table: only the columns that vary (issue 34), the same count on every row
    head = next(ln for ln in render_pairs(cmp, "latex").splitlines() if ln.startswith("Metric") or ln.startswith("metric"))
    assert len(ptex) == 2 and {len(re.findall(r"(?<!\\)&", ln)) for ln in ptex} == {len(re.findall(r"(?<!\\)&", head))}
    # HTML: no tag from the name, the cell reads the name
    for doc in (render_table(cmp, "html"), render_pairs(cmp, "html")):
        p = _Tags()
        p.feed(doc)
        assert set(p.tags) <= HTML_TAGS, p.tags
        assert any(name in c for c in p.cells), p.cells
    # the terminal (rich markup in a name is text), CSV and JSON read back
    assert name.splitlines()[0] in render_table(cmp, "table")
    assert name.splitlines()[0] in render_pairs(cmp, "table")
    assert next(csv.reader(_io.StringIO(render_table(cmp, "csv").split("\n", 1)[1])))[0] == name
    assert json.loads(render_table(cmp, "json"))["runs"][0] == name


@pytest.mark.parametrize("metric", ["m|x@3", "m\nx@3", "m$x$@3", "[/m]@3", "m&%_#@3", "<b>@3"])
def test_metric_names_render_as_written(metric):
    cmp = _comparison("a", [metric])
    md = render_table(cmp, "markdown")
    header = md.splitlines()[0]
    assert len(_md_cells(header)) == 2 and _md_text(_md_cells(header)[1]) == metric
    assert all("\n" not in ln for ln in md.splitlines())
    assert render_table(cmp, "table") and render_pairs(cmp, "table")
    tex = render_table(cmp, "latex")
    head = next(ln for ln in tex.splitlines() if ln.startswith("Run & "))
    assert len(re.findall(r"(?<!\\)&", head)) == 1
    p = _Tags()
    p.feed(render_table(cmp, "html"))
    assert set(p.tags) <= HTML_TAGS


def _texts_are_literal(fig) -> list[str]:
    """Draw ``fig`` and return its texts; none may be read as mathtext."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.text import Text

    FigureCanvasAgg(fig).draw()
    shown = []
    for t in fig.findobj(Text):
        s = t.get_text()
        if s:
            assert not t._preprocess_math(s)[1], f"read as mathtext: {s!r}"
            shown.append(t._preprocess_math(s)[0].removeprefix("\u200b"))  # a leading "_" is kept in legends
    return shown


@pytest.mark.parametrize("name", NAMES, ids=[repr(n) for n in NAMES])
def test_run_names_draw_as_written_in_every_figure(name):
    from receval.figures import plot_differences, plot_metric_at_k, plot_per_user

    cmp = _comparison(name)
    cmp.per_user = {r: {m: np.linspace(0, 1, 5) for m in cmp.metrics} for r in cmp.runs}
    fig = plot_metric_at_k(cmp)
    shown = _texts_are_literal(fig)
    assert name in shown and len(fig.legends[0].texts) == 2  # the legend entry, exactly; every run has one
    _texts_are_literal(plot_per_user(cmp, metric="ndcg@1"))
    _texts_are_literal(plot_per_user(cmp, metric="ndcg@1", kind="ecdf"))
    _texts_are_literal(plot_differences(cmp))


@pytest.fixture
def runs_files(tmp_path):
    (tmp_path / "t.csv").write_text(TRUTH_CSV)
    (tmp_path / "r.csv").write_text(RECS_CSV)
    (tmp_path / "r2.csv").write_text("user_id,item_id,score\n1,20,0.9\n1,10,0.8\n2,40,0.5\n")
    return tmp_path


@pytest.mark.parametrize("name", ["a$b$", "$x", "$_$", "a|b\nc", "x[/b]"])
def test_cli_runs_with_awkward_names(runs_files, capsys, name):
    d = runs_files
    argv = ["runs", str(d / "t.csv"), f"{name}={d / 'r.csv'}", f"b={d / 'r2.csv'}", "-m", "ndcg@[1,2]", "--ci", "t",
            "--format", "markdown", "--figure", f"at-k={d / 'k.png'}", "--figure", f"differences={d / 'd.svg'}",
            "--figure", f"users={d / 'u.pdf'}"]
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 0, err
    assert all((d / f).stat().st_size > 1000 for f in ("k.png", "d.svg", "u.pdf"))
    rows = [ln for ln in out.splitlines() if ln.startswith("| ") and "(a)" in ln]
    assert len(rows) == 1 and len(_md_cells(rows[0])) == 3
    assert main(argv[:8] + ["--format", "table"]) == 0  # rich markup in a name is text
    assert "Traceback" not in capsys.readouterr().err


# ---- messages --------------------------------------------------------------------------------

ARG_ERRORS = [
    (["evaluate"], "evaluate: the following arguments are required: recs, truth, -m/--metric"),
    (["evalute"], "invalid choice: 'evalute'"),
    ([], "the following arguments are required: command"),
    (["evaluate", "{r}", "{t}", "-m", "ndcg@3", "--format", "xml"], "argument --format: invalid choice: 'xml'"),
    (["evaluate", "{r}", "{t}", "-m"], "argument -m/--metric: expected one argument"),
    (["evaluate", "{r}", "{t}", "-m", "ndcg@3", "--bogus"], "unrecognized arguments: --bogus"),
    (["runs", "{t}", "a={r}", "-m", "ndcg@3", "--level", "high"], "argument --level: invalid float value: 'high'"),
    (["runs", "{t}", "a={r}", "-m", "ndcg@3", "--resamples", "1e3"], "argument --resamples: invalid int value: '1e3'"),
    (["compare", "{r}"], "compare: the following arguments are required: truth, -m/--metric"),
    (["explain"], "explain: the following arguments are required: spec"),
    (["reproduce", "--k", "ten"], "argument --k: invalid int value: 'ten'"),
    (["metrics", "--format", "pdf"], "invalid choice: 'pdf'"),
]


@pytest.mark.parametrize("argv,fragment", ARG_ERRORS, ids=[" ".join(a) or "(none)" for a, _ in ARG_ERRORS])
def test_argument_errors_are_one_line(inputs, capsys, argv, fragment):
    argv = [a.format(r=inputs / "r.csv", t=inputs / "t.csv") for a in argv]
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.startswith("receval: error: ") and err.count("\n") == 1, err
    assert "usage:" not in err and fragment in err, err


def test_help_still_prints_usage(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["evaluate", "--help"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.startswith("usage: receval evaluate")


LONG = "x" * 100_000
ECHOES = [
    (["evaluate", "{r}", "{t}", "-m", LONG], "unknown metric 'xxx"),
    (["evaluate", "{r}", "{t}", "-m", "ndcg(" + LONG + "=1)@3"], "has no option"),
    (["evaluate", "{r}", "{t}", "-m", "ndcg@3(" + "(" * 50_000], "`k` must be an integer >= 1"),
    (["evaluate", "{r}", "{t}", "-m", "x y " * 25_000], "cannot parse metric"),
    (["evaluate", "{r}", "{t}", "-m", "ndcg@3", "--dialect", LONG], "unknown dialect"),
    (["explain", LONG], "unknown metric"),
    (["compare", "{r}", "{t}", "-m", LONG], "unknown metric"),
    (["runs", "{t}", LONG, "-m", "ndcg@3"], "a run is written NAME=FILE"),
    (["evaluate", "{r}", "{t}", "-m", "nd\ncg@3"], "cannot parse metric 'nd\\ncg@3'"),
]


@pytest.mark.parametrize("argv,fragment", ECHOES, ids=[f"echo-{i}" for i in range(len(ECHOES))])
def test_echoed_user_text_is_bounded(inputs, capsys, argv, fragment):
    argv = [a.format(r=inputs / "r.csv", t=inputs / "t.csv") if len(a) < 100 else a for a in argv]
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("receval: error: ") and err.count("\n") == 1, err[:300]
    assert len(err) <= 1100 and fragment in err, err[:300]


def test_compare_expands_a_list_of_cut_offs(inputs, capsys):
    r, t = str(inputs / "r.csv"), str(inputs / "t.csv")
    code = main(["compare", r, t, "-m", "ndcg@[1,3]", "--dialects", "standard", "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    got = json.loads(out)[0]["values"]
    want = receval.evaluate(r, t, ["ndcg@1", "ndcg@3"])
    assert got == {"ndcg@1": want["ndcg@1"], "ndcg@3": want["ndcg@3"]}
    from receval.compare import compare

    frame = compare(r, t, "map@[1,2]", dialects="standard")
    assert frame.columns[-2:] == ["map@1", "map@2"]


@pytest.mark.parametrize("spec,fragment", [("ndcg@[1,1]", "a cut-off is repeated"), ("ndcg@[]", "cannot read the cut-offs"),
                                           ("ndcg@[1,x]", "`k` must be an integer >= 1")])
def test_compare_refuses_a_bad_list_of_cut_offs(inputs, capsys, spec, fragment):
    code = main(["compare", str(inputs / "r.csv"), str(inputs / "t.csv"), "-m", spec])
    err = capsys.readouterr().err
    assert code == 2 and fragment in err and err.count("\n") == 1


def _deep(depth: int):
    v: Any = 1
    for _ in range(depth):
        v = [v]
    return v


API_CASES_2: list[tuple[str, dict[str, Any], str]] = [
    ("pandas sparse scores", {"recs": pd.DataFrame(R).astype({"score": pd.SparseDtype(float, 0.0)})},
     "column 'score' is sparse (Sparse[float64, 0.0]); make it dense first: df['score'] = df['score'].sparse.to_dense()"),
    ("pandas sparse ids", {"recs": pd.DataFrame(R).astype({"item_id": pd.SparseDtype(int, 0)})}, "column 'item_id' is sparse"),
    ("pandas sparse truth ratings", {"truth": pd.DataFrame(T).astype({"rating": pd.SparseDtype(float, 0.0)})},
     "ground truth pandas column 'rating' is sparse"),
    ("pandas complex scores", {"recs": pd.DataFrame({**R, "score": np.array(R["score"]) + 0j})},
     "column 'score' holds complex numbers (complex128)"),
    ("pandas complex ratings", {"truth": pd.DataFrame({**T, "rating": np.array(T["rating"]) + 1j})}, "np.real(df['rating'])"),
    ("pandas complex64 ids", {"recs": pd.DataFrame({**R, "user_id": np.array(R["user_id"], dtype=np.complex64)})},
     "column 'user_id' holds complex numbers"),
    ("pandas object column of lists", {"recs": pd.DataFrame({**R, "user_id": [[1]] * 5})}, "pandas column 'user_id' holds nested values"),
    ("pandas 2000-deep lists", {"recs": pd.DataFrame({**R, "item_id": [_deep(2000)] * 5})}, "holds nested values (row 0: [[[[...]]]])"),
    ("dict 4-deep lists", {"recs": {**R, "user_id": [[[[1]]]] * 5}}, "dict column 'user_id' holds nested values"),
    ("dict 3000-deep lists", {"recs": {**R, "user_id": [_deep(3000)] * 5}}, "flatten or explode the column first"),
    ("dict deep list in a later row", {"recs": {**R, "score": [0.9, 0.8, 0.7, 0.5, _deep(500)]}}, "(row 4: [[[[...]]]])"),
    ("dict cells of dicts", {"recs": {**R, "user_id": [{"a": {"b": 1}}] * 5}}, "holds nested values (row 0: {'a': {'b': 1}})"),
    ("dict cells of tuples", {"truth": {**T, "item_id": [(20, 1), (30, 1), (40, 1)]}}, "ground truth dict column 'item_id' holds nested"),
    ("dict 2-D numpy column", {"recs": {**R, "score": np.zeros((5, 2))}}, "is a 2-D array of shape (5, 2)"),
    ("pandas repeated column name", {"recs": pd.DataFrame([[1, 10, 0.9]], columns=["user_id", "item_id", "item_id"])},
     "the recommendations pandas frame repeats the column name 'item_id'; rename one of them"),
    ("dict of dicts, deep values", {"recs": {"1": {"10": 0.9, "20": _deep(3000)}}},
     "{qid: {docid: value}} dict's column 'score' holds nested values (row 1: [[[[...]]]])"),
    ("dict object array of arrays", {"recs": {**R, "score": np.array([np.zeros(2)] * 5 + [None], dtype=object)[:5]}}, "nested values"),
]


@pytest.mark.parametrize("name,kw,want", API_CASES_2, ids=[c[0] for c in API_CASES_2])
def test_api_frame_jargon_refused_in_one_line(name, kw, want):
    kw = dict(kw)
    recs, truth = kw.pop("recs", R), kw.pop("truth", T)
    with pytest.raises(RecevalError) as exc:
        receval.evaluate(recs, truth, ["precision@2"])
    _check_error(str(exc.value), want)
    assert len(str(exc.value)) < 300


def _ratings(tmp_path, text: str) -> str:
    p = tmp_path / "ratings.csv"
    p.write_text(text)
    return str(p)


@pytest.mark.parametrize("text,fragment,api_hint", [
    ("userId,movieId,rating,timestamp\n1,1,4.0,964982703\n1,3,4.0,964981247\n1,6,4.0", "pass a complete MovieLens release with --data",
     "random_split"),
    ("userId,movieId,rating,timestam", "with --data", "load_interactions"),
])
def test_reproduce_truncated_data_names_a_real_option(tmp_path, capsys, text, fragment, api_hint):
    from receval.cli import build_parser

    code = main(["reproduce", "--data", _ratings(tmp_path, text), "--out", str(tmp_path / "rep")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and fragment in err and api_hint not in err, err
    options = {o for a in build_parser()._subparsers._group_actions[0].choices["reproduce"]._actions for o in a.option_strings}
    assert set(re.findall(r"--[a-z][a-z-]*", err)) <= options


# ---- the environment (the installed entry point, in a subprocess) -------------------------------


def _receval(args: list[str], **env: str) -> subprocess.CompletedProcess:
    full = {**os.environ, **env}
    return subprocess.run([sys.executable, "-m", "receval.cli", *args], capture_output=True, timeout=300, env=full)


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_output_on_a_non_utf8_stdout(inputs, encoding):
    res = _receval(["explain", "alpha_ndcg@3"], PYTHONIOENCODING=encoding)
    assert res.returncode == 0 and b"Traceback" not in res.stderr, res.stderr.decode()[-500:]
    assert res.stdout.decode(encoding).startswith("alpha_ndcg@3  ?  ")  # '—' and 'α' replaced
    res = _receval(["runs", str(inputs / "t.csv"), f"a={inputs / 'r.csv'}", f"b={inputs / 'r.csv'}", "-m", "ndcg@2",
                    "--ci", "t"], PYTHONIOENCODING=encoding)
    assert res.returncode == 0 and b"Traceback" not in res.stderr, res.stderr.decode()[-500:]


def test_error_message_on_an_ascii_stderr(inputs):
    res = _receval(["evaluate", str(inputs / "r.csv"), str(inputs / "t.csv"), "-m", "ndcgα@3"], PYTHONIOENCODING="ascii:strict")
    err = res.stderr.decode("ascii")
    assert res.returncode == 2 and err.startswith("receval: error: cannot parse metric 'ndcg") and err.count("\n") == 1, err


@pytest.mark.parametrize("threads", ["0", "00", "+0"])
def test_polars_max_threads_zero(inputs, threads):
    res = _receval(["evaluate", str(inputs / "r.csv"), str(inputs / "t.csv"), "-m", "precision@2", "--format", "json"],
                   POLARS_MAX_THREADS=threads)
    err = res.stderr.decode()
    assert res.returncode == 0 and "Traceback" not in err and "panic" not in err.lower(), err[-500:]
    assert json.loads(res.stdout)["results"][0]["value"] == P2
    err = "".join(line for line in err.splitlines(keepends=True) if not line.startswith("receval: note: "))
    assert err == f"receval: warning: POLARS_MAX_THREADS={threads} is not a number of threads; ignored (polars uses " \
                  "every core; set it to 1 or more to limit them)\n"


def test_bad_mplbackend_still_writes_figures(inputs):
    out = inputs / "k.png"
    res = _receval(["runs", str(inputs / "t.csv"), f"a={inputs / 'r.csv'}", f"b={inputs / 'r.csv'}", "-m", "ndcg@[1,2]",
                    "--ci", "t", "--figure", f"at-k={out}"], MPLBACKEND="nonsense")
    assert res.returncode == 0 and b"Traceback" not in res.stderr, res.stderr.decode()[-800:]
    assert out.read_bytes()[:4] == b"\x89PNG"


# ---- α-nDCG / αβ-nDCG: memory follows the rows, values bit for bit ----------------------------
# the kernels as they were before their state moved to the (user, category) pairs that occur
# (users x categories dense arrays), kept verbatim to prove the values unchanged


def _old_greedy_ideal_sparse(
    cand_user: np.ndarray,
    cand_item: np.ndarray,
    cand_p: np.ndarray | None,
    indptr: np.ndarray,
    indices: np.ndarray,
    C: int,
    U: int,
    k: int,
    *,
    alpha: float,
    gamma: np.ndarray | None,
) -> np.ndarray:
    disc = ndeval_discount(k)
    idcg = np.zeros(U, dtype=np.float64)
    if cand_user.shape[0] == 0:
        return idcg
    rep, asp, deg = _expand(cand_item, indptr, indices)
    tc = rep  # triple -> candidate
    tkey = cand_user[rep] * C + asp  # triple -> flat (user, aspect)
    state = np.ones(U * C, dtype=np.float64)
    ab = cand_p is not None
    if ab:
        pg = cand_p[rep] * gamma[tkey]  # constant over steps: P(a|u,i) * gamma_a
        om = 1.0 - cand_p[rep]  # state multiplier when the candidate is picked
    one_minus_alpha = 1.0 - alpha
    # per-user segments (candidates are sorted by user)
    seg_user, seg_len = np.unique(cand_user, return_counts=True)
    n = cand_user.shape[0]
    tstart = np.cumsum(deg) - deg  # first triple of each candidate
    for j in range(k):
        if n == 0:
            break
        if ab:  # a gain's terms in ascending order (the rule of the kernels: A._fold_sorted)
            f = 1.0 - pg * state[tkey]
            o = np.lexsort((f, tc))
            gain = 1.0 - np.multiply.reduceat(f[o], tstart)
        else:
            v = state[tkey]
            o = np.lexsort((v, tc))
            gain = np.bincount(tc[o], weights=v[o], minlength=n)
        seg_starts = np.cumsum(seg_len) - seg_len
        gmax, pick = _segment_argmax_last(gain, seg_starts, seg_len)
        idcg[seg_user] += gmax * disc[j]
        if j == k - 1:
            break
        picked = np.zeros(n, dtype=bool)
        picked[pick] = True
        tp = picked[tc]
        if ab:
            state[tkey[tp]] *= om[tp]
        else:
            state[tkey[tp]] *= one_minus_alpha
        # compact: drop picked candidates and exhausted users
        keep = ~picked
        tkeep = ~tp
        newidx = np.cumsum(keep) - 1
        tc = newidx[tc[tkeep]]
        tkey = tkey[tkeep]
        if ab:
            pg = pg[tkeep]
            om = om[tkeep]
        deg = deg[keep]
        tstart = np.cumsum(deg) - deg
        n = deg.shape[0]
        seg_len = seg_len - 1
        alive = seg_len > 0
        seg_len = seg_len[alive]
        seg_user = seg_user[alive]
    return idcg


def _old_greedy_ideal(
    cand_user: np.ndarray,
    cand_item: np.ndarray,
    cand_p: np.ndarray | None,
    indptr: np.ndarray,
    indices: np.ndarray,
    C: int,
    U: int,
    k: int,
    *,
    alpha: float,
    gamma: np.ndarray | None,
) -> np.ndarray:
    disc = ndeval_discount(k)
    idcg = np.zeros(U, dtype=np.float64)
    n = cand_user.shape[0]
    if n == 0:
        return idcg
    ideg = np.diff(indptr)
    degc = ideg[cand_item]
    nu = np.bincount(cand_user, minlength=U)
    disc = np.concatenate((disc, np.zeros(min(int(nu.max()), _WCAP) + 1)))  # ranks past k weigh 0
    slow = nu > _WCAP
    if int(degc.max()) > _DCAP:
        slow[cand_user[degc > _DCAP]] = True
    if slow.any():
        sm = slow[cand_user]
        idcg_slow = _old_greedy_ideal_sparse(
            cand_user[sm], cand_item[sm], None if cand_p is None else cand_p[sm],
            indptr, indices, C, U, k, alpha=alpha, gamma=gamma,
        )
        if sm.all():
            return idcg_slow
        fm = ~sm
        cand_user, cand_item, degc = cand_user[fm], cand_item[fm], degc[fm]
        if cand_p is not None:
            cand_p = cand_p[fm]
        nu = np.where(slow, 0, nu)
        idcg = idcg_slow
    cstart = np.cumsum(nu) - nu
    n = cand_user.shape[0]
    D = int(degc.max())
    # state row per user: C aspects + one dummy slot C that padded aspects read
    # (alpha: weight 0; alpha-beta: P gamma = 0, so the factor is exactly 1)
    C1 = C + 1
    itab = _aspect_table(indptr, indices, D, C)
    base = cand_user * C1
    Kc = np.empty((D, n), dtype=np.int64)
    for t in range(D):
        np.add(base, itab[t].take(cand_item), out=Kc[t])
    ab = cand_p is not None
    state = np.ones(U * C1, dtype=np.float64)
    if ab:
        gext = np.zeros((U, C1), dtype=np.float64)  # gamma, 0 on the dummy slot
        gext[:, :C] = np.asarray(gamma, dtype=np.float64).reshape(U, C)
        gext = gext.ravel()
    else:
        state.reshape(U, C1)[:, C] = 0.0
    # users in chunks of about _CHUNK candidates, so that the working arrays
    # stay cache-resident; each chunk runs the whole width loop
    users_all = np.flatnonzero(nu)
    cum = np.cumsum(nu[users_all])
    cuts = np.searchsorted(cum, np.arange(_CHUNK, int(cum[-1]), _CHUNK), side="left")
    for users in np.split(users_all, np.unique(cuts + 1)):
        if users.shape[0] == 0:
            continue
        _dense_chunk(users, nu, cstart, Kc, cand_p, gext if ab else None,
                     state, idcg, disc, k, D, 1.0 - alpha)
    return idcg


def _old_alpha_ndcg(
    items,
    rel,
    aspects,
    truth_offsets,
    truth_items,
    truth_ratings,
    threshold: float,
    *,
    alpha: float = 0.5,
    k: int | None = None,
    return_parts: bool = False,
):
    items, k = _check_lists(items, k)
    rel = _pad_cols(np.asarray(rel, dtype=bool), k, False)
    U = items.shape[0]
    indptr, indices, C = _aspects_csr(aspects)
    disc = ndeval_discount(k)

    # run side: loop over ranks over the relevant slots only (rank-major);
    # per slot the gain is summed in ascending aspect order (as ndeval) from
    # the per-(user, aspect) weights w = (1-alpha)^count, padded aspects read a
    # weight-0 dummy slot; terms are cumulated in rank order
    one_minus_alpha = 1.0 - alpha
    dcg = np.zeros(U, dtype=np.float64)
    sl = np.flatnonzero((rel & (items >= 0)).T)
    if sl.shape[0]:
        j_of = sl // U
        u_of = sl - j_of * U
        it = items[u_of, j_of]
        ideg = np.diff(indptr)
        D = int(ideg[it].max())
        if D > 0:
            # weights stored aspect-major ([C + 1, U]: a rank touches each
            # aspect row in ascending user order); row C is a weight-0 dummy
            # that padded aspects read
            tab = _aspect_table(indptr, indices, D, C) * U
            w = np.ones((C + 1) * U, dtype=np.float64)
            w[C * U :] = 0.0
            bounds = np.searchsorted(j_of, np.arange(k + 1))
            for j in range(k):
                a, b = bounds[j], bounds[j + 1]
                if a == b:
                    continue
                u, itj = u_of[a:b], it[a:b]
                cs = []
                for t in range(D):
                    kk = tab[t].take(itj) + u
                    cs.append(w.take(kk))
                    w[kk] *= one_minus_alpha
                dcg[u] += A._fold_sorted(np.stack(cs), True) * disc[j]  # the terms in ascending order

    # ideal side: candidates = relevant, categorised truth items, sorted by (user, item)
    off = np.asarray(truth_offsets, dtype=np.int64)
    titems = np.asarray(truth_items, dtype=np.int64)
    trat = np.asarray(truth_ratings, dtype=np.float64)
    m = trat >= threshold
    m &= np.diff(indptr)[titems] > 0
    cu, ci = _sort_candidates(*_candidates(off, m, titems))
    # the tie rule of the kernels: candidates by tie key, the ambiguous users searched
    cu, ci, key = A._order_by_tie_key(cu, ci, indptr=indptr, indices=indices, C=C)
    idcg = _old_greedy_ideal(cu, ci, None, indptr, indices, C, U, k, alpha=alpha, gamma=None)
    A._resolve_ambiguous(idcg, cu, ci, key, A._Greedy(indptr, indices, C, U, k, alpha, None))
    val = _divide(dcg, idcg)
    val[dcg == 0] = 0.0
    if return_parts:
        return val, dcg, idcg
    return val


def _old_alpha_beta_ndcg(
    items,
    rating,
    aspects,
    truth_offsets,
    truth_items,
    truth_ratings,
    *,
    alpha: float = 0.02,
    beta: float = 0.2,
    r_max: float | None = None,
    k: int | None = None,
    zero_below: float | None = None,
    gamma=None,
    gamma_offsets=None,
    gamma_items=None,
    gamma_ratings=None,
    return_parts: bool = False,
):
    items, k = _check_lists(items, k)
    U = items.shape[0]
    rating = _pad_cols(np.asarray(rating, dtype=np.float64), k, np.nan)
    indptr, indices, C = _aspects_csr(aspects)
    off, tuser = _truth_users(truth_offsets)
    titems = np.asarray(truth_items, dtype=np.int64)
    trat = _zeroed(np.asarray(truth_ratings, dtype=np.float64), zero_below)
    if r_max is None:
        r_max = float(trat.max()) if trat.shape[0] and trat.max() > 0 else 1.0
    if gamma is None:
        if gamma_offsets is None:
            gamma = _gamma(off, tuser, titems, trat, indptr, indices, C)
        else:
            gamma = aspect_preferences(
                gamma_offsets, gamma_items, gamma_ratings, aspects, zero_below=zero_below
            )
    gflat = np.ascontiguousarray(gamma, dtype=np.float64).reshape(-1)
    if gflat.shape[0] != U * C:
        raise ValueError("gamma must be [U, C]")
    disc = ndeval_discount(k)

    # run side: P(a|u,i) per slot; loop over ranks, per slot the factors
    # 1 - P gamma_a state_a multiplied in ascending aspect order (padding: P gamma = 0)
    rating = _zeroed(rating, zero_below)
    unrated = np.isnan(rating)
    P = np.where(unrated, alpha, _p_rated(np.where(unrated, 0.0, rating), beta, r_max))
    dcg = np.zeros(U, dtype=np.float64)
    ideg = np.diff(indptr)
    valid = (P > 0) & (items >= 0)
    D = int(ideg[items[valid]].max()) if valid.any() else 0
    if D > 0:
        # state and gamma stored aspect-major ([C + 1, U]: a rank touches each
        # aspect row in ascending user order); row C is a dummy with gamma 0
        # that padded aspects read (keys are distinct within a rank)
        tab = _aspect_table(indptr, indices, D, C) * U
        gext = np.zeros((C + 1, U), dtype=np.float64)
        gext[:C] = gflat.reshape(U, C).T
        gext = gext.ravel()
        state = np.ones((C + 1) * U, dtype=np.float64)
        itT = np.ascontiguousarray(items.T)
        PT = np.ascontiguousarray(P.T)
        vT = np.ascontiguousarray(valid.T)
        all_u = np.arange(U, dtype=np.int64)
        for j in range(k):
            if vT[j].all():
                u, itj, Pj = all_u, itT[j], PT[j]
            else:
                u = np.flatnonzero(vT[j])
                if u.shape[0] == 0:
                    continue
                itj, Pj = itT[j].take(u), PT[j].take(u)
            om = 1.0 - Pj
            fs = []
            for t in range(D):
                kk = tab[t].take(itj)
                kk += u
                st = state.take(kk)
                f = gext.take(kk)
                f *= Pj
                f *= st
                np.subtract(1.0, f, out=f)  # 1 - (P gamma) state
                st *= om
                state[kk] = st
                fs.append(f)
            dcg[u] += (1.0 - A._fold_sorted(np.stack(fs), False)) * disc[j]  # the factors in ascending order

    # ideal side: candidates = rated truth items with P > 0 and >= 1 aspect
    cp_all = _p_rated(trat, beta, r_max)
    m = (cp_all > 0) & (ideg[titems] > 0)
    cu, ci, cp = _sort_candidates(*_candidates(off, m, titems, cp_all))
    cu, ci, key, cp = A._order_by_tie_key(cu, ci, cp, indptr=indptr, indices=indices, C=C, p=cp)
    idcg = _old_greedy_ideal(cu, ci, cp, indptr, indices, C, U, k, alpha=alpha, gamma=gflat)
    A._resolve_ambiguous(idcg, cu, ci, key, A._Greedy(indptr, indices, C, U, k, alpha, A._Gamma(C, dense=gflat)), cp=cp)
    val = _divide(dcg, idcg)
    if return_parts:
        return val, dcg, idcg
    return val


def _aspect_data(rng):
    U, n_items = int(rng.integers(1, 40)), int(rng.integers(2, 120))
    C = int(rng.choice([1, 2, 3, 9, 40, 130, 700, 5000]))
    K = int(rng.integers(1, 12))
    p = float(rng.choice([0.02, 0.2, 0.6])) if C < 50 else min(1.0, 4.0 / C * int(rng.integers(1, 9)))
    asp = rng.random((n_items, C)) < p
    asp = sp.csr_matrix(asp) if rng.random() < 0.5 else asp
    items = np.stack([np.r_[rng.permutation(n_items), -np.ones(max(K - n_items, 0), dtype=int)][:K] for _ in range(U)])
    items[rng.random(items.shape) < 0.1] = -1
    nt = rng.integers(0, min(n_items, 90) + 1, size=U)  # > 64 candidates: the sparse greedy too
    off = np.r_[0, np.cumsum(nt)]
    ti = np.concatenate([np.sort(rng.permutation(n_items)[:m]) for m in nt]).astype(np.int64)
    tr = rng.choice([0.5, 1, 2, 3, 3.5, 4, 5, -1.0], size=ti.shape[0])
    rating = np.full(items.shape, np.nan)
    for u in range(U):
        rated = dict(zip(ti[off[u]:off[u + 1]].tolist(), tr[off[u]:off[u + 1]].tolist()))
        for j, i in enumerate(items[u]):
            rating[u, j] = rated.get(int(i), np.nan)
    return asp, items, off, ti, tr, rating


@pytest.mark.parametrize("layout", ["default", "pairs", "mixed"])
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_aspect_metrics_bit_identical_to_the_dense_kernels(monkeypatch, layout, seed):
    if layout != "default":  # every state on numbered pairs ("pairs"), or dense only when no larger than the rows
        monkeypatch.setattr(A, "_DENSE_MIN", 0)
        monkeypatch.setattr(A, "_DENSE_FACTOR", 0 if layout == "pairs" else 1)
        monkeypatch.setattr(A, "_ROWSUM_BLOCK", 50)  # γ's row sums over several blocks
    rng = np.random.default_rng(seed)
    for _ in range(25):
        asp, items, off, ti, tr, rating = _aspect_data(rng)
        k, alpha = int(rng.integers(1, 15)), float(rng.choice([0.5, 0.1, 0.9, 0.02]))
        thr = float(rng.choice([0, 3, 4]))
        rel = np.nan_to_num(rating, nan=-9) >= thr
        old = _old_alpha_ndcg(items, rel, asp, off, ti, tr, thr, alpha=alpha, k=k, return_parts=True)
        new = A.alpha_ndcg(items, rel, asp, off, ti, tr, thr, alpha=alpha, k=k, return_parts=True)
        assert all(np.array_equal(a, b) for a, b in zip(old, new))
        kw = dict(alpha=alpha, beta=float(rng.choice([0.2, 0.5, 1.0])), k=k, r_max=[None, 5.0][int(rng.integers(2))],
                  zero_below=[None, 3.0][int(rng.integers(2))])
        mode = int(rng.integers(3))
        if mode == 1:
            kw["gamma"] = aspect_preferences(off, ti, tr, asp)
        elif mode == 2:
            kw.update(gamma_offsets=off, gamma_items=ti, gamma_ratings=np.abs(tr[::-1]))
        old = _old_alpha_beta_ndcg(items, rating, asp, off, ti, tr, return_parts=True, **kw)
        new = A.alpha_beta_ndcg(items, rating, asp, off, ti, tr, return_parts=True, **kw)
        assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(old, new))


def _peak(fn) -> float:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("metric", ["alpha_ndcg", "alpha_beta_ndcg"])
def test_aspect_metrics_memory_follows_the_rows(metric):
    """2,000 users x 20 items: 5,000 categories cost about what 10 do (the dense kernels took
    users x categories: 80 MB per array at 5,000)."""
    rng = np.random.default_rng(0)
    U, K, n_items = 2000, 20, 5003
    items = (rng.integers(0, n_items, U)[:, None] + np.arange(K)[None, :] * rng.integers(1, n_items, U)[:, None]) % n_items
    off = np.arange(U + 1) * 10
    ti = np.sort(items[:, :10], axis=1).ravel()
    tr = np.full(ti.shape[0], 4.0)  # the first 10 items of every list are rated 4
    rating = np.where(np.arange(K)[None, :] < 10, 4.0, np.nan) * np.ones((U, 1))
    peaks = {}
    for C in (10, 5000):
        cats = rng.integers(0, C, n_items)
        asp = sp.csr_matrix((np.ones(n_items, dtype=bool), (np.arange(n_items), cats)), shape=(n_items, C))
        if metric == "alpha_ndcg":
            peaks[C] = _peak(lambda asp=asp: A.alpha_ndcg(items, rating >= 4, asp, off, ti, tr, 4.0, k=K))
        else:
            peaks[C] = _peak(lambda asp=asp: A.alpha_beta_ndcg(items, rating, asp, off, ti, tr, r_max=5.0, k=K))
    assert peaks[5000] < 2 * peaks[10] + 12, peaks  # MB; users x categories would be >= 80 MB


def test_adversarial_corpus_size():
    n = (len(NAMES) * 2 + 6 + 5 + len(ARG_ERRORS) + 1 + len(ECHOES) + 1 + 3 + len(API_CASES_2) + 2 + 2 + 1 + 3 + 1 + 12 + 2)
    assert n >= 60
