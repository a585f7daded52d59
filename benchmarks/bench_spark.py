"""Benchmark: receval's Spark backend against RePlay's Spark metrics, same session, same data.

The data are bench_core's (seeded, Parquet under ``benchmarks/out/data``: users × top-k lists
from 50,000 items, Zipf-like popularity, 5..15 (mean 10) relevant items per user, strictly
decreasing scores, so no ties). One ``local[2]`` SparkSession; the recommendations and the
truth are read once per size, cached and counted (not timed), and the same two DataFrames go to

* receval on Spark: ``receval.evaluate(recs_df, truth_df, six specs, dialect="replay@0.22")``
  (the values come from a Spark aggregation, i.e. an action; only sums and per-partition
  metadata reach the driver);
* RePlay 0.22.0: ``replay.metrics.OfflineMetrics([Precision, Recall, HitRate, MRR, MAP, NDCG])``
  on the Spark DataFrames (its own caching of the joined lists is on, as by default).

Six metrics at one k = the list length. One untimed warm-up run each, then ``--repeat``
(default 3) alternating timed runs; the table shows medians. The values are checked against
each other (max |difference| over the six means). Spark jobs are tagged with job groups and
the stage timings / task result sizes are read back from the Spark UI's REST API after the
runs (``stages`` in the JSON): the summed task result sizes show what reached the driver.

RePlay's Spark metrics need pyspark and RePlay in one interpreter: the opt-in peer env
``spark`` (``RECEVAL_PEER_ENVS_EXTRA=spark bash .ci/peer-envs`` or ``bash .ci/peer-envs spark``).
Run from any interpreter; the script re-executes itself with that env's python when the
current one lacks pyspark or replay, and puts this checkout's ``src`` on the path (driver and
Spark's Python workers).

    python benchmarks/bench_spark.py                       # 100k × 10, 100k × 100
    python benchmarks/bench_spark.py --sizes 100kx10,100kx100,1Mx10

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
        sys.exit(f"bench_spark: needs pyspark + replay-rec in one interpreter; build the env: bash .ci/peer-envs spark ({py} absent)")
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
    for j in jobs:
        for sid in j["stageIds"]:
            for (s_id, _), s in stages.items():
                if s_id != sid or s.get("status") != "COMPLETE":
                    continue
                n_stages += 1
                name = s["name"].split(" at ")[0] + " @ " + s["name"].split(" at ")[-1].split(":")[0] if " at " in s["name"] else s["name"]
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
    top = dict(sorted(by_name.items(), key=lambda kv: -kv[1]["executor_run_s"]))
    return {"jobs": len(jobs), "stages": n_stages, "task_result_bytes": result_bytes, "by_call_site": top}


def run_size(spark, size: str, repeat: int, seed: int) -> dict:
    import bench_core
    from pyspark.sql import functions as F

    import receval
    from replay.metrics import MAP, MRR, NDCG, HitRate, OfflineMetrics, Precision, Recall

    sc = spark.sparkContext
    U, k = bench_core.SIZES[size]
    d = bench_core.data_dir(size, seed)
    recs = spark.read.parquet(str(d / "recs.parquet")).select("user_id", "item_id", "score").cache()
    truth = spark.read.parquet(str(d / "truth.parquet")).select("user_id", "item_id", F.col("rating")).cache()
    n_recs, n_truth = recs.count(), truth.count()
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
    times: dict[str, list[float]] = {n: [] for n in runners}
    values: dict[str, dict] = {}
    for i in range(repeat + 1):  # run 0: warm-up (Python workers, JIT, first-use imports)
        for name, fn in runners.items():
            sc.setJobGroup(f"{name}:{size}:{i}", f"{name} {size} run {i}")
            t0 = time.perf_counter()
            values[name] = fn()
            dt = time.perf_counter() - t0
            if i:
                times[name].append(dt)
            print(f"  {size} {name:8s} run {i}: {dt:7.2f} s", flush=True)
    sc.setJobGroup("other", "other")
    diff = max(abs(values["receval"][m] - values["replay"][m]) for m in METRICS)
    med = {n: statistics.median(t) for n, t in times.items()}
    out = {
        "size": size, "users": U, "k": k, "rec_rows": n_recs, "truth_rows": n_truth,
        "times": times, "median_s": med, "ratio": med["replay"] / med["receval"],
        "values": values, "max_abs_diff": diff,
        "stages": {n: stage_summary(sc, f"{n}:{size}:{repeat}") for n in runners},  # the last timed run
    }
    recs.unpersist()
    truth.unpersist()
    print(f"  {size}: receval {med['receval']:.2f} s, RePlay {med['replay']:.2f} s, ratio {out['ratio']:.2f}×, max |Δ| {diff:.1e}", flush=True)
    return out


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
            "pyarrow": version("pyarrow"), "java": os.environ.get("JAVA_VERSION") or _java(), "cpu": cpu, "cores": os.cpu_count()}


def _java() -> str:
    import subprocess

    try:
        out = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=30).stderr
        return out.splitlines()[0].split('"')[1] if '"' in out else out.splitlines()[0]
    except Exception:
        return "?"


def _top_stage(st: dict) -> str:
    by = st.get("by_call_site") or {}
    if not by:
        return "–"
    total = sum(v["executor_run_s"] for v in by.values()) or 1.0
    name, v = next(iter(by.items()))
    return f"{v['executor_run_s']:.1f} s task time total {total:.1f} s; top: `{name}` {100 * v['executor_run_s'] / total:.0f}%"


def write_results_md(rows: list[dict], ver: dict, conf: dict) -> None:
    lines = [
        "<!-- spark:start -->",
        "### Spark: receval's Spark backend vs RePlay's Spark metrics (one local[2] session, same cached DataFrames)",
        "",
        f"`benchmarks/bench_spark.py`: six metrics (precision, recall, hitrate, MRR, MAP, NDCG) at k = list length, "
        f"receval with `dialect=\"{DIALECT}\"`, RePlay `OfflineMetrics` on the Spark DataFrames; median of {conf['repeat']} runs "
        f"after one warm-up, `spark.sql.shuffle.partitions={conf['partitions']}`, driver memory {conf['driver_memory']}. "
        f"Versions: receval {ver['receval']}, replay-rec {ver['replay-rec']}, pyspark {ver['pyspark']}, Java {ver['java']}, "
        f"Python {ver['python']}, {ver['cores']} cores ({ver['cpu']}).",
        "",
        "| users × k | rec rows | receval (s) | RePlay (s) | RePlay / receval | max \\|Δ\\| | receval: task result bytes to driver | receval task time | RePlay task time |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        st_r, st_p = r["stages"]["receval"], r["stages"]["replay"]
        lines.append(
            f"| {r['size'].replace('x', ' × ')} | {r['rec_rows']:,} | {r['median_s']['receval']:.2f} | {r['median_s']['replay']:.2f} | "
            f"{r['ratio']:.1f}× | {r['max_abs_diff']:.1e} | {st_r.get('task_result_bytes', 0):,} | {_top_stage(st_r)} | {_top_stage(st_p)} |"
        )
    lines += [""] + conf.get("notes", []) + ["<!-- spark:end -->"]
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
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--partitions", type=int, default=8)
    ap.add_argument("--driver-memory", default="6g")
    ap.add_argument("--no-write", action="store_true", help="print only; do not touch out/spark.json or RESULTS.md")
    a = ap.parse_args(argv)
    _ensure_env()
    # receval from this checkout, for the driver and for Spark's Python workers (they inherit the environment)
    sys.path[:0] = [str(SRC), str(HERE)]
    os.environ["PYTHONPATH"] = os.pathsep.join([str(SRC), *filter(None, [os.environ.get("PYTHONPATH")])])
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    import warnings

    warnings.filterwarnings("ignore")
    spark = _session(a.partitions, a.driver_memory)
    spark.sparkContext.setLogLevel("ERROR")
    ver = versions()
    print(f"bench_spark: {ver}", flush=True)
    rows = []
    out_path = OUT / "spark.json"
    for size in a.sizes.split(","):
        rows.append(run_size(spark, size, a.repeat, a.seed))
        if not a.no_write:  # write after every size: a long run stopped midway keeps what it has
            OUT.mkdir(exist_ok=True)
            conf = {"repeat": a.repeat, "partitions": a.partitions, "driver_memory": a.driver_memory, "seed": a.seed}
            out_path.write_text(json.dumps({"versions": ver, "config": conf, "dialect": DIALECT, "rows": rows}, indent=1))
            write_results_md(rows, ver, conf)
    spark.stop()


if __name__ == "__main__":
    main()
