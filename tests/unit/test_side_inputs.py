"""Side inputs (categories, train, catalog, baseline, item_groups, user_groups).

* A side input a metric reads is named in its signature (``side:<inputs>``, or ``side:none``
  when none was given): the same signature never stands for two values. A side input the
  metric does not read changes neither its value nor its signature.
* Every engine (memory, Polars, Spark) receives every side input: the metrics reading
  item_groups, user_groups and baseline give the same value (1e-12) and signature on each.

Scores carry no ties within a user (the default tie rule is not relied on).
"""

from __future__ import annotations

import itertools
import math
import shutil

import numpy as np
import polars as pl
import pytest

import receval
from receval import parse_signature
from receval.metrics import all_metrics
from receval.options import CONTEXT_AXES

# users 1..5 in the truth, 1..4 with recommendations (9: recommendations only); distinct scores
RECS = {
    "user_id": [1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 4, 4, 9, 9],
    "item_id": [10, 20, 30, 40, 10, 40, 50, 60, 20, 30, 70, 50, 10, 10, 20],
    "score": [0.9, 0.8, 0.7, 0.6, 0.9, 0.8, 0.7, 0.6, 0.9, 0.8, 0.7, 0.9, 0.8, 0.9, 0.8],
}
TRUTH = {
    "user_id": [1, 1, 2, 2, 3, 3, 4, 5],
    "item_id": [20, 40, 40, 60, 30, 80, 10, 70],
    "rating": [5.0, 3.0, 4.0, 2.0, 5.0, 4.0, 1.0, 4.0],
}
SIDE = {
    # items 90 and 95 only here: the catalogue of recs + truth + categories is larger
    "categories": {"item_id": [10, 20, 30, 40, 50, 60, 70, 80, 90, 95],
                   "category": ["a", "b", "a", "c", "b", "a", "c", "b", "a", "c"]},
    # every recommended item has train rows; 91 and 92 only here; uneven popularity
    "train": {"user_id": [1, 2, 5, 5, 5, 6, 6, 6, 7, 1, 2, 7, 8, 8, 3, 6, 7, 8],
              "item_id": [10, 10, 20, 30, 70, 40, 50, 60, 91, 92, 60, 10, 10, 20, 80, 70, 30, 92]},
    # every item above plus 93 and 94
    "catalog": [10, 20, 30, 40, 50, 60, 70, 80, 90, 91, 92, 93, 94, 95],
    "baseline": {"user_id": [1, 1, 2, 3, 3, 4], "item_id": [20, 80, 10, 30, 20, 60], "score": [2.0, 1.0, 1.0, 2.0, 1.0, 1.0]},
    "item_groups": {"item_id": [10, 20, 30, 40, 50, 60, 70, 80], "group": ["p", "q", "p", "q", "p", "q", "p", "q"]},
    "user_groups": {"user_id": [1, 2, 3, 4, 5], "group": ["x", "y", "x", "y", "x"]},
}
NAMES = tuple(SIDE)


def run(spec: str, given=(), **kw):
    """(value, signature) of ``spec`` with the side inputs named in ``given``; None if refused."""
    try:
        res = receval.evaluate(RECS, TRUTH, [spec], ties="input", **{n: SIDE[n] for n in given}, **kw)
    except receval.RecevalError:
        return None
    return res[spec], res.signature(spec)


def _field(sig: str, key: str) -> str | None:
    found = [p.partition(":")[2] for p in sig.split("|") if p.partition(":")[0] == key]
    assert len(found) <= 1, sig
    return found[0] if found else None


# ---- defect: a side input changed the value, not the signature --------------------------------


def test_coverage_signature_names_where_the_catalogue_comes_from():
    """coverage's catalogue is the catalog, else the train items, else every item of the
    recommendations, the truth and the categories: four values, four signatures."""
    cases = {(): "none", ("categories",): "categories", ("train",): "train", ("train", "categories"): "train",
             ("catalog",): "catalog", ("catalog", "train", "categories"): "catalog"}
    got = {given: run("coverage@3", given) for given in cases}
    for given, want in cases.items():
        assert _field(got[given][1], "side") == want, (given, got[given])
    values = {want: got[given][0] for given, want in cases.items()}
    assert values == {"none": 6 / 8, "categories": 6 / 10, "train": 6 / 10, "catalog": 6 / 14}
    assert len({sig for _, sig in got.values()}) == 4  # one signature per source of the catalogue


# (spec, the side input toggled, the side inputs given in both runs): the value changes
READ = [
    ("coverage@3", "train", ()),
    ("coverage@3", "categories", ()),
    ("coverage@3", "catalog", ("train",)),
    ("coverage(denominator=catalog_plus_one)@3", "catalog", ()),
    ("gini@3", "train", ()),
    ("gini(form=complement)@3", "categories", ()),
    ("gini(form=catalog_divisor,pad=yes)@3", "catalog", ("train", "categories")),
    ("entropy(normalize=catalog)@3", "train", ()),
    ("entropy(normalize=catalog)@3", "catalog", ("train",)),
    ("serendipity@3", "catalog", ("train",)),
    ("aplt(split=items)@3", "catalog", ("train",)),
    ("aclt(split=items)@3", "catalog", ("train",)),
    ("poprsp(split=items)@3", "catalog", ("train",)),
    ("rsp@3", "train", ("item_groups",)),
]


@pytest.mark.parametrize("spec, toggled, base", READ, ids=[f"{s}-{t}" for s, t, _ in READ])
def test_a_side_input_read_changes_the_signature(spec, toggled, base):
    without, with_ = run(spec, base), run(spec, (*base, toggled))
    assert without is not None and with_ is not None
    assert without[0] != with_[0]  # the side input is read: the value changes ...
    assert without[1] != with_[1]  # ... and so does the signature
    assert toggled in _field(with_[1], "side").split("+")
    assert toggled not in (_field(without[1], "side") or "").split("+")


@pytest.mark.parametrize("spec", ["aplt@3", "aclt@3", "popreo(split=count,cut=2)@3", "poprsp(split=count,cut=2)@3"])
def test_the_popularity_metrics_read_a_catalog_narrower_than_train(spec):
    """The head/tail split ranks the catalogue items (``split=count``: relevant items and group
    sizes outside the catalogue count in no group): a catalog without the train-only items
    (and item 80) is another value, and another signature."""
    narrow = [10, 20, 30, 40, 50, 60, 70]
    without = receval.evaluate(RECS, TRUTH, [spec], ties="input", train=SIDE["train"])
    with_ = receval.evaluate(RECS, TRUTH, [spec], ties="input", train=SIDE["train"], catalog=narrow)
    assert without[spec] != with_[spec]
    assert _field(without.signature(spec), "side") == "train" and _field(with_.signature(spec), "side") == "train+catalog"


# (spec, the side input toggled, the side inputs given in both runs): not read, nothing changes
NOT_READ = [
    *[("ndcg@3", n, tuple(m for m in NAMES if m != n)) for n in NAMES],
    *[("novelty@3", n, ("train",)) for n in NAMES if n != "train"],
    *[("unseen@3", n, ("train",)) for n in NAMES if n != "train"],
    *[("surprisal(denominator=k)@3", n, ("train",)) for n in NAMES if n != "train"],
    *[("ild@3", n, ("categories",)) for n in NAMES if n != "categories"],
    *[("unexpectedness@3", n, ("baseline",)) for n in NAMES if n != "baseline"],
    *[("mad@3", n, ("user_groups",)) for n in NAMES if n != "user_groups"],
    *[("reo@3", n, ("item_groups",)) for n in NAMES if n != "item_groups"],
    ("coverage@3", "train", ("catalog",)),
    ("coverage@3", "categories", ("train",)),
    ("coverage@3", "categories", ("catalog",)),
    ("coverage(denominator=train)@3", "catalog", ("train",)),
    ("coverage(denominator=train)@3", "categories", ("train",)),
    ("coverage(denominator=count)@3", "catalog", ()),
    ("coverage(denominator=count)@3", "train", ()),
    ("entropy@3", "catalog", ()),
    ("entropy(form=per_item,normalize=catalog)@3", "catalog", ()),
    ("aplt(split=count,cut=1)@3", "catalog", ("train",)),
    ("arp@3", "catalog", ("train",)),
    ("bias_disparity(icat=p,of=br)@3", "train", ("item_groups",)),
    ("bias_disparity(icat=p)@3", "user_groups", ("item_groups", "train")),
    ("rsp@3", "catalog", ("item_groups", "train")),
]


@pytest.mark.parametrize("spec, toggled, base", NOT_READ, ids=[f"{s}-{t}" for s, t, _ in NOT_READ])
def test_a_side_input_not_read_changes_nothing(spec, toggled, base):
    without, with_ = run(spec, base), run(spec, (*base, toggled))
    assert without is not None and with_ is not None
    assert without == with_


@pytest.mark.parametrize("spec", ["ndcg@3", "auc", "covered@3", "unrepeated(dup=keep)@3", "entropy@3", "coverage(denominator=count)@3"])
def test_no_side_field_where_no_side_input_is_read(spec):
    for given in ((), NAMES):
        got = run(spec, given)
        assert got is not None and _field(got[1], "side") is None, got


def _sweep_specs() -> list[str]:
    """One spec per value of each metric axis (context axes left at their defaults)."""
    extra = {"bias_disparity": [{"icat": "p"}, {"icat": "p", "of": "br"}, {"icat": "q", "of": "bs", "ugroup": "x"},
                                {"icat": "p", "ugroup": "y"}]}
    out = []
    for m in all_metrics():
        k = "@3" if m.needs_k else ""
        if m.name in extra:
            out += [f"{m.name}({','.join(f'{a}={v}' for a, v in o.items())}){k}" for o in extra[m.name]]
            continue
        out.append(m.name + ("(dup=keep)" if m.name == "unrepeated" else "") + k)
        for name, axis in m.axes.items():
            if name in CONTEXT_AXES:
                continue
            for v in axis.values or ([0.3] if name not in ("t", "cut", "refk", "gmax") else []):
                if v != axis.default:
                    out.append(f"{m.name}({name}={v}{',dup=keep' if m.name == 'unrepeated' else ''}){k}")
    return out


#: every subset of the inputs that define the catalogue, with the others given; each of the others left out once
SUBSETS = [tuple(c for c in ("categories", "train", "catalog") if c in s) + ("baseline", "item_groups", "user_groups")
           for r in range(4) for s in itertools.combinations(("categories", "train", "catalog"), r)]
SUBSETS += [tuple(n for n in NAMES if n != drop) for drop in ("baseline", "item_groups", "user_groups")]


def test_one_signature_one_value_whatever_side_inputs_are_given():
    """Over every metric variant and every subset of the side inputs: two runs with the same
    signature have the same value (a side input that changes a value is in the signature)."""
    specs = [s for s in _sweep_specs() if not s.startswith(("mae", "rmse"))]  # no prediction for every truth pair
    assert len(specs) > 80
    clashes, distinct = [], {}
    for spec in specs:
        by_sig: dict[str, set] = {}
        for given in SUBSETS:
            got = run(spec, given)
            if got is None:
                continue
            value, sig = got
            by_sig.setdefault(sig, set()).add(round(value, 12) if not math.isnan(value) else "nan")
        clashes += [(spec, sig, vals) for sig, vals in by_sig.items() if len(vals) > 1]
        distinct[spec] = len(by_sig)
    assert not clashes, clashes[:5]
    # the metrics whose catalogue may come from several inputs have one signature per source
    for spec in ("coverage@3", "gini@3", "entropy(normalize=catalog)@3"):
        assert distinct[spec] == 4, (spec, distinct[spec])


def test_a_signature_with_a_side_field_parses_and_reproduces():
    value, sig = run("gini@3", ("train", "categories"))
    assert "|side:train|" in sig
    explicit, dialect, _ = parse_signature(sig)
    assert str(explicit).startswith("gini(") and dialect == "standard"
    assert run(explicit, ("train", "categories")) == (value, sig)
    # without the side input: another value, and a signature that says so
    other = run(explicit)
    assert other[0] != value and "|side:none|" in other[1]
    # a signature published before the field existed still parses to the same spec
    old = sig.replace("|side:train", "")
    assert parse_signature(old)[0] == explicit


def test_a_signature_with_a_side_field_is_a_metric_spec():
    value, sig = run("coverage@3", ("train",))
    res = receval.evaluate(RECS, TRUTH, [sig], ties="input", train=SIDE["train"])
    assert list(res.values.values()) == [value] and list(res.signatures.values()) == [sig]


# ---- defect: the Polars and Spark engines dropped item_groups, user_groups and baseline ---------

#: every metric reading item_groups, user_groups or baseline, with the options that change what it reads
GROUP_SPECS = [
    "reo@5", "rsp@5", "rsp@20",
    "bias_disparity(icat=g0)@5", "bias_disparity(icat=g1,of=br,ugroup=u0)@5", "bias_disparity(icat=g2,of=bs,ugroup=u1)@5",
    "bias_disparity(icat=g0,ugroup=u1)@10",
    "mad@5", "mad(of=score)@5", "mad@10",
    "intersection@5", "intersection(refk=3)@5", "unexpectedness@5", "unexpectedness@10",
]


def group_data(seed: int = 5, n_users: int = 90, n_items: int = 30, user: str = "user_id", item: str = "item_id"):
    """Recommendations with distinct scores per user (some truth users without any; one
    recommended user outside the truth), truth, and every side input."""
    rng = np.random.default_rng(seed)
    ru, ri, rs = [], [], []
    for u in range(n_users):
        if rng.random() < 0.1:
            continue
        n = int(rng.integers(1, 14))
        ru += [u] * n
        ri += rng.choice(n_items, n, replace=False).tolist()
        rs += (np.sort(rng.choice(1000, n, replace=False))[::-1] / 100.0).tolist()
    ru, ri, rs = ru + [5000, 5000], ri + [1, 2], rs + [2.0, 1.0]
    tu, ti, ty = [], [], []
    for u in range(n_users):
        n = int(rng.integers(1, 8))
        tu += [u] * n
        ti += rng.choice(n_items, n, replace=False).tolist()
        ty += rng.integers(1, 6, n).astype(float).tolist()
    bu, bi, bs = [], [], []
    for u in range(0, n_users, 2):
        n = int(rng.integers(1, 12))
        bu += [u] * n
        bi += rng.choice(n_items, n, replace=False).tolist()
        bs += rng.permutation(n).astype(float).tolist()
    recs = pl.DataFrame({user: ru, item: ri, "score": rs})
    truth = pl.DataFrame({user: tu, item: ti, "rating": ty})
    side = {
        "train": pl.DataFrame({user: rng.integers(0, 120, 500), item: rng.integers(0, n_items, 500)}),
        "categories": pl.DataFrame({item: np.arange(n_items), "category": [f"c{i % 4}" for i in range(n_items)]}),
        "catalog": list(range(n_items + 3)),
        "baseline": pl.DataFrame({user: bu, item: bi, "score": bs}),
        "item_groups": pl.DataFrame({item: np.arange(n_items), "group": [f"g{i % 3}" for i in range(n_items)]}),
        "user_groups": pl.DataFrame({user: np.arange(n_users), "group": [f"u{i % 2}" for i in range(n_users)]}),
    }
    return recs, truth, side


def _same(a, b, exact: bool = False):
    assert a.keys() == b.keys()
    for e, f in zip(a.entries, b.entries):
        assert (e.value == f.value) if exact else abs(e.value - f.value) <= 1e-12, (e.metric, e.value, f.value)
        assert e.signature == f.signature, (e.signature, f.signature)
        assert e.users == f.users and e.skipped == f.skipped


def test_group_and_baseline_metrics_read_their_side_inputs_in_memory():
    recs, truth, side = group_data()
    res = receval.evaluate(recs, truth, GROUP_SPECS, **side)
    for spec in GROUP_SPECS:
        assert "|side:" in res.signature(spec) and not math.isnan(res[spec])


def test_polars_engine_receives_every_side_input():
    from receval.backends.polars import evaluate_polars

    recs, truth, side = group_data()
    want = receval.evaluate(recs, truth, GROUP_SPECS, **side)
    _same(want, receval.evaluate(recs, truth, GROUP_SPECS, engine="polars", **side))
    for nb in (2, 3):
        _same(want, evaluate_polars(recs.lazy(), truth.lazy(), GROUP_SPECS, n_batches=nb, **side))


def test_polars_engine_reads_side_inputs_with_the_callers_columns():
    recs, truth, side = group_data(user="uid", item="iid")
    kw = dict(user_col="uid", item_col="iid", **side)
    specs = GROUP_SPECS + ["coverage@5", "novelty@5", "ild@5"]
    _same(receval.evaluate(recs, truth, specs, **kw), receval.evaluate(recs, truth, specs, engine="polars", **kw))


@pytest.fixture(scope="module")
def spark():
    pytest.importorskip("pyspark")
    if shutil.which("java") is None:
        pytest.skip("Spark needs Java")
    from receval.backends.spark import local_session

    session = local_session(partitions=3)
    yield session
    session.stop()


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_spark_engine_receives_every_side_input(spark):
    recs, truth, side = group_data()
    want = receval.evaluate(recs, truth, GROUP_SPECS, **side)
    rs, ts = spark.createDataFrame(recs.to_pandas()), spark.createDataFrame(truth.to_pandas())
    _same(want, receval.evaluate(rs, ts, GROUP_SPECS, **side))


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_spark_engine_reads_side_inputs_with_the_callers_columns(spark):
    recs, truth, side = group_data(user="uid", item="iid")
    kw = dict(user_col="uid", item_col="iid", **side)
    specs = GROUP_SPECS + ["coverage@5", "novelty@5", "ild@5"]
    rs, ts = spark.createDataFrame(recs.to_pandas()), spark.createDataFrame(truth.to_pandas())
    _same(receval.evaluate(recs, truth, specs, **kw), receval.evaluate(rs, ts, specs, **kw))


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_spark_refuses_side_inputs_given_as_spark_frames(spark):
    recs, truth, side = group_data()
    rs, ts = spark.createDataFrame(recs.to_pandas()), spark.createDataFrame(truth.to_pandas())
    for name in ("baseline", "item_groups", "user_groups"):
        frame = spark.createDataFrame(side[name].to_pandas())
        with pytest.raises(receval.RecevalError, match="in-memory"):
            receval.evaluate(rs, ts, ["reo@5"], **{name: frame})
