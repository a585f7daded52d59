"""receval.sampled reads its arguments in one place and refuses each bad one with a one-line
receval error naming the fix; the accepted forms of an argument give the same values; the
corrected estimator's memory does not grow with the catalogue, and its values equal the dense
formula it replaced (bit-identical when the table fits in one block, to 1e-12 otherwise)."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from receval import DataError, RecevalError, SpecError
from receval import sampled as sampled_mod
from receval.sampled import _metric_of, bv_correction, rank_distribution, sampled_evaluate

S = {u: np.round(np.random.default_rng(u).random(20), 1) for u in range(1, 4)}
TRUTH = {"user_id": [1, 2, 3], "item_id": [100, 105, 110]}
CATALOG = list(range(100, 120))

BAD = [
    # (argument overrides, error class, fragment of the message)
    ({"metrics": "hitrate@0"}, SpecError, "`k` must be an integer >= 1, got 0"),
    ({"metrics": "ndcg@-3"}, SpecError, "`k` must be an integer >= 1, got -3"),
    ({"metrics": "mrr@0"}, SpecError, "`k` must be an integer >= 1, got 0"),
    ({"metrics": "hitrate@2.5"}, SpecError, "`k` must be an integer >= 1, got 2.5"),
    ({"metrics": "hitrate@ten"}, SpecError, "write e.g. 'hitrate@10'"),
    ({"metrics": "hitrate"}, SpecError, "needs a cut-off: write 'hitrate@10'"),
    ({"metrics": "mrr@"}, SpecError, "without a cut-off"),
    ({"metrics": "ndgc@5"}, SpecError, "did you mean 'ndcg'?"),
    ({"metrics": "precision@3"}, SpecError, "sampled evaluation supports hitrate, ndcg, mrr"),
    ({"metrics": []}, SpecError, "no metric given"),
    ({"metrics": [5]}, SpecError, "a metric must be a string like 'ndcg@10'"),
    ({"metrics": None}, SpecError, "`metrics` must be a metric string"),
    ({"n": 0}, SpecError, "`n` (negatives per positive) must be an integer >= 1, got 0"),
    ({"n": -5}, SpecError, "must be an integer >= 1, got -5"),
    ({"n": 2.5}, SpecError, "must be an integer >= 1, got 2.5"),
    ({"n": 5.0}, SpecError, "must be an integer >= 1, got 5.0"),
    ({"n": True}, SpecError, "must be an integer >= 1, got True"),
    ({"n": "10"}, SpecError, "must be an integer >= 1, got '10'"),
    ({"seed": None}, SpecError, "reproducible only from a fixed seed; pass e.g. seed=0"),
    ({"seed": -1}, SpecError, "`seed` must be an integer >= 0"),
    ({"seed": 1.5}, SpecError, "`seed` must be an integer >= 0"),
    ({"seed": np.random.default_rng(0)}, SpecError, "`seed` must be an integer >= 0"),
    ({"gamma": -0.1}, SpecError, "`gamma` (the corrected estimator's variance weight) must be a number in [0, 1], got -0.1"),
    ({"gamma": 1.5}, SpecError, "must be a number in [0, 1], got 1.5"),
    ({"gamma": float("nan")}, SpecError, "must be a number in [0, 1], got nan"),
    ({"gamma": "0.1"}, SpecError, "must be a number in [0, 1], got '0.1'"),
    ({"gamma": True}, SpecError, "must be a number in [0, 1], got True"),
    ({"estimators": ("bvv",)}, SpecError, "unknown estimator 'bvv'; did you mean 'bv'?"),
    ({"estimators": ("full", "corrected")}, SpecError, "unknown estimator 'corrected'"),
    ({"estimators": ()}, SpecError, "no estimator given"),
    ({"estimators": [1]}, SpecError, "unknown estimator 1; choose from 'uncorrected', 'bv', 'full'"),
    ({"estimators": None}, SpecError, "`estimators` must be a list of"),
    ({"ties": "pesimistic"}, SpecError, "did you mean 'pessimistic'?"),
    ({"ties": None}, SpecError, "`ties` must be 'pessimistic' or 'optimistic', got None"),
    ({"rel": "4"}, SpecError, "`rel` (the rating from which a truth row is relevant) must be a number or None"),
    ({"rel": float("nan")}, SpecError, "must be a number or None, got nan"),
    ({"rel": 4}, DataError, "needs a rating column in the ground truth"),
    ({"truth": {"user_id": [1], "item_id": [100], "rating": ["high"]}, "rel": 4}, DataError, "rating column is not numeric"),
    ({"catalog": None}, DataError, "no catalogue given"),
    ({"catalog": set(CATALOG)}, DataError, "the catalogue is a set, which has no order"),
    ({"catalog": CATALOG + [100]}, DataError, "the catalogue repeats item 100 (2 times); pass each item once"),
    ({"catalog": np.array(CATALOG + [119, 119])}, DataError, "the catalogue repeats item 119 (3 times)"),
    ({"catalog": ["a", "b", "a"]}, DataError, "the catalogue repeats item 'a'"),
    ({"catalog": [1, "a"]}, DataError, "the catalogue mixes id types (int, str)"),
    ({"catalog": []}, DataError, "the catalogue is empty"),
    ({"catalog": [[1, 2], [3, 4]]}, DataError, "one id per item (one dimension), got shape (2, 2)"),
    ({"catalog": "abc"}, DataError, "the catalogue is of type str"),
    ({"catalog": iter(CATALOG)}, DataError, "the catalogue is of type list_iterator"),
    ({"catalog": [1.0, float("nan")]}, DataError, "NaN or infinite ids"),
    ({"catalog": [1, None]}, DataError, "missing id (None)"),
    ({"catalog": [b"a", b"b"]}, DataError, "decode them to str"),
    ({"catalog": [True, False]}, DataError, "use integers or strings"),
    ({"scores": 5}, DataError, "the score source is of type int; pass a function scores(user_id)"),
    ({"scores": np.zeros((3, 20))}, DataError, "the score source is of type ndarray"),
    ({"scores": lambda u: ["x"] * 20}, DataError, "returned a list that is not numbers for user 1"),
    ({"scores": lambda u: {"a": 1}}, DataError, "returned a dict that is not numbers"),
    ({"scores": lambda u: None}, DataError, "it must return one per catalogue item (20)"),
    ({"scores": lambda u: S[u][:3]}, DataError, "returned (3,) scores"),
    ({"scores": lambda u: [np.nan] * 20}, DataError, "NaN or infinite scores for user 1"),
    ({"scores": {"user_id": [1], "item_id": ["100"], "score": [1.0]}}, DataError, "the score source's item ids are text but the catalogue's ids are numbers"),
    ({"scores": {"user_id": [1] * 20, "item_id": CATALOG, "score": ["x"] * 20}}, DataError, "score column is not numeric"),
    ({"truth": 5}, DataError, "cannot read the ground truth from a int"),
    ({"truth": {"user_id": [1], "item_id": ["100"]}}, DataError, "the ground truth's item ids are text but the catalogue's ids are numbers"),
    ({"truth": {"user": [1], "item_id": [100]}}, DataError, "missing column 'user_id'"),
    ({"truth": {"user_id": [1], "item_id": [999]}}, DataError, "is not in the catalogue"),
    ({"truth": Path("/nonexistent/truth.csv")}, DataError, "file not found"),
    ({"exclude": {"user_id": [1], "item_id": ["a"]}}, DataError, "the exclude's item ids are text"),
    ({"exclude": {"user_id": ["1"], "item_id": [100]}}, DataError, "the exclude's user ids are text but the ground truth's user ids are numbers"),
    ({"exclude": 5}, DataError, "cannot read the exclude from a int"),
    ({"n": 100}, DataError, "fewer than n=100; lower n or enlarge the catalogue"),
]


def _call(over):
    kw = {"scores": lambda u: S[u], "truth": TRUTH, "metrics": ["hitrate@3"], "catalog": CATALOG, "n": 5, **over}
    return sampled_evaluate(kw.pop("scores"), kw.pop("truth"), kw.pop("metrics"), **kw)


@pytest.mark.parametrize(("over", "error", "fragment"), BAD, ids=[f"{i}-{next(iter(o))}" for i, (o, _, _) in enumerate(BAD)])
def test_bad_input_is_refused_with_a_one_line_message(over, error, fragment):
    with pytest.raises(error) as info:
        _call(over)
    assert type(info.value) is error and isinstance(info.value, RecevalError)
    msg = str(info.value)
    assert fragment in msg
    assert "\n" not in msg


ARGUMENT_ERRORS = [(o, e, f) for o, e, f in BAD if next(iter(o)) not in ("scores", "truth", "exclude") and "fewer than n" not in f]


@pytest.mark.parametrize(("over", "error", "fragment"), ARGUMENT_ERRORS, ids=[f"{i}-{next(iter(o))}" for i, (o, _, _) in enumerate(ARGUMENT_ERRORS)])
def test_arguments_are_refused_before_any_score_is_asked(over, error, fragment):
    """The arguments are read in one place, first: a bad one never reaches the score source."""
    calls = []

    def scores(u):
        calls.append(u)
        return S[u]

    with pytest.raises(error, match=None):
        _call({"scores": scores, **over})
    assert calls == []


def test_accepted_forms_give_the_same_values():
    pd = pytest.importorskip("pandas")
    pl = pytest.importorskip("polars")
    ref = _call({"metrics": ["hitrate@3", "ndcg@5", "mrr"], "seed": 4, "gamma": 0.0})
    forms = [
        {"catalog": tuple(CATALOG)}, {"catalog": range(100, 120)}, {"catalog": np.array(CATALOG)},
        {"catalog": np.array(CATALOG, dtype=np.uint16)}, {"catalog": pd.Series(CATALOG)}, {"catalog": pd.Index(CATALOG)},
        {"catalog": pl.Series(CATALOG)}, {"catalog": np.array(CATALOG, dtype=object)},
        {"n": np.int64(5), "seed": np.uint8(4), "gamma": 0}, {"estimators": ("uncorrected", "bv", "full", "bv")},
    ]
    for over in forms:
        kw = {"metrics": ["hitrate@3", "ndcg@5", "mrr"], "seed": 4, "gamma": 0.0, **over}
        res = _call(kw)
        assert res.values == ref.values, over
        assert res.signatures == ref.signatures, over
    one = _call({"metrics": "mrr", "estimators": "bv", "seed": 4, "gamma": 0.0})
    assert one.values == {("mrr", "bv"): ref[("mrr", "bv")]}


def test_string_catalogue_forms():
    pd = pytest.importorskip("pandas")
    ids = [f"i{c}" for c in CATALOG]
    truth = {"user_id": TRUTH["user_id"], "item_id": [f"i{c}" for c in TRUTH["item_id"]]}
    ref = _call({"truth": truth, "catalog": ids})
    for cat in (np.array(ids), np.array(ids, dtype=object), pd.Series(ids), tuple(ids)):
        assert _call({"truth": truth, "catalog": cat}).values == ref.values


# ------------------------------------------------------------------ the corrected estimator


def _old_rank_distribution(N, n):
    """The dense table as computed before the blockwise estimator (gammaln cell by cell)."""
    from scipy.special import gammaln

    def lncomb(a, b):
        ok = (b >= 0) & (b <= a)
        out = np.full(np.broadcast(a, b).shape, -np.inf)
        aa, bb = np.broadcast_arrays(a, b)
        out[ok] = gammaln(aa[ok] + 1) - gammaln(bb[ok] + 1) - gammaln(aa[ok] - bb[ok] + 1)
        return out

    R = np.arange(1, N + 1, dtype=np.float64)[:, None]
    r = np.arange(1, n + 2, dtype=np.float64)[None, :]
    logp = lncomb(R - 1, r - 1) + lncomb(N - R, n - r + 1) - lncomb(np.array(N - 1.0), np.array(float(n)))
    return np.exp(logp)


def _old_bv_correction(metric, N, n, gamma, P=None):
    """The dense formula (an N x (n + 1) table) the blockwise estimator replaced."""
    P = _old_rank_distribution(N, n) if P is None else P
    d = np.full(N, 1.0 / N)
    M = metric(np.arange(1, N + 1, dtype=np.float64))
    A = (1 - gamma) * (P.T * d) @ P + gamma * np.diag(P.T @ d)
    return np.linalg.lstsq(A, (P.T * d) @ M, rcond=None)[0]


METRICS = [("hitrate", 1), ("hitrate", 10), ("ndcg", 10), ("mrr", None), ("mrr", 3)]
SMALL = [(2, 1), (5, 4), (12, 3), (30, 10), (101, 10), (200, 50), (257, 100), (600, 100), (1000, 37)]


@pytest.mark.parametrize(("N", "n"), SMALL)
def test_rank_distribution_is_bit_identical_to_the_dense_table(N, n):
    old = _old_rank_distribution(N, n)
    assert np.array_equal(rank_distribution(N, n), old)
    blocks = [sampled_mod._rank_rows(N, n, lo, min(N, lo + 7)) for lo in range(0, N, 7)]
    assert np.array_equal(np.vstack(blocks), old)


@pytest.mark.parametrize(("N", "n"), SMALL)
def test_one_block_is_bit_identical_to_the_dense_formula(N, n):
    assert N * (n + 1) <= sampled_mod._BLOCK
    P = _old_rank_distribution(N, n)
    fns = [_metric_of(name, k) for name, k in METRICS]
    for gamma in (0.0, 0.001, 0.01, 0.3, 1.0):
        got = sampled_mod._bv_corrections(fns, N, n, gamma)  # the metrics share the blocks
        for fn, g, (name, k) in zip(fns, got, METRICS):
            want = _old_bv_correction(fn, N, n, gamma, P)
            assert np.array_equal(g, want), (gamma, name, k)
            assert np.array_equal(bv_correction(fn, N, n, gamma), want)


@pytest.mark.parametrize(("N", "n"), SMALL)
@pytest.mark.parametrize("rows", [1, 7, 64])
def test_many_blocks_equal_the_dense_formula(monkeypatch, N, n, rows):
    """Blocks of ``rows`` rows: only the order of the sums changes. The system's condition
    number is about 1/gamma, so the agreement is ~1e-16/gamma (gamma >= 1e-3 here)."""
    if rows == 1 and N > 300:
        pytest.skip("one-row blocks: the small sizes suffice")
    monkeypatch.setattr(sampled_mod, "_BLOCK", rows * (n + 1))
    P = _old_rank_distribution(N, n)
    fns = [_metric_of(name, k) for name, k in METRICS]
    for gamma in (0.001, 0.01, 0.3, 1.0):
        got = sampled_mod._bv_corrections(fns, N, n, gamma)
        for fn, g, (name, k) in zip(fns, got, METRICS):
            assert np.abs(g - _old_bv_correction(fn, N, n, gamma, P)).max() <= 1e-12, (gamma, name, k)
    fn = fns[2]
    assert np.abs(bv_correction(fn, N, n, 0.01) - _old_bv_correction(fn, N, n, 0.01, P)).max() <= 1e-12


def test_sampled_values_do_not_depend_on_the_block(monkeypatch):
    rng = np.random.default_rng(3)
    cat = list(range(300))
    scores = {u: np.round(rng.random(300), 2) for u in range(5)}
    truth = {"user_id": [u for u in scores for _ in range(2)], "item_id": [int(i) for u in scores for i in rng.choice(300, 2, replace=False)]}
    kw = dict(catalog=cat, n=40, seed=1, gamma=0.01, exclude={"user_id": [0, 0, 3], "item_id": [7, 8, 9]})
    specs = ["hitrate@10", "ndcg@10", "mrr"]
    ref = sampled_evaluate(lambda u: scores[u], truth, specs, **kw)
    monkeypatch.setattr(sampled_mod, "_BLOCK", 5 * 41)
    got = sampled_evaluate(lambda u: scores[u], truth, specs, **kw)
    for key, v in ref.values.items():
        assert got.values[key] == pytest.approx(v, abs=1e-12)
        if key[1] != "bv":
            assert got.values[key] == v


def _peak(fn):
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_corrected_estimator_memory_does_not_follow_the_catalogue():
    """The dense formula held several N x (n + 1) float tables; the blockwise one holds a few
    blocks and one N-long log-gamma table."""
    fn, n = _metric_of("ndcg", 10), 50
    bv_correction(fn, 1000, n, 0.01)  # imports and caches outside the measurement
    small = _peak(lambda: bv_correction(fn, 20_000, n, 0.01))
    large = _peak(lambda: bv_correction(fn, 80_000, n, 0.01))
    table = 80_000 * (n + 1) * 8  # one dense table: 32.6 MB
    assert large < table / 4, (large, table)
    assert large < small + 8 * (80_000 - 20_000) + (1 << 20), (small, large)  # the log-gamma table grows, nothing else
