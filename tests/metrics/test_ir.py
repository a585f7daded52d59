"""IR measures (rprecision, bpref, rbp, err, ncrr): goldens as arithmetic, the slow per-user
reference (receval/conformance/reference/ir.py) on hypothesis data with every context option, and bounds."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings

import receval
from receval import DataError, SpecError

from receval.conformance.reference.ranking import RefError
from receval.conformance.reference.ir import IR_EXTRA, IR_VALUES, reference_ir
from test_reference import contexts, datasets, spec_of


def _variants():
    out = []
    for name, axes in IR_VALUES.items():
        combos = [{}]
        for axis, values in axes.items():
            combos = [dict(c, **{axis: v}) for c in combos for v in values]
        out += [(name, c) for c in combos]
    return out + IR_EXTRA


VARIANTS = _variants()
KS = [None, 1, 2, 3, 5]


def _spec(name, opts, k):
    if k is None:
        inner = ",".join(f"{a}={v:g}" if isinstance(v, float) else f"{a}={v}" for a, v in opts.items())
        return f"{name}({inner})" if inner else name
    return spec_of(name, opts, k)


def _ks(name):
    return [None] if name == "rprecision" else KS


# ---- goldens: small hand-worked lists -------------------------------------------------------

def ranked(lists, relevant):
    recs = {"user_id": [], "item_id": [], "score": []}
    for u, items in lists.items():
        for pos, i in enumerate(items):
            recs["user_id"].append(u)
            recs["item_id"].append(i)
            recs["score"].append(100.0 - pos)
    truth = {"user_id": [], "item_id": [], "rating": []}
    for u, rel in relevant.items():
        for i, r in rel.items():
            truth["user_id"].append(u)
            truth["item_id"].append(i)
            truth["rating"].append(float(r))
    return recs, truth


def per_user(recs, truth, spec, **kw):
    pu = receval.evaluate(recs, truth, [spec], **kw).per_user()
    key = str(receval.parse_spec(spec))
    return dict(zip(pu["user_id"].to_list(), pu[key].to_list()))


# user 1: 1 2 3 4 5, relevant {2: 5, 5: 3, 9: 4}; user 2: 7 8, relevant {7: 2}; user 3: no list, relevant {1: 1}
LISTS, REL = {1: [1, 2, 3, 4, 5], 2: [7, 8], 3: []}, {1: {2: 5, 5: 3, 9: 4}, 2: {7: 2}, 3: {1: 1}}
RECS, TRUTH = ranked(LISTS, REL)


def test_rprecision_golden():
    pu = per_user(RECS, TRUTH, "rprecision")
    assert pu == {1: pytest.approx(1 / 3), 2: 1.0, 3: 0.0}  # u1: one hit (pos 2) in the first 3
    assert receval.evaluate(RECS, TRUTH, ["rprecision"])["rprecision"] == pytest.approx((1 / 3 + 1 + 0) / 3)


def test_bpref_golden():
    # rel=3: u1 R = {2, 5, 9}; no judged non-relevant (N = 0): each listed hit counts 1 → 2/3
    # judged non-relevant: give u1 truth rows for 1 and 3 with rating 1
    recs, truth = ranked(LISTS, {1: {2: 5, 5: 3, 9: 4, 1: 1, 3: 1, 4: 2}, 2: {7: 2}})
    pu = per_user(recs, truth, "bpref", rel=3)
    # u1: R = 3, N = 3 (items 1, 3, 4); hit 2 has 1 above → 1 − 1/3; hit 5 has 3 above → 1 − 3/3
    assert pu[1] == pytest.approx(((1 - 1 / 3) + (1 - 3 / 3)) / 3)
    # u2 has no relevant item at rel=3 (rating 2): skipped
    assert pu[2] is None
    # cut at 2: only hit 2 counts
    assert per_user(recs, truth, "bpref@2", rel=3)[1] == pytest.approx((1 - 1 / 3) / 3)
    # N < |R|: min(|R|, N) in the denominator; u1 with only item 1 judged non-relevant
    recs2, truth2 = ranked({1: [1, 2, 3, 4, 5]}, {1: {2: 5, 5: 3, 9: 4, 1: 1}})
    assert per_user(recs2, truth2, "bpref", rel=3)[1] == pytest.approx(((1 - 1 / 1) + (1 - 1 / 1)) / 3)
    # unjudged items (3, 4, not in the truth) are ignored


def test_rbp_golden():
    p = 0.8
    pu = per_user(RECS, TRUTH, "rbp@5")
    assert pu[1] == pytest.approx((1 - p) * (p**1 + p**4))
    assert pu[2] == pytest.approx((1 - p) * 1)
    assert pu[3] == 0.0
    # LensKit normalize=True: ideal over min(|R|, ℓ_k) positions; u2 lists 2 items, R = 1
    pu = per_user(RECS, TRUTH, "rbp(normalize=listed)@5")
    assert pu[1] == pytest.approx((p**1 + p**4) / (1 + p + p**2))
    assert pu[2] == 1.0
    # cut: ideal over min(|R|, k)
    assert per_user(RECS, TRUTH, "rbp(normalize=cut)@2")[1] == pytest.approx(p / (1 + p))
    assert per_user(RECS, TRUTH, "rbp(normalize=listed)@2")[1] == pytest.approx(p / (1 + p))
    # gain=rating: u1 hit ratings 5 (pos 2) and 3 (pos 5)
    assert per_user(RECS, TRUTH, "rbp(gain=rating,persistence=0.5)@5")[1] == pytest.approx(0.5 * (5 * 0.5 + 3 * 0.5**4))
    # no cut-off: the whole list
    assert per_user(RECS, TRUTH, "rbp")[1] == pytest.approx((1 - p) * (p**1 + p**4))


def test_err_golden():
    pu = per_user(RECS, TRUTH, "err@5")
    assert pu[1] == pytest.approx(0.5 / 2 + 0.5 * 0.5 / 5)
    assert pu[2] == pytest.approx(0.5)
    pu = per_user(RECS, TRUTH, "err(grade=rating,gmax=5)")
    r2, r5 = (2**5 - 1) / 2**5, (2**3 - 1) / 2**5
    assert pu[1] == pytest.approx(r2 / 2 + (1 - r2) * r5 / 5)
    assert pu[2] == pytest.approx((2**2 - 1) / 2**5)
    assert per_user(RECS, TRUTH, "err(grade=rating,gmax=5)@4")[1] == pytest.approx(r2 / 2)


def test_ncrr_golden():
    pu = per_user(RECS, TRUTH, "ncrr@5")
    assert pu[1] == pytest.approx((1 / 2 + 1 / 5) / (1 + 1 / 2 + 1 / 3))
    assert pu[2] == 1.0
    assert per_user(RECS, TRUTH, "ncrr@2")[1] == pytest.approx((1 / 2) / (1 + 1 / 2))
    # without a cut-off the ideal has min(ℓ, |R|) terms: u2 lists 2, R = 1
    assert per_user(RECS, TRUTH, "ncrr")[1] == pytest.approx((1 / 2 + 1 / 5) / (1 + 1 / 2 + 1 / 3))


def test_refusals():
    with pytest.raises(SpecError, match="gmax"):
        receval.evaluate(RECS, TRUTH, ["err(grade=rating)@5"])
    with pytest.raises(SpecError, match="persistence"):
        receval.evaluate(RECS, TRUTH, ["rbp(persistence=1)@5"])
    with pytest.raises(SpecError, match="binary"):
        receval.evaluate(RECS, TRUTH, ["rbp(gain=rating,normalize=cut)@5"])
    with pytest.raises(DataError, match="gmax"):
        receval.evaluate(RECS, TRUTH, ["err(grade=rating,gmax=4)@5"])
    with pytest.raises(SpecError, match="takes no cut-off"):
        receval.evaluate(RECS, TRUTH, ["rprecision@5"])
    # ties=average of bpref, err, rprecision, rbp and ncrr: tests/metrics/test_ties_average.py


def test_signature_round_trip():
    res = receval.evaluate(RECS, TRUTH, ["rbp(persistence=0.95,normalize=listed)@5", "err(grade=rating,gmax=5)@3", "bpref", "ncrr@4"])
    for spec in ("err(grade=rating,gmax=5)@3", "bpref", "ncrr@4"):
        assert res.signature(spec)
    sig = res.signature("rbp(persistence=0.95,normalize=listed)@5")
    assert "|p:0.95|norm:listed|" in sig
    from receval.signature import parse_signature

    for spec in ("rbp(persistence=0.95,normalize=listed)@5", "err(grade=rating,gmax=5)@3", "bpref", "ncrr@4"):
        parsed, _, _ = parse_signature(res.signature(spec))
        assert receval.evaluate(RECS, TRUTH, [parsed])[parsed] == res[spec]


# ---- the slow per-user reference ------------------------------------------------------------

def _check(recs, truth, ctx):
    specs, expected = {}, {}
    errors = 0
    for name, opts in VARIANTS:
        for k in _ks(name):
            spec = _spec(name, opts, k)
            specs[spec] = (name, opts, k)
    for spec, (name, opts, k) in specs.items():
        try:
            expected[spec] = reference_ir(recs, truth, name, k, {**opts, **ctx})
        except RefError:
            errors += 1
    kwargs = {a: v for a, v in ctx.items() if v is not None}
    if errors:
        bad = [s for s in specs if s not in expected]
        for s in bad:
            with pytest.raises(DataError):
                receval.evaluate(recs, truth, [s], **kwargs)
        specs = {s: v for s, v in specs.items() if s in expected}
        if not specs:
            return
    res = receval.evaluate(recs, truth, list(specs), **kwargs)
    pu = res.per_user()
    users = pu["user_id"].to_list()
    for spec in specs:
        ref_users, ref_mean = expected[spec]
        assert res[spec] == pytest.approx(ref_mean, abs=1e-12, rel=1e-12), (spec, ctx)
        col = pu[str(receval.parse_spec(spec))].to_list()
        for u, v in zip(users, col):
            want = ref_users[u]
            if want is None:
                assert v is None, (spec, u, v)
            else:
                assert v is not None and v == pytest.approx(want, abs=1e-12, rel=1e-12), (spec, ctx, u, v, want)


@settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(data=datasets(), ctx=contexts())
def test_ir_metrics_match_reference(data, ctx):
    recs, truth = data
    _check(recs, truth, ctx)


# ---- properties -------------------------------------------------------------------------------

BOUNDED = ["rprecision", "bpref", "bpref@3", "rbp@3", "rbp(normalize=listed)@3", "rbp(normalize=cut)@3",
           "err@3", "err(grade=rating,gmax=5)", "ncrr@3", "ncrr"]


@settings(max_examples=80, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(data=datasets())
def test_bounds_and_monotone_in_k(data):
    recs, truth = data
    try:
        res = receval.evaluate(recs, truth, BOUNDED + ["rbp@1", "rbp@5", "err@1", "err@5"], dup="first", tdup="first")
    except DataError:
        return
    for s in BOUNDED:
        assert 0.0 <= res[s] <= 1.0 + 1e-12, s
    # unnormalised sums only grow with k
    assert res["rbp@1"] <= res["rbp@3"] + 1e-15 <= res["rbp@5"] + 2e-15
    assert res["err@1"] <= res["err@3"] + 1e-15 <= res["err@5"] + 2e-15


def test_perfect_list_scores_one():
    recs, truth = ranked({1: [1, 2, 3]}, {1: {1: 1, 2: 1, 3: 1}})
    res = receval.evaluate(recs, truth, ["rprecision", "bpref", "rbp(normalize=cut)@3", "rbp(normalize=listed)@3", "ncrr@3"])
    for s in ("rprecision", "bpref", "rbp(normalize=cut)@3", "rbp(normalize=listed)@3", "ncrr@3"):
        assert res[s] == pytest.approx(1.0), s
    # RBP unnormalised: 1 − p^3 for three hits at the top
    assert receval.evaluate(recs, truth, ["rbp@3"])["rbp@3"] == pytest.approx(1 - 0.8**3)
    # ERR of three binary hits: 1/2 + 1/2·1/4 + 1/3·1/8
    assert receval.evaluate(recs, truth, ["err@3"])["err@3"] == pytest.approx(0.5 + 0.125 + 1 / 24)
    assert math.isfinite(receval.evaluate(recs, truth, ["bpref"])["bpref"])
