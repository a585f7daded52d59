"""Properties every ranking metric must have (hypothesis, derandomised).

Bounds. Every metric that declares ``bounds`` at registration stays inside them under its
default options, with every tie rule but ``optimistic`` (test_declared_bounds, parametrized
from the registry). Variants: without duplicate recommendations, these stay in [0, 1]: precision (every
denominator), recall (every denominator), f1, hitrate(count=any), mrr(hits=first), map and mar
with ``indicator=yes`` (every denominator), map and mar with ``indicator=no`` divided by k or
by Σ min(i, |R|), and ndcg with every ideal but ``none``. The variants that can exceed 1 (each
shown by an example below): hitrate(count=hits), mrr(hits=all), ndcg(ideal=none), dcg, and
map/mar with ``indicator=no`` over a denominator smaller than k (|R|, min(k, |R|), the list
length, H_k); with ``dup=keep`` every hit count can exceed |R|, so recall exceeds 1 too.
With ``ties=optimistic`` tied items share a position, so the top k can hold more than k
items: precision, NDCG, ... can then exceed 1 as well (the bounds hold for the other tie rules).
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import invariance_data as D
import receval
from receval.errors import RecevalError
from receval.registry import registered
from test_invariance import TABLE

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True)

BOUNDED = [
    "precision@{k}", "precision(denominator=length)@{k}", "precision(denominator=min_k_r)@{k}",
    "recall@{k}", "recall(denominator=min_k_r)@{k}", "recall(denominator=listed)@{k}",
    "f1@{k}", "f1(aggregate=means)@{k}", "hitrate@{k}", "mrr@{k}",
    *[f"map(denominator={d})@{{k}}" for d in ("min_k_r", "r", "k", "length", "min_length_r", "hits", "cumulative_min")],
    *[f"mar(denominator={d},indicator=yes)@{{k}}" for d in ("min_k_r", "r", "k", "length", "min_length_r", "hits", "cumulative_min")],
    "map(indicator=no,denominator=k)@{k}", "map(indicator=no,denominator=cumulative_min)@{k}",
    "mar@{k}", "mar(denominator=cumulative_min)@{k}",
    *[f"ndcg(ideal={i},gain={g})@{{k}}" for i in ("cut", "uncut", "k", "hits", "listed") for g in ("binary", "linear", "exp2")],
]
UNBOUNDED = [
    "hitrate(count=hits)@{k}", "mrr(hits=all)@{k}", "ndcg(ideal=none)@{k}", "dcg@{k}", "dcg(gain=exp2)@{k}",
    *[f"map(indicator=no,denominator={d})@{{k}}" for d in ("min_k_r", "r", "length", "min_length_r", "hits")],
    *[f"mar(denominator={d})@{{k}}" for d in ("min_k_r", "r", "length", "min_length_r", "hits")],
]
KS = [1, 2, 3, 5, 10]
BOUNDED_SPECS = {t.format(k=k) for t in BOUNDED for k in KS}


@st.composite
def datasets(draw, distinct_scores=False):
    """Up to 5 users, up to 8 recommendations each (no duplicate pairs), tied scores."""
    recs = {"user_id": [], "item_id": [], "score": []}
    truth = {"user_id": [], "item_id": [], "rating": []}
    n_users = draw(st.integers(1, 5))
    for u in range(n_users):
        items = draw(st.lists(st.integers(0, 14), max_size=8, unique=True))
        if distinct_scores:
            scores = draw(st.lists(st.integers(0, 1000), min_size=len(items), max_size=len(items), unique=True))
        else:
            scores = draw(st.lists(st.integers(0, 3), min_size=len(items), max_size=len(items)))
        for i, s in zip(items, scores):
            recs["user_id"].append(u)
            recs["item_id"].append(i)
            recs["score"].append(float(s))
        rel = draw(st.lists(st.integers(0, 14), min_size=1, max_size=6, unique=True))
        for i in rel:
            truth["user_id"].append(u)
            truth["item_id"].append(i)
            truth["rating"].append(draw(st.sampled_from([0.5 * j for j in range(1, 11)])))
    if not recs["user_id"]:  # no truth user has recommendations (recommendations only outside the truth are refused)
        recs = {"user_id": [], "item_id": [], "score": []}
    return recs, truth


def all_specs(templates):
    return [t.format(k=k) for t in templates for k in KS]


@SETTINGS
@given(data=datasets(), ties=st.sampled_from(["input", "item", "item_desc"]), rel=st.sampled_from([None, 3.0]))
def test_bounds(data, ties, rel):
    recs, truth = data
    specs = all_specs(BOUNDED) + all_specs(UNBOUNDED)
    kw = {"ties": ties, "empty": "zero"} | ({"rel": rel} if rel is not None else {})
    res = receval.evaluate(recs, truth, specs, **kw)
    pu = res.per_user()
    for spec in specs:
        key = str(receval.parse_spec(spec))
        values = [v for v in pu[key].to_list() if v is not None] + [res[spec]]
        assert all(v >= 0 and math.isfinite(v) for v in values), spec
        if spec in BOUNDED_SPECS:
            hi = registered()[receval.parse_spec(spec).name].bounds[1]
            assert all(v <= hi + 1e-12 for v in values), (spec, values)


BOUNDED_METRICS = sorted(n for n, m in registered().items() if m.bounds is not None)


def test_bounded_variants_are_of_bounded_metrics():
    assert {receval.parse_spec(t.format(k=1)).name for t in BOUNDED} <= set(BOUNDED_METRICS)


@pytest.mark.filterwarnings("ignore::receval.errors.RecevalWarning")
@pytest.mark.parametrize("name", BOUNDED_METRICS)
def test_declared_bounds(name):
    """The metric's value, and each per-user value, lies within its declared bounds on inputs
    with many ties, every side input, users without recommendations and outside the truth."""
    lo, hi = registered()[name].bounds
    spec = TABLE[name].spec
    seen = []

    @settings(max_examples=40, deadline=None, derandomize=True)
    @given(case=D.cases(dups=name == "unrepeated"), ties=st.sampled_from(["average", "input", "item", "item_desc"]))
    def check(case, ties):
        try:
            res = receval.evaluate(case.recs, case.truth, [spec], ties=ties, rel=case.rel, **case.side)
        except RecevalError:  # refused (a tie straddling k, a group without users, ...): no value
            return
        key = str(receval.parse_spec(spec))
        per_user = res.per_user()
        values = [res[spec]] + ([v for v in per_user[key].to_list() if v is not None] if key in per_user.columns else [])
        values = [v for v in values if not math.isnan(v)]
        assert all(lo - 1e-12 <= v <= hi + 1e-12 for v in values), (spec, ties, values, case.describe())
        seen.extend(values)

    check()
    assert seen, f"{spec}: every example was refused"


# user 0: one relevant item (rating 5), recommended first in a list of 1
ONE = ({"user_id": [0], "item_id": [1], "score": [1.0]}, {"user_id": [0], "item_id": [1], "rating": [5.0]})
TWO_HITS = ({"user_id": [0, 0], "item_id": [1, 2], "score": [1.0, 0.5]}, {"user_id": [0, 0], "item_id": [1, 2], "rating": [5.0, 5.0]})


@pytest.mark.parametrize(
    "data, spec, above",
    [
        (TWO_HITS, "hitrate(count=hits)@2", 2.0),
        (TWO_HITS, "mrr(hits=all)@2", 1 + 1 / 2),
        (TWO_HITS, "ndcg(ideal=none)@2", 1 + 1 / math.log2(3)),
        (TWO_HITS, "dcg@2", 1 + 1 / math.log2(3)),
        (ONE, "map(indicator=no,denominator=min_k_r)@3", (1 + 1 / 2 + 1 / 3) / 1),
        (ONE, "map(indicator=no,denominator=r)@3", (1 + 1 / 2 + 1 / 3) / 1),
        (ONE, "map(indicator=no,denominator=length)@3", (1 + 1 / 2 + 1 / 3) / 1),
        (ONE, "map(indicator=no,denominator=min_length_r)@3", (1 + 1 / 2 + 1 / 3) / 1),
        (ONE, "map(indicator=no,denominator=hits)@3", (1 + 1 / 2 + 1 / 3) / 1),
        (ONE, "mar(denominator=r)@3", (1 + 1 + 1) / 1),
        (ONE, "mar(denominator=length)@3", 3.0),
    ],
)
def test_variants_that_exceed_one(data, spec, above):
    v = receval.evaluate(*data, [spec])[spec]
    assert v == pytest.approx(above) and v > 1


def test_optimistic_ties_can_exceed_one():
    """Two relevant items tied at the top score both sit at position 1."""
    recs = {"user_id": [0, 0, 0], "item_id": [1, 2, 3], "score": [0.9, 0.9, 0.1]}
    truth = {"user_id": [0, 0], "item_id": [1, 2]}
    res = receval.evaluate(recs, truth, ["precision@1", "ndcg@1", "ndcg(ideal=hits)@1", "map@1"], ties="optimistic")
    assert res["precision@1"] == 2.0
    assert res["ndcg@1"] == 2.0  # DCG@1 = 2 / IDCG@1 = 1 (one slot)
    assert res["ndcg(ideal=hits)@1"] == 2.0
    assert res["map@1"] == 4.0  # P@1 = 2/1, counted for each of the two hits at position 1, / min(1, 2)
    assert receval.evaluate(recs, truth, ["precision@1"], ties="input")["precision@1"] == 1.0


def test_dup_keep_lets_recall_and_ndcg_exceed_one():
    recs = {"user_id": [0, 0], "item_id": [1, 1], "score": [1.0, 0.5]}
    truth = {"user_id": [0], "item_id": [1]}
    assert receval.evaluate(recs, truth, ["recall@2"], dup="keep")["recall@2"] == 2.0
    assert receval.evaluate(recs, truth, ["ndcg@2"], dup="keep")["ndcg@2"] == pytest.approx(1 + 1 / math.log2(3))


# ---- a perfect ranking -------------------------------------------------------------------


@SETTINGS
@given(
    ratings=st.lists(st.sampled_from([0.5 * j for j in range(1, 11)]), min_size=1, max_size=7),
    n_irrelevant=st.integers(0, 4),
    k=st.integers(1, 10),
)
def test_perfect_ranking_scores_one(ratings, n_irrelevant, k):
    """Relevant items by rating descending, then the rest: every normalised metric is 1."""
    order = sorted(range(len(ratings)), key=lambda j: -ratings[j])
    items = [100 + j for j in order] + [200 + j for j in range(n_irrelevant)]
    recs = {"user_id": [0] * len(items), "item_id": items, "score": [float(len(items) - p) for p in range(len(items))]}
    truth = {"user_id": [0] * len(ratings), "item_id": [100 + j for j in range(len(ratings))], "rating": ratings}
    R = len(ratings)
    ones = [
        "recall(denominator=min_k_r)", "hitrate", "mrr", "map", "map(denominator=min_length_r)", "map(denominator=hits)",
        "ndcg", "ndcg(gain=linear)", "ndcg(gain=exp2)", "ndcg(gain=shifted)", "ndcg(ideal=hits)", "ndcg(ideal=listed)",
    ]
    if k == R:
        ones += ["f1", "f1(aggregate=means)"]
    if k <= R:
        ones += ["precision", "precision(denominator=min_k_r)", "map(denominator=k)", "map(indicator=no,denominator=k)"]
    if k >= R:
        ones += ["recall", "map(denominator=r)", "ndcg(ideal=uncut)"]
    res = receval.evaluate(recs, truth, [f"{s}@{k}" for s in ones])
    for s in ones:
        assert res[f"{s}@{k}"] == pytest.approx(1.0, abs=1e-12), s


# ---- invariances -----------------------------------------------------------------------------

INVARIANT_SPECS = all_specs(
    [m + "@{k}" for m in ["ndcg", "map", "mrr", "recall", "precision(denominator=length)", "mar", "ndcg(gain=exp2,ideal=uncut)", "hitrate"]]
)


def _permute(cols: dict, perm: list[int]) -> dict:
    return {k: [v[i] for i in perm] for k, v in cols.items()}


@SETTINGS
@given(data=datasets(), seed=st.randoms(use_true_random=False), ties=st.sampled_from(["item", "item_desc", "optimistic"]))
def test_row_order_invariance_when_ties_do_not_depend_on_it(data, seed, ties):
    recs, truth = data
    base = receval.evaluate(recs, truth, INVARIANT_SPECS, ties=ties)
    rp = list(range(len(recs["user_id"])))
    tp = list(range(len(truth["user_id"])))
    seed.shuffle(rp)
    seed.shuffle(tp)
    other = receval.evaluate(_permute(recs, rp), _permute(truth, tp), INVARIANT_SPECS, ties=ties)
    assert other.values == base.values
    assert other.per_user().equals(base.per_user())


@SETTINGS
@given(data=datasets(distinct_scores=True), seed=st.randoms(use_true_random=False))
def test_row_order_invariance_without_ties(data, seed):
    recs, truth = data
    base = receval.evaluate(recs, truth, INVARIANT_SPECS)
    rp = list(range(len(recs["user_id"])))
    seed.shuffle(rp)
    assert receval.evaluate(_permute(recs, rp), truth, INVARIANT_SPECS).values == base.values


@SETTINGS
@given(data=datasets(), seed=st.randoms(use_true_random=False), strings=st.booleans())
def test_relabelling_invariance(data, seed, strings):
    """Any bijection of user ids and of item ids (ties broken by input order, which a
    relabelling leaves alone); per-user values follow their users."""
    recs, truth = data
    users = sorted(set(recs["user_id"]) | set(truth["user_id"]))
    items = sorted(set(recs["item_id"]) | set(truth["item_id"]))
    new_u = list(range(1000, 1000 + len(users)))
    new_i = list(range(5000, 5000 + len(items)))
    seed.shuffle(new_u)
    seed.shuffle(new_i)
    if strings:
        new_u = [f"user{x}" for x in new_u]
        new_i = [f"item{x}" for x in new_i]
    um, im = dict(zip(users, new_u)), dict(zip(items, new_i))

    def relabel(cols):
        return {**cols, "user_id": [um[u] for u in cols["user_id"]], "item_id": [im[i] for i in cols["item_id"]]}

    base = receval.evaluate(recs, truth, INVARIANT_SPECS)
    other = receval.evaluate(relabel(recs), relabel(truth), INVARIANT_SPECS)
    for spec in INVARIANT_SPECS:
        assert other[spec] == pytest.approx(base[spec], abs=1e-12), spec
    pb, po = base.per_user(), other.per_user()
    back = {um[u]: j for j, u in enumerate(pb["user_id"].to_list())}
    for spec in INVARIANT_SPECS:
        key = str(receval.parse_spec(spec))
        for u, v in zip(po["user_id"].to_list(), po[key].to_list()):
            assert v == pytest.approx(pb[key][back[u]], abs=1e-15)


# ---- monotonicity ----------------------------------------------------------------------------


@SETTINGS
@given(data=datasets(), ties=st.sampled_from(["input", "item", "optimistic"]))
def test_non_decreasing_in_k(data, ties):
    recs, truth = data
    ks = list(range(1, 12))
    grow = ["recall", "recall(denominator=listed)", "hitrate", "hitrate(count=hits)", "mrr", "mrr(hits=all)", "dcg"]
    res = receval.evaluate(recs, truth, [f"{m}@{k}" for m in grow for k in ks], ties=ties)
    pu = res.per_user()
    for m in grow:
        cols = [pu[str(receval.parse_spec(f"{m}@{k}"))].to_list() for k in ks]
        for u in range(pu.height):
            seq = [c[u] for c in cols]
            if seq[0] is None:
                continue
            assert all(a <= b + 1e-12 for a, b in zip(seq, seq[1:])), (m, seq)


SWAP_SPECS = ["ndcg", "ndcg(gain=exp2)", "ndcg(ideal=uncut)", "map", "map(denominator=r)", "map(indicator=no,denominator=k)", "mrr", "mar"]


@SETTINGS
@given(
    flags=st.lists(st.booleans(), min_size=2, max_size=9),
    ratings=st.lists(st.sampled_from([1.0, 2.0, 3.0, 4.0, 5.0]), min_size=9, max_size=9),
    extra=st.integers(0, 3),
    data=st.data(),
)
def test_moving_a_relevant_item_up_never_lowers(flags, ratings, extra, data):
    """Swap a relevant item with the non-relevant item just above it."""
    swappable = [j for j in range(1, len(flags)) if flags[j] and not flags[j - 1]]
    if not swappable:
        return
    j = data.draw(st.sampled_from(swappable))
    items = list(range(len(flags)))
    truth = {
        "user_id": [0] * (sum(flags) + extra),
        "item_id": [i for i in items if flags[i]] + [100 + x for x in range(extra)],
        "rating": [ratings[i] for i in items if flags[i]] + [3.0] * extra,
    }
    swapped = items[:]
    swapped[j - 1], swapped[j] = swapped[j], swapped[j - 1]
    ks = [1, 2, 3, 5, 9]
    specs = [f"{s}@{k}" for s in SWAP_SPECS for k in ks]
    before = receval.evaluate({"user_id": [0] * len(items), "item_id": items}, truth, specs, order="input")
    after = receval.evaluate({"user_id": [0] * len(items), "item_id": swapped}, truth, specs, order="input")
    for spec in specs:
        assert after[spec] >= before[spec] - 1e-12, spec
    # and strictly better at the cut-off that just admits the moved item
    assert after[f"mrr@{ks[-1]}"] >= before[f"mrr@{ks[-1]}"]
