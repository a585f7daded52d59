"""Issue 35: the option space grows to what implementations compute.

Four definitions found in the wild, each a declared option of its metric (so the signature,
``explain``, the generated reference and the audit's option search carry it):

- ``precision/recall(average=micro)``: pooled over users, Σ hits / Σ denominators (implicit);
- ``ndcg(ideal=length)``: the ideal of ``ideal=k`` cut at the list's own length (CAPRI);
- ``novelty(denominator=k)``: the summed self-information divided by k, not the list's length
  (recmetrics);
- ``gauc``/``auc``/``lauc(negatives=catalog)`` with ``tied=wrong``: the AUC against the whole
  catalogue, a tie counting 0 (Cornac).

Golden values fail without the option (an unknown value is a SpecError); the references of
``receval.conformance.reference`` agree with the metrics on random inputs; the new options'
defaults leave every signature as it was.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

import receval
from receval import evaluate
from receval.backends.polars import evaluate_polars
from receval.conformance.reference.auc import reference_auc
from receval.conformance.reference.pop import reference_pop
from receval.conformance.reference.ranking import RefError, reference
from receval.errors import OutsideCatalogue, SpecError
from receval.metrics import get_metric

# ---- golden values ---------------------------------------------------------------------------

RECS = {"user_id": [1, 1, 1, 2], "item_id": [10, 20, 30, 10], "score": [3.0, 2.0, 1.0, 1.0]}
TRUTH = {"user_id": [1, 2, 2], "item_id": [10, 10, 40]}


def test_micro_precision_pools_hits_over_slots():
    # user 1: 1 hit in 3 listed; user 2: 1 hit in 1 listed (of 2 relevant)
    res = evaluate(RECS, TRUTH, ["precision(denominator=length,average=micro)@3", "precision(denominator=length)@3",
                                 "precision(average=micro)@3", "recall(average=micro)@3", "recall@3",
                                 "precision(denominator=min_k_r,average=micro)@3"])
    assert res["precision(denominator=length,average=micro)@3"] == 2 / 4
    assert res["precision(denominator=length)@3"] == pytest.approx((1 / 3 + 1) / 2)
    assert res["precision(average=micro)@3"] == 2 / 6
    assert res["recall(average=micro)@3"] == 2 / 3  # 2 hits of 1 + 2 relevant
    assert res["recall@3"] == pytest.approx((1 + 1 / 2) / 2)
    assert res["precision(denominator=min_k_r,average=micro)@3"] == 2 / 3  # implicit: Σ min(k, |R|) = 1 + 2
    # each user's own value stays hits / denominator
    pu = res.per_user()
    assert pu[str(receval.parse_spec("precision(denominator=length,average=micro)@3"))].to_list() == pytest.approx([1 / 3, 1.0])


def test_micro_counts_zeroed_users_slots_and_skips_the_skipped():
    recs = {"user_id": [1, 1, 3], "item_id": [10, 20, 10], "score": [2.0, 1.0, 1.0]}
    truth = {"user_id": [1, 2, 3], "item_id": [10, 10, 50], "rating": [5.0, 5.0, 1.0]}
    spec = "precision(average=micro)@2"
    # user 2 has no recommendation (norecs=zero: 2 slots, no hit); user 3 has no relevant item
    assert evaluate(recs, truth, [spec], rel=3)[spec] == 1 / 4  # empty=skip: users 1, 2
    assert evaluate(recs, truth, [spec], rel=3, empty="zero")[spec] == 1 / 6  # user 3's 2 slots count
    assert evaluate(recs, truth, [spec], rel=3, norecs="skip")[spec] == 1 / 2
    rspec = "recall(average=micro)@2"  # an empty user adds |R| = 0 either way
    assert evaluate(recs, truth, [rspec], rel=3, empty="zero")[rspec] == evaluate(recs, truth, [rspec], rel=3)[rspec] == 1 / 2


@pytest.mark.parametrize("n_batches", [1, 2, 3])
def test_micro_is_the_same_over_batches(n_batches):
    rng = np.random.default_rng(5)
    recs, truth = _random(rng, 9)
    specs = ["precision(average=micro)@3", "recall(average=micro,denominator=min_k_r)@2"]
    want = evaluate(recs, truth, specs, empty="zero")
    got = evaluate_polars(pl.DataFrame(recs).lazy(), pl.DataFrame(truth).lazy(), specs, overrides={"empty": "zero"},
                          n_batches=n_batches)
    for s in specs:
        assert got[s] == pytest.approx(want[s], rel=1e-12, abs=1e-15)


def test_ideal_length_cuts_the_ideal_at_the_list():
    # user 1: list 10+, 20−, 30− (3 slots); user 2: list 10+ (1 slot); k = 5
    res = evaluate(RECS, TRUTH, ["ndcg(ideal=length)@5", "ndcg(ideal=k)@5", "ndcg(ideal=length)@2"])
    disc = [1 / math.log2(i + 1) for i in range(1, 6)]
    assert res["ndcg(ideal=length)@5"] == pytest.approx((1 / sum(disc[:3]) + 1 / disc[0]) / 2)
    assert res["ndcg(ideal=k)@5"] == pytest.approx(1 / sum(disc))
    assert res["ndcg(ideal=length)@2"] == pytest.approx((1 / sum(disc[:2]) + 1) / 2)


def test_novelty_over_k():
    train = {"user_id": [1, 2, 3, 4, 1, 2], "item_id": [1, 1, 1, 1, 2, 2]}
    recs = {"user_id": [1, 1], "item_id": [1, 2], "score": [2.0, 1.0]}
    truth = {"user_id": [1], "item_id": [1]}
    res = evaluate(recs, truth, ["novelty(denominator=k)@4", "novelty@4", "novelty(denominator=k)@2"], train=train)
    assert res["novelty(denominator=k)@4"] == 1 / 4  # (0 + 1) / 4
    assert res["novelty@4"] == 1 / 2
    assert res["novelty(denominator=k)@2"] == 1 / 2


def test_auc_against_the_catalogue_with_ties_counting_zero():
    # list 10− (2), 20+ (1), 60− (1, tied with 20); relevant 20 and 30 (30 unlisted); catalogue 10..60
    recs = {"user_id": [1, 1, 1], "item_id": [10, 20, 60], "score": [2.0, 1.0, 1.0]}
    truth = {"user_id": [1, 1], "item_id": [20, 30]}
    cat = [10, 20, 30, 40, 50, 60]
    n_prime = 4  # 10, 40, 50, 60
    for tied, tau in (("wrong", 1.0), ("half", 0.5), ("correct", 0.0)):
        spec = f"gauc(negatives=catalog,denominator=r,tied={tied})"
        a20 = 1 + tau  # 10 above, 60 tied
        want = ((1 - a20 / n_prime) + (1 - tau) * (n_prime - 2) / n_prime) / 2
        assert evaluate(recs, truth, [spec], catalog=cat)[spec] == pytest.approx(want, rel=1e-15)
    # Cornac's AUC by brute force over every (positive, negative) pair of a scored catalogue, unscored
    # items scored below every listed one (all equal), a tie counting 0
    score = {10: 2.0, 20: 1.0, 60: 1.0, 30: -1.0, 40: -1.0, 50: -1.0}
    pos, neg = [20, 30], [10, 40, 50, 60]
    cornac = sum(score[p] > score[n] for p in pos for n in neg) / (len(pos) * len(neg))
    spec = "gauc(negatives=catalog,denominator=r,tied=wrong)"
    assert evaluate(recs, truth, [spec], catalog=cat)[spec] == pytest.approx(cornac, rel=1e-15)
    # the stacked AUC with ties counting 0: pairs (20, 10) no, (20, 60) tie → 0
    assert evaluate(recs, truth, ["auc(tied=wrong)"])["auc(tied=wrong)"] == 0.0
    assert evaluate(recs, truth, ["auc(tied=correct)"])["auc(tied=correct)"] == 0.5


def test_catalogue_auc_reads_the_catalogue_and_refuses_outside_items():
    recs = {"user_id": [1, 1], "item_id": [10, 20], "score": [2.0, 1.0]}
    truth = {"user_id": [1], "item_id": [20]}
    spec = "gauc(negatives=catalog)"
    res = evaluate(recs, truth, [spec], catalog=[10, 20, 30])
    assert "side:catalog" in res.signature(spec)
    assert res[spec] == 1 - 1 / 2
    with pytest.raises(OutsideCatalogue):
        evaluate(recs, truth, [spec], catalog=[20, 30])
    with pytest.raises(SpecError, match="tied=half"):
        evaluate(recs, truth, ["gauc(negatives=catalog,denominator=r,tied=order)"], catalog=[10, 20, 30])
    # without the option no catalogue is read
    assert "side:" not in evaluate(recs, truth, ["gauc"], catalog=[10, 20, 30]).signature("gauc")


def test_the_options_are_declared_in_the_registry():
    """Declared axes: the signature, explain, the generated reference and the audit's search read them."""
    assert get_metric("precision").axis("average").values.keys() == {"macro", "micro"}
    assert get_metric("recall").axis("average").values.keys() == {"macro", "micro"}
    assert "length" in get_metric("ndcg").axis("ideal").values
    assert get_metric("novelty").axis("denominator").values.keys() == {"length", "k"}
    for name in ("auc", "gauc", "lauc"):
        m = get_metric(name)
        assert "wrong" in m.axis("tied").values and "catalog" in m.axis("negatives").values
    assert get_metric("precision").pair_kind({"average": "micro"}) == "ratio"
    assert get_metric("precision").pair_kind({"average": "macro"}) is None
    assert get_metric("f1").pair_kind({"aggregate": "means"}) == "f1"


def test_defaults_leave_signatures_unchanged():
    res = evaluate(RECS, TRUTH, ["precision@3", "recall@3", "precision(average=micro)@3"])
    assert "avg" not in res.signature("precision@3") and "avg" not in res.signature("recall@3")
    assert "avg:micro" in res.signature("precision(average=micro)@3")
    train = {"user_id": [1, 2], "item_id": [10, 20]}
    sig = evaluate(RECS, TRUTH, ["novelty@3", "novelty(denominator=k)@3"], train=train)
    assert "den" not in sig.signature("novelty@3") and "den:k" in sig.signature("novelty(denominator=k)@3")


# ---- the references agree on random inputs --------------------------------------------------


def _random(rng: np.random.Generator, n_users: int, scores: bool = True):
    recs: dict = {"user_id": [], "item_id": [], "score": []}
    truth: dict = {"user_id": [], "item_id": [], "rating": []}
    for u in range(n_users):
        n = int(rng.integers(0, 7))
        for i in rng.choice(12, size=n, replace=False):
            recs["user_id"].append(u)
            recs["item_id"].append(int(i))
            recs["score"].append(float(rng.choice([0.1, 0.2, 0.3, 0.5])))
        m = int(rng.integers(1, 5))
        for i in rng.choice(12, size=m, replace=False):
            truth["user_id"].append(u)
            truth["item_id"].append(int(i))
            truth["rating"].append(float(rng.choice([1.0, 2.0, 3.5, 5.0])))
    if not scores:
        del recs["score"]
    return recs, truth


def _compare(res, spec, ref):
    if ref is None:
        return
    ref_users, ref_mean = ref
    assert res[spec] == pytest.approx(ref_mean, rel=1e-12, abs=1e-12), spec
    if ref_users is None:
        return
    pu = res.per_user()
    key = str(receval.parse_spec(spec))
    for u, v in zip(pu["user_id"].to_list(), pu[key].to_list()):
        want = ref_users[u]
        assert (v is None) if want is None else v == pytest.approx(want, rel=1e-12, abs=1e-12), (spec, u, v, want)


def _agree(recs, truth, cases, ctx, **side):
    """Each (metric, k, options) against its reference under the context ``ctx``."""
    for metric, k, opts, ref_fn in cases:
        inner = ",".join(f"{a}={v}" for a, v in opts.items())
        spec = (f"{metric}({inner})" if inner else metric) + (f"@{k}" if k else "")
        try:
            ref = ref_fn(metric, k, {**opts, **ctx})
        except RefError:
            with pytest.raises(receval.RecevalError):
                evaluate(recs, truth, [spec], **ctx, **side)
            continue
        res = evaluate(recs, truth, [spec], **ctx, **side)
        _compare(res, spec, ref)


CTXS = [
    {"ties": "input", "rel": 3.0},
    {"ties": "item", "rel": None, "empty": "zero"},
    {"ties": "input", "rel": 2.0, "norecs": "skip"},
    {"ties": "item_desc", "rel": 3.0, "empty": "zero", "norecs": "zero", "order": "score"},
]


def _ctx(c: dict) -> dict:
    return {a: v for a, v in c.items() if v is not None} | ({"rel": "all"} if c.get("rel") is None else {})


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("ctx", CTXS)
def test_reference_agrees_micro_and_ideal_length(seed, ctx):
    rng = np.random.default_rng(seed)
    recs, truth = _random(rng, 5)
    ref_ctx = dict(ctx)

    def ref(metric, k, o):
        return reference(recs, truth, metric, k, {**o, **ref_ctx, "rel": ctx.get("rel")})

    cases = [(m, k, {"denominator": d, "average": "micro"}, ref)
             for m, dens in (("precision", ("k", "length", "min_k_r")), ("recall", ("r", "min_k_r", "listed")))
             for d in dens for k in (1, 3, 8)]
    cases += [("ndcg", k, {"ideal": "length", "gain": g}, ref) for g in ("binary", "linear", "exp2") for k in (1, 3, 8)]
    _agree(recs, truth, cases, _ctx(ctx))


@pytest.mark.parametrize("seed", range(6))
def test_reference_agrees_novelty_over_k(seed):
    rng = np.random.default_rng(100 + seed)
    recs, truth = _random(rng, 5)
    train = {"user_id": [int(u) for u in rng.integers(0, 6, 25)], "item_id": [int(i) for i in rng.integers(0, 9, 25)]}

    def ref(metric, k, o):
        return reference_pop(recs, truth, metric, k, o, train=train)

    cases = [("novelty", k, {"denominator": d, "unknown": u}, ref) for d in ("k", "length") for u in ("max", "skip")
             for k in (1, 3, 8)]
    _agree(recs, truth, cases, {"ties": "input", "rel": 3.0}, train=train)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("with_scores", [True, False])
def test_reference_agrees_catalogue_auc(seed, with_scores):
    rng = np.random.default_rng(200 + seed)
    recs, truth = _random(rng, 5, scores=with_scores)
    catalog = list(range(15))
    ctx = {"ties": "input", "rel": 3.0} if with_scores else {"order": "input", "rel": 3.0}

    def ref(metric, k, o):
        return reference_auc(recs, truth, metric, k, o, catalog=catalog)

    cases = [("gauc", k, {"tied": t, "negatives": n, "denominator": d}, ref)
             for t in ("half", "correct", "wrong", "order") for n in ("exact", "plus_one", "catalog") for d in ("list", "r")
             for k in (None, 3)
             if not (n == "catalog" and d == "r" and t == "order")]
    _agree(recs, truth, cases, ctx, catalog=catalog)


def test_the_reference_refuses_what_the_metric_refuses():
    recs, truth = {"user_id": [1, 1], "item_id": [10, 99], "score": [2.0, 1.0]}, {"user_id": [1], "item_id": [10]}
    with pytest.raises(RefError):
        reference_auc(recs, truth, "gauc", None, {"negatives": "catalog"}, catalog=[10, 20])
    with pytest.raises(OutsideCatalogue):
        evaluate(recs, truth, ["gauc(negatives=catalog)"], catalog=[10, 20])


@pytest.mark.parametrize("spec,side", [
    ("precision(average=micro,denominator=length)@3", {}),
    ("recall(average=micro)@2", {}),
    ("ndcg(ideal=length)@5", {}),
    ("novelty(denominator=k)@4", {"train": {"user_id": [1, 2, 2], "item_id": [10, 20, 30]}}),
    ("gauc(negatives=catalog,denominator=r,tied=wrong)", {"catalog": [10, 20, 30, 40, 50]}),
])
def test_a_signature_reproduces_its_value(spec, side):
    """The signature names the option: the spec parsed back from it gives the same value."""
    from receval.signature import parse_signature

    res = evaluate(RECS, TRUTH, [spec], **side)
    again = str(parse_signature(res.signature(spec))[0])
    assert evaluate(RECS, TRUTH, [again], **side)[again] == res[spec]


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_micro_on_spark_is_the_in_memory_value():
    """The distributed reduction sums the pairs' columns: the pooled ratio, as in memory."""
    pytest.importorskip("pyspark")
    import shutil

    if shutil.which("java") is None:
        pytest.skip("Spark needs Java")
    import pandas as pd

    from receval.backends.spark import local_session

    recs = {"user_id": [1, 1, 1, 2, 3], "item_id": [10, 20, 30, 10, 50], "score": [3.0, 2.0, 1.0, 1.0, 1.0]}
    truth = {"user_id": [1, 2, 2, 3, 4], "item_id": [10, 10, 40, 60, 10]}
    specs = ["precision(denominator=length,average=micro)@3", "recall(average=micro)@3"]
    want = evaluate(recs, truth, specs, empty="zero")
    assert want[specs[0]] == (1 + 1 + 0) / (3 + 1 + 1 + 0)  # user 4 has no list: no slot
    spark = local_session()
    got = evaluate(spark.createDataFrame(pd.DataFrame(recs)), spark.createDataFrame(pd.DataFrame(truth)), specs, empty="zero")
    for s in specs:
        assert got[s] == pytest.approx(want[s], rel=1e-15)


@pytest.mark.parametrize("metric", ["auc", "gauc", "lauc"])
def test_whole_catalogue_auc_without_a_catalogue_is_refused(metric):
    """negatives=catalog counts the catalogue: without catalog= or train= the items seen in the
    inputs would stand in for it, and a batch of users sees only its own (the value would
    depend on batching), so the call is refused with the fix."""
    from receval import evaluate
    from receval.errors import SpecError

    recs = {"user_id": [1, 1, 2, 2], "item_id": [10, 20, 20, 30], "score": [2.0, 1.0, 2.0, 1.0]}
    truth = {"user_id": [1, 2], "item_id": [20, 30]}
    spec = f"{metric}(negatives=catalog)@5"
    with pytest.raises(SpecError, match="pass the catalogue"):
        evaluate(recs, truth, [spec])
    assert evaluate(recs, truth, [spec], catalog=[10, 20, 30, 40])[spec] == evaluate(
        recs, truth, [spec], train={"user_id": [9, 9, 9, 9], "item_id": [10, 20, 30, 40]})[spec]
