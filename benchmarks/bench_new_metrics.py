"""Time of the issue-14 metrics on synthetic data (one in-memory evaluate call per metric).

    PYTHONPATH=src python benchmarks/bench_new_metrics.py [--users 20000] [--k 20]

Prints the median of 3 runs per metric spec (seconds) and, for the sampled protocol, the
uncorrected / BV-corrected / full values on a planted ranking (the gap Krichene & Rendle
describe). Not a test: numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def data(n_users: int, k: int, n_items: int = 2000, seed: int = 0):
    rng = np.random.default_rng(seed)
    pop = rng.zipf(1.3, n_items).astype(float)
    p = pop / pop.sum()
    ru = np.repeat(np.arange(n_users), k)
    ri = np.concatenate([rng.choice(n_items, k, replace=False, p=p) for _ in range(n_users)])
    rs = np.tile(np.arange(k, 0, -1, dtype=float), n_users)
    tu = np.repeat(np.arange(n_users), 5)
    ti = np.concatenate([rng.choice(n_items, 5, replace=False, p=p) for _ in range(n_users)])
    ty = rng.integers(1, 6, len(tu)).astype(float)
    train = {"user_id": rng.integers(0, n_users, 10 * n_users), "item_id": rng.choice(n_items, 10 * n_users, p=p)}
    cats = {"item_id": np.arange(n_items), "category": rng.integers(0, 18, n_items).astype(str)}
    base = {"user_id": ru, "item_id": np.roll(ri, 3), "score": rs}
    ig = {"item_id": np.arange(n_items), "group": rng.integers(0, 3, n_items).astype(str)}
    ug = {"user_id": np.arange(n_users), "group": rng.integers(0, 4, n_users).astype(str)}
    return ({"user_id": ru, "item_id": ri, "score": rs}, {"user_id": tu, "item_id": ti, "rating": ty},
            dict(train=train, categories=cats, baseline=base, item_groups=ig, user_groups=ug, catalog=np.arange(n_items)))


SPECS = ["rprecision", "bpref(rel=4)", "rbp@{k}", "err(grade=rating,gmax=5)@{k}", "ncrr@{k}", "arp@{k}", "aplt@{k}",
         "aclt@{k}", "popreo@{k}", "poprsp@{k}", "epc@{k}", "efd@{k}", "surprisal@{k}", "unexpectedness@{k}",
         "filled@{k}", "covered@{k}", "intersection@{k}", "serendipity@{k}", "catdiv@{k}", "srecall@{k}",
         "miscalibration@{k}", "ild(distance=hamming)@{k}", "reo@{k}", "rsp@{k}", "mad@{k}", "ndcg@{k}"]


def main() -> None:
    from receval import evaluate
    from receval.sampled import sampled_evaluate

    ap = argparse.ArgumentParser()
    ap.add_argument("--users", type=int, default=20000)
    ap.add_argument("--k", type=int, default=20)
    a = ap.parse_args()
    recs, truth, side = data(a.users, a.k)
    print(f"{a.users} users x {a.k} recs, 2000 items")
    for t in SPECS:
        spec = t.format(k=a.k)
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            evaluate(recs, truth, [spec], **side)
            times.append(time.perf_counter() - t0)
        print(f"  {spec:32s} {statistics.median(times):.3f} s")
    rng = np.random.default_rng(1)
    S = {u: rng.normal(size=300) for u in range(400)}
    pos = {u: int(np.argsort(-S[u])[int(rng.integers(0, 60))]) for u in S}
    t0 = time.perf_counter()
    r = sampled_evaluate(lambda u: S[u], {"user_id": list(S), "item_id": [pos[u] for u in S]},
                         ["hitrate@10", "ndcg@10", "mrr"], catalog=list(range(300)), n=50, seed=3)
    print(f"sampled (400 users, 300 items, n=50): {time.perf_counter() - t0:.2f} s")
    for (spec, est), v in r.values.items():
        print(f"  {spec:12s} {est:12s} {v:.4f}")


if __name__ == "__main__":
    main()
