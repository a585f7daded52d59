"""Peer runner: pytrec_eval (PyPI pytrec-eval-terrier 0.5.11; trec_eval C code).

Public API used: pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run), with
qrels = {str(user): {str(item): 1}} (binary, every truth row) and
run = {str(user): {str(item): score}} (duplicate (user,item) rows collapse, last wins).
trec_eval orders each query's docs by score, ties by docno in DESCENDING STRING order
(our rank column is ignored), and evaluates the whole run list (no -M cut).
Users: pytrec_eval evaluates the run's queries that have qrels; truth users without a run
vanish; run users without qrels are skipped. The mean written here is the plain mean over
the per-query results returned (what a user computes), so it is over truth ∩ run users.
Graded variants (only if all ratings are integers): qrels relevance = int(rating)
(relevance_level=1: grade >= 1 is relevant, 0 is judged non-relevant).
Emitted names: P@k recall@k ndcg_cut@k map_cut@k success@k, recip_rank, map, ndcg, Rprec
(the last four without cut-off), "ndcg_cut(graded)@k", "ndcg(graded)".
"""
import sys
from pathlib import Path

import _common  # noqa: E402  (first: it drops this folder from sys.path, see _common.py)
Result, load, all_integer = _common.Result, _common.load, _common.all_integer

from importlib.metadata import version  # noqa: E402

import numpy as np  # noqa: E402
import pytrec_eval  # noqa: E402

CUT = ["P", "recall", "ndcg_cut", "map_cut", "success"]
WHOLE = ["recip_rank", "map", "ndcg", "Rprec"]


def build(truth, recs, graded: bool):
    return _common.nested_dicts(truth, recs, graded)


def emit(res, per_query: dict, key: str, name: str) -> None:
    per = {int(u): vals[key] for u, vals in per_query.items() if key in vals}
    res.add(name, float(np.mean(list(per.values()))) if per else float("nan"), per)


def main() -> None:
    recs, truth, params, out = load()
    ks = params["k"]
    res = Result("pytrec_eval", version("pytrec-eval-terrier"))
    kspec = ",".join(str(k) for k in ks)
    measures = {f"{m}.{kspec}" for m in CUT} | set(WHOLE)
    with res.timed("prepare_s"):
        qrels, run = build(truth, recs, graded=False)
        ev = pytrec_eval.RelevanceEvaluator(qrels, measures)
    with res.timed("compute_s"):
        pq = ev.evaluate(run)
    for m in CUT:
        for k in ks:
            emit(res, pq, f"{m}_{k}", f"{m}@{k}")
    for m in WHOLE:
        emit(res, pq, m, m)
    if all_integer(truth["rating"]) and len(truth):
        with res.timed("prepare_s"):
            gq, grun = build(truth, recs, graded=True)
            gev = pytrec_eval.RelevanceEvaluator(gq, {f"ndcg_cut.{kspec}", "ndcg"})
        with res.timed("compute_s"):
            gpq = gev.evaluate(grun)
        for k in ks:
            emit(res, gpq, f"ndcg_cut_{k}", f"ndcg_cut(graded)@{k}")
        emit(res, gpq, "ndcg", "ndcg(graded)")
    else:
        res.note("graded variants skipped: ratings are not all integers")
    res.write(out)


if __name__ == "__main__":
    main()
