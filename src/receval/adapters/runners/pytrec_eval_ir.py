"""Peer runner: pytrec_eval (PyPI pytrec-eval-terrier 0.5.11) for the IR measures Rprec and bpref
at relevance level 4, so truth rows rated 1..3 are judged non-relevant.

Public API used: pytrec_eval.RelevanceEvaluator(qrels, {"Rprec", "bpref"}, relevance_level=4)
.evaluate(run), with qrels = {str(user): {str(item): int(rating)}} (every truth row, graded)
and run = {str(user): {str(item): score}}. Needs integer ratings (else nothing is emitted).
Users and ordering as in pytrec_eval.py (the run's queries that have qrels; ties by docno
descending string order). Emitted names: "Rprec(l4)", "bpref(l4)", "Rprec", "bpref"
(the last two with relevance_level=1: every truth row relevant).
"""
import _common  # noqa: E402  (first: it drops this folder from sys.path, see _common.py)
Result, load, all_integer = _common.Result, _common.load, _common.all_integer

from importlib.metadata import version  # noqa: E402

import numpy as np  # noqa: E402
import pytrec_eval  # noqa: E402


def emit(res, per_query: dict, key: str, name: str) -> None:
    per = {int(u): vals[key] for u, vals in per_query.items() if key in vals}
    res.add(name, float(np.mean(list(per.values()))) if per else float("nan"), per)


def main() -> None:
    recs, truth, params, out = load()
    res = Result("pytrec_eval", version("pytrec-eval-terrier"))
    if not (all_integer(truth["rating"]) and len(truth)):
        res.note("ratings are not all integers: nothing emitted")
        res.write(out)
        return
    for level, suffix in ((4, "(l4)"), (1, "")):
        with res.timed("prepare_s"):
            qrels, run = _common.nested_dicts(truth, recs, graded=True)
            ev = pytrec_eval.RelevanceEvaluator(qrels, {"Rprec", "bpref"}, relevance_level=level)
        with res.timed("compute_s"):
            pq = ev.evaluate(run)
        for m in ("Rprec", "bpref"):
            emit(res, pq, m, f"{m}{suffix}")
    res.write(out)


if __name__ == "__main__":
    main()
