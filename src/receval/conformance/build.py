"""Build the shipped conformance suite: ``python -m receval.conformance.build [--out FILE]``.

Every plan of :func:`receval.conformance.generate.plans` is run through receval and through
the slow reference of :mod:`receval.conformance.reference` (which imports nothing of receval's
formulas). A plan is kept, with ``source: "reference"``, only where the reference agrees
(values to 1e-12, per user and mean; or both refuse); the hand-checked cases of
:mod:`receval.conformance.arithmetic` are kept with ``source: "arithmetic"`` where receval
gives their arithmetic. Everything else is left out and counted. Writes ``suite.json`` beside
this module (``src/receval/conformance/suite.json`` in a checkout) unless ``--out`` names a file.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from receval._version import __version__
from receval.conformance.arithmetic import ARITHMETIC, worked
from receval.conformance.generate import SCENARIOS, plans
from receval.conformance.reference.average import tie_average
from receval.conformance.reference.aspects import ALPHA_DEFAULTS, ASPECT_DEFAULTS, reference_alpha, reference_aspects
from receval.conformance.reference.auc import AUC_DEFAULTS, reference_auc
from receval.conformance.reference.dist import DIST_DEFAULTS, reference_dist
from receval.conformance.reference.errors import ERROR_DEFAULTS, reference_errors
from receval.conformance.reference.fairness import FAIRNESS_DEFAULTS, reference_fairness
from receval.conformance.reference.ir import IR_DEFAULTS, reference_ir
from receval.conformance.reference.lists import DEFAULTS as LIST_DEFAULTS
from receval.conformance.reference.lists2 import LISTS2_DEFAULTS, reference_lists2
from receval.conformance.reference.lists import reference_lists
from receval.conformance.reference.pop import POP_DEFAULTS, reference_pop
from receval.conformance.reference.ranking import METRIC_DEFAULTS, RefError, reference
from receval.conformance.suite import SIDE_COLUMNS, close, columns, run_receval, strip_version
from receval.engine import dialect_of
from receval.metrics import get_metric
from receval.resolve import decide_rel, resolve
from receval.signature import make_signature

#: the suite the package ships
SUITE = Path(__file__).resolve().parent / "suite.json"


def _dicts(sc: Any) -> dict[str, Any]:
    """The scenario's inputs in the reference's layout (user_id, item_id columns)."""
    side = sc.side()
    recs = sc.rec_rows()
    return {
        "recs": {"user_id": [r[0] for r in recs], "item_id": [r[1] for r in recs], "score": [r[2] for r in recs],
                 "rank": [r[3] for r in recs]},
        "truth": {"user_id": [r[0] for r in sc.truth], "item_id": [r[1] for r in sc.truth],
                  "rating": [float(r[2]) for r in sc.truth]},
        "train": {"user_id": [r[0] for r in side["train"]], "item_id": [r[1] for r in side["train"]]},
        "catalog": [r[0] for r in side["catalog"]],
        "categories": {"item_id": [r[0] for r in side["categories"]], "category": [r[1] for r in side["categories"]]},
        "baseline": {"user_id": [r[0] for r in side["baseline"]], "item_id": [r[1] for r in side["baseline"]],
                     "score": [r[2] for r in side["baseline"]], "rank": [r[3] for r in side["baseline"]]},
        "item_groups": {"item_id": [r[0] for r in side["item_groups"]], "group": [r[1] for r in side["item_groups"]]},
        "user_groups": {"user_id": [r[0] for r in side["user_groups"]], "group": [r[1] for r in side["user_groups"]]},
    }


def reference_outcome(metric: str, k: int | None, options: dict[str, Any], d: dict[str, Any]) -> Any:
    """(per_user, mean), "refused", or None (the reference does not cover this metric or option)."""
    if options.get("ties") == "average" and options.get("order") == "score":
        return _tie_averaged(metric, k, options, d) if metric in TIES_AVERAGED else None  # else no tie-averaged values
    try:
        if metric in METRIC_DEFAULTS:
            return reference(d["recs"], d["truth"], metric, k, options)  # type: ignore[arg-type]  # k as planned (None for a metric without cut-off)
        if metric in IR_DEFAULTS:
            return reference_ir(d["recs"], d["truth"], metric, k, options)
        if metric in POP_DEFAULTS:
            return reference_pop(d["recs"], d["truth"], metric, k, options, train=d["train"], catalog=d["catalog"],
                                 baseline=d["baseline"])
        if metric in FAIRNESS_DEFAULTS:
            return reference_fairness(d["recs"], d["truth"], metric, k, options, train=d["train"],
                                      item_groups=d["item_groups"], user_groups=d["user_groups"])
        if metric in AUC_DEFAULTS:
            return reference_auc(d["recs"], d["truth"], metric, k, options, train=d["train"], catalog=d["catalog"])
        if metric in ASPECT_DEFAULTS:
            return reference_aspects(d["recs"], d["truth"], metric, k, options, categories=d["categories"])
        if metric in ERROR_DEFAULTS:
            return reference_errors(d["recs"], d["truth"], metric, options)
        if metric in ALPHA_DEFAULTS:
            return reference_alpha(d["recs"], d["truth"], metric, k, options, categories=d["categories"])
        if metric in LISTS2_DEFAULTS:
            return reference_lists2(d["recs"], d["truth"], metric, k, options, categories=d["categories"],
                                    user_groups=d["user_groups"])
        if metric in DIST_DEFAULTS:
            return reference_dist(d["recs"], d["truth"], metric, k, options, train=d["train"], catalog=d["catalog"])
        if metric in LIST_DEFAULTS:
            return reference_lists(d["recs"], d["truth"], metric, k, options, train=d["train"], catalog=d["catalog"],
                                   baseline=d["baseline"], categories=d["categories"])
    except RefError:
        return "refused"
    except Exception:  # an option the reference does not know
        return None
    return None


#: the metrics whose ties=average the reference computes by brute force (reference/average.py), and those
#: of them (and novelty(unknown=skip)) that have a value only where no tie group straddles k
TIES_AVERAGED = frozenset({"arp", "aplt", "aclt", "novelty", "surprisal", "unseen", "unexpectedness", "serendipity",
                           "intersection", "popreo", "poprsp", "reo", "rsp", "bias_disparity"})
TOPK_SETTLED = frozenset({"popreo", "poprsp", "reo", "rsp", "bias_disparity"})


def _tie_averaged(metric: str, k: int | None, options: dict[str, Any], d: dict[str, Any]) -> Any:
    """The reference's ``ties=input`` value averaged over every ordering of the ties (or refused)."""
    inner = {**options, "ties": "input"}

    def run(recs: dict[str, Any]) -> Any:
        got = reference_outcome(metric, k, inner, {**d, "recs": recs})
        if got == "refused":
            raise RefError("refused")
        if got is None:
            raise LookupError("no reference")
        return got

    settled = metric in TOPK_SETTLED or (metric == "novelty" and options.get("unknown") == "skip")
    try:
        return tie_average(run, d["recs"], d["truth"], k, options, metric, settled=settled)  # type: ignore[arg-type]
    except RefError:
        return "refused"
    except Exception:  # no reference, or too many orderings
        return None


def agree(ours: dict[str, Any], ref: Any) -> bool:

    if ref is None:
        return False
    if ref == "refused":
        return "refusal" in ours and ours["refusal"] in ("DataError", "TiesRefused")
    if "refusal" in ours:
        return False
    per_user, mean = ref
    if not close(ours["mean"], float(mean)):
        return False
    if per_user is None:
        return not ours["per_user"]
    want = {str(u): float(v) for u, v in per_user.items() if v is not None}
    got = ours["per_user"]
    return set(want) == set(got) and all(close(got[u], want[u]) for u in want)


def build() -> tuple[dict[str, Any], Counter]:

    scenarios: dict[str, dict[str, Any]] = {}
    for name, scen in SCENARIOS.items():
        scenarios[name] = {"recs": [list(r) for r in scen.rec_rows()], "truth": [[u, i, float(r)] for u, i, r in scen.truth],
                           "side": {n: [list(r) for r in rows] for n, rows in scen.side().items()},
                           "tags": list(scen.tags), "why": scen.why}
    dicts = {name: _dicts(scen) for name, scen in SCENARIOS.items()}
    tally: Counter = Counter()
    out: list[dict[str, Any]] = []
    n_by_metric: Counter = Counter()
    every_side = frozenset(scenarios["basic"]["side"])
    for p in plans():
        r = decide_rel([resolve(p.spec, dialect=dialect_of(p.dialect))], True)[0]  # every scenario's truth is rated
        m = get_metric(p.metric)
        read = sorted(m.side_reads(dict(r.options), every_side) or ())
        sc = scenarios[p.scenario]

        side = {n: columns(sc["side"][n], SIDE_COLUMNS[n]) for n in read}
        recs = columns(sc["recs"], ("user", "item", "score", "rank"))
        truth = columns(sc["truth"], ("user", "item", "rating"))
        ours = run_receval(p.spec, p.dialect, recs, truth, side)
        ref = reference_outcome(p.metric, p.k, dict(r.options), dicts[p.scenario])
        if ref is None:
            tally["left out: no reference"] += 1
            continue
        if not agree(ours, ref):
            tally["left out: the reference disagrees"] += 1
            print(f"disagree: {p.spec} dialect={p.dialect} scenario={p.scenario}: receval {ours} reference {ref}", file=sys.stderr)
            continue
        n_by_metric[p.metric] += 1
        out.append(_case(f"{p.metric}-{n_by_metric[p.metric]:04d}", p.metric, p.spec, p.k, p.scenario, p.dialect,
                         list(p.tags), read, ours, "reference", ""))
        tally["reference"] += 1
    for a in [*ARITHMETIC, *worked()]:
        ours = run_receval(a.spec, a.dialect, columns(a.recs, ("user", "item", "score", "rank")),
                           columns(a.truth, ("user", "item", "rating")),
                           {n: columns(rows, SIDE_COLUMNS[n]) for n, rows in a.side.items()})
        if "refusal" in ours or not _same(ours, a.mean, a.per_user):
            tally["left out: receval disagrees with the arithmetic"] += 1
            print(f"arithmetic disagrees: {a.spec}: receval {ours}, arithmetic {a.mean} {a.per_user}", file=sys.stderr)
            continue
        if a.scenario is not None:  # a worked case: the rows of a generator scenario, stored once
            name = a.scenario
        else:
            name = f"arith-{a.name}"
            scenarios[name] = {"recs": [list(r) for r in a.recs], "truth": [list(r) for r in a.truth],
                               "side": {n: [list(r) for r in rows] for n, rows in a.side.items()}, "tags": list(a.tags),
                               "why": a.why}
        n_by_metric[a.metric] += 1
        r = decide_rel([resolve(a.spec, dialect=dialect_of(a.dialect))], True)[0]
        read = sorted(set(get_metric(a.metric).side_reads(dict(r.options), frozenset(a.side)) or ()) & set(a.side))
        out.append(_case(f"{a.metric}-{n_by_metric[a.metric]:04d}", a.metric, a.spec, a.k, name, a.dialect,
                         list(a.tags), read, ours, "arithmetic", a.why))
        tally["arithmetic"] += 1

    return {"format": 1, "built_with": __version__, "scenarios": scenarios, "cases": out}, tally


def _same(ours: dict[str, Any], mean: float, per_user: dict[str, float]) -> bool:

    return close(ours["mean"], mean) and set(ours["per_user"]) == set(per_user) and all(
        close(ours["per_user"][u], v) for u, v in per_user.items())


def _case(cid: str, metric: str, spec: str, k: int | None, scenario: str, dialect: str | None, tags: list[str],
          side: list[str], ours: dict[str, Any], source: str, why: str) -> dict[str, Any]:

    c: dict[str, Any] = {"id": cid, "metric": metric, "spec": spec, "k": k, "dialect": dialect, "scenario": scenario,
                         "side": side}
    if "refusal" in ours:
        c["signature"] = strip_version(make_signature(decide_rel([resolve(spec, dialect=dialect_of(dialect))], True)[0], "x"))
        c["expected"] = None
        c["refusal"] = ours["refusal"]
    else:
        c["signature"] = ours["signature"]
        c["expected"] = {"mean": ours["mean"], "per_user": ours["per_user"]}
        c["refusal"] = None
    c.update({"source": source, "tags": tags, "why": why})
    return c


def dumps(suite: dict[str, Any]) -> str:
    """``suite.json``'s text: one case per line (readable diffs)."""
    head = {k: v for k, v in suite.items() if k != "cases"}
    lines = [json.dumps(c, ensure_ascii=False, separators=(",", ":")) for c in suite["cases"]]
    body = json.dumps(head, ensure_ascii=False, separators=(",", ":"))[:-1]
    return body + ',"cases":[\n' + ",\n".join(lines) + "\n]}\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m receval.conformance.build", description="build the shipped conformance suite")
    parser.add_argument("--out", metavar="FILE", type=Path, default=SUITE, help=f"where to write the suite (default: {SUITE})")
    out = parser.parse_args(argv).out
    suite, tally = build()
    out.write_text(dumps(suite), encoding="utf-8")
    print(f"wrote {out}: {len(suite['cases'])} cases; {dict(tally)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
