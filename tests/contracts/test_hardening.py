"""Issue 33: the API's edge refuses wrongly typed arguments with a RecevalError, never a crash
(AttributeError, TypeError, ...) from deep inside.

Issue 33: side inputs read ids as the runs do; segmentations that mean nothing refused;
Parquet reader errors and empty inputs one line on every engine; bounded JSON; a fuzz test.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import receval
from receval.cli import main
from receval.compare import compare
from receval.errors import DataError, RecevalError, RecevalNote
from receval.runs import evaluate_runs
from receval.segments import compare_segments, segment_users

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


USERS = [1, 2, 3, 4]
TRUTH_FRAME = pl.DataFrame({"user_id": USERS, "item_id": [10, 20, 30, 40]})
A = pl.DataFrame({"user_id": USERS, "item_id": [10, 20, 31, 40], "score": [1.0] * 4})
B = pl.DataFrame({"user_id": USERS, "item_id": [11, 20, 30, 41], "score": [1.0] * 4})
#: users 1 and 2 have train rows; items 10 and 20 are warm (30, 40 cold: users 3 and 4 have cold items)
TRAIN = pl.DataFrame({"user_id": [1, 2, 2], "item_id": [10, 20, 99]})
GROUPS = pl.DataFrame({"user_id": USERS, "group": ["x", "x", "y", "y"]})
EXPECTED = {"cold-items": {"users with cold items": 2, "users without cold items": 2},
            "cold-users": {"cold users (no train rows)": 2, "warm users": 2},
            "activity:2": {"activity 1/2 (0-0 train rows)": 2, "activity 2/2 (1-2 train rows)": 2},
            "groups": {"x": 2, "y": 2}}


def _pad(frame: pl.DataFrame, cols: tuple[str, ...]) -> pl.DataFrame:
    return frame.with_columns(*(pl.format("00{}", pl.col(c)).alias(c) for c in cols if c in frame.columns))


def _write(frame: pl.DataFrame, path, form: str):
    if form.startswith("csv"):
        frame.write_csv(path.with_suffix(".csv"))
        return str(path.with_suffix(".csv"))
    if form == "parquet-str":
        frame = frame.with_columns(*(pl.col(c).cast(pl.String) for c in ("user_id", "item_id") if c in frame.columns))
    frame.write_parquet(path.with_suffix(".parquet"))
    return str(path.with_suffix(".parquet"))


# the runs and truth in one form, the side input (train or groups) in another: ids compare as the same values
FORMS = ["csv", "parquet-int", "parquet-str"]


@pytest.mark.parametrize("kind", list(EXPECTED))
@pytest.mark.parametrize("main_form", FORMS)
@pytest.mark.parametrize("side_form", FORMS)
def test_every_segmentation_reads_ids_as_the_runs(tmp_path, kind, main_form, side_form):
    if "str" in main_form and side_form == "parquet-int" or main_form == "parquet-int" and "str" in side_form:
        pass  # a number id and a text id that prints alike are the same id (7 is '7')
    truth = _write(TRUTH_FRAME, tmp_path / "truth", main_form)
    runs = evaluate_runs({"a": _write(A, tmp_path / "a", main_form), "b": _write(B, tmp_path / "b", main_form)},
                         truth, ["hitrate@1"])
    side = _write(GROUPS if kind == "groups" else TRAIN, tmp_path / "side", side_form)
    kw = {"groups": side} if kind == "groups" else {"train": side, "truth": truth}
    seg = segment_users(kind, runs.user_ids, **kw)
    sizes = {label: int(seg.users(label).sum()) for label in seg.labels}
    assert sizes == EXPECTED[kind]


@pytest.mark.parametrize("kind", list(EXPECTED))
@pytest.mark.parametrize("form", ["csv", "parquet-str"])
def test_zero_padded_ids_keep_their_identity_in_every_segmentation(tmp_path, kind, form):
    """'001' in the runs is '001' in the side input, never the integer 1."""
    truth = _write(_pad(TRUTH_FRAME, ("user_id", "item_id")), tmp_path / "truth", "csv")
    runs = evaluate_runs({"a": _write(_pad(A, ("user_id", "item_id")), tmp_path / "a", "csv"),
                          "b": _write(_pad(B, ("user_id", "item_id")), tmp_path / "b", "csv")}, truth, ["hitrate@1"])
    side = _write(_pad(GROUPS if kind == "groups" else TRAIN, ("user_id", "item_id")), tmp_path / "side", form)
    kw = {"groups": side} if kind == "groups" else {"train": side, "truth": truth}
    seg = segment_users(kind, runs.user_ids, **kw)
    assert {label: int(seg.users(label).sum()) for label in seg.labels} == EXPECTED[kind]


def test_cold_items_on_the_command_line_with_csv_inputs(tmp_path, capsys):
    """The issue's case: CSV truth item ids read as text, train ids as integers: every user was 'cold'."""
    paths = {n: _write(f, tmp_path / n, "csv") for n, f in dict(truth=TRUTH_FRAME, a=A, b=B, train=TRAIN).items()}
    rc = main(["runs", paths["truth"], f"a={paths['a']}", f"b={paths['b']}", "-m", "hitrate@1", "--ci", "none",
               "--segments", "cold-items", "--train", paths["train"], "--format", "json"])
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["segments"]["sizes"] == {"users with cold items": 2, "users without cold items": 2}


def test_metric_side_inputs_read_ids_as_the_runs(tmp_path):
    """A catalog CSV with zero-padded ids against zero-padded CSV runs: one id type (it was read
    as integers and refused as 'differ in type')."""
    truth = _write(_pad(TRUTH_FRAME, ("user_id", "item_id")), tmp_path / "truth", "csv")
    recs = _write(_pad(A, ("user_id", "item_id")), tmp_path / "a", "csv")
    catalog = _write(_pad(pl.DataFrame({"item_id": [10, 20, 31, 40, 99]}), ("item_id",)), tmp_path / "cat", "csv")
    got = receval.evaluate(recs, truth, "coverage@1", catalog=catalog)
    assert got.entries[0].value == pytest.approx(4 / 5)


# ---- segmentations that mean nothing ---------------------------------------------------------


def _runs():
    return evaluate_runs({"a": A, "b": B}, TRUTH_FRAME, ["hitrate@1"])


def test_groups_matching_no_user_are_refused():
    groups = {"user_id": [100, 200], "group": ["x", "y"]}
    with pytest.raises(DataError, match="^pass groups whose user ids are the runs' users: none of the 2 users"):
        compare_segments(_runs(), "groups", groups=groups, ci="none")


def test_groups_matching_some_users_say_how_many_are_in_no_group():
    groups = {"user_id": [1, 2, 100], "group": ["x", "y", "y"]}
    with pytest.warns(RecevalNote, match="2 of the 4 users evaluated are in no group"):
        sc = compare_segments(_runs(), "groups", groups=groups, ci="none")
    assert sc.sizes["(no group)"] == 2


def test_groups_covering_every_user_say_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error", RecevalNote)
        compare_segments(_runs(), "groups", groups=GROUPS, ci="none")


# ---- Parquet reader errors and empty inputs: one line, every engine --------------------------


def _parquet_forms(tmp_path):
    good = tmp_path / "good.parquet"
    A.write_parquet(good)
    data = good.read_bytes()
    (tmp_path / "corrupt.parquet").write_bytes(b"PAR1 not really parquet")
    (tmp_path / "truncated.parquet").write_bytes(data[: len(data) // 2])
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    A.head(2).write_parquet(mixed / "p0.parquet")
    A.tail(2).with_columns(pl.col("score").cast(pl.Int64)).write_parquet(mixed / "p1.parquet")
    onebad = tmp_path / "onebad"
    onebad.mkdir()
    A.head(2).write_parquet(onebad / "p0.parquet")
    (onebad / "p1.parquet").write_bytes(b"junk")
    (tmp_path / "nothing").mkdir()
    A.head(0).write_parquet(tmp_path / "empty.parquet")
    zero = tmp_path / "zero"
    zero.mkdir()
    A.head(0).write_parquet(zero / "p0.parquet")
    (tmp_path / "header.csv").write_text("user_id,item_id,score\n")
    return {"corrupt": ("corrupt.parquet", "cannot read it"), "truncated": ("truncated.parquet", "cannot read it"),
            "schema mismatch": ("mixed", "column 'score' is Int64 in p1.parquet and Float64 in p0.parquet"),
            "one corrupt part": ("onebad", "onebad/p1.parquet: cannot read it"),
            "empty folder": ("nothing", "directory without .parquet files"),
            "0-row parquet": ("empty.parquet", "but no rows"), "0-row parquet parts": ("zero", "but no rows"),
            "header-only csv": ("header.csv", "but no rows")}


FORM_NAMES = ["corrupt", "truncated", "schema mismatch", "one corrupt part", "empty folder", "0-row parquet",
              "0-row parquet parts", "header-only csv"]


@pytest.mark.parametrize("engine", ["memory", "polars"])
@pytest.mark.parametrize("form", FORM_NAMES)
@pytest.mark.parametrize("side", ["recs", "truth"])
def test_reader_errors_are_one_line_on_every_engine(tmp_path, capsys, engine, form, side):
    name, want = _parquet_forms(tmp_path)[form]
    bad = str(tmp_path / name)
    good_truth = str(tmp_path / "t.parquet")
    TRUTH_FRAME.write_parquet(good_truth)
    recs, truth = (bad, good_truth) if side == "recs" else (str(tmp_path / "good.parquet"), bad)
    if side == "truth" and form == "header-only csv":
        (tmp_path / "header.csv").write_text("user_id,item_id\n")
    rc = main(["evaluate", recs, truth, "-m", "ndcg@2", "--engine", engine])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert "Traceback" not in err
    lines = [x for x in err.strip().splitlines() if x.startswith("receval: error:")]
    assert len(lines) == 1 and want in lines[0], err


@pytest.mark.parametrize("engine", ["memory", "polars"])
def test_an_empty_parquet_input_is_refused_as_the_same_csv_is(tmp_path, engine):
    A.head(0).write_parquet(tmp_path / "r.parquet")
    A.head(0).write_csv(tmp_path / "r.csv")
    for path in (tmp_path / "r.parquet", tmp_path / "r.csv"):
        with pytest.raises(DataError, match="no rows"):
            receval.evaluate(str(path), TRUTH_FRAME, "ndcg@2", engine=engine)


@pytest.mark.spark
@pytest.mark.parametrize("form", FORM_NAMES)
def test_reader_errors_are_one_line_on_spark(tmp_path, form):
    pytest.importorskip("pyspark")
    name, want = _parquet_forms(tmp_path)[form]
    with pytest.raises(RecevalError) as exc:
        receval.evaluate(str(tmp_path / name), TRUTH_FRAME, "ndcg@2", engine="spark")
    assert want in str(exc.value) and "\n" not in str(exc.value)


# ---- bounded JSON ----------------------------------------------------------------------------


@pytest.mark.parametrize("text,want", [
    ("[" * 5000 + "]" * 5000, "nested at most 64 deep"),
    ('{"results": [{"value": 1e999999}]}', "within a float's range"),
    ('{"results": [{"value": ' + "9" * 5000 + "}]}", "at most 30 digits"),
    ('{"results": [{"value": NaN}]}', "as null, not NaN"),
])
def test_verify_reads_extreme_json_with_one_line(tmp_path, capsys, text, want):
    (tmp_path / "r.json").write_text(text)
    A.write_csv(tmp_path / "a.csv")
    TRUTH_FRAME.write_csv(tmp_path / "t.csv")
    rc = main(["verify", str(tmp_path / "r.json"), str(tmp_path / "a.csv"), str(tmp_path / "t.csv")])
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err and want in err, err


def test_a_comparison_table_json_is_bounded():
    from receval.comparison import read_json

    with pytest.raises(DataError, match="nested at most"):
        read_json("[" * 100 + "]" * 100)


# ---- fuzz: segment specs, groups files, Parquet part folders ---------------------------------

_ids = st.one_of(st.integers(-3, 300), st.text("0123456789ab", min_size=1, max_size=4))


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(spec=st.one_of(st.sampled_from(["activity", "activity:3", "cold-users", "cold-items", "groups"]),
                      st.text(max_size=12)),
       users=st.lists(_ids, max_size=6), groups=st.lists(st.text("xyz", max_size=2), max_size=6),
       form=st.sampled_from(["csv", "parquet", "dict"]))
def test_fuzz_segments_and_groups_files(tmp_path_factory, spec, users, groups, form):
    tmp = tmp_path_factory.mktemp("fz")
    n = min(len(users), len(groups))
    frame = pl.DataFrame({"user_id": [str(u) for u in users[:n]], "group": groups[:n]},
                         schema={"user_id": pl.String, "group": pl.String})
    g: object = frame.to_dict(as_series=False)
    if form == "csv":
        frame.write_csv(tmp / "g.csv")
        g = str(tmp / "g.csv")
    elif form == "parquet":
        frame.write_parquet(tmp / "g.parquet")
        g = str(tmp / "g.parquet")
    try:
        seg = segment_users(spec, np.asarray(USERS), train=TRAIN, truth=TRUTH_FRAME, groups=g)
    except RecevalError as exc:
        assert "\n" not in str(exc).strip()
        return
    assert len(seg.of_user) == len(USERS) and seg.labels


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(parts=st.lists(st.tuples(st.integers(0, 4), st.sampled_from(["float", "int", "junk", "trunc", "nocol"])),
                      min_size=0, max_size=3),
       engine=st.sampled_from(["memory", "polars"]))
def test_fuzz_parquet_part_folders(tmp_path_factory, parts, engine):
    tmp = tmp_path_factory.mktemp("pq")
    for i, (rows, kind) in enumerate(parts):
        f = tmp / f"p{i}.parquet"
        frame = A.head(rows)
        if kind == "int":
            frame = frame.with_columns(pl.col("score").cast(pl.Int64))
        if kind == "nocol":
            frame = frame.drop("score")
        frame.write_parquet(f)
        if kind == "junk":
            f.write_bytes(b"junk" * rows)
        if kind == "trunc":
            f.write_bytes(f.read_bytes()[:-9])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            receval.evaluate(str(tmp), TRUTH_FRAME, "ndcg@2", engine=engine)
    except RecevalError as exc:
        assert "\n" not in str(exc).strip()
