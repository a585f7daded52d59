"""Benchmark: receval.evaluate end-to-end on the core top-k metrics.

Seeded synthetic data, generated vectorised (see :func:`make_data`): U users × top-k lists
over 50,000 items with Zipf-like popularity, about 10 relevant truth items per user, no
score ties; recommendations grouped by user and sorted by score (as a recommender writes
them). One call computes precision, recall, hitrate, mrr, map and ndcg at k = 10, 20, 100
(18 values). Timed end-to-end from a polars frame and from a pandas frame (median of
``--repeat`` runs, after one warm-up); the floor is one ``np.sort`` of the (user, item)
int64 keys. Each (size, frame) configuration runs in its own subprocess, which reads the
data from Parquet; its peak memory is the process's VmHWM, reset just before the runs
(``/proc/self/clear_refs``) so it measures the evaluation and not data generation.

    python benchmarks/bench_core.py                 # quick: 100k × 10 and 100k × 100, both shapes
    python benchmarks/bench_core.py --sizes all     # + 1M × 10 and 1M × 100
    python benchmarks/bench_core.py --sizes 1Mx100 --repeat 3
    python benchmarks/bench_core.py --profile 1Mx100   # cProfile of one evaluate call
    python benchmarks/bench_core.py --against 27a0521 --sizes 100kx100 --repeat 5
        # the work tree beside another git revision in the same run (see ``against``)

Writes ``benchmarks/out/core.json`` and the core section of ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
DATA = OUT / "data"
SIZES = {"3kx10": (3_000, 10), "100kx10": (100_000, 10), "100kx100": (100_000, 100), "1Mx10": (1_000_000, 10), "1Mx100": (1_000_000, 100)}
N_ITEMS = 50_000
METRICS = [f"{m}@{k}" for m in ("precision", "recall", "hitrate", "mrr", "map", "ndcg") for k in (10, 20, 100)]


# ------------------------------------------------------------------------------------------
# data


def make_data(n_users: int, k: int, seed: int = 0):
    """Seeded (recs, truth) as dicts of numpy columns.

    Item popularity is Zipf-like: item ids are a random permutation of popularity ranks,
    and each user's list starts at a popularity rank drawn from a power law. A user's list
    is the ranks ``start + j·stride`` (stride 1..3, distinct items); their truth is 5..15
    items (mean 10) at ranks ``start + offset + j·stride_t`` (stride 1..7), so hits fall at
    scattered positions and about a third of the lists hold none. Scores strictly decrease
    along a list (no ties); ratings are 1..5.
    """
    rng = np.random.default_rng(seed)
    perm = rng.permutation(N_ITEMS).astype(np.int64)
    users = np.arange(n_users, dtype=np.int64) * 3 + 1000  # sparse, sorted ids
    # power-law start rank in [0, N_ITEMS)
    start = (np.floor(N_ITEMS * rng.random(n_users) ** 3)).astype(np.int64)
    stride = rng.integers(1, 4, n_users)
    j = np.arange(k, dtype=np.int64)
    ranks = (start[:, None] + stride[:, None] * j[None, :]) % N_ITEMS
    rec_item = perm[ranks].ravel()
    del ranks
    rec_user = np.repeat(users, k)
    base = rng.random(n_users) * 10.0
    score = (base[:, None] + (k - j)[None, :].astype(np.float64)).ravel()
    # truth
    n_t = rng.integers(5, 16, n_users)
    t_user_code = np.repeat(np.arange(n_users), n_t)
    within = np.arange(len(t_user_code)) - np.repeat(np.cumsum(n_t) - n_t, n_t)
    offset = rng.integers(-k, 2 * k, n_users)
    stride_t = rng.integers(1, 8, n_users)
    t_rank = (start[t_user_code] + offset[t_user_code] + stride_t[t_user_code] * within) % N_ITEMS
    truth_item = perm[t_rank]
    truth_user = users[t_user_code]
    rating = rng.integers(1, 6, len(truth_user)).astype(np.float64)
    recs = {"user_id": rec_user, "item_id": rec_item, "score": score}
    truth = {"user_id": truth_user, "item_id": truth_item, "rating": rating}
    return recs, truth


#: the input shapes: what users bring (string ids, rows in any order, scores only) and the
#: convenient one (integer ids, rows grouped by user and ranked)
SHAPES = ("realistic", "sorted-int")


def realistic(recs, truth, seed: int):
    """The same data as users bring it: string ids (``u0001000``, ``i5251``), the rows of both
    sides shuffled with ``seed``, scores only (no rank column)."""
    import polars as pl

    def strings(df: pl.DataFrame) -> pl.DataFrame:
        return df.with_columns(
            ("u" + pl.col("user_id").cast(pl.String).str.zfill(7)).alias("user_id"),
            ("i" + pl.col("item_id").cast(pl.String)).alias("item_id"),
        )

    r = strings(pl.DataFrame(recs)).sample(fraction=1.0, shuffle=True, seed=seed)
    t = strings(pl.DataFrame(truth)).sample(fraction=1.0, shuffle=True, seed=seed + 1)
    return r, t


def data_dir(size: str, seed: int = 0, shape: str = "sorted-int") -> Path:
    """Write (once) and return the Parquet directory of one size and shape."""
    import polars as pl

    d = DATA / (f"{size}-s{seed}" if shape == "sorted-int" else f"{size}-s{seed}-{shape}")
    if (d / "truth.parquet").exists():
        return d
    d.mkdir(parents=True, exist_ok=True)
    U, k = SIZES[size]
    recs, truth = make_data(U, k, seed)
    if shape == "realistic":
        r, t = realistic(recs, truth, seed)
        r.write_parquet(d / "recs.parquet", statistics=False)
        t.write_parquet(d / "truth.parquet", statistics=False)
        (d / "params.json").write_text(json.dumps({"k": [10, 20, 100], "threshold": None, "shape": shape}))
        return d
    # int64 rank (1-based) for peers that want one
    pl.DataFrame(recs).with_columns(
        pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over("user_id").alias("rank")
    ).write_parquet(d / "recs.parquet", statistics=False)
    pl.DataFrame(truth).write_parquet(d / "truth.parquet", statistics=False)
    (d / "params.json").write_text(json.dumps({"k": [10, 20, 100], "threshold": None}))
    return d


# ------------------------------------------------------------------------------------------
# one configuration, in a child process


def _vm(key: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    return 0


def _reset_peak() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def frame_bytes(df) -> int:
    """The memory a frame's columns hold: for polars, the bytes of its Arrow buffers as polars
    keeps them (a String column is 16-byte views plus the data buffers of the ids longer than 12
    bytes; a buffer shared by several chunks counts once); for pandas, ``memory_usage(deep=True)``.

    polars' ``estimated_size`` is not this measure: it counts a String column's string bytes
    and not its views (8 bytes a row for 8-byte ids that occupy 16), so on string ids it reports
    about half the frames' memory; it is recorded beside (``input_estimated_bytes``)."""
    import polars as pl

    if not isinstance(df, pl.DataFrame):
        return int(df.memory_usage(deep=True).sum())
    seen: dict[int, int] = {}
    for col in df.to_arrow(compat_level=pl.CompatLevel.newest()).columns:
        for chunk in col.chunks:
            for buf in chunk.buffers():
                if buf is not None:
                    seen[buf.address] = max(seen.get(buf.address, 0), buf.size)
    return sum(seen.values())


def child(size: str, frame: str, repeat: int, seed: int, shape: str = "sorted-int", small_warmup: bool = False,
          fresh: bool = False) -> dict:
    """One configuration in this process. ``small_warmup``: the warm-up run evaluates the first
    users' rows only (imports and first calls, not the full-size run), so that a child can time
    a single full-size run (``--against`` runs one child per timed repetition). ``fresh``: no
    warm-up at all, the first ``evaluate`` of the process is timed (``import receval`` before it,
    every module it loads lazily inside it): what a small input costs in a new process."""
    import polars as pl

    import receval

    d = data_dir(size, seed, shape)
    recs = pl.read_parquet(d / "recs.parquet", columns=["user_id", "item_id", "score"])
    truth = pl.read_parquet(d / "truth.parquet")
    input_bytes = frame_bytes(recs) + frame_bytes(truth)
    out: dict = {"size": size, "frame": frame, "shape": shape, "rec_rows": recs.height, "truth_rows": truth.height,
                 "input_bytes": input_bytes, "input_estimated_bytes": int(recs.estimated_size() + truth.estimated_size())}
    if frame in ("lazy", "spark"):
        del recs, truth
        return _child_backend(size, frame, repeat, d, out)
    if frame == "pandas":
        recs, truth = recs.to_pandas(), truth.to_pandas()
        input_bytes = frame_bytes(recs) + frame_bytes(truth)
        out["input_bytes"] = input_bytes
    if frame == "floor":
        return _child_floor(recs, truth, repeat, out)
    if frame == "sort":
        if shape != "sorted-int":
            raise SystemExit("the np.sort floor is measured on the sorted-int shape")
        key = (recs["user_id"].to_numpy() * N_ITEMS + recs["item_id"].to_numpy()).astype(np.int64)
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            np.sort(key)
            times.append(time.perf_counter() - t0)
        out["times"] = times
        out["median_s"] = float(np.median(times))
        return out
    base_rss = _vm("VmRSS")
    times = []
    res = None
    if small_warmup:
        n = min(recs.height, 20_000)
        receval.evaluate(recs.head(n), truth.filter(pl.col("user_id").is_in(recs["user_id"].head(n).unique().implode())), METRICS)
    peak_ok = _reset_peak()
    warm = small_warmup or fresh
    for i in range(repeat + (0 if warm else 1)):  # first run is a warm-up (imports, page faults)
        t0 = time.perf_counter()
        res = receval.evaluate(recs, truth, METRICS)
        dt = time.perf_counter() - t0
        if i or warm:
            times.append(dt)
    out["times"] = times
    out["median_s"] = float(np.median(times))
    out["peak_rss_bytes"] = _vm("VmHWM") if peak_ok else None
    out["base_rss_bytes"] = base_rss
    out["peak_over_input"] = (out["peak_rss_bytes"] / input_bytes) if peak_ok else None
    # what the evaluation adds to the process holding the frames (the interpreter and its
    # libraries are in both the peak and the RSS after the read)
    out["added_over_input"] = ((out["peak_rss_bytes"] - base_rss) / input_bytes) if peak_ok else None
    out["values"] = res.values if res is not None else {}
    return out


def _child_floor(recs, truth, repeat: int, out: dict) -> dict:
    """The native building blocks on the same rows: polars' left join of the recommendations on
    (user, item) against the truth; hashing both id columns of the recommendations
    (``Series.hash``); one ``np.sort`` of the rows' float scores. Each timed ``repeat`` times (median)."""
    import polars as pl

    score = recs["score"].to_numpy()

    def join():
        recs.join(truth, on=["user_id", "item_id"], how="left")

    def hashing():
        recs["user_id"].hash(seed=1), recs["item_id"].hash(seed=1)

    def sort():
        np.sort(score)

    for name, f in (("join", join), ("hash", hashing), ("sort", sort)):
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            f()
            times.append(time.perf_counter() - t0)
        out[f"{name}_s"] = float(np.median(times))
    out["median_s"] = out["join_s"]
    out["polars"] = pl.__version__
    return out


def _child_backend(size: str, frame: str, repeat: int, d: Path, out: dict) -> dict:
    """The Polars backend on LazyFrames (scan_parquet) or the Spark backend on the Parquet paths."""
    import polars as pl

    import receval

    out["frame"] = frame
    if frame == "lazy":
        from receval.backends.polars import evaluate_polars

        recs = pl.scan_parquet(d / "recs.parquet").select("user_id", "item_id", "score")
        truth = pl.scan_parquet(d / "truth.parquet")
        run = lambda: evaluate_polars(recs, truth, METRICS)  # noqa: E731
    else:
        from receval.backends.spark import local_session

        local_session(partitions=8)
        run = lambda: receval.evaluate(str(d / "recs.parquet"), str(d / "truth.parquet"), METRICS, engine="spark")  # noqa: E731
    peak_ok = _reset_peak()
    times, res = [], None
    for i in range(repeat + 1):
        t0 = time.perf_counter()
        res = run()
        if i:
            times.append(time.perf_counter() - t0)
    out["times"] = times
    out["median_s"] = float(np.median(times))
    out["peak_rss_bytes"] = _vm("VmHWM") if peak_ok else None
    if frame == "spark":  # the work happens in the (still running) JVM and its Python workers: not measured
        out["peak_rss_bytes"] = None
    out["peak_over_input"] = out["peak_rss_bytes"] / out["input_bytes"] if out["peak_rss_bytes"] else None
    out["values"] = res.values if res is not None else {}
    return out


def run_child(size: str, frame: str, repeat: int, seed: int, shape: str = "sorted-int", timeout: float = 1800,
              src: Path | None = None, small_warmup: bool = False, fresh: bool = False) -> dict:
    """One configuration in a fresh process; ``src``: the ``src`` directory of the receval to time
    (default: this work tree's)."""
    cmd = [sys.executable, __file__, "--child", size, frame, "--repeat", str(repeat), "--seed", str(seed), "--shape", shape,
           "--src", str(src or HERE.parent / "src")]
    if small_warmup:
        cmd.append("--small-warmup")
    if fresh:
        cmd.append("--fresh")
    env = dict(os.environ, PYTHONPATH=str(src or HERE.parent / "src"))
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    if p.returncode != 0:
        return {"size": size, "frame": frame, "shape": shape, "error": p.stderr.strip().splitlines()[-1:] or ["failed"]}
    return json.loads(p.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------------------------------


def machine() -> dict:
    import polars as pl

    import receval

    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    try:
        import pandas as pd

        pdv = pd.__version__
    except ImportError:  # pragma: no cover
        pdv = None
    return {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "polars": pl.__version__,
        "pandas": pdv,
        "receval": receval.__version__,
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gb": round(mem / 2**30, 1),
        "platform": platform.platform(),
    }


def _gb(x):
    return "–" if x is None else f"{x / 2**30:.2f} GB"


def _f(r: dict) -> str:
    if "error" in r:
        return str(r["error"][0])[:60]
    return f"{r['median_s']:.3f} s" if "median_s" in r else "–"


def _shape(r: dict) -> str:
    return r.get("shape", "sorted-int")


def headline(rows: list[dict]) -> str:
    """Realistic shape first, the sorted-int shape beside it, and their ratio."""
    by: dict = {}
    for r in rows:
        by.setdefault(r["size"], {})[(_shape(r), r["frame"])] = r
    lines = [
        "| users × k | rows | realistic (polars) | realistic (pandas) | sorted-int (polars) | realistic / sorted-int | "
        "peak / input (realistic, polars) | values equal across shapes |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for size, d in by.items():
        rp, rd, sp = d.get(("realistic", "polars"), {}), d.get(("realistic", "pandas"), {}), d.get(("sorted-int", "polars"), {})
        if not rp and not rd:
            continue
        ratio = f"{rp['median_s'] / sp['median_s']:.2f}×" if "median_s" in rp and "median_s" in sp else "–"
        same = "–"
        if rp.get("values") and sp.get("values"):
            diff = max(abs(rp["values"][m] - sp["values"][m]) for m in sp["values"])
            same = "yes (bit for bit)" if diff == 0 else f"max |Δ| {diff:.1e}"
        peak = rp.get("peak_over_input")
        lines.append(
            f"| {size.replace('x', ' × ')} | {rp.get('rec_rows', sp.get('rec_rows', 0)):,} | {_f(rp)} | {_f(rd)} | {_f(sp)} | {ratio} | "
            f"{'–' if peak is None else format(peak, '.2f') + '×'} | {same} |"
        )
    return "\n".join(lines)


def table(rows: list[dict]) -> str:
    """The sorted-int shape in detail (floor, frames, memory, the Polars and Spark backends)."""
    by: dict = {}
    for r in rows:
        if _shape(r) == "sorted-int":
            by.setdefault(r["size"], {})[r["frame"]] = r
    lines = [
        "| users × k | rows | np.sort floor | receval (polars) | receval (pandas) | input frames (polars) | peak RSS (polars) | peak / input | peak RSS (pandas) | Polars backend (lazy, batches) | Spark backend (local[2]) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for size, d in by.items():
        s, pol, pan = d.get("sort", {}), d.get("polars", {}), d.get("pandas", {})
        lz, sp = d.get("lazy", {}), d.get("spark", {})
        lines.append(
            f"| {size.replace('x', ' × ')} | {pol.get('rec_rows', s.get('rec_rows', 0)):,} | {_f(s)} | {_f(pol)} | {_f(pan)} | "
            f"{_gb(pol.get('input_bytes'))} | {_gb(pol.get('peak_rss_bytes'))} | "
            f"{pol.get('peak_over_input') and format(pol['peak_over_input'], '.2f')}× | {_gb(pan.get('peak_rss_bytes'))} | "
            f"{_f(lz)}{', ' + _gb(lz.get('peak_rss_bytes')) if lz.get('peak_rss_bytes') else ''} | {_f(sp)} |"
        )
    return "\n".join(lines)


def write_section(name: str, body: str, before: str | None = None) -> None:
    """Replace the ``<!-- name:start -->`` ... ``<!-- name:end -->`` section of RESULTS.md with
    ``body``; a missing section goes before the section ``before`` (when there), else at the end."""
    path = HERE / "RESULTS.md"
    doc = path.read_text() if path.exists() else "# Benchmark results\n"
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    block = f"{start}\n{body.rstrip()}\n{end}"
    anchor = f"<!-- {before}:start -->" if before else None
    if start in doc and end in doc:
        doc = doc[:doc.index(start)] + block + doc[doc.index(end) + len(end):]
    elif anchor and anchor in doc:
        doc = doc.replace(anchor, block + "\n\n" + anchor, 1)
    else:
        doc = doc.rstrip() + "\n\n" + block + "\n"
    path.write_text(doc)


def write_results_md(rows: list[dict], mach: dict) -> None:
    path = HERE / "RESULTS.md"
    text = path.read_text() if path.exists() else "# Benchmark results\n"
    start, end = "<!-- core:start -->", "<!-- core:end -->"
    section = (
        f"{start}\n## Core metrics end-to-end (`benchmarks/bench_core.py`)\n\n"
        f"18 values in one `receval.evaluate` call (precision, recall, hitrate, mrr, map, ndcg at 10, 20, 100), "
        f"from a frame to the Results; median of the timed runs after one warm-up; peak RSS is the "
        f"subprocess's high-water mark during the runs (input frames included); the input is the bytes the "
        f"frames' columns hold (`frame_bytes`: Arrow buffers, a String column's 16-byte views included, "
        f"which polars' `estimated_size` leaves out).\n\n"
        f"**What users bring** (the headline): string ids (`u0001000`, `i5251`), the rows of both files "
        f"shuffled with a seed, scores only (no rank column), read from Parquet into a polars or pandas "
        f"frame. **The convenient shape** beside it: the same data with integer ids, rows grouped by user "
        f"and ranked. The values of the two shapes are compared.\n\n{headline(rows)}\n\n"
        f"The sorted-int shape in detail (floor: one `np.sort` of the (user, item) int64 keys):\n\n{table(rows)}\n\n"
        f"Machine: {mach['cpu']}, {mach['cores']} cores, {mach['memory_gb']} GB (shared and noisy: "
        f"ratios under 1.5× are ties). Python {mach['python']}, numpy {mach['numpy']}, polars {mach['polars']}, "
        f"pandas {mach['pandas']}, receval {mach['receval']}.\n{end}"
    )
    if start in text and end in text:
        text = text[: text.index(start)] + section + text[text.index(end) + len(end):]
    else:
        text = text.rstrip() + "\n\n" + section + "\n"
    path.write_text(text)


def profile(size: str, seed: int) -> None:
    import cProfile
    import pstats

    import polars as pl

    import receval

    d = data_dir(size, seed)
    recs = pl.read_parquet(d / "recs.parquet", columns=["user_id", "item_id", "score"])
    truth = pl.read_parquet(d / "truth.parquet")
    receval.evaluate(recs, truth, METRICS)
    pr = cProfile.Profile()
    pr.enable()
    receval.evaluate(recs, truth, METRICS)
    pr.disable()
    pstats.Stats(pr).sort_stats("tottime").print_stats(25)


# ------------------------------------------------------------------------------------------
# the work tree beside another revision


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(HERE.parent), *args], capture_output=True, text=True, check=True).stdout.strip()


def against(rev: str, sizes: list[str], shapes: list[str], repeat: int, seed: int, floor: bool = True,
            rev_shapes: list[str] | None = None, fresh: bool = False) -> dict:
    """Time this work tree and revision ``rev`` in the same run, on the same data.

    ``rev`` is checked out with ``git worktree add --detach`` into a temporary directory (removed
    afterwards); every timed repetition is a fresh subprocess (one warm-up on a small slice, then
    one full-size ``evaluate``) whose ``PYTHONPATH`` is that revision's ``src``, and the
    repetitions of the two alternate (the first side swaps each round; ``fresh``: no warm-up, the
    first ``evaluate`` of the process timed) so that the load of a
    shared machine falls on both alike. The same benchmark code (this file) times both. Per
    (size, shape): the median time, the peak RSS over the input frames (the largest of the
    repetitions), and whether the 18 values are equal bit for bit. ``floor``: the native building
    blocks on the same rows once per round (:func:`_child_floor`). ``rev_shapes``: the shapes
    ``rev`` is timed on (default: all; e.g. leave out a shape whose peak memory at ``rev`` would
    not fit beside other work)."""
    import shutil
    import tempfile

    load_before = os.getloadavg()
    sha = _git("rev-parse", "--short", rev)
    head = _git("rev-parse", "--short", "HEAD")
    dirty = bool(_git("status", "--porcelain", "--untracked-files=no"))
    tmp = Path(tempfile.mkdtemp(prefix=f"receval-{sha}-"))
    _git("worktree", "add", "--detach", str(tmp / "tree"), sha)
    sides = {"current": HERE.parent / "src", sha: tmp / "tree" / "src"}
    for src in sides.values():  # compiled kernels (numba's cache beside the sources) compiled before the timing
        _warm_kernels(src)
    runs: list[dict] = []
    try:
        for size in sizes:
            for shape in shapes:
                data_dir(size, seed, shape)
                got: dict[str, list[dict]] = {name: [] for name in [*sides, "floor"]}
                for i in range(repeat):
                    names = list(sides) if i % 2 == 0 else list(sides)[::-1]
                    if rev_shapes is not None and shape not in rev_shapes:
                        names = ["current"]
                    for name in names:
                        r = run_child(size, "polars", 1, seed, shape, src=sides[name], small_warmup=not fresh, fresh=fresh)
                        got[name].append(r)
                        print(f"  {size} {shape} {name}: {_f(r)}, peak {_gb(r.get('peak_rss_bytes'))}", flush=True)
                    if floor:
                        got["floor"].append(run_child(size, "floor", 1, seed, shape))
                for name, rs in got.items():
                    ok = [r for r in rs if "median_s" in r]
                    row: dict = {"size": size, "shape": shape, "side": name, "rev": head if name == "current" else sha,
                                 "runs": len(rs), "errors": [r["error"] for r in rs if "error" in r]}
                    if ok:
                        row.update(rec_rows=ok[0]["rec_rows"], input_bytes=ok[0]["input_bytes"],
                                   times=[r["median_s"] for r in ok], median_s=float(np.median([r["median_s"] for r in ok])))
                        if name == "floor":
                            for part in ("join", "hash", "sort"):
                                row[f"{part}_s"] = float(np.median([r[f"{part}_s"] for r in ok]))
                        else:
                            peaks = [r["peak_rss_bytes"] for r in ok if r.get("peak_rss_bytes")]
                            row["peak_rss_bytes"] = max(peaks) if peaks else None
                            row["peak_over_input"] = row["peak_rss_bytes"] / row["input_bytes"] if peaks else None
                            added = [r["added_over_input"] for r in ok if r.get("added_over_input") is not None]
                            row["added_over_input"] = max(added) if added else None
                            row["values"] = ok[-1].get("values")
                    runs.append(row)
    finally:
        subprocess.run(["git", "-C", str(HERE.parent), "worktree", "remove", "--force", str(tmp / "tree")], capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)
    return {"against": sha, "current": head + ("+dirty" if dirty else ""), "repeat": repeat, "fresh": fresh, "load_before": load_before,
            "load_after": os.getloadavg(), "machine": machine(), "metrics": METRICS, "runs": runs}


def _warm_kernels(src: Path) -> None:
    """One tiny evaluation with the compiled kernels forced on (``RECEVAL_JIT_MIN_ROWS=1``), so
    that a revision's kernels are in numba's cache before it is timed: every side pays the
    cached load, none the once-per-install compile (a revision checked out afresh has no cache)."""
    code = ("import warnings, polars as pl, receval; warnings.simplefilter('ignore');"
            "r = pl.DataFrame({'user_id': ['a', 'a', 'b'], 'item_id': ['x', 'y', 'x'], 'score': [0.3, 0.2, 0.1]});"
            "t = pl.DataFrame({'user_id': ['a', 'b'], 'item_id': ['x', 'x']});"
            f"receval.evaluate(r, t, {METRICS!r})")
    env = dict(os.environ, PYTHONPATH=str(src), RECEVAL_JIT_MIN_ROWS="1")
    subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, timeout=600)
    # both sides' bytecode written before the timing, as an installed package has it: with
    # PYTHONDONTWRITEBYTECODE set, a revision checked out afresh would compile every module from
    # source in each timed process (a fresh process's first call then measures that)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(src)], capture_output=True, timeout=600)


def against_table(res: dict) -> str:
    """A markdown table: per (size, shape), the revision and the work tree side by side, the
    native floor beside them."""
    by: dict = {}
    for r in res["runs"]:
        by.setdefault((r["size"], r["shape"]), {})[r["side"]] = r
    old, cur = res["against"], "current"
    lines = [
        f"| users × k | shape | {old} | current ({res['current']}) | current / {old} | peak / input {old} | peak / input current | "
        "values equal | polars left join | hash both ids | np.sort scores |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (size, shape), d in by.items():
        a, b, fl = d.get(old, {}), d.get(cur, {}), d.get("floor", {})
        ratio = f"{b['median_s'] / a['median_s']:.2f}×" if "median_s" in a and "median_s" in b else "–"
        same = "–"
        if a.get("values") and b.get("values"):
            same = "yes (bit for bit)" if a["values"] == b["values"] else "NO"

        def po(r: dict) -> str:
            if r.get("peak_over_input") is None:
                return "–"
            added = "" if r.get("added_over_input") is None else f", +{r['added_over_input']:.2f}×"
            return f"{r['peak_over_input']:.2f}× ({_gb(r['peak_rss_bytes'])}{added})"

        def fs(key: str, fl: dict = fl) -> str:
            return f"{fl[key]:.2f} s" if key in fl else "–"

        lines.append(
            f"| {size.replace('x', ' × ')} | {shape} | {_f(a)} | {_f(b)} | {ratio} | {po(a)} | {po(b)} | {same} | "
            f"{fs('join_s')} | {fs('hash_s')} | {fs('sort_s')} |"
        )
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="quick", help="quick | all | comma list of 3kx10 (30k rows),100kx10,100kx100,1Mx10,1Mx100")
    ap.add_argument("--frames", default="polars,pandas", help="polars,pandas[,lazy][,spark]: lazy = Polars backend, spark = Spark backend")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--shapes", default=",".join(SHAPES), help="realistic,sorted-int (string ids shuffled / int ids sorted)")
    ap.add_argument("--shape", default="sorted-int", help=argparse.SUPPRESS)
    ap.add_argument("--child", nargs=2, metavar=("SIZE", "FRAME"))
    ap.add_argument("--profile", metavar="SIZE")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--against", metavar="REV", help="time git revision REV beside the work tree, in the same run")
    ap.add_argument("--against-shapes", help="with --against: the shapes REV is timed on (default: --shapes)")
    ap.add_argument("--no-floor", action="store_true", help="with --against: no native floor")
    ap.add_argument("--src", help=argparse.SUPPRESS)
    ap.add_argument("--small-warmup", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--fresh", action="store_true",
                    help="with --against: time each side's first evaluate in a fresh process (no warm-up)")
    a = ap.parse_args(argv)
    if a.child:
        print(json.dumps(child(a.child[0], a.child[1], a.repeat, a.seed, a.shape, a.small_warmup, a.fresh)))
        return
    if a.against:
        sizes = {"quick": ["100kx100"], "all": ["100kx100", "1Mx100"]}.get(a.sizes, a.sizes.split(","))
        res = against(a.against, sizes, a.shapes.split(","), a.repeat, a.seed, not a.no_floor,
                      a.against_shapes.split(",") if a.against_shapes else None, fresh=a.fresh)
        print(against_table(res))
        if not a.no_write:
            OUT.mkdir(parents=True, exist_ok=True)
            tag = "-fresh" if a.fresh else ""
            name = OUT / f"against-{res['against']}-{'-'.join(sizes)}-{'-'.join(a.shapes.split(','))}{tag}.json"
            name.write_text(json.dumps(res, indent=1, default=str))
            (name.with_suffix(".md")).write_text(against_table(res) + "\n")
            lb, la = (", ".join(f"{x:.1f}" for x in res[k]) for k in ("load_before", "load_after"))
            write_section(f"core-against-{'-'.join(sizes)}{tag}", (
                f"### The work tree beside {res['against']} (`bench_core.py --sizes {','.join(sizes)} --against "
                f"{res['against']} --repeat {a.repeat}{' --fresh' if a.fresh else ''}`)\n\n{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
                f"current {res['current']}; load average (1, 5, 15 min) {lb} before, {la} after (a shared machine: "
                f"the ratio is the measure, each repetition a fresh process, the two sides alternating). Peak / input: "
                f"the process's peak RSS over the bytes the input frames hold (`frame_bytes`); +x: what the "
                f"evaluation adds to the RSS the process had with the frames read.\n\n"
                f"{against_table(res)}\n"))
            print(f"wrote {name} and its section of RESULTS.md")
        return
    if a.profile:
        profile(a.profile, a.seed)
        return
    sizes = {"quick": ["100kx10", "100kx100"], "all": list(SIZES)}.get(a.sizes, a.sizes.split(","))
    frames = a.frames.split(",")
    rows = []
    shapes = a.shapes.split(",")
    for size in sizes:
        for shape in shapes:
            data_dir(size, a.seed, shape)
            own = ["sort", *frames] if shape == "sorted-int" else [f for f in frames if f in ("polars", "pandas")]
            for frame in own:
                r = run_child(size, frame, a.repeat, a.seed, shape)
                rows.append(r)
                print(json.dumps({k: v for k, v in r.items() if k != "values"}), flush=True)
        pv = [r.get("values") for r in rows if r["size"] == size and r.get("values")]
        if len(pv) > 1 and any(v != pv[0] for v in pv[1:]):
            print(f"WARNING: values differ between frames or shapes at {size}", flush=True)
    mach = machine()
    print(headline(rows))
    print(table(rows))
    if not a.no_write:
        OUT.mkdir(parents=True, exist_ok=True)
        old = json.loads((OUT / "core.json").read_text()) if (OUT / "core.json").exists() else {}
        merged = {(r["size"], _shape(r), r["frame"]): r for r in old.get("runs", [])}
        merged.update({(r["size"], _shape(r), r["frame"]): r for r in rows})
        allrows = sorted(merged.values(), key=lambda r: (list(SIZES).index(r["size"]) if r["size"] in SIZES else 99, SHAPES.index(_shape(r)), r["frame"]))
        (OUT / "core.json").write_text(json.dumps({"machine": mach, "metrics": METRICS, "runs": allrows}, indent=1, default=str))
        write_results_md(allrows, mach)


if __name__ == "__main__":
    _src = sys.argv[sys.argv.index("--src") + 1] if "--src" in sys.argv else str(HERE.parent / "src")
    sys.path.insert(0, _src)
    main()
