"""Peer runner: RePlay 0.22.0 Surprisal, Unexpectedness, CategoricalDiversity, Novelty, Coverage (env np2).

Public API used: replay.metrics.{Surprisal, Unexpectedness, CategoricalDiversity}(ks,
query_column, item_column|category_column, rating_column, mode=Mean()|PerUser()) called on
pandas frames: recs (user_id, item_id, score), train.parquet (Surprisal's train),
baseline.parquet (Unexpectedness' base_recommendations), and for CategoricalDiversity the recs
rows with each item replaced by its category (categories.parquet, one per item).
RePlay measures the users of the recommendations (Novelty: the users of train); Coverage is
computed on the rows of the truth users (receval reads only their lists).
Emitted names: Surprisal@k, Unexpectedness@k, CategoricalDiversity@k, Novelty@k (+ per user),
Coverage@k.
"""
import sys
import warnings

from _side import load_side  # noqa: E402  (before _common, which drops this folder from sys.path)
import _common  # noqa: E402
Result, load = _common.Result, _common.load

from importlib.metadata import version  # noqa: E402

from replay.metrics import CategoricalDiversity, Coverage, Novelty, Surprisal, Unexpectedness  # noqa: E402
from replay.metrics.descriptors import Mean, PerUser  # noqa: E402


def main() -> None:
    recs, truth, params, out = load()
    train, base, cats = load_side(sys.argv[1])
    ks = sorted(params["k"])
    res = Result("replay", version("replay-rec"))
    kw = dict(query_column="user_id", item_column="item_id", rating_column="score")
    r = recs[["user_id", "item_id", "score"]]
    cat_recs = r.merge(cats, on="item_id", how="inner")[["user_id", "category", "score"]]
    with res.timed("compute_s"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for cls, args, ckw in [
            (Surprisal, (r, train[["user_id", "item_id"]]), kw),
            (Unexpectedness, (r, base[["user_id", "item_id", "score"]]), kw),
            (CategoricalDiversity, (cat_recs,), dict(query_column="user_id", category_column="category", rating_column="score")),
            (Novelty, (r, train[["user_id", "item_id"]]), kw),
        ]:
            means = cls(ks, mode=Mean(), **ckw)(*args)
            per = cls(ks, mode=PerUser(), **ckw)(*args)
            for k in ks:
                res.add(f"{cls.__name__}@{k}", means[f"{cls.__name__}@{k}"], per[f"{cls.__name__}-PerUser@{k}"])
        in_truth = r[r["user_id"].isin(set(truth["user_id"]))]
        cov = Coverage(ks, **kw)(in_truth, train[["user_id", "item_id"]])
        for k in ks:
            res.add(f"Coverage@{k}", cov[f"Coverage@{k}"])
    res.write(out)


if __name__ == "__main__":
    main()
