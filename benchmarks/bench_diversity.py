"""Benchmark: αβ-nDCG@20 and α-nDCG@20 vs a plain vectorised binary NDCG@20.

Seeded synthetic data (generated vectorised): 100,000 users × k = 20,
20 categories, a prime-sized catalogue, 1–3 categories per item, ~16 truth
ratings per user of which some are in the list.  All three metrics are timed on
the same arrays (contract of receval.metrics.aspects); the beyond-accuracy
aggregates are timed too.  Writes ``benchmarks/out/diversity.json`` and prints
a table.

    PYTHONPATH=src python benchmarks/bench_diversity.py [--users N] [--repeat R]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

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
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t)
    return float(np.median(ts)), float(min(ts)), out


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
    out = {}
    for spec, side in specs.items():
        med, mn, res = timeit(lambda spec=spec, side=side: receval.evaluate(recs, truth, [spec], rel=thr, **side), repeat)
        out[spec] = {"median_s": med, "min_s": mn, "value": res[spec]}
    base = out[f"ndcg@{k}"]["median_s"]
    for v in out.values():
        v["x_ndcg"] = v["median_s"] / base
    return out


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--users", type=int, default=100_000)
    ap.add_argument("--k", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "out" / "diversity.json"))
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    d = make_data(U=a.users, K=a.k)
    gen = time.perf_counter() - t0
    k, thr = a.k, 4.0
    rel = np.nan_to_num(d["rating"], nan=0.0) >= thr
    off, ti, tr = d["offsets"], d["t_item"], d["t_rating"]
    its, asp = d["items"], d["aspects"]

    cases = {
        "ndcg@20 (binary, plain)": lambda: ndcg_binary(its, rel, off, tr, thr, k),
        "alpha-nDCG@20": lambda: alpha_ndcg(its, rel, asp, off, ti, tr, thr, k=k),
        "alpha-beta-nDCG@20": lambda: alpha_beta_ndcg(its, d["rating"], asp, off, ti, tr, r_max=5.0, k=k),
        "entropy": lambda: shannon_entropy(its),
        "gini": lambda: gini_index(its, d["n_items"]),
        "coverage": lambda: catalog_coverage(its, d["n_items"]),
        "novelty": lambda: novelty(its, d["popularity"], d["n_train_users"]),
        "ILD jaccard": lambda: intra_list_diversity(its, asp, distance="jaccard"),
        "ILD cosine": lambda: intra_list_diversity(its, asp, distance="cosine"),
    }
    res = {}
    for name, fn in cases.items():
        med, mn, out = timeit(fn, a.repeat)
        mean = float(np.nanmean(out)) if isinstance(out, np.ndarray) else float(out)
        res[name] = {"median_s": med, "min_s": mn, "value": mean}
    base = res["ndcg@20 (binary, plain)"]["median_s"]
    for v in res.values():
        v["x_ndcg"] = v["median_s"] / base
    e2e = end_to_end(d, k, thr, max(3, a.repeat // 2))
    # phase split of the aspect metrics: run side vs greedy ideal
    n_truth = int(off[-1])
    n_rel = int((tr >= thr).sum())
    meta = {
        "users": a.users, "k": k, "categories": int(asp.shape[1]), "n_items": d["n_items"],
        "truth_pairs": n_truth, "relevant_pairs": n_rel, "aspect_nnz": int(asp.nnz),
        "repeat": a.repeat, "data_gen_s": gen,
        "python": platform.python_version(), "numpy": np.__version__,
        "machine": platform.machine(), "cpus": os.cpu_count(),
    }
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    with open(a.out, "w") as f:
        json.dump({"meta": meta, "results": res, "end_to_end": e2e}, f, indent=2)
    print(f"{a.users} users x k={k}, {asp.shape[1]} categories, {n_truth} truth pairs "
          f"({n_rel} relevant), numpy {np.__version__}")
    print(f"{'metric':28s} {'median ms':>10s} {'min ms':>9s} {'x NDCG':>7s} {'mean value':>11s}")
    for name, v in res.items():
        print(f"{name:28s} {v['median_s']*1e3:10.1f} {v['min_s']*1e3:9.1f} {v['x_ndcg']:7.1f} {v['value']:11.5f}")
    print("end to end (receval.evaluate from polars frames):")
    for name, v in e2e.items():
        print(f"{name:28s} {v['median_s']*1e3:10.1f} {v['min_s']*1e3:9.1f} {v['x_ndcg']:7.1f} {v['value']:11.5f}")
    print(f"wrote {a.out}")
    return res


if __name__ == "__main__":
    main()
