"""receval verify: a published JSON result recomputed from its signatures on the given files,
with its data fingerprints checked; exit 0 (all match), 1 (a mismatch), 2 (bad input)."""

from __future__ import annotations

import json
import math

import polars as pl
import pytest

import receval
from receval.cli import main
from receval.verification import TOLERANCE, Verification, verify

RECS = {"user_id": [1, 1, 1, 2, 2, 3, 3, 3, 4, 4], "item_id": [10, 20, 30, 10, 40, 20, 50, 60, 70, 10],
        "score": [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.9, 0.1]}
TRUTH = {"user_id": [1, 1, 2, 3, 3, 4], "item_id": [20, 40, 40, 50, 70, 70], "rating": [5.0, 3.0, 4.0, 2.0, 5.0, 4.0]}
TRAIN = {"user_id": [1, 2, 5, 5, 5, 5, 5, 5], "item_id": [10, 10, 20, 30, 40, 50, 60, 70]}
SPECS = ["ndcg@3", "precision@2", "map(denominator=k)@3", "recall@10", "mrr@10"]


@pytest.fixture
def files(tmp_path):
    paths = {}
    for name, data in {"recs": RECS, "truth": TRUTH, "train": TRAIN}.items():
        pl.DataFrame(data).write_csv(tmp_path / f"{name}.csv")
        pl.DataFrame(data).write_parquet(tmp_path / f"{name}.parquet")
        paths[name] = str(tmp_path / f"{name}.csv")
        paths[name + "_pq"] = str(tmp_path / f"{name}.parquet")
    paths["dir"] = tmp_path
    return paths


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def publish(files, capsys, extra=(), specs=SPECS, name="result.json"):
    code, out, err = run(["evaluate", files["recs"], files["truth"], *[a for s in specs for a in ("-m", s)],
                          "--format", "json", *extra], capsys)
    assert code == 0, err
    path = files["dir"] / name
    path.write_text(out)
    return str(path)


def test_an_untouched_result_verifies(files, capsys):
    path = publish(files, capsys)
    code, out, err = run(["verify", path, files["recs"], files["truth"]], capsys)
    assert code == 0, err
    doc = json.loads(open(path).read())
    for r in doc["results"]:  # every value shown in full precision, OK
        line = next(line for line in out.splitlines() if f" {r['metric']} " in line)
        assert line.count(repr(r["value"])) == 2 and "OK" in line and "match" in line
    assert doc["fingerprints"]["recs"] in out and doc["fingerprints"]["truth"] in out
    assert out.rstrip().splitlines()[-1] == f"OK: {len(SPECS)} values and 2 inputs match"


def test_the_same_content_in_another_format_verifies(files, capsys):
    path = publish(files, capsys)
    code, out, _ = run(["verify", path, files["recs_pq"], files["truth_pq"]], capsys)
    assert code == 0 and "MISMATCH" not in out


def test_renamed_columns_verify_with_the_column_options(files, capsys):
    path = publish(files, capsys)
    d = files["dir"]
    pl.DataFrame(RECS).select(pl.col("score").alias("s"), pl.col("item_id").alias("i"), pl.col("user_id").alias("u")) \
        .write_csv(d / "renamed.csv")
    pl.DataFrame(TRUTH).rename({"user_id": "u", "item_id": "i", "rating": "r"}).write_parquet(d / "renamed_truth.parquet")
    code, out, err = run(["verify", path, str(d / "renamed.csv"), str(d / "renamed_truth.parquet"),
                          "--user-col", "u", "--item-col", "i", "--score-col", "s", "--rating-col", "r"], capsys)
    assert code == 0, err + out


def test_an_altered_value_fails(files, capsys):
    path = publish(files, capsys)
    doc = json.loads(open(path).read())
    doc["results"][1]["value"] += 1e-9
    open(path, "w").write(json.dumps(doc))
    code, out, err = run(["verify", path, files["recs"], files["truth"]], capsys)
    assert code == 1 and err == ""
    line = next(line for line in out.splitlines() if " precision@2 " in line)
    assert "MISMATCH" in line and "match" in line  # the value differs, the data do not
    assert sum("MISMATCH" in line for line in out.splitlines() if "@" in line) == 1
    assert out.rstrip().splitlines()[-1].startswith(f"MISMATCH: 1 of {len(SPECS)} values and 0 of 2 inputs differ")


def test_values_are_checked_to_1e12():
    res = receval.evaluate(RECS, TRUTH, ["ndcg@3"])
    doc = res.to_dict()
    value = doc["results"][0]["value"]
    doc["results"][0]["value"] = value * (1 + TOLERANCE / 10)
    assert verify(doc, RECS, TRUTH).ok
    doc["results"][0]["value"] = value * (1 + TOLERANCE * 100)
    assert not verify(doc, RECS, TRUTH).ok


@pytest.mark.parametrize("change", ["score", "row", "truth"])
def test_an_altered_file_row_fails(files, capsys, change):
    path = publish(files, capsys)
    recs, truth = dict(RECS), dict(TRUTH)
    if change == "score":  # an unranked change: every value may stay, the fingerprint does not
        recs = {**RECS, "score": [0.95] + RECS["score"][1:]}
    elif change == "row":
        recs = {**RECS, "item_id": RECS["item_id"][:1] + [40] + RECS["item_id"][2:]}
    else:
        truth = {**TRUTH, "rating": TRUTH["rating"][:-1] + [1.0]}
    d = files["dir"]
    pl.DataFrame(recs).write_csv(d / "recs2.csv")
    pl.DataFrame(truth).write_csv(d / "truth2.csv")
    code, out, err = run(["verify", path, str(d / "recs2.csv"), str(d / "truth2.csv")], capsys)
    assert code == 1 and err == ""
    bad = "truth" if change == "truth" else "recs"
    assert f"MISMATCH ({bad})" in out
    assert next(line for line in out.splitlines() if line.startswith(f"│ {bad} ")).rstrip("│ ").endswith("MISMATCH")


def test_side_inputs_are_fingerprinted_and_required(files, capsys):
    path = publish(files, capsys, ["--train", files["train"]], specs=["novelty@2", "ndcg@3"])
    assert "train" in json.loads(open(path).read())["fingerprints"]
    code, _, _ = run(["verify", path, files["recs"], files["truth"], "--train", files["train_pq"]], capsys)
    assert code == 0
    code, out, err = run(["verify", path, files["recs"], files["truth"]], capsys)  # train not given
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and "--train" in err
    other = files["dir"] / "train2.csv"
    pl.DataFrame({k: v[:-1] for k, v in TRAIN.items()}).write_csv(other)
    code, out, _ = run(["verify", path, files["recs"], files["truth"], "--train", str(other)], capsys)
    assert code == 1 and "MISMATCH (train)" in out
    plain = publish(files, capsys, name="plain.json")  # a side input the result was computed without
    code, out, err = run(["verify", plain, files["recs"], files["truth"], "--train", files["train"]], capsys)
    assert code == 2 and "without train" in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("content,message", [
    ("not json {", "is not JSON"),
    ("[1, 2]", "not a receval result"),
    ('{"version": "0.1.0", "results": []}', "no 'results'"),
    ('{"version": "0.1.0", "results": [{"metric": "ndcg@3", "value": 0.5}]}', "no signature"),
    ('{"version": "0.1.0", "results": [{"metric": "ndcg@3", "value": 0.5, "signature": "ndcg@3|gain:binary|v:0.1.0"}]}',
     "no data fingerprints"),
    ('{"results": [{"metric": "x", "value": 0.5, "signature": "nosuchmetric@3|v:0.1.0"}], '
     '"fingerprints": {"recs": "rf1:00", "truth": "rf1:00"}}', "nosuchmetric"),
    ('{"results": [{"metric": "x", "value": "high", "signature": "ndcg@3|v:0.1.0"}], '
     '"fingerprints": {"recs": "rf1:00", "truth": "rf1:00"}}', "not a number"),
])
def test_bad_input_is_one_line_and_exit_2(files, capsys, content, message):
    path = files["dir"] / "bad.json"
    path.write_text(content)
    code, out, err = run(["verify", str(path), files["recs"], files["truth"]], capsys)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and err.startswith("receval: error: ") and message in err, err


def test_missing_files_are_exit_2(files, capsys):
    path = publish(files, capsys)
    for argv in (["verify", str(files["dir"] / "nope.json"), files["recs"], files["truth"]],
                 ["verify", path, str(files["dir"] / "nope.csv"), files["truth"]]):
        code, out, err = run(argv, capsys)
        assert code == 2 and out == "" and len(err.splitlines()) == 1 and "not found" in err


def test_python_api_and_formats(files, capsys):
    res = receval.evaluate(files["recs"], files["truth"], SPECS)
    v = verify(res.to_json(), files["recs_pq"], files["truth_pq"])  # JSON text, a Results, a dict or a path
    assert isinstance(v, Verification) and v.ok and v.data_ok
    assert verify(res, files["recs"], files["truth"]).ok
    assert [c.recomputed for c in v.checks] == [e.value for e in res.entries]
    assert receval.verify(res, files["recs"], files["truth"]).ok  # the package-level name
    doc = v.to_dict()
    assert doc["ok"] is True and [i["input"] for i in doc["inputs"]] == ["recs", "truth"]
    path = publish(files, capsys)
    code, out, _ = run(["verify", path, files["recs"], files["truth"], "--format", "json"], capsys)
    assert code == 0 and json.loads(out)["ok"] is True
    code, out, _ = run(["verify", path, files["recs"], files["truth"], "--format", "markdown"], capsys)
    assert code == 0 and out.startswith("| metric | published | recomputed | data | status |")


def test_a_nan_value_matches_only_a_nan():
    from receval.verification import Check

    assert Check("m", "s", None, math.nan).ok
    assert not Check("m", "s", None, 0.0).ok and not Check("m", "s", 0.0, math.nan).ok
