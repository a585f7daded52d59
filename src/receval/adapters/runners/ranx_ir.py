"""Peer runner: ranx 0.3.21 for the IR measures r-precision, bpref and rbp.

Public API used: ranx.Qrels(dict), ranx.Run(dict), run.make_comparable(qrels),
ranx.evaluate(qrels, run, names, save_results_in_run=True); per-query values from run.scores.
qrels = {str(user): {str(item): int(rating)}} (graded; needs integer ratings), so ranx's
``-l4`` suffix makes ratings >= 4 relevant and 1..3 judged non-relevant; rbp.<p> reads the
whole list and weights a hit by its qrels grade (ranx's graded RBP).
Emitted names: "r-precision-l4", "bpref-l4", "rbp.<p>-l<l>" for p in 5, 8, 95 and l in 1, 4,
and the binary "rbp.<p>" (qrels 1 for every truth row); "bpref-l4(per-query)" evaluates
one query at a time (see the note in main).
"""
import warnings

import _common  # noqa: E402  (first: it drops this folder from sys.path, see _common.py)
Result, load, all_integer = _common.Result, _common.load, _common.all_integer

from importlib.metadata import version  # noqa: E402

from ranx import Qrels, Run, evaluate  # noqa: E402


def run_metrics(res, qrels, run, names, prefix=""):
    run = run.make_comparable(qrels)
    scores = evaluate(qrels, run, names, return_mean=True, save_results_in_run=True)
    if not isinstance(scores, dict):
        scores = {names[0]: scores}
    for m in names:
        per = {int(u): float(v) for u, v in run.scores[m].items()}
        res.add(prefix + m, scores[m], per)


def main() -> None:
    recs, truth, params, out = load()
    res = Result("ranx", version("ranx"))
    with res.timed("prepare_s"):
        q, rn = _common.nested_dicts(truth, recs, graded=False)
    with res.timed("compute_s"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_metrics(res, Qrels(q), Run(rn), ["rbp.5", "rbp.8", "rbp.95"])
    if all_integer(truth["rating"]) and len(truth):
        with res.timed("prepare_s"):
            gq, grn = _common.nested_dicts(truth, recs, graded=True)
        names = ["r-precision-l4", "bpref-l4"] + [f"rbp.{p}-l{lvl}" for p in (5, 8, 95) for lvl in (1, 4)]
        with res.timed("compute_s"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            run_metrics(res, Qrels(gq), Run(grn), names)
        # bpref one query at a time: in a multi-query run ranx 0.3.21 returned 0 for some queries
        # whose single-query value is trec_eval's (seen on the parity data, cause not investigated)
        per = {}
        with res.timed("compute_s"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for u, items in gq.items():
                if u not in grn:
                    continue  # ranx cannot build a run without documents
                one = Run({u: grn[u]})
                per[int(u)] = float(evaluate(Qrels({u: items}), one, "bpref-l4"))
        vals = [v for v in per.values() if v == v]
        res.add("bpref-l4(per-query)", sum(vals) / len(vals) if len(vals) == len(per) else float("nan"), per)
    else:
        res.note("graded variants skipped: ratings are not all integers")
    res.write(out)


if __name__ == "__main__":
    main()
