"""receval.ope: several target policies compared on the shared rounds (paired differences, their
intervals and p-values, the correction over every difference, the Comparison the tables, figures
and report page of `runs` render), and the inputs read batch by batch from scanned Parquet."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from receval.errors import SpecError
from receval.ope import evaluate
from receval.stats import adjust
from receval.tables import render_pairs, render_table

from test_ope import _frame, _permute_and_rename, _random

pytestmark = pytest.mark.filterwarnings("ignore::receval.errors.RecevalWarning")

Z = 1.959963984540054


def _three(seed=4, n=300):
    log, target, _ = _random(seed, n=n)
    t = _frame(target)
    # "low" halves every probability (IPS halves, SNIPS does not move); "flat" is uniform
    low = t.with_columns((pl.col("propensity") * 0.5).alias("propensity"))
    flat = t.with_columns(pl.lit(0.2).alias("propensity"))
    return _frame(log), {"A": t, "low": low, "flat": flat}


def _psi_snips(w, r):
    """The delta method's influence terms of SNIPS, from the formula: (w r - V w) / mean(w)."""
    v = float(np.sum(w * r) / np.sum(w))
    return (w * r - v * w) / w.mean()


def test_paired_difference_is_the_z_test_of_the_per_round_terms():
    log, targets = _three()
    r = evaluate(log, targets, ["ips", "snips"], correction="none")
    assert [(d.estimator, d.a, d.b) for d in r.differences] == [
        ("ips", "A", "low"), ("snips", "A", "low"), ("ips", "A", "flat"), ("snips", "A", "flat"),
        ("ips", "low", "flat"), ("snips", "low", "flat")]
    d = r.differences[0]
    ta, tb = r.entry("ips", "A").terms, r.entry("ips", "low").terms
    assert d.value == pytest.approx(ta.mean() - tb.mean(), abs=1e-15)
    se = np.std(ta - tb, ddof=1) / math.sqrt(len(ta))
    assert d.high - d.value == pytest.approx(Z * se, rel=1e-9)
    assert d.p == pytest.approx(math.erfc(abs(d.value) / se / math.sqrt(2)), rel=1e-9)
    assert d.p_adjusted == d.p and d.test == "z" and d.correction == "none"
    diff = ta - tb
    assert (d.wins, d.ties, d.losses) == (int((diff > 0).sum()), int((diff == 0).sum()), int((diff < 0).sum()))
    assert d.effect == pytest.approx(diff.mean() / diff.std(ddof=1), rel=1e-9)
    # SNIPS: the delta method on the difference of the two ratios
    s = r.differences[3]
    assert s.value == pytest.approx(r.value("snips", "A") - r.value("snips", "flat"), abs=1e-15)
    mu = log["propensity"].to_numpy()
    rew = log["reward"].to_numpy()
    pis = {}
    for name in ("A", "flat"):
        j = log.join(targets[name].rename({"propensity": "pi"}), on=["context_id", "item_id"], how="left")
        pis[name] = j["pi"].fill_null(0.0).to_numpy()
    dpsi = _psi_snips(pis["A"] / mu, rew) - _psi_snips(pis["flat"] / mu, rew)
    se = np.std(dpsi, ddof=1) / math.sqrt(len(dpsi))
    assert s.high - s.value == pytest.approx(Z * se, rel=1e-9)
    assert s.p == pytest.approx(math.erfc(abs(s.value) / se / math.sqrt(2)), rel=1e-9)


def test_every_difference_corrected_together():
    log, targets = _three()
    raw = evaluate(log, targets, ["ips", "snips"], correction="none")
    for corr in ("holm", "bonferroni", "bh"):
        r = evaluate(log, targets, ["ips", "snips"], correction=corr)
        assert [d.p for d in r.differences] == [d.p for d in raw.differences]
        assert [d.p_adjusted for d in r.differences] == pytest.approx(list(adjust([d.p for d in raw.differences], corr)))
        assert {d.correction for d in r.differences} == {corr}
        assert all(f"|test:z|corr:{corr}|" in d.signature for d in r.differences)
    with pytest.raises(SpecError, match="^choose correction= one of"):
        evaluate(log, targets, ["ips"], correction="sidak")


def test_a_baseline_is_compared_with_every_other_target():
    log, targets = _three()
    r = evaluate(log, targets, ["ips"], baseline="flat")
    assert [(d.a, d.b) for d in r.differences] == [("flat", "A"), ("flat", "low")]
    assert all("|base:flat|" in d.signature for d in r.differences)
    c = r.compare()
    assert c.baseline == "flat" and len(c.pairs) == 2
    with pytest.raises(SpecError, match="^name a baseline among the targets"):
        evaluate(log, targets, ["ips"], baseline="B")


def test_bootstrap_differences_are_paired_seeded_and_free_of_row_order():
    log, targets = _three(n=150)
    kw = dict(ci="bootstrap", resamples=400, seed=3)
    r = evaluate(log, {"A": targets["A"], "low": targets["low"]}, ["ips", "snips"], **kw)
    again = evaluate(_permute_and_rename(log, 2, False),
                     {"A": _permute_and_rename(targets["A"], 3, False), "low": _permute_and_rename(targets["low"], 4, False)},
                     ["ips", "snips"], **kw)
    key = [(d.value, d.low, d.high, d.p, d.p_adjusted, d.effect, d.wins, d.ties, d.losses) for d in r.differences]
    assert key == [(d.value, d.low, d.high, d.p, d.p_adjusted, d.effect, d.wins, d.ties, d.losses) for d in again.differences]
    ips, snips = r.differences
    assert ips.test == "bootstrap" and ips.low < ips.value < ips.high and ips.low > 0  # IPS of A is twice that of low
    assert ips.p == pytest.approx(2 / 401)  # no resample at or below 0: p = 2 (1 + 0) / (1 + B)
    # halving every probability leaves SNIPS exactly where it was: every resampled difference is 0
    assert snips.value == pytest.approx(0.0, abs=1e-12) and snips.p == 1.0
    assert "|ci:bootstrap|B:400|seed:3|" in ips.signature


def test_differences_do_not_depend_on_row_order_id_spelling_or_batches():
    log, targets = _three(n=120)
    base = evaluate(log, targets, ["ips", "snips", "ips(cap=3)"])
    other = evaluate(_permute_and_rename(log, 1, True), {k: _permute_and_rename(v, 7, True) for k, v in targets.items()},
                     ["ips", "snips", "ips(cap=3)"], batches=4)

    def key(r):
        return [(d.value, d.p, d.p_adjusted, d.effect, d.wins, d.ties, d.losses) for d in r.differences]

    assert key(other) == key(base)
    for d, o in zip(base.differences, other.differences):
        assert o.low == pytest.approx(d.low, abs=1e-12) and o.high == pytest.approx(d.high, abs=1e-12)


def test_compare_gives_the_runs_comparison():
    log, targets = _three()
    r = evaluate(log, targets, ["naive", "ips", "snips"])
    c = r.compare()
    assert c.runs == ["A", "low", "flat"] and c.metrics == ["naive", "ips", "snips"] and c.unit == "rounds"
    assert c.users == 300 and c.values[("low", "ips")] == r.value("ips", "low")
    assert c.intervals[("A", "snips")].method == "delta-method" and c.intervals[("A", "ips")].method == "normal"
    t = c.pair("ips", "A", "low")
    d = r.differences[1]
    assert (t.diff, t.p, t.p_adjusted, t.ci.low, t.ci.high) == (d.value, d.p, d.p_adjusted, d.low, d.high)
    assert c.signatures["ips"].endswith(f"|tgt:prob|ci:normal|level:0.95|test:z|corr:holm|v:{r.version}")
    assert c.per_user is not None and c.per_user["A"]["ips"].to_list() == r.entry("ips", "A").terms.tolist()
    assert r.compare(per_round=False).per_user is None
    # the table of `runs`: A's IPS is twice low's on the same rounds, a significant difference: A carries low's letter b
    text = render_table(c, "markdown", ci=True)
    assert "Holm correction over 9 comparisons" in text and "same 300 rounds" in text
    row = next(line for line in text.splitlines() if line.startswith("| A"))
    assert "<sup>b" in row.split("|")[3]
    assert "W/T/L: rounds on which" in render_pairs(c, "table")


def test_one_target_has_no_difference():
    log, targets = _three()
    r = evaluate(log, targets["A"], ["ips"])
    assert r.differences == [] and r.compare().pairs == []
