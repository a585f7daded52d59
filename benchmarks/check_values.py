"""Check: every registered metric gives bit-identical values at the work tree and at another
git revision (default ``2a622b7``).

Three seeded data sets, each evaluated for every registered metric at its default options (one
``receval.evaluate`` call per metric, with every side input given: categories, train, catalog,
baseline, item_groups, user_groups):

* ``strings``: string ids (``u00042``, ``i0137``), the rows of every input shuffled, coarse
  scores (one decimal: tie groups are the rule), graded ratings 1..5;
* ``sorted-int``: integer ids, the recommendations grouped by user and ranked, distinct scores;
* ``int-shuffled``: integer ids spread over 63 bits, rows shuffled, coarse scores.

Each side runs in its own subprocess (``PYTHONPATH`` = that revision's ``src``, checked out with
``git worktree add --detach``). Compared exactly: each value (``float.hex``), the per-user
values (bytes of the array), the users, or the error class and message when the metric refuses
the data (e.g. ``ties=average`` on a metric with no tie-averaged value: such a metric is then
also evaluated with ``ties="item"``).

    python benchmarks/check_values.py                 # against 2a622b7
    python benchmarks/check_values.py --against HEAD~3 --users 3000
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SPECIAL = {
    "mae": "mae(missing=skip)",
    "rmse": "rmse(missing=skip)",
    "bias_disparity": "bias_disparity(icat=a,ugroup=x)@10",
    "unrepeated": "unrepeated(dup=keep)@10",
}


def make(kind: str, n_users: int, seed: int = 0) -> dict:
    """Seeded inputs of one kind (see the module docstring) as polars frames."""
    import polars as pl

    rng = np.random.default_rng(seed)
    n_items, width = 400, 20
    users = np.arange(n_users)
    truth_u, truth_i, rating = [], [], []
    rec_u, rec_i, score = [], [], []
    for u in users:
        items = rng.choice(n_items, size=width + 8, replace=False)
        n_t = rng.integers(1, 9)
        t = np.concatenate([rng.choice(items[:width], size=min(n_t, width), replace=False), items[width:width + 2]])
        truth_u += [u] * len(t)
        truth_i += list(t)
        rating += list(rng.integers(1, 6, len(t)).astype(float))
        n_r = rng.integers(1, width + 1)
        rec_u += [u] * n_r
        rec_i += list(items[:n_r])
        s = np.round(rng.random(n_r), 1) if kind != "sorted-int" else np.sort(rng.random(n_r))[::-1] + u
        score += list(s)
    # users with truth only, and recommendation users outside the truth
    recs = pl.DataFrame({"user_id": rec_u, "item_id": rec_i, "score": score})
    extra = pl.DataFrame({"user_id": [n_users + 1] * 3, "item_id": [1, 2, 3], "score": [0.5, 0.4, 0.3]})
    recs = pl.concat([recs, extra.cast(recs.schema)])
    truth = pl.DataFrame({"user_id": truth_u + [n_users + 2], "item_id": truth_i + [5], "rating": rating + [4.0]})
    train = pl.DataFrame({"user_id": rng.integers(0, n_users, 20 * n_users), "item_id": rng.integers(0, n_items, 20 * n_users)})
    baseline = recs.with_columns(pl.col("item_id").shuffle(seed=seed + 1))
    categories = pl.DataFrame({"item_id": np.arange(n_items), "category": [f"c{i % 7}" for i in range(n_items)]})
    item_groups = pl.DataFrame({"item_id": np.arange(n_items), "group": ["a" if i % 3 else "b" for i in range(n_items)]})
    user_groups = pl.DataFrame({"user_id": users, "group": ["x" if u % 2 else "y" for u in users]})
    catalog = pl.DataFrame({"item_id": np.arange(n_items)})
    frames = {"recs": recs, "truth": truth, "train": train, "baseline": baseline, "categories": categories,
              "item_groups": item_groups, "user_groups": user_groups, "catalog": catalog}
    if kind == "strings":
        def ids(df: pl.DataFrame) -> pl.DataFrame:
            out = df
            if "user_id" in df.columns:
                out = out.with_columns(("u" + pl.col("user_id").cast(pl.String).str.zfill(5)).alias("user_id"))
            if "item_id" in df.columns:
                out = out.with_columns(("i" + pl.col("item_id").cast(pl.String).str.zfill(4)).alias("item_id"))
            return out
        frames = {k: ids(v) for k, v in frames.items()}
    elif kind == "int-shuffled":
        mult = np.int64(0x9E3779B97F4A7C1)  # ids spread over 63 bits, order scrambled

        def wide(df: pl.DataFrame) -> pl.DataFrame:
            out = df
            for c in ("user_id", "item_id"):
                if c in df.columns:
                    out = out.with_columns((pl.col(c).cast(pl.Int64) * mult % (2**62) + 7).alias(c))
            return out
        frames = {k: wide(v) for k, v in frames.items()}
    if kind != "sorted-int":
        frames = {k: v.sample(fraction=1.0, shuffle=True, seed=seed + 7) for k, v in frames.items()}
    return frames


def specs() -> list[str]:
    import receval.metrics  # noqa: F401 - registers the metrics
    from receval.registry import registered

    out = []
    for name, m in sorted(registered().items()):
        out.append(SPECIAL.get(name, f"{name}@10" if m.needs_k and not m.optional_k else name))
    return out


def child(n_users: int) -> dict:
    import warnings

    import receval

    warnings.simplefilter("ignore")
    out: dict = {}
    for kind in ("strings", "sorted-int", "int-shuffled"):
        f = make(kind, n_users)
        side = {k: f[k] for k in ("train", "baseline", "categories", "item_groups", "user_groups")}
        side["catalog"] = f["catalog"]["item_id"].to_list()
        todo = [(spec, {}) for spec in specs()]
        while todo:
            spec, kw = todo.pop(0)
            key = f"{kind} {spec}" + "".join(f" {k}={v}" for k, v in kw.items())
            try:
                r = receval.evaluate(f["recs"], f["truth"], [spec], **side, **kw)
                e = r.entries[0] if hasattr(r, "entries") else None
                vals = {k: float(v).hex() for k, v in r.values.items()}
                pu = getattr(e, "per_user", None)
                out[key] = {
                    "values": vals,
                    "per_user": None if pu is None else hashlib.sha256(np.ascontiguousarray(pu, dtype=np.float64).tobytes()).hexdigest(),
                    "users": hashlib.sha256(np.asarray(r.user_ids).astype(str).astype("U").tobytes()).hexdigest(),
                }
            except Exception as exc:  # noqa: BLE001 - a refusal is an outcome to compare
                out[key] = {"error": f"{type(exc).__name__}: {exc}"}
                if type(exc).__name__ == "TiesRefused" and not kw:  # and the value under a tie rule that has one
                    todo.append((spec, {"ties": "item"}))
    return out


def run(src: Path, n_users: int) -> dict:
    p = subprocess.run([sys.executable, __file__, "--child", "--users", str(n_users), "--src", str(src)],
                       capture_output=True, text=True, env={"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin"})
    if p.returncode:
        raise SystemExit(p.stderr)
    return json.loads(p.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--against", default="2a622b7")
    ap.add_argument("--users", type=int, default=1500)
    ap.add_argument("--child", action="store_true")
    ap.add_argument("--src", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        print(json.dumps(child(a.users)))
        return 0
    git = ["git", "-C", str(HERE.parent)]
    tmp = Path(tempfile.mkdtemp(prefix="receval-check-"))
    subprocess.run([*git, "worktree", "add", "--detach", str(tmp / "tree"), a.against], check=True, capture_output=True)
    try:
        old = run(tmp / "tree" / "src", a.users)
        new = run(HERE.parent / "src", a.users)
    finally:
        subprocess.run([*git, "worktree", "remove", "--force", str(tmp / "tree")], capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)
    diff = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
    n_err = sum("error" in v for v in new.values())
    print(f"{len(new)} (data set, metric) outcomes at {a.against} and the work tree; {len(new) - n_err} values, "
          f"{n_err} refusals; different: {len(diff)}")
    for k in diff[:20]:
        print(f"  {k}: {a.against} {old.get(k)} / work tree {new.get(k)}")
    return 1 if diff else 0


if __name__ == "__main__":
    if "--src" in sys.argv:
        sys.path.insert(0, sys.argv[sys.argv.index("--src") + 1])
    sys.exit(main())
