"""Bias disparity (Elliot BiasDisparityBS / BR / BD) over a (user group, item category) cell:
goldens as arithmetic, a slow oracle (plain Python from the docstring) on hypothesis data,
properties (shares sum to one, BD = BR/BS − 1, B_S reads neither k nor the lists, names
compare in lower case; batches in tests/contracts/test_groups_batches.py), and one-line refusals that name the fix."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import receval
from receval import DataError, SpecError

from receval.conformance.reference.ranking import CONTEXT_DEFAULTS, RefError, prepare
from test_reference import contexts, datasets

# P(a) = 2/5, P(b) = 1/5, P(c) = 2/5; item 60 has no category
ITEMS = {"item_id": [10, 20, 30, 40, 50], "group": ["a", "a", "b", "c", "c"]}
# users 1, 2 in x, 3 in y; 4 (a truth user) and 5 (train only) have no group
USERS = {"user_id": [1, 2, 3], "group": ["x", "x", "y"]}
TRAIN = {
    "user_id": [1, 1, 1, 2, 2, 3, 3, 3, 5, 4],
    "item_id": [10, 10, 30, 20, 60, 40, 50, 10, 30, 20],  # (1, 10) twice: one distinct pair
}
RECS = {
    "user_id": [1, 1, 1, 2, 2, 3, 3, 3, 4, 6],
    "item_id": [10, 40, 60, 30, 20, 50, 10, 30, 20, 10],
    "score": [0.9, 0.8, 0.7, 0.9, 0.5, 0.9, 0.8, 0.1, 0.9, 0.9],
}
TRUTH = {"user_id": [1, 2, 3, 4], "item_id": [20, 10, 40, 30]}  # user 6 is not a truth user
SIDE = {"item_groups": ITEMS, "user_groups": USERS, "train": TRAIN}


def value(spec: str, recs=RECS, truth=TRUTH, **kw) -> float:
    return receval.evaluate(recs, truth, [spec], **{**SIDE, **kw})[spec]


# B_S: distinct train pairs with a category. x = {1, 2}: (1,10)a (1,30)b (2,20)a [(2,60) has none]
# y = {3}: (3,40)c (3,50)c (3,10)a; pooled: those six + (5,30)b + (4,20)a = 8
BS = {
    ("x", "a"): (2 / 3) / (2 / 5), ("x", "b"): (1 / 3) / (1 / 5), ("x", "c"): 0.0,
    ("y", "a"): (1 / 3) / (2 / 5), ("y", "b"): 0.0, ("y", "c"): (2 / 3) / (2 / 5),
    ("*", "a"): (4 / 8) / (2 / 5), ("*", "b"): (2 / 8) / (1 / 5), ("*", "c"): (2 / 8) / (2 / 5),
}
# B_R@2: top 2 of the truth users. 1: 10a 40c; 2: 30b 20a; 3: 50c 10a; 4: 20a (user 6 is not read)
BR2 = {
    ("x", "a"): (2 / 4) / (2 / 5), ("x", "b"): (1 / 4) / (1 / 5), ("x", "c"): (1 / 4) / (2 / 5),
    ("y", "a"): (1 / 2) / (2 / 5), ("y", "b"): 0.0, ("y", "c"): (1 / 2) / (2 / 5),
    ("*", "a"): (4 / 7) / (2 / 5), ("*", "b"): (1 / 7) / (1 / 5), ("*", "c"): (2 / 7) / (2 / 5),
}


def _spec(of: str, g: str, c: str, k: int = 2) -> str:
    return f"bias_disparity(of={of},ugroup={g},icat={c})@{k}"


@pytest.mark.parametrize("cell", list(BS))
def test_golden_bs_br_bd(cell):
    g, c = cell
    assert value(_spec("bs", g, c)) == pytest.approx(BS[cell], abs=1e-12)
    assert value(_spec("br", g, c)) == pytest.approx(BR2[cell], abs=1e-12)
    if BS[cell] == 0:
        with pytest.raises(DataError, match="B_S = 0"):
            value(_spec("bd", g, c))
    else:
        assert value(_spec("bd", g, c)) == pytest.approx((BR2[cell] - BS[cell]) / BS[cell], abs=1e-12)


def test_golden_bd_by_hand():
    # the same cells with the fractions reduced by hand
    assert value("bias_disparity(ugroup=x,icat=a)@2") == pytest.approx((5 / 4 - 5 / 3) / (5 / 3))   # −1/4
    assert value("bias_disparity(ugroup=y,icat=a)@2") == pytest.approx(1 / 2)                        # (5/4 − 5/6)/(5/6)
    assert value("bias_disparity(icat=a)@2") == pytest.approx(1 / 7)                                 # (10/7 − 5/4)/(5/4)


def test_uncategorised_items_are_skipped_and_k_counts_positions():
    # @3 adds 60 (no category) for user 1 and 30 (b) for user 3
    assert value(_spec("br", "x", "a", 3)) == pytest.approx((2 / 4) / (2 / 5))
    assert value(_spec("br", "y", "b", 3)) == pytest.approx((1 / 3) / (1 / 5))
    assert value(_spec("br", "*", "b", 3)) == pytest.approx((2 / 8) / (1 / 5))
    assert value(_spec("br", "x", "a", 1)) == pytest.approx((1 / 2) / (2 / 5))  # 10a, 30b


def test_dup_keep_counts_each_position():
    recs = {"user_id": [1, 1, 1], "item_id": [10, 10, 30], "score": [0.9, 0.8, 0.7]}
    truth = {"user_id": [1], "item_id": [20]}
    assert value(_spec("br", "x", "a", 3), recs, truth, dup="keep") == pytest.approx((2 / 3) / (2 / 5))
    assert value(_spec("br", "x", "a", 3), recs, truth, dup="first") == pytest.approx((1 / 2) / (2 / 5))
    with pytest.raises(DataError):
        value(_spec("br", "x", "a", 3), recs, truth)  # dup=error


def test_integer_group_ids_as_elliot_writes_them():
    items = {"item_id": [10, 20, 30, 40, 50], "group": [0, 0, 1, 2, 2]}
    users = {"user_id": [1, 2, 3], "group": [0, 0, 1]}
    got = value("bias_disparity(ugroup=0,icat=0)@2", item_groups=items, user_groups=users)
    assert got == pytest.approx((5 / 4 - 5 / 3) / (5 / 3))
    spec = receval.Spec("bias_disparity", 2, (("icat", 0), ("ugroup", 0)))
    assert receval.evaluate(RECS, TRUTH, [spec], **{**SIDE, "item_groups": items, "user_groups": users})[spec] == got


def test_signature_records_the_cell_and_parses_back():
    spec = "bias_disparity(of=br,ugroup=x,icat=a)@2"
    res = receval.evaluate(RECS, TRUTH, [spec], **SIDE)
    sig = res.signature(spec)
    assert sig.startswith("bias_disparity@2|of:br|ugroup:x|icat:a|")
    explicit, _, _ = receval.parse_signature(sig)
    assert receval.evaluate(RECS, TRUTH, [explicit], **SIDE)[explicit] == res[spec]
    pooled = "bias_disparity(icat=a)@2"
    assert "|of:bd|ugroup:*|icat:a|" in receval.evaluate(RECS, TRUTH, [pooled], **SIDE).signature(pooled)


def test_elliot_dialect_names_the_metric():
    res = receval.evaluate(RECS, TRUTH, ["bias_disparity(of=br,icat=a)@2"], dialect="elliot", **SIDE)
    assert res["bias_disparity(of=br,icat=a)@2"] == pytest.approx(BR2[("*", "a")])
    assert "|dup:keep|" in res.signature("bias_disparity(of=br,icat=a)@2")


# ---- properties -----------------------------------------------------------------------------

@pytest.mark.parametrize("g", ["x", "y", "*"])
@pytest.mark.parametrize("of", ["bs", "br"])
def test_shares_sum_to_one(g, of):
    # Σ_C P(C) · B(G, C) = Σ_C N(G, C) / N(G) = 1
    pc = {"a": 2 / 5, "b": 1 / 5, "c": 2 / 5}
    assert sum(pc[c] * value(_spec(of, g, c)) for c in pc) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("cell", [("x", "a"), ("x", "b"), ("y", "c"), ("*", "a"), ("*", "c")])
def test_bd_is_br_over_bs_minus_one(cell):
    g, c = cell
    br, bs, bd = (value(_spec(of, g, c)) for of in ("br", "bs", "bd"))
    assert bd == pytest.approx(br / bs - 1, abs=1e-12)


def test_bs_reads_neither_k_nor_the_lists():
    base = value(_spec("bs", "x", "a", 1))
    other = {"user_id": [1, 2], "item_id": [50, 40], "score": [1.0, 1.0]}
    assert value(_spec("bs", "x", "a", 5)) == base
    assert value(_spec("bs", "x", "a", 2), recs=other) == base


def test_names_compare_in_lower_case_and_renaming_changes_nothing():
    items = dict(ITEMS, group=["Alpha", "Alpha", "b", "C", "C"])
    users = dict(USERS, group=["X1", "X1", "y"])
    got = value("bias_disparity(ugroup=x1,icat=alpha)@2", item_groups=items, user_groups=users)
    assert got == value("bias_disparity(ugroup=x,icat=a)@2")
    assert value("bias_disparity(ugroup=X1,icat=ALPHA)@2", item_groups=items, user_groups=users) == got


# batches: tests/contracts/test_groups_batches.py combines bias_disparity's partials over disjoint users


# ---- refusals: one line, naming the fix ---------------------------------------------------------

BAD = [
    ("bias_disparity@2", SIDE, SpecError, "icat="),
    ("bias_disparity(icat=zz)@2", SIDE, DataError, "its groups: a, b, c"),
    ("bias_disparity(ugroup=q,icat=a)@2", SIDE, DataError, "its groups: x, y"),
    ("bias_disparity(ugroup=x,icat=a)@2", {"item_groups": ITEMS, "train": TRAIN}, DataError, "pass user_groups="),
    ("bias_disparity(icat=a)@2", {"train": TRAIN}, DataError, "pass item_groups="),
    ("bias_disparity(icat=a)@2", {"item_groups": ITEMS}, DataError, "pass train="),
    ("bias_disparity(of=bs,icat=a)@2", {"item_groups": ITEMS}, DataError, "pass train="),
    ("bias_disparity(ugroup=x,icat=c)@2", SIDE, DataError, "report of=br and of=bs"),
    ("bias_disparity(of=br,ugroup=z,icat=a)@2", {**SIDE, "user_groups": {"user_id": [9], "group": ["z"]}}, DataError, "choose another ugroup"),
    ("bias_disparity(of=bs,ugroup=z,icat=a)@2", {**SIDE, "user_groups": {"user_id": [9], "group": ["z"]}}, DataError, "choose another ugroup"),
    ("bias_disparity(icat=a)@2", {**SIDE, "item_groups": {"item_id": [10, 10], "group": ["a", "b"]}}, DataError, "give each one group"),
    ("bias_disparity(icat=a)@2", {**SIDE, "item_groups": {"item_id": [10, 20], "group": ["a", "A"]}}, DataError, "rename one"),
    ("bias_disparity(icat=a)@2", {**SIDE, "item_groups": {"item_id": ["10"], "group": ["a"]}}, DataError, "cast them alike"),
    ("bias_disparity(ugroup=x,icat=a)@2", {**SIDE, "user_groups": {"user_id": ["1"], "group": ["x"]}}, DataError, "cast them alike"),
    ("bias_disparity(of=bx,icat=a)@2", SIDE, SpecError, "did you mean"),
    ("bias_disparity(icat=a=b)@2", SIDE, SpecError, "rename the group"),
]


@pytest.mark.parametrize(("spec", "side", "exc", "fix"), BAD, ids=[f"{s}-{f}" for s, _, _, f in BAD])
def test_refusals_are_one_line(spec, side, exc, fix):
    with pytest.raises(exc) as info:
        receval.evaluate(RECS, TRUTH, [spec], **side)
    assert fix in str(info.value)
    assert "\n" not in str(info.value)


def test_python_option_values_are_names():
    for bad in (True, 1.5, None):
        with pytest.raises(SpecError, match="group name"):
            receval.evaluate(RECS, TRUTH, [receval.Spec("bias_disparity", 2, (("icat", bad),))], **SIDE)


# ---- the slow oracle ----------------------------------------------------------------------------

def oracle(recs, truth, train, igroups, ugroups, of, ugroup, icat, k, ctx):
    """Plain Python from the docstring: B_X = (N_X(G, C) / N_X(G)) / (|C| / |I_g|)."""
    ctx = {**CONTEXT_DEFAULTS, **ctx}
    users = prepare(recs, truth, ctx)
    cat = {i: str(g).lower() for i, g in zip(igroups["item_id"], igroups["group"])}
    if icat not in set(cat.values()):
        raise RefError("no such category")
    pc = sum(1 for g in cat.values() if g == icat) / len(cat)
    group = {u: str(g).lower() for u, g in zip(ugroups["user_id"], ugroups["group"])}
    if ugroup != "*" and ugroup not in set(group.values()):
        raise RefError("no such user group")

    def member(u):
        return ugroup == "*" or group.get(u) == ugroup

    bs = br = None
    if of in ("bs", "bd"):
        if not train:
            raise RefError("no train")
        pairs = {(u, i) for u, i in zip(train["user_id"], train["item_id"]) if member(u) and i in cat}
        if not pairs:
            raise RefError("N_S(G) = 0")
        bs = sum(1 for _, i in pairs if cat[i] == icat) / len(pairs) / pc
        if of == "bs":
            return bs
    num = tot = 0
    for u, data in users.items():
        if member(u):
            for pos, i in data["ranked"]:
                if pos <= k and i in cat:
                    tot += 1
                    num += cat[i] == icat
    if tot == 0:
        raise RefError("N_R(G) = 0")
    br = num / tot / pc
    if of == "br":
        return br
    if bs == 0:
        raise RefError("B_S = 0")
    return (br - bs) / bs


@settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(data=datasets(), ctx=contexts(), d=st.data())
def test_match_oracle(data, ctx, d):
    recs, truth = data
    # rel and tdup change no count here (B_R reads the truth users' lists, not their relevance):
    # fixed, so that the data is refused less often
    ctx = dict(ctx, ties="input" if ctx["ties"] == "optimistic" else ctx["ties"], rel=None, tdup="first")
    if not isinstance(truth["user_id"][0], type(recs["user_id"][0])) or "score" not in recs:
        return
    items = sorted(set(recs["item_id"]) | set(truth["item_id"]), key=str)
    users = sorted(set(truth["user_id"]) | set(recs["user_id"]), key=str)
    gi = d.draw(st.lists(st.sampled_from(["a", "B", "c"]), min_size=len(items), max_size=len(items)))
    keep = d.draw(st.lists(st.booleans(), min_size=len(items), max_size=len(items)))
    if not any(keep):
        keep[0] = True
    igroups = {"item_id": [i for i, kp in zip(items, keep) if kp], "group": [g for g, kp in zip(gi, keep) if kp]}
    gu = d.draw(st.lists(st.sampled_from(["x", "y", None]), min_size=len(users), max_size=len(users)))
    ugroups = {"user_id": [u for u, g in zip(users, gu) if g], "group": [g for g in gu if g]}
    if not ugroups["user_id"]:
        ugroups = {"user_id": users[:1], "group": ["x"]}
    n = d.draw(st.integers(0, 12))  # drawn with replacement: repeated (user, item) pairs count once
    train = {"user_id": d.draw(st.lists(st.sampled_from(users), min_size=n, max_size=n)),
             "item_id": d.draw(st.lists(st.sampled_from(items), min_size=n, max_size=n))} if n else None
    kwargs = {a: v for a, v in ctx.items() if v is not None and a in ("rel", "order", "ties", "dup", "tdup")}
    side = {"item_groups": igroups, "user_groups": ugroups, "train": train, **kwargs}
    want = {}
    for of in ("bs", "br", "bd"):
        for ugroup in ("*", "x", "y"):
            for icat in ("a", "b", "c"):
                for k in (1, 3):
                    spec = _spec(of, ugroup, icat, k)
                    try:
                        want[spec] = oracle(recs, truth, train, igroups, ugroups, of, ugroup, icat, k, ctx)
                    except RefError:
                        with pytest.raises((DataError, SpecError)):
                            receval.evaluate(recs, truth, [spec], **side)
    if want:
        got = receval.evaluate(recs, truth, list(want), **side)  # the computed cells in one call
        for spec, w in want.items():
            assert got[spec] == pytest.approx(w, abs=1e-12, rel=1e-12), (spec, ctx)
            assert got[spec] >= 0 or spec.startswith("bias_disparity(of=bd")
