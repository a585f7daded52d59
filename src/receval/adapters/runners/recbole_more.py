"""Peer runner: RecBole 1.2.1 AveragePopularity and TailPercentage (env np2), metric classes only.

Public API used: recbole.evaluator.metrics.{AveragePopularity, TailPercentage}(config) with
config = {"topk": ks, "metric_decimal_place": 15, "tail_ratio": r}; their get_pop / get_tail
and metric_info on the item matrix (users x max k) and the train item counter
(data.count_items: train rows per item). Rows = truth users in id order; a list shorter than
max k is padded with item 0 (RecBole's [PAD], absent from train: popularity 0, never tail),
as RecBole always returns k items. Values are per user; the mean is over truth users.
Emitted names: AveragePopularity@k, TailPercentage(tail_ratio=0.1)@k, TailPercentage(tail_ratio=0.5)@k,
TailPercentage(tail_ratio=3)@k.
"""
import sys
from collections import Counter

from _side import load_side  # noqa: E402  (before _common, which drops this folder from sys.path)
import _common  # noqa: E402
Result, load = _common.Result, _common.load

from importlib.metadata import version  # noqa: E402

import numpy as np  # noqa: E402

if "float" not in np.__dict__:  # RecBole 1.2.1 uses np.float (the builtin float), removed in NumPy 1.24
    np.float = float

from recbole.evaluator.metrics import AveragePopularity, TailPercentage  # noqa: E402


def main() -> None:
    recs, truth, params, out = load()
    train, _, _ = load_side(sys.argv[1])
    ks = sorted(params["k"])
    kmax = max(ks)
    res = Result("recbole", version("recbole"))
    users = sorted(set(truth["user_id"].tolist()))
    lists = {u: [] for u in users}
    for u, i in zip(recs["user_id"].tolist(), recs["item_id"].tolist()):  # row order = ranking order
        if u in lists:
            lists[u].append(int(i))
    matrix = np.zeros((len(users), kmax), dtype=np.int64)
    for r, u in enumerate(users):
        row = lists[u][:kmax]
        matrix[r, : len(row)] = row
    counts = dict(Counter(int(i) for i in train["item_id"].tolist()))
    base = {"topk": ks, "metric_decimal_place": 15}
    m = AveragePopularity(dict(base))
    vals = m.metric_info(m.get_pop(matrix, counts))
    for k in ks:
        res.add(f"AveragePopularity@{k}", float(vals[:, k - 1].mean()), dict(zip(users, vals[:, k - 1].tolist())))
    for ratio, label in ((0.1, "0.1"), (0.5, "0.5"), (3, "3")):
        m = TailPercentage(dict(base, tail_ratio=ratio))
        vals = m.metric_info(m.get_tail(matrix, counts))
        for k in ks:
            res.add(f"TailPercentage(tail_ratio={label})@{k}", float(vals[:, k - 1].mean()), dict(zip(users, vals[:, k - 1].tolist())))
    res.write(out)


if __name__ == "__main__":
    main()
