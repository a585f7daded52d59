"""A corpus of bad and awkward inputs (issue 10): every case, through the API and the command
line, gives either the right value (checked against arithmetic) or a one-line error that names
the fix — a RecevalError from the API, exit status 2 and one ``receval: error:`` line from the
CLI, never a traceback, never a wrong number, never a lost file.

File cases run through both; in-memory cases (pandas dtypes, Python option values, Spec
objects) through the API; output cases (``--per-user``) through both writers.
"""

from __future__ import annotations

import gzip
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import receval
from receval import RecevalError
from receval.cli import main
from receval.spec import Spec


def L(i: int) -> float:
    """The discount of position i: 1 / log2(i + 1)."""
    return 1.0 / math.log2(i + 1)


RECS = "user_id,item_id,score\n1,10,0.9\n1,20,0.8\n1,30,0.7\n2,10,0.5\n2,40,0.4\n"
TRUTH = "user_id,item_id,rating\n1,20,5\n1,30,3\n2,40,4\n"
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
    recs: Any = RECS
    truth: Any = TRUTH
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
    Case("bom in recs", P2, recs="\ufeff" + RECS),
    Case("bom in truth", P2, truth="\ufeff" + TRUTH),
    Case("crlf line ends", P2, recs=RECS.replace("\n", "\r\n"), truth=TRUTH.replace("\n", "\r\n")),
    Case("no final newline", P2, recs=RECS.rstrip("\n")),
    Case("quoted fields", P2, recs='"user_id","item_id","score"\n"1","10","0.9"\n"1","20","0.8"\n"1","30","0.7"\n"2","10","0.5"\n"2","40","0.4"\n'),
    Case("extra unused column", P2, recs=RECS.replace("score\n", "score,note\n").replace("\n1,", ",x\n1,").replace("\n2,", ",y\n2,").rstrip("\n") + ",z\n"),
    Case("columns reordered", P2, recs="score,item_id,user_id\n0.9,10,1\n0.8,20,1\n0.7,30,1\n0.5,10,2\n0.4,40,2\n"),
    Case("rows shuffled", P2, recs="user_id,item_id,score\n2,40,0.4\n1,30,0.7\n2,10,0.5\n1,10,0.9\n1,20,0.8\n"),
    Case("scientific scores", P2, recs=_rows(RECS, **{"0.9": "9e-1", "0.8": "8E-1", "0.7": "7.0e-1"})),
    Case("negative scores", P2, recs=_rows(RECS, **{"0.9": "-0.1", "0.8": "-0.2", "0.7": "-0.3", "0.5": "-5", "0.4": "-6"})),
    Case("integer scores", P2, recs=_rows(RECS, **{"0.9": "9", "0.8": "8", "0.7": "7", "0.5": "5", "0.4": "4"})),
    Case("huge scores", P2, recs=_rows(RECS, **{"0.9": "1e308", "0.8": "1e307", "0.7": "1e306"})),
    Case("string ids", P2, recs=_rows(RECS, **{"\n1,": "\nu1,", "\n2,": "\nu2,"}), truth=_rows(TRUTH, **{"\n1,": "\nu1,", "\n2,": "\nu2,"})),
    Case("unicode ids", P2, recs=_rows(RECS, **{"\n1,": "\nüser,", "\n2,": "\n日本,"}), truth=_rows(TRUTH, **{"\n1,": "\nüser,", "\n2,": "\n日本,"})),
    Case("emoji item ids", P2, recs=_rows(RECS, **{",20,": ",🎬,", ",40,": ",🎵,"}), truth=_rows(TRUTH, **{",20,": ",🎬,", ",40,": ",🎵,"})),
    Case("quoted ids with commas", P2, recs=_rows(RECS, **{",20,": ',"a,b",', ",40,": ',"c,d",'}), truth=_rows(TRUTH, **{",20,": ',"a,b",', ",40,": ',"c,d",'})),
    Case("zero-padded ids stay distinct", (0 / 2 + 1 / 2) / 2, recs=_rows(RECS, **{",20,": ",020,"})),
    Case("zero-padded ids match themselves", P2, recs=_rows(RECS, **{",20,": ",007,"}), truth=_rows(TRUTH, **{",20,": ",007,"})),
    Case("20-digit ids", P2, recs=_rows(RECS, **{",20,": ",12345678901234567890,"}), truth=_rows(TRUTH, **{",20,": ",12345678901234567890,"})),
    Case("uint64 ids above 2^63", P2, recs=_rows(RECS, **{",20,": f",{2**63 + 5},"}), truth=_rows(TRUTH, **{",20,": f",{2**63 + 5},"})),
    Case("negative ids", P2, recs=_rows(RECS, **{",20,": ",-20,"}), truth=_rows(TRUTH, **{",20,": ",-20,"})),
    Case("1000-char ids", P2, recs=_rows(RECS, **{",20,": "," + "x" * 1000 + ","}), truth=_rows(TRUTH, **{",20,": "," + "x" * 1000 + ","})),
    Case("empty-string-like id", P2, recs=_rows(RECS, **{",20,": ',"_",'}), truth=_rows(TRUTH, **{",20,": ',"_",'})),
    Case("tsv file", P2, recs=RECS.replace(",", "\t"), recs_name="recs.tsv"),
    Case("gzip csv", P2, recs=gzip.compress(RECS.encode()), recs_name="recs.csv.gz"),
    Case("parquet", P2, recs=("parquet", RECS), recs_name="recs.parquet"),
    Case("semicolon csv", "--sep ';'", recs=RECS.replace(",", ";")),
    Case("semicolon csv with sep", P2, recs=RECS.replace(",", ";"), opts={"sep": ";"}),
    Case("semicolon csv with sep name", P2, recs=RECS.replace(",", ";"), opts={"sep": "semicolon"}),
    Case("tab txt", "--sep tab", recs=RECS.replace(",", "\t"), recs_name="recs.txt"),
    Case("tab txt with sep", P2, recs=RECS.replace(",", "\t"), recs_name="recs.txt", opts={"sep": "tab"}),
    Case("pipe csv", "--sep '|'", recs=RECS.replace(",", "|")),
    Case("semicolon truth", "--sep ';'", truth=TRUTH.replace(",", ";")),
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
    Case("latin-1 bytes in ids", "save the file as UTF-8", recs=RECS.encode().replace(b"\n2,", b"\n\xe9,")),
    Case("symlink to recs", P2, recs=("symlink", RECS)),
    Case("broken symlink", "not found", recs=("broken", None)),
    # ---- columns and types ------------------------------------------------------------------
    Case("missing user column", "missing column 'user_id'", recs=RECS.replace("user_id", "uid")),
    Case("missing item column", "missing column 'item_id'", truth=TRUTH.replace("item_id", "iid")),
    Case("renamed columns named", P2, recs=RECS.replace("user_id", "uid").replace("item_id", "iid"),
         truth=TRUTH.replace("user_id", "uid").replace("item_id", "iid"), opts={"user_col": "uid", "item_col": "iid"}),
    Case("spaces around header names", "missing column", recs=RECS.replace("user_id,item_id", " user_id , item_id ")),
    Case("duplicate header names, sep given", "repeats the column name", recs=RECS.replace("item_id,score", "item_id,item_id"), opts={"sep": ","}),
    Case("duplicate header names", "repeats the column name 'item_id'", recs=RECS.replace("item_id,score", "item_id,item_id")),
    Case("no score nor rank", "neither a score column", recs=RECS.replace("score", "prediction")),
    Case("score named", P2, recs=RECS.replace("score", "prediction"), opts={"score_col": "prediction"}),
    Case("input order asked", P2, recs=RECS.replace("score", "prediction"), opts={"order": "input"}),
    Case("text scores", "not a number (row 1: 'high')", recs=_rows(RECS, **{"0.9": "high"})),
    Case("scores padded with spaces", P2, recs=_rows(RECS, **{"0.9": " 0.9 "})),
    Case("nan score", "NaN or infinite", recs=_rows(RECS, **{"0.9": "nan"})),
    Case("inf score", "NaN or infinite", recs=_rows(RECS, **{"0.9": "inf"})),
    Case("empty score cell", "missing", recs=_rows(RECS, **{"0.9": ""})),
    Case("empty user cell", "1 missing ids; drop those rows", recs=_rows(RECS, **{"\n2,40": "\n,40"})),
    Case("empty item cell", "1 missing ids; drop those rows", recs=_rows(RECS, **{",40,": ",,"})),
    Case("empty truth user cell", "1 missing ids; drop those rows", truth=_rows(TRUTH, **{"\n2,": "\n,"})),
    Case("text rating", "not a number (row 1: 'five')", truth=_rows(TRUTH, **{",5\n": ",five\n"})),
    Case("empty rating cell", "missing", truth=_rows(TRUTH, **{",5\n": ",\n"})),
    Case("rank only", P2, recs="user_id,item_id,rank\n1,10,1\n1,20,2\n1,30,3\n2,10,1\n2,40,2\n"),
    Case("rank only, replay@0.22 dialect", P2, recs="user_id,item_id,rank\n1,10,1\n1,20,2\n1,30,3\n2,10,1\n2,40,2\n",
         opts={"dialect": "replay@0.22"}),
    Case("fractional ranks", "not whole numbers", recs="user_id,item_id,rank\n1,10,1.5\n1,20,2\n1,30,3\n2,10,1\n2,40,2\n"),
    Case("rank 0", ">= 1", recs="user_id,item_id,rank\n1,10,0\n1,20,2\n1,30,3\n2,10,1\n2,40,2\n"),
    Case("negative rank", ">= 1", recs="user_id,item_id,rank\n1,10,-1\n1,20,2\n1,30,3\n2,10,1\n2,40,2\n"),
    Case("equal ranks", "same rank", recs="user_id,item_id,rank\n1,10,1\n1,20,1\n1,30,3\n2,10,1\n2,40,2\n"),
    Case("text ranks", "not a number (row 1: 'a')", recs="user_id,item_id,rank\n1,10,a\n1,20,b\n1,30,c\n2,10,a\n2,40,b\n"),
    Case("duplicate recommendations", "dup='first'", recs=RECS + "1,20,0.1\n"),
    Case("duplicates kept first", P2, recs=RECS + "1,20,0.1\n", opts={"dup": "first"}),
    Case("duplicate truth", "tdup='first'", truth=TRUTH + "1,20,4\n"),
    Case("threshold without ratings", "needs a rating column", truth="user_id,item_id\n1,20\n1,30\n2,40\n", opts={"rel": "4"}),
    Case("no rating column", P2, truth="user_id,item_id\n1,20\n1,30\n2,40\n"),
    # CSV ids are text: "1" is not "u1", so no user is in both inputs: refused with examples and the fix
    Case("int vs string ids", "prefix 'u'", truth=_rows(TRUTH, **{"\n1,": "\nu1,", "\n2,": "\nu2,"})),
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
    Case("missing k", "needs a cut-off", metrics=["ndcg"]),
    Case("unknown option", "has no option", metrics=["ndcg(gian=linear)@3"]),
    Case("option without value", "key=value", metrics=["ndcg(linear)@3"]),
    Case("option twice", "given twice", metrics=["ndcg(gain=linear,gain=exp2)@3"]),
    Case("empty metric", "cannot parse", metrics=[""]),
    Case("unbalanced spec", "cannot parse", metrics=["ndcg(gain=linear@3"]),
    Case("graded gain", N3_LIN, metrics=["ndcg(gain=linear)@3"]),
    Case("negative ratings refused", "neg=zero", metrics=["ndcg(gain=linear)@3"], truth="user_id,item_id,rating\n1,20,5\n1,30,-3\n2,40,4\n"),
    # ratings 5, -3 -> gains 5, 0: DCG 5 L(2), ideal 5 L(1); user 2 as before
    Case("negative ratings clipped", (5 * L(2) / (5 * L(1)) + L(2)) / 2, metrics=["ndcg(gain=linear,neg=zero)@3"],
         truth="user_id,item_id,rating\n1,20,5\n1,30,-3\n2,40,4\n"),
    Case("negative ratings, binary gain", N3, metrics=["ndcg@3"], truth="user_id,item_id,rating\n1,20,5\n1,30,-3\n2,40,4\n"),
    Case("unknown dialect", "unknown dialect", opts={"dialect": "nodialect"}),
    Case("dialect without the metric", "has no metric", metrics=["precision@2"], opts={"dialect": "openrec"}),
    Case("empty policy error", "empty='skip'", metrics=["recall@2"], opts={"rel": "5", "empty": "error"}),
    Case("norecs policy error", "norecs='zero'", truth=TRUTH + "3,50,5\n", opts={"norecs": "error"}),
    Case("norecs zero", (0.5 + 0.5 + 0.0) / 3, truth=TRUTH + "3,50,5\n"),
    Case("polars engine", P2, opts={"engine": "polars"}),
    Case("polars engine, semicolon", "--sep ';'", recs=RECS.replace(",", ";"), opts={"engine": "polars"}),
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
    ("spec without k", {"metrics": [Spec("ndcg")]}, "needs a cut-off"),
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
    (tmp_path / "r.csv").write_text(RECS)
    (tmp_path / "t.csv").write_text(TRUTH)
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
