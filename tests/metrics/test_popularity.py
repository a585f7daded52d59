"""Popularity metrics (arp, aplt, aclt, popreo, poprsp, epc, efd, surprisal, unexpectedness):
goldens as arithmetic, the slow reference (receval/conformance/reference/pop.py) on hypothesis data, bounds."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import receval
from receval import DataError, SpecError

from receval.conformance.reference.ranking import RefError
from receval.conformance.reference.pop import reference_pop
from test_reference import contexts, datasets

TRAIN = {"user_id": [1, 2, 3, 4, 1, 1, 5], "item_id": [10, 10, 10, 10, 20, 20, 30]}
# φ rows: 10 → 4, 20 → 2, 30 → 1; φ users: 10 → 4, 20 → 1, 30 → 1; |U_tr| = 5; 7 rows
RECS = {"user_id": [1, 1, 1, 2], "item_id": [10, 20, 30, 30], "score": [3.0, 2.0, 1.0, 1.0]}
TRUTH = {"user_id": [1, 2, 2], "item_id": [30, 10, 30]}


def _swap(d):  # rename item 20 <-> 30
    return {k: ([{20: 30, 30: 20}.get(i, i) for i in v] if k == "item_id" else v) for k, v in d.items()}


def pu(spec, swap=False, **kw):
    recs, truth, train = (_swap(RECS), _swap(TRUTH), _swap(TRAIN)) if swap else (RECS, TRUTH, TRAIN)
    res = receval.evaluate(recs, truth, [spec], train=train, **kw)
    key = str(receval.parse_spec(spec))
    if key not in res.per_user().columns:  # an aggregate metric
        return None, res[spec]
    col = res.per_user()[key].to_list()
    return dict(zip(res.per_user()["user_id"].to_list(), col)), res[spec]


def test_arp_golden():
    v, mean = pu("arp@3")
    assert v == {1: (4 + 2 + 1) / 3, 2: 1 / 1}
    assert pu("arp(count=users)@3")[0] == {1: (4 + 1 + 1) / 3, 2: 1.0}
    assert pu("arp(denominator=k)@3")[0] == {1: (4 + 2 + 1) / 3, 2: 1 / 3}
    assert pu("arp(scale=share)@2")[0][1] == pytest.approx((4 / 7 + 2 / 7) / 2)


def test_long_tail_splits_golden():
    # interactions (rows): order 10 (4), 20 (2), 30 (1) of 7; 0.8·7 = 5.6: head {10, 20} (4 + 2 ≥ 5.6), tail {30}
    assert pu("aplt@3")[0] == {1: 1 / 3, 2: 1.0}
    assert pu("aclt@3")[0] == {1: 1.0, 2: 1.0}
    # users: 10 (4), 20 (1), 30 (1) of 6; 4.8: head {10, 20}, and 30 is as popular as 20:
    # boundary=level (the default) puts it in the head too (empty tail); boundary=id breaks the
    # tie by item id (Elliot, RecBole): tail {30}
    assert pu("aplt(count=users)@3")[0] == {1: 0.0, 2: 0.0}
    assert pu("aplt(count=users,boundary=id)@3")[0] == {1: 1 / 3, 2: 1.0}
    # renaming 20 <-> 30 changes the id rule's split, never the level rule's
    assert pu("aplt(count=users)@3", swap=True)[0] == {1: 0.0, 2: 0.0}
    # items: max(⌊0.1·3⌋, 1) = 1 least popular: {30}; cut=0.7: ⌊2.1⌋ = 2: {30, 20}
    assert pu("aplt(split=items)@3")[0] == {1: 1 / 3, 2: 1.0}
    assert pu("aplt(split=items,cut=0.7)@3")[0] == {1: 2 / 3, 2: 1.0}
    # count: φ ≤ 2 → {20, 30}; denominator=k for user 2 (one item)
    assert pu("aplt(split=count,cut=2,denominator=k)@3")[0] == {1: 2 / 3, 2: 1 / 3}
    # head share 0.5: 3.5 → head {10}
    assert pu("aclt(cut=0.5)@3")[0] == {1: 2.0, 2: 1.0}


def test_popreo_poprsp_golden():
    # split: head {10, 20}, tail {30}. REO: R_1 = {30}, R_2 = {10, 30}: |R ∩ H| = 1, |R ∩ Γ| = 2
    # hits in top 3: user 1 30 (tail), user 2 30 (tail): P_H = 0/1, P_Γ = 2/2 → |0 − 1| / 1
    assert pu("popreo@3")[1] == 1.0
    # RSP: recommended head items 10, 20 (user 1) = 2, tail 30 twice = 2
    # Σ_u |H \ I_u|: user 1 saw 10, 20 → 0; user 2 saw 10 → 1: total 1; tail: user 1 2−... 30 unseen by 1 and 2 → 2
    p_h, p_t = 2 / 1, 2 / 2
    mean = (p_h + p_t) / 2
    assert pu("poprsp@3")[1] == pytest.approx(math.sqrt(((p_h - mean) ** 2 + (p_t - mean) ** 2) / 2) / mean)
    # users=listed (Elliot): a truth user without a list drops out of both sums
    truth = {"user_id": [1, 2, 2, 9], "item_id": [30, 10, 30, 20]}   # user 9: no list, relevant 20 (head)
    reo_all = receval.evaluate(RECS, truth, ["popreo@3"], train=TRAIN)["popreo@3"]
    reo_listed = receval.evaluate(RECS, truth, ["popreo(users=listed)@3"], train=TRAIN)["popreo(users=listed)@3"]
    assert reo_listed == 1.0   # P_H = 0/1, P_Γ = 2/2
    assert reo_all == 1.0      # P_H = 0/2: still 0 against P_Γ = 1
    rsp_listed = receval.evaluate(RECS, truth, ["poprsp(users=listed)@3"], train=TRAIN)["poprsp(users=listed)@3"]
    assert rsp_listed == pytest.approx(math.sqrt(((p_h - mean) ** 2 + (p_t - mean) ** 2) / 2) / mean)


def test_epc_efd_surprisal_golden():
    d2, d3 = 1 / math.log2(3), 1 / math.log2(4)
    # user 1: hit 30 at 3 (φ_users 1); user 2: hit 30 at 1
    v = pu("epc@3")[0]
    assert v[1] == pytest.approx(d3 * (1 - 1 / 5) / (1 + d2 + d3))
    assert v[2] == pytest.approx(1 - 1 / 5)
    v = pu("efd(relevance=any,discount=none)@3")[0]
    assert v[1] == pytest.approx((-math.log2(4 / 5) - math.log2(1 / 5) - math.log2(1 / 5)) / 3)
    v = pu("surprisal(denominator=k)@3")[0]
    w = lambda p: math.log2(5 / p) / math.log2(5)  # noqa: E731
    assert v[1] == pytest.approx((w(4) + w(1) + w(1)) / 3)
    assert v[2] == pytest.approx(w(1) / 3)


def test_unexpectedness_golden():
    base = {"user_id": [1, 1, 1], "item_id": [30, 40, 10], "rank": [1, 2, 3]}
    res = receval.evaluate(RECS, TRUTH, ["unexpectedness@2", "unexpectedness@3"], baseline=base)
    per = res.per_user()
    # @2: recs {10, 20}, base {30, 40} → 1; @3: {10, 20, 30} ∩ {30, 40, 10} = 2 → 1 − 2/3; user 2 has no baseline → 0
    assert per[str(receval.parse_spec("unexpectedness@2"))].to_list() == [1.0, 0.0]
    assert per[str(receval.parse_spec("unexpectedness@3"))].to_list() == pytest.approx([1 - 2 / 3, 0.0])


def test_refusals():
    with pytest.raises(DataError, match="train"):
        receval.evaluate(RECS, TRUTH, ["arp@3"])
    with pytest.raises(DataError, match="baseline="):
        receval.evaluate(RECS, TRUTH, ["unexpectedness@3"])
    with pytest.raises(SpecError, match="cut=N"):
        receval.evaluate(RECS, TRUTH, ["aplt(split=count)@3"], train=TRAIN)
    with pytest.raises(SpecError, match="cut"):
        receval.evaluate(RECS, TRUTH, ["aplt(cut=2)@3"], train=TRAIN)
    with pytest.raises(DataError, match="catalogue"):
        receval.evaluate(RECS, TRUTH, ["aplt@3"], train=TRAIN, catalog=[10, 20])


def test_signature_names_the_split():
    res = receval.evaluate(RECS, TRUTH, ["aplt@3"], train=TRAIN)
    sig = res.signature("aplt@3")
    assert "|split:interactions|cut:0.8|" in sig and "|count:rows|" in sig
    from receval.signature import parse_signature

    spec, _, _ = parse_signature(sig)
    assert receval.evaluate(RECS, TRUTH, [spec], train=TRAIN)[spec] == res["aplt@3"]


# ---- the slow reference -----------------------------------------------------------------------

VARIANTS = [
    ("arp", {}), ("arp", {"count": "users", "denominator": "k"}), ("arp", {"scale": "share"}),
    ("aplt", {}), ("aplt", {"count": "users", "denominator": "k"}), ("aplt", {"split": "items"}),
    ("aplt", {"split": "items", "cut": 0.5}), ("aplt", {"split": "count", "cut": 1.0}),
    ("aclt", {}), ("aclt", {"split": "count", "cut": 2.0}), ("aclt", {"cut": 0.5}),
    ("epc", {}), ("epc", {"discount": "none", "relevance": "any"}), ("efd", {}), ("efd", {"relevance": "any"}),
    ("surprisal", {}), ("surprisal", {"denominator": "k"}), ("unexpectedness", {}), ("unseen", {}),
    ("popreo", {}), ("popreo", {"split": "items", "cut": 0.5}), ("poprsp", {}), ("poprsp", {"count": "users"}),
    ("popreo", {"users": "listed"}), ("poprsp", {"users": "listed", "count": "users"}),
]


def _spec(name, opts, k):
    inner = ",".join(f"{a}={v:g}" if isinstance(v, float) else f"{a}={v}" for a, v in opts.items())
    return f"{name}({inner})@{k}" if inner else f"{name}@{k}"


@st.composite
def side_inputs(draw, recs, truth):
    items = sorted(set(recs["item_id"]) | set(truth["item_id"]), key=str)
    users = sorted(set(truth["user_id"]), key=str)
    n = draw(st.integers(2, 12))
    tu = draw(st.lists(st.sampled_from(users + ["x1", "x2"] if isinstance(users[0], str) else users + [991, 992]), min_size=n, max_size=n))
    ti = draw(st.lists(st.sampled_from(items), min_size=n, max_size=n))
    train = {"user_id": tu, "item_id": ti}
    catalog = items if draw(st.booleans()) else None
    nb = draw(st.integers(0, 8))
    baseline = {"user_id": draw(st.lists(st.sampled_from(users), min_size=nb, max_size=nb)),
                "item_id": draw(st.lists(st.sampled_from(items), min_size=nb, max_size=nb)),
                "score": draw(st.lists(st.sampled_from([0.1, 0.2, 0.3]), min_size=nb, max_size=nb))}
    return train, catalog, baseline


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(data=datasets(), ctx=contexts(), d=st.data())
def test_popularity_metrics_match_reference(data, ctx, d):
    recs, truth = data
    if ctx["ties"] == "optimistic":
        ctx = dict(ctx, ties="input")  # shared positions are not lists
    if not isinstance(truth["user_id"][0], type(recs["user_id"][0])):
        return
    train, catalog, baseline = d.draw(side_inputs(recs, truth))
    kwargs = {a: v for a, v in ctx.items() if v is not None}
    for name, opts in VARIANTS:
        for k in (1, 3, 5):
            spec = _spec(name, opts, k)
            try:
                ref_users, ref_mean = reference_pop(recs, truth, name, k, {**opts, **ctx}, train=train, catalog=catalog, baseline=baseline)
            except RefError:
                with pytest.raises((DataError, SpecError)):
                    receval.evaluate(recs, truth, [spec], train=train, catalog=catalog, baseline=baseline, **kwargs)
                continue
            res = receval.evaluate(recs, truth, [spec], train=train, catalog=catalog, baseline=baseline, **kwargs)
            assert res[spec] == pytest.approx(ref_mean, abs=1e-12, rel=1e-12), (spec, ctx)
            if ref_users is None:
                continue
            per = res.per_user()
            for u, v in zip(per["user_id"].to_list(), per[str(receval.parse_spec(spec))].to_list()):
                want = ref_users[u]
                assert (v is None) if want is None else v == pytest.approx(want, abs=1e-12, rel=1e-12), (spec, ctx, u, v, want)


# ---- properties ---------------------------------------------------------------------------------

@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(data=datasets(), d=st.data())
def test_bounds(data, d):
    recs, truth = data
    if not isinstance(truth["user_id"][0], type(recs["user_id"][0])):
        return
    train, _, baseline = d.draw(side_inputs(recs, truth))
    items = sorted(set(recs["item_id"]) | set(truth["item_id"]), key=str)
    specs = ["aplt@5", "aplt(split=items,denominator=k)@5", "epc@5", "surprisal@5", "unexpectedness@5", "popreo@5", "poprsp@5"]
    try:
        res = receval.evaluate(recs, truth, specs + ["aclt@5", "efd@5", "arp@5"], train=train, catalog=items, baseline=baseline,
                               dup="first", tdup="first")
    except DataError:
        return
    for s in ("aplt@5", "aplt(split=items,denominator=k)@5", "epc@5", "surprisal@5", "unexpectedness@5"):
        assert -1e-12 <= res[s] <= 1 + 1e-12, s
    assert 0 <= res["popreo@5"] <= 1 + 1e-12 and 0 <= res["poprsp@5"] <= 1 + 1e-12  # two groups: |a − b| / (a + b)
    assert 0 <= res["aclt@5"] <= 5 and res["efd@5"] >= 0 and res["arp@5"] >= 0


def test_unseen_goldens():
    # RePlay's Novelty: 1 − |L_k ∩ T_u| / ℓ_k
    train = {"user_id": [1, 1, 2, 9], "item_id": [10, 30, 20, 40]}
    recs = {"user_id": [1, 1, 1, 2, 2, 3], "item_id": [10, 20, 30, 20, 50, 10], "score": [3.0, 2.0, 1.0, 2.0, 1.0, 1.0]}
    truth = {"user_id": [1, 2, 3, 4], "item_id": [20, 50, 10, 10]}
    res = receval.evaluate(recs, truth, ["unseen@2", "unseen@3", "unseen(norecs=skip)@3"], train=train)
    per = res._entry("unseen@3").per_user.tolist()
    assert per == [1 - 2 / 3, 1 - 1 / 2, 1.0, 0.0]  # user 3 has no train rows; user 4 no recs (norecs=zero)
    assert res["unseen@2"] == pytest.approx((1 / 2 + 1 / 2 + 1 + 0) / 4, abs=1e-15)
    assert res["unseen(norecs=skip)@3"] == pytest.approx((1 / 3 + 1 / 2 + 1) / 3, abs=1e-15)
    with pytest.raises(DataError, match="train"):
        receval.evaluate(recs, truth, ["unseen@2"])
