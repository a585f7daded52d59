"""biasdisp (Elliot BiasDisparityBS / BR / BD): goldens as arithmetic with two user groups, a
plain count from the definition under hypothesis, and refusals."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import receval

CATS = {"item_id": [1, 2, 3, 4, 5], "group": ["a", "a", "b", "b", "b"]}  # P(a) = 2/5, P(b) = 3/5
USERS = {"user_id": [1, 2, 3], "group": ["new", "old", "old"]}
TRAIN = {"user_id": [1, 1, 2, 3, 3, 9], "item_id": [1, 3, 1, 2, 4, 5]}  # user 9: no group
RECS = {"user_id": [1, 1, 2, 2, 3, 3], "item_id": [2, 3, 4, 5, 1, 3], "score": [2.0, 1.0, 2.0, 1.0, 2.0, 1.0]}
TRUTH = {"user_id": [1, 2, 3], "item_id": [1, 2, 3]}
KW = dict(item_groups=CATS, user_groups=USERS, train=TRAIN)


def test_goldens_two_user_groups():
    specs = ["biasdisp(of=bs,ugroup=1,icat=0)@2", "biasdisp(of=br,ugroup=1,icat=0)@2", "biasdisp(ugroup=1,icat=0)@2",
             "biasdisp(of=br,ugroup=0,icat=1)@1"]
    res = receval.evaluate(RECS, TRUTH, specs, **KW)
    # group "old" (index 1) = users 2, 3. Train rows: (2,1)a (3,2)a (3,4)b → B_S(old, a) = (2/3)/(2/5)
    bs = (2 / 3) / (2 / 5)
    assert res[specs[0]] == pytest.approx(bs, abs=1e-12)
    # top-2 rows: user 2 → 4b 5b; user 3 → 1a 3b: B_R(old, a) = (1/4)/(2/5)
    br = (1 / 4) / (2 / 5)
    assert res[specs[1]] == pytest.approx(br, abs=1e-12)
    assert res[specs[2]] == pytest.approx((br - bs) / bs, abs=1e-12)
    # group "new" (index 0) = user 1, top-1 row 2a: B_R(new, b) = 0 / (3/5)
    assert res[specs[3]] == 0.0
    assert "of:br|ugroup:0|icat:1" in res.signature(specs[3])


def test_refusals():
    with pytest.raises(receval.DataError, match=r"icat=N with N one of 0=a, 1=b"):
        receval.evaluate(RECS, TRUTH, ["biasdisp(ugroup=0)@2"], **KW)
    with pytest.raises(receval.DataError, match=r"ugroup=N with N one of 0=new, 1=old"):
        receval.evaluate(RECS, TRUTH, ["biasdisp(icat=0)@2"], **KW)
    with pytest.raises(receval.DataError, match="ugroup=5 is not a user group"):
        receval.evaluate(RECS, TRUTH, ["biasdisp(ugroup=5,icat=0)@2"], **KW)
    with pytest.raises(receval.DataError, match="pass train="):
        receval.evaluate(RECS, TRUTH, ["biasdisp(icat=0)@2"], item_groups=CATS)
    with pytest.raises(receval.DataError, match="pass item_groups="):
        receval.evaluate(RECS, TRUTH, ["biasdisp(of=br,icat=0)@2"])
    # without user_groups every user is one group and ugroup may be omitted
    one = receval.evaluate(RECS, TRUTH, ["biasdisp(of=br,icat=0)@1"], item_groups=CATS)
    assert one["biasdisp(of=br,icat=0)@1"] == pytest.approx((2 / 3) / (2 / 5), abs=1e-12)  # 2a 4b 1a


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 7)), min_size=1, max_size=25),
       st.lists(st.lists(st.integers(0, 7), min_size=1, max_size=5, unique=True), min_size=2, max_size=5),
       st.integers(1, 4), st.sampled_from(["bs", "br", "bd"]))
def test_matches_plain_count(train_rows, lists, k, of):
    cat = {i: ("x" if i % 3 else "y") for i in range(7)}  # item 7 has no category
    ugroup = {u: ("g1" if u % 2 else "g0") for u in range(6)}
    recs = {"user_id": [], "item_id": [], "score": []}
    for u, items in enumerate(lists):
        for p, i in enumerate(items):
            recs["user_id"].append(u)
            recs["item_id"].append(i)
            recs["score"].append(float(10 - p))
    truth = {"user_id": list(range(len(lists))), "item_id": [0] * len(lists)}
    train = {"user_id": [u for u, _ in train_rows], "item_id": [i for _, i in train_rows]}
    share = {c: sum(1 for v in cat.values() if v == c) / len(cat) for c in ("x", "y")}

    def bias(rows, g, c):
        rows = [(u, i) for u, i in rows if u in ugroup and ugroup[u] == g and i in cat]
        if not rows:
            return None
        return sum(1 for _, i in rows if cat[i] == c) / len(rows) / share[c]

    top = [(u, i) for u, items in enumerate(lists) for i in items[:k]]
    spec = f"biasdisp(of={of},ugroup=1,icat=0)@{k}"
    bs, br = bias(list(zip(train["user_id"], train["item_id"])), "g1", "x"), bias(top, "g1", "x")
    want = {"bs": bs, "br": br, "bd": None if bs in (None, 0) or br is None else (br - bs) / bs}[of]
    kw = dict(item_groups={"item_id": list(cat), "group": list(cat.values())},
              user_groups={"user_id": list(ugroup), "group": list(ugroup.values())}, train=train)
    if want is None:
        with pytest.raises(receval.DataError):
            receval.evaluate(recs, truth, [spec], **kw)
        return
    assert receval.evaluate(recs, truth, [spec], **kw)[spec] == pytest.approx(want, abs=1e-12)
