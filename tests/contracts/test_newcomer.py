"""A newcomer's first hour (issue 31): 0/1 labels, star ratings without ``rel``, rounded scores,
a partial run and differently named columns give the number the user meant, and what receval
decided for them is said in one short note each (``RecevalNote``; ``receval: note:`` on the
command line). ``receval reproduce`` twice in one folder: tests/cli/test_reproduce.py."""

from __future__ import annotations

import math
import warnings

import numpy as np
import polars as pl
import pytest

import receval
from receval.cli import main


def _notes(call):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        res = call()
    notes = [str(x.message) for x in w if issubclass(x.category, receval.RecevalNote)]
    others = [str(x.message) for x in w if not issubclass(x.category, receval.RecevalNote)]
    return res, notes, others


RECS = pl.DataFrame({"user_id": ["a", "a", "a", "b", "b"], "item_id": ["x", "y", "z", "x", "w"], "score": [3.0, 2.0, 1.0, 2.0, 1.0]})
LABELS = pl.DataFrame({"user_id": ["a", "a", "b", "b"], "item_id": ["x", "y", "x", "w"], "rating": [0, 1, 0, 0]})


def test_a_zero_label_is_not_a_hit_and_the_rule_is_said():
    res, notes, others = _notes(lambda: receval.evaluate(RECS, LABELS, ["precision@2", "ndcg@2"]))
    # before: every truth row relevant, precision@2 = ndcg@2 = 1.0; now only y (rated 1) is relevant
    # for a, and b (no relevant item) is left out of the mean
    assert res["precision@2"] == 0.5
    assert res["ndcg@2"] == pytest.approx(1 / math.log2(3))
    assert "|rel:>0|" in res.signature("precision@2")
    assert any(n.startswith("rel:>0 (the default): 3 of 4 truth rows have a rating <= 0") for n in notes), notes
    assert any(n.startswith("1 of 2 truth users have no relevant item") for n in notes), notes
    assert not others, others
    # the old number is one option away, and said in the signature
    old = receval.evaluate(RECS, LABELS, ["precision@2"], rel="all")
    assert old["precision@2"] == 1.0 and "|rel:all|" in old.signature("precision@2")


def test_star_ratings_without_rel_say_that_every_level_counts():
    truth = pl.DataFrame({"user_id": ["a", "a", "b"], "item_id": ["x", "z", "w"], "rating": [5.0, 1.0, 3.0]})
    res, notes, _ = _notes(lambda: receval.evaluate(RECS, truth, ["recall@2"]))
    assert res["recall@2"] == pytest.approx((1 / 2 + 1) / 2)  # a 1-star rating is relevant, and said so
    assert notes == ["rel:>0 (the default): all 3 positive rating levels count as relevant; set a threshold with "
                     "rel= (--rel), e.g. rel=4 for ratings >= 4"]
    _, notes, _ = _notes(lambda: receval.evaluate(RECS, truth, ["recall@2"], rel=4))
    assert not [n for n in notes if n.startswith("rel:")]  # a threshold the user gave is not remarked on


def test_rounded_scores_say_how_many_users_the_tie_rule_decided():
    rng = np.random.default_rng(7)
    users = np.repeat(np.arange(50), 10)
    items = np.tile(np.arange(10), 50)
    scores = np.round(rng.random(len(users)), 1)  # a CSV export with one decimal: ties everywhere
    recs = pl.DataFrame({"user_id": users, "item_id": items, "score": scores})
    truth = pl.DataFrame({"user_id": np.arange(50), "item_id": rng.integers(0, 10, 50)})
    res, notes, others = _notes(lambda: receval.evaluate(recs, truth, ["recall@5"]))
    # the users with two equal scores, the first of them within the top 5 (computed here independently)
    tied = 0
    for u in range(50):
        s = np.sort(scores[users == u])[::-1]
        tied += any(s[i] == s[i + 1] for i in range(min(5, len(s) - 1)))
    assert res.info["tied_users"] == tied > 0
    assert any(n.startswith(f"ties=average decided values for {tied} of 50 users") for n in notes), notes
    assert not others
    _, notes, others = _notes(lambda: receval.evaluate(recs, truth, ["recall@5"], ties="item"))
    assert not [n for n in notes if "ties=" in n] and not others  # a rule the user chose is not remarked on


def test_a_partial_run_is_said():
    truth = pl.DataFrame({"user_id": ["a", "b", "c"], "item_id": ["x", "w", "q"], "rating": [1, 1, 1]})
    res, notes, _ = _notes(lambda: receval.evaluate(RECS, truth, ["hitrate@2"]))
    assert res["hitrate@2"] == pytest.approx(2 / 3)  # c has no recommendations: scored 0, and said
    assert "1 of 3 truth users with relevant items have no recommendations; they score 0 (norecs=zero); norecs=skip leaves them out" in notes


def test_the_first_hour_on_the_command_line(tmp_path, capsys):
    # differently named columns in each file, 0/1 labels, several notes: each once, after the table
    (tmp_path / "recs.csv").write_text("user,item,prediction\na,x,0.3\na,y,0.2\na,z,0.1\nb,x,0.2\nb,w,0.1\nc,x,0.5\n")
    (tmp_path / "truth.csv").write_text("user_id,item_id,rating\na,x,0\na,y,1\nb,x,0\nb,w,0\nd,x,1\n")
    code = main(["evaluate", str(tmp_path / "recs.csv"), str(tmp_path / "truth.csv"), "-m", "precision@2", "-m", "nDCG@2",
                 "--user-col", "user", "--item-col", "item", "--score-col", "prediction",
                 "--truth-user-col", "user_id", "--truth-item-col", "item_id", "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    import json

    doc = {r["metric"]: r for r in json.loads(out)["results"]}
    assert set(doc) == {"precision@2", "nDCG@2"}  # the name as typed, never the resolved spec
    # a: y at 2 -> 1/2; b: no relevant item, left out; d: no recommendations -> 0
    assert doc["precision@2"]["value"] == pytest.approx((0.5 + 0.0) / 2)
    lines = err.splitlines()
    assert lines and all(line.startswith("receval: note: ") for line in lines), err
    assert len(lines) == len(set(lines))
    said = " ".join(lines)
    for part in ("nDCG@2 is ir_measures' name", "rel:>0 (the default): 3 of 5 truth rows",
                 "have no recommendations", "have no relevant item"):
        assert part in said, (part, err)
