"""Sampled-negative evaluation (receval.sampled): the documented protocol reproduced
independently, the corrected estimator against a direct numerical minimisation, the limits
(every negative sampled → sampled = corrected = full), properties and refusals.

receval.sampled reads its arguments in one place and refuses each bad one with a one-line
receval error naming the fix; the accepted forms of an argument give the same values; the
corrected estimator's memory does not grow with the catalogue, and its values equal the dense
formula it replaced (bit-identical when the table fits in one block, to 1e-12 otherwise).

Sampled evaluation does not depend on the order the catalogue is given in.

The score callable returns one score per catalogue item *in the order given* (module docs);
``sampled_evaluate`` once sorted the catalogue but read those scores as if they were sorted
too, so any unsorted catalogue was scored against the wrong items. Here the ``full``
estimator is checked against a brute-force full ranking written independently (pessimistic
ties: an equal-scored candidate ranks above the positive), and every estimator against
itself over several orders of the same catalogue.
"""

from __future__ import annotations

import math
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from receval import DataError, RecevalError, SpecError
from receval import sampled as sampled_mod
from receval.sampled import ESTIMATORS, _metric_of, bv_correction, rank_distribution, sampled_evaluate


def _data(seed=0, n_users=6, n_items=20):
    rng = np.random.default_rng(seed)
    S = {u: np.round(rng.random(n_items), 1) for u in range(1, n_users + 1)}   # ties on purpose
    truth = {"user_id": [], "item_id": []}
    for u in S:
        for i in rng.choice(np.arange(100, 100 + n_items), size=2, replace=False):
            truth["user_id"].append(u)
            truth["item_id"].append(int(i))
    return S, truth, list(range(100, 100 + n_items))


def test_protocol_reproduced_independently():
    S, truth, catalog = _data()
    exclude = {"user_id": [1, 1], "item_id": [100, 101]}
    res = sampled_evaluate(lambda u: S[u], truth, ["hitrate@3"], catalog=catalog, n=5, seed=42, exclude=exclude)
    rng = np.random.default_rng(42)
    want_s, want_f = [], []
    for u in sorted(set(truth["user_id"])):
        pos = sorted(i for uu, i in zip(truth["user_id"], truth["item_id"]) if uu == u)
        ex = {100, 101} if u == 1 else set()
        cand = [j for j, c in enumerate(catalog) if c not in pos and c not in ex]
        for p in pos:
            sp = S[u][catalog.index(p)]
            above = sum(1 for j in cand if S[u][j] >= sp)                  # pessimistic: ties rank above
            want_s.append(1 + int(rng.hypergeometric(above, len(cand) - above, 5)))  # one scalar draw per instance
            want_f.append(1 + above)
    assert res.per_instance["sampled_rank"].tolist() == want_s
    assert res.per_instance["full_rank"].tolist() == want_f
    assert res[("hitrate@3", "uncorrected")] == pytest.approx(sum(r <= 3 for r in want_s) / len(want_s))
    assert res[("hitrate@3", "full")] == pytest.approx(sum(r <= 3 for r in want_f) / len(want_f))
    assert res.instances == 12


def test_the_hypergeometric_draw_is_the_law_of_sampling_negatives():
    """Drawing n of the C candidates without replacement and counting those above the positive
    (the textbook protocol, simulated) has the law the protocol draws from directly."""
    C, A, n, trials = 30, 9, 6, 20_000
    rng = np.random.default_rng(7)
    sim = (rng.random((trials, C)).argsort(axis=1)[:, :n] < A).sum(axis=1)  # the first A candidates are "above"
    from scipy.stats import hypergeom

    freq = np.bincount(sim, minlength=n + 1) / trials
    assert np.abs(freq - hypergeom.pmf(np.arange(n + 1), C, A, n)).max() < 0.015


def test_strings_and_shuffled_rows_give_the_same_values():
    S, truth, catalog = _data(2)
    frame = {"user_id": [], "item_id": [], "score": []}
    for u, row in S.items():
        for c, v in zip(catalog, row):
            frame["user_id"].append(f"u{u}"); frame["item_id"].append(f"i{c}"); frame["score"].append(float(v))
    order = np.random.default_rng(1).permutation(len(frame["score"]))
    shuffled = {k: [v[j] for j in order] for k, v in frame.items()}
    t2 = {"user_id": [f"u{u}" for u in truth["user_id"]], "item_id": [f"i{i}" for i in truth["item_id"]]}
    a = sampled_evaluate(lambda u: S[u], truth, ["ndcg@5"], catalog=catalog, n=6, seed=3)
    b = sampled_evaluate(shuffled, t2, ["ndcg@5"], catalog=[f"i{c}" for c in catalog], n=6, seed=3)
    # string ids sort differently ("u1" < "u10"...; "i100" < "i101"): same users here, same item order
    assert a.values == b.values


def test_every_negative_sampled_gives_the_full_value():
    S, truth, catalog = _data(1)
    res = sampled_evaluate(lambda u: S[u], truth, ["hitrate@3", "ndcg@5", "mrr"], catalog=catalog, n=18, seed=0, gamma=0.3)
    for m in ("hitrate@3", "ndcg@5", "mrr"):
        assert res[(m, "uncorrected")] == pytest.approx(res[(m, "full")], abs=1e-12)
        assert res[(m, "bv")] == pytest.approx(res[(m, "full")], abs=1e-9)


def test_golden_ranks_and_metrics():
    catalog = [1, 2, 3, 4, 5]
    truth = {"user_id": [7], "item_id": [4]}
    res = sampled_evaluate(lambda u: [0.9, 0.8, 0.7, 0.6, 0.5], truth, ["ndcg@10", "mrr", "mrr@2"], catalog=catalog, n=4)
    # full rank 4: ndcg = 1/log2 5, mrr = 1/4, mrr@2 = 0
    assert res[("ndcg@10", "full")] == pytest.approx(1 / math.log2(5))
    assert res[("mrr", "full")] == pytest.approx(0.25)
    assert res[("mrr@2", "full")] == 0.0
    # ties: optimistic counts equal scores below the positive
    tied = sampled_evaluate(lambda u: [0.9, 0.6, 0.7, 0.6, 0.5], truth, ["mrr"], catalog=catalog, n=4, ties="optimistic")
    assert tied[("mrr", "full")] == pytest.approx(1 / 3)
    assert sampled_evaluate(lambda u: [0.9, 0.6, 0.7, 0.6, 0.5], truth, ["mrr"], catalog=catalog, n=4)[("mrr", "full")] == pytest.approx(1 / 4)


def test_signature_names_the_protocol():
    S, truth, catalog = _data()
    res = sampled_evaluate(lambda u: S[u], truth, ["ndcg@5"], catalog=catalog, n=5, seed=9, gamma=0.05)
    sig = res.signatures[("ndcg@5", "bv")]
    assert "protocol:sampled|n:5|seed:9|ties:pessimistic" in sig and "estimator:bv|gamma:0.05" in sig
    assert "estimator:uncorrected" in res.signatures[("ndcg@5", "uncorrected")]


def test_frame_source_equals_callable():
    S, truth, catalog = _data(2)
    frame = {"user_id": [u for u in S for _ in catalog], "item_id": [c for _ in S for c in catalog],
             "score": [float(x) for u in S for x in S[u]]}
    a = sampled_evaluate(lambda u: S[u], truth, ["ndcg@5"], catalog=catalog, n=6, seed=3)
    b = sampled_evaluate(frame, truth, ["ndcg@5"], catalog=catalog, n=6, seed=3)
    assert a.values == b.values


def test_bv_matches_direct_minimisation():
    from scipy.optimize import minimize

    N, n, gamma = 12, 3, 0.2
    M = lambda r: np.where(r <= 5, 1 / np.log2(r + 1), 0.0)  # noqa: E731
    P = rank_distribution(N, n)
    target = M(np.arange(1, N + 1, dtype=float))

    def objective(x):
        mean = P @ x
        var = P @ (x**2) - mean**2
        return np.mean((mean - target) ** 2 + gamma * var)

    direct = minimize(objective, np.zeros(n + 1), method="BFGS", options={"gtol": 1e-12}).x
    assert bv_correction(M, N, n, gamma) == pytest.approx(direct, abs=1e-6)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(N=st.integers(2, 40), n=st.integers(1, 39))
def test_rank_distribution_rows_sum_to_one(N, n):
    if n > N - 1:
        return
    P = rank_distribution(N, n)
    assert P.shape == (N, n + 1)
    assert np.allclose(P.sum(axis=1), 1.0)


@settings(max_examples=30, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 15))
def test_sampled_rank_never_exceeds_full_rank(seed, n):
    S, truth, catalog = _data(seed % 7)
    res = sampled_evaluate(lambda u: S[u], truth, ["hitrate@3", "ndcg@3", "mrr"], catalog=catalog, n=n, seed=seed)
    assert np.all(res.per_instance["sampled_rank"] <= res.per_instance["full_rank"])
    for m in ("hitrate@3", "ndcg@3", "mrr"):
        assert res[(m, "uncorrected")] >= res[(m, "full")] - 1e-15


def test_refusals():
    S, truth, catalog = _data()
    with pytest.raises(SpecError, match="supports"):
        sampled_evaluate(lambda u: S[u], truth, ["precision@3"], catalog=catalog)
    with pytest.raises(DataError, match="fewer than n"):
        sampled_evaluate(lambda u: S[u], truth, ["hitrate@3"], catalog=catalog, n=100)
    with pytest.raises(DataError, match="one per catalogue item"):
        sampled_evaluate(lambda u: S[u][:3], truth, ["hitrate@3"], catalog=catalog, n=5)
    with pytest.raises(DataError, match="miss"):
        sampled_evaluate({"user_id": [1], "item_id": [100], "score": [1.0]}, truth, ["hitrate@3"], catalog=catalog, n=5)
    with pytest.raises(DataError, match="catalogue"):
        sampled_evaluate(lambda u: S[u], truth, ["hitrate@3"], catalog=catalog[:5], n=2)


@pytest.mark.parametrize(("N", "n"), [(5, 4), (30, 6), (200, 100), (1000, 3)])
def test_rank_distribution_equals_scipy_hypergeom(N, n):
    from scipy.stats import hypergeom

    R, r = np.arange(1, N + 1)[:, None], np.arange(1, n + 2)[None, :]
    assert np.allclose(rank_distribution(N, n), hypergeom.pmf(r - 1, N - 1, R - 1, n), rtol=1e-9, atol=1e-15)


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


SCORES = [-2.0, 0.0, 0.25, 0.5, 0.5, 1.0, 3.0]  # few values: ties are frequent


def _metric(spec: str, R: int) -> float:
    """The metric of one positive at full rank R, from the module docs (written out again)."""
    name, _, k = spec.partition("@")
    cut = int(k) if k else math.inf
    if R > cut:
        return 0.0
    return {"hitrate": 1.0, "ndcg": 1.0 / math.log2(R + 1), "mrr": 1.0 / R}[name]


def brute_full(score, truth, exclude, catalog, ties, spec):
    """Mean metric of the full rank over every distinct (user, relevant item) pair: the
    candidates of u are the catalogue items neither relevant to u nor excluded for u; the rank
    is 1 + the candidates scoring above the positive (or equal, with pessimistic ties)."""
    pos: dict = {}
    for u, i in zip(truth["user_id"], truth["item_id"]):
        pos.setdefault(u, set()).add(i)
    ex: dict = {}
    for u, i in zip(exclude["user_id"], exclude["item_id"]):
        ex.setdefault(u, set()).add(i)
    vals = []
    for u, items in pos.items():
        cand = [c for c in catalog if c not in items and c not in ex.get(u, set())]
        for p in items:
            sp = score[u][p]
            above = sum(1 for c in cand if (score[u][c] >= sp if ties == "pessimistic" else score[u][c] > sp))
            vals.append(_metric(spec, 1 + above))
    return sum(vals) / len(vals)


@st.composite
def cases(draw):
    text = draw(st.booleans())
    n_items = draw(st.integers(2, 12))
    if text:
        ids = draw(st.lists(st.text("abcXYZ019_", min_size=1, max_size=3), min_size=n_items, max_size=n_items, unique=True))
        users = draw(st.lists(st.text("uvw12", min_size=1, max_size=2), min_size=1, max_size=4, unique=True))
    else:
        ids = draw(st.lists(st.integers(-10_000, 10_000), min_size=n_items, max_size=n_items, unique=True))
        users = draw(st.lists(st.integers(-50, 50), min_size=1, max_size=4, unique=True))
    orders = [draw(st.permutations(ids)) for _ in range(2)]
    score = {u: {i: draw(st.sampled_from(SCORES)) for i in ids} for u in users}
    truth = {"user_id": [], "item_id": []}
    exclude = {"user_id": [], "item_id": []}
    least = n_items
    for u in users:
        chosen = draw(st.lists(st.sampled_from(ids), min_size=1, max_size=n_items - 1, unique=True))
        rest = [i for i in ids if i not in chosen]
        excl = draw(st.lists(st.sampled_from(rest), max_size=len(rest) - 1, unique=True))
        least = min(least, len(rest) - len(excl))
        for i in chosen + chosen[: draw(st.integers(0, 1))]:  # sometimes a repeated truth row
            truth["user_id"].append(u)
            truth["item_id"].append(i)
        for i in excl:
            exclude["user_id"].append(u)
            exclude["item_id"].append(i)
    n = draw(st.integers(1, least))
    k = draw(st.integers(1, n_items + 1))
    ties = draw(st.sampled_from(["pessimistic", "optimistic"]))
    seed = draw(st.integers(0, 2**32))
    return dict(ids=ids, orders=orders, score=score, truth=truth, exclude=exclude, n=n, k=k, ties=ties, seed=seed)


def _run(c, catalog, source="callable"):
    score = c["score"]
    if source == "callable":
        src = lambda u: [score[u][i] for i in catalog]  # noqa: E731  one score per item, in the catalogue's order
    else:
        src = {"user_id": [u for u in score for _ in catalog], "item_id": [i for _ in score for i in catalog],
               "score": [score[u][i] for u in score for i in catalog]}
    specs = [f"hitrate@{c['k']}", f"ndcg@{c['k']}", "mrr", f"mrr@{c['k']}"]
    return specs, sampled_evaluate(src, c["truth"], specs, catalog=catalog, n=c["n"], seed=c["seed"], ties=c["ties"],
                                   exclude=c["exclude"], gamma=0.05)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(c=cases())
def test_full_equals_brute_force_full_ranking_in_any_catalogue_order(c):
    for catalog in c["orders"]:
        specs, res = _run(c, catalog)
        for spec in specs:
            want = brute_full(c["score"], c["truth"], c["exclude"], catalog, c["ties"], spec)
            assert res[(spec, "full")] == pytest.approx(want, abs=1e-12), (spec, catalog)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(c=cases())
def test_every_estimator_is_the_same_in_any_catalogue_order(c):
    specs, ref = _run(c, sorted(c["ids"]))
    for catalog in c["orders"]:
        for source in ("callable", "frame"):
            _, res = _run(c, catalog, source)
            assert set(res.values) == {(s, e) for s in specs for e in ESTIMATORS}
            assert res.values == ref.values, (catalog, source)
            assert res.instances == ref.instances
            for key in ("sampled_rank", "full_rank"):
                assert res.per_instance[key].tolist() == ref.per_instance[key].tolist()


def test_lowest_score_is_not_ranked_first():
    """The issue's case: catalogue [3, 1, 2], scores aligned to it, item 3 scores lowest."""
    res = sampled_evaluate(lambda u: [0.1, 0.5, 0.9], {"user_id": [1], "item_id": [3]}, ["hitrate@1", "mrr"],
                           catalog=[3, 1, 2], n=1)
    assert res[("hitrate@1", "full")] == 0.0
    assert res[("mrr", "full")] == pytest.approx(1 / 3)
    assert res.per_instance["full_rank"].tolist() == [3.0]


def test_shuffled_large_catalogue_matches_brute_force():
    """An EASE-like run: 400 items in a shuffled order, one positive per user near the top."""
    rng = np.random.default_rng(5)
    catalog = [int(x) for x in rng.permutation(np.arange(1000, 1400))]
    S = {u: {i: float(v) for i, v in zip(catalog, rng.normal(size=len(catalog)))} for u in range(20)}
    truth = {"user_id": list(S), "item_id": [sorted(S[u], key=S[u].get)[-int(rng.integers(1, 30))] for u in S]}
    empty = {"user_id": [], "item_id": []}
    res = sampled_evaluate(lambda u: [S[u][i] for i in catalog], truth, ["hitrate@10", "ndcg@10"], catalog=catalog, n=50)
    for spec in ("hitrate@10", "ndcg@10"):
        assert res[(spec, "full")] == pytest.approx(brute_full(S, truth, empty, catalog, "pessimistic", spec), abs=1e-12)
    assert res[("hitrate@10", "full")] > 0.2  # most positives sit in the top 30 of 400
