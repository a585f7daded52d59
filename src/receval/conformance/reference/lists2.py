"""A slow reference for ild, mad, pauc and pap under every context option: plain Python over
each truth user's ranked list from ``reference.prepare`` (order, ties, dup, tdup, rel, hitscore),
written from the docstrings of the metrics (docs/metrics.md); nothing imports receval's formulas.

* ``ild@k``: 2 / (ℓ(ℓ − 1)) Σ_{i<j} d(i, j) over the ℓ rows at positions <= k (a list of fewer than
  two rows scores 0), d the Jaccard distance 1 − |A∩B|/|A∪B| of the category sets, the cosine
  distance 1 − |A∩B| / sqrt(|A||B|), or the Hamming distance |A △ B|; ``empty``/``norecs`` as for
  the ranking metrics;
* ``mad@k``: per user v_u = NDCG@k (binary gain, the ideal cut at k; the users with a relevant
  item, 0 without recommendations; ``of=ndcg``) or the mean score of the rows at positions <= k
  (the users with recommendations; ``of=score``); users without a group left out; the mean of
  |v̄_g − v̄_g'| over the pairs of groups;
* ``pauc@k``: Σ_{p ∈ P, f_p < k} (k − f_p) / (k |R|) (every hit row under ``dup=keep``), f_p the negatives ranked above the hit p
  (under the rank column: the positions above p that hold no hit, so a rank left out counts as
  a negative); ``pap@k`` the same over the hits whose index among the hits is <= k,
  divided by k min(k, |R|) (the formula's j_p <= k: under ``dup=keep`` a repeated hit is one more
  hit, so up to k hits count and the value can pass 1, as recall's does; the docstring's prose, "the
  user's first min(k, |R_u|) relevant items", would stop at min(k, |R|));
  ``insufficient`` (fewer than k negatives while a relevant item is not listed, an empty list included): ``ignore`` as it is, ``exclude`` leaves the user out, ``error`` refuses.
"""

from __future__ import annotations

import math

from .ranking import RefError, metric_options, per_user_value, policy_values, prepare

LISTS2_DEFAULTS = {
    "ild": {"distance": "jaccard"},
    "mad": {"of": "ndcg"},
    "pauc": {"insufficient": "ignore"},
    "pap": {"insufficient": "ignore"},
}


def _distance(a: set, b: set, how: str) -> float:
    if how == "hamming":
        return float(len(a ^ b))
    if how == "cosine":
        return 1.0 - (len(a & b) / math.sqrt(len(a) * len(b)) if a and b else 0.0)
    union = a | b
    return 1.0 - (len(a & b) / len(union) if union else 0.0)


def _ild(items: list, cats: dict, how: str) -> float:
    n = len(items)
    if n < 2:
        return 0.0
    total = sum(_distance(cats.get(items[x], set()), cats.get(items[y], set()), how)
                for x in range(n) for y in range(x + 1, n))
    return 2.0 * total / (n * (n - 1))


def _auc_terms(k: int, data: dict, by_position: bool) -> tuple[list[float], int]:
    """(k − f_p for every hit in ranked order, the number of negatives)."""
    ranked, hits = data["ranked"], data["hit_rows"]
    terms = []
    for j, (pos, _) in enumerate(ranked):
        if j not in hits:
            continue
        if by_position:
            f = (pos - 1) - sum(1 for h in hits if ranked[h][0] < pos)
        else:
            f = sum(1 for x, (q, _) in enumerate(ranked) if x not in hits and q < pos)
        terms.append(float(k - f) if f < k else 0.0)
    if by_position:
        negatives = (max((q for q, _ in ranked), default=0)) - len(hits)
    else:
        negatives = len(ranked) - len(hits)
    return terms, negatives


def reference_lists2(recs, truth, metric, k, options=None, *, categories=None, user_groups=None):
    ctx, o = metric_options(metric, options, LISTS2_DEFAULTS, average=False)
    users = prepare(recs, truth, ctx, metric)
    if metric == "ild":
        cats: dict = {}
        for i, c in zip(categories["item_id"], categories["category"]):
            cats.setdefault(i, set()).add(c)
        return policy_values(users, ctx, lambda u, data: _ild([i for pos, i in data["ranked"] if pos <= k], cats,
                                                              o["distance"]))
    if metric == "mad":
        group = dict(zip(user_groups["user_id"], user_groups["group"]))
        values: dict = {}
        for u, data in users.items():
            if u not in group:
                continue
            if o["of"] == "ndcg":
                if not data["rel"]:
                    continue
                v = 0.0 if data["length"] == 0 else per_user_value(
                    "ndcg", k, {"gain": "binary", "ideal": "cut", "base": 2.0, "discount": "log", "t": None,
                                "neg": "error", "rel": ctx["rel"]}, data)
            else:
                top = [s for (pos, _), s in zip(data["ranked"], data["scores"]) if pos <= k]
                if not top:
                    continue
                v = sum(top) / len(top)
            values.setdefault(group[u], []).append(v)
        means = [sum(vs) / len(vs) for _, vs in sorted(values.items())]
        if len(means) < 2:
            raise NotImplementedError("fewer than two groups")
        diffs = [abs(means[a] - means[b]) for a in range(len(means)) for b in range(a + 1, len(means))]
        return None, sum(diffs) / len(diffs)
    by_position = ctx["order"] in ("auto", "rank", "rank_value") and "rank" in recs
    for data in users.values():
        if data["rel"]:
            terms, negatives = _auc_terms(k, data, by_position)
            if negatives < k and len(terms) < len(data["rel"]) and o["insufficient"] == "error":
                raise RefError("insufficient")

    def value(u, data):
        terms, negatives = _auc_terms(k, data, by_position)
        R = len(data["rel"])
        if metric == "pap":
            terms = terms[:k]  # j_p <= k, as the formula reads (dup=keep: a repeated hit is one more hit)
            return sum(terms) / (k * min(k, R))
        return sum(terms) / (k * R)

    per_user, _ = policy_values(users, ctx, value)
    if o["insufficient"] == "exclude":
        for u, data in users.items():
            if per_user.get(u) is not None and data["rel"]:
                terms, negatives = _auc_terms(k, data, by_position)
                if negatives < k and len(terms) < len(data["rel"]):
                    per_user[u] = None
    left = [v for v in per_user.values() if v is not None]
    if not left:
        raise RefError("no user left")
    return per_user, sum(left) / len(left)
