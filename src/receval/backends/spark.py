"""The Spark backend: Spark shuffles by user, the in-memory numpy code runs per partition.

Recommendations and truth are tagged with their input position, unioned and repartitioned by
user (``n_partitions``), so every partition holds all rows of its users; each worker puts the
rows of each side back in input order (a sort by position in the worker, cheaper than a Spark
sort of every row before the Arrow hand-off), so ``ties=input`` / ``order=input`` keep their
meaning. A ``mapInArrow`` function runs the same :func:`receval.hits.build` and metric functions on each
partition (:func:`receval.backends._batch.run_batch`), applies the empty/norecs policies per
user and returns per-user rows, plus one metadata row per partition (counters, partial
statistics of global metrics, data errors). Spark sums and counts the per-user columns; only
those sums and the per-partition metadata reach the driver, never the data.

Per-user values stay in Spark: ``results.spark_per_user`` is a DataFrame (user, one column
per spec, null where a user is left out); ``results.write_per_user(path)`` has Spark write it,
and ``results.per_user()`` says so instead of returning a frame without values. Global metrics
combine the partial statistics of each partition (``partial``/``combine`` of the metric), which
travel in the metadata rows when they are small (sums, counts, per-item tables). A partial held
per distinct key (the stacked AUC: one row per distinct score) would bring the data to the
driver, so a metric with such a partial declares a keyed reduction
(:class:`receval.reduction.KeyedReduction`, ``register(..., distributed=...)``) and its rows
stay in Spark: each partition emits (key, a, b) rows next to its per-user rows, Spark sums
them by key, range-partitions the distinct keys, and every range reports one run (the hook's
``scan``); the driver receives four numbers per range and hands them to the hook's ``reduce``,
so the stacked AUC equals the in-memory one bit for bit. The per-user sums become values in
the engine (:func:`receval.engine.reduce_user_sums`), as on any distributed backend. Other values agree with the in-memory engine to ~1e-15
(means are summed in a different order); errors carry the same messages.
"""

from __future__ import annotations


import math
import pickle
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

import numpy as np

from .._version import __version__
from ..encode import check_overlap, user_batches
from ..engine import UserSums, check_globals, combine_partials, ignored_rows, merge_info, needs_truth_max, plan, plan_request, raise_refused, reduce_user_sums, rel_message, run_batch, say, warn_ties
from ..errors import DataError
from ..inputs import Request, encode_frames, exact_items
from ..io import Columns, check_header, missing_column, read_frame
from ..partfiles import check_parquet, check_text_rows
from ..policy import policy_columns
from ..resampling import poisson_interval, poisson_sums, user_hash
from ..resolve import UNSET, decide_rel
from ..results import Results

_META = "__meta__"
_SCORE_COLS = (("gj", "int32"), ("gs", "float64"), ("gp", "int64"), ("gn", "int64"))  # by-score rows: spec, score, pos, neg
_BY_SCORE = "by_score_rows"  # the metadata marker replacing a by-score partial: the spec whose rows hold it


def worker_python() -> str:
    """The Python a session receval builds runs its workers on: ``PYSPARK_PYTHON`` if the
    user set it, else this interpreter (so a venv that is not activated, pipx or a notebook
    kernel finds receval in the workers, not a ``python3`` on PATH without it)."""
    import os
    import sys

    return os.environ.get("PYSPARK_PYTHON") or sys.executable


def _builder(app: str = "receval"):
    from pyspark.sql import SparkSession

    py = worker_python()
    return (
        SparkSession.builder.appName(app)
        .config("spark.pyspark.python", py)
        .config("spark.pyspark.driver.python", py)
        .config("spark.executorEnv.PYSPARK_PYTHON", py)
        .config("spark.ui.showConsoleProgress", "false")
    )


def _session(spark: Any = None):
    from pyspark.sql import SparkSession

    if spark is not None:
        return spark
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    import os

    # the local workers are forked by the driver's Python, which reads PYSPARK_PYTHON
    os.environ.setdefault("PYSPARK_PYTHON", worker_python())
    return _builder().config("spark.ui.enabled", "false").getOrCreate()


def partitions_for(session: Any, frames: list[Any], configured: int | None = None) -> int:
    """User partitions of the shuffle: on a local session sized to the data (the cores, or
    more for inputs of several input partitions), never the 200 of ``spark.sql.shuffle.partitions``
    on a small input; on a cluster the configured ``spark.sql.shuffle.partitions``."""
    conf = int(session.conf.get("spark.sql.shuffle.partitions", "200"))
    if configured:
        return configured
    master = session.sparkContext.master or ""
    if not master.startswith("local"):
        return conf
    cores = max(1, int(session.sparkContext.defaultParallelism))
    inputs = sum(f.rdd.getNumPartitions() for f in frames)
    return max(1, min(conf, max(cores, inputs)))


def _frame(session: Any, obj: Any, what: str, sep: str | None = None):
    """A Spark DataFrame from a Spark DataFrame, a CSV/Parquet path, or an in-memory frame."""
    import os

    if type(obj).__module__.startswith("pyspark"):
        return obj
    if isinstance(obj, (str, os.PathLike)):
        path = str(obj)
        if not os.path.exists(path):
            raise DataError(f"{what} file not found: {path}")
        low = path.lower()

        if low.endswith((".parquet", ".pq")) or os.path.isdir(path):
            check_parquet(path, what)  # the memory and Polars engines' policy: corrupt parts, schemas, no rows
            return session.read.parquet(path)
        if low.endswith((".csv", ".tsv", ".txt", ".csv.gz")):
            check_text_rows(path, what)
            if sep is None:
                from pathlib import Path

                sep = "\t" if low.endswith(".tsv") else ","
                check_header(Path(path), sep, what)
            return session.read.csv(path, header=True, inferSchema=True, sep=sep)
        raise DataError(f"cannot read {what} file {path}: use a .csv, .tsv or .parquet file")

    frame = read_frame(obj, what, sep=sep)
    return session.createDataFrame(frame.to_pandas())


def _kind(dtype: Any) -> str:
    from pyspark.sql import types as T

    if isinstance(dtype, (T.StringType,)):
        return "string"
    if isinstance(dtype, (T.ByteType, T.ShortType, T.IntegerType, T.LongType)):
        return "integer"
    if isinstance(dtype, (T.FloatType, T.DoubleType, T.DecimalType)):
        return "float"
    return dtype.simpleString()


def evaluate_spark(recs: Any, truth: Any, metrics: str | Iterable[Any], *, n_partitions: int | None = None,
                   spark: Any = None, **request: Any):
    """Evaluate Spark DataFrames (or CSV/Parquet paths read by Spark); arguments as
    :func:`receval.evaluate`, ``request`` the keywords of :class:`receval.inputs.Request`
    (``dialect``, ``columns``: :class:`receval.io.Columns`, ``overrides``: the context keywords
    ``rel``, ``order``, ``ties``, ``dup``, ``tdup``, ``empty``, ``norecs``, and the side inputs).

    ``n_partitions``: user partitions (default :func:`partitions_for`: on a local session the
    cores or the input partitions, whichever is more; on a cluster ``spark.sql.shuffle.partitions``). Side inputs
    (categories, train, catalog, baseline, item_groups, user_groups) are in-memory objects or paths shipped to
    the executors, read there with the caller's column names. Returns
    :class:`receval.results.Results` without per-user arrays; the per-user values are the
    Spark DataFrame ``results.spark_per_user``.
    """
    return run_spark(Request(recs, truth, metrics, **request), n_partitions=n_partitions, spark=spark)


def run_spark(req: Request, *, n_partitions: int | None = None, spark: Any = None):
    """The Spark engine on a :class:`receval.inputs.Request` (the other arguments as :func:`evaluate_spark`)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    recs, truth, cols = req.recs, req.truth, req.columns
    req = replace(req, overrides={k: v for k, v in req.overrides.items() if v is not UNSET})
    _, resolved = plan_request(req)
    if not isinstance(req.metrics, (list, tuple)):
        req = replace(req, metrics=[str(r.spec) for r in resolved])
    check_globals(resolved, "spark")
    for side_input in req.side_given:
        if side_input is not None and type(side_input).__module__.startswith("pyspark"):
            raise DataError(
                "side inputs (categories, train, catalog, baseline, item_groups, user_groups) on Spark must be "
                "in-memory frames or paths, not Spark DataFrames"
            )

    session = _session(spark)
    rdf, tdf = _frame(session, recs, "recommendations", cols.sep), _frame(session, truth, "ground truth", cols.sep)
    tc = cols.truth()  # the truth's own id column names
    for df, what, c in ((rdf, "recommendations", cols), (tdf, "ground truth", tc)):
        for role, name in (("user", c.user), ("item", c.item)):
            if name not in df.columns:
                raise DataError(missing_column(what, name, role, df.columns))
    rtypes, ttypes = dict((f.name, f.dataType) for f in rdf.schema.fields), dict((f.name, f.dataType) for f in tdf.schema.fields)
    for role, name, tname in (("user", cols.user, tc.user), ("item", cols.item, tc.item)):
        a, b = _kind(rtypes[name]), _kind(ttypes[tname])
        if a != b and "string" in (a, b):
            raise DataError(
                f"{role} ids have different types in recommendations ({a}) "
                f"and ground truth ({b}); cast both to the same type"
            )
    has_score, has_rank = cols.score in rdf.columns, cols.rank in rdf.columns
    has_rating = cols.rating in tdf.columns
    rel_said = None
    if has_rating and any(r.rel_auto for r in resolved):  # rel:>0 when the truth is rated, said once
        y = F.col(cols.rating).cast("double")
        got = tdf.agg(F.count(F.lit(1)), F.sum((y <= 0).cast("long")), F.countDistinct(F.when(y > 0, y))).collect()[0]
        rel_said = rel_message(*(int(v or 0) for v in got))
    resolved = decide_rel(resolved, has_rating)
    utype = rtypes[cols.user] if _kind(rtypes[cols.user]) != "integer" else T.LongType()
    itype = rtypes[cols.item] if _kind(rtypes[cols.item]) != "integer" else T.LongType()

    def tagged(df, tag: int, names: Columns, score: str | None, rank: str | None, rating: str | None):
        # only the value columns one side has (an all-null column still crosses the shuffle and Arrow)
        values = [(F.col(c).cast(t) if c else F.lit(None).cast(t)).alias(a)
                  for c, t, a, has in ((score, "double", "s", has_score), (rank, "long", "k", has_rank), (rating, "double", "y", has_rating))
                  if has]
        return df.select(
            F.col(names.user).cast(utype).alias("u"),
            F.col(names.item).cast(itype).alias("i"),
            *values,
            F.lit(tag).cast("byte").alias("tag"),
            F.monotonically_increasing_id().alias("rid"),  # the input position (per side)
        )

    both = tagged(rdf, 0, cols, cols.score if has_score else None, cols.rank if has_rank else None, None).unionByName(
        tagged(tdf, 1, tc, None, None, cols.rating if has_rating else None)
    )
    parts = partitions_for(session, [rdf, tdf], n_partitions)
    # no sort in Spark: each worker puts its rows back in input order (_Job), cheaper than a JVM sort
    # of every row (which spills at scale) before the Arrow hand-off
    both = both.repartition(parts, "u")

    n = len(resolved)
    fields = [T.StructField("u", utype, True)]
    for j in range(n):
        fields += [
            T.StructField(f"v{j}", T.DoubleType()), T.StructField(f"a{j}", T.DoubleType()), T.StructField(f"b{j}", T.DoubleType()),
            T.StructField(f"sk{j}", T.ByteType()), T.StructField(f"ee{j}", T.ByteType()), T.StructField(f"en{j}", T.ByteType()),
        ]
    fields += [T.StructField(_META, T.BinaryType(), True)]
    fields += [T.StructField("gj", T.IntegerType()), T.StructField("gs", T.DoubleType()),
               T.StructField("gp", T.LongType()), T.StructField("gn", T.LongType())]
    schema = T.StructType(fields)
    truth_max = None
    if needs_truth_max(resolved):  # ab_ndcg's rmax default: the largest rating of the whole truth
        got = tdf.agg(F.max(F.col(cols.rating).cast("double"))).collect()[0][0] if has_rating else 1.0
        truth_max = 1.0 if got is None else float(got)
    job = _Job(replace(req, recs=None, truth=None), truth_max, has_score, has_rank, has_rating, n)

    out = both.mapInArrow(job, schema)
    # the by-score rows are read by a second job: keep the partitions' output instead of running them twice
    reread = any(not r.per_user and r.metric.distributed is not None and r.metric.distributed.holds(r.options) for r in resolved)
    if reread:
        from pyspark import StorageLevel

        out = out.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        res = _finish(out, resolved, parts, cols, n, __version__)
        check_overlap(res.info)  # the users of the whole inputs (each partition only counted them)
        say(rel_said)
        return res
    finally:
        if reread:
            out.unpersist()


def _finish(out, resolved, parts, cols, n, version):
    from pyspark.sql import functions as F

    __version__ = version
    users = F.col("u").isNotNull()
    aggs = [F.collect_list(_META).alias("meta")]
    for j in range(n):
        inc = users & ~F.isnan(f"v{j}")
        aggs += [
            F.sum(F.when(inc, F.col(f"v{j}"))).alias(f"sv{j}"),
            F.count(F.when(inc, 1)).alias(f"n{j}"),
            F.sum(F.when(inc & ~F.isnan(f"a{j}"), F.col(f"a{j}"))).alias(f"sa{j}"),
            F.sum(F.when(inc & ~F.isnan(f"b{j}"), F.col(f"b{j}"))).alias(f"sb{j}"),
            F.sum(F.when(users, F.col(f"sk{j}").cast("long"))).alias(f"sk{j}"),
            F.sum(F.when(users, F.col(f"ee{j}").cast("long"))).alias(f"ee{j}"),
            F.min(F.when(users & (F.col(f"ee{j}") == 1), F.col("u"))).alias(f"ue{j}"),
            F.sum(F.when(users, F.col(f"en{j}").cast("long"))).alias(f"en{j}"),
            F.min(F.when(users & (F.col(f"en{j}") == 1), F.col("u"))).alias(f"un{j}"),
        ]
    row = out.agg(*aggs).collect()[0]

    metas = [pickle.loads(m) for m in row["meta"]]
    for m in metas:
        if m.get("error"):
            raise DataError(m["error"])
    metas = [m for m in metas if m.get("users_seen")]
    if not metas or not any(m["info"].get("users") for m in metas):
        raise DataError("the ground truth is empty; pass at least one (user, item) row")
    raise_refused([m.get("refused", {}) for m in metas], len(resolved))  # the counts of every partition added
    info = merge_info([m["info"] for m in metas])
    entries = []
    reduced: dict[int, Any] = {}
    for j, r in enumerate(resolved):
        order = next((m["order"][j] for m in metas if m["order"][j] is not None), None)
        if not r.per_user:
            got = [m["partials"][j] for m in metas if m["partials"][j] is not None]
            if any(isinstance(p, dict) and _BY_SCORE in p for p in got):
                j0 = next(p[_BY_SCORE] for p in got if isinstance(p, dict) and _BY_SCORE in p)
                if j0 not in reduced:
                    reduced[j0] = _reduce_keyed(out, j0, parts, r.metric.distributed, r.options)
                got = [reduced[j0]]
            entries.append(combine_partials(r, resolved, got, order))
            continue
        sums = UserSums(row[f"sv{j}"], int(row[f"n{j}"]), row[f"sa{j}"], row[f"sb{j}"], int(row[f"sk{j}"] or 0),
                        row[f"ee{j}"] or 0, row[f"ue{j}"], row[f"en{j}"] or 0, row[f"un{j}"])
        entries.append(reduce_user_sums(r, sums, order))
    warn_ties(info, resolved)  # once per call, the counts of every partition added
    res = Results(entries, np.zeros(0), __version__, info)
    per_user = out.filter(users).select(
        F.col("u").alias(cols.user),
        *[F.when(~F.isnan(f"v{j}"), F.col(f"v{j}")).alias(r.key) for j, r in enumerate(resolved) if r.per_user],
    )
    res.spark_per_user = per_user
    res.spark_writer = write_per_user
    return res


def _reduce_keyed(out, j: int, parts: int, hook: Any, o: dict) -> Any:
    """The partial of a global metric with a keyed reduction (:class:`receval.reduction.KeyedReduction`)
    from the keyed rows of spec ``j``, computed in Spark: sums by key, range partitions of the
    distinct keys, one run per partition (``hook.scan``); only those runs reach the driver."""
    from pyspark.sql import functions as F

    rows = out.filter(F.col("gj") == j).groupBy("gs").agg(F.sum("gp").alias("gp"), F.sum("gn").alias("gn"))
    runs = rows.repartitionByRange(parts, "gs").mapInArrow(_Scan(hook, o), "lo double, num2 string, p long, n long")
    return hook.reduce([(r["lo"], int(r["num2"]), r["p"], r["n"]) for r in runs.collect()], o)


class _Scan:
    """``mapInArrow`` over one range of distinct keys: the run of the range (lowest key, an exact
    integer, two counts), from the metric's ``hook.scan``."""

    def __init__(self, hook: Any, o: dict):
        self.hook, self.o = hook, o

    def __call__(self, batches):
        import pyarrow as pa

        tables = [pa.Table.from_batches([b]) for b in batches if b.num_rows]
        if not tables:
            return
        t = pa.concat_tables(tables)
        s, p, ng = (t.column(c).to_numpy().astype(d) for c, d in (("gs", np.float64), ("gp", np.int64), ("gn", np.int64)))
        lo, num2, n_pos, n_neg = self.hook.scan(s, p, ng, self.o)
        yield pa.RecordBatch.from_pydict({
            "lo": pa.array([float(lo)], pa.float64()), "num2": pa.array([str(num2)], pa.string()),
            "p": pa.array([n_pos], pa.int64()), "n": pa.array([n_neg], pa.int64()),
        })


def _input_order(frame: Any) -> Any:
    """The rows of one side of a partition in input order (by ``rid``): the shuffle delivers them
    in no set order. Each user's rows keep their input order (``ties=input`` / ``order=input``)."""
    if not frame.get_column("rid").is_sorted():
        frame = frame.sort("rid")
    return frame.drop("rid")


class _Job:
    """The function ``mapInArrow`` runs on each partition (picklable; resolves specs on the executor)."""

    def __init__(self, req, truth_max, has_score, has_rank, has_rating, n):
        self.req = req  # the request without its (Spark) inputs: specs, dialect, overrides, side inputs, column names
        self.truth_max = truth_max
        self.has_score, self.has_rank, self.has_rating, self.n = has_score, has_rank, has_rating, n

    def __call__(self, batches):
        import pyarrow as pa

        tables = [pa.Table.from_batches([b]) for b in batches if b.num_rows]
        if not tables:
            return
        yield from self._run(pa.concat_tables(tables))

    def _run(self, table):
        import polars as pl
        import pyarrow as pa

        req = self.req
        resolved = decide_rel(plan(req.metrics, req.dialect, dict(req.overrides)), self.has_rating)
        frame = pl.from_arrow(table)
        cols = Columns("u", "i", "s", "k", "y")
        keep_r = ["u", "i"] + [c for c, has in (("s", self.has_score), ("k", self.has_rank)) if has]
        keep_t = ["u", "i"] + (["y"] if self.has_rating else [])
        recs = _input_order(frame.filter(pl.col("tag") == 0).select(*keep_r, "rid"))
        truth = _input_order(frame.filter(pl.col("tag") == 1).select(*keep_t, "rid"))
        del frame
        meta: dict[str, Any] = {"users_seen": False}
        try:
            side = req.side(self.truth_max)  # read with the caller's column names
            r_frame, t_frame = recs, truth
            if t_frame.height == 0:
                batch = run_batch(None, resolved, side, ignored=ignored_rows(r_frame, "u"))
            else:
                with user_batches():  # judged on the merged counts (evaluate_spark)
                    batch = run_batch(encode_frames(r_frame, t_frame, cols, exact=exact_items(resolved)), resolved, side)
        except DataError as exc:
            meta["error"] = str(exc)
            yield self._meta_batch(meta, table.schema.field("u").type)
            return
        partials, by_score, first = list(batch.partials), [], {}
        for j, part in enumerate(partials):
            hook = resolved[j].metric.distributed
            keyed = hook.rows(part) if hook is not None and part is not None else None
            if keyed is not None:  # stays in Spark: rows, not metadata
                j0 = first.setdefault(id(part), j)
                if j0 == j:
                    by_score.append((j, keyed))
                partials[j] = {_BY_SCORE: j0}
        meta.update(users_seen=True, info=batch.info, order=batch.order, partials=partials, refused=batch.refused)
        users = batch.user_ids
        arrays: dict[str, Any] = {"u": pa.array(users.tolist() if users.dtype == object else users, type=table.schema.field("u").type)}
        for j, r in enumerate(resolved):
            if batch.values[j] is None:
                nan = np.full(len(users), np.nan)
                cols_j = {"value": nan, "a": nan, "b": nan, "skipped": np.zeros(len(users), np.int8),
                          "err_empty": np.zeros(len(users), np.int8), "err_norecs": np.zeros(len(users), np.int8)}
            else:
                cols_j = policy_columns(r.options, r.metric.context, batch.values[j], batch.n_rel[j], batch.length[j], r.metric.skips,
                                        pairs=r.metric.pair_kind(r.options))
            arrays[f"v{j}"] = pa.array(cols_j["value"], type=pa.float64())
            arrays[f"a{j}"] = pa.array(cols_j["a"], type=pa.float64())
            arrays[f"b{j}"] = pa.array(cols_j["b"], type=pa.float64())
            arrays[f"sk{j}"] = pa.array(cols_j["skipped"], type=pa.int8())
            arrays[f"ee{j}"] = pa.array(cols_j["err_empty"], type=pa.int8())
            arrays[f"en{j}"] = pa.array(cols_j["err_norecs"], type=pa.int8())
        arrays[_META] = pa.nulls(len(users), type=pa.binary())
        for c, d in _SCORE_COLS:
            arrays[c] = pa.nulls(len(users), type=pa.from_numpy_dtype(np.dtype(d)))
        step = 65536
        tab = pa.table(arrays)
        for start in range(0, tab.num_rows, step):
            yield from tab.slice(start, step).to_batches()
        for j, (s, p, ng) in by_score:
            yield from self._score_table(j, s, p, ng, table.schema.field("u").type).to_batches(max_chunksize=step)
        yield self._meta_batch(meta, table.schema.field("u").type)

    def _filler(self, rows: int, utype: Any) -> dict[str, Any]:
        import pyarrow as pa

        arrays: dict[str, Any] = {"u": pa.nulls(rows, type=utype)}
        for j in range(self.n):
            for c in ("v", "a", "b"):
                arrays[f"{c}{j}"] = pa.array(np.full(rows, math.nan), type=pa.float64())
            for c in ("sk", "ee", "en"):
                arrays[f"{c}{j}"] = pa.array(np.zeros(rows, np.int8), type=pa.int8())
        arrays[_META] = pa.nulls(rows, type=pa.binary())
        for c, d in _SCORE_COLS:
            arrays[c] = pa.nulls(rows, type=pa.from_numpy_dtype(np.dtype(d)))
        return arrays

    def _score_table(self, j: int, s: np.ndarray, p: np.ndarray, ng: np.ndarray, utype: Any):
        """By-score rows of spec ``j``: (score, positives, negatives), one per distinct score of the partition."""
        import pyarrow as pa

        arrays = self._filler(len(s), utype)
        arrays["gj"] = pa.array(np.full(len(s), j, np.int32))
        arrays["gs"] = pa.array(np.asarray(s, np.float64))
        arrays["gp"] = pa.array(np.asarray(p, np.int64))
        arrays["gn"] = pa.array(np.asarray(ng, np.int64))
        return pa.table(arrays)

    def _meta_batch(self, meta: dict[str, Any], utype: Any):
        import pyarrow as pa

        arrays = self._filler(1, utype)
        arrays[_META] = pa.array([pickle.dumps(meta)], type=pa.binary())
        return pa.RecordBatch.from_pydict(arrays)


def write_per_user(per_user: Any, path: str, fmt: str = "csv", mode: str = "errorifexists") -> None:
    """Have Spark write the per-user DataFrame to ``path`` in ``fmt`` (csv, tsv, parquet, json:
    :func:`receval.outputs.per_user_format`), a directory of part files; ``mode`` from
    :func:`receval.outputs.spark_mode` (never replaces what Spark did not write). Nothing
    reaches the driver."""
    writer = per_user.write.mode(mode)
    if fmt == "parquet":
        writer.parquet(str(path))
    elif fmt == "json":
        writer.json(str(path))
    else:
        writer.option("header", True).option("sep", "\t" if fmt == "tsv" else ",").csv(str(path))


def local_session(partitions: int = 4):
    """A small local SparkSession (tests, CLI): ``local[2]``, few shuffle partitions, UI off,
    workers on :func:`worker_python`."""
    import os

    os.environ.setdefault("PYSPARK_PYTHON", worker_python())
    return (
        _builder()
        .master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", str(partitions))
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.driver.memory", "2g")
        .getOrCreate()
    )


class _PoissonSums:
    """``mapInArrow`` over per-user values: each batch yields, per metric column, the B weighted
    sums ``Σ w x`` and ``Σ w`` of :func:`receval.stats.poisson_sums` (nothing per user travels)."""

    def __init__(self, user: str, cols: list[str], resamples: int, seed: int):
        self.user, self.cols, self.resamples, self.seed = user, cols, resamples, seed

    def __call__(self, batches):
        import pyarrow as pa

        for batch in batches:
            if batch.num_rows == 0:
                continue
            h = user_hash(batch.column(self.user).to_pylist())
            names, swx, sw = [], [], []
            for c in self.cols:
                x = batch.column(c).to_numpy(zero_copy_only=False).astype(np.float64)  # nulls -> NaN
                a, b = poisson_sums(x, h, self.resamples, self.seed)
                names.append(c)
                swx.append(a.tolist())
                sw.append(b.tolist())
            yield pa.RecordBatch.from_pydict({"metric": names, "swx": swx, "sw": sw})


def poisson_intervals(results: Any, level: float = 0.95, resamples: int = 1000, seed: int = 0) -> dict[str, Any]:
    """Poisson-bootstrap intervals (:mod:`receval.stats`) of every per-user metric of a Spark
    evaluation, computed where the values are: each partition sends B sums per metric, the
    driver adds them. Equal to ``receval.stats.interval(x, "poisson", ids=...)`` for the same seed."""
    df = results.spark_per_user
    if df is None:
        raise DataError("poisson_intervals needs the results of a Spark evaluation (results.spark_per_user)")
    user, cols = df.columns[0], df.columns[1:]
    rows = df.mapInArrow(_PoissonSums(user, cols, resamples, seed), "metric string, swx array<double>, sw array<double>").collect()
    total = {c: (np.zeros(resamples), np.zeros(resamples)) for c in cols}
    for row in rows:
        a, b = total[row["metric"]]
        a += np.asarray(row["swx"])
        b += np.asarray(row["sw"])
    return {c: poisson_interval(a, b, level) for c, (a, b) in total.items()}


__all__ = ["evaluate_spark", "local_session", "write_per_user", "worker_python", "partitions_for", "poisson_intervals"]

