"""Benchmark: ``receval evaluate recs.parquet truth.parquet`` on 10M users x 100 (1B rows).

The realistic shape at production size: string ids (``u00001234``, ``i012345``), the rows of
both files shuffled over the whole file (row ``j`` holds list entry ``(A·j + B) mod N``, an
affine permutation, so every user's rows are spread over the file), scores only (no rank
column), about 10 truth items per user. The files are written in chunks (never all in memory)
under ``--dir`` (default: ``receval-bigdata`` in the system's temporary folder); the free disk is checked first.

The CLI runs as a subprocess; its time and peak RSS (VmHWM of the process, polled; and
``ru_maxrss`` of the child) are recorded. The reference is computed another way: the lists
regenerated in user order with integer ids (the contract: a value does not depend on the id
spelling or the row order), evaluated in memory over disjoint user chunks, the per-user
values concatenated in user order and averaged once. The CLI's values must equal it.

    python benchmarks/bench_billion.py --users 100000          # 10M rows: development
    python benchmarks/bench_billion.py --users 1000000         # 100M rows
    python benchmarks/bench_billion.py --users 10000000        # 1B rows (~15 GB of Parquet)

Writes ``benchmarks/out/billion.json`` (one entry per size).
"""

from __future__ import annotations

import argparse
import tempfile
import json
import os
import resource
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
K = 100
N_ITEMS = 100_000
TRUTH_PER_USER = 10
CHUNK = 5_000_000  # rows per written row group
A = 998_244_353  # prime: coprime with every 10^n · 2^m row count used here
METRICS = ["ndcg@100", "ndcg@10", "precision@10", "recall@100", "mrr@100", "map@100", "hitrate@10"]


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64 of uint64 values."""
    x = x.astype(np.uint64, copy=True)
    with np.errstate(over="ignore"):
        x += np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        x ^= x >> np.uint64(31)
    return x


def user_table(n_users: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Each user's list start (int32) and stride (1..3, int8)."""
    h = _mix(np.arange(n_users, dtype=np.uint64) * np.uint64(0x100000001B3) + np.uint64(seed))
    return (h % np.uint64(N_ITEMS)).astype(np.int32), (((h >> np.uint64(20)) % np.uint64(3)) + np.uint64(1)).astype(np.int8)


def lists(u: np.ndarray, pos: np.ndarray, table: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(item, score) of entry ``pos`` of user ``u``'s list (``table``: :func:`user_table`):
    distinct items, scores strictly decreasing along the list (no ties)."""
    item = (table[0][u] + pos * table[1][u]) % N_ITEMS
    noise = ((u * 0x9E3779B1 + pos * 0x85EBCA77) & 0xFFFFFF).astype(np.float64) / float(1 << 24)
    score = (K - pos).astype(np.float64) + 0.5 * noise
    return item, score


def truth_rows(u: np.ndarray, j: np.ndarray, seed: int = 0) -> np.ndarray:
    """The item of truth entry ``j`` of user ``u`` (distinct over j; about a third of the lists miss)."""
    h = _mix(u.astype(np.uint64) * np.uint64(0x100000001B3) + np.uint64(seed))
    start = (h % np.uint64(N_ITEMS)).astype(np.int64)
    h2 = _mix(h + np.uint64(7))
    off = (h2 % np.uint64(150)).astype(np.int64)
    stride = ((h2 >> np.uint64(20)) % np.uint64(7)).astype(np.int64) + 1
    return (start + off + j * stride) % N_ITEMS


_DIGITS = np.array([list(f"{i:04d}".encode()) for i in range(10_000)], dtype=np.uint8)


def _strings(prefix: str, x: np.ndarray, width: int):
    """``prefix`` + ``x`` zero-padded to ``width`` digits, as an Arrow string array (built from
    fixed-width bytes: no Python string per row)."""
    import pyarrow as pa

    n, p = len(x), len(prefix)
    w = p + width
    buf = np.empty((n, w), dtype=np.uint8)
    buf[:, :p] = np.frombuffer(prefix.encode(), dtype=np.uint8)
    x = x.astype(np.int64, copy=True)
    end = w
    while end > p:  # four digits at a time, from the right
        take = min(4, end - p)
        buf[:, end - take:end] = _DIGITS[x % 10_000][:, 4 - take:]
        x //= 10_000
        end -= take
    offsets = np.arange(0, (n + 1) * w, w, dtype=np.int32)
    return pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(buf)])


def write_data(d: Path, n_users: int, seed: int = 0) -> tuple[Path, Path]:
    """recs.parquet and truth.parquet under ``d`` (kept when already there)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    d.mkdir(parents=True, exist_ok=True)
    recs, truth = d / "recs.parquet", d / "truth.parquet"
    uw = max(8, len(str(n_users - 1)))
    utab = None
    for path, per, kind in ((truth, TRUTH_PER_USER, "truth"), (recs, K, "recs")):
        if path.exists():
            continue
        n = n_users * per
        b = (seed * 7919 + 12345) % n
        tmp = path.with_suffix(".part")
        writer = None
        t0 = time.perf_counter()
        for lo in range(0, n, CHUNK):
            j = np.arange(lo, min(n, lo + CHUNK), dtype=np.int64)
            p = (j * (A % n) + b) % n
            u, pos = p // per, p % per
            if kind == "recs":
                if utab is None:
                    utab = user_table(n_users, seed)
                item, score = lists(u, pos, utab)
                table = pa.table({"user_id": _strings("u", u, uw), "item_id": _strings("i", item, 6), "score": score})
            else:
                item = truth_rows(u, pos, seed)
                table = pa.table({"user_id": _strings("u", u, uw), "item_id": _strings("i", item, 6)})
            if writer is None:
                writer = pq.ParquetWriter(tmp, table.schema, compression="snappy")
            writer.write_table(table, row_group_size=CHUNK)
            print(f"\r{kind}: {min(n, lo + CHUNK):,} / {n:,} rows ({time.perf_counter() - t0:.0f} s)", end="", file=sys.stderr)
        assert writer is not None
        writer.close()
        tmp.rename(path)
        print(file=sys.stderr)
    return recs, truth


def reference(n_users: int, metrics: list[str], seed: int = 0, chunk_users: int = 250_000) -> dict[str, float]:
    """The values computed another way: lists regenerated in user order with integer ids,
    evaluated in memory over disjoint user chunks; per-user values concatenated in user
    order (the CLI's order too: zero-padded ids sort as their numbers) and averaged once."""
    import receval

    per_user: dict[str, list[np.ndarray]] = {m: [] for m in metrics}
    table = user_table(n_users, seed)
    for lo in range(0, n_users, chunk_users):
        u = np.arange(lo, min(n_users, lo + chunk_users), dtype=np.int64)
        ur, pos = np.repeat(u, K), np.tile(np.arange(K, dtype=np.int64), len(u))
        item, score = lists(ur, pos, table)
        ut, jt = np.repeat(u, TRUTH_PER_USER), np.tile(np.arange(TRUTH_PER_USER, dtype=np.int64), len(u))
        titem = truth_rows(ut, jt, seed)
        res = receval.evaluate({"user_id": ur, "item_id": item, "score": score}, {"user_id": ut, "item_id": titem}, metrics,
                               engine="memory")
        for e in res.entries:
            assert e.per_user is not None and not np.isnan(e.per_user).any()
            per_user[e.metric].append(e.per_user)
        print(f"\rreference: {min(n_users, lo + chunk_users):,} / {n_users:,} users", end="", file=sys.stderr)
    print(file=sys.stderr)
    return {m: float(np.concatenate(v).mean()) for m, v in per_user.items()}


def _status(pid: int, key: str) -> int:
    """A byte count of /proc/<pid>/status (``VmHWM:``, ``VmRSS:``); 0 once the process is gone."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith(key):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _hwm(pid: int) -> int:
    return _status(pid, "VmHWM:")


def run_cli(recs: Path, truth: Path, metrics: list[str]) -> dict:
    """``receval evaluate`` as a subprocess: wall time, peak RSS, the values (JSON)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(HERE.parent / "src") + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [sys.executable, "-m", "receval.cli", "evaluate", str(recs), str(truth), *[a for m in metrics for a in ("-m", m)],
           "--format", "json"]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    peak = [0]
    timeline: list[tuple[float, float]] = []  # (seconds, RSS GB) every ~10 s: where the peak falls

    def poll() -> None:
        last = -10.0
        while proc.poll() is None:
            peak[0] = max(peak[0], _hwm(proc.pid))
            now = time.perf_counter() - t0
            if now - last >= 10:
                timeline.append((round(now, 1), round(_status(proc.pid, "VmRSS:") / 1e9, 3)))
                last = now
            time.sleep(0.5)

    th = threading.Thread(target=poll, daemon=True)
    th.start()
    out, err = proc.communicate()
    wall = time.perf_counter() - t0
    th.join()
    ru = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    if proc.returncode:
        raise SystemExit(f"receval failed ({proc.returncode}): {err[-2000:]}")
    got = json.loads(out)
    values = {e["metric"]: e["value"] for e in got["metrics"]} if isinstance(got, dict) and "metrics" in got else got
    return {"seconds": wall, "peak_rss": max(peak[0], ru), "values": values, "stderr": err[-500:], "rss_timeline": timeline}


def _values(raw) -> dict[str, float]:
    if isinstance(raw, dict):
        if all(isinstance(v, (int, float)) for v in raw.values()):
            return {k: float(v) for k, v in raw.items()}
        for key in ("values", "entries", "metrics", "results"):
            if key in raw:
                return _values(raw[key])
    if isinstance(raw, list):
        return {e.get("metric") or e.get("spec"): float(e["value"]) for e in raw}
    raise SystemExit(f"cannot read the values from {str(raw)[:200]}")


def _commit() -> str:
    """The short commit of the checkout, with ``+dirty`` when its ``src`` has uncommitted changes."""
    try:
        head = subprocess.run(["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(HERE.parent), "status", "--porcelain", "--", "src"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return ""
    return head + ("+dirty" if dirty else "")


def render() -> None:
    """The billion section of RESULTS.md, from out/billion.json (one row per size run)."""
    path = OUT / "billion.json"
    if not path.exists():
        return
    runs = json.loads(path.read_text())
    lines = [
        "## Past one machine's memory (`benchmarks/bench_billion.py`)",
        "",
        "`receval evaluate recs.parquet truth.parquet` (7 metrics: " + ", ".join(f"`{m}`" for m in METRICS) + ") as a subprocess,"
        " no flag: the CLI sees a file larger than its budget and reads it in user batches (written once, in one streaming pass,"
        " to a temporary folder; then one batch at a time). String ids (`u00001234`, `i012345`), the rows of both files"
        " shuffled over the whole file, scores only; 100 recommendations and 10 truth rows per user. Peak = the process's"
        " RSS high-water mark. Reference: the same lists regenerated in user order with integer ids, evaluated in memory over"
        " disjoint chunks of 250,000 users, per-user values concatenated and averaged once.",
        "",
        "| users × k | recommendation rows | Parquet (recs + truth) | time | peak RSS | values vs reference | load avg (start, end) | commit |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for key in sorted(runs, key=int):
        r = runs[key]
        size = (r["files"]["recs"] + r["files"]["truth"]) / 1e9
        same = "bit for bit" if r.get("bit_identical") else (f"max |Δ| {r['max_abs_diff']:.1e}" if "max_abs_diff" in r else "not checked")
        load = ", ".join(f"{x:.1f}" for x in r["load"]) if "load" in r else r.get("load_note", "–")
        if r.get("reference_from"):
            same += f" (reference of {r['reference_from']})"
        lines.append(f"| {int(key):,} × {K} | {r['rows']:,} | {size:.2f} GB | {r['seconds']:.0f} s | {r['peak_rss'] / 1e9:.2f} GB "
                     f"| {same} | {load} | {r.get('commit', '–')} |")
    for key in sorted(runs, key=int):
        p = runs[key].get("previous")
        if p:
            load = ", ".join(f"{x:.1f}" for x in p["load"]) if "load" in p else p.get("load_note", "–")
            lines.append(f"\nThe run of {int(key):,} users before it: {p['seconds']:.0f} s, peak RSS {p['peak_rss'] / 1e9:.2f} GB "
                         f"(commit {p.get('commit', '–')}, {p.get('date', '–')}, load {load}).")
    from bench_core import write_section

    write_section("billion", "\n".join(lines), before="core")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--users", type=int, default=10_000_000)
    ap.add_argument("--dir", default=str(Path(tempfile.gettempdir()) / "receval-bigdata"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep", action="store_true", help="keep the data files afterwards")
    ap.add_argument("--no-reference", action="store_true")
    ap.add_argument("--reuse-reference", action="store_true",
                    help="compare with the reference an earlier run of this size and seed computed (out/billion.json)")
    ap.add_argument("--generate-only", action="store_true", help="write the data files and stop")
    ap.add_argument("--render", action="store_true", help="only write the billion section of RESULTS.md from out/billion.json")
    a = ap.parse_args(argv)
    if a.render:
        render()
        return
    d = Path(a.dir) / f"billion-{a.users}"
    need = a.users * (K + TRUTH_PER_USER) * 21  # ~21 bytes a row of snappy Parquet, with room for the batches
    free = shutil.disk_usage(Path(a.dir).parent if not Path(a.dir).exists() else a.dir).free
    if not (d / "recs.parquet").exists() and free < 1.5 * need:
        raise SystemExit(f"not enough free disk under {a.dir}: {free / 1e9:.1f} GB free, ~{1.5 * need / 1e9:.1f} GB needed")
    t0 = time.perf_counter()
    recs, truth = write_data(d, a.users, a.seed)
    gen = time.perf_counter() - t0
    sizes = {"recs": recs.stat().st_size, "truth": truth.stat().st_size}
    print(f"data: {gen:.0f} s, recs {sizes['recs'] / 1e9:.2f} GB, truth {sizes['truth'] / 1e9:.2f} GB", file=sys.stderr)
    if a.generate_only:
        return
    load0 = os.getloadavg()[0]
    commit = _commit()  # the code the CLI runs: taken before it starts
    got = run_cli(recs, truth, METRICS)
    got["load"] = [load0, os.getloadavg()[0]]
    values = _values(got["values"])
    print(f"receval evaluate: {got['seconds']:.1f} s, peak RSS {got['peak_rss'] / 1e9:.2f} GB", file=sys.stderr)
    row = {"users": a.users, "rows": a.users * K, "truth_rows": a.users * TRUTH_PER_USER, "files": sizes,
           "seconds": got["seconds"], "peak_rss": got["peak_rss"], "values": values, "generate_seconds": gen,
           "load": got["load"], "rss_timeline": got["rss_timeline"], "seed": a.seed, "commit": commit, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    earlier = (json.loads((OUT / "billion.json").read_text()) if (OUT / "billion.json").exists() else {}).get(str(a.users), {})
    if a.reuse_reference and earlier.get("reference") and earlier.get("seed", 0) == a.seed:
        ref = earlier["reference"]  # it depends on the size, the seed and the metrics only
        row["reference"], row["reference_from"] = ref, earlier.get("date", "an earlier run")
        row["max_abs_diff"] = max(abs(values[m] - ref[m]) for m in METRICS)
        row["bit_identical"] = all(values[m] == ref[m] for m in METRICS)
        print(f"reference (of {row['reference_from']}): max |diff| {row['max_abs_diff']:.3g}, bit-identical: {row['bit_identical']}",
              file=sys.stderr)
    elif not a.no_reference:
        t1 = time.perf_counter()
        ref = reference(a.users, METRICS, a.seed)
        row["reference_seconds"] = time.perf_counter() - t1
        row["reference"] = ref
        row["max_abs_diff"] = max(abs(values[m] - ref[m]) for m in METRICS)
        row["bit_identical"] = all(values[m] == ref[m] for m in METRICS)
        print(f"reference: max |diff| {row['max_abs_diff']:.3g}, bit-identical: {row['bit_identical']}", file=sys.stderr)
    OUT.mkdir(exist_ok=True)
    path = OUT / "billion.json"
    runs = json.loads(path.read_text()) if path.exists() else {}
    if earlier:  # the run this one replaces, in brief
        row["previous"] = {k: earlier[k] for k in ("seconds", "peak_rss", "commit", "date", "load", "load_note") if k in earlier}
    runs[str(a.users)] = row
    path.write_text(json.dumps(runs, indent=1))
    print(json.dumps(row, indent=1))
    render()
    if not a.keep:
        shutil.rmtree(d)
    if "max_abs_diff" in row and row["max_abs_diff"] > 1e-12:
        raise SystemExit("the CLI's values differ from the reference")


if __name__ == "__main__":
    main()
