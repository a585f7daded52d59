"""Peer runner: ranx (AmenRa/ranx, PyPI ranx 0.3.21).

Public API used: ranx.Qrels(dict), ranx.Run(dict), ranx.evaluate(qrels, run, metrics) after
run.make_comparable(qrels); per-query values read back from run.scores.
Input preparation (the natural ranx input is nested dicts with string ids):
  qrels = {str(user): {str(item): 1}} for every truth row (binary), run = {str(user): {str(item): score}}.
  Duplicate (user,item) rows collapse in the dicts (last row wins). ranx orders a run by score
  itself (our rank column is not used); ties keep whatever order its sort leaves.
  make_comparable=True: truth users missing from the run get an empty result (score 0),
  run users without qrels are dropped -> users = truth users.
Graded variants (only if all truth ratings are integers): qrels relevance = int(rating);
ranx drops relevance-0 rows as non-relevant.
Emitted names: hits@k hit_rate@k precision@k recall@k f1@k mrr@k map@k ndcg@k ndcg_burges@k,
  r-precision (no k), map (no cut-off), mrr (no cut-off),
  and graded: "ndcg(graded)@k", "ndcg_burges(graded)@k", "map(graded)@k".
"""
import sys
import warnings
from pathlib import Path

import _common  # noqa: E402  (first: it drops this folder from sys.path, see _common.py)
Result, load, all_integer = _common.Result, _common.load, _common.all_integer

from importlib.metadata import version  # noqa: E402

from ranx import Qrels, Run, evaluate  # noqa: E402

BASE = ["hits", "hit_rate", "precision", "recall", "f1", "mrr", "map", "ndcg", "ndcg_burges"]


def build(truth, recs, graded: bool):
    q, rn = _common.nested_dicts(truth, recs, graded)
    return Qrels(q), Run(rn)


def run_metrics(res, qrels, run, names, suffix=""):
    run = run.make_comparable(qrels)  # public: empty results for missing queries, drop extra
    scores = evaluate(qrels, run, names, return_mean=True, save_results_in_run=True)
    if not isinstance(scores, dict):
        scores = {names[0]: scores}
    for m in names:
        base, _, k = m.partition("@")
        out_name = f"{base}{suffix}@{k}" if k else f"{base}{suffix}"
        per = {int(u): float(v) for u, v in run.scores[m].items()}
        res.add(out_name, scores[m], per)


def main() -> None:
    recs, truth, params, out = load()
    res = Result("ranx", version("ranx"))
    ks = params["k"]
    with res.timed("prepare_s"):
        qrels, run = build(truth, recs, graded=False)
    names = [f"{m}@{k}" for m in BASE for k in ks] + ["r-precision", "map", "mrr"]
    with res.timed("compute_s"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_metrics(res, qrels, run, names)
    if all_integer(truth["rating"]) and len(truth):
        with res.timed("prepare_s"):
            gq, grun = build(truth, recs, graded=True)
        gnames = [f"{m}@{k}" for m in ["ndcg", "ndcg_burges", "map"] for k in ks]
        with res.timed("compute_s"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            run_metrics(res, gq, grun, gnames, suffix="(graded)")
    else:
        res.note("graded variants skipped: ratings are not all integers")
    res.write(out)


if __name__ == "__main__":
    main()
