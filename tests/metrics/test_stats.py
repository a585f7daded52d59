"""Paired statistics (receval.stats), several runs (receval.runs), metric@[k1,k2] specs and the
`receval runs` command: p-values and intervals against scipy and hand arithmetic, corrections,
seeds, signatures that parse back, runs evaluated on one declared user set.

What the statistics accept and what they say about degenerate input: resamples, seed and
level checked in one place (one-line receval errors, also from `receval runs`), no test called
significant on fewer than 2 paired users, Tukey's HSD on one user, an undefined effect size
(constant differences) in valid JSON, per-user NaNs dropped from every run alike, run names that
differ only by surrounding spaces refused.

Scores carry no ties (the default tie rule is not relied on).

Issue 34: the bootstrap intervals drawn once for every column give scipy's numbers (seeded).
"""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as ss

import receval
from receval import SpecError, parse_signature
from receval.cli import main
from receval.errors import RecevalError
from receval.runs import evaluate_runs
from receval.stats import (
    adjust,
    bootstrap_intervals,
    compare,
    effect,
    holm,
    interval,
    paired_p,
    parse_stats_signature,
    poisson_interval,
    poisson_sums,
)
from receval.tables import render_pairs, render_table

RNG = np.random.default_rng(3)
A = RNG.random(40)
B = np.clip(A - 0.1 + 0.2 * RNG.random(40), 0, 1)


def test_t_and_wilcoxon_equal_scipy():
    assert paired_p(A, B, "t") == pytest.approx(ss.ttest_rel(A, B).pvalue, rel=1e-12)
    assert paired_p(A, B, "wilcoxon") == pytest.approx(ss.wilcoxon(A - B, zero_method="wilcox").pvalue, rel=1e-12)


def test_t_by_hand():
    # d = .1 .2 0 .3 .3: mean .18, s = sqrt(.017) = .130384, t = .18 / (.130384 / sqrt 5) = 3.08697, 4 df
    a, b = np.array([0.5, 0.7, 0.2, 0.9, 0.4]), np.array([0.4, 0.5, 0.2, 0.6, 0.1])
    t = 0.18 / (np.sqrt(0.017) / np.sqrt(5))
    assert paired_p(a, b, "t") == pytest.approx(2 * ss.t.sf(t, 4), rel=1e-9)
    assert effect(a, b) == pytest.approx(0.18 / np.sqrt(0.017), rel=1e-12)


def test_permutation_test_approaches_the_exact_randomization_p():
    d = np.array([0.3, -0.1, 0.4, 0.2, 0.05, 0.25, -0.15, 0.35])
    signs = np.array(list(itertools.product([-1, 1], repeat=len(d))))
    exact = np.mean(np.abs(signs @ d) >= abs(d.sum()) - 1e-12)
    got = paired_p(d, np.zeros_like(d), "permutation", resamples=40_000, seed=1)
    assert got == pytest.approx(exact, abs=0.01)


def test_resampling_is_reproducible_from_its_seed():
    for test in ("permutation", "bootstrap"):
        p1 = paired_p(A, B, test, resamples=2000, seed=5)
        assert p1 == paired_p(A, B, test, resamples=2000, seed=5)
        assert 0 < p1 <= 1


def test_no_difference_gives_p_one():
    for test in ("t", "wilcoxon", "permutation", "bootstrap"):
        assert paired_p(A, A, test, resamples=100) == 1.0


def test_corrections_by_hand():
    p = [0.01, 0.04, 0.03, 0.2]
    assert holm(p).tolist() == pytest.approx([0.04, 0.09, 0.09, 0.2])  # x4, x3 (0.09), x2 -> max 0.09, x1
    assert adjust(p, "bonferroni").tolist() == pytest.approx([0.04, 0.16, 0.12, 0.8])
    # BH: sorted .01 .03 .04 .2 -> p*m/i = .04 .06 .0533 .2 -> running min from the top: .04 .0533 .0533 .2
    assert adjust(p, "bh").tolist() == pytest.approx([0.04, 0.16 / 3, 0.16 / 3, 0.2])
    assert adjust(p, "none").tolist() == p


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=12))
def test_adjusted_p_values_are_not_smaller(p):
    for c in ("holm", "bonferroni", "bh"):
        adj = adjust(p, c)
        assert np.all(adj >= np.asarray(p) - 1e-15) and np.all(adj <= 1)
    assert np.all(adjust(p, "bonferroni") >= adjust(p, "holm") - 1e-15)


def test_intervals_equal_scipy_and_the_t_formula():
    iv = interval(A, "t", 0.9)
    half = ss.t.ppf(0.95, len(A) - 1) * A.std(ddof=1) / np.sqrt(len(A))
    assert (iv.low, iv.high) == pytest.approx((A.mean() - half, A.mean() + half), rel=1e-12)
    for method in ("percentile", "bca"):
        iv = interval(A, method, 0.95, resamples=3000, seed=11)
        want = ss.bootstrap((A,), np.mean, n_resamples=3000, method=method, random_state=np.random.default_rng(11)).confidence_interval
        assert (iv.low, iv.high) == pytest.approx((want.low, want.high), rel=1e-12)
        assert iv.low <= A.mean() <= iv.high


def test_compare_all_pairs_and_baseline_and_one_family():
    C = np.clip(A + 0.05, 0, 1)
    pu = {"a": {"m@1": A, "m@2": A}, "b": {"m@1": B, "m@2": B}, "c": {"m@1": C, "m@2": C}}
    allp = compare(pu, test="t", ci="none", correction="bonferroni")
    assert len(allp.pairs) == 6  # 3 pairs x 2 metrics, corrected as one family of 6
    t = allp.pair("m@1", "a", "b")
    assert t.p_adjusted == pytest.approx(min(1.0, 6 * ss.ttest_rel(A, B).pvalue))
    assert (t.wins, t.ties, t.losses) == (int((A > B).sum()), int((A == B).sum()), int((A < B).sum()))
    base = compare(pu, test="t", ci="none", baseline="c")
    assert {(p.a, p.b) for p in base.pairs} == {("c", "a"), ("c", "b")}
    assert allp.best("m@1") == ["c"]
    with pytest.raises(SpecError, match="baseline"):
        compare(pu, baseline="zzz")


def test_tukey_equals_scipy():
    C = np.clip(A + 0.05, 0, 1)
    c = compare({"a": {"m": A}, "b": {"m": B}, "c": {"m": C}}, test="tukey", ci="none")
    want = ss.tukey_hsd(A, B, C).pvalue
    assert c.pair("m", "a", "c").p_adjusted == pytest.approx(want[0, 2], rel=1e-9)
    assert c.pair("m", "a", "c").correction == "tukey"


TRUTH = {"user_id": [1, 1, 2, 3, 3], "item_id": [10, 11, 20, 30, 31], "rating": [5, 3, 4, 5, 5]}
RUN_A = {"user_id": [1, 1, 2, 3], "item_id": [10, 12, 20, 31], "score": [0.9, 0.8, 0.7, 0.6]}
RUN_B = {"user_id": [1, 2, 2], "item_id": [11, 21, 20], "score": [0.5, 0.9, 0.1]}  # nothing for user 3


def test_runs_equal_separate_calls_on_one_user_set():
    r = evaluate_runs({"a": RUN_A, "b": RUN_B}, TRUTH, ["ndcg@[1,2]", "hitrate@2"])
    assert r.metrics == ["ndcg@1", "ndcg@2", "hitrate@2"]
    for name, recs in (("a", RUN_A), ("b", RUN_B)):
        assert r.results[name].values == receval.evaluate(recs, TRUTH, ["ndcg@1", "ndcg@2", "hitrate@2"]).values
    assert r.user_ids.tolist() == [1, 2, 3]
    assert r.per_user("b")["hitrate@2"].to_list() == [1.0, 1.0, 0.0]  # user 3: no list, scores 0
    assert r.arrays()["b"]["hitrate@2"].tolist() == [1.0, 1.0, 0.0]
    c = r.compare(ci="t", correction="none")
    sig = c.signatures["ndcg@2"]
    spec, dialect, _ = parse_signature(sig)  # a comparison signature parses back to its metric
    assert str(spec).startswith("ndcg(") and dialect == "standard"
    assert parse_stats_signature(sig) == {"test": "t", "correction": "none", "ci": "t", "level": 0.95,
                                          "resamples": 10000, "seed": 0, "users": "truth"}


def test_runs_read_the_truth_once(monkeypatch):
    import receval.fingerprint as fp
    import receval.inputs as inp

    calls = []
    real = inp.read_frame

    def counting(obj, what, *a, **k):
        calls.append(what)
        return real(obj, what, *a, **k)

    monkeypatch.setattr(inp, "read_frame", counting)  # the input step (receval.inputs) reads recs and truth
    monkeypatch.setattr(fp, "read_frame", counting)
    evaluate_runs({"a": RUN_A, "b": RUN_B, "c": RUN_A}, TRUTH, ["ndcg@2"])
    assert calls.count("ground truth") == 1 and calls.count("recommendations") == 3


def test_runs_refuse_what_would_misalign_users():
    with pytest.raises(SpecError, match="norecs=skip"):
        evaluate_runs({"a": RUN_A, "b": RUN_B}, TRUTH, ["ndcg@2"], norecs="skip")
    with pytest.raises(SpecError, match="non-empty"):
        evaluate_runs({}, TRUTH, ["ndcg@2"])


@pytest.mark.parametrize("bad", ["ndcg@[]", "ndcg@[5,,10]", "ndcg@[0,5]", "ndcg@[5,5]"])
def test_multi_k_refusals(bad):
    with pytest.raises(SpecError):
        receval.evaluate(RUN_A, TRUTH, [bad])


def test_cli_runs(tmp_path, capsys):
    import polars as pl

    from receval.cli import main

    pl.DataFrame(TRUTH).write_csv(tmp_path / "t.csv")
    pl.DataFrame(RUN_A).write_csv(tmp_path / "a.csv")
    pl.DataFrame(RUN_B).write_csv(tmp_path / "b.csv")
    rc = main(["runs", str(tmp_path / "t.csv"), f"a={tmp_path / 'a.csv'}", f"b={tmp_path / 'b.csv'}", "-m", "ndcg@[1,2]",
               "--resamples", "500", "--format", "markdown"])
    out = capsys.readouterr().out
    assert rc == 0 and "| ndcg@2 | a | b |" in out and "test:t|corr:holm|ci:bca|level:0.95|B:500|seed:0|userset:truth" in out
    assert main(["runs", str(tmp_path / "t.csv"), "a", "-m", "ndcg@2"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "NAME=FILE" in err


def test_poisson_bootstrap_depends_on_ids_not_row_order():
    x = np.random.default_rng(2).random(300)
    ids = np.arange(1000, 1300)
    a = interval(x, "poisson", resamples=800, seed=4, ids=ids)
    perm = np.random.default_rng(9).permutation(300)
    b = interval(x[perm], "poisson", resamples=800, seed=4, ids=ids[perm])
    assert (a.low, a.high) == pytest.approx((b.low, b.high), rel=1e-12)
    assert a.low <= x.mean() <= a.high
    assert interval(x, "poisson", resamples=800, seed=5, ids=ids) != a
    with pytest.raises(SpecError, match="user ids"):
        interval(x, "poisson")


def test_poisson_weights_have_the_poisson_law():
    from receval.stats import poisson_weights, user_hash

    w = poisson_weights(user_hash(np.arange(20_000)), 0, 20, seed=0)
    assert w.mean() == pytest.approx(1.0, abs=0.01) and w.var() == pytest.approx(1.0, abs=0.02)
    assert (w == 0).mean() == pytest.approx(np.exp(-1), abs=0.005)


A8 = np.array([0.5, 0.75, 0.25, 1.0, 0.5, 0.0, 0.25, 0.75])
B8 = np.array([0.25, 0.5, 0.5, 0.5, 0.0, 0.25, 0.0, 0.5])
PU = {"a": {"m": A8}, "b": {"m": B8}}


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
            interval(A8, "percentile", kw["level"], resamples=200)
        else:
            paired_p(A8, B8, "bootstrap", **opts)
    if "level" in kw:
        with pytest.raises(RecevalError, match=name):
            poisson_interval(np.ones(300), np.ones(300), kw["level"])
    else:
        with pytest.raises(RecevalError, match=name):
            poisson_sums(A8, np.arange(len(A8), dtype=np.uint64), **({"resamples": 200, "seed": 0} | opts))


def test_a_valid_level_is_what_the_signature_records():
    c = compare(PU, test="t", ci="none", level=0.9, resamples=100, seed=7, progress=False)
    assert "|level:0.9|B:100|seed:7|" in c.signatures["m"]


def _write(tmp_path, name, data) -> str:
    path = tmp_path / f"{name}.csv"
    pl.DataFrame(data).write_csv(path)
    return str(path)


TRUTH_4 = {"user_id": [1, 1, 2, 3, 4], "item_id": [10, 11, 20, 30, 40], "rating": [5, 3, 4, 5, 5]}
RUN_A_4 = {"user_id": [1, 1, 2, 3, 4], "item_id": [10, 12, 20, 31, 40], "score": [0.9, 0.8, 0.7, 0.6, 0.5]}
RUN_B_4 = {"user_id": [1, 2, 2, 4], "item_id": [11, 21, 20, 41], "score": [0.5, 0.9, 0.1, 0.3]}


def _runs(tmp_path, *extra, truth=TRUTH_4, a=RUN_A_4, b=RUN_B_4, metric="ndcg@2"):
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
        evaluate_runs({"a": RUN_A_4, " a": RUN_B_4}, TRUTH_4, ["ndcg@2"])
    with pytest.raises(RecevalError, match="surrounding spaces"):
        compare({"a": {"m": A8}, "a ": {"m": B8}}, progress=False)


def test_cli_run_names_that_differ_only_by_spaces_are_refused(tmp_path, capsys):
    t, fa, fb = _write(tmp_path, "t", TRUTH_4), _write(tmp_path, "a", RUN_A_4), _write(tmp_path, "b", RUN_B_4)
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


def _scipy(x, method, resamples, seed):
    res = ss.bootstrap((x,), np.mean, n_resamples=resamples, confidence_level=0.95, method=method,
                        random_state=np.random.default_rng(seed), vectorized=True, batch=max(1, (1 << 24) // len(x)))
    return res.confidence_interval.low, res.confidence_interval.high


@pytest.mark.parametrize("method", ["bca", "percentile"])
@pytest.mark.parametrize("n", [5, 60, 700])
def test_one_draw_for_every_column_gives_scipys_intervals(method, n):
    rng = np.random.default_rng(n)
    cols = [rng.integers(0, 2, n).astype(float),            # 0/1: resampled means tie the mean exactly
            rng.integers(0, 11, n) / 10,                    # precision@10-like: ties within rounding
            rng.random(n) * (rng.random(n) < 0.3),          # zero-inflated, like a top-k metric
            np.full(n, 0.25)]                               # no spread: the point
    cols.append(cols[1] - cols[2])
    got = bootstrap_intervals(cols, method, resamples=400, seed=7)
    for x, iv in zip(cols, got):
        lo, hi = (x.mean(), x.mean()) if np.all(x == x[0]) else _scipy(x, method, 400, 7)
        assert iv.low == pytest.approx(lo, rel=1e-12, abs=1e-15) and iv.high == pytest.approx(hi, rel=1e-12, abs=1e-15)
        alone = interval(x, method, resamples=400, seed=7)  # alone or beside other columns: the same to rounding
        assert (alone.low, alone.high) == pytest.approx((iv.low, iv.high), rel=1e-12, abs=1e-15)


def test_compare_draws_once_and_keeps_the_numbers():
    rng = np.random.default_rng(3)
    pu = {r: {m: rng.random(300) * (rng.random(300) < 0.4) for m in ("m@1", "m@2")} for r in ("a", "b", "c")}
    c = compare(pu, resamples=300, seed=2, progress=False)
    for (r, m), iv in c.intervals.items():
        lo, hi = _scipy(pu[r][m], "bca", 300, 2)
        assert iv.low == pytest.approx(lo, rel=1e-12) and iv.high == pytest.approx(hi, rel=1e-12)
    for t in c.pairs:
        lo, hi = _scipy(pu[t.a][t.metric] - pu[t.b][t.metric], "bca", 300, 2)
        assert t.ci.low == pytest.approx(lo, rel=1e-12) and t.ci.high == pytest.approx(hi, rel=1e-12)


@pytest.mark.parametrize("gather", [0, 1 << 30])
def test_both_ways_of_summing_the_resamples_give_scipys_intervals(monkeypatch, gather):
    """Counting (bincount x columns) and summing the drawn rows (sparse product), in parts and
    on threads, are the same numbers: scipy's, to 1e-12."""
    import receval.stats as st

    monkeypatch.setattr(st, "_GATHER_CELLS", gather)
    monkeypatch.setattr(st, "_GATHER_PART", 3 * 250 + 7)   # parts that do not divide the block
    monkeypatch.setattr(st, "_COUNT_BINS", 5 * 250 + 3)
    rng = np.random.default_rng(11)
    cols = [rng.random(250) * (rng.random(250) < 0.3), rng.integers(0, 11, 250) / 10]
    for x, iv in zip(cols, bootstrap_intervals(cols, "bca", resamples=500, seed=3)):
        lo, hi = _scipy(x, "bca", 500, 3)
        assert iv.low == pytest.approx(lo, rel=1e-12, abs=1e-15) and iv.high == pytest.approx(hi, rel=1e-12, abs=1e-15)


def test_int32_draws_are_numpys_int64_draws():
    """The resamples are drawn as int32: numpy's bounded integers below 2^32 are the same values
    (and leave the generator in the same state) whatever the integer type."""
    from receval.stats import _draw_blocks

    for n, B in ((7, 300), (1000, 17_000)):  # 1000 users: blocks of 16,777 resamples, so two blocks
        rng = np.random.default_rng(5)
        blocks = list(_draw_blocks(n, B, 5))
        assert blocks[0].dtype == np.int32
        for idx in blocks:
            assert np.array_equal(idx, rng.integers(0, n, idx.shape))
        assert sum(len(b) for b in blocks) == B


@pytest.mark.parametrize("gather", [0, 1 << 30])
def test_differences_from_the_columns_sums_give_scipys_intervals(monkeypatch, gather):
    """A difference's resampled means are its two columns' subtracted: scipy's intervals of the
    differences themselves, to 1e-12, also when the runs differ by little more than rounding
    (the resamples at the mean recomputed from the differences) or one column has no spread."""
    import receval.stats as st

    monkeypatch.setattr(st, "_GATHER_CELLS", gather)
    rng = np.random.default_rng(4)
    n = 300
    a = rng.random(n) * (rng.random(n) < 0.4)
    b = rng.integers(0, 11, n) / 10
    c = a + rng.integers(-1, 2, n) * 1e-13            # a, up to a few last bits
    flat = np.full(n, 0.5)                            # no spread of its own; its differences have some
    cols = [a, b, c, flat]
    pairs = [(0, 1), (1, 0), (0, 2), (3, 1), (2, 3)]
    for method in ("bca", "percentile"):
        got = bootstrap_intervals(cols, method, resamples=400, seed=9, differences=pairs)
        assert len(got) == len(cols) + len(pairs)
        for (i, j), iv in zip(pairs, got[len(cols):]):
            lo, hi = _scipy(cols[i] - cols[j], method, 400, 9)
            assert iv.low == pytest.approx(lo, rel=1e-12, abs=1e-15) and iv.high == pytest.approx(hi, rel=1e-12, abs=1e-15)
    with pytest.raises(Exception, match="positions"):
        bootstrap_intervals(cols, differences=[(0, 9)])
