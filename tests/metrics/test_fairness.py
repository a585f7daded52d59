"""Fairness over groups (reo, rsp over item groups; mad over user groups): goldens as
arithmetic, a slow per-group oracle (plain Python from the docstrings, below) on hypothesis
data, bounds, refusals."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import receval
from receval import DataError

from receval.conformance.reference.ranking import CONTEXT_DEFAULTS, RefError, prepare
from receval.conformance.reference.pop import user_relevant
from test_reference import contexts, datasets

GROUPS = {"item_id": [10, 20, 30, 40], "group": ["a", "a", "b", "c"]}
RECS = {"user_id": [1, 1, 2, 2], "item_id": [10, 30, 20, 40], "score": [0.9, 0.8, 0.7, 0.1]}
TRUTH = {"user_id": [1, 1, 2, 2], "item_id": [10, 20, 30, 40]}


def _cv(p):
    m = sum(p) / len(p)
    return 0.0 if m == 0 else math.sqrt(sum((x - m) ** 2 for x in p) / len(p)) / m


def test_reo_golden():
    # R ∩ a = {1:10, 1:20} = 2, b = {2:30} = 1, c = {2:40} = 1; top 2 hits: user 1 → 10 (a); user 2 → 40 (c)
    v = receval.evaluate(RECS, TRUTH, ["reo@2"], item_groups=GROUPS)["reo@2"]
    assert v == pytest.approx(_cv([1 / 2, 0 / 1, 1 / 1]))


def test_rsp_golden():
    train = {"user_id": [1, 2], "item_id": [20, 10]}
    # Σ_u |g \ I_u|: a: 2 users × 2 − (1 saw 20, 2 saw 10) = 2; b: 2; c: 2. Top 2: a: 10, 20 = 2; b: 30 = 1; c: 40 = 1
    v = receval.evaluate(RECS, TRUTH, ["rsp@2"], item_groups=GROUPS, train=train)["rsp@2"]
    assert v == pytest.approx(_cv([2 / 2, 1 / 2, 1 / 2]))
    v = receval.evaluate(RECS, TRUTH, ["rsp@1"], item_groups=GROUPS)["rsp@1"]   # no train: a 2/4, b 0/2, c 0/2
    assert v == pytest.approx(_cv([2 / 4, 0.0, 0.0]))


def test_mad_golden():
    ug = {"user_id": [1, 2], "group": ["x", "y"]}
    d = lambda i: 1 / math.log2(i + 1)  # noqa: E731
    n1 = 1.0 / (d(1) + d(2))   # user 1: hit 10 at 1, |R| = 2
    n2 = d(2) / (d(1) + d(2))  # user 2: hit 40 at 2
    assert receval.evaluate(RECS, TRUTH, ["mad@2"], user_groups=ug)["mad@2"] == pytest.approx(abs(n1 - n2))
    assert receval.evaluate(RECS, TRUTH, ["mad(of=score)@2"], user_groups=ug)["mad(of=score)@2"] == pytest.approx(abs(0.85 - 0.4))


def test_refusals():
    with pytest.raises(DataError, match="item_groups="):
        receval.evaluate(RECS, TRUTH, ["reo@2"])
    with pytest.raises(DataError, match="user_groups="):
        receval.evaluate(RECS, TRUTH, ["mad@2"])
    with pytest.raises(DataError, match="at least two"):
        receval.evaluate(RECS, TRUTH, ["rsp@2"], item_groups={"item_id": [10], "group": ["a"]})
    with pytest.raises(DataError, match="more than one group"):
        receval.evaluate(RECS, TRUTH, ["rsp@2"], item_groups={"item_id": [10, 10], "group": ["a", "b"]})
    with pytest.raises(DataError, match="group .b. is empty"):
        receval.evaluate(RECS, TRUTH, ["reo@2"], item_groups={"item_id": [10, 50], "group": ["a", "b"]})


# ---- the slow oracle ----------------------------------------------------------------------------

def oracle(recs, truth, metric, k, ctx, groups, train=None, of="ndcg"):
    ctx = {**CONTEXT_DEFAULTS, **ctx}
    users = prepare(recs, truth, ctx, metric)
    if metric in ("reo", "rsp"):
        gof = dict(zip(groups["item_id"], groups["group"]))
        names = sorted(set(groups["group"]))
        if len(names) < 2:
            raise RefError("one group")
        num = {g: 0 for g in names}
        den = {g: 0 for g in names}
        seen = {}
        for u, i in zip(*(train["user_id"], train["item_id"])) if train else []:
            seen.setdefault(u, set()).add(i)
        for u, data in users.items():
            top = [(pos, i) for pos, i in data["ranked"] if pos <= k]
            hit_pos = {pos for pos, _ in data["hits"]}
            for pos, i in top:
                if i in gof and (metric == "rsp" or pos in hit_pos):
                    num[gof[i]] += 1
            if metric == "reo":
                for i in user_relevant(truth, u, ctx):
                    if i in gof:
                        den[gof[i]] += 1
            else:
                for g in names:
                    den[g] += sum(1 for i, gg in gof.items() if gg == g and i not in seen.get(u, set()))
        if any(den[g] == 0 for g in names):
            raise RefError("empty group")
        return _cv([num[g] / den[g] for g in names])
    # mad
    gof = dict(zip(groups["user_id"], groups["group"]))
    vals = {}
    for u, data in users.items():
        if u not in gof:
            continue
        if of == "ndcg":
            if not data["rel"]:
                continue
            dcg = sum(1 / math.log2(pos + 1) for pos, _ in data["hits"] if pos <= k)
            idcg = sum(1 / math.log2(j + 2) for j in range(min(k, len(data["rel"]))))
            vals.setdefault(gof[u], []).append(dcg / idcg)
        else:
            if data["length"] == 0:
                continue
            top = [sc for (pos, _), sc in zip(data["ranked"], data["scores"]) if pos <= k]
            vals.setdefault(gof[u], []).append(sum(top) / len(top))
    means = [sum(v) / len(v) for _, v in sorted(vals.items())]
    if len(means) < 2:
        raise RefError("fewer than two groups")
    diffs = [abs(a - b) for x, a in enumerate(means) for b in means[x + 1:]]
    return sum(diffs) / len(diffs)


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(data=datasets(), ctx=contexts(), d=st.data())
def test_match_oracle(data, ctx, d):
    recs, truth = data
    ctx = dict(ctx, ties="input" if ctx["ties"] == "optimistic" else ctx["ties"], dup="first", tdup="first")
    if not isinstance(truth["user_id"][0], type(recs["user_id"][0])) or "score" not in recs:
        return
    items = sorted(set(recs["item_id"]) | set(truth["item_id"]), key=str)
    users = sorted(set(truth["user_id"]), key=str)
    gi = d.draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=len(items), max_size=len(items)))
    keep = d.draw(st.lists(st.booleans(), min_size=len(items), max_size=len(items)))
    igroups = {"item_id": [i for i, kp in zip(items, keep) if kp], "group": [g for g, kp in zip(gi, keep) if kp]}
    gu = d.draw(st.lists(st.sampled_from(["x", "y", "z"]), min_size=len(users), max_size=len(users)))
    ugroups = {"user_id": users, "group": gu}
    n = d.draw(st.integers(0, 6))
    train = {"user_id": d.draw(st.lists(st.sampled_from(users), min_size=n, max_size=n)),
             "item_id": d.draw(st.lists(st.sampled_from(items), min_size=n, max_size=n))} if n else None
    kwargs = {a: v for a, v in ctx.items() if v is not None and a in ("rel", "order", "ties", "dup", "tdup")}
    for metric, of in (("reo", None), ("rsp", None), ("mad", "ndcg"), ("mad", "score")):
        for k in (1, 3):
            spec = f"mad(of={of})@{k}" if metric == "mad" else f"{metric}@{k}"
            groups = ugroups if metric == "mad" else igroups
            try:
                want = oracle(recs, truth, metric, k, ctx, groups, train if metric == "rsp" else None, of or "ndcg")
            except RefError:
                with pytest.raises(DataError):
                    receval.evaluate(recs, truth, [spec], item_groups=igroups, user_groups=ugroups,
                                     train=train if metric == "rsp" else None, **kwargs)
                continue
            got = receval.evaluate(recs, truth, [spec], item_groups=igroups, user_groups=ugroups,
                                   train=train if metric == "rsp" else None, **kwargs)[spec]
            assert got == pytest.approx(want, abs=1e-12, rel=1e-12), (spec, ctx)
            assert got >= 0
