"""TREC run / qrels files (trec_eval's conventions) and {qid: {docid: value}} dicts."""

from __future__ import annotations

import gzip
import json

import polars as pl
import pytest

import receval
from receval.cli import main
from receval.errors import DataError
from receval.trec import read_qrels, read_run, write_qrels, write_run

RUN = "q1 Q0 d2 1 3.0 sys\nq1 Q0 d1 2 2.0 sys\nq1\tQ0\td3  3 1.0 sys\nq1 Q0 d4 4 0.5 sys\n\nq2 Q0 007 1 9 sys\nq2 Q0 7 2 8 sys\n"
QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 2\nq2 0 7 1\nq3 0 x 1\n"
# q1: relevant (rel >= 1) d1, d3 at positions 2 and 3; q2: the relevant '7' at position 2
# ('007' is another document); q3 has no run (trec_eval's dialect skips it)
AP = {"q1": (1 / 2 + 2 / 3) / 2, "q2": (1 / 2) / 1}


@pytest.fixture
def files(tmp_path):
    (tmp_path / "a.run").write_text(RUN)
    (tmp_path / "a.qrels").write_text(QRELS)
    with gzip.open(tmp_path / "b.run.gz", "wt") as f:
        f.write(RUN)
    with gzip.open(tmp_path / "b.qrels.gz", "wt") as f:
        f.write(QRELS)
    (tmp_path / "c.trec").write_text(RUN)
    (tmp_path / "d.trec").write_text(QRELS)
    return tmp_path


def test_read_run_and_qrels_keep_string_ids(files):
    run = read_run(files / "a.run")
    assert run.columns == ["user_id", "item_id", "score"]
    assert run.rows()[4:] == [("q2", "007", 9.0), ("q2", "7", 8.0)]
    assert run.get_column("item_id").dtype == pl.String
    q = read_qrels(files / "b.qrels.gz")
    assert q.rows()[:2] == [("q1", "d1", 1), ("q1", "d2", 0)] and q.get_column("rating").dtype == pl.Int64


@pytest.mark.parametrize("recs,truth", [("a.run", "a.qrels"), ("b.run.gz", "b.qrels.gz"), ("c.trec", "d.trec")])
def test_evaluate_reads_trec_files_by_name(files, recs, truth):
    res = receval.evaluate(str(files / recs), files / truth, ["map@10"], dialect="trec_eval", rel=1)
    assert res["map@10"] == pytest.approx((AP["q1"] + AP["q2"]) / 2, abs=1e-15)
    assert "dialect:trec_eval" in res.signature("map@10")


def test_dict_of_dicts_like_ranx(files):
    run = {"q1": {"d2": 3.0, "d1": 2.0, "d3": 1.0, "d4": 0.5}, "q2": {"007": 9.0, "7": 8.0}}
    qrels = {"q1": {"d1": 1, "d2": 0, "d3": 2}, "q2": {"7": 1}, "q3": {"x": 1}}
    from_dicts = receval.evaluate(run, qrels, ["map@10", "ndcg@3"], dialect="trec_eval", rel=1)
    from_files = receval.evaluate(files / "a.run", files / "a.qrels", ["map@10", "ndcg@3"], dialect="trec_eval", rel=1)
    assert from_dicts["map@10"] == from_files["map@10"] and from_dicts["ndcg@3"] == from_files["ndcg@3"]


def test_round_trip(tmp_path, files):
    run, qrels = read_run(files / "a.run"), read_qrels(files / "a.qrels")
    write_run(run.to_pandas(), tmp_path / "w.run.gz", tag="mine")
    write_qrels(qrels, tmp_path / "w.qrels")
    lines = gzip.open(tmp_path / "w.run.gz", "rt").read().splitlines()
    assert lines[0] == "q1 Q0 d2 1 3.0 mine" and lines[-1] == "q2 Q0 7 2 8.0 mine"
    assert (tmp_path / "w.qrels").read_text().splitlines()[0] == "q1 0 d1 1"
    assert read_run(tmp_path / "w.run.gz").equals(run.sort(["user_id", "score"], descending=[False, True]))
    assert read_qrels(tmp_path / "w.qrels").equals(qrels)


def test_write_run_orders_by_score_and_ranks_per_query(tmp_path):
    write_run({"user_id": [2, 1, 1], "item_id": [5, 3, 4], "score": [0.1, 0.2, 0.9]}, tmp_path / "x.run")
    assert (tmp_path / "x.run").read_text().splitlines() == ["1 Q0 4 1 0.9 receval", "1 Q0 3 2 0.2 receval", "2 Q0 5 1 0.1 receval"]


@pytest.mark.parametrize(
    "name,text,what,message",
    [
        ("x.run", "q1 Q0 d1 1 2.0 s\nq1 Q0 d2 2\n", "recommendations", "line 2: expected the qid Q0 docno rank score tag fields"),
        ("x.run", "q1 Q0 d1 1 high s\n", "recommendations", "(score) must be a number"),
        ("x.qrels", "q1 0 d1 1 extra\n", "ground truth", "line 1: expected the qid iter docno rel fields"),
        ("x.qrels", "q1 0 d1 0.5\n", "ground truth", "(rel) must be an integer"),
        ("x.run", "q1 Q0 d1 1 2.0 s\n", "ground truth", "named as a TREC run; pass a qrels file"),
        ("x.qrels", "q1 0 d1 1\n", "recommendations", "named as a TREC qrels file; pass a run file"),
    ],
)
def test_bad_trec_files_name_the_fix(tmp_path, name, text, what, message):
    (tmp_path / name).write_text(text)
    other = tmp_path / ("o.qrels" if what == "recommendations" else "o.run")
    other.write_text("q1 0 d1 1\n" if what == "recommendations" else "q1 Q0 d1 1 2.0 s\n")
    args = (tmp_path / name, other) if what == "recommendations" else (other, tmp_path / name)
    with pytest.raises(DataError, match=message.replace("(", r"\(").replace(")", r"\)")):
        receval.evaluate(*args, ["map@10"])


def test_writers_refuse_what_trec_cannot_hold(tmp_path):
    with pytest.raises(DataError, match="whitespace"):
        write_run({"user_id": ["a b"], "item_id": ["x"], "score": [1.0]}, tmp_path / "x.run")
    with pytest.raises(DataError, match="grades are integers"):
        write_qrels({"user_id": [1], "item_id": [2], "rating": [4.5]}, tmp_path / "x.qrels")
    with pytest.raises(DataError, match="lack column"):
        write_run({"user_id": [1], "item_id": [2]}, tmp_path / "x.run")


def test_cli_input_format_trec_and_trec_output(files, capsys):
    (files / "run.txt").write_text(RUN)
    (files / "qrels.txt").write_text(QRELS)
    code = main(["evaluate", str(files / "run.txt"), str(files / "qrels.txt"), "-m", "map@10", "--dialect", "trec_eval",
                 "--rel", "1", "--input-format", "trec", "--format", "json"])
    out = capsys.readouterr().out
    assert code == 0 and json.loads(out)["results"][0]["value"] == pytest.approx((AP["q1"] + AP["q2"]) / 2, abs=1e-15)
    code = main(["evaluate", str(files / "a.run"), str(files / "a.qrels"), "-m", "map@10", "--dialect", "trec_eval",
                 "--rel", "1", "--format", "trec", "--per-user", str(files / "pu.csv")])
    out = capsys.readouterr().out
    assert code == 0 and out.split() == ["map@10", "all", f"{(AP['q1'] + AP['q2']) / 2:.4f}"]
    # a text file without --input-format trec is read as CSV, not guessed as TREC
    code = main(["evaluate", str(files / "run.txt"), str(files / "qrels.txt"), "-m", "map@10"])
    assert code == 2
