"""receval against the slow per-user reference in ``receval/conformance/reference/ranking.py`` (to 1e-12).

Hypothesis draws small datasets (a few users, short lists, tied scores, ratings 0.5..5,
users without hits / recommendations / relevant items, optional duplicates) and one
combination of context options; every metric × every option value × several k is then
compared user by user and on the mean.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import receval
from receval import DataError

from receval.conformance.reference.ranking import CONTEXT_VALUES, METRIC_VALUES, RefError, reference

KS = [1, 2, 3, 5, 8]


def _render(v):
    if isinstance(v, float):
        if v == math.e:
            return "e"
        return repr(v).removesuffix(".0")
    return str(v)


def metric_variants() -> list[tuple[str, dict]]:
    """(metric name, options) for every value of every metric option."""
    out = []
    for name, axes in METRIC_VALUES.items():
        combos = [{}]
        for axis, values in axes.items():
            combos = [dict(c, **{axis: v}) for c in combos for v in values]
        for c in combos:
            out.append((name, c))
    # base only matters (and is only accepted by ndcg) without normalisation
    out.append(("ndcg", {"ideal": "none", "base": math.e}))
    out.append(("ndcg", {"ideal": "none", "base": 10.0, "gain": "exp2"}))
    # an explicit t for the shifted gain
    out.append(("ndcg", {"gain": "shifted", "t": 1.0}))
    out.append(("dcg", {"gain": "shifted", "t": 1.0}))
    # negative gains: both policies (ratings here are >= 0.5, so t = 3 makes some gains negative)
    for name in ("ndcg", "dcg"):
        out.append((name, {"gain": "linear", "neg": "error"}))
        out.append((name, {"gain": "shifted", "t": 3.0, "neg": "zero"}))
    return out


VARIANTS = metric_variants()


def spec_of(name: str, opts: dict, k: int) -> str:
    inner = ",".join(f"{a}={_render(v)}" for a, v in opts.items())
    return f"{name}({inner})@{k}" if inner else f"{name}@{k}"


def test_variants_cover_every_option_value():
    """The variant list is not silently narrower than the registry."""
    from receval.metrics import all_metrics

    for m in all_metrics():
        if m.name not in METRIC_VALUES:
            continue
        for axis_name, axis in m.axes.items():
            if axis.numeric or axis_name == "weight":  # weight=pop needs train: tests/metrics/test_ipw.py's brute force
                continue
            covered = {opts.get(axis_name) for name, opts in VARIANTS if name == m.name}
            assert set(axis.values) <= covered, (m.name, axis_name)
    for axis, values in CONTEXT_VALUES.items():
        from receval.options import CONTEXT_AXES

        # ties=average (an expectation over orderings) is tested in tests/metrics/test_ties_average.py
        elsewhere = {"ties": {"average"}}.get(axis, set())
        assert set(CONTEXT_AXES[axis].values) - elsewhere == set(values), axis


# ------------------------------------------------------------------------------------------
# data


RATINGS = [0.5 * i for i in range(1, 11)]


@st.composite
def datasets(draw):
    n_users = draw(st.integers(1, 4))
    string_ids = draw(st.booleans())
    uid = (lambda u: f"u{u}") if string_ids else (lambda u: u * 7 + 3)
    iid = (lambda i: f"i{i:02d}") if string_ids else (lambda i: 100 - i * 3)  # item order != code order
    allow_dup = draw(st.booleans())
    presort = draw(st.booleans())
    rec_cols = draw(st.sampled_from([("score",), ("score",), ("score",), ("rank",), ("score", "rank"), ()]))
    with_rating = draw(st.booleans())
    recs = {"user_id": [], "item_id": [], "score": [], "rank": []}
    truth = {"user_id": [], "item_id": [], "rating": []}
    for u in range(n_users + 1):  # the last user may appear only in the recommendations
        only_recs = u == n_users
        n_recs = draw(st.integers(0, 6))
        items = draw(st.lists(st.integers(0, 9), min_size=n_recs, max_size=n_recs, unique=not allow_dup))
        scores = draw(st.lists(st.sampled_from([0.1, 0.2, 0.3, 0.5, 0.0, -0.2]), min_size=n_recs, max_size=n_recs))
        ranks = draw(st.permutations(list(range(1, n_recs + 1))))
        tied_ranks = draw(st.booleans())
        if presort:  # rows already in ranked order (score descending, ranks agreeing): the fast path
            by_score = sorted(range(n_recs), key=lambda j: -scores[j])
            items, scores = [items[j] for j in by_score], [scores[j] for j in by_score]
            ranks = list(range(1, n_recs + 1))
        if tied_ranks:  # tied ranks with gaps: 2,3 -> 2 and 4,5 -> 4 (order=rank refuses them)
            ranks = [max(1, r - r % 2) for r in ranks]
        for i, s, r in zip(items, scores, ranks):
            recs["user_id"].append(uid(u))
            recs["item_id"].append(iid(i))
            recs["score"].append(s)
            recs["rank"].append(r)
        if only_recs:
            continue
        n_truth = draw(st.integers(1, 5))
        titems = draw(st.lists(st.integers(0, 5 if allow_dup else 11), min_size=n_truth, max_size=n_truth, unique=not allow_dup))
        ratings = draw(st.lists(st.sampled_from(RATINGS), min_size=n_truth, max_size=n_truth))
        for i, r in zip(titems, ratings):
            truth["user_id"].append(uid(u))
            truth["item_id"].append(iid(i))
            truth["rating"].append(r)
    if not recs["user_id"]:  # an untyped empty column cannot be read; add a recs-only user
        recs["user_id"].append(uid(n_users + 1))
        recs["item_id"].append(iid(0))
        recs["score"].append(0.5)
        recs["rank"].append(1)
    for c in ("score", "rank"):
        if c not in rec_cols:
            del recs[c]
    if not with_rating:
        del truth["rating"]
    # interleave users' rows (a stable, seeded shuffle keeping each user's own order)
    return recs, truth


@st.composite
def contexts(draw):
    # every value is drawn, but the refusing ones ('error') rarely, so most examples compute
    weighted = {
        "order": ["auto", "score", "score", "score", "rank", "rank_value", "input"],
        "ties": CONTEXT_VALUES["ties"],
        "hitscore": ["any", "any", "positive"],
        "dup": ["first", "keep"] * 3 + ["error"],
        "tdup": ["first", "keep", "max"] * 2 + ["error"],
        "empty": ["skip", "zero"] * 3 + ["error"],
        "norecs": ["zero", "skip"] * 3 + ["error"],
    }
    assert all(set(weighted[a]) == set(v) for a, v in CONTEXT_VALUES.items())
    ctx = {a: draw(st.sampled_from(v)) for a, v in weighted.items()}
    ctx["rel"] = draw(st.sampled_from([None, 1.0, 3.0, 4.5]))
    return ctx


def _check(recs, truth, ctx, in_spec: bool, variants):
    specs, expected = [], {}
    ks_for = {}
    for name, opts in variants:
        for k in KS:
            if in_spec:
                full = {**opts, **{a: v for a, v in ctx.items() if v is not None}}
                spec = spec_of(name, full, k)
            else:
                spec = spec_of(name, opts, k)
            specs.append(spec)
            ks_for[spec] = (name, opts, k)
    errors = 0
    for spec, (name, opts, k) in ks_for.items():
        try:
            expected[spec] = reference(recs, truth, name, k, {**opts, **ctx})
        except RefError:
            errors += 1
    kwargs = {} if in_spec else {a: v for a, v in ctx.items() if v is not None}
    if errors:
        assert errors == len(ks_for), "the reference refuses only some specs"
        with pytest.raises(DataError):
            receval.evaluate(recs, truth, specs, **kwargs)
        return
    res = receval.evaluate(recs, truth, specs, **kwargs)
    pu = res.per_user()
    users = pu["user_id"].to_list()
    assert users == sorted(set(truth["user_id"]))
    for spec in specs:
        ref_users, ref_mean = expected[spec]
        key = str(receval.parse_spec(spec))
        got = res[spec]
        assert got == pytest.approx(ref_mean, abs=1e-12, rel=1e-12), (spec, ctx, got, ref_mean)
        col = pu[key].to_list()
        for u, v in zip(users, col):
            want = ref_users[u]
            if want is None:
                assert v is None, (spec, u, v)
            else:
                assert v is not None and v == pytest.approx(want, abs=1e-12, rel=1e-12), (spec, ctx, u, v, want)
        n_included = sum(1 for v in ref_users.values() if v is not None)
        assert res._entry(spec).users == n_included


@settings(max_examples=250, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(data=datasets(), ctx=contexts(), in_spec=st.booleans())
def test_every_metric_and_option_matches_reference(data, ctx, in_spec):
    recs, truth = data
    _check(recs, truth, ctx, in_spec, VARIANTS)


@settings(max_examples=80, deadline=None, derandomize=True)
@given(data=datasets(), ctx=contexts())
def test_pandas_input_matches_reference(data, ctx):
    """The same comparison through a pandas frame (a second input path)."""
    import pandas as pd

    recs, truth = data
    variants = [("ndcg", {}), ("map", {}), ("precision", {"denominator": "length"}), ("mrr", {})]
    specs = [spec_of(n, o, k) for n, o in variants for k in KS]
    try:
        expected = {spec_of(n, o, k): reference(recs, truth, n, k, {**o, **ctx}) for n, o in variants for k in KS}
    except RefError:
        with pytest.raises(DataError):
            receval.evaluate(pd.DataFrame(recs), pd.DataFrame(truth), specs, **{a: v for a, v in ctx.items() if v is not None})
        return
    res = receval.evaluate(pd.DataFrame(recs), pd.DataFrame(truth), specs, **{a: v for a, v in ctx.items() if v is not None})
    for spec, (_, mean) in expected.items():
        assert res[spec] == pytest.approx(mean, abs=1e-12, rel=1e-12), spec


def test_reference_itself_on_the_worked_example():
    """The reference agrees with hand arithmetic (so a shared mistake is unlikely)."""
    recs = {"user_id": [1, 1, 1, 1], "item_id": [10, 20, 30, 40], "score": [0.9, 0.8, 0.7, 0.6]}
    truth = {"user_id": [1, 1, 1], "item_id": [20, 40, 50], "rating": [5.0, 4.0, 3.0]}
    assert reference(recs, truth, "map", 4)[1] == pytest.approx((1 / 2 + 2 / 4) / 3)
    assert reference(recs, truth, "ndcg", 4)[1] == pytest.approx(
        (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3) + 1 / math.log2(4))
    )
    assert reference(recs, truth, "mrr", 4)[1] == 0.5
    assert reference(recs, truth, "precision", 2)[1] == 0.5
    with pytest.raises(RefError):
        reference({"user_id": [1, 1], "item_id": [1, 1], "score": [1.0, 0.5]}, truth, "map", 4)


@pytest.mark.parametrize("seed", range(5))
def test_larger_random_dataset_matches_reference(seed):
    """A few hundred rows with heavy ties, seeded numpy generation."""
    rng = np.random.default_rng(seed)
    n_users, n_items = 30, 25
    recs = {"user_id": [], "item_id": [], "score": []}
    truth = {"user_id": [], "item_id": [], "rating": []}
    for u in range(n_users):
        n = int(rng.integers(0, 12))
        for i in rng.choice(n_items, size=n, replace=False):
            recs["user_id"].append(u)
            recs["item_id"].append(int(i))
            recs["score"].append(float(rng.integers(0, 4)) / 4)
        if u % 7 == 6:
            continue  # only in the recommendations
        m = int(rng.integers(1, 8))
        for i in rng.choice(n_items, size=m, replace=False):
            truth["user_id"].append(u)
            truth["item_id"].append(int(i))
            truth["rating"].append(float(rng.integers(1, 11)) / 2)
    ctx = {"rel": 3.0, "ties": ["input", "item", "item_desc", "optimistic"][seed % 4], "empty": "zero" if seed % 2 else "skip"}
    _check(recs, truth, ctx, seed % 2 == 0, VARIANTS)


@settings(max_examples=120, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(data=datasets(), ctx=contexts(), in_spec=st.booleans())
def test_hitscore_positive_matches_reference(data, ctx, in_spec):
    """``hitscore=positive`` (torchmetrics' masking of predictions <= 0) on every metric and
    option: the scores drawn include 0.0 and -0.2, so masked hits are common here."""
    recs, truth = data
    ctx = {**ctx, "hitscore": "positive", "rel": None, "order": "score" if ctx["order"] == "auto" else ctx["order"]}
    _check(recs, truth, ctx, in_spec, VARIANTS)
