"""Audit your own metric: which receval definition does it compute?

Run it with ``python examples/audit_my_metric.py``, or from the command line:
``receval audit examples/audit_my_metric.py:my_ndcg --metric ndcg``.
"""

import math

from receval.audit import audit


def my_ndcg(recs, truth, k, side):
    """NDCG@k as written in-house: binary gains, the ideal DCG from the list's own hits.

    ``recs`` and ``truth`` are polars DataFrames (recs: user, item, score, rank; truth: user,
    item, rating); ``side`` maps a side input's name (train, catalog, ...) to its frame.
    Returns {user: value} (or one number, the mean).
    """
    relevant = {}
    for row in truth.iter_rows(named=True):
        relevant.setdefault(row["user"], set()).add(row["item"])
    ranked = {}
    for row in recs.sort(["user", "rank"]).iter_rows(named=True):
        ranked.setdefault(row["user"], []).append(row["item"])
    out = {}
    for user, rel in relevant.items():
        hits = [1.0 if item in rel else 0.0 for item in ranked.get(user, [])[:k]]
        dcg = sum(h / math.log2(i + 2) for i, h in enumerate(hits))
        idcg = sum(h / math.log2(i + 2) for i, h in enumerate(sorted(hits, reverse=True)))
        out[user] = dcg / idcg if idcg else 0.0
    return out


if __name__ == "__main__":
    report = audit(my_ndcg, "ndcg")
    print(report)
    print(report.to_dict()["options"])
