"""The shapes of issue 34: 3 runs x 5 metrics on 580 synthetic users (rated truth, some users
without an item rated 4 or more), written as CSV files for the command line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

METRICS = ["ndcg@10", "recall@10", "precision@10", "mrr@10", "map@10"]
RUNS = ("ease", "pop", "bpr")


def frames(n_users: int = 580, n_items: int = 400, seed: int = 0) -> tuple[pl.DataFrame, dict[str, pl.DataFrame], pl.DataFrame]:
    """(truth, {run: recs}, train)."""
    rng = np.random.default_rng(seed)
    u = np.repeat(np.arange(1, n_users + 1), 5)
    truth = pl.DataFrame({"user_id": u, "item_id": rng.integers(1, n_items, len(u)),
                          "rating": rng.choice([1.0, 2.0, 3.0, 4.0, 5.0], len(u), p=[.1, .1, .3, .3, .2])})
    truth = truth.unique(["user_id", "item_id"], keep="first", maintain_order=True)
    counts = rng.integers(1, 40, n_users)
    train = pl.DataFrame({"user_id": np.repeat(np.arange(1, n_users + 1), counts),
                          "item_id": rng.integers(1, n_items, int(counts.sum()))})
    tu, ti = truth["user_id"].to_numpy(), truth["item_id"].to_numpy()
    runs = {}
    for name, q in zip(RUNS, (.3, .1, .2)):
        uu = np.repeat(np.arange(1, n_users + 1), 20)
        ii = rng.integers(1, n_items, len(uu))
        hit = rng.random(len(tu)) < q
        sc = np.r_[rng.random(len(uu)), rng.random(int(hit.sum())) + 0.3]
        runs[name] = pl.DataFrame({"user_id": np.r_[uu, tu[hit]], "item_id": np.r_[ii, ti[hit]], "score": sc}).unique(
            ["user_id", "item_id"], keep="first", maintain_order=True)
    return truth, runs, train


def files(folder: Path) -> tuple[str, list[str], str]:
    """(truth file, ["ease=…", ...], train file) under ``folder``."""
    truth, runs, train = frames()
    truth.write_csv(folder / "truth.csv")
    train.write_csv(folder / "train.csv")
    named = []
    for name, f in runs.items():
        f.write_csv(folder / f"{name}.csv")
        named.append(f"{name}={folder / f'{name}.csv'}")
    return str(folder / "truth.csv"), named, str(folder / "train.csv")
