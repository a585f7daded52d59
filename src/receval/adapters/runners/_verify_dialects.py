"""Verification driver for docs/dialect-verification.md (not a runner, not a test).

    <np2 python> src/receval/adapters/runners/_verify_dialects.py OUT_DIR

Builds tiny hand-made cases under OUT_DIR/<case>/, runs every peer runner on each (with the
env python given by src/receval/adapters/runners/runners.json), and writes OUT_DIR/<case>/<runner>.json
plus a combined OUT_DIR/summary.json.
"""
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
ROOT = Path(os.environ.get("RECEVAL_PEER_ENVS", Path.home() / ".cache" / "receval-peers"))


def case(recs, truth, k, threshold=None):
    """recs: {user: [(item, score), ...]} in ranking order; truth: {user: [(item, rating), ...]}."""
    r = [(u, i, float(s), n + 1) for u, lst in recs.items() for n, (i, s) in enumerate(lst)]
    t = [(u, i, float(x)) for u, lst in truth.items() for i, x in lst]
    return (
        pd.DataFrame(r, columns=["user_id", "item_id", "score", "rank"]).astype(
            {"user_id": "int64", "item_id": "int64", "score": "float64", "rank": "int64"}),
        pd.DataFrame(t, columns=["user_id", "item_id", "rating"]).astype(
            {"user_id": "int64", "item_id": "int64", "rating": "float64"}),
        {"k": k, "threshold": threshold},
    )


CASES = {
    # 4 users, every list is a 2-way score tie; input order vs larger id vs docno-desc string
    "ties": case(
        {1: [(9, .5), (10, .5)], 2: [(9, .5), (10, .5)], 3: [(10, .5), (9, .5)], 4: [(10, .5), (9, .5)]},
        {1: [(9, 1)], 2: [(10, 1)], 3: [(10, 1)], 4: [(9, 1)]}, [1]),
    # list of length 1 < k
    "short_list": case({1: [(1, .9)]}, {1: [(1, 1)]}, [1, 5]),
    # item 1 recommended twice; truth {1}
    "dup_recs": case({1: [(1, .9), (1, .8), (2, .7)]}, {1: [(1, 1)]}, [3]),
    # truth row (1,1) duplicated; truth {1,1,2}
    "dup_truth": case({1: [(1, .9), (3, .8), (4, .7)]}, {1: [(1, 1), (1, 1), (2, 1)]}, [3]),
    # user 2 only in truth, user 3 only in recs
    "user_sets": case({1: [(1, .9), (2, .8)], 3: [(4, .9)]}, {1: [(1, 1)], 2: [(3, 1)]}, [2]),
    # truth rating 0 row
    "rating_zero": case({1: [(1, .9), (2, .8)]}, {1: [(1, 0), (2, 5)]}, [1, 2]),
    # IDCG variants: |R|=6 > k, and |R|=1 < k
    "idcg": case({1: [(1, .9), (7, .8), (8, .7)], 2: [(7, .9), (1, .8)]},
                 {1: [(i, 1) for i in range(1, 7)], 2: [(1, 1)]}, [3, 5]),
    # MAP denominators: |R|=4, hits at 1 and 3
    "map_den": case({1: [(1, .9), (5, .8), (2, .7)]}, {1: [(1, 1), (2, 1), (3, 1), (4, 1)]}, [2, 3]),
    # RePlay RocAuc@k edge cases
    "rocauc": case(
        {1: [(1, .9), (2, .8)], 2: [(3, .9), (4, .8)], 3: [(5, .9), (1, .8)],
         4: [(1, .9), (5, .8)], 5: [(1, .9), (5, .8), (2, .7), (6, .6)]},
        {1: [(7, 1)], 2: [(3, 1), (4, 1)], 3: [(5, 1)], 4: [(5, 1)], 5: [(5, 1), (6, 1)]}, [2, 4]),
    # non-positive scores (torchmetrics masks preds <= 0)
    "neg_scores": case({1: [(1, -.1), (2, -.2)], 2: [(1, .0), (2, -.2)]}, {1: [(1, 1)], 2: [(1, 1)]}, [1, 2]),
}


def main() -> None:
    out = Path(sys.argv[1])
    runners = json.loads((HERE / "runners.json").read_text())
    job_runners = set(runners.get("_job_runners", []))  # obp_ope & co: no recs/truth input
    runners = {k: v for k, v in runners.items() if not k.startswith("_") and k not in job_runners}
    jobs = []
    for name, (recs, truth, params) in CASES.items():
        d = out / name
        d.mkdir(parents=True, exist_ok=True)
        recs.to_parquet(d / "recs.parquet")
        truth.to_parquet(d / "truth.parquet")
        (d / "params.json").write_text(json.dumps(params))
        for runner, env in runners.items():
            jobs.append((name, runner, [str(ROOT / env / "bin" / "python"), str(HERE / f"{runner}.py"), str(d), str(d / f"{runner}.json")]))

    def run(job):
        name, runner, cmd = job
        p = subprocess.run(cmd, capture_output=True, text=True)
        return name, runner, p.returncode, p.stderr[-2000:]

    summary = {}
    with ThreadPoolExecutor(max_workers=2) as ex:
        for name, runner, rc, err in ex.map(run, jobs):
            entry = {"rc": rc}
            if rc == 0:
                doc = json.loads((out / name / f"{runner}.json").read_text())
                entry.update(metrics=doc["metrics"], notes=doc["notes"], version=doc["version"])
            else:
                entry["stderr"] = err
            summary.setdefault(name, {})[runner] = entry
    (out / "summary.json").write_text(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
