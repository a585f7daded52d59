"""The contract across the entry points other than `evaluate` (tests/contracts/test_invariance.py covers
every metric there): `runs` with its paired statistics, the dialect `compare` table, sampled
evaluation and TREC files give the same values (1e-12) for the same content, whatever the row
order and (where the entry point's own definition allows) the spelling of the ids.

Seeded resampling (bootstrap, permutation) draws users by their position in the sorted user
ids, so a renaming that reorders the users is a different draw: those are checked with
order-preserving renamings; the t-test and Wilcoxon, which read no order, with any renaming."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import receval
from receval.compare import compare as dialect_compare
from receval.runs import evaluate_runs
from receval.sampled import sampled_evaluate

SETTINGS = settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))


def _data(seed: int, n_users: int = 12, n_items: int = 15, levels: int = 4):
    rng = np.random.default_rng(seed)
    runs = {}
    for name in ("a", "b"):
        rows = []
        for u in range(n_users):
            items = rng.choice(n_items, size=8, replace=False)
            rows += [(u, int(i), float(rng.integers(0, levels))) for i in items]
        runs[name] = pl.DataFrame(rows, schema=["user_id", "item_id", "score"], orient="row")
    truth_rows = [(u, int(i), float(rng.integers(1, 6))) for u in range(n_users) for i in rng.choice(n_items, 3, replace=False)]
    truth = pl.DataFrame(truth_rows, schema=["user_id", "item_id", "rating"], orient="row")
    return runs, truth


def _shuffle(df: pl.DataFrame, seed: int) -> pl.DataFrame:
    return df.sample(fraction=1.0, shuffle=True, seed=seed)


def _rename(df: pl.DataFrame, users: dict, items: dict) -> pl.DataFrame:
    return df.with_columns(pl.col("user_id").replace_strict(users), pl.col("item_id").replace_strict(items))


def _pairs(cmp):
    return {(t.metric, t.a, t.b): t for t in cmp.pairs}


def _close(x: float, y: float) -> bool:
    return (math.isnan(x) and math.isnan(y)) or abs(x - y) <= 1e-12


METRICS = ["ndcg@5", "map@5", "recall@5", "mrr@5"]


@SETTINGS
@given(st.integers(0, 10_000), st.sampled_from(["t", "wilcoxon"]))
def test_runs_and_their_statistics_ignore_row_order_and_any_renaming(seed, test):
    runs, truth = _data(seed)
    base = evaluate_runs(runs, truth, METRICS)
    cmp = base.compare(test=test, ci="t")
    rng = np.random.default_rng(seed + 1)
    users = {u: f"user-{v}" for u, v in zip(range(12), rng.permutation(1000)[:12])}
    items = {i: int(v) for i, v in zip(range(15), rng.permutation(10**6)[:15])}
    moved = evaluate_runs({n: _shuffle(_rename(r, users, items), seed) for n, r in runs.items()},
                          _shuffle(_rename(truth, users, items), seed + 2), METRICS)
    for name, row in base.table().items():
        assert moved.table()[name] == pytest.approx(row, abs=1e-12)
    for m in METRICS:
        for name in runs:
            assert moved.results[name].signature(m) == base.results[name].signature(m)
    got = _pairs(moved.compare(test=test, ci="t"))
    for key, t in _pairs(cmp).items():
        u = got[key]
        assert _close(t.diff, u.diff) and _close(t.p, u.p) and _close(t.p_adjusted, u.p_adjusted), key
        assert (t.wins, t.ties, t.losses) == (u.wins, u.ties, u.losses)
        assert _close(t.ci.low, u.ci.low) and _close(t.ci.high, u.ci.high)


@SETTINGS
@given(st.integers(0, 10_000), st.sampled_from(["bootstrap", "permutation"]))
def test_resampled_statistics_ignore_row_order_and_order_preserving_renamings(seed, test):
    runs, truth = _data(seed)
    kw = dict(test=test, ci="percentile", resamples=200, seed=3)
    cmp = evaluate_runs(runs, truth, METRICS).compare(**kw)
    users = {u: 1000 + 7 * u for u in range(12)}  # increasing: the users keep their order
    items = {i: f"i{i:03d}" for i in range(15)}
    moved = evaluate_runs({n: _shuffle(_rename(r, users, items), seed) for n, r in runs.items()},
                          _shuffle(_rename(truth, users, items), seed + 2), METRICS).compare(**kw)
    got = _pairs(moved)
    for key, t in _pairs(cmp).items():
        u = got[key]
        assert _close(t.p, u.p) and _close(t.ci.low, u.ci.low) and _close(t.ci.high, u.ci.high), key


@SETTINGS
@given(st.integers(0, 10_000))
def test_the_dialect_table_ignores_row_order_and_renaming(seed):
    runs, truth = _data(seed, levels=1000)  # distinct scores: the dialects' tie rules read nothing
    recs = runs["a"].unique(subset=["user_id", "score"])
    specs = ["ndcg@5", "map@5", "precision@5"]
    a = dialect_compare(recs, truth, specs, dialects="standard,recbole,rectools,ranx,trec_eval")
    rng = np.random.default_rng(seed)
    users = {u: int(v) for u, v in zip(range(12), 10 + 3 * np.arange(12))}  # order-preserving (trec_eval's docno rule)
    items = {i: int(v) for i, v in zip(range(15), 100 + np.arange(15))}
    b = dialect_compare(_shuffle(_rename(recs, users, items), seed), _shuffle(_rename(truth, users, items), seed + 1),
                        specs, dialects="standard,recbole,rectools,ranx,trec_eval")
    assert a.columns == b.columns and a["dialect"].to_list() == b["dialect"].to_list()
    for c in specs:
        for x, y in zip(a[c].to_list(), b[c].to_list()):
            assert (x is None and y is None) or _close(x, y), (c, x, y)
    del rng


@SETTINGS
@given(st.integers(0, 10_000))
def test_sampled_evaluation_ignores_catalogue_order_row_order_and_renaming(seed):
    rng = np.random.default_rng(seed)
    n_items = 30
    catalog = list(range(n_items))
    score = rng.integers(0, 5, size=(8, n_items)).astype(float)  # coarse: ties everywhere
    truth = pl.DataFrame({"user_id": np.repeat(np.arange(8), 2), "item_id": rng.integers(0, n_items, 16)}).unique()
    specs = ["hitrate@5", "ndcg@5"]
    a = sampled_evaluate(lambda u: score[u], truth, specs, catalog=catalog, n=10, seed=1)
    # the same content: the catalogue given in another order (the scorer answers in that order),
    # the truth rows shuffled, the users renamed (order-preserving: the draw follows the users)
    perm = rng.permutation(n_items)
    shuffled = [catalog[j] for j in perm]
    users = {u: 100 + u for u in range(8)}
    b = sampled_evaluate(lambda u: score[u - 100][perm], _shuffle(truth.with_columns(pl.col("user_id").replace_strict(users)), seed),
                         specs, catalog=shuffled, n=10, seed=1)
    for key in a.values:
        assert _close(a.values[key], b.values[key]), key


def test_trec_files_give_the_frames_values(tmp_path):
    runs, truth = _data(7, levels=1000)
    recs = runs["a"].unique(subset=["user_id", "score"])
    specs = ["ndcg@5", "map@5", "recall@5"]
    want = receval.evaluate(recs, truth, specs, dialect="trec_eval")
    from receval.trec import write_qrels, write_run

    write_run(recs, tmp_path / "r.run")
    write_qrels(truth.with_columns(pl.col("rating").cast(pl.Int64)), tmp_path / "t.qrels")
    got = receval.evaluate(str(tmp_path / "r.run"), str(tmp_path / "t.qrels"), specs, dialect="trec_eval")
    for m in specs:
        assert _close(want[m], got[m]), m
        assert want.signature(m) == got.signature(m)
