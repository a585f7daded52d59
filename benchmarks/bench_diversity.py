"""Benchmark: αβ-nDCG@20 and α-nDCG@20 vs a plain vectorised binary NDCG@20.

Seeded synthetic data (generated vectorised): 100,000 users × k = 20,
20 categories, a prime-sized catalogue, 1–3 categories per item, ~16 truth
ratings per user of which some are in the list.  All three metrics are timed on
the same arrays (contract of receval.metrics.aspects); the beyond-accuracy
aggregates are timed too.  Writes ``benchmarks/out/diversity.json`` and prints
a table.

α-nDCG and αβ-nDCG are timed on both paths of their greedy ideal in the same run (issue 37):
the numpy path (``RECEVAL_JIT_ASPECTS_MIN`` above the input) and the compiled kernel
(``RECEVAL_JIT_ASPECTS_MIN=0``), interleaved, with their values compared bit for bit. Every
row gives the process CPU time (the minimum over the repetitions: the machine is shared) and
the wall time (median, minimum); the load average is printed before and after. The kernel's
load time (from numba's cache) is printed; ``--cold`` also compiles it in a fresh process
with an empty cache and prints that time.

    PYTHONPATH=src python benchmarks/bench_diversity.py [--users N] [--repeat R] [--cold]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import receval.metrics.aspects as aspects_mod  # noqa: E402
from receval.metrics.aspects import alpha_beta_ndcg, alpha_ndcg  # noqa: E402
from receval.metrics.diversity import (  # noqa: E402
    catalog_coverage,
    gini_index,
    intra_list_diversity,
    novelty,
    shannon_entropy,
)

RATINGS = np.array([0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0])
RATING_P = np.array([1, 3, 2, 7, 5, 20, 13, 27, 9, 13], dtype=float)  # MovieLens-like shape
RATING_P /= RATING_P.sum()


def make_data(U=100_000, K=20, C=20, n_items=20_011, mean_extra_truth=12, p_hit=0.15, seed=0):
    rng = np.random.default_rng(seed)
    # aspects: 1-3 categories per item, skewed category popularity
    n_cat = rng.choice([1, 2, 3], size=n_items, p=[0.45, 0.35, 0.2])
    catp = 1.0 / np.arange(1, C + 1) ** 0.8
    catp /= catp.sum()
    rows, cols = [], []
    for m in (1, 2, 3):
        its = np.flatnonzero(n_cat == m)
        # sample m distinct categories per item via argsort of Gumbel keys
        keys = np.log(catp)[None, :] - np.log(-np.log(rng.random((its.shape[0], C))))
        top = np.argsort(-keys, axis=1)[:, :m]
        rows.append(np.repeat(its, m))
        cols.append(top.ravel())
    rows = np.concatenate(rows)
    cols = np.concatenate(cols)
    aspects = sp.csr_matrix((np.ones(rows.shape[0], dtype=bool), (rows, cols)), shape=(n_items, C))

    # lists: arithmetic progressions modulo a prime → distinct items per list
    base = rng.integers(0, n_items, size=U)
    stride = rng.integers(1, n_items, size=U)
    items = (base[:, None] + np.arange(K)[None, :] * stride[:, None]) % n_items
    # some lists shorter than K
    ell = np.where(rng.random(U) < 0.05, rng.integers(1, K + 1, size=U), K)
    items[np.arange(K)[None, :] >= ell[:, None]] = -1

    # truth: listed items with prob p_hit, plus extra distinct items
    in_truth = (rng.random((U, K)) < p_hit) & (items >= 0)
    n_extra = rng.poisson(mean_extra_truth, size=U) + 1
    u_extra = np.repeat(np.arange(U), n_extra)
    pos = np.arange(n_extra.sum()) - np.repeat(np.cumsum(n_extra) - n_extra, n_extra)
    extra = (base[u_extra] + (K + pos) * stride[u_extra]) % n_items
    uu, jj = np.nonzero(in_truth)
    t_user = np.concatenate([uu, u_extra])
    t_item = np.concatenate([items[uu, jj], extra])
    order = np.lexsort((t_item, t_user))
    t_user, t_item = t_user[order], t_item[order]
    t_rating = rng.choice(RATINGS, size=t_item.shape[0], p=RATING_P)
    offsets = np.zeros(U + 1, dtype=np.int64)
    np.cumsum(np.bincount(t_user, minlength=U), out=offsets[1:])

    # rating [U, K] of the listed items (NaN if not rated): look up (user, item) in the truth
    key_t = t_user * n_items + t_item  # sorted
    lu = np.repeat(np.arange(U), K)
    key_l = lu * n_items + np.where(items >= 0, items, 0).ravel()
    idx = np.searchsorted(key_t, key_l)
    idx = np.minimum(idx, key_t.shape[0] - 1)
    found = (key_t[idx] == key_l) & (items.ravel() >= 0)
    rating = np.where(found, t_rating[idx], np.nan).reshape(U, K)

    popularity = rng.zipf(1.6, size=n_items).clip(max=5000).astype(float)
    popularity[rng.random(n_items) < 0.02] = 0.0
    return dict(
        items=items.astype(np.int64), aspects=aspects, rating=rating, offsets=offsets,
        t_item=t_item.astype(np.int64), t_rating=t_rating, popularity=popularity,
        n_items=n_items, n_train_users=6000,
    )


def ndcg_binary(items, rel, offsets, t_rating, threshold, k):
    """Plain vectorised binary NDCG@k (log2 discount, IDCG over min(k, |R_u|))."""
    disc = math.log(2.0) / np.log(np.arange(2, k + 2, dtype=np.float64))
    dcg = (rel[:, :k] * disc).sum(axis=1)
    relc = (t_rating >= threshold).astype(np.int64)
    csum = np.concatenate([[0], np.cumsum(relc)])
    R = csum[offsets[1:]] - csum[offsets[:-1]]
    cdisc = np.concatenate([[0.0], np.cumsum(disc)])
    idcg = cdisc[np.minimum(R, k)]
    out = np.zeros(items.shape[0])
    np.divide(dcg, idcg, out=out, where=idcg > 0)
    return out


def timeit(fn, repeat):
    """(median wall, min wall, min CPU, last output) of ``repeat`` calls; CPU = the process's
    CPU time (every thread)."""
    ts, cs = [], []
    out = None
    for _ in range(repeat):
        c = time.process_time()
        t = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t)
        cs.append(time.process_time() - c)
    return float(np.median(ts)), float(min(ts)), float(min(cs)), out


#: the environment of each path of the aspect metrics' greedy ideal
PATHS = {"numpy": str(10**18), "kernel": "0"}


def on_path(path, fn):
    """``fn`` run with the greedy ideal on ``path`` (:data:`PATHS`)."""
    def run():
        old = os.environ.get("RECEVAL_JIT_ASPECTS_MIN")
        os.environ["RECEVAL_JIT_ASPECTS_MIN"] = PATHS[path]
        try:
            return fn()
        finally:
            if old is None:
                os.environ.pop("RECEVAL_JIT_ASPECTS_MIN", None)
            else:
                os.environ["RECEVAL_JIT_ASPECTS_MIN"] = old
    return run


def _usage():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_stime, r.ru_minflt


#: each call's system time and minor page faults, by case (the last :func:`interleaved` run)
SYSTEM: dict = {}


def interleaved(cases, repeat):
    """Time ``cases`` (name -> fn) round-robin, ``repeat`` rounds: each round calls every case
    once, so both paths of a metric see the same load. Each call's system time and minor page
    faults go to :data:`SYSTEM` (the kernel's time zeroing and mapping fresh pages: it follows the
    state of the allocator and of the machine's memory more than the work)."""
    walls = {n: [] for n in cases}
    cpus = {n: [] for n in cases}
    outs = {}
    for n in cases:
        SYSTEM[n] = []
    for _ in range(repeat):
        for n, fn in cases.items():
            s0, f0 = _usage()
            c = time.process_time()
            t = time.perf_counter()
            outs[n] = fn()
            walls[n].append(time.perf_counter() - t)
            cpus[n].append(time.process_time() - c)
            s1, f1 = _usage()
            SYSTEM[n].append((s1 - s0, f1 - f0))
    return {n: (float(np.median(walls[n])), float(min(walls[n])), float(min(cpus[n])), outs[n]) for n in cases}


def alone(cases, repeat):
    """Time each of ``cases`` (name -> fn) on its own: one call, then ``repeat`` calls in a row
    (the allocator in that metric's steady state: what a user calling one metric again and again
    sees); the same fields as :func:`interleaved`."""
    out = {}
    for n, fn in cases.items():
        fn()
        got = interleaved({n: fn}, repeat)
        out[n] = (*got[n], list(SYSTEM[n]))
    return out


def kernel_times(cold):
    """(load s, cold compile s or None): the kernel loaded in this process (from numba's cache,
    compiled first if the cache is empty), and with ``cold`` compiled in a fresh process with an
    empty cache."""
    t = time.perf_counter()
    aspects_mod._jit()
    load = time.perf_counter() - t
    compile_s = None
    if cold:
        code = ("import time, receval.metrics.aspects as A\n"
                "t = time.perf_counter(); A._jit(); print(time.perf_counter() - t)\n")
        with tempfile.TemporaryDirectory() as tmp:
            env = dict(os.environ, NUMBA_CACHE_DIR=tmp, PYTHONPATH=str(Path(__file__).resolve().parents[1] / "src"))
            out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
            compile_s = float(out.stdout.strip().splitlines()[-1])
    return load, compile_s


def end_to_end(d, k, thr, repeat):
    """The same data through ``receval.evaluate`` from polars frames: NDCG@k vs α-/αβ-nDCG@k.

    This is what a user runs: each call builds the intermediate form from the frames, and the
    aspect metrics also map the categories; the kernels above are the formulas alone.
    """
    import polars as pl

    import receval

    items = d["items"]
    U, K = items.shape
    uu, jj = np.nonzero(items >= 0)
    recs = pl.DataFrame({"user_id": uu, "item_id": items[uu, jj], "score": (K - jj).astype(np.float64)})
    off = d["offsets"]
    t_user = np.repeat(np.arange(U), np.diff(off))
    truth = pl.DataFrame({"user_id": t_user, "item_id": d["t_item"], "rating": d["t_rating"]})
    ai, ac = d["aspects"].nonzero()
    cats = pl.DataFrame({"item_id": ai.astype(np.int64), "category": ac.astype(np.int64).astype(str)})
    specs = {
        f"ndcg@{k}": {},
        f"alpha_ndcg@{k}": {"categories": cats},
        f"ab_ndcg(rmax=5)@{k}": {"categories": cats},
    }
    kernel_cases, numpy_cases = {}, {}
    for spec, side in specs.items():
        call = (lambda spec=spec, side=side: receval.evaluate(recs, truth, [spec], rel=thr, **side)[spec])
        if spec.startswith("ndcg"):
            kernel_cases[spec] = on_path("numpy", call)
            continue
        for path, cases in (("numpy", numpy_cases), ("kernel", kernel_cases)):
            cases[f"{spec} [{path}]"] = on_path(path, call)
    # NDCG and the kernel path interleaved among themselves, the numpy path after them: the
    # numpy path's calls leave the allocator holding (and the process mapped) far more memory,
    # which the next call then reuses without faulting it in (interleaved with them, the kernel
    # path's end to end looked ~10% faster than when called alone)
    got = interleaved(kernel_cases, repeat)
    system = dict(SYSTEM)
    got.update(interleaved(numpy_cases, max(2, repeat // 2)))
    system.update(SYSTEM)
    # each on its own too (NDCG and the kernel path): a call's fresh memory follows the call before it
    solo = alone(kernel_cases, repeat)
    out = {n: {"median_s": v[0], "min_s": v[1], "cpu_s": v[2], "value": v[3],
               "system_s": [x[0] for x in system[n]], "minor_faults": [x[1] for x in system[n]]}
           for n, v in got.items()}
    for n, v in solo.items():
        out[n]["alone"] = {"median_s": v[0], "min_s": v[1], "cpu_s": v[2],
                           "system_s": [x[0] for x in v[4]], "minor_faults": [x[1] for x in v[4]]}
    base = out[f"ndcg@{k}"]
    for v in out.values():
        v["x_ndcg"] = v["median_s"] / base["median_s"]
        v["x_ndcg_wall_min"] = v["min_s"] / base["min_s"]
        v["x_ndcg_cpu"] = v["cpu_s"] / base["cpu_s"]
        if "alone" in v:
            v["alone"]["x_ndcg"] = v["alone"]["median_s"] / base["alone"]["median_s"]
    return out


def render(data, commit):
    """The diversity section of RESULTS.md from a run's JSON (``data``), measured at ``commit``."""
    meta, res, e2e = data["meta"], data["results"], data["end_to_end"]
    lo, hi = meta["loadavg_before"], meta["loadavg_after"]
    cold = meta["kernel_cold_compile_s"]
    lines = [
        "## α-nDCG and αβ-nDCG: the greedy ideal compiled (`benchmarks/bench_diversity.py`, issue 37)",
        "",
        f"{meta['users']:,} users × k = {meta['k']}, {meta['categories']} categories, {meta['truth_pairs']:,} truth "
        f"pairs ({meta['relevant_pairs']:,} relevant), work tree at {commit}; the numpy path and the kernel in the "
        f"same process, interleaved, {meta['repeat']} calls each (end to end: NDCG and the kernel path interleaved, "
        f"{max(3, meta['repeat'] // 2)} calls each, then the numpy path apart: its calls leave the allocator warm for "
        "the next; alone: NDCG and the kernel path each called once, then that many times in a row, the allocator "
        "in that metric's steady state). CPU = the process's CPU time (every thread, system time included), the minimum; wall: median "
        "(minimum); sys: the median system time of a call and its minor page faults (the kernel mapping and zeroing "
        "fresh memory: on this VM, which gives freed memory back to its host, a page touched again costs a host "
        "fault). 1-minute load average "
        f"{lo[0]:.1f} before, {hi[0]:.1f} after (a shared 2-core VM: wall times follow the other work, CPU "
        "times less so). The kernel loaded from numba's cache in "
        f"{meta['kernel_load_s']:.2f} s" + ("" if cold is None else f"; compiled cold (fresh process, empty cache) in {cold:.1f} s") + ".",
        "",
        "| what | path | CPU | wall | × ndcg@20 (CPU / wall min) | sys, faults | alone: wall (× ndcg@20), sys | value |",
        "|---|---|---|---|---|---|---|---|",
    ]
    base = e2e["ndcg@20"]
    for name, v in e2e.items():
        metric, _, path = name.partition(" [")
        sysf = (f"{float(np.median(v['system_s'])):.3f} s, {int(np.median(v['minor_faults'])):,}"
                if v.get("system_s") else "")
        w = v.get("alone")
        solo = (f"{w['median_s']:.3f} s ({w['x_ndcg']:.2f}×), {float(np.median(w['system_s'])):.3f} s" if w else "")
        lines.append(f"| `{metric}` end to end | {path.rstrip(']') or 'numpy'} | {v['cpu_s']:.3f} s | {v['median_s']:.3f} s "
                     f"(min {v['min_s']:.3f}) | {v['cpu_s'] / base['cpu_s']:.2f}× / {v['min_s'] / base['min_s']:.2f}× | "
                     f"{sysf} | {solo} | {v['value']:.6f} |")
    for name, v in res.items():
        if "nDCG" in name and "[" in name:
            metric, _, path = name.partition(" [")
            lines.append(f"| `{metric}` (function) | {path.rstrip(']')} | {v['cpu_s']:.3f} s | {v['median_s']:.3f} s "
                         f"(min {v['min_s']:.3f}) | | | | {v['value']:.6f} |")
    same = meta["bit_identical"]
    lines += ["", "Values, numpy path against kernel: " + "; ".join(
        f"{m}: {'bit-identical' if ok else 'DIFFERENT'}" for m, ok in same.items()) + "."]
    return "\n".join(lines)


def write_section(text):
    """Replace the ``<!-- diversity:start -->`` ... ``<!-- diversity:end -->`` section of
    RESULTS.md (appended when missing)."""
    path = Path(__file__).resolve().parent / "RESULTS.md"
    doc = path.read_text(encoding="utf-8")
    a, b = "<!-- diversity:start -->", "<!-- diversity:end -->"
    block = f"{a}\n{text}\n{b}"
    if a in doc and b in doc:
        doc = doc[:doc.index(a)] + block + doc[doc.index(b) + len(b):]
    else:
        doc = doc.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(doc, encoding="utf-8")


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--users", type=int, default=100_000)
    ap.add_argument("--k", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--write", metavar="COMMIT", help="rewrite the diversity section of RESULTS.md, naming COMMIT")
    ap.add_argument("--render", metavar="JSON", help="only write the section from a run's JSON (with --write)")
    ap.add_argument("--cold", action="store_true", help="also time the kernel's compile in a fresh process, empty cache")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "out" / "diversity.json"))
    a = ap.parse_args(argv)
    if a.render:
        write_section(render(json.loads(Path(a.render).read_text()), a.write or "?"))
        return None
    t0 = time.perf_counter()
    d = make_data(U=a.users, K=a.k)
    gen = time.perf_counter() - t0
    k, thr = a.k, 4.0
    rel = np.nan_to_num(d["rating"], nan=0.0) >= thr
    off, ti, tr = d["offsets"], d["t_item"], d["t_rating"]
    its, asp = d["items"], d["aspects"]

    load0 = os.getloadavg()
    jit_load, jit_compile = kernel_times(a.cold)
    plain = {
        "ndcg@20 (binary, plain)": lambda: ndcg_binary(its, rel, off, tr, thr, k),
        "entropy": lambda: shannon_entropy(its),
        "gini": lambda: gini_index(its, d["n_items"]),
        "coverage": lambda: catalog_coverage(its, d["n_items"]),
        "novelty": lambda: novelty(its, d["popularity"], d["n_train_users"]),
        "ILD jaccard": lambda: intra_list_diversity(its, asp, distance="jaccard"),
        "ILD cosine": lambda: intra_list_diversity(its, asp, distance="cosine"),
    }
    res = {}
    for name, fn in plain.items():
        med, mn, cpu, out = timeit(fn, a.repeat)
        mean = float(np.nanmean(out)) if isinstance(out, np.ndarray) else float(out)
        res[name] = {"median_s": med, "min_s": mn, "cpu_s": cpu, "value": mean}
    paired = {}
    for path in ("numpy", "kernel"):
        paired[f"alpha-nDCG@20 [{path}]"] = on_path(path, lambda: alpha_ndcg(its, rel, asp, off, ti, tr, thr, k=k,
                                                                             return_parts=True))
        paired[f"alpha-beta-nDCG@20 [{path}]"] = on_path(path, lambda: alpha_beta_ndcg(
            its, d["rating"], asp, off, ti, tr, r_max=5.0, k=k, return_parts=True))
    got = interleaved(paired, a.repeat)
    same = {}
    for name, (med, mn, cpu, out) in got.items():
        res[name] = {"median_s": med, "min_s": mn, "cpu_s": cpu, "value": float(np.nanmean(out[0]))}
    for metric in ("alpha-nDCG@20", "alpha-beta-nDCG@20"):
        x, y = got[f"{metric} [numpy]"][3], got[f"{metric} [kernel]"][3]
        same[metric] = all(p.tobytes() == q.tobytes() for p, q in zip(x, y))  # value, dcg, idcg
    base = res["ndcg@20 (binary, plain)"]
    for v in res.values():
        v["x_ndcg"] = v["median_s"] / base["median_s"]
    e2e = end_to_end(d, k, thr, max(3, a.repeat // 2))
    for metric in ("alpha_ndcg@20", "ab_ndcg(rmax=5)@20"):
        same[metric + " end to end"] = e2e[f"{metric} [numpy]"]["value"] == e2e[f"{metric} [kernel]"]["value"]
    load1 = os.getloadavg()
    n_truth = int(off[-1])
    n_rel = int((tr >= thr).sum())
    meta = {
        "users": a.users, "k": k, "categories": int(asp.shape[1]), "n_items": d["n_items"],
        "truth_pairs": n_truth, "relevant_pairs": n_rel, "aspect_nnz": int(asp.nnz),
        "repeat": a.repeat, "data_gen_s": gen,
        "python": platform.python_version(), "numpy": np.__version__,
        "machine": platform.machine(), "cpus": os.cpu_count(),
        "loadavg_before": load0, "loadavg_after": load1,
        "kernel_load_s": jit_load, "kernel_cold_compile_s": jit_compile, "bit_identical": same,
    }
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    with open(a.out, "w") as f:
        json.dump({"meta": meta, "results": res, "end_to_end": e2e}, f, indent=2)
    print(f"{a.users} users x k={k}, {asp.shape[1]} categories, {n_truth} truth pairs "
          f"({n_rel} relevant), numpy {np.__version__}")
    print(f"load average before {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}, after {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}")
    print(f"aspect kernel: loaded in {jit_load:.2f} s" + ("" if jit_compile is None else f", cold compile {jit_compile:.1f} s"))
    print(f"{'metric':32s} {'median ms':>10s} {'min ms':>9s} {'CPU ms':>9s} {'x NDCG':>7s} {'mean value':>11s}")
    for name, v in res.items():
        print(f"{name:32s} {v['median_s']*1e3:10.1f} {v['min_s']*1e3:9.1f} {v['cpu_s']*1e3:9.1f} {v['x_ndcg']:7.1f} {v['value']:11.5f}")
    print("end to end (receval.evaluate from polars frames; x NDCG: wall median / wall min / CPU;"
          " system ms and minor faults: median per call):")
    for name, v in e2e.items():
        print(f"{name:32s} {v['median_s']*1e3:10.1f} {v['min_s']*1e3:9.1f} {v['cpu_s']*1e3:9.1f} "
              f"{v['x_ndcg']:5.1f} / {v['x_ndcg_wall_min']:4.1f} / {v['x_ndcg_cpu']:4.1f} {v['value']:11.5f} "
              f"sys {np.median(v['system_s'])*1e3:5.0f} flt {int(np.median(v['minor_faults'])):6d}")
    print("end to end, each metric on its own (one call, then the calls in a row; x NDCG: wall median):")
    for name, v in e2e.items():
        if "alone" in v:
            w = v["alone"]
            print(f"{name:32s} {w['median_s']*1e3:10.1f} {w['min_s']*1e3:9.1f} {w['cpu_s']*1e3:9.1f} {w['x_ndcg']:5.1f} "
                  f"sys {np.median(w['system_s'])*1e3:5.0f} flt {int(np.median(w['minor_faults'])):6d}")
    print("numpy path vs kernel, bit for bit: " + ", ".join(f"{m} {'yes' if ok else 'NO'}" for m, ok in same.items()))
    print(f"wrote {a.out}")
    if a.write:
        write_section(render(json.loads(Path(a.out).read_text()), a.write))
        print("rewrote the diversity section of RESULTS.md")
    return res


if __name__ == "__main__":
    main()
