"""Benchmark: ``receval evaluate --engine spark`` as a user runs it (issue 10), end to end.

A fresh process per run (JVM start, CSV schema inference, the evaluation), on seeded CSV data:
``--users`` users × 20 recommendations from 2,000 items, 5 truth rows per user. The session is
the one receval builds (local master): its shuffle partitions are sized to the data
(:func:`receval.backends.spark.partitions_for`) instead of ``spark.sql.shuffle.partitions``
(200 by default). ``--src`` runs another checkout's ``src`` (e.g. ../other-checkout/src) for a
before/after comparison.

    python benchmarks/bench_spark_cli.py                     # 5,000 users, 3 runs
    python benchmarks/bench_spark_cli.py --src ../other-checkout/src --runs 1
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

HERE = Path(__file__).resolve().parent


def make_data(folder: Path, users: int, seed: int = 0) -> tuple[Path, Path]:
    rng = np.random.default_rng(seed)
    u = np.repeat(np.arange(users), 20)
    recs = pl.DataFrame({"user_id": u, "item_id": rng.integers(0, 2000, len(u)), "score": rng.random(len(u))})
    recs = recs.unique(["user_id", "item_id"], keep="first", maintain_order=True)
    tu = np.repeat(np.arange(users), 5)
    truth = pl.DataFrame({"user_id": tu, "item_id": rng.integers(0, 2000, len(tu)), "rating": rng.integers(1, 6, len(tu)).astype(float)})
    truth = truth.unique(["user_id", "item_id"], keep="first", maintain_order=True)
    recs.write_csv(folder / "recs.csv")
    truth.write_csv(folder / "truth.csv")
    return folder / "recs.csv", folder / "truth.csv"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--users", type=int, default=5000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--src", default=str(HERE.parent / "src"))
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        recs, truth = make_data(Path(tmp), a.users)
        env = dict(os.environ, PYTHONPATH=a.src)
        code = "import sys; from receval.cli import main; sys.exit(main(sys.argv[1:]))"
        times = []
        for _ in range(a.runs):
            t0 = time.perf_counter()
            proc = subprocess.run([sys.executable, "-c", code, "evaluate", str(recs), str(truth), "-m", "ndcg@10", "-m", "recall@10",
                                   "--engine", "spark", "--format", "csv"], env=env, capture_output=True, text=True)
            times.append(time.perf_counter() - t0)
            if proc.returncode:
                sys.exit(proc.stderr[-2000:])
        print(f"{a.users} users, src {a.src}: median {statistics.median(times):.1f} s over {a.runs} runs ({', '.join(f'{t:.1f}' for t in times)})")


if __name__ == "__main__":
    main()
