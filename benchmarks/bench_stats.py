"""Benchmark: the statistics of ``receval runs`` at the scale of the data (issue 34).

Two scenarios, each timed in a fresh subprocess per side (the work tree, and with ``--against
REV`` that git revision's ``src``, extracted with ``git archive`` into a temporary folder), the
sides alternating when repeated:

* **10k**: 2 runs on 10,000 users (100 recommendations each: 1M rows a run, about 10 relevant
  truth items a user), 5 metrics (ndcg, recall, precision, mrr, map at 10), as ``receval runs``
  gets them: CSV files with string ids, rows shuffled. Timed apart: ``evaluate_runs`` on the
  files (the evaluation, what ``--ci none`` costs) and ``Runs.compare()`` with its defaults
  (paired t-test, Holm, 95% BCa intervals, 10,000 resamples, seed 0, scipy imported first):
  the statistics' cost as a multiple of the evaluation's.
* **100k**: 3 runs × 100,000 users × 5 metrics of per-user values (seeded, zero-inflated like
  top-k metrics), ``receval.stats.compare`` with its defaults (BCa + Holm): 15 value intervals
  and 15 difference intervals. Timed at the revision only with ``--full``.

Each side also writes every interval endpoint and p-value; the report says the largest
relative difference between the sides (the same seeded numbers, to rounding).

    python benchmarks/bench_stats.py --against dc29fa5          # both scenarios, the revision on 10k
    python benchmarks/bench_stats.py --against dc29fa5 --full   # the revision on 100k too

Writes ``benchmarks/out/stats.json`` and the stats section of ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
METRICS = ["ndcg@10", "recall@10", "precision@10", "mrr@10", "map@10"]


def runs_data(n_users: int = 10_000, k: int = 100, n_items: int = 20_000, seed: int = 0):
    """(truth, {"a": recs, "b": recs}) as polars frames: about 10 relevant items a user; run
    ``a`` ranks a truth item into its list with probability 0.3, ``b`` with 0.25."""
    import polars as pl

    rng = np.random.default_rng(seed)
    tu = np.repeat(np.arange(n_users), 10)
    truth = pl.DataFrame({"user_id": tu, "item_id": rng.integers(0, n_items, len(tu))}).unique(maintain_order=True)
    runs = {}
    for name, q in (("a", 0.3), ("b", 0.25)):
        users = np.repeat(np.arange(n_users), k)
        items = rng.integers(0, n_items, len(users))
        hit = rng.random(len(users)) < q / 10
        t_items = truth["item_id"].to_numpy()
        items = np.where(hit, t_items[rng.integers(0, len(t_items), len(users))], items)
        runs[name] = pl.DataFrame({"user_id": users, "item_id": items, "score": rng.random(len(users))}).unique(
            ["user_id", "item_id"], maintain_order=True)
    return truth, runs


def runs_files(folder: Path) -> tuple[str, dict[str, str]]:
    """:func:`runs_data` as CSV files with string ids (``u12``, ``i345``), rows shuffled."""
    import polars as pl

    folder.mkdir(parents=True, exist_ok=True)
    truth, runs = runs_data()

    def strings(df: pl.DataFrame, seed: int) -> pl.DataFrame:
        df = df.with_columns(pl.format("u{}", "user_id").alias("user_id"), pl.format("i{}", "item_id").alias("item_id"))
        return df.sample(fraction=1.0, shuffle=True, seed=seed)

    if not (folder / "truth.csv").exists():
        strings(truth, 1).write_csv(folder / "truth.csv")
        for i, (name, df) in enumerate(runs.items()):
            strings(df, 2 + i).write_csv(folder / f"{name}.csv")
    return str(folder / "truth.csv"), {name: str(folder / f"{name}.csv") for name in runs}


def per_user(n_users: int = 100_000, n_runs: int = 3, seed: int = 0) -> dict:
    """Per-user values of ``n_runs`` runs on 5 metrics: zero for most users, else in (0, 1]."""
    rng = np.random.default_rng(seed)
    out = {}
    for r in range(n_runs):
        out[f"run{r}"] = {m: np.where(rng.random(n_users) < 0.35 + 0.03 * r, rng.random(n_users), 0.0) for m in METRICS}
    return out


def child(scenario: str) -> dict:
    import warnings

    warnings.simplefilter("ignore")
    from receval import stats

    if scenario == "10k":
        import scipy.stats  # noqa: F401  (imported once by any process: not the statistics' cost)

        from receval.runs import evaluate_runs

        truth, runs = runs_files(OUT / "data" / "stats10k")
        t0 = time.perf_counter()
        r = evaluate_runs(runs, truth, METRICS)
        t1 = time.perf_counter()
        c = r.compare()
        t2 = time.perf_counter()
        out = {"evaluate_s": t1 - t0, "stats_s": t2 - t1}
    else:
        import scipy.stats  # noqa: F401

        pu = per_user()
        t1 = time.perf_counter()
        c = stats.compare(pu, progress=False)
        t2 = time.perf_counter()
        out = {"stats_s": t2 - t1}
    nums = [x for iv in c.intervals.values() for x in (iv.low, iv.high)]
    nums += [x for t in c.pairs for x in (t.p, t.p_adjusted, *((t.ci.low, t.ci.high) if t.ci else ()))]
    out["numbers"] = nums
    return out


def run_side(src: Path, scenario: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(src))
    res = subprocess.run([sys.executable, __file__, "--child", scenario], env=env, capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit(res.stderr)
    return json.loads(res.stdout.strip().splitlines()[-1])


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(HERE.parent), *args], capture_output=True, text=True, check=True).stdout.strip()


def rel_diff(a: list[float], b: list[float]) -> float | None:
    if len(a) != len(b):
        return None
    x, y = np.array(a, dtype=float), np.array(b, dtype=float)
    ok = ~(np.isnan(x) & np.isnan(y))
    return float(np.max(np.abs(x[ok] - y[ok]) / np.maximum(np.abs(x[ok]), 1e-12), initial=0.0))


def write_section(name: str, body: str) -> None:
    from bench_core import write_section as write

    write(name, body)


def closing_note(res: dict) -> str:
    """The two figures of issue 34 in words, with the revision's beside them when timed."""
    ten, hundred = res["runs"]["10k"], res["runs"]["100k"]
    cur = ten["current"]
    ratio = cur["stats_s"] / cur["evaluate_s"]
    text = (f"The two figures of issue 34: **2 runs × 10k users**: the default interval and tests cost "
            f"{cur['stats_s']:.2f} s beside an evaluation of {cur['evaluate_s']:.2f} s ({ratio:.2f}×, "
            f"{'within' if ratio <= 2 else 'over'} the 2× of the issue)")
    rev = res["against"]
    if rev and rev in ten:
        r = ten[rev]
        text += f"; the revision {rev}: {r['stats_s']:.2f} s beside {r['evaluate_s']:.2f} s ({r['stats_s'] / r['evaluate_s']:.2f}×)"
    s100 = hundred["current"]["stats_s"]
    text += (f". **3 runs × 100k users × 5 metrics**, default BCa + Holm: {s100:.1f} s "
             f"({'under' if s100 < 60 else 'over'} a minute")
    if rev and rev in hundred:
        text += f"; the revision: {hundred[rev]['stats_s']:.1f} s"
    text += ")."
    diffs = [d for by in res["runs"].values() if rev in by
             for d in [rel_diff(by[rev]["numbers"], by["current"]["numbers"])] if d is not None]
    if diffs:
        text += f" Every interval endpoint and p-value equals the revision's to {max(diffs):.1e} (relative)."
    return text


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--child", metavar="SCENARIO")
    ap.add_argument("--against", metavar="REV", help="time git revision REV beside the work tree")
    ap.add_argument("--full", action="store_true", help="with --against: time REV on the 100k scenario too")
    ap.add_argument("--no-write", action="store_true")
    a = ap.parse_args(argv)
    if a.child:
        print(json.dumps(child(a.child)))
        return
    sides = {"current": HERE.parent / "src"}
    tmp = None
    if a.against:
        sha = _git("rev-parse", "--short", a.against)
        tmp = Path(tempfile.mkdtemp(prefix=f"receval-stats-{sha}-"))
        archive = subprocess.run(["git", "-C", str(HERE.parent), "archive", sha, "src"], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive.stdout, check=True)
        sides[sha] = tmp / "src"
    res: dict = {"head": _git("rev-parse", "--short", "HEAD"), "against": a.against and list(sides)[-1], "runs": {},
                 "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "load": [os.getloadavg()[0]]}
    for scenario in ("10k", "100k"):
        for name, src in (sides.items() if scenario == "10k" or a.full else [("current", sides["current"])]):
            got = run_side(src, scenario)
            res["runs"].setdefault(scenario, {})[name] = got
            print(scenario, name, {k: round(v, 2) for k, v in got.items() if k.endswith("_s")}, flush=True)
    res["load"].append(os.getloadavg()[0])
    if tmp is not None:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    OUT.mkdir(exist_ok=True)
    (OUT / "stats.json").write_text(json.dumps(res, indent=1))
    lines = ["## Statistics at the scale of the data (`benchmarks/bench_stats.py`, issue 34)", "",
             "`receval runs`' default statistics (paired t-test, Holm, 95% BCa intervals, 10,000 resamples, seed 0); "
             f"one fresh process per side and scenario; measured {res['when']} on the shared 2-core machine, load "
             f"average {res['load'][0]:.1f} at the start and {res['load'][1]:.1f} at the end.", "",
             "| scenario | side | evaluation | statistics | statistics / evaluation | numbers vs current |",
             "|---|---|---|---|---|---|"]
    for scenario, by in res["runs"].items():
        cur = by["current"]["numbers"]
        for name, r in by.items():
            ev = r.get("evaluate_s")
            ratio = f"{r['stats_s'] / ev:.2f}×" if ev else "–"
            same = "–" if name == "current" else (
                f"max relative difference {rel_diff(r['numbers'], cur):.1e}" if rel_diff(r["numbers"], cur) is not None
                else "other count")
            label = {"10k": "2 runs × 10k users × 5 metrics (1M rows a run)",
                     "100k": "3 runs × 100k users × 5 metrics (per-user values)"}[scenario]
            lines.append(f"| {label} | {name if name != 'current' else 'current (' + res['head'] + ')'} | "
                         f"{f'{ev:.2f} s' if ev else '–'} | {r['stats_s']:.2f} s | {ratio} | {same} |")
    lines += ["", closing_note(res)]
    body = "\n".join(lines)
    print(body)
    if not a.no_write:
        sys.path.insert(0, str(HERE))
        write_section("stats", body)


if __name__ == "__main__":
    main()
