"""Benchmark: the same data through the peers, each in its own env, against receval.

The data are bench_core's (seeded, Parquet under ``benchmarks/out/data``). Six metrics
(precision, recall, hitrate, MRR, MAP, NDCG) at one k = the list length, as in
the peers timed in the project's reference notes (shared/reference/anchors.md). Every peer runs in its virtual env
(``${RECEVAL_PEER_ENVS:-~/.cache/receval-peers}/<env>``, built by ``receval peers build``) as a
subprocess that reads the Parquet files (not timed) and prints JSON: ``prepare_s`` (building
the library's own input from the frames), ``compute_s`` (the metric call; warm for ranx,
whose numba kernels are compiled on a tiny input first), its peak RSS and the six means.
The means are checked against receval under the peer's dialect (max |difference|).

Guards: a wall-clock timeout per peer run (``--timeout``, default 300 s) and a memory guard
(the parent polls the child's RSS and kills its process group past ``--mem-gb``, default 12).
Peers whose env is absent are reported as skipped.

    python benchmarks/bench_peers.py                      # 100k × 10 and 100k × 100, both shapes
    python benchmarks/bench_peers.py --sizes 1Mx10,1Mx100 --peers rectools,recbole

Writes ``benchmarks/out/peers.json`` and the peers section of ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
ENVS = Path(os.environ.get("RECEVAL_PEER_ENVS", Path.home() / ".cache" / "receval-peers"))
METRICS = ["precision", "recall", "hitrate", "mrr", "map", "ndcg"]

_PRELUDE = r'''
import json, sys, time, warnings
warnings.filterwarnings("ignore")
D, K = sys.argv[1], int(sys.argv[2])
T = time.perf_counter
def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
def done(lib, version, prep, comp, values, notes=()):
    print("JSON" + json.dumps({"library": lib, "version": version, "prepare_s": prep, "compute_s": comp,
                               "values": {k: float(v) for k, v in values.items()}, "peak_rss_bytes": hwm(), "notes": list(notes)}))
'''

#: RePlay's OfflineMetrics on polars or pandas frames (FRAMES: the frame library)
_REPLAY = r'''
import FRAMES as fr
from importlib.metadata import version
from replay.metrics import MAP, MRR, NDCG, HitRate, Precision, Recall, OfflineMetrics
r = fr.read_parquet(D + "/recs.parquet", columns=["user_id", "item_id", "score"]); t = fr.read_parquet(D + "/truth.parquet", columns=["user_id", "item_id"])
kw = dict(query_column="user_id", item_column="item_id", rating_column="score")
om = OfflineMetrics([Precision(K), Recall(K), HitRate(K), MRR(K), MAP(K), NDCG(K)], **kw)
t0 = T(); res = om(r, t); t1 = T()
names = {"precision": "Precision", "recall": "Recall", "hitrate": "HitRate", "mrr": "MRR", "map": "MAP", "ndcg": "NDCG"}
done("replay (FRAMES)", version("replay-rec"), 0.0, t1 - t0, {n: res[f"{m}@{K}"] for n, m in names.items()})
'''

PEERS: dict[str, dict] = {
    "receval": {"env": None, "dialect": "standard", "code": r'''
import polars as pl, receval
r = pl.read_parquet(D + "/recs.parquet", columns=["user_id", "item_id", "score"]); t = pl.read_parquet(D + "/truth.parquet")
specs = [f"{m}@{K}" for m in ("precision", "recall", "hitrate", "mrr", "map", "ndcg")]
receval.evaluate(r.head(1000), t.head(1000), specs, empty="skip")
t0 = T(); res = receval.evaluate(r, t, specs); t1 = T()
done("receval", receval.__version__, 0.0, t1 - t0, {s.split("@")[0]: res[s] for s in specs})
'''},
    "recbole": {"env": "np2", "dialect": "recbole", "code": r'''
import numpy as np, pandas as pd
from importlib.metadata import version
if not hasattr(np, "float"):
    np.float = float  # RecBole 1.2.1 uses the alias removed in numpy 1.24
from recbole.evaluator.metrics import Hit, MRR, NDCG, Precision, Recall, MAP
r = pd.read_parquet(D + "/recs.parquet", columns=["user_id", "item_id", "score"]); t = pd.read_parquet(D + "/truth.parquet", columns=["user_id", "item_id"])
t0 = T()
r = r.sort_values(["user_id", "score"], ascending=[True, False], kind="stable")
m = r.merge(t.assign(_hit=True), on=["user_id", "item_id"], how="left")
users = r["user_id"].unique()
pos_index = m["_hit"].fillna(False).to_numpy(bool).reshape(len(users), K)
pos_len = t.groupby("user_id").size().reindex(users).to_numpy()
t1 = T()
cfg = {"topk": [K], "metric_decimal_place": 15}
vals = {}
for name, cls, two in [("hitrate", Hit, False), ("mrr", MRR, False), ("precision", Precision, False),
                       ("recall", Recall, True), ("map", MAP, True), ("ndcg", NDCG, True)]:
    met = cls(cfg)
    res = met.metric_info(pos_index, pos_len) if two else met.metric_info(pos_index)
    vals[name] = res[:, K - 1].mean()
t2 = T()
done("recbole", version("recbole"), t1 - t0, t2 - t1, vals, ["prep = pandas sort by (user, score) and merge into pos_index [U, k]"])
'''},
    "rectools": {"env": "np1", "dialect": "rectools", "code": r'''
import pandas as pd
from importlib.metadata import version
from rectools.metrics import Precision, Recall, HitRate, MRR, MAP, NDCG, calc_metrics
r = pd.read_parquet(D + "/recs.parquet", columns=["user_id", "item_id", "score"]); t = pd.read_parquet(D + "/truth.parquet", columns=["user_id", "item_id"])
ms = {"precision": Precision(K), "recall": Recall(K), "hitrate": HitRate(K), "mrr": MRR(K), "map": MAP(K), "ndcg": NDCG(K)}
t0 = T()
r["rank"] = r.groupby("user_id")["score"].rank(method="first", ascending=False).astype("int64")  # RecTools reads ranks
t1 = T(); vals = calc_metrics(ms, r.drop(columns="score"), t); t2 = T()
done("rectools", version("rectools"), t1 - t0, t2 - t1, vals, ["prep = ranks from scores (pandas groupby rank)"])
'''},
    "pytrec_eval": {"env": "np2", "dialect": "trec_eval", "code": r'''
import pandas as pd, numpy as np, pytrec_eval
from importlib.metadata import version
r = pd.read_parquet(D + "/recs.parquet", columns=["user_id", "item_id", "score"]); t = pd.read_parquet(D + "/truth.parquet", columns=["user_id", "item_id"])
t0 = T()
q = {}
for u, i in zip(t["user_id"].astype(str).tolist(), t["item_id"].astype(str).tolist()):
    q.setdefault(u, {})[i] = 1
run = {}
for u, i, s in zip(r["user_id"].astype(str).tolist(), r["item_id"].astype(str).tolist(), r["score"].tolist()):
    run.setdefault(u, {})[i] = s
ev = pytrec_eval.RelevanceEvaluator(q, {f"P.{K}", f"recall.{K}", f"success.{K}", "recip_rank", f"map_cut.{K}", f"ndcg_cut.{K}"})
t1 = T()
pq = ev.evaluate(run)
names = {"precision": f"P_{K}", "recall": f"recall_{K}", "hitrate": f"success_{K}", "mrr": "recip_rank", "map": f"map_cut_{K}", "ndcg": f"ndcg_cut_{K}"}
vals = {n: np.mean([v[m] for v in pq.values()]) for n, m in names.items()}
t2 = T()
done("pytrec_eval", version("pytrec-eval-terrier"), t1 - t0, t2 - t1, vals, ["prep = qrels/run dicts + RelevanceEvaluator"])
'''},
    "ranx": {"env": "np2", "dialect": "ranx", "code": r'''
import pandas as pd
from importlib.metadata import version
from ranx import Qrels, Run, evaluate
r = pd.read_parquet(D + "/recs.parquet", columns=["user_id", "item_id", "score"]); t = pd.read_parquet(D + "/truth.parquet", columns=["user_id", "item_id"])
names = {"precision": f"precision@{K}", "recall": f"recall@{K}", "hitrate": f"hit_rate@{K}", "mrr": f"mrr@{K}", "map": f"map@{K}", "ndcg": f"ndcg@{K}"}
wq = Qrels({"a": {"x": 1}}); wr = Run({"a": {"x": 1.0, "y": 0.5}}); evaluate(wq, wr, list(names.values()))  # numba warm-up
t0 = T()
rs = r.assign(user_id=r["user_id"].astype(str), item_id=r["item_id"].astype(str))
ts = t.assign(user_id=t["user_id"].astype(str), item_id=t["item_id"].astype(str), rel=1)
qrels = Qrels.from_df(ts, q_id_col="user_id", doc_id_col="item_id", score_col="rel")
run = Run.from_df(rs, q_id_col="user_id", doc_id_col="item_id", score_col="score")
t1 = T()
res = evaluate(qrels, run, list(names.values()))
t2 = T()
done("ranx", version("ranx"), t1 - t0, t2 - t1, {n: res[m] for n, m in names.items()}, ["prep = Qrels/Run.from_df"])
'''},
    "replay_polars": {"env": "np2", "dialect": "replay", "code": _REPLAY.replace("FRAMES", "polars")},
    "replay_pandas": {"env": "np2", "dialect": "replay", "code": _REPLAY.replace("FRAMES", "pandas")},
    "replay_spark": {"env": "np2", "dialect": "replay", "requires": "pyspark", "code": ""},
    "torchmetrics": {"env": "np2", "dialect": "torchmetrics", "code": r'''
import pandas as pd, torch
from importlib.metadata import version
import torchmetrics.retrieval as R
r = pd.read_parquet(D + "/recs.parquet", columns=["user_id", "item_id", "score"]); t = pd.read_parquet(D + "/truth.parquet", columns=["user_id", "item_id"])
t0 = T()
m = r.merge(t.assign(_hit=True), on=["user_id", "item_id"], how="left")
preds = torch.tensor(m["score"].to_numpy()); target = torch.tensor(m["_hit"].fillna(False).to_numpy(bool))
idx = torch.tensor(pd.factorize(m["user_id"])[0])
t1 = T()
vals = {}
for name, cls in [("precision", R.RetrievalPrecision), ("recall", R.RetrievalRecall), ("hitrate", R.RetrievalHitRate),
                  ("mrr", R.RetrievalMRR), ("map", R.RetrievalMAP), ("ndcg", R.RetrievalNormalizedDCG)]:
    vals[name] = float(cls(top_k=K)(preds, target, indexes=idx))
t2 = T()
done("torchmetrics", version("torchmetrics"), t1 - t0, t2 - t1, vals,
     ["recall/ndcg see only the listed items: |R| = relevant items in the list (torchmetrics' design)"])
'''},
}


def _python(env: str | None) -> Path | None:
    if env is None:
        return Path(sys.executable)
    p = ENVS / env / "bin" / "python"
    return p if p.exists() else None


def _rss(pid: int) -> int:
    total = 0
    try:
        for child in [pid, *_children(pid)]:
            for line in Path(f"/proc/{child}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
    except OSError:
        pass
    return total


def _children(pid: int) -> list[int]:
    try:
        kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []
    out = [int(k) for k in kids]
    for k in list(out):
        out += _children(k)
    return out


def run_peer(name: str, data: Path, k: int, timeout: float, mem_bytes: int) -> dict:
    spec = PEERS[name]
    py = _python(spec["env"])
    base = {"peer": name, "env": spec["env"], "size": data.name.split("-")[0], "k": k,
            "shape": "realistic" if data.name.endswith("-realistic") else "sorted-int"}
    if py is None:
        return {**base, "status": f"skipped: env {spec['env']} absent under {ENVS}"}
    if spec.get("requires"):
        ok = subprocess.run([str(py), "-c", f"import {spec['requires']}"], capture_output=True).returncode == 0
        if not ok:
            return {**base, "status": f"skipped: {spec['requires']} not installed in env {spec['env']}"}
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(_PRELUDE + spec["code"])
        script = f.name
    env = dict(os.environ, OMP_NUM_THREADS="2", PYTHONWARNINGS="ignore")
    if spec["env"] is None:
        env["PYTHONPATH"] = str(HERE.parent / "src")
    t0 = time.perf_counter()
    p = subprocess.Popen([str(py), script, str(data), str(k)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, start_new_session=True, env=env)
    status, peak = "ok", 0
    try:
        while p.poll() is None:
            rss = _rss(p.pid)
            peak = max(peak, rss)
            if rss > mem_bytes:
                os.killpg(p.pid, signal.SIGKILL)
                status = f"killed: RSS > {mem_bytes / 2**30:.0f} GB"
                break
            if time.perf_counter() - t0 > timeout:
                os.killpg(p.pid, signal.SIGKILL)
                status = f"killed: > {timeout:.0f} s"
                break
            time.sleep(0.25)
        out, err = p.communicate()
    finally:
        os.unlink(script)
    wall = time.perf_counter() - t0
    if status != "ok":
        return {**base, "status": status, "wall_s": wall, "peak_rss_bytes": peak}
    line = next((ln for ln in out.splitlines() if ln.startswith("JSON")), None)
    if p.returncode != 0 or line is None:
        tail = (err.strip().splitlines() or ["failed"])[-1][:200]
        return {**base, "status": f"error: {tail}", "wall_s": wall}
    doc = json.loads(line[4:])
    return {**base, **doc, "status": "ok", "wall_s": wall, "peak_rss_bytes": max(doc.get("peak_rss_bytes") or 0, peak)}


def check_values(row: dict, data: Path, k: int) -> None:
    """Max |peer − receval| over the six means, receval under the peer's dialect."""
    if row.get("status") != "ok":
        return
    dialect = PEERS[row["peer"]]["dialect"]
    from receval import evaluate
    from receval.dialects import dialect_names

    if dialect not in dialect_names():
        row["check"] = f"no dialect '{dialect}'"
        return
    import polars as pl

    recs = _cached_frame(data / "recs.parquet", ("user_id", "item_id", "score"))
    truth = _cached_frame(data / "truth.parquet", ("user_id", "item_id"))
    specs = [f"{m}@{k}" for m in METRICS]
    try:  # every peer here ranks by score (or by ranks computed from it): no ties in these data
        res = evaluate(recs, truth, specs, dialect=dialect, order="score")
    except Exception as exc:  # a dialect that refuses the data says so
        row["check"] = f"receval[{dialect}] raised {type(exc).__name__}: {exc}"
        return
    diffs = {m: abs(row["values"][m] - res[f"{m}@{k}"]) for m in METRICS if m in row.get("values", {})}
    row["receval_values"] = {m: res[f"{m}@{k}"] for m in METRICS}
    row["max_abs_diff"] = max(diffs.values()) if diffs else None
    row["diffs"] = diffs
    row["check"] = f"{dialect}: max |Δ| = {row['max_abs_diff']:.1e}"
    del pl


_FRAMES: dict = {}


def _cached_frame(path: Path, cols: tuple):
    import polars as pl

    key = (str(path), cols)
    if key not in _FRAMES:
        _FRAMES.clear()
        _FRAMES[key] = pl.read_parquet(path, columns=list(cols))
    return _FRAMES[key]


def _shape(r: dict) -> str:
    return r.get("shape", "sorted-int")


def _total(r: dict) -> float | None:
    """End-to-end seconds: building the peer's own input plus the metric call."""
    if r is None or r.get("status") != "ok":
        return None
    return float(r.get("compute_s") or 0.0) + float(r.get("prepare_s") or 0.0)


def table(rows: list[dict], shape: str) -> str:
    rows = [r for r in rows if _shape(r) == shape]
    sizes = list(dict.fromkeys(r["size"] for r in rows))
    peers = list(dict.fromkeys(r["peer"] for r in rows))
    by = {(r["size"], r["peer"]): r for r in rows}
    head = "| peer | " + " | ".join(s.replace("x", " × ") for s in sizes) + " |"
    lines = [head, "|---" * (len(sizes) + 1) + "|"]
    for p in peers:
        cells = []
        for s in sizes:
            r = by.get((s, p))
            if r is None:
                cells.append("–")
            elif r["status"] != "ok":
                cells.append(r["status"])
            else:
                c = f"{r['compute_s']:.2f} s"
                if r.get("prepare_s"):
                    c += f" (+{r['prepare_s']:.1f})"
                c += f", {r['peak_rss_bytes'] / 2**30:.1f} GB"
                if r.get("max_abs_diff") is not None:
                    c += f", Δ {r['max_abs_diff']:.0e}"
                elif r.get("check"):
                    c += f", {r['check']}"
                cells.append(c)
        lines.append(f"| {p} | " + " | ".join(cells) + " |")
    cells = []
    for s in sizes:
        mine = _total(by.get((s, "receval")))
        others = {p: _total(by.get((s, p))) for p in peers if p != "receval"}
        others = {p: t for p, t in others.items() if t is not None}
        if mine and others:
            p = min(others, key=others.__getitem__)
            cells.append(f"{others[p] / mine:.1f}× ({p}, {others[p]:.1f} s end to end)")
        else:
            cells.append("–")
    lines.append("| **fastest peer / receval** | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_results_md(rows: list[dict]) -> None:
    path = HERE / "RESULTS.md"
    text = path.read_text() if path.exists() else "# Benchmark results\n"
    start, end = "<!-- peers:start -->", "<!-- peers:end -->"
    versions = sorted({f"{r['library']} {r['version']}" for r in rows if r.get("status") == "ok"})
    parts = []
    for shape, title in (("realistic", "What users bring: string ids, rows shuffled, scores only"),
                         ("sorted-int", "The convenient shape: integer ids, rows grouped by user and ranked")):
        if any(_shape(r) == shape for r in rows):
            parts.append(f"### {title}\n\n{table(rows, shape)}")
    section = (
        f"{start}\n## Peers (`benchmarks/bench_peers.py`)\n\n"
        "Six metrics (precision, recall, hitrate, MRR, MAP, NDCG) at k = the list length, the same "
        "Parquet data, each peer in its own env from its native input (ranks computed from the scores "
        "where a peer reads ranks). Cell: metric time (+ time to build the peer's own input from the "
        "frames), peak RSS of the peer process, and Δ = max |peer − receval| over the six means with "
        "receval under the peer's dialect. receval's time is `evaluate()` end-to-end from a polars "
        "frame. The last row divides the fastest peer's end-to-end time (input + metrics) by receval's. "
        "Killed runs hit the timeout or the memory guard.\n\n"
        + "\n\n".join(parts) + f"\n\nVersions: {', '.join(versions)}.\n{end}"
    )
    if start in text and end in text:
        text = text[: text.index(start)] + section + text[text.index(end) + len(end):]
    else:
        text = text.rstrip() + "\n\n" + section + "\n"
    path.write_text(text)


def main(argv=None) -> None:
    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(HERE.parent / "src"))
    from bench_core import SHAPES, SIZES, data_dir

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100kx10,100kx100")
    ap.add_argument("--peers", default=",".join(PEERS))
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--mem-gb", type=float, default=12)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--shapes", default=",".join(SHAPES), help="realistic,sorted-int")
    ap.add_argument("--no-check", action="store_true")
    a = ap.parse_args(argv)
    sizes = list(SIZES) if a.sizes == "all" else a.sizes.split(",")
    OUT.mkdir(parents=True, exist_ok=True)
    old = json.loads((OUT / "peers.json").read_text()) if (OUT / "peers.json").exists() else {"runs": []}
    merged = {(r["size"], _shape(r), r["peer"]): r for r in old["runs"]}
    rows: list[dict] = list(merged.values())
    for shape in a.shapes.split(","):
        for size in sizes:
            d = data_dir(size, a.seed, shape)
            k = SIZES[size][1]
            for peer in a.peers.split(","):
                row = run_peer(peer, d, k, a.timeout, int(a.mem_gb * 2**30))
                if not a.no_check:
                    check_values(row, d, k)
                merged[(row["size"], _shape(row), row["peer"])] = row
                print(json.dumps({x: y for x, y in row.items() if x not in ("values", "receval_values", "diffs")}), flush=True)
                rows = sorted(merged.values(), key=lambda r: (SHAPES.index(_shape(r)), list(SIZES).index(r["size"]), list(PEERS).index(r["peer"])))
                (OUT / "peers.json").write_text(json.dumps({"runs": rows}, indent=1))
                write_results_md(rows)
    for shape in a.shapes.split(","):
        print(table(rows, shape))


if __name__ == "__main__":
    main()
