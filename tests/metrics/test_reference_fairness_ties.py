"""The conformance references of issue 35 for the popularity metrics against receval on
hypothesis data: ``conformance/reference/fairness.py`` (reo, rsp, bias disparity under every
context option) and ``conformance/reference/average.py`` (``ties=average`` as the mean over every
ordering of the ties, enumerated), to 1e-12; a reference refusal is a receval refusal."""

from __future__ import annotations

import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import receval
from receval.conformance.reference.average import tie_average
from receval.conformance.reference.fairness import reference_fairness
from receval.conformance.reference.pop import reference_pop
from receval.conformance.reference.ranking import RefError
from receval.errors import RecevalError
from test_reference import contexts, datasets


def _groups(d, recs, truth):
    items = sorted(set(recs["item_id"]) | set(truth["item_id"]), key=str)
    users = sorted(set(truth["user_id"]) | set(recs["user_id"]), key=str)
    gi = d.draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=len(items), max_size=len(items)))
    igroups = {"item_id": items, "group": gi}
    gu = d.draw(st.lists(st.sampled_from(["x", "y"]), min_size=len(users), max_size=len(users)))
    ugroups = {"user_id": users, "group": gu}
    n = d.draw(st.integers(1, 8))
    train = {"user_id": d.draw(st.lists(st.sampled_from(users), min_size=n, max_size=n)),
             "item_id": d.draw(st.lists(st.sampled_from(items), min_size=n, max_size=n))}
    return items, igroups, ugroups, train


def _receval(recs, truth, spec, **side):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return receval.evaluate(recs, truth, [spec], **side)[spec]


def _context(ctx):
    return {a: v for a, v in ctx.items() if v is not None and a in ("rel", "order", "ties", "dup", "tdup")}


@settings(max_examples=120, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(data=datasets(), ctx=contexts(), d=st.data())
def test_match_reference(data, ctx, d):
    recs, truth = data
    if not isinstance(truth["user_id"][0], type(recs["user_id"][0])) or "rating" not in truth:
        return
    if ctx["ties"] == "average" and ctx["order"] in ("score", "auto"):
        ctx = dict(ctx, ties="input")  # the tie average: test_equals_mean_over_all_orderings
    _, igroups, ugroups, train = _groups(d, recs, truth)
    cat = d.draw(st.sampled_from(["a", "b"]))
    ugroup = d.draw(st.sampled_from(["*", "x"]))
    kw = _context(ctx)
    for metric, opts in (("reo", {}), ("rsp", {}), ("bias_disparity", {"of": "bd"}), ("bias_disparity", {"of": "br"}),
                         ("bias_disparity", {"of": "bs"})):
        if metric == "bias_disparity":
            opts = {**opts, "icat": cat, "ugroup": ugroup}
        for k in (1, 3):
            text = ",".join(f"{a}={v}" for a, v in {**opts, **{a: str(v) for a, v in kw.items()}}.items())
            spec = f"{metric}({text})@{k}" if text else f"{metric}@{k}"
            try:
                _, want = reference_fairness(recs, truth, metric, k, {**opts, **kw}, train=train, item_groups=igroups,
                                             user_groups=ugroups)
            except RefError:
                with pytest.raises(RecevalError):
                    _receval(recs, truth, spec, train=train, item_groups=igroups, user_groups=ugroups)
                continue
            got = _receval(recs, truth, spec, train=train, item_groups=igroups, user_groups=ugroups)
            assert got == pytest.approx(want, abs=1e-12, rel=1e-12), (spec, ctx)


#: the per-user metrics whose ties=average is the mean over the orderings (receval's closed forms)
AVERAGED = [("arp", {}), ("aplt", {}), ("aclt", {}), ("aplt", {"denominator": "k"}), ("novelty", {}),
            ("novelty", {"denominator": "k"}), ("surprisal", {}), ("unseen", {})]


@settings(max_examples=80, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(data=datasets(), ctx=contexts(), d=st.data())
def test_equals_mean_over_all_orderings(data, ctx, d):
    recs, truth = data
    if "score" not in recs or not isinstance(truth["user_id"][0], type(recs["user_id"][0])):
        return
    items, igroups, _, train = _groups(d, recs, truth)
    kw = {**_context(ctx), "order": "score", "ties": "average"}
    for metric, opts in AVERAGED + [("popreo", {}), ("poprsp", {}), ("reo", {})]:
        for k in (1, 3):
            options = {**opts, **kw}
            spec = f"{metric}({','.join(f'{a}={v}' for a, v in options.items())})@{k}"
            side = {"train": train, "catalog": items} if metric not in ("reo",) else {"item_groups": igroups}

            def run(r, metric=metric, k=k, options=options):
                inner = {**options, "ties": "input"}
                if metric == "reo":
                    return reference_fairness(r, truth, metric, k, inner, item_groups=igroups)
                return reference_pop(r, truth, metric, k, inner, train=train, catalog=items)

            try:
                per_user, want = tie_average(run, recs, truth, k, options, metric,
                                             settled=metric in ("popreo", "poprsp", "reo"))
            except RefError:
                with pytest.raises(RecevalError):
                    _receval(recs, truth, spec, **side)
                continue
            got = _receval(recs, truth, spec, **side)
            assert got == pytest.approx(want, abs=1e-12, rel=1e-12), (spec, ctx)
