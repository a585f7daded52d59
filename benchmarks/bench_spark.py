"""Benchmark: receval's Spark backend against RePlay's Spark metrics, same session, same data.

The data are bench_core's (seeded, Parquet under ``benchmarks/out/data``, written by
:func:`bench_core.data_dir`: users × top-k lists from 50,000 items, Zipf-like popularity, 5..15
(mean 10) relevant items per user, strictly decreasing scores, so no ties) in one of its two
shapes (``--shape``):

* ``sorted-int`` (the default): integer ids, rows grouped by user and ranked (a ``rank`` column,
  not read here);
* ``realistic``: the same data as users bring it: string ids (``u0001000``, ``i5251``), the rows of
  both files shuffled, scores only (no rank column).

One ``local[2]`` SparkSession; the recommendations (user_id, item_id, score) and the truth
(user_id, item_id, rating) are read once per size and shape, cached and counted (not timed), and
the same two DataFrames go to

* receval on Spark: ``receval.evaluate(recs_df, truth_df, six specs, dialect="replay@0.22")``
  (the values come from a Spark aggregation, i.e. an action; only sums and per-partition
  metadata reach the driver);
* RePlay 0.22.0: ``replay.metrics.OfflineMetrics([Precision, Recall, HitRate, MRR, MAP, NDCG])``
  on the Spark DataFrames (its own caching of the joined lists is on, as by default), told the
  column names (``query_column="user_id"``, ``item_column="item_id"``, ``rating_column="score"``).
  No conversion of the realistic shape is needed: RePlay sorts every user's list itself
  (``sort_array`` of (score, item) structs, descending), so row order does not matter, and it
  keeps the id column's Spark type (string ids go through as strings); its values equal
  receval's on both shapes.

Six metrics at one k = the list length. One untimed warm-up run each (``--warmup 0``: none,
for the largest sizes, where a run takes many minutes and the warm-up's few seconds of worker
start-up do not matter; the table's 'runs' column says so), then ``--repeat`` (default 3)
alternating timed runs; the table shows medians. The values are checked against
each other (max |difference| over the six means). Spark jobs are tagged with job groups and
the stage timings / task result sizes are read back from the Spark UI's REST API after the
runs (``stages`` in the JSON): the summed task result sizes show what reached the driver.

RePlay's Spark metrics need pyspark and RePlay in one interpreter: the opt-in peer env
``spark`` (``receval peers build spark``).
Run from any interpreter; the script re-executes itself with that env's python when the
current one lacks pyspark or replay, and puts this checkout's ``src`` on the path (driver and
Spark's Python workers).

    python benchmarks/bench_spark.py                       # 100k × 10, 100k × 100 (sorted-int)
    python benchmarks/bench_spark.py --sizes 100kx10,100kx100,1Mx10 --profile 100kx100
    python benchmarks/bench_spark.py --shape realistic --sizes 100kx100,1Mx100 --repeat 3
    python benchmarks/bench_spark.py --shape realistic --sizes '' --profile 1Mx100
    python benchmarks/bench_spark.py --sizes ''             # re-render RESULTS.md from out/spark.json

Rows of ``out/spark.json`` are replaced per (size, shape) (``--fresh`` drops the others); rows
written before the shape existed are sorted-int.

Writes ``benchmarks/out/spark.json`` and the spark section of ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
OUT = HERE / "out"
ENVS = Path(os.environ.get("RECEVAL_PEER_ENVS", Path.home() / ".cache" / "receval-peers"))
METRICS = ["precision", "recall", "hitrate", "mrr", "map", "ndcg"]
REPLAY_NAMES = {"precision": "Precision", "recall": "Recall", "hitrate": "HitRate", "mrr": "MRR", "map": "MAP", "ndcg": "NDCG"}
DIALECT = "replay@0.22"


def _ensure_env() -> None:
    """Re-exec in the 'spark' peer env if this interpreter cannot import pyspark and replay."""
    from importlib.util import find_spec

    if find_spec("pyspark") and find_spec("replay"):
        return
    py = ENVS / "spark" / "bin" / "python"
    if not py.exists():
        sys.exit(f"bench_spark: needs pyspark + replay-rec in one interpreter; build the env: receval peers build spark ({py} absent)")
    if os.environ.get("_RECEVAL_BENCH_SPARK_REEXEC"):
        sys.exit(f"bench_spark: {py} lacks pyspark or replay")
    os.environ["_RECEVAL_BENCH_SPARK_REEXEC"] = "1"
    os.execv(str(py), [str(py), __file__, *sys.argv[1:]])


def _session(partitions: int, driver_mem: str):
    from pyspark.sql import SparkSession

    return (
        SparkSession.builder.master("local[2]")
        .appName("receval-bench-spark")
        .config("spark.ui.enabled", "true")
        .config("spark.ui.port", "0")  # a free port
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(partitions))
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.driver.memory", driver_mem)
        .getOrCreate()
    )


def _rest(sc, path: str):
    url = f"{sc.uiWebUrl}/api/v1/applications/{sc.applicationId}/{path}"
    with urllib.request.urlopen(url, timeout=30) as f:
        return json.load(f)


def stage_summary(sc, group_prefix: str) -> dict:
    """Per job group prefix: jobs, stages (name → summed executor run time, wall), task result bytes."""
    try:
        jobs = [j for j in _rest(sc, "jobs") if (j.get("jobGroup") or "").startswith(group_prefix)]
        stages = {(s["stageId"], s["attemptId"]): s for s in _rest(sc, "stages")}
    except Exception as exc:  # the UI is a convenience; never fail the benchmark on it
        return {"error": repr(exc)}
    by_name: dict[str, dict] = {}
    result_bytes = 0
    n_stages = 0
    per_stage: list[dict] = []
    for j in jobs:
        for sid in j["stageIds"]:
            for (s_id, _), s in stages.items():
                if s_id != sid or s.get("status") != "COMPLETE":
                    continue
                n_stages += 1
                name = s["name"].split(" at ")[0] + " @ " + s["name"].split(" at ")[-1].split(":")[0] if " at " in s["name"] else s["name"]
                name = name.replace(str(HERE.parent) + "/", "")  # no machine paths in the results
                d = by_name.setdefault(name, {"stages": 0, "tasks": 0, "executor_run_s": 0.0, "executor_cpu_s": 0.0, "result_bytes": 0,
                                              "shuffle_write_bytes": 0, "input_bytes": 0})
                d["stages"] += 1
                d["tasks"] += s.get("numCompleteTasks", 0)
                d["executor_run_s"] += s.get("executorRunTime", 0) / 1e3
                d["executor_cpu_s"] += s.get("executorCpuTime", 0) / 1e9
                d["result_bytes"] += s.get("resultSize", 0)
                d["shuffle_write_bytes"] += s.get("shuffleWriteBytes", 0)
                d["input_bytes"] += s.get("inputBytes", 0)
                result_bytes += s.get("resultSize", 0)
                per_stage.append({"stage": s_id, "name": name, "tasks": s.get("numCompleteTasks", 0),
                                  "executor_run_s": s.get("executorRunTime", 0) / 1e3, "wall_s": _wall(s),
                                  "shuffle_read_bytes": s.get("shuffleReadBytes", 0), "shuffle_write_bytes": s.get("shuffleWriteBytes", 0),
                                  "result_bytes": s.get("resultSize", 0)})
    top = dict(sorted(by_name.items(), key=lambda kv: -kv[1]["executor_run_s"]))
    return {"jobs": len(jobs), "stages": n_stages, "task_result_bytes": result_bytes, "by_call_site": top,
            "per_stage": sorted(per_stage, key=lambda x: x["stage"])}


def _wall(s: dict) -> float | None:
    from datetime import datetime

    try:
        f = lambda t: datetime.strptime(t.replace("GMT", "+0000"), "%Y-%m-%dT%H:%M:%S.%f%z")  # noqa: E731
        return (f(s["completionTime"]) - f(s["submissionTime"])).total_seconds()
    except Exception:
        return None


def _read(spark, size: str, seed: int, shape: str):
    """The cached, counted (recs, truth) DataFrames of bench_core's Parquet files of one size and shape."""
    import bench_core

    d = bench_core.data_dir(size, seed, shape)  # written once (bench_core's generator), then reused
    recs = spark.read.parquet(str(d / "recs.parquet")).select("user_id", "item_id", "score").cache()
    truth = spark.read.parquet(str(d / "truth.parquet")).select("user_id", "item_id", "rating").cache()
    return recs, truth, recs.count(), truth.count()


def _shape(r: dict) -> str:
    return r.get("shape", "sorted-int")  # rows written before the shape existed


def run_size(spark, size: str, repeat: int, seed: int, shape: str = "sorted-int", warmup: int = 1) -> dict:
    import bench_core

    import receval
    from replay.metrics import MAP, MRR, NDCG, HitRate, OfflineMetrics, Precision, Recall

    sc = spark.sparkContext
    U, k = bench_core.SIZES[size]
    recs, truth, n_recs, n_truth = _read(spark, size, seed, shape)
    specs = [f"{m}@{k}" for m in METRICS]

    def run_receval():
        res = receval.evaluate(recs, truth, specs, dialect=DIALECT)  # values from a Spark aggregation (an action)
        return {m: float(res[s]) for m, s in zip(METRICS, specs)}

    def run_replay():
        om = OfflineMetrics([Precision(k), Recall(k), HitRate(k), MRR(k), MAP(k), NDCG(k)],
                            query_column="user_id", item_column="item_id", rating_column="score")
        res = om(recs, truth)
        return {m: float(res[f"{REPLAY_NAMES[m]}@{k}"]) for m in METRICS}

    runners = {"receval": run_receval, "replay": run_replay}
    load0 = os.getloadavg()[0]
    times: dict[str, list[float]] = {n: [] for n in runners}
    values: dict[str, dict] = {}
    for i in range(1 - min(warmup, 1), repeat + 1):  # run 0: warm-up (Python workers, JIT, first-use imports)
        for name, fn in runners.items():
            sc.setJobGroup(f"{name}:{size}:{shape}:{i}", f"{name} {size} {shape} run {i}")
            t0 = time.perf_counter()
            values[name] = fn()
            dt = time.perf_counter() - t0
            if i:
                times[name].append(dt)
            print(f"  {size} {shape} {name:8s} run {i}: {dt:7.2f} s", flush=True)
    sc.setJobGroup("other", "other")
    diff = max(abs(values["receval"][m] - values["replay"][m]) for m in METRICS)
    med = {n: statistics.median(t) for n, t in times.items()}
    out = {
        "size": size, "shape": shape, "users": U, "k": k, "rec_rows": n_recs, "truth_rows": n_truth,
        "warmup": min(warmup, 1), "times": times, "median_s": med, "min_s": {n: min(t) for n, t in times.items()},
        "load_avg_1min": [load0, os.getloadavg()[0]],  # a shared 2-core VM: other work shows up here
        "ratio": med["replay"] / med["receval"],
        "values": values, "max_abs_diff": diff,
        "stages": {n: stage_summary(sc, f"{n}:{size}:{shape}:{repeat}") for n in runners},  # the last timed run
        "git": _git(),  # the receval that was timed (rows of other runs keep theirs)
    }
    recs.unpersist()
    truth.unpersist()
    print(f"  {size} {shape}: receval {med['receval']:.2f} s, RePlay {med['replay']:.2f} s, ratio {out['ratio']:.2f}×, max |Δ| {diff:.1e}", flush=True)
    return out


def profile(spark, size: str, seed: int, repeat: int = 3, shape: str = "sorted-int") -> dict:
    """Where receval's Spark time goes: the same tag/union/repartition plan as the backend,
    (a) ended by a JVM count, (b) handed to a no-op ``mapInArrow`` (adds the JVM → Python Arrow
    transfer), (c) the plan before the backend dropped Spark's sort (all-null columns kept, a
    ``sortWithinPartitions(u, tag, rid)`` before the no-op hand-off), (d) the full evaluation;
    plus the in-memory engine on the same data in one process (sizes up to 20M rows)."""
    import bench_core
    import polars as pl
    import pyarrow as pa
    from pyspark.sql import functions as F

    import receval

    U, k = bench_core.SIZES[size]
    d = bench_core.data_dir(size, seed, shape)
    recs, truth, _, _ = _read(spark, size, seed, shape)
    parts = int(spark.conf.get("spark.sql.shuffle.partitions"))
    # the backend's id types: integer ids as long, string ids kept
    types = {f.name: f.dataType for f in recs.schema.fields}
    idtype = {c: "long" if types[c].typeName() in ("byte", "short", "integer", "long") else types[c] for c in ("user_id", "item_id")}

    def tagged(df, tag, s, y, rank_col=False):
        return df.select(F.col("user_id").cast(idtype["user_id"]).alias("u"), F.col("item_id").cast(idtype["item_id"]).alias("i"),
                         (F.col(s).cast("double") if s else F.lit(None).cast("double")).alias("s"),
                         *([F.lit(None).cast("long").alias("k")] if rank_col else []),
                         (F.col(y).cast("double") if y else F.lit(None).cast("double")).alias("y"), F.lit(tag).cast("byte").alias("tag"),
                         F.monotonically_increasing_id().alias("rid"))

    both = tagged(recs, 0, "score", None).unionByName(tagged(truth, 1, None, "rating")).repartition(parts, "u")
    before = (tagged(recs, 0, "score", None, True).unionByName(tagged(truth, 1, None, "rating", True))
              .repartition(parts, "u").sortWithinPartitions("u", "tag", "rid"))

    def noop(batches):
        n = 0
        for b in batches:
            n += b.num_rows
        yield pa.RecordBatch.from_pydict({"n": pa.array([n], pa.int64())})

    specs = [f"{m}@{k}" for m in METRICS]
    phases = {
        "shuffle (JVM count)": lambda: both.agg(F.count("*")).collect(),
        "+ Arrow to Python workers (no-op mapInArrow)": lambda: both.mapInArrow(noop, "n long").agg(F.sum("n")).collect(),
        "the plan before: + Spark sort by (u, tag, rid), 7 columns (no-op mapInArrow)":
            lambda: before.mapInArrow(noop, "n long").agg(F.sum("n")).collect(),
        "receval on Spark (full)": lambda: receval.evaluate(recs, truth, specs, dialect=DIALECT),
    }
    out = {"size": size, "shape": shape}
    for name, fn in phases.items():
        fn()
        ts = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
        out[name] = statistics.median(ts)
        print(f"  profile {size} {shape}: {name}: {out[name]:.2f} s", flush=True)
    recs.unpersist()
    truth.unpersist()
    if U * k <= 20_000_000:  # at 1M × 100 the in-memory engine holds ~13 GB next to the 6 GB JVM: not run (bench_core times it)
        r = pl.read_parquet(d / "recs.parquet", columns=["user_id", "item_id", "score"])
        t = pl.read_parquet(d / "truth.parquet")
        receval.evaluate(r, t, specs, dialect=DIALECT)
        t0 = time.perf_counter()
        receval.evaluate(r, t, specs, dialect=DIALECT)
        out["in-memory receval, one process (polars frames)"] = time.perf_counter() - t0
    out["load_avg_1min"] = os.getloadavg()[0]
    out["git"] = _git()
    return out


def _git() -> dict:
    import subprocess

    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", str(SRC)], cwd=HERE, capture_output=True, text=True).stdout.split("\n")
        return {"commit": head, "src_dirty": [x[3:] for x in dirty if x.strip()]}
    except Exception:
        return {}


def versions() -> dict:
    from importlib.metadata import version

    import numpy as np
    import pyspark

    import receval

    cpu = "?"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    return {"receval": receval.__version__, "replay-rec": version("replay-rec"), "pyspark": pyspark.__version__,
            "python": platform.python_version(), "numpy": np.__version__, "polars": version("polars"),
            "pyarrow": version("pyarrow"), "java": os.environ.get("JAVA_VERSION") or _java(), "cpu": cpu, "cores": os.cpu_count(), "git": _git()}


def _java() -> str:
    import subprocess

    try:
        out = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=30).stderr
        return out.splitlines()[0].split('"')[1] if '"' in out else out.splitlines()[0]
    except Exception:
        return "?"


def _mins(r: dict) -> str:
    m = r.get("min_s")
    return f"{m['receval']:.2f} / {m['replay']:.2f}" if m else "–"


def _commit(r: dict) -> str:
    g = r.get("git") or {}
    return (g.get("commit") or "?") + (" (+ changes)" if g.get("src_dirty") else "")


def _load(r: dict) -> str:
    la = r.get("load_avg_1min")
    return f"{la[0]:.1f}–{la[1]:.1f}" if la else "–"


def _top_stage(st: dict) -> str:
    by = st.get("by_call_site") or {}
    if not by:
        return "–"
    total = sum(v["executor_run_s"] for v in by.values()) or 1.0
    name, v = next(iter(by.items()))
    name = name.split(" @ ")[0] + " @ " + name.split(" @ ")[-1].rsplit("/", 1)[-1] if " @ " in name else name
    return f"{total:.1f} s; {100 * v['executor_run_s'] / total:.0f}% in `{name}`"


NOTES = [
    "Both sides read the same cached DataFrames in one SparkSession. Only aggregates reach the driver from receval (the "
    "'task result bytes' column: per-partition sums and metadata, ~65 KB whatever the size); RePlay's `OfflineMetrics` "
    "also collects the distinct users of every input with `toPandas` (its input check) and runs one Python-UDF pass "
    "(`rdd.flatMap`) per metric over the joined lists, then `first()` of an average per metric.",
    "The VM has 2 cores shared with other work (1-minute load average per size in the table); single runs varied "
    "up to 2.3× (RePlay at 1M × 10: 61–141 s), so the medians carry that noise — the minima are shown too.",
    "Scaling: receval's cost follows rows (every row crosses the JVM → Python Arrow boundary once), RePlay's follows "
    "users (one Python call per user and metric on collected lists), so the ratio is lowest at 100k × 100 and highest at 1M × 10.",
    "Limits at 100k × 100 (phase profile below): the shuffle and sort are ~1 s; handing the 11M sorted rows to the Python "
    "workers as Arrow is ~3.5 s more; the per-partition metric code ~4 s more, against 0.55 s for the same metrics in one "
    "in-memory process. A side test of the no-op hand-off (not in the JSON) gave 4.6–7.1 s with the backend's 7 columns, "
    "4.2 s with u, i, s, tag only (rid and the all-null k, y dropped after the sort) and 4.1–4.8 s with "
    "`spark.sql.execution.arrow.maxRecordsPerBatch=100000`: modest, near the noise.",
    "At 1M × 10 the stage timings (`stages.receval.per_stage` in the JSON, last timed run) put ~4 s in the scan and shuffle "
    "write (305 MB) and ~20 s in the 8 tasks that sort, hand the rows to Python, compute and return per-user rows "
    "(6 columns per metric and user: 1M × 36 values back through Arrow into the partial aggregation): with many users "
    "the per-user output is a second cost next to the input hand-off.",
]


def write_results_md(rows: list[dict], ver: dict, conf: dict, prof: list[dict] | None = None) -> None:
    lines = [
        "<!-- spark:start -->",
        "### Spark: receval's Spark backend vs RePlay's Spark metrics (one local[2] session, same cached DataFrames)",
        "",
        f"`benchmarks/bench_spark.py`: six metrics (precision, recall, hitrate, MRR, MAP, NDCG) at k = list length, "
        f"receval with `dialect=\"{DIALECT}\"`, RePlay `OfflineMetrics` on the Spark DataFrames; median of the timed runs "
        f"(column 'runs', alternating) after one untimed warm-up run each (unless the column says none), `spark.sql.shuffle.partitions={conf['partitions']}`, driver memory {conf['driver_memory']}. "
        f"Versions: receval {ver['receval']}, replay-rec {ver['replay-rec']}, pyspark {ver['pyspark']}, Java {ver['java']}, "
        f"Python {ver['python']}, {ver['cores']} cores ({ver['cpu']}).",
        "",
        "Shapes (bench_core's data): **sorted-int** = integer ids, rows grouped by user and ranked; **realistic** = what "
        "users bring: string ids (`u0001000`, `i5251`), the rows of both files shuffled, scores only. Both sides read the "
        "same Parquet; RePlay needs no conversion of either shape (it sorts each user's list by score itself and keeps "
        "string ids as strings).",
        "",
        "| users × k | shape | rec rows | runs | receval (s) | RePlay (s) | RePlay / receval | min receval / RePlay (s) | max \\|Δ\\| | receval: task result bytes to driver | load avg | receval task time | RePlay task time | commit |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        st_r, st_p = r["stages"]["receval"], r["stages"]["replay"]
        lines.append(
            f"| {r['size'].replace('x', ' × ')} | {_shape(r)} | {r['rec_rows']:,} | {len(r['times']['receval'])}"
            f"{'' if r.get('warmup', 1) else ', no warm-up'} | "
            f"{r['median_s']['receval']:.2f} | {r['median_s']['replay']:.2f} | "
            f"{r['ratio']:.1f}× | {_mins(r)} | {r['max_abs_diff']:.1e} | {st_r.get('task_result_bytes', 0):,} | {_load(r)} | "
            f"{_top_stage(st_r)} | {_top_stage(st_p)} | {_commit(r)} |"
        )
    met = [f"{r['size'].replace('x', ' × ')} {_shape(r)}" for r in rows if r["ratio"] >= 3]
    missed = [f"{r['size'].replace('x', ' × ')} {_shape(r)} ({r['ratio']:.1f}×)" for r in rows if r["ratio"] < 3]
    lines += ["", f"Target (RePlay / receval ≥ 3× on medians): met at {', '.join(met) or 'no size'}"
              + (f"; not met at {', '.join(missed)}." if missed else ".")]
    lines += [""] + [f"* {n}" for n in NOTES]
    for p in prof or []:
        items = [f"{k} {v:.2f} s" for k, v in p.items() if isinstance(v, float) and k != "load_avg_1min"]
        lines.append(f"* Where receval's time goes at {p['size'].replace('x', ' × ')} {_shape(p)} (medians; load avg "
                     f"{p.get('load_avg_1min', 0):.1f}; commit {_commit(p)}): " + "; ".join(items) + ".")
    g = ver.get("git") or {}
    if g:
        lines.append(f"* Last run at commit {g.get('commit')}" + (f" with uncommitted changes in {', '.join(g['src_dirty'])}" if g.get("src_dirty") else "")
                     + "; the commit that measured each row is in the table.")
    lines += ["<!-- spark:end -->"]
    block = "\n".join(lines) + "\n"
    path = HERE / "RESULTS.md"
    text = path.read_text() if path.exists() else ""
    start, end = "<!-- spark:start -->", "<!-- spark:end -->"
    if start in text and end in text:
        a, b = text.index(start), text.index(end) + len(end)
        text = text[:a] + block.rstrip("\n") + text[b:]
    else:
        text = text.rstrip("\n") + "\n\n" + block
    path.write_text(text)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="100kx10,100kx100")
    ap.add_argument("--shape", default="sorted-int",
                    help="bench_core's data shape(s), comma-separated: sorted-int (integer ids, rows sorted; the default) "
                         "and/or realistic (string ids, rows shuffled, scores only)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1, choices=(0, 1), help="one untimed run each first (1, the default) or none (0)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--partitions", type=int, default=8)
    ap.add_argument("--driver-memory", default="6g")
    ap.add_argument("--no-write", action="store_true", help="print only; do not touch out/spark.json or RESULTS.md")
    ap.add_argument("--profile", default="", help="sizes (comma-separated) for the phase breakdown of receval's time, e.g. 100kx100")
    ap.add_argument("--fresh", action="store_true", help="drop the rows of out/spark.json for sizes/shapes not run now")
    a = ap.parse_args(argv)
    shapes = [{"sorted": "sorted-int"}.get(x, x) for x in filter(None, a.shape.split(","))]
    for x in shapes:
        if x not in ("sorted-int", "realistic"):
            ap.error(f"--shape: unknown shape {x!r} (sorted-int, realistic)")
    _ensure_env()
    # receval from this checkout, for the driver and for Spark's Python workers (they inherit the environment)
    sys.path[:0] = [str(SRC), str(HERE)]
    os.environ["PYTHONPATH"] = os.pathsep.join([str(SRC), *filter(None, [os.environ.get("PYTHONPATH")])])
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    import warnings

    warnings.filterwarnings("ignore")
    out_path = OUT / "spark.json"
    old = json.loads(out_path.read_text()) if out_path.exists() and not a.fresh else {}
    if not a.sizes and not a.profile:  # --sizes '' : re-render the RESULTS.md section from out/spark.json
        if old:
            write_results_md(old["rows"], old["versions"], old["config"], old.get("profile", []))
        return
    spark = _session(a.partitions, a.driver_memory)
    spark.sparkContext.setLogLevel("ERROR")
    ver = versions()
    print(f"bench_spark: {ver}", flush=True)
    for r in old.get("rows", []):  # rows written before rows recorded their commit: the file's
        r.setdefault("git", old.get("versions", {}).get("git"))
    rows = {(r["size"], _shape(r)): r for r in old.get("rows", [])}  # rows of earlier runs for other sizes/shapes are kept
    profs = {(p["size"], _shape(p)): p for p in old.get("profile", [])}
    conf = {"repeat": a.repeat, "partitions": a.partitions, "driver_memory": a.driver_memory, "seed": a.seed}

    def write():
        if a.no_write:  # write after every step: a long run stopped midway keeps what it has
            return
        OUT.mkdir(exist_ok=True)
        order = lambda r: (r["users"] * r["k"], r["users"], _shape(r) != "sorted-int")  # noqa: E731
        rs = sorted(rows.values(), key=order)
        out_path.write_text(json.dumps({"versions": ver, "config": conf, "dialect": DIALECT, "rows": rs,
                                        "profile": list(profs.values())}, indent=1))
        write_results_md(rs, ver, conf, list(profs.values()))

    for shape in shapes:
        for size in filter(None, a.sizes.split(",")):
            rows[size, shape] = run_size(spark, size, a.repeat, a.seed, shape, a.warmup)
            write()
        for size in filter(None, a.profile.split(",")):
            profs[size, shape] = profile(spark, size, a.seed, repeat=a.repeat, shape=shape)
            write()
    spark.stop()


if __name__ == "__main__":
    main()
