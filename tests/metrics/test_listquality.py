"""List quality (filled, unrepeated, covered, intersection), serendipity, catdiv, srecall and
miscalibration: goldens as arithmetic, the slow reference (receval/conformance/reference/lists.py), bounds."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import receval
from receval import DataError, SpecError

from receval.conformance.reference.ranking import RefError
from receval.conformance.reference.lists import reference_lists
from test_reference import contexts, datasets

RECS = {"user_id": [1, 1, 1, 2], "item_id": [10, 20, 10, 30], "score": [3.0, 2.0, 1.0, 1.0]}
TRUTH = {"user_id": [1, 2, 3], "item_id": [10, 30, 10]}   # user 3 has no recommendations
CATS = {"item_id": [10, 20, 30, 30], "category": ["a", "b", "a", "c"]}
TRAIN = {"user_id": [1, 1, 2, 2, 3], "item_id": [10, 20, 10, 30, 10]}


def per(spec, **kw):
    res = receval.evaluate(RECS, TRUTH, [spec], **kw)
    col = res.per_user()[str(receval.parse_spec(spec))].to_list()
    return dict(zip(res.per_user()["user_id"].to_list(), col)), res[spec]


def test_list_quality_goldens():
    assert per("filled@3", dup="keep")[0] == {1: 1.0, 2: 0.0, 3: 0.0}
    assert per("filled(form=share)@3", dup="keep")[0] == pytest.approx({1: 1.0, 2: 1 / 3, 3: 0.0})
    assert per("unrepeated@3", dup="keep")[0] == {1: 0.0, 2: 1.0, 3: 0.0}
    assert per("unrepeated(form=share)@3", dup="keep")[0] == pytest.approx({1: 2 / 3, 2: 1.0, 3: 0.0})
    assert per("unrepeated@2", dup="keep")[0][1] == 1.0
    assert per("covered@3", dup="first")[1] == pytest.approx(2 / 3)
    # norecs=skip leaves user 3 out of filled, never out of covered
    assert per("filled@2", dup="first", norecs="skip")[1] == pytest.approx((1 + 0) / 2)
    assert per("covered@2", dup="first", norecs="skip")[1] == pytest.approx(2 / 3)


def test_intersection_golden():
    base = {"user_id": [1, 1, 2], "item_id": [20, 40, 50], "score": [2.0, 1.0, 1.0]}
    v = per("intersection@2", dup="first", baseline=base)[0]
    assert v == {1: 1 / 2, 2: 0.0, 3: 0.0}
    v = per("intersection(refk=1)@1", dup="first", baseline=base)[0]
    assert v[1] == 0.0


def test_serendipity_golden():
    # train rows: 10 → 3 (π 1), 20 → 1, 30 → 1 (π 2); catalogue = train items, n = 3
    v = per("serendipity@2", dup="first", train=TRAIN)[0]
    # user 1: hit 10 at 1: max(3/3 − 3/3, 0) = 0; user 2: hit 30 at 1: 3/3 − 2/3
    assert v[1] == 0.0 and v[2] == pytest.approx((1 / 3) / 1)   # user 2 lists one item
    assert per("serendipity(denominator=k)@2", dup="first", train=TRAIN)[0][2] == pytest.approx((1 / 3) / 2)


def test_catdiv_srecall_golden():
    v = per("catdiv@3", dup="first", categories=CATS)[0]
    assert v[1] == pytest.approx(2 / 2) and v[2] == pytest.approx(2 / 1)   # user 2: item 30 has a and c
    assert per("catdiv(denominator=k)@3", dup="first", categories=CATS)[0][2] == pytest.approx(2 / 3)
    # srecall: user 2 relevant {30} with {a, c}: both found
    assert per("srecall@2", dup="first", categories=CATS)[0] == {1: 1.0, 2: 1.0, 3: 0.0}


def test_miscalibration_golden():
    # user 1: history {10: a, 20: b} → p = (a ½, b ½); list top 2 {10, 20} → q = p → 0
    v = per("miscalibration@2", dup="first", categories=CATS, train=TRAIN)[0]
    assert v[1] == pytest.approx(0.0, abs=1e-15)
    # user 2: history {10: a, 30: a, c} → p = (a ¾, c ¼); list {30} → q = (a ½, c ½)
    qa, qc = 0.99 * 0.5 + 0.01 * 0.75, 0.99 * 0.5 + 0.01 * 0.25
    assert v[2] == pytest.approx(0.75 * math.log(0.75 / qa) + 0.25 * math.log(0.25 / qc))
    # alpha named in the signature
    res = receval.evaluate(RECS, TRUTH, ["miscalibration(alpha=0.1)@2"], dup="first", categories=CATS, train=TRAIN)
    assert "|alpha:0.1|" in res.signature("miscalibration(alpha=0.1)@2")


def test_refusals():
    with pytest.raises(SpecError, match="dup=keep"):
        receval.evaluate(RECS, TRUTH, ["unrepeated@3"], dup="first")
    with pytest.raises(DataError, match="baseline="):
        receval.evaluate(RECS, TRUTH, ["intersection@3"], dup="first")
    with pytest.raises(DataError, match="categories"):
        receval.evaluate(RECS, TRUTH, ["catdiv@3"], dup="first")
    with pytest.raises(SpecError, match="alpha"):
        receval.evaluate(RECS, TRUTH, ["miscalibration(alpha=0)@3"], dup="first", categories=CATS, train=TRAIN)


VARIANTS = [
    ("filled", {}), ("filled", {"form": "share"}), ("unrepeated", {}), ("unrepeated", {"form": "share"}),
    ("covered", {}), ("intersection", {}), ("intersection", {"refk": 2.0}), ("serendipity", {}), ("serendipity", {"denominator": "k"}),
    ("catdiv", {}), ("catdiv", {"denominator": "k"}), ("srecall", {}), ("miscalibration", {}),
    ("miscalibration", {"alpha": 0.2}),
]


def _spec(name, opts, k):
    inner = ",".join(f"{a}={v:g}" if isinstance(v, float) else f"{a}={v}" for a, v in opts.items())
    return f"{name}({inner})@{k}" if inner else f"{name}@{k}"


@st.composite
def sides(draw, recs, truth):
    items = sorted(set(recs["item_id"]) | set(truth["item_id"]), key=str)
    users = sorted(set(truth["user_id"]), key=str)
    n = draw(st.integers(1, 12))
    train = {"user_id": draw(st.lists(st.sampled_from(users), min_size=n, max_size=n)),
             "item_id": draw(st.lists(st.sampled_from(items), min_size=n, max_size=n))}
    nc = draw(st.integers(1, 10))
    categories = {"item_id": draw(st.lists(st.sampled_from(items), min_size=nc, max_size=nc)),
                  "category": draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=nc, max_size=nc))}
    nb = draw(st.integers(0, 8))
    baseline = {"user_id": draw(st.lists(st.sampled_from(users), min_size=nb, max_size=nb)),
                "item_id": draw(st.lists(st.sampled_from(items), min_size=nb, max_size=nb)),
                "score": draw(st.lists(st.sampled_from([0.1, 0.2, 0.3]), min_size=nb, max_size=nb))}
    return train, items, baseline, categories


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(data=datasets(), ctx=contexts(), d=st.data())
def test_match_reference(data, ctx, d):
    recs, truth = data
    if ctx["ties"] == "optimistic":
        ctx = dict(ctx, ties="input")
    if not isinstance(truth["user_id"][0], type(recs["user_id"][0])):
        return
    train, catalog, baseline, categories = d.draw(sides(recs, truth))
    side = dict(train=train, catalog=catalog, baseline=baseline, categories=categories)
    kwargs = {a: v for a, v in ctx.items() if v is not None}
    for name, opts in VARIANTS:
        for k in (1, 3, 5):
            spec = _spec(name, opts, k)
            try:
                want_u, want = reference_lists(recs, truth, name, k, {**opts, **ctx}, **side)
            except RefError:
                with pytest.raises((DataError, SpecError)):
                    receval.evaluate(recs, truth, [spec], **side, **kwargs)
                continue
            res = receval.evaluate(recs, truth, [spec], **side, **kwargs)
            assert res[spec] == pytest.approx(want, abs=1e-12, rel=1e-12), (spec, ctx)
            p = res.per_user()
            for u, v in zip(p["user_id"].to_list(), p[str(receval.parse_spec(spec))].to_list()):
                w = want_u[u]
                assert (v is None) if w is None else v == pytest.approx(w, abs=1e-12, rel=1e-12), (spec, ctx, u, v, w)


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(data=datasets(), d=st.data())
def test_bounds(data, d):
    recs, truth = data
    if not isinstance(truth["user_id"][0], type(recs["user_id"][0])):
        return
    train, catalog, baseline, categories = d.draw(sides(recs, truth))
    specs = ["filled@5", "filled(form=share)@5", "unrepeated@5", "unrepeated(form=share)@5", "covered@5",
             "intersection@5", "serendipity@5", "catdiv(denominator=k)@5", "srecall@5"]
    try:
        res = receval.evaluate(recs, truth, specs + ["miscalibration@5"], train=train, catalog=catalog, baseline=baseline,
                               categories=categories, dup="keep", tdup="first")
    except DataError:
        return
    for s in specs:
        assert -1e-12 <= res[s] <= 1 + 1e-12, s
    # smoothing bounds the KL by ln(1/α)
    assert -1e-12 <= res["miscalibration@5"] <= math.log(1 / 0.01) + 1e-9
