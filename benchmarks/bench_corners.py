"""Issue 22's slow corners, timed at the work tree and (optionally) at another git revision in
the same run, each in its own fresh process, the processes interleaved.

    PYTHONPATH=src python benchmarks/bench_corners.py [--against REV] [--repeat 3] [--write]

Corners:

* **αβ-nDCG** (and α-nDCG) end to end against NDCG: ``receval.evaluate`` from polars frames,
  100,000 users × 20 (``bench_diversity.make_data``: 20 categories, 1–3 per item, ~16 rated
  truth items per user), ``ab_ndcg(rmax=5)@20`` / ``alpha_ndcg@20`` vs ``ndcg@20``, rel = 4.
* **sampled_evaluate** on MovieLens: the bundled ml-latest-small, random 80/20 split (seed 0),
  relevant test rows (rating >= 4.5) of warm users and items, EASE (λ = 0.5) scores of every
  train item, the user's train items excluded from the negatives, n = 100, seed 0, hitrate@10,
  ndcg@10, mrr; the uncorrected + full estimators, then the default three (the BV correction:
  one system per candidate-set size) in a fresh process, then again in the same process.

``--against REV`` checks REV out in a temporary ``git worktree add --detach`` and runs the
same measurements with ``PYTHONPATH=<worktree>/src``; the values of both are compared. Writes
``benchmarks/out/corners.json``; ``--write`` also rewrites the corners section of
``benchmarks/RESULTS.md``. Not a test: numbers depend on the machine (a shared 2-core VM:
wall times are noisy, so CPU times of the process are reported beside them).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


# ------------------------------------------------------------------------------------ child


def _timed(fn):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - w, time.process_time() - c, out


def child_aspects(users: int, repeat: int) -> dict:
    import numpy as np
    import polars as pl

    sys.path.insert(0, str(HERE))
    import receval
    from bench_diversity import make_data

    d = make_data(U=users, K=20)
    items = d["items"]
    U, K = items.shape
    uu, jj = np.nonzero(items >= 0)
    recs = pl.DataFrame({"user_id": uu, "item_id": items[uu, jj], "score": (K - jj).astype(np.float64)})
    off = d["offsets"]
    truth = pl.DataFrame({"user_id": np.repeat(np.arange(U), np.diff(off)), "item_id": d["t_item"], "rating": d["t_rating"]})
    ai, ac = d["aspects"].nonzero()
    cats = pl.DataFrame({"item_id": ai.astype(np.int64), "category": ac.astype(np.int64).astype(str)})
    specs = {"ndcg@20": {}, "alpha_ndcg@20": {"categories": cats}, "ab_ndcg(rmax=5)@20": {"categories": cats}}
    runs: dict[str, list] = {s: [] for s in specs}
    values = {}
    receval.evaluate(recs, truth, ["ndcg@20"], rel=4.0)  # warm-up (imports)
    for _ in range(repeat):  # interleaved: the machine's moods fall on every metric alike
        for spec, side in specs.items():
            w, c, res = _timed(lambda spec=spec, side=side: receval.evaluate(recs, truth, [spec], rel=4.0, **side))
            runs[spec].append((w, c))
            values[spec] = float(res[spec])
    out = {}
    for spec, r in runs.items():
        out[spec] = {"wall_median_s": statistics.median(x for x, _ in r), "wall_min_s": min(x for x, _ in r),
                     "cpu_min_s": min(c for _, c in r), "value": values[spec]}
    return out


def movielens_case():
    import polars as pl

    from receval.data import load_bundled
    from receval.data.protocol import prepare_study
    from receval.models import EASE

    study = prepare_study(load_bundled(), split="random", seed=0, threshold=4.5)
    model = EASE(lambda_=0.5, binary=True).fit(study.train)
    users = study.test_users
    S, items = model.score(users)
    row = {u: j for j, u in enumerate(users.tolist())}
    exclude = study.train.filter(pl.col("user_id").is_in(users.tolist())).select("user_id", "item_id")
    return (lambda u: S[row[u]]), study.test.select("user_id", "item_id", "rating"), items, exclude


def child_sampled() -> dict:
    from receval.sampled import sampled_evaluate

    score, truth, items, exclude = movielens_case()
    specs = ["hitrate@10", "ndcg@10", "mrr"]
    kw = dict(catalog=items, n=100, seed=0, exclude=exclude)
    w0, c0, quick = _timed(lambda: sampled_evaluate(score, truth, specs, estimators=("uncorrected", "full"), **kw))
    w1, c1, full = _timed(lambda: sampled_evaluate(score, truth, specs, **kw))
    w2, c2, again = _timed(lambda: sampled_evaluate(score, truth, specs, **kw))
    assert again.values == full.values
    return {"uncorrected_full": {"wall_s": w0, "cpu_s": c0}, "default": {"wall_s": w1, "cpu_s": c1},
            "default_again": {"wall_s": w2, "cpu_s": c2}, "instances": full.instances, "items": len(items),
            "values": {f"{s}|{e}": v for (s, e), v in full.values.items()}}


def child(args) -> None:
    out: dict = {}
    if "ab" in args.only:
        out["aspects"] = child_aspects(args.users, args.repeat)
    if "sampled" in args.only:
        out["sampled"] = child_sampled()
    import numpy as np

    import receval

    out["meta"] = {"receval": receval.__version__, "numpy": np.__version__, "python": platform.python_version(),
                   "receval_path": Path(receval.__file__).parent.name}
    Path(args.child).write_text(json.dumps(out))


# ----------------------------------------------------------------------------------- parent


def _run_child(src: Path, only: list[str], users: int, repeat: int) -> dict:
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        dest = f.name
    env = dict(os.environ, PYTHONPATH=str(src))
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", dest, "--only", *only, "--users", str(users),
           "--repeat", str(repeat)]
    subprocess.run(cmd, env=env, check=True)
    try:
        return json.loads(Path(dest).read_text())
    finally:
        os.unlink(dest)


def _merge(rounds: list[dict]) -> dict:
    """Several child runs of one tree: the best (min) and median over the runs."""
    out: dict = {"meta": rounds[0]["meta"]}
    if "aspects" in rounds[0]:
        out["aspects"] = {}
        for spec in rounds[0]["aspects"]:
            rs = [r["aspects"][spec] for r in rounds]
            out["aspects"][spec] = {"wall_median_s": statistics.median(r["wall_median_s"] for r in rs),
                                    "wall_min_s": min(r["wall_min_s"] for r in rs),
                                    "cpu_min_s": min(r["cpu_min_s"] for r in rs), "value": rs[0]["value"]}
    if "sampled" in rounds[0]:
        s = [r["sampled"] for r in rounds]
        out["sampled"] = {k: {"wall_s": min(x[k]["wall_s"] for x in s), "cpu_s": min(x[k]["cpu_s"] for x in s)}
                          for k in ("uncorrected_full", "default", "default_again")}
        out["sampled"].update(instances=s[0]["instances"], items=s[0]["items"], values=s[0]["values"])
    return out


def _rows(res: dict, label: str) -> list[list[str]]:
    rows = []
    a = res.get("aspects")
    if a:
        base = a["ndcg@20"]
        for spec, v in a.items():
            rows.append([label, f"`{spec}` end to end", f"{v['wall_median_s']:.3f} s (min {v['wall_min_s']:.3f})",
                         f"{v['cpu_min_s']:.3f} s",
                         "1" if spec == "ndcg@20" else f"{v['wall_min_s'] / base['wall_min_s']:.2f}× / {v['cpu_min_s'] / base['cpu_min_s']:.2f}×"])
    s = res.get("sampled")
    if s:
        for k, what in (("uncorrected_full", "uncorrected + full"), ("default", "default estimators (BV), fresh process"),
                        ("default_again", "default estimators, again (cached)")):
            rows.append([label, f"sampled_evaluate: {what}", f"{s[k]['wall_s']:.2f} s", f"{s[k]['cpu_s']:.2f} s", ""])
    return rows


def _compare(a: dict, b: dict) -> list[str]:
    notes = []
    if "aspects" in a and "aspects" in b:
        for spec in a["aspects"]:
            x, y = a["aspects"][spec]["value"], b["aspects"][spec]["value"]
            notes.append(f"{spec}: {'bit-identical' if x == y else f'differs by {abs(x - y):.1e}'} ({x!r})")
    if "sampled" in a and "sampled" in b:
        for key, x in a["sampled"]["values"].items():
            y = b["sampled"]["values"][key]
            notes.append(f"sampled {key}: {'bit-identical' if x == y else f'|Δ| = {abs(x - y):.1e}'} ({x!r})")
    return notes


def _table(rows: list[list[str]]) -> str:
    head = ["tree", "what", "wall", "CPU (process)", "× ndcg@20 (wall min / CPU)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def _write_results(text: str) -> None:
    from bench_core import write_section

    write_section("corners", text)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--against", default=None, help="a git revision to time beside the work tree")
    ap.add_argument("--only", nargs="+", default=["ab", "sampled"], choices=["ab", "sampled"])
    ap.add_argument("--users", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3, help="timed calls per metric per process")
    ap.add_argument("--rounds", type=int, default=2, help="fresh processes per tree (interleaved)")
    ap.add_argument("--write", action="store_true", help="rewrite the corners section of RESULTS.md")
    ap.add_argument("--render", action="store_true", help="print (and with --write, write) the last run's benchmarks/out/corners.json")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args)
        return
    if args.render:
        saved = json.loads((HERE / "out" / "corners.json").read_text())
        _report(saved["results"], saved["values"], saved["meta"], args.write)
        return
    trees = {"work tree": ROOT / "src"}
    tmp = None
    if args.against:
        tmp = tempfile.mkdtemp(prefix="receval-against-")
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", tmp, args.against], check=True)
        rev = subprocess.run(["git", "-C", tmp, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
        trees[f"{args.against} ({rev})" if rev != args.against else rev] = Path(tmp) / "src"
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "src"], capture_output=True, text=True).stdout.strip()
    try:
        rounds: dict[str, list] = {t: [] for t in trees}
        for _ in range(args.rounds):
            for label, src in trees.items():
                print(f"... {label}", file=sys.stderr)
                rounds[label].append(_run_child(src, args.only, args.users, args.repeat))
    finally:
        if tmp:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", tmp], check=False)
    res = {label: _merge(r) for label, r in rounds.items()}
    labels = list(res)
    notes = _compare(res[labels[0]], res[labels[1]]) if len(labels) == 2 else []
    meta = {"head": head + (" + uncommitted changes" if dirty else ""), "machine": f"{platform.machine()}, {os.cpu_count()} cores",
            "load_avg_after": [round(x, 2) for x in os.getloadavg()], "rounds": args.rounds, "repeat": args.repeat,
            "users": args.users, "python": platform.python_version()}
    out = HERE / "out" / "corners.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"meta": meta, "results": res, "values": notes}, indent=2))
    print(f"wrote {out}")
    _report(res, notes, meta, args.write)


def _report(res: dict, notes: list[str], meta: dict, write: bool) -> None:
    rows = [row for label in res for row in _rows(res[label], label)]
    labels = list(res)
    table = _table(rows)
    print(table)
    for n in notes:
        print("  " + n)
    load = meta["load_avg_after"][0]
    print(f"work tree = {meta['head']}; load average after the run {load:.1f}")
    if write:
        text = ["## Slow corners (`benchmarks/bench_corners.py`)", "",
                f"Work tree at {meta['head']}" + (f", against {labels[1]}" if len(labels) == 2 else "")
                + f", each tree in {meta['rounds']} fresh processes, interleaved; αβ-nDCG rows: "
                f"{meta['repeat']} calls per metric per process (wall: median of the per-process medians, and the minimum); "
                "CPU = the process's CPU time, the minimum (less sensitive to the other work on this shared 2-core VM). "
                "Sampled rows: the best process.", "",
                table, "", "Values (work tree vs the other revision):", ""] + [f"* {n}" for n in notes] + [
                "", f"Machine: {meta['machine']} (shared; 1-minute load average after the run: {load:.1f}). "
                f"Python {meta.get('python', platform.python_version())}."]
        _write_results("\n".join(text))
        print("rewrote the corners section of RESULTS.md")


if __name__ == "__main__":
    main()
