"""What receval decided for the user is said, once per call, in one line (issue 31):

* a tie rule the user did not choose (the default ``ties=average``) that decided values: a note
  with the number and share of users whose list has a tie group reaching into the top k;
  ``Results.info["tied_users"]`` counts them under every rule, the same on every engine and
  batch split; a rule the user chose (spec, keyword, dialect) is never noted nor warned about;
* a partial run (truth users with relevant items and no recommendations) under a ``norecs``
  the user did not set: a note, and a line in the runs tables;
* every refusal about ties: one line of at most 200 characters that starts with the fix.
"""

from __future__ import annotations

import shutil
import warnings

import numpy as np
import polars as pl
import pytest

import receval
import receval.backends.polars as bp
from receval import evaluate
from receval.errors import RecevalNote, RecevalWarning


def rounded_data(n_users: int = 120, n_items: int = 60, per_user: int = 25, seed: int = 7):
    """Scores rounded to two decimals (a CSV export): most lists tie inside their top 10; every
    fifth user has distinct scores (no tie)."""
    rng = np.random.default_rng(seed)
    rows, truth = [], []
    for u in range(n_users):
        items = rng.choice(n_items, per_user, replace=False)
        if u % 5 == 0:
            scores = np.round(np.linspace(0.99, 0.5, per_user), 2)
        else:
            scores = np.round(rng.random(per_user) * 0.3, 2)
        rows += [(u, int(i), float(s)) for i, s in zip(items, scores)]
        truth += [(u, int(i)) for i in rng.choice(n_items, 6, replace=False)]
    recs = pl.DataFrame(rows, schema=["user_id", "item_id", "score"], orient="row")
    return recs, pl.DataFrame(truth, schema=["user_id", "item_id"], orient="row")


def tied_within(recs: pl.DataFrame, k: int | None) -> int:
    """Users whose list has a tie group reaching into the top k, counted directly: a score of
    the top k (by score) that appears twice or more in the list (k None: any repeated score)."""
    n = 0
    for _, g in recs.group_by("user_id"):
        s = np.sort(g["score"].to_numpy())[::-1]
        values, counts = np.unique(s, return_counts=True)
        repeated = set(values[counts > 1])
        top = s if k is None else s[:k]
        n += bool(repeated & set(top))
    return n


def said(call):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        res = call()
    return res, [x for x in w if issubclass(x.category, RecevalNote)], [x for x in w if issubclass(x.category, RecevalWarning)]


SPECS = ["ndcg@10", "recall@10", "precision@5", "ndcg(dup=first)@3"]  # two build groups


def test_default_tie_rule_is_noted_once_with_the_exact_count():
    recs, truth = rounded_data()
    want = tied_within(recs, 10)
    assert 0 < want < 120
    res, notes, _ = said(lambda: evaluate(recs, truth, SPECS))
    assert res.info["tied_users"] == want
    ties = [n for n in notes if "ties=" in str(n.message)]
    assert len(ties) == 1  # once per call, not per build group or metric
    msg = str(ties[0].message)
    assert msg == (f"ties=average decided values for {want} of 120 users ({100 * want / 120:.1f}%): tied scores reach "
                   "into their top 10; ties=item or another rule gives other values (receval explain ties)")
    assert ties[0].filename == __file__  # pointing at the user's line


def test_a_whole_list_metric_counts_ties_anywhere():
    recs, truth = rounded_data()
    res, notes, _ = said(lambda: evaluate(recs, truth, ["ndcg@3", "auc"]))
    assert res.info["tied_users"] == tied_within(recs, None) > tied_within(recs, 3)
    assert "tied scores are in their lists" in str(notes[0].message)


@pytest.mark.parametrize("how", [{"ties": "item"}, {"ties": "input"}, {"metrics": ["ndcg(ties=item)@10", "coverage(ties=item)@10"]},
                                 {"ties": "average"}, {"dialect": "recbole"}], ids=["keyword", "input", "spec", "average", "dialect"])
def test_a_chosen_tie_rule_is_neither_warned_nor_noted(how):
    recs, truth = rounded_data()
    metrics = how.pop("metrics", ["ndcg@10", "recall@10"])
    res, notes, warns = said(lambda: evaluate(recs, truth, metrics, **how))
    assert not [w for w in warns if "ties" in str(w.message)]
    assert not [n for n in notes if "ties" in str(n.message)]
    assert res.info["tied_users"] == tied_within(recs, 10)  # the count is kept


def test_the_count_is_the_same_on_every_batch_split(monkeypatch):
    recs, truth = rounded_data()
    want = tied_within(recs, 10)
    one, notes, _ = said(lambda: evaluate(recs, truth, SPECS))
    calls = {"n": 0}
    real = bp.run_batch
    monkeypatch.setattr(bp, "run_batch", lambda *a, **k: calls.__setitem__("n", calls["n"] + 1) or real(*a, **k))
    for budget in ("60KB", "20KB"):
        monkeypatch.setenv(bp.BUDGET_ENV, budget)
        for engine in (None, "polars"):
            calls["n"] = 0
            res, again, _ = said(lambda engine=engine: evaluate(recs, truth, SPECS, engine=engine))
            assert calls["n"] > 1  # batched
            assert res.info["tied_users"] == want
            assert [str(n.message) for n in again] == [str(n.message) for n in notes]


def test_partial_run_is_noted_unless_norecs_is_chosen():
    recs, truth = rounded_data()
    part = recs.filter(pl.col("user_id") >= 30)
    res, notes, _ = said(lambda: evaluate(part, truth, ["ndcg@10"], ties="item"))
    assert res.info["users_without_recs"] == 30
    assert [str(n.message) for n in notes] == [
        "30 of 120 truth users with relevant items have no recommendations; they score 0 (norecs=zero); "
        "norecs=skip leaves them out"]
    for kw in ({"norecs": "zero"}, {"norecs": "skip"}):
        _, notes, _ = said(lambda kw=kw: evaluate(part, truth, ["ndcg@10"], ties="item", **kw))
        assert notes == []
    _, notes, _ = said(lambda: evaluate(recs, truth, ["ndcg@10"], ties="item"))
    assert notes == []  # every user has recommendations


def test_partial_run_in_the_runs_table(tmp_path, capsys):
    from receval.cli import main
    from receval.runs import evaluate_runs
    from receval.tables import render_table

    recs, truth = rounded_data()
    runs = evaluate_runs({"full": recs, "part": recs.filter(pl.col("user_id") >= 30)}, truth, ["ndcg@10"], ties="item")
    line = ("Users with recommendations: full 120 of 120, part 90 of 120; a truth user without any scores 0 there "
            "(norecs=zero).")
    assert line in repr(runs)
    c = runs.compare(ci="none", resamples=200)
    assert line in render_table(c, "markdown")
    full = evaluate_runs({"a": recs, "b": recs}, truth, ["ndcg@10"], ties="item").compare(ci="none", resamples=200)
    assert "Users with recommendations" not in render_table(full, "markdown")
    t, a, b = tmp_path / "t.csv", tmp_path / "a.csv", tmp_path / "b.csv"
    truth.write_csv(t)
    recs.write_csv(a)
    recs.filter(pl.col("user_id") >= 30).write_csv(b)
    assert main(["runs", str(t), f"a={a}", f"b={b}", "-m", "ndcg@10", "--ci", "none", "--resamples", "200"]) == 0
    out = capsys.readouterr()
    assert "Users with recommendations: a 120 of 120, b 90 of 120" in out.out
    assert "receval: note: 30 of 120 truth users with relevant items have no recommendations" in out.err
    assert "receval: note: ties=average decided values for" in out.err


@pytest.mark.parametrize("spec,kw", [("coverage@10", {}), ("gini@7", {}), ("mad@5", {}),
                                     ("ndcg(ideal=hits)@10", {}), ("gauc(tied=order)", {})])
def test_refusals_about_ties_are_one_short_line_starting_with_the_fix(spec, kw):
    recs, truth = rounded_data()
    side = {"item_groups": pl.DataFrame({"item_id": np.arange(60), "group": [f"g{i % 2}" for i in range(60)]})} if "mad" in spec else {}
    with pytest.raises(receval.DataError) as exc:
        evaluate(recs, truth, [spec], **side, **kw)
    msg = str(exc.value)
    assert len(msg) <= 200 and "\n" not in msg, msg
    assert msg.startswith("pass ties=item (or item_desc, input"), msg
    assert "users have ties" in msg and "(receval explain ties)" in msg


def test_a_long_metric_name_keeps_the_refusal_short():
    from receval.errors import TiesRefused

    msg = str(TiesRefused("x" * 300, {10: 12345678}, "straddle"))
    assert len(msg) <= 200 and msg.startswith("pass ties=item")


def test_following_the_refusal_gives_a_value_and_no_warning():
    recs, truth = rounded_data()
    res, notes, warns = said(lambda: evaluate(recs, truth, ["coverage(ties=item)@10"]))
    assert warns == [] and notes == []
    assert res.info["tied_users"] == tied_within(recs, 10)


def test_explain_ties_carries_the_long_form():
    from receval.cli import explain

    text = explain("ties")
    assert "reaches into the top k" in text and "straddles position k" in text
    assert "average:" in text and "item:" in text
    assert "Results.info['tied_users']" in text


@pytest.fixture(scope="module")
def spark():
    pytest.importorskip("pyspark")
    if shutil.which("java") is None:
        pytest.skip("Spark needs Java")
    from receval.backends.spark import local_session

    session = local_session(partitions=4)  # several partitions: their counts are added
    yield session
    session.stop()


@pytest.mark.spark
def test_the_count_on_spark(spark):
    recs, truth = rounded_data()
    r = spark.createDataFrame(recs.rows(), "user_id long, item_id long, score double").repartition(4)
    t = spark.createDataFrame(truth.rows(), "user_id long, item_id long")
    res, notes, _ = said(lambda: evaluate(r, t, ["ndcg@10", "recall@10"], engine="spark"))
    assert res.info["tied_users"] == tied_within(recs, 10)
    one = [n for n in notes if "ties=" in str(n.message)]
    assert len(one) == 1 and f"for {tied_within(recs, 10)} of 120 users" in str(one[0].message)
