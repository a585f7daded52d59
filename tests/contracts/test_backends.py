"""Every batched or distributed path gives the in-memory numbers of one batch (the registry's
engine contract, one test per guarantee).

:func:`test_every_batched_path_equals_one_batch`: every registered metric x every value of each
of its options (one at a time) x several context settings, with every side input given, on a
seeded dataset with ties, users without recommendations, recommendation users outside the
truth, users without relevant items and (in one variant) duplicates. Each path that splits or
distributes the work (the Polars backend in 1, 3 and 5 batches; the in-memory engine in 2 and 6
user batches under a small ``RECEVAL_MEMORY_BUDGET``; Spark on 3 partitions) equals the
in-memory engine in one batch: bit for bit (values, per-user values, signatures, users, info,
fingerprints), Spark to 1e-12. The default tier keeps one context per path (conftest's
SWEEP_TESTS: every tenth case, ordered path by path).

:func:`test_global_metrics_combine_bit_for_bit_in_many_batches`: every global metric (partial /
combine), every option value and option combinations, in up to 7 Polars batches and in more
than 10 memory-budget batches, with each way of giving the catalogue: bit for bit.

Every shipped dialect on the Polars backend and on Spark; the refusals of each path.
"""

from __future__ import annotations

import itertools
import math
import shutil
from functools import cache

import numpy as np
import polars as pl
import pytest

import receval.backends.polars as bp
from receval import evaluate
from receval.backends.polars import batches_for, evaluate_polars, parse_bytes
from receval.dialects import dialect_names
from receval.errors import DataError, SpecError
from receval.io import Columns
from receval.metrics import all_metrics
from receval.spec import parse_spec

CONTEXTS = [
    {},
    {"rel": 3.0, "empty": "zero"},
    {"ties": "item", "norecs": "skip"},
    {"ties": "optimistic", "rel": 2.0, "empty": "skip"},
    {"order": "input", "norecs": "zero"},
    {"hitscore": "positive", "ties": "item_desc"},  # score-0 rows of the data are masked
    {"ties": "average", "rel": 3.0},  # the tie-aware closed forms, batched like every other value
    {"ties": "input", "rel": 3.0},
    {"order": "input", "empty": "zero", "norecs": "zero"},
]
# tdup=max: repeated truth rows of make_data(dups=True) disagree on the rating, which tdup=first refuses (issue 31)
DUP_CONTEXT = {"dup": "first", "tdup": "max"}


def make_data(seed: int = 7, n_users: int = 120, n_items: int = 40, dups: bool = False):
    rng = np.random.default_rng(seed)
    ru, ri, rs = [], [], []
    for u in range(n_users):
        if rng.random() < 0.1:  # truth user without recommendations
            continue
        n = int(rng.integers(1, 16))
        items = rng.choice(n_items, n, replace=False)
        scores = np.sort(rng.integers(0, 6, n).astype(float))[::-1]  # ties
        if dups and rng.random() < 0.2:
            items = np.r_[items, items[:1]]
            scores = np.r_[scores, scores[-1:] - 1]
        ru += [u * 3] * len(items)
        ri += list(items)
        rs += list(scores)
    ru += [10_000] * 3  # recommendation user outside the truth
    ri += [1, 2, 3]
    rs += [3.0, 2.0, 1.0]
    tu, ti, ty = [], [], []
    for u in range(n_users):
        if rng.random() < 0.05:
            continue
        n = int(rng.integers(1, 10))
        items = rng.choice(n_items, n, replace=False)
        if dups and rng.random() < 0.1:
            items = np.r_[items, items[:1]]
        tu += [u * 3] * len(items)
        ti += list(items)
        ratings = rng.integers(1, 6, len(items)).astype(float)
        if len(items) > n:  # a repeated truth row repeats its rating (tdup=first refuses repeats that disagree)
            ratings[-1] = ratings[0]
        ty += list(ratings)
    recs = pl.DataFrame({"user_id": ru, "item_id": ri, "score": rs})
    # shuffle users but keep each user's rows in order (input order matters for ties=input)
    truth = pl.DataFrame({"user_id": tu, "item_id": ti, "rating": ty}).sample(fraction=1.0, shuffle=True, seed=seed)
    cats = pl.DataFrame({"item_id": np.arange(n_items), "category": [f"c{i % 5}" for i in range(n_items)]})
    train = pl.DataFrame({"user_id": rng.integers(0, 50, 400), "item_id": rng.integers(0, n_items, 400)})
    catalog = list(range(n_items + 5))
    return recs, truth, cats, train, catalog


def full_side(recs: pl.DataFrame, truth: pl.DataFrame, cats, train, catalog) -> dict:
    """Every side input a metric may read: categories, train, catalogue, a baseline run (the
    recommendations with other scores), item groups and user groups."""
    rng = np.random.default_rng(3)
    base = recs.with_columns(pl.Series("score", rng.permutation(recs.height).astype(float)))
    users = np.unique(np.r_[recs["user_id"].to_numpy(), truth["user_id"].to_numpy()])
    return dict(categories=cats, train=train, catalog=catalog, baseline=base,
                item_groups=pl.DataFrame({"item_id": np.arange(45), "group": [f"g{i % 3}" for i in range(45)]}),
                user_groups=pl.DataFrame({"user_id": users, "group": [f"u{i % 2}" for i in range(len(users))]}))


def count_batches(monkeypatch) -> dict[str, int]:
    """The number of user batches the batched path runs from now on (0: the single-batch engine)."""
    calls = {"n": 0}
    real = bp.run_batch

    def run_batch(*args, **kwargs):
        calls["n"] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(bp, "run_batch", run_batch)
    return calls


#: metrics whose options have no default value (the groups of full_side)
GROUP_SPECS = ["bias_disparity(icat=g0)@5", "bias_disparity(of=br,icat=g1,ugroup=u0)@10"]
#: metrics the sweep must hold: one reading each side input, global ones, the group metrics
MUST_HOLD = {"auc", "gini", "coverage", "reo", "rsp", "mad", "unexpectedness", "intersection", "popreo", "catdiv", "novelty"}


def _specs_for(metric) -> list[str]:
    ks = [None] if not metric.needs_k else [1, 5, 20]
    if metric.optional_k:
        ks = [None, 5]
    out = []
    variants: list[str] = [""]
    for axis in metric.axes.values():
        if axis.values:
            variants += [f"({axis.name}={v})" for v in axis.values if v != axis.default]
    for v, k in itertools.product(variants, ks):
        out.append(f"{metric.name}{v}" + ("" if k is None else f"@{k}"))
    return out


@cache
def _working_specs(ctx_key: tuple, dups: bool) -> tuple[str, ...]:
    """Specs that the in-memory engine evaluates on this data and context (others raise by design)."""
    data = make_data(dups=dups)
    recs, truth = data[:2]
    side = full_side(*data)
    ctx = dict(ctx_key)
    ok = []
    for spec in [s for m in all_metrics() for s in _specs_for(m)] + GROUP_SPECS:
        try:
            evaluate(recs, truth, [spec], **side, **ctx)
        except (SpecError, DataError):
            continue
        ok.append(spec)
    return tuple(ok)


def _check_exact(a, b, fingerprints: bool = False):
    assert a.keys() == b.keys()
    for e, f in zip(a.entries, b.entries):
        assert e.value == f.value or (math.isnan(e.value) and math.isnan(f.value)), (e.metric, e.value, f.value)
        assert e.signature == f.signature, e.metric
        assert e.users == f.users and e.skipped == f.skipped, e.metric
    assert a.info == b.info
    assert a.per_user().equals(b.per_user())
    if fingerprints:
        assert dict(a.fingerprints) == dict(b.fingerprints)


def _ctx_id(ctx: dict) -> str:
    return "-".join(f"{k}={v}" for k, v in ctx.items()) or "defaults"


#: (context, duplicates in the data): every context on the plain data, one with repeated rows
CASES = [*((ctx, False) for ctx in CONTEXTS), (DUP_CONTEXT, True)]
#: every path on this machine that splits the work: the Polars backend in n batches, the
#: in-memory engine under a memory budget (2 and 6 user batches); Spark (3 partitions) apart
PATHS = [("polars", 1), ("polars", 3), ("polars", 5), ("memory", "60KB"), ("memory", "20KB")]
_SPARK = [pytest.mark.spark, pytest.mark.xdist_group("spark")]


def _path_cases():
    """Every context on the local paths, then on Spark: the defaults on the local paths are the
    default tier's smoke case (conftest keeps every tenth case)."""
    for where in ("local", "spark"):
        for ctx, dups in CASES:
            yield pytest.param(where, ctx, dups, id=f"{where}-{'dups-first' if dups else _ctx_id(ctx)}",
                               marks=_SPARK if where == "spark" else ())


def _path(engine: str, n, recs, truth, specs: list[str], side: dict, ctx: dict, monkeypatch):
    if engine == "polars":
        return evaluate_polars(recs.lazy(), truth.lazy(), specs, overrides=ctx, n_batches=n, **side)
    counted = count_batches(monkeypatch)
    monkeypatch.setenv(bp.BUDGET_ENV, n)
    try:
        got = evaluate(recs, truth, specs, **side, **ctx)
    finally:
        monkeypatch.undo()
    assert counted["n"] == batches_for(recs.height, parse_bytes(n)) > 1  # batched
    return got


@pytest.mark.parametrize("where,ctx,dups", list(_path_cases()))
def test_every_batched_path_equals_one_batch(where, ctx, dups, monkeypatch, request):
    specs = list(_working_specs(tuple(sorted(ctx.items())), dups))
    assert len(specs) > 300 and sum(map(_is_global, specs)) > 20
    # bias_disparity has no tie-averaged value on these coarse scores (refused under ties=average)
    assert MUST_HOLD | ({"bias_disparity"} if ctx.get("ties", "average") != "average" else set()) <= {parse_spec(s).name for s in specs}
    recs, truth, *rest = make_data(dups=dups)
    side = full_side(recs, truth, *rest)
    monkeypatch.delenv(bp.BUDGET_ENV, raising=False)
    if where == "spark":  # the partial statistics of 3 partitions, combined on the driver: to 1e-12
        spark = request.getfixturevalue("spark")
        rs, ts = _spark_frames(spark, recs, truth)
        _check_close(evaluate(recs, truth, specs, **side, **ctx), evaluate(rs, ts, specs, **side, **ctx))
        return
    # a metric whose combine is not exact (mad's float sums): batched to 1e-12 when n_batches is
    # given; the memory budget keeps a call holding one in one batch (test_budget.py)
    exact = [s for s in specs if parse_spec(s).name not in bp.INEXACT_COMBINE]
    inexact = [s for s in specs if s not in exact]
    one, one_inexact = evaluate(recs, truth, exact, **side, **ctx), evaluate(recs, truth, inexact, **side, **ctx)
    for engine, n in PATHS:
        _check_exact(one, _path(engine, n, recs, truth, exact, side, ctx, monkeypatch), fingerprints=engine == "memory")
        if engine == "polars":
            _check_close(one_inexact, _path(engine, n, recs, truth, inexact, side, ctx, monkeypatch), spark_per_user=False)


def _is_global(spec: str) -> bool:
    from receval.metrics import get_metric

    return get_metric(parse_spec(spec).name).kind == "global"


DIALECT_SPECS = ["precision@5", "recall@5", "map@5", "ndcg@5", "mrr@5", "hitrate@5", "f1@5", "map@20", "ndcg@20"]


def _dialect_data():
    """The seeded data with a 1-based rank column too (dialects such as RecTools order by rank)."""
    recs, truth, *_ = make_data()
    return recs.with_columns(pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over("user_id").alias("rank")), truth


def _dialect_specs(name: str) -> list[str]:
    recs, truth = _dialect_data()
    ok = []
    for spec in DIALECT_SPECS:
        try:
            evaluate(recs, truth, [spec], dialect=name)
        except (SpecError, DataError):
            continue
        ok.append(spec)
    return ok


@pytest.mark.parametrize("name", dialect_names())
def test_polars_equals_memory_every_dialect(name):
    specs = _dialect_specs(name)
    if not specs:
        pytest.skip(f"no core spec runs under {name} on this data")
    recs, truth = _dialect_data()
    _check_exact(evaluate(recs, truth, specs, dialect=name), evaluate_polars(recs.lazy(), truth.lazy(), specs, dialect=name, n_batches=3))


def test_polars_errors_match_memory():
    recs, truth, *_ = make_data(dups=True)
    with pytest.raises(DataError, match="duplicate"):
        evaluate_polars(recs.lazy(), truth.lazy(), ["ndcg@5"], n_batches=2)
    recs, truth, *_ = make_data()
    with pytest.raises(DataError, match="no recommendations"):
        evaluate_polars(recs.lazy(), truth.lazy(), ["ndcg@5"], overrides={"norecs": "error"}, n_batches=2)
    with pytest.raises(DataError, match="no recommendations") as mem:
        evaluate(recs, truth, ["ndcg@5"], norecs="error")
    with pytest.raises(DataError) as pol:
        evaluate_polars(recs.lazy(), truth.lazy(), ["ndcg@5"], overrides={"norecs": "error"}, n_batches=3)
    assert str(mem.value) == str(pol.value)


# ---- Spark ---------------------------------------------------------------------------------



@pytest.fixture(scope="session")
def spark():
    pytest.importorskip("pyspark")
    if shutil.which("java") is None:
        pytest.skip("Spark needs Java")
    from receval.backends.spark import local_session

    session = local_session(partitions=3)
    yield session
    session.stop()


def _spark_frames(spark, recs, truth):
    return spark.createDataFrame(recs.to_pandas()), spark.createDataFrame(truth.to_pandas())


def _check_close(a, b, spark_per_user=True):
    assert a.keys() == b.keys()
    for e, f in zip(a.entries, b.entries):
        assert abs(e.value - f.value) <= 1e-12 or (math.isnan(e.value) and math.isnan(f.value)), (e.metric, e.value, f.value)
        assert e.signature == f.signature
        assert e.users == f.users and e.skipped == f.skipped
    assert a.info == b.info
    if spark_per_user:
        mem = a.per_user().sort("user_id")
        sp = pl.from_pandas(b.spark_per_user.toPandas()).sort("user_id")
        assert mem["user_id"].to_list() == sp["user_id"].to_list()
        for col in mem.columns[1:]:
            x, y = mem[col].to_numpy(), sp[col].to_numpy()
            assert np.array_equal(np.isnan(x), np.isnan(y)), col
            assert np.nanmax(np.abs(np.nan_to_num(x) - np.nan_to_num(y)), initial=0.0) <= 1e-12, col


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_spark_every_dialect(spark):
    recs, truth = _dialect_data()
    rs, ts = _spark_frames(spark, recs, truth)
    for name in dialect_names():
        specs = _dialect_specs(name)
        if specs:
            _check_close(evaluate(recs, truth, specs, dialect=name), evaluate(rs, ts, specs, dialect=name), spark_per_user=False)


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_spark_errors_and_globals(spark):
    recs, truth, *_ = make_data()
    rs, ts = _spark_frames(spark, recs, truth)
    with pytest.raises(DataError) as mem:
        evaluate(recs, truth, ["ndcg@5"], norecs="error")
    with pytest.raises(DataError) as sp:
        evaluate(rs, ts, ["ndcg@5"], norecs="error")
    assert str(mem.value) == str(sp.value)
    drecs, dtruth, *_ = make_data(dups=True)
    drs, dts = _spark_frames(spark, drecs, dtruth)
    with pytest.raises(DataError, match="duplicate"):
        evaluate(drs, dts, ["ndcg@5"])
    globals_ = [m.name for m in all_metrics() if m.kind == "global" and m.partial is None]
    if globals_:
        with pytest.raises(SpecError, match="partial/combine"):
            evaluate(rs, ts, [f"{globals_[0]}@5" if globals_[0] not in ("auc", "mae", "rmse") else globals_[0]])


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_spark_reads_parquet_paths_and_renamed_columns(spark, tmp_path):
    recs, truth, *_ = make_data()
    recs.rename({"user_id": "u", "item_id": "i", "score": "pred"}).write_parquet(tmp_path / "r.parquet")
    truth.rename({"user_id": "u", "item_id": "i"}).write_parquet(tmp_path / "t.parquet")
    specs = ["ndcg@5", "map@20", "f1(aggregate=means)@5"]
    a = evaluate(recs, truth, specs)
    b = evaluate(str(tmp_path / "r.parquet"), str(tmp_path / "t.parquet"), specs, engine="spark",
                 user_col="u", item_col="i", score_col="pred")
    _check_close(a, b, spark_per_user=False)
    from receval.backends.spark import evaluate_spark

    c = evaluate_spark(*_spark_frames(spark, recs, truth), specs, columns=Columns(), n_partitions=1)
    _check_close(a, c, spark_per_user=False)


# ---- global metrics: partial/combine ---------------------------------------------------------


GLOBAL_OPTION_SPECS = [
    "auc", "auc(tied=correct)", "auc(rows=judged)", "auc(form=positives)", "auc(form=positives,negatives=plus_one)",
    "auc(form=users)", "auc(form=users,weight=positives,nopos=skip)", "auc(form=users,denominator=r,noneg=zero)",
    "entropy@5", "entropy(form=per_item)@5", "entropy(form=length_weighted)@5", "entropy(base=2,normalize=catalog)@5",
    "entropy(normalize=recommended)@20", "coverage@5", "coverage(denominator=train)@5", "coverage(denominator=count)@20",
    "coverage(denominator=catalog_plus_one)@5", "gini@5", "gini(form=catalog_divisor)@20", "gini(form=complement)@5",
    "mae(missing=skip)", "rmse(missing=skip)", "mae(average=users,missing=skip)", "rmse(average=users,missing=skip)",
]


def test_every_global_metric_declares_partial_and_combine():
    globals_ = [m for m in all_metrics() if m.kind == "global"]
    assert {m.name for m in globals_} >= {"auc", "entropy", "coverage", "gini", "mae", "rmse"}
    assert [m.name for m in globals_ if m.partial is None or m.combine is None] == []


#: popularity groups: options combined
POPULARITY_OPTION_SPECS = ["popreo@5", "poprsp@5", "popreo(split=items,cut=0.3,count=users)@10", "poprsp(split=count,cut=4)@3"]
#: the ways of giving the catalogue: every side input; catalogue and train; train only; none
SIDE_KINDS = ["all", "catalog", "train", "none"]
#: many batches: Polars batches, and the memory budget's (3000 bytes: 35 batches of this data)
GLOBAL_PATHS = [("polars", 2), ("polars", 5), ("polars", 7), ("memory", "3000")]


@cache
def _global_specs(side_kind: str) -> tuple[str, ...]:
    recs, truth, *rest = make_data()
    side = _side_of(side_kind, recs, truth, *rest)
    every = [s for m in all_metrics() if m.kind == "global" and m.name not in bp.INEXACT_COMBINE for s in _specs_for(m)]
    ok = []
    for spec in dict.fromkeys(every + GLOBAL_OPTION_SPECS + POPULARITY_OPTION_SPECS):
        try:
            evaluate(recs, truth, [spec], **side, rel=3.0, ties="input")
        except (SpecError, DataError):
            continue
        ok.append(spec)
    return tuple(ok)


def _side_of(side_kind: str, recs, truth, cats, train, catalog) -> dict:
    return {"all": lambda: full_side(recs, truth, cats, train, catalog), "catalog": lambda: dict(catalog=catalog, train=train),
            "train": lambda: dict(train=train), "none": dict}[side_kind]()


@pytest.mark.parametrize("side_kind", SIDE_KINDS)
def test_global_metrics_combine_bit_for_bit_in_many_batches(side_kind, monkeypatch):
    """Every global metric (partial / combine over the batches), every option value and some
    combinations, in many batches, equals the in-memory value bit for bit (exact sums, item ids as
    keys: a batch's item codes are not global), whichever side input defines the catalogue."""
    recs, truth, *rest = make_data()
    side = _side_of(side_kind, recs, truth, *rest)
    specs = list(_global_specs(side_kind))
    # every combination that can run without train runs (and with train, the popularity groups too)
    want = [s for s in GLOBAL_OPTION_SPECS if "train" in side or "train" not in s]
    want += POPULARITY_OPTION_SPECS if "catalog" in side else []  # with train alone a group may be empty (refused)
    assert set(want) <= set(specs) and len(specs) > (20 if "train" in side else 10)
    # rel: rows=judged needs negatives among truth rows; ties=input: the scores are coarse and the
    # top-k set metrics have no tie-averaged value where a tie straddles k (refused)
    ctx = {"rel": 3.0, "ties": "input"}
    monkeypatch.delenv(bp.BUDGET_ENV, raising=False)
    a = evaluate(recs, truth, specs, **side, **ctx)
    for engine, n in GLOBAL_PATHS:
        _check_exact(a, _path(engine, n, recs, truth, specs, side, ctx, monkeypatch), fingerprints=engine == "memory")


def test_polars_global_errors_count_over_batches():
    recs, truth, *_ = make_data()
    recs = recs.filter(pl.col("item_id") != 3)  # truth pairs without a prediction in several batches
    for spec, ctx in (("mae", {}), ("auc(form=users)", {"norecs": "error"}), ("auc(form=users)", {"rel": 5.0, "empty": "error"})):
        with pytest.raises(DataError) as mem:
            evaluate(recs, truth, [spec], **ctx)
        with pytest.raises(DataError) as pol:
            evaluate_polars(recs.lazy(), truth.lazy(), [spec], overrides=ctx, n_batches=4)
        assert str(mem.value) == str(pol.value)
    with pytest.raises(DataError) as mem:
        evaluate(recs, truth, ["gini@5"], catalog=list(range(10)))
    with pytest.raises(DataError) as pol:
        evaluate_polars(recs.lazy(), truth.lazy(), ["gini@5"], catalog=list(range(10)), n_batches=3)
    assert str(mem.value) == str(pol.value)


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_spark_global_errors_and_per_user_output(spark, tmp_path):
    from receval.cli import main
    from receval.errors import RecevalError

    recs, truth, *_ = make_data()
    rs, ts = _spark_frames(spark, recs.filter(pl.col("item_id") != 3), truth)
    with pytest.raises(DataError) as mem:
        evaluate(recs.filter(pl.col("item_id") != 3), truth, ["mae"])
    with pytest.raises(DataError) as sp:
        evaluate(rs, ts, ["mae"])
    assert str(mem.value) == str(sp.value)
    rs, ts = _spark_frames(spark, recs, truth)
    res = evaluate(rs, ts, ["ndcg@5", "auc"])
    with pytest.raises(RecevalError, match="spark_per_user"):
        res.per_user()
    # the CLI on Spark: Spark writes the per-user values itself (a directory of part files)
    recs.write_csv(tmp_path / "r.csv")
    truth.write_csv(tmp_path / "t.csv")
    # coarse scores: gini's top-k set is refused under ties=average where a tie straddles k
    want = evaluate(recs, truth, ["ndcg@5", "recall@10", "gini(ties=input)@5"]).per_user().sort("user_id")
    for name in ("pu.parquet", "pu.csv"):
        out = tmp_path / name
        args = ["evaluate", str(tmp_path / "r.csv"), str(tmp_path / "t.csv"), "-m", "ndcg@5", "-m", "recall@10",
                "-m", "gini(ties=input)@5", "--engine", "spark", "--per-user", str(out), "--format", "json"]
        assert main(args) == 0
        got = (pl.read_parquet(out / "*.parquet") if name.endswith(".parquet") else pl.read_csv(out / "*.csv")).sort("user_id")
        assert got.columns == want.columns
        assert got["user_id"].to_list() == want["user_id"].to_list()
        for col in want.columns[1:]:
            x, y = want[col].to_numpy().astype(float), got[col].to_numpy().astype(float)
            assert np.array_equal(np.isnan(x), np.isnan(y)), col
            assert np.nanmax(np.abs(np.nan_to_num(x) - np.nan_to_num(y))) <= 1e-12, col


# ---- Spark: the stacked AUC stays in Spark --------------------------------------------------


def _stacked_data(kind: str, seed: int = 11):
    rng = np.random.default_rng(seed)
    n = 4000
    recs = pl.DataFrame({"user_id": rng.integers(0, 250, n), "item_id": rng.integers(0, 150, n)}).unique(
        ["user_id", "item_id"], keep="first", maintain_order=True)
    score = rng.random(len(recs)) if kind == "continuous" else rng.integers(0, 4, len(recs)).astype(float)
    recs = recs.with_columns(score=pl.Series(score))
    truth = pl.DataFrame({"user_id": rng.integers(0, 250, 2500), "item_id": rng.integers(0, 150, 2500),
                          "rating": rng.integers(1, 6, 2500).astype(float)}).unique(
        ["user_id", "item_id"], keep="first", maintain_order=True)
    return recs, truth


STACKED_SPECS = ["auc", "auc(tied=correct)", "auc(rows=judged)", "auc(rows=judged,tied=correct)", "ndcg@5"]


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
@pytest.mark.parametrize("kind", ["continuous", "ties"])
def test_spark_stacked_auc_exact_without_scores_on_the_driver(spark, kind, monkeypatch):
    import pickle as _pickle

    import receval.backends.spark as sp
    import receval.metrics.auc as auc_mod
    from receval.backends.spark import evaluate_spark

    recs, truth = _stacked_data(kind)
    if kind == "continuous":
        assert recs["score"].n_unique() == len(recs)  # no ties
    a = evaluate(recs, truth, STACKED_SPECS, rel=3.0)
    if kind == "ties":
        assert a["auc"] != a["auc(tied=correct)"]
    rs, ts = _spark_frames(spark, recs, truth)

    metas, runs = [], []

    class Spy:
        dumps = staticmethod(_pickle.dumps)

        @staticmethod
        def loads(b):
            m = _pickle.loads(b)
            metas.append(m)
            return m

    real_reduce = auc_mod.stacked_reduce

    def spy_reduce(r, tied):
        runs.append(list(r))
        return real_reduce(r, tied)

    monkeypatch.setattr(sp, "pickle", Spy)
    monkeypatch.setattr(auc_mod, "stacked_reduce", spy_reduce)
    for parts in (1, 4, 7):
        metas.clear()
        runs.clear()
        b = evaluate_spark(rs, ts, STACKED_SPECS, overrides={"rel": 3.0}, n_partitions=parts)
        for e, f in zip(a.entries, b.entries):
            if e.metric.startswith("auc"):  # bit for bit (ndcg@5, a Spark sum of per-user values: ~1e-15)
                assert e.value == f.value, (kind, parts, e.metric, e.value, f.value)
            assert abs(e.value - f.value) <= 1e-12
        # the driver sees a marker per partition and spec, and one run (4 numbers) per score range
        seen = [m for m in metas if m.get("users_seen")]
        assert 1 <= len(seen) <= parts
        for m in seen:
            for j, spec in enumerate(STACKED_SPECS):
                if spec.startswith("auc"):
                    assert m["partials"][j] == {"by_score_rows": j}, m["partials"][j]
        assert len(runs) == 4  # one reduction per stacked spec (distinct formulas)
        for r in runs:
            assert 1 <= len(r) <= parts and all(len(x) == 4 for x in r)


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_spark_stacked_auc_errors_match_memory(spark):
    recs, truth = _stacked_data("ties")
    rs, ts = _spark_frames(spark, recs, truth)
    for ctx in ({"rel": 0.0}, {"rel": 9.0}):  # no negatives / no positives among judged rows
        with pytest.raises(DataError) as mem:
            evaluate(recs, truth, ["auc(rows=judged)"], **ctx)
        with pytest.raises(DataError) as sp:
            evaluate(rs, ts, ["auc(rows=judged)"], **ctx)
        assert str(mem.value) == str(sp.value)


def _job_per_user(recs, truth, specs, ctx, order):
    """The per-user columns the Spark worker (``_Job``) returns for one partition whose rows
    arrive in ``order`` (a permutation of the tagged rows), as a polars frame sorted by user."""
    pa = pytest.importorskip("pyarrow")
    from receval.backends.spark import _Job

    tagged = pl.concat([
        recs.select(pl.col("user_id").alias("u"), pl.col("item_id").alias("i"), pl.col("score").alias("s"),
                    pl.lit(None, pl.Float64).alias("y"), pl.lit(0, pl.Int8).alias("tag"), pl.int_range(pl.len(), dtype=pl.Int64).alias("rid")),
        truth.select(pl.col("user_id").alias("u"), pl.col("item_id").alias("i"), pl.lit(None, pl.Float64).alias("s"),
                     pl.col("rating").alias("y"), pl.lit(1, pl.Int8).alias("tag"), pl.int_range(pl.len(), dtype=pl.Int64).alias("rid")),
    ])[order]
    from receval.inputs import Request

    job = _Job(Request(None, None, specs, None, Columns(), ctx), None, True, False, True, len(specs))
    out = pa.Table.from_batches(list(job(tagged.to_arrow().to_batches(max_chunksize=97))))
    return pl.from_arrow(out).filter(pl.col("u").is_not_null()).sort("u")


@pytest.mark.parametrize("ctx", [{"ties": "input"}, {"order": "input", "norecs": "zero"}, {**DUP_CONTEXT, "ties": "input"}])
def test_spark_worker_puts_rows_back_in_input_order(ctx):
    # the shuffle delivers a partition's rows in no set order (remote blocks arrive as fetched);
    # the worker sorts each side by input position, so the rules that read the input order
    # (ties=input, order=input, dup/tdup=first) give the in-memory per-user values
    recs, truth, *_ = make_data(dups="dup" in ctx)
    specs = ["ndcg@5", "precision@3", "map@20", "mrr@10"]
    n = recs.height + truth.height
    arrived = _job_per_user(recs, truth, specs, ctx, np.random.default_rng(3).permutation(n))
    in_order = _job_per_user(recs, truth, specs, ctx, np.arange(n))
    assert arrived.equals(in_order)
    mem = evaluate(recs, truth, specs, **ctx).per_user().sort("user_id")
    assert mem["user_id"].to_list() == arrived["u"].to_list()
    for j, col in enumerate(mem.columns[1:]):
        x, y = mem[col].to_numpy(), arrived[f"v{j}"].to_numpy()
        assert np.array_equal(np.isnan(x), np.isnan(y)) and np.array_equal(x[~np.isnan(x)], y[~np.isnan(y)]), col
    # the order matters here: the in-memory values of the shuffled rows differ
    shuffled = evaluate(recs.sample(fraction=1.0, shuffle=True, seed=3), truth.sample(fraction=1.0, shuffle=True, seed=4), specs, **ctx)
    assert shuffled.values != evaluate(recs, truth, specs, **ctx).values
