"""Shared I/O for the peer runners (src/receval/adapters/runners/<lib>.py).

Every runner is a standalone script, run inside a peer env (see receval/adapters/envs/) as

    <env python> src/receval/adapters/runners/<lib>.py IN_DIR OUT_JSON

IN_DIR holds
  recs.parquet   user_id:int64, item_id:int64, score:float64, rank:int64 (1-based).
                 Row order is the ranking order within a user.
  truth.parquet  user_id:int64, item_id:int64, rating:float64
  params.json    {"k": [1, 5, 10, 20], "threshold": null, ...}

``threshold``: if not null, truth rows with ``rating < threshold`` are dropped before the
truth reaches the peer (so "relevant" = rating >= threshold). With null every truth row is
passed (whatever its rating), which is how most peers treat their ground truth anyway.
Peers with their own notion of graded relevance additionally get the raw ratings in
their graded variants (names carry ``graded``/``score_type=``).

Output JSON:
  {"library": str, "version": str, "env": {...},
   "timings": {"prepare_s": float, "compute_s": float},
   "notes": [str, ...],
   "metrics": {"<peer metric name>@<k>": {"mean": float|null, "per_user": {"<user_id>": float|null}}}}
A NaN is written as null. ``per_user`` is present only where the library exposes per-user values.
Runners never import receval.
"""

from __future__ import annotations

import json
import math
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any

# Each runner is named after its library (rs_metrics.py runs rs_metrics): importing this module
# first drops the runners' folder from sys.path, so that the runner's own `import <library>`
# finds the installed library and not the runner itself.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

import pandas as pd  # noqa: E402


def load(argv: list[str] | None = None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        raise SystemExit(f"usage: {Path(sys.argv[0]).name} IN_DIR OUT_JSON")
    in_dir, out = Path(argv[0]), Path(argv[1])
    recs = pd.read_parquet(in_dir / "recs.parquet")
    truth = pd.read_parquet(in_dir / "truth.parquet")
    params_path = in_dir / "params.json"
    params = json.loads(params_path.read_text()) if params_path.exists() else {}
    ks = params.get("k", [1, 5, 10, 20])
    if isinstance(ks, int):
        ks = [ks]
    params["k"] = [int(k) for k in ks]
    recs = recs.astype({"user_id": "int64", "item_id": "int64", "score": "float64", "rank": "int64"})
    truth = truth.astype({"user_id": "int64", "item_id": "int64", "rating": "float64"})
    thr = params.get("threshold")
    if thr is not None:
        truth = truth[truth["rating"] >= float(thr)]
    truth = truth.reset_index(drop=True)
    return recs.reset_index(drop=True), truth, params, out


def _num(x: Any):
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else x


class Result:
    def __init__(self, library: str, version: str):
        self.doc: dict[str, Any] = {
            "library": library,
            "version": version,
            "env": {"python": sys.version.split()[0], "executable": sys.executable},
            "timings": {"prepare_s": 0.0, "compute_s": 0.0},
            "notes": [],
            "metrics": {},
        }

    def add(self, name: str, mean: Any, per_user: dict | None = None) -> None:
        entry: dict[str, Any] = {"mean": _num(mean)}
        if per_user is not None:
            entry["per_user"] = {str(int(u)): _num(v) for u, v in per_user.items()}
        self.doc["metrics"][name] = entry

    def note(self, text: str) -> None:
        self.doc["notes"].append(text)

    @contextmanager
    def timed(self, key: str):
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.doc["timings"][key] = self.doc["timings"].get(key, 0.0) + time.perf_counter() - t0

    def write(self, out: Path) -> None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(self.doc, indent=1, sort_keys=False, allow_nan=False))


def ranked_lists(recs: pd.DataFrame) -> dict[int, list[int]]:
    """user -> item list in the file's row order (= ranking order)."""
    return {int(u): [int(i) for i in g] for u, g in recs.groupby("user_id", sort=True)["item_id"]}


def truth_lists(truth: pd.DataFrame) -> dict[int, list[int]]:
    return {int(u): [int(i) for i in g] for u, g in truth.groupby("user_id", sort=True)["item_id"]}


def all_integer(s: pd.Series) -> bool:
    return bool(len(s) == 0 or ((s == s.round()) & s.notna()).all())


def nested_dicts(truth: pd.DataFrame, recs: pd.DataFrame, graded: bool) -> tuple[dict, dict]:
    """trec-style inputs: qrels {user: {item: grade}} (grade 1, or int(rating) when graded)
    and run {user: {item: score}}, with string ids; repeated (user, item) rows collapse (last wins)."""
    q: dict = {}
    for u, i, r in zip(truth["user_id"].tolist(), truth["item_id"].tolist(), truth["rating"].tolist()):
        q.setdefault(str(u), {})[str(i)] = int(r) if graded else 1
    rn: dict = {}
    for u, i, s in zip(recs["user_id"].tolist(), recs["item_id"].tolist(), recs["score"].tolist()):
        rn.setdefault(str(u), {})[str(i)] = float(s)
    return q, rn
