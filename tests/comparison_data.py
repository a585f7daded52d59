"""Comparisons with realistic numbers for the table and figure tests and the docs example.

Per-user values come from ``receval.evaluate`` on the bundled MovieLens data (EASE and
popularity, the study's protocol); the means, percentile bootstrap intervals, paired t-tests
and Holm's correction are computed here with numpy/scipy, independently of receval.stats:
these are test inputs for rendering, not the statistics under test.
"""

from __future__ import annotations

import numpy as np
import polars as pl
from scipy import stats

import receval
from receval.comparison import Comparison, Interval, PairTest


def movielens_runs(k: int = 20, top: int = 50) -> tuple[dict[str, pl.DataFrame], pl.DataFrame]:
    """Top-``top`` recommendations of EASE (lambda 0.5 and 500) and popularity (random 80/20 split, ratings >= 4 relevant) and the truth."""
    from receval.data import load_bundled
    from receval.data.protocol import prepare_study, recommend
    from receval.models import EASE, Popularity

    study = prepare_study(load_bundled(), threshold=4.0, split="random", test_fraction=0.2, seed=0)
    runs = {name: recommend(study.train, study.test_users, mdl, top, decimals=10).drop("rank")
            for name, mdl in (("ease", EASE(lambda_=0.5, binary=True)), ("ease_l500", EASE(lambda_=500.0, binary=True)),
                              ("popularity", Popularity()))}
    return runs, study.test


def comparison_from_per_user(per_user: dict[str, pl.DataFrame], signatures: dict[str, str], *,
                             baseline: str | None = None, resamples: int = 1000, seed: int = 0,
                             level: float = 0.95) -> Comparison:
    """Means, percentile bootstrap CIs, paired t-tests (scipy) with Holm's correction."""
    runs = list(per_user)
    metrics = [c for c in per_user[runs[0]].columns if c != "user_id"]
    rng = np.random.default_rng(seed)
    n = per_user[runs[0]].height
    idx = rng.integers(0, n, size=(resamples, n))
    q = ((1 - level) / 2, (1 + level) / 2)
    values, intervals = {}, {}
    for r in runs:
        for m in metrics:
            v = per_user[r][m].fill_null(0.0).to_numpy().astype(float)
            values[(r, m)] = float(v.mean())
            lo, hi = np.quantile(v[idx].mean(axis=1), q)
            intervals[(r, m)] = Interval(float(lo), float(hi), "percentile", level)
    pairs_ab = [(a, b) for i, a in enumerate(runs) for b in runs[i + 1:]
                if baseline is None or baseline in (a, b)]
    raw = []
    for m in metrics:
        for a, b in pairs_ab:
            d = (per_user[a][m].fill_null(0.0).to_numpy() - per_user[b][m].fill_null(0.0).to_numpy()).astype(float)
            p = float(stats.ttest_rel(per_user[a][m].fill_null(0.0).to_numpy(),
                                      per_user[b][m].fill_null(0.0).to_numpy()).pvalue)
            lo, hi = np.quantile(d[idx].mean(axis=1), q)
            raw.append((m, a, b, d, p, Interval(float(lo), float(hi), "percentile", level)))
    # Holm: sort ascending, multiply by (family - rank), running maximum, capped at 1
    order = np.argsort([x[4] for x in raw], kind="stable")
    adjusted = np.empty(len(raw))
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(raw) - rank) * raw[i][4]))
        adjusted[i] = running
    pairs = []
    for (m, a, b, d, p, ci), p_adj in zip(raw, adjusted):
        sd = d.std(ddof=1)
        pairs.append(PairTest(m, a, b, float(d.mean()), p, float(p_adj), "t", "holm",
                              float(d.mean() / sd) if sd else float("nan"), "cohen_dz",
                              int((d > 0).sum()), int((d == 0).sum()), int((d < 0).sum()), ci))
    stat = f"test:t|corr:holm|ci:percentile|level:{level:g}|B:{resamples}|seed:{seed}|userset:truth"
    sigs = {m: s.replace("|v:", f"|{stat}|v:") for m, s in signatures.items()}
    return Comparison(runs, metrics, values, dict.fromkeys(metrics, True), sigs, n, intervals, pairs,
                      baseline, per_user)


def movielens_comparison(metrics=("ndcg@5", "ndcg@10", "ndcg@20", "recall@5", "recall@10", "recall@20"),
                         **kw) -> Comparison:
    runs, truth = movielens_runs()
    per_user, sigs = {}, {}
    for name, recs in runs.items():
        res = receval.evaluate(recs, truth, list(metrics), rel=4.0)
        per_user[name] = res.per_user()
        sigs = res.signatures
    return comparison_from_per_user(per_user, sigs, **kw)
