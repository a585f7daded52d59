"""Memory that follows a budget: the in-memory engine and the CLI evaluate large inputs in user
batches (the Polars backend's path), and the number of batches never changes a value.

Every registered metric (every option value, the side inputs given), evaluated in one batch and
in many (``RECEVAL_MEMORY_BUDGET`` set small), gives the same values bit for bit, the same
per-user values, signatures and info: the budget is recorded nowhere because it changes nothing
(the registry sweep is test_backends.py's ``test_every_batched_path_equals_one_batch`` and, for
the global metrics, ``test_global_metrics_combine_bit_for_bit_in_many_batches``; here: the
batches without ties, a metric whose combine is not exact, files read in batches, the budget).
Files (Parquet, CSV) given to :func:`receval.evaluate` or the CLI are read lazily in user
batches, written once to a temporary directory and removed. A progress bar is shown only on a
terminal.
"""

from __future__ import annotations

import io
import math
import os

import numpy as np
import polars as pl
import pytest

import receval.backends.polars as bp
from receval import evaluate
from receval.backends.polars import batches_for, memory_budget, parse_bytes
from receval.errors import DataError, SpecError
from receval.metrics import all_metrics

from test_backends import _specs_for, count_batches, full_side, make_data


def _working(recs, truth, side, ctx) -> list[str]:
    ok = []
    for m in all_metrics():
        for spec in _specs_for(m):
            try:
                evaluate(recs, truth, [spec], **side, **ctx)
            except (SpecError, DataError):
                continue
            ok.append(spec)
    return ok


def _check_exact(a, b) -> None:
    assert a.keys() == b.keys()
    for e, f in zip(a.entries, b.entries):
        assert e.value == f.value or (math.isnan(e.value) and math.isnan(f.value)), (e.metric, e.value, f.value)
        assert e.signature == f.signature, e.metric
        assert e.users == f.users and e.skipped == f.skipped, e.metric
    assert a.per_user().equals(b.per_user())
    assert dict(a.fingerprints) == dict(b.fingerprints)


@pytest.fixture
def counted(monkeypatch):
    """The number of user batches the batched path ran (0: the single-batch engine)."""
    return count_batches(monkeypatch)


def test_a_batch_without_ties_gives_the_same_bits(monkeypatch):
    """The plain formulas (a batch with no tied score) and the tie-averaged ones give a user alone
    in its tie group the same bits for EPC, EFD and serendipity (which once differed in the last
    bit with ~60 batches, some holding no tie); every other metric agrees to 1e-12, the
    contract's tolerance (a dense per-user sum is pairwise over a width set by the batch's
    longest list, so its last bit may follow the batch)."""
    recs, truth, cats, train, catalog = make_data()
    side = full_side(recs, truth, cats, train, catalog)
    specs = [s for s in _working(recs, truth, side, {}) if not s.startswith("mad")]
    exact = ["efd@5", "epc@5", "serendipity@20"]
    assert set(exact) <= set(specs)
    monkeypatch.delenv(bp.BUDGET_ENV, raising=False)
    a = evaluate(recs, truth, specs, **side)
    monkeypatch.setenv(bp.BUDGET_ENV, "2000")  # ~60 batches: some hold no tie
    b = evaluate(recs, truth, specs, **side)
    for e, f in zip(a.entries, b.entries):
        assert e.metric == f.metric and e.signature == f.signature
        if e.metric in exact:
            assert e.value == f.value, e.metric
        else:
            assert math.isclose(e.value, f.value, rel_tol=1e-12, abs_tol=1e-12) or (math.isnan(e.value) and math.isnan(f.value)), e.metric
    pa, pb = a.per_user(), b.per_user()
    assert pa.select(exact).equals(pb.select(exact))
    for c in pa.columns[1:]:
        x, y = pa[c].to_numpy(), pb[c].to_numpy()
        assert np.allclose(x, y, rtol=1e-12, atol=1e-12, equal_nan=True), c


def test_inexact_combine_runs_in_one_batch(monkeypatch, counted):
    recs, truth, cats, train, catalog = make_data()
    side = full_side(recs, truth, cats, train, catalog)
    specs = ["mad(of=score)@20", "mad@5", "ndcg@5"]
    a = evaluate(recs, truth, specs, **side, ties="input")
    monkeypatch.setenv(bp.BUDGET_ENV, "2000")
    b = evaluate(recs, truth, specs, **side, ties="input")
    assert counted["n"] == 0  # the budget does not split a metric whose combine is not exact
    _check_exact(a, b)


def _files(tmp_path, kind: str):
    recs, truth, *_ = make_data()
    # string ids, rows shuffled (each user's rows keep their order: ties=input reads it)
    recs = recs.with_columns(pl.format("u{}", "user_id").alias("user_id"), pl.format("i{}", "item_id").alias("item_id"))
    truth = truth.with_columns(pl.format("u{}", "user_id").alias("user_id"), pl.format("i{}", "item_id").alias("item_id"))
    r, t = tmp_path / f"recs.{kind}", tmp_path / f"truth.{kind}"
    for frame, path in ((recs, r), (truth, t)):
        frame.write_parquet(path) if kind == "parquet" else frame.write_csv(path)
    return recs, truth, r, t


@pytest.mark.parametrize("kind", ["parquet", "csv"])
@pytest.mark.parametrize("ctx", [{"ties": "input"}, {"ties": "item", "rel": 3.0}], ids=["ties=input", "ties=item"])
@pytest.mark.parametrize("budget", ["2000", "40KB"], ids=["spilled", "scanned"])  # ~60 batches (on disk), 3 (scans)
def test_files_read_lazily_in_user_batches(tmp_path, kind, ctx, budget, monkeypatch, counted):
    recs, truth, r, t = _files(tmp_path, kind)
    specs = ["ndcg@5", "precision@3", "recall@10", "map@5", "mrr@10", "auc", "gini@5", "coverage@5", "f1@5"]
    a = evaluate(str(r), str(t), specs, **ctx)
    assert counted["n"] == 0
    spill = tmp_path / "spill"
    spill.mkdir()
    monkeypatch.setenv("RECEVAL_TMPDIR", str(spill))
    monkeypatch.setenv(bp.BUDGET_ENV, budget)
    calls = []
    real = bp.scan_frame
    monkeypatch.setattr(bp, "scan_frame", lambda *x, **k: calls.append(x[0]) or real(*x, **k))
    b = evaluate(str(r), str(t), specs, **ctx)
    assert calls and counted["n"] > 1  # scanned (not read whole), in batches
    if kind == "parquet":  # the row count from the metadata (a text file's: estimated from its size)
        assert counted["n"] == batches_for(recs.height, parse_bytes(budget))
    assert os.listdir(spill) == []  # the batches written to disk are removed
    _check_exact(a, b)
    _check_exact(a, evaluate(recs, truth, specs, **ctx))  # ids read from text are the frames' ids


def test_cli_reads_a_large_file_in_batches(tmp_path, monkeypatch, capsys, counted):
    from receval.cli import main

    _, _, r, t = _files(tmp_path, "parquet")
    args = ["evaluate", str(r), str(t), "-m", "ndcg@5", "-m", "recall@10", "--format", "json"]
    assert main(args) == 0
    one = capsys.readouterr()
    monkeypatch.setenv(bp.BUDGET_ENV, "5000")
    assert main(args) == 0
    many = capsys.readouterr()
    assert counted["n"] > 1
    assert many.out == one.out
    # the same notes as in one batch, each once (the coarse scores tie: ties=average decided values)
    assert many.err == one.err and many.err.count("receval: note: ties=average") == 1 and "warning" not in many.err


def test_no_progress_bar_when_stderr_is_not_a_terminal(monkeypatch, capsys):
    recs, truth, *_ = make_data()
    monkeypatch.setattr(bp, "PROGRESS_AFTER", 0.0)
    monkeypatch.setenv(bp.BUDGET_ENV, "2000")
    evaluate(recs, truth, ["ndcg@5", "gini@5"], ties="input")
    assert capsys.readouterr().err == ""


def test_progress_bar_on_a_terminal(monkeypatch):
    recs, truth, *_ = make_data()

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    err = Tty()
    monkeypatch.setattr("sys.stderr", err)
    monkeypatch.setattr(bp, "PROGRESS_AFTER", 0.0)
    monkeypatch.setenv(bp.BUDGET_ENV, "2000")
    evaluate(recs, truth, ["ndcg@5"])
    assert "user batches" in err.getvalue()


def test_budget_and_batches():
    assert parse_bytes("2GB") == 2 << 30 and parse_bytes("512 MB") == 512 << 20 and parse_bytes("1000") == 1000
    with pytest.raises(DataError, match="RECEVAL_MEMORY_BUDGET"):
        parse_bytes("lots")
    assert batches_for(10, 1 << 30) == 1
    assert batches_for(1_000_000_000, 1 << 30) == math.ceil(1e9 * bp.ROW_BYTES / (1 << 30))
    assert memory_budget(0) >= bp.MIN_BUDGET or os.environ.get(bp.BUDGET_ENV)


@pytest.mark.parametrize("ids", ["int", "str"])
@pytest.mark.parametrize("truth_sorted", [False, True])
def test_sorted_recommendations_batch_by_id_ranges(ids, truth_sorted, monkeypatch):
    """Recommendations held in memory sorted by user id are cut into contiguous slices of
    consecutive users (no hash, no copy); the truth is sliced when sorted, filtered on the same
    ranges when not. Same values, per-user values and info as one batch, and as hash batches
    of the same rows shuffled."""
    recs, truth, cats, train, catalog = make_data()
    if ids == "str":
        def as_text(f: pl.DataFrame) -> pl.DataFrame:
            return f.with_columns(pl.format("u{}", pl.col("user_id").cast(pl.String).str.zfill(6)).alias("user_id"))
        recs, truth = as_text(recs), as_text(truth)
    if truth_sorted:
        truth = truth.sort("user_id", maintain_order=True)
    assert recs.get_column("user_id").is_sorted()
    specs = ["ndcg@5", "map@20", "precision@5", "mrr@20", "auc", "coverage(ties=item)@5", "gini(ties=item)@5", "alpha_ndcg@5"]
    side = {"categories": cats, "train": train, "catalog": catalog}
    took = {"ranges": 0}
    real = bp._Batches._ranges

    def ranges(self):
        got = real(self)
        took["ranges"] += got is not None
        return got

    monkeypatch.setattr(bp._Batches, "_ranges", ranges)
    monkeypatch.delenv(bp.BUDGET_ENV, raising=False)
    one = evaluate(recs, truth, specs, **side)
    for n in (2, 5, 23):
        got = bp.evaluate_polars(recs, truth, specs, n_batches=n, **side)
        assert took["ranges"] and got.info == one.info
        _check_same(one, got)
    took["ranges"] = 0
    shuffled = recs.sample(fraction=1.0, shuffle=True, seed=1)
    hashed = bp.evaluate_polars(shuffled, truth, specs, n_batches=5, **side)
    assert took["ranges"] == 0  # rows in no user order: hash batches
    for e, f in zip(one.entries, hashed.entries):
        if e.metric != "auc":  # ties=average everywhere but auc's row order: the values do not read it
            assert e.value == f.value or (math.isnan(e.value) and math.isnan(f.value)), e.metric


def _check_same(a, b) -> None:
    for e, f in zip(a.entries, b.entries):
        assert e.value == f.value or (math.isnan(e.value) and math.isnan(f.value)), (e.metric, e.value, f.value)
        assert e.signature == f.signature and e.users == f.users, e.metric
    assert a.per_user().equals(b.per_user())
