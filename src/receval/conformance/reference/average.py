"""``ties=average`` by brute force: the expected value over every ordering of equally scored rows.

The option's definition (``receval explain``: "the expected value over all orderings of equally
scored items"), computed the slow way for the popularity, novelty, fairness and baseline
metrics: every ordering of each user's tie groups is put in the row order and the metric's
reference is run with ``ties=input``; a user's value is the mean over its orderings (a per-user
value reads that user's list only, so the users' orderings are enumerated one user at a time).

The metrics of the top-k set (the global fairness and popularity-split metrics, and
``novelty(unknown=skip)``, whose denominator is the known items of the top k) have a value only
where no tie group straddles k: there every ordering gives the same top-k rows, and the value
is that of any ordering; where an ordering changes a user's top-k items the reference refuses,
as receval documents. Nothing imports receval's formulas.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from .ranking import CONTEXT_DEFAULTS, RefError, prepare

#: the most orderings of one user's list enumerated (the suite's lists have a few ties each)
MAX_ORDERINGS = 5040


def _orderings(rows: list[int], scores: list[float]) -> list[list[int]]:
    """Every order of ``rows`` (indices) that keeps the input order between different scores and
    permutes each group of equal scores."""
    groups: dict[float, list[int]] = {}
    for j in rows:
        groups.setdefault(scores[j], []).append(j)
    tied = [g for g in groups.values() if len(g) > 1]
    n = 1
    for g in tied:
        for m in range(2, len(g) + 1):
            n *= m
    if n > MAX_ORDERINGS:
        raise ValueError("too many orderings")  # not a refusal: the reference does not cover it
    out = []
    for perms in itertools.product(*(itertools.permutations(g) for g in tied)):
        fill = {id(g): iter(p) for g, p in zip(tied, perms)}
        where = {j: id(g) for g in tied for j in g}
        out.append([next(fill[where[j]]) if j in where else j for j in rows])
    return out


def _reordered(recs: dict, order: list[int]) -> dict:
    return {c: [v[j] for j in order] for c, v in recs.items()}


def tie_average(run: Callable[[dict], Any], recs: dict, truth: dict, k: int, options: dict, metric: str, *,
                settled: bool) -> Any:
    """``(per_user, mean)`` of ``run(recs)`` (the metric's reference with ``ties=input``) averaged
    over the orderings of the ties; ``settled``: the metric has a value only where no tie group
    straddles k (refused otherwise). ``(None, value)`` for a global metric."""
    users = list(dict.fromkeys(recs["user_id"]))
    base = run(recs)  # a refusal (duplicates, an empty group, ...) does not depend on the order of ties
    rows_of = {u: [j for j, x in enumerate(recs["user_id"]) if x == u] for u in users}
    ctx = {**CONTEXT_DEFAULTS, **{a: v for a, v in options.items() if a in CONTEXT_DEFAULTS}, "ties": "input"}
    if settled:
        def top(r: dict, u: Any) -> list:
            ranked = prepare(r, truth, ctx, metric).get(u, {"ranked": []})["ranked"]
            return sorted(i for pos, i in ranked if pos <= k)

        for u in users:
            if u not in set(truth["user_id"]):
                continue
            others = [j for j in range(len(recs["user_id"])) if recs["user_id"][j] != u]
            first = None
            for order in _orderings(rows_of[u], recs["score"]):
                got = top(_reordered(recs, others + order), u)
                if first is None:
                    first = got
                elif got != first:
                    raise RefError("a tie group straddles k: the top-k set depends on the order")
        return base
    per_user, _ = base
    out = dict(per_user)
    for u in users:
        if out.get(u) is None:
            continue
        others = [j for j in range(len(recs["user_id"])) if recs["user_id"][j] != u]
        values = [run(_reordered(recs, others + order))[0][u] for order in _orderings(rows_of[u], recs["score"])]
        out[u] = sum(values) / len(values)
    included = [v for v in out.values() if v is not None]
    return out, sum(included) / len(included)
