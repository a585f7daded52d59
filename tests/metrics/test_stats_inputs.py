"""What the statistics accept and what they say about degenerate input: resamples, seed and
level checked in one place (one-line receval errors, also from `receval runs`), no test called
significant on fewer than 2 paired users, Tukey's HSD on one user, an undefined effect size
(constant differences) in valid JSON, per-user NaNs dropped from every run alike, run names that
differ only by surrounding spaces refused.

Scores carry no ties (the default tie rule is not relied on)."""

from __future__ import annotations

import json
import math

import numpy as np
import polars as pl
import pytest

from receval.cli import main
from receval.errors import RecevalError
from receval.runs import evaluate_runs
from receval.stats import adjust, compare, effect, interval, paired_p, poisson_interval, poisson_sums
from receval.tables import render_pairs, render_table

A = np.array([0.5, 0.75, 0.25, 1.0, 0.5, 0.0, 0.25, 0.75])
B = np.array([0.25, 0.5, 0.5, 0.5, 0.0, 0.25, 0.0, 0.5])
PU = {"a": {"m": A}, "b": {"m": B}}


def strict_json(text: str):
    """JSON as the standard defines it: NaN and Infinity tokens are refused."""
    def refuse(token):
        raise AssertionError(f"{token} is not JSON")

    return json.loads(text, parse_constant=refuse)


BAD = [
    ({"resamples": 0}, "`resamples`"),
    ({"resamples": -5}, "`resamples`"),
    ({"resamples": 1}, "`resamples`"),  # a BCa interval of 1 resample is NaN
    ({"resamples": 1.5}, "`resamples`"),
    ({"resamples": True}, "`resamples`"),
    ({"seed": -1}, "`seed`"),
    ({"seed": 1.5}, "`seed`"),
    ({"seed": 2**64}, "`seed`"),
    ({"level": 1.5}, "`level`"),
    ({"level": 95}, "`level`"),
    ({"level": -0.5}, "`level`"),
    ({"level": float("nan")}, "`level`"),
    ({"level": True}, "`level`"),
]


@pytest.mark.parametrize("kw,name", BAD)
@pytest.mark.parametrize("ci", ["bca", "none"])
def test_bad_statistics_options_are_receval_errors_naming_the_option(kw, name, ci):
    with pytest.raises(RecevalError, match=name) as err:
        compare(PU, test="permutation", ci=ci, progress=False, **kw)
    assert "\n" not in str(err.value) and "got" in str(err.value)


@pytest.mark.parametrize("kw,name", BAD)
def test_every_entry_point_checks_the_same_way(kw, name):
    opts = {k: v for k, v in kw.items() if k in ("resamples", "seed")}
    with pytest.raises(RecevalError, match=name):
        if "level" in kw:
            interval(A, "percentile", kw["level"], resamples=200)
        else:
            paired_p(A, B, "bootstrap", **opts)
    if "level" in kw:
        with pytest.raises(RecevalError, match=name):
            poisson_interval(np.ones(300), np.ones(300), kw["level"])
    else:
        with pytest.raises(RecevalError, match=name):
            poisson_sums(A, np.arange(len(A), dtype=np.uint64), **({"resamples": 200, "seed": 0} | opts))


def test_a_valid_level_is_what_the_signature_records():
    c = compare(PU, test="t", ci="none", level=0.9, resamples=100, seed=7, progress=False)
    assert "|level:0.9|B:100|seed:7|" in c.signatures["m"]


def _write(tmp_path, name, data) -> str:
    path = tmp_path / f"{name}.csv"
    pl.DataFrame(data).write_csv(path)
    return str(path)


TRUTH = {"user_id": [1, 1, 2, 3, 4], "item_id": [10, 11, 20, 30, 40], "rating": [5, 3, 4, 5, 5]}
RUN_A = {"user_id": [1, 1, 2, 3, 4], "item_id": [10, 12, 20, 31, 40], "score": [0.9, 0.8, 0.7, 0.6, 0.5]}
RUN_B = {"user_id": [1, 2, 2, 4], "item_id": [11, 21, 20, 41], "score": [0.5, 0.9, 0.1, 0.3]}


def _runs(tmp_path, *extra, truth=TRUTH, a=RUN_A, b=RUN_B, metric="ndcg@2"):
    t, fa, fb = _write(tmp_path, "t", truth), _write(tmp_path, "a", a), _write(tmp_path, "b", b)
    return main(["runs", t, f"a={fa}", f"b={fb}", "-m", metric, *extra])


@pytest.mark.parametrize("args,name", [
    (["--resamples", "0"], "resamples"),
    (["--resamples", "-3", "--ci", "none", "--test", "permutation"], "resamples"),
    (["--seed", "-1"], "seed"),
    (["--level", "95", "--ci", "none"], "level"),
    (["--level", "1.5", "--ci", "none"], "level"),
])
def test_cli_bad_statistics_options_are_one_line_errors(tmp_path, capsys, args, name):
    rc = _runs(tmp_path, *args)
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err
    assert err.strip().count("\n") == 0 and err.startswith("receval: error: ") and f"`{name}`" in err


ONE_USER = {"a": {"m": np.array([1.0])}, "b": {"m": np.array([0.0])}}


@pytest.mark.parametrize("test", ["t", "wilcoxon", "permutation", "bootstrap"])
def test_no_test_is_significant_on_fewer_than_two_paired_users(test):
    assert math.isnan(paired_p(np.array([1.0]), np.array([0.0]), test, resamples=200))
    assert math.isnan(paired_p(np.array([]), np.array([]), test, resamples=200))
    c = compare(ONE_USER, test=test, ci="none", correction="holm", resamples=200, progress=False)
    (t,) = c.pairs
    assert math.isnan(t.p) and math.isnan(t.p_adjusted) and "fewer than 2" in t.note
    pairs = strict_json(render_pairs(c, "json"))
    assert pairs[0]["p"] is None and pairs[0]["significant"] == "no"
    doc = strict_json(render_table(c, "json"))
    assert doc["pairs"][0]["significant"] is False and "fewer than 2" in doc["pairs"][0]["note"]


def test_tukey_on_one_user_is_not_available_and_does_not_crash():
    c = compare({**ONE_USER, "c": {"m": np.array([0.5])}}, test="tukey", ci="none", progress=False)
    assert len(c.pairs) == 3
    for t in c.pairs:
        assert math.isnan(t.p) and math.isnan(t.p_adjusted) and "fewer than 2" in t.note
    strict_json(render_table(c, "json"))


def test_cli_one_paired_user_reports_no_significance(tmp_path, capsys):
    truth = {"user_id": [1], "item_id": [10], "rating": [5]}
    a = {"user_id": [1, 1], "item_id": [10, 11], "score": [0.9, 0.8]}
    b = {"user_id": [1, 1], "item_id": [11, 10], "score": [0.9, 0.8]}
    for test in ("bootstrap", "tukey"):
        rc = _runs(tmp_path, "--test", test, "--resamples", "200", "--format", "json", truth=truth, a=a, b=b)
        out = capsys.readouterr()
        assert rc == 0 and "Traceback" not in out.err
        doc = strict_json(out.out)
        assert doc["users"] == 1
        assert all(p["p"] is None and p["significant"] is False for p in doc["pairs"])


def test_adjust_leaves_unavailable_p_values_out_of_the_family():
    got = adjust([0.01, math.nan, 0.04], "holm")
    assert got[0] == pytest.approx(0.02) and math.isnan(got[1]) and got[2] == pytest.approx(0.04)
    got = adjust([0.01, math.nan, 0.04], "bonferroni")
    assert got[0] == pytest.approx(0.02) and math.isnan(got[1]) and got[2] == pytest.approx(0.08)
    got = adjust([0.01, math.nan, 0.04], "bh")  # a family of 2: .01 x 2/1, .04 x 2/2
    assert got[0] == pytest.approx(0.02) and math.isnan(got[1]) and got[2] == pytest.approx(0.04)


def test_constant_difference_has_an_undefined_effect_and_valid_json():
    a = np.array([1.0, 0.5, 0.75, 0.25, 0.5])
    assert math.isnan(effect(a, a - 0.25))  # every user moves by 0.25: d / sd is undefined
    assert effect(a, a) == 0.0
    c = compare({"a": {"m": a}, "b": {"m": a - 0.25}}, test="t", ci="t", progress=False)
    assert math.isnan(c.pair("m", "a", "b").effect)
    for text in (render_table(c, "json"), render_pairs(c, "json")):
        strict_json(text)
    assert strict_json(render_pairs(c, "json"))[0]["effect"] is None
    assert "–" in render_pairs(c, "markdown")


def test_cli_json_with_a_constant_difference(tmp_path, capsys):
    # a's first item is relevant for every user, b's never: hitrate differs by 1 for every user
    truth = {"user_id": [1, 2, 3], "item_id": [10, 20, 30], "rating": [5, 5, 5]}
    a = {"user_id": [1, 2, 3], "item_id": [10, 20, 30], "score": [0.9, 0.8, 0.7]}
    b = {"user_id": [1, 1, 2, 2, 3, 3], "item_id": [11, 10, 21, 20, 31, 30], "score": [0.9, 0.8, 0.7, 0.6, 0.5, 0.4]}
    rc = _runs(tmp_path, "--ci", "t", "--format", "json", truth=truth, a=a, b=b, metric="hitrate@1")
    out = capsys.readouterr()
    assert rc == 0 and "Traceback" not in out.err
    doc = strict_json(out.out)
    assert doc["pairs"][0]["diff"] == 1.0 and doc["pairs"][0]["effect"] is None


def test_per_user_nans_are_dropped_from_every_run_and_counted(tmp_path, capsys):
    a = np.array([0.5, np.nan, 0.25, 0.75, 1.0, 0.0, 0.5])
    b = np.array([0.25, 0.5, 0.5, np.nan, 0.75, 0.25, 0.0])
    keep = ~(np.isnan(a) | np.isnan(b))
    c = compare({"a": {"m": a}, "b": {"m": b}}, test="t", ci="t", progress=False)
    assert c.users == 5 and c.dropped == 2
    assert c.values[("a", "m")] == pytest.approx(a[keep].mean()) and c.values[("b", "m")] == pytest.approx(b[keep].mean())
    assert c.intervals[("a", "m")] == interval(a[keep], "t")
    text = render_table(c, "markdown")
    assert "the same 5 users" in text and "2 of 7 dropped (no value in some run or metric)" in text
    # through the command line: user 3 has a value in neither run, user 4 none in run b
    truth = {"user_id": [1, 2, 3, 4, 4, 5], "item_id": [10, 20, 30, 40, 41, 50], "rating": [5, 5, 2, 5, 5, 5]}
    ra = {"user_id": [1, 1, 2, 2, 3, 3, 4, 4, 4, 5, 5], "item_id": [10, 11, 21, 20, 30, 31, 40, 42, 43, 51, 50],
          "score": [0.9, 0.8, 0.9, 0.8, 0.9, 0.8, 0.9, 0.8, 0.7, 0.9, 0.8]}
    rb = {"user_id": [1, 1, 2, 2, 3, 4, 5, 5], "item_id": [11, 10, 20, 22, 31, 40, 50, 52],
          "score": [0.9, 0.8, 0.9, 0.8, 0.9, 0.9, 0.9, 0.8]}
    rc = _runs(tmp_path, "--ci", "none", "--format", "markdown", truth=truth, a=ra, b=rb,
               metric="pauc(insufficient=exclude)@2")
    out = capsys.readouterr().out
    assert rc == 0 and "the same 3 users" in out and "2 of 5 dropped (no value in some run or metric)" in out
    assert "paired:3/5|dropped:novalue" in out


def test_run_names_that_differ_only_by_spaces_are_refused():
    with pytest.raises(RecevalError, match="surrounding spaces"):
        evaluate_runs({"a": RUN_A, " a": RUN_B}, TRUTH, ["ndcg@2"])
    with pytest.raises(RecevalError, match="surrounding spaces"):
        compare({"a": {"m": A}, "a ": {"m": B}}, progress=False)


def test_cli_run_names_that_differ_only_by_spaces_are_refused(tmp_path, capsys):
    t, fa, fb = _write(tmp_path, "t", TRUTH), _write(tmp_path, "a", RUN_A), _write(tmp_path, "b", RUN_B)
    rc = main(["runs", t, f"a={fa}", f" a={fb}", "-m", "ndcg@2", "--ci", "none", "--format", "json"])
    out = capsys.readouterr()
    assert rc == 2 and "Traceback" not in out.err and ("twice" in out.err or "spaces" in out.err)


def test_dialect_comparison_json_has_no_nan_or_infinity_tokens():
    from receval.compare import Comparison as DialectComparison
    from receval.compare import render_comparison

    frame = pl.DataFrame({"dialect": ["standard", "x@1"], "library": ["receval", "x"], "version": ["standard", "1"],
                          "m@1": [math.inf, math.nan]})
    doc = strict_json(render_comparison(DialectComparison(frame=frame, metrics=["m@1"]), "json"))
    assert [r["values"]["m@1"] for r in doc] == [None, None]
