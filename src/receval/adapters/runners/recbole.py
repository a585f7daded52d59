"""Peer runner: RecBole (RUCAIBox/RecBole, PyPI recbole 1.2.1), metric classes only.

Public API used: recbole.evaluator.Collector(config).eval_batch_collect(scores, None,
positive_u, positive_i) -> Collector.get_data_struct() -> recbole.evaluator.Evaluator(config)
.evaluate(struct); per-user values from the metric classes' metric_info(pos_index, pos_len).
config = {"metrics": [...], "topk": ks, "metric_decimal_place": 15,
          "eval_args": {"mode": "full"}, "device": cpu}.
Input preparation (RecBole's natural input is a users x items score matrix, full-sort mode):
  rows = truth users (RecBole evaluates test users only; users only in recs are dropped);
  column 0 = [PAD] (-inf), one column per item, plus max(k) filler columns scored -1e300
  (below every real score, above -inf) so that a list shorter than k is padded with misses
  (RecBole itself always returns exactly k items); unrecommended items score -inf.
  scores = the recs' score (a duplicated (user,item) row keeps its first = best-ranked score).
  positives = truth (user,item) pairs, set-based (pos_matrix[u,i]=1), so pos_len = |set(R)|.
  RecBole ranks with torch.topk on the scores: our rank column is not used, ties unspecified.
GAUC: separate pass whose candidate set is the recommended items only (others -inf, no fillers)
  and whose positives are the truth items among them; RecBole drops users with no positive or
  no negative (warning) and weights users by #positives. Mean only.
Compatibility shim: np.float = float is set before importing RecBole (it was removed in
NumPy 1.24; RecBole's MRR/MAP/NDCG still use it), identical to the old alias.
Emitted names: hit@k precision@k recall@k mrr@k map@k ndcg@k gauc.
"""
import logging
import sys
import warnings
from pathlib import Path

import _common  # noqa: E402  (first: it drops this folder from sys.path, see _common.py)
Result, load = _common.Result, _common.load

from importlib.metadata import version  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

# RecBole 1.2.1's metrics.py uses np.float (an alias of the builtin float, removed in
# NumPy 1.24). Restore exactly that alias; it changes no arithmetic (dtype float64).
if "float" not in np.__dict__:
    np.float = float

from recbole.evaluator import Collector, Evaluator  # noqa: E402

TOPK = ["Hit", "Precision", "Recall", "MRR", "MAP", "NDCG"]
FILL = -1e300


def config(metrics, ks):
    return {
        "metrics": metrics,
        "topk": ks,
        "metric_decimal_place": 15,
        "eval_args": {"mode": "full"},
        "device": torch.device("cpu"),
    }


def main() -> None:
    recs, truth, params, out = load()
    ks = sorted(params["k"])
    maxk = max(ks)
    res = Result("recbole", version("recbole"))
    res.doc["env"]["torch"] = torch.__version__
    logging.getLogger().setLevel(logging.ERROR)
    with res.timed("prepare_s"):
        users = sorted(set(truth["user_id"].tolist()))
        uidx = {u: n for n, u in enumerate(users)}
        items = sorted(set(recs["item_id"].tolist()) | set(truth["item_id"].tolist()))
        iidx = {i: n + 1 for n, i in enumerate(items)}  # 0 = [PAD]
        n_cols = len(items) + 1
        r = recs[recs["user_id"].isin(uidx)].drop_duplicates(["user_id", "item_id"], keep="first")
        ru = torch.tensor([uidx[u] for u in r["user_id"].tolist()], dtype=torch.long)
        ri = torch.tensor([iidx[i] for i in r["item_id"].tolist()], dtype=torch.long)
        rs = torch.tensor(r["score"].to_numpy(), dtype=torch.float64)
        t = truth.drop_duplicates(["user_id", "item_id"])
        pu = torch.tensor([uidx[u] for u in t["user_id"].tolist()], dtype=torch.long)
        pi = torch.tensor([iidx[i] for i in t["item_id"].tolist()], dtype=torch.long)

        scores = torch.full((len(users), n_cols + maxk), float("-inf"), dtype=torch.float64)
        scores[:, n_cols:] = FILL
        scores[ru, ri] = rs
    with res.timed("compute_s"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cfg = config(TOPK, ks)
        col = Collector(cfg)
        col.eval_batch_collect(scores, None, pu, pi)
        struct = col.get_data_struct()
        ev = Evaluator(cfg)
        means = ev.evaluate(struct)
        for m in TOPK:
            metric = ev.metric_class[m.lower()]
            pos_index, pos_len = metric.used_info(struct)
            # Hit/MRR/Precision take metric_info(pos_index); the others (pos_index, pos_len)
            try:
                per = metric.metric_info(pos_index, pos_len)
            except TypeError:
                per = metric.metric_info(pos_index)
            for k in ks:
                name = f"{m.lower()}@{k}"
                res.add(name, means[name], dict(zip(users, per[:, k - 1].tolist())))

        # GAUC over the recommended candidates only
        gscores = torch.full((len(users), n_cols), float("-inf"), dtype=torch.float64)
        gscores[ru, ri] = rs
        recommended = set(zip(ru.tolist(), ri.tolist()))
        keep = [n for n, pair in enumerate(zip(pu.tolist(), pi.tolist())) if pair in recommended]
        gcfg = config(["GAUC"], ks)
        gcol = Collector(gcfg)
        gcol.eval_batch_collect(gscores, None, pu[keep], pi[keep])
        try:
            g = Evaluator(gcfg).evaluate(gcol.get_data_struct())["gauc"]
        except Exception as exc:  # e.g. no user with both classes
            res.note(f"gauc failed: {type(exc).__name__}: {exc}")
            g = float("nan")
        res.add("gauc", g)
    res.write(out)


if __name__ == "__main__":
    main()
