"""The cost of tie-aware values (``ties=average``) against a fixed tie rule (``ties=input``).

    PYTHONPATH=src python benchmarks/bench_ties.py [--users 100000] [--k 20] [--out benchmarks/out/ties.json]

The realistic shape is the headline: string user and item ids, rows shuffled, scores rounded
to one decimal so that ties are common (the share of rows tied with a neighbour is printed). Each metric spec is timed in one in-memory evaluate call, median of 3, under both
rules; the JSON file holds the table. Not a test: the numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path

import numpy as np

SPECS = ["precision@{k}", "ndcg@{k}", "mrr@{k}", "map@{k}", "map(denominator=hits)@{k}", "mar@{k}",
         "err(grade=rating,gmax=5)@{k}", "bpref(rel=4)", "rbp@{k}", "alpha_ndcg@{k}", "gauc",
         "epc@{k}", "serendipity@{k}", "coverage@{k}"]


def data(n_users: int, k: int, n_items: int = 5000, seed: int = 0):
    """bench_new_metrics' synthetic data in the realistic shape, with coarse scores."""
    from bench_new_metrics import data as synthetic

    recs, truth, side = synthetic(n_users, k, n_items, seed)
    rng = np.random.default_rng(seed + 1)
    ru = recs["user_id"]
    # scores on a coarse grid: ties inside lists (and across the cut-off of a longer list)
    rs = np.round(rng.random(len(ru)) * 0.3 + np.tile(np.linspace(0.7, 0.0, k), n_users), 1)

    def text(prefix: str, ids: np.ndarray) -> np.ndarray:
        return np.char.add(prefix, np.asarray(ids).astype(str)).astype(object)

    perm = rng.permutation(len(ru))
    recs = {"user_id": text("u", ru)[perm], "item_id": text("i", recs["item_id"])[perm], "score": rs[perm]}
    truth = {"user_id": text("u", truth["user_id"]), "item_id": text("i", truth["item_id"]), "rating": truth["rating"]}
    train, cats = side["train"], side["categories"]
    side = dict(train={"user_id": text("u", train["user_id"]), "item_id": text("i", train["item_id"])},
                categories={"item_id": text("i", cats["item_id"]), "category": cats["category"]},
                catalog=text("i", np.arange(n_items)))
    same = (rs[1:] == rs[:-1]) & (ru[1:] == ru[:-1])
    tied = float(np.mean(np.r_[False, same] | np.r_[same, False]))
    return recs, truth, side, tied


def timed(fn) -> float:
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from receval import DataError, evaluate

    ap = argparse.ArgumentParser()
    ap.add_argument("--users", type=int, default=100_000)
    ap.add_argument("--k", type=int, default=20)
    ap.add_argument("--out", default=str(Path(__file__).parent / "out" / "ties.json"))
    a = ap.parse_args()
    recs, truth, side, tied = data(a.users, a.k)
    print(f"{a.users} users x {a.k} recs (string ids, shuffled), {tied:.0%} of the rows tied with a neighbour")
    rows = []
    print(f"{'spec':32} {'ties=input':>11} {'ties=average':>13} {'ratio':>7}  value (average)")
    for t in SPECS:
        spec = t.format(k=a.k)
        base = timed(lambda s=spec: evaluate(recs, truth, [s], **side))
        try:
            res = evaluate(recs, truth, [spec], ties="average", **side)
            avg = timed(lambda s=spec: evaluate(recs, truth, [s], ties="average", **side))
            value: float | str = float(res[spec])
        except DataError as exc:  # a top-k-set metric whose cut splits a tie group
            avg, value = float("nan"), f"refused: {str(exc)[:60]}"
        rows.append({"spec": spec, "input_s": base, "average_s": avg, "ratio": avg / base, "value": value})
        shown = f"{value:.6f}" if isinstance(value, float) else value
        print(f"{spec:32} {base:11.3f} {avg:13.3f} {avg / base:7.2f}  {shown}")
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"users": a.users, "k": a.k, "tied_share": tied, "machine": platform.platform(),
                               "rows": rows}, indent=1))
    print(f"written: {out}")


if __name__ == "__main__":
    main()
