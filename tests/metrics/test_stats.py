"""Paired statistics (receval.stats), several runs (receval.runs), metric@[k1,k2] specs and the
`receval runs` command: p-values and intervals against scipy and hand arithmetic, corrections,
seeds, signatures that parse back, runs evaluated on one declared user set."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as ss

import receval
from receval import SpecError, parse_signature
from receval.runs import evaluate_runs
from receval.stats import adjust, compare, effect, holm, interval, paired_p, parse_stats_signature

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
