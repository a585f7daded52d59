r"""Paired statistics on per-user values: tests, corrections, confidence intervals, effect sizes.

Every function takes per-user values **aligned by user** (row *j* of every run is the same
user), as :func:`receval.runs.evaluate_runs` produces them. Nothing loops over users: the
resampling methods draw their resamples as matrices (in blocks of at most 2^24 cells).

**Tests** (two-sided; :math:`d_j = a_j - b_j`, *n* users):

* ``t``: paired t-test, :math:`t = \bar d / (s_d / \sqrt n)` with *n* − 1 degrees of freedom
  (``scipy.stats.ttest_rel``);
* ``wilcoxon``: Wilcoxon signed-rank test, zero differences dropped (``zero_method="wilcox"``,
  ``scipy.stats.wilcoxon``);
* ``permutation``: paired randomization test (Fisher): the signs of the :math:`d_j` are flipped
  at random ``resamples`` times; :math:`p = (1 + \#\{|\bar d^*| \ge |\bar d|\}) / (1 + B)`;
* ``bootstrap``: paired bootstrap test (Efron & Tibshirani §16.4): users resampled with
  replacement from the differences shifted to mean 0; :math:`p = (1 + \#\{|\bar d^*| \ge |\bar d|\}) / (1 + B)`;
* ``tukey``: Tukey's HSD over all runs at once (``scipy.stats.tukey_hsd``; it treats the runs as
  independent samples, as ranx does), the family-wise adjustment built in.

When every difference is 0 the p-value is 1 (no evidence of a difference). With fewer than 2
paired users no test is available: the p-value is NaN (shown as "–", null in JSON, never
significant) and the comparison's :attr:`~receval.comparison.PairTest.note` says why; Tukey's HSD
likewise needs 2 or more users per run.

**Corrections** across every p-value of a table (all pairs × all metrics): ``holm``
(step-down), ``bonferroni`` (:math:`\min(1, m p)`), ``bh`` (Benjamini–Hochberg,
``scipy.stats.false_discovery_control``), ``none``.

**Intervals** at ``level`` for a mean of per-user values: ``t``
(:math:`\bar x \pm t_{n-1,(1+\ell)/2}\, s/\sqrt n`), ``percentile`` and ``bca``
(``scipy.stats.bootstrap`` with ``resamples`` and ``seed``).

``poisson``: the Poisson bootstrap (Hanley & MacGibbon 2006; Chamandy et al. 2012): resample
*b* weighs user *u* by :math:`w_{ub} \sim \mathrm{Poisson}(1)`, drawn from a seeded 64-bit hash
of the user id (splitmix64 of the id's hash, ``seed`` and *b*, through the Poisson(1) inverse
CDF), so the same user gets the same weights wherever it is processed; the interval is the
percentile interval of :math:`\sum_u w_{ub} x_u / \sum_u w_{ub}`. On Spark only the *B*
weighted sums per partition travel (:func:`receval.backends.spark.poisson_intervals`), and the
interval equals the in-memory one for the same seed.

**Effect size**: ``cohen_dz`` = :math:`\bar d / s_d` (0 when every difference is 0; undefined,
NaN, when every user differs by the same non-zero amount, :math:`s_d = 0`, or with fewer than 2
users: shown as "–" and written as null in JSON, never as an infinite number).

**Options** ``resamples`` (an integer >= 100), ``seed`` (an integer from 0 to 2^64 − 1) and
``level`` (a number strictly between 0 and 1) are checked by :func:`check_options`, which every
function here calls: a bad value is a one-line :class:`~receval.errors.SpecError`.

**The user set** of :func:`compare`: the *paired* users, those on which every run has a value on
every metric (NaN: no value). Every mean, interval and test is computed on them, the comparison
states their count once (:attr:`~receval.comparison.Comparison.users`) and the signatures' user
set says how many users of the declared set were dropped.

>>> import numpy as np
>>> a = np.array([0.5, 0.7, 0.2, 0.9, 0.4]); b = np.array([0.4, 0.5, 0.2, 0.6, 0.1])
>>> round(paired_p(a, b, "t"), 6)       # d = .1 .2 0 .3 .3: mean .18, sd .130384; t = 3.0870, 4 df
0.036682
>>> holm([0.01, 0.04, 0.03])            # sorted .01 .03 .04 -> x3, x2, x1, then running max
array([0.03, 0.06, 0.06])
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .comparison import Comparison, Interval, PairTest
from .errors import DataError, SpecError
# the options' checks and the Poisson bootstrap kernel live in receval.resampling (the Spark
# backend draws the same weights); re-exported here, where they are documented and imported
from .resampling import (
    CI_METHODS, CORRECTIONS, MIN_RESAMPLES, TESTS, StatsOptions, _blocks, _check, check_options,
    poisson_interval, poisson_sums, poisson_weights, user_hash,
)
from .spec import signature_fields, signature_text
from .tables import comparison_html  # noqa: F401  (loads the notebook display of the Comparisons made here)

if TYPE_CHECKING:  # pragma: no cover
    from .types import Ids

#: signature keys of the statistics
KEYS = {"test": "test", "correction": "corr", "ci": "ci", "level": "level", "resamples": "B", "seed": "seed"}

#: the users x resamples counted at once by :func:`bootstrap_intervals` (measured: 2^23 beats
#: both the whole 2^24 block and small cache-sized parts at 10k and 100k users)
_COUNT_BINS = 1 << 23

#: at most this many values (users x columns: 2 MB of float64, in cache) the drawn rows are summed
#: directly (measured: 10k users x 15 columns twice as fast as counting; 100k x 30 ten times slower)
_GATHER_CELLS = 1 << 18
#: the users x resamples summed at once there (a sparse product's part)
_GATHER_PART = 1 << 20


def check_run_names(names: Sequence[Any]) -> None:
    """Refuse run names that are not non-empty strings, or that differ only by surrounding
    spaces (they would read as one run in every table)."""
    seen: dict[str, str] = {}
    for name in names:
        if not isinstance(name, str) or not name.strip():
            raise SpecError(f"run names must be non-empty strings, got {name!r}")
        key = name.strip()
        if key in seen:
            raise SpecError(f"run names {seen[key]!r} and {name!r} differ only by surrounding spaces: "
                            "give every run its own name")
        seen[key] = name


def _constant(d: np.ndarray) -> bool:
    """Every difference the same (to rounding: a − b computed per user may differ in the last bits)."""
    return bool(np.ptp(d) <= 1e-12 * float(np.abs(d).max()))


def paired_p(a: np.ndarray, b: np.ndarray, test: str = "t", *, resamples: int = 10_000, seed: int = 0) -> float:
    """Two-sided p-value of the paired ``test`` (module docs) of runs ``a`` and ``b``; NaN (no
    test) with fewer than 2 users."""
    from scipy import stats

    _check("test", test, TESTS[:4])
    check_options(resamples=resamples, seed=seed)
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise SpecError("paired values must be two 1-d arrays of the same users")
    d = a - b
    if len(d) < 2:  # one user's difference is no evidence, whatever the test
        return float("nan")
    if not np.any(d):
        return 1.0
    if test == "t":
        if _constant(d):  # no variance, every user moves the same way
            return 0.0
        return float(stats.ttest_rel(a, b).pvalue)
    if test == "wilcoxon":
        return float(stats.wilcoxon(d, zero_method="wilcox").pvalue)
    rng = np.random.default_rng(seed)
    obs = abs(d.mean())
    tol = 1e-12 * max(1.0, obs)  # resampled means equal to the observed one count as extreme
    hits = 0
    if test == "permutation":
        for size in _blocks(resamples, len(d)):
            signs = rng.integers(0, 2, size=(size, len(d)), dtype=np.int8) * 2 - 1
            hits += int(np.count_nonzero(np.abs(signs @ d / len(d)) >= obs - tol))
    else:  # bootstrap of the differences shifted to mean 0
        z = d - d.mean()
        for size in _blocks(resamples, len(d)):
            idx = rng.integers(0, len(d), size=(size, len(d)))
            hits += int(np.count_nonzero(np.abs(z[idx].mean(axis=1)) >= obs - tol))
    return (1 + hits) / (1 + resamples)


def holm(p: Sequence[float] | np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values."""
    pv = np.asarray(p, dtype=np.float64)
    m = len(pv)
    order = np.argsort(pv, kind="stable")
    adj = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * pv[order]))
    out = np.empty(m)
    out[order] = adj
    return out


def adjust(p: Sequence[float] | np.ndarray, correction: str) -> np.ndarray:
    """Adjusted p-values of one family (``holm``, ``bonferroni``, ``bh``, ``none``); a NaN
    p-value (no test) stays NaN and is not counted in the family."""
    from scipy import stats

    _check("correction", correction, CORRECTIONS)
    pv = np.asarray(p, dtype=np.float64)
    ok = ~np.isnan(pv)
    if not ok.all():
        out = np.full(len(pv), np.nan)
        out[ok] = adjust(pv[ok], correction)
        return out
    if len(pv) == 0 or correction == "none":
        return pv.copy()
    if correction == "bonferroni":
        return np.minimum(1.0, pv * len(pv))
    if correction == "holm":
        return holm(pv)
    return np.asarray(stats.false_discovery_control(pv, method="bh"))


def interval(x: np.ndarray, method: str = "bca", level: float = 0.95, *, resamples: int = 10_000, seed: int = 0,
             ids: Ids | None = None) -> Interval:
    """Confidence interval of the mean of ``x`` (module docs); ``ids``: the users' ids (``poisson``)."""
    from scipy import stats

    _check("ci", method, CI_METHODS[:4])
    check_options(level=level, resamples=resamples, seed=seed)
    x = np.asarray(x, dtype=np.float64)
    m = float(x.mean()) if len(x) else float("nan")
    if len(x) < 2 or np.all(x == x[0]):  # no spread: the interval is the point
        return Interval(m, m, method, level)
    if method == "t":
        lo, hi = stats.t.interval(level, len(x) - 1, loc=m, scale=stats.sem(x))
        return Interval(float(lo), float(hi), method, level)
    if method == "poisson":
        if ids is None or len(ids) != len(x):
            raise SpecError("ci=poisson draws each user's weights from its id: pass the user ids")
        return poisson_interval(*poisson_sums(x, user_hash(ids), resamples, seed), level)
    return bootstrap_intervals([x], method, level, resamples=resamples, seed=seed)[0]


def bootstrap_intervals(columns: Sequence[np.ndarray], method: str = "bca", level: float = 0.95, *,
                        resamples: int = 10_000, seed: int = 0,
                        differences: Sequence[tuple[int, int]] = ()) -> list[Interval]:
    """The ``bca`` or ``percentile`` bootstrap intervals of the means of several columns of the
    same users at once, equal to ``scipy.stats.bootstrap((x,), np.mean, method=..., batch=...,
    random_state=np.random.default_rng(seed))`` for each column (to the last bits of rounding).

    The resamples are drawn once, as scipy draws them (the same generator calls, in blocks of at
    most 2^24 cells, the next block drawn in a thread while this one is summed), and serve every
    column: per block, every column's resampled sums at once, as a 0/1 sparse product of the
    drawn users with the columns when they fit in cache (:data:`_GATHER_CELLS`), else as each
    resample's count of every user (``bincount``) times the columns. A resample whose
    mean lies within rounding of the column's mean is recomputed as scipy computes it, so the
    BCa bias correction (which counts resampled means below and at the mean) is scipy's. BCa's
    jackknife is in closed form for a mean: :math:`\theta_{(i)} = (S - x_i)/(n - 1)`.
    A column of fewer than 2 values, or of one value, gets the point as its interval.

    ``differences``: pairs ``(i, j)`` of columns whose difference ``columns[i] - columns[j]``
    also gets its interval (after the columns' own, in that order): its resampled means are
    those of the two columns subtracted (the mean is linear; equal to summing the differences
    to rounding, and a resample within rounding of the difference's mean is recomputed from the
    differences as scipy would), so a comparison sums each run's column once."""
    from scipy import stats
    from scipy.special import ndtr, ndtri

    _check("ci", method, ("bca", "percentile"))
    check_options(level=level, resamples=resamples, seed=seed)
    cols = [np.asarray(c, dtype=np.float64) for c in columns]
    for i, j in differences:
        if not (0 <= i < len(cols) and 0 <= j < len(cols)) or cols[i].shape != cols[j].shape:
            raise SpecError("a difference names two columns of the same users by their positions, e.g. (0, 1)")
    base = len(cols)
    cols += [cols[i] - cols[j] for i, j in differences]
    out: list[Interval | None] = [None] * len(cols)
    live = []
    for j, x in enumerate(cols):
        m = float(x.mean()) if len(x) else float("nan")
        if len(x) < 2 or np.all(x == x[0]):  # no spread: the interval is the point
            out[j] = Interval(m, m, method, level)
        else:
            live.append(j)
    if live:
        n = len(cols[live[0]])
        if any(len(cols[j]) != n for j in live):
            raise SpecError("bootstrap_intervals takes columns of the same users: give them the same length")
        # the columns summed: the live ones and those a live difference subtracts
        summed = sorted({j for j in live if j < base} | {c for j in live if j >= base for c in differences[j - base]})
        where = {j: p for p, j in enumerate(summed)}
        outputs = [(cols[j], (where[j], -1) if j < base else (where[differences[j - base][0]], where[differences[j - base][1]]))
                   for j in live]
        X = np.column_stack([cols[j] for j in summed])  # [n, K]
        theta_hat = np.array([np.mean(cols[j]) for j in live])
        theta = _resampled_means(X, outputs, theta_hat, resamples, seed)
        alpha = (1 - level) / 2
        for k, j in enumerate(live):
            tb = theta[k]
            if method == "bca":
                x = cols[j]
                pct = (np.count_nonzero(tb < theta_hat[k]) + np.count_nonzero(tb <= theta_hat[k])) / (2 * resamples)
                z0 = ndtri(pct)
                jack = (x.sum() - x) / (n - 1)  # the jackknife means, in closed form
                u = (n - 1) * (jack.mean() - jack)
                a_hat = 1 / 6 * (np.sum(u ** 3) / n ** 3) / (np.sum(u ** 2) / n ** 2) ** (3 / 2)
                z_a = float(ndtri(alpha))
                num1, num2 = z0 + z_a, z0 - z_a
                q = np.array([ndtr(z0 + num1 / (1 - a_hat * num1)), ndtr(z0 + num2 / (1 - a_hat * num2))])
            else:
                q = np.array([alpha, 1 - alpha])
            with np.errstate(invalid="ignore"):
                lo, hi = stats.quantile(tb, q)
            out[j] = Interval(float(lo), float(hi), method, level)
    return [iv for iv in out if iv is not None]


def _draw_blocks(n: int, resamples: int, seed: int) -> Iterator[np.ndarray]:
    """The resamples' user indices, block by block (:func:`_blocks`), as scipy draws them:
    ``default_rng(seed).integers(0, n, (size, n))`` per block. Drawn as int32 when ``n`` fits
    (numpy's bounded integers below 2^32 come from the same 32-bit draws whatever the dtype: the
    same values at half the memory), the next block drawn in a thread while the caller counts
    this one (the generator releases the GIL; the draws stay in order)."""
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(seed)
    dtype = np.int32 if n < 2**31 else np.int64
    sizes = _blocks(resamples, n)
    with ThreadPoolExecutor(1) as pool:
        nxt = pool.submit(rng.integers, 0, n, (sizes[0], n), dtype)
        for i in range(len(sizes)):
            idx = nxt.result()
            if i + 1 < len(sizes):
                nxt = pool.submit(rng.integers, 0, n, (sizes[i + 1], n), dtype)
            yield idx


def _block_sums(idx: np.ndarray, X: np.ndarray, pool: Any) -> np.ndarray:
    """``[size, K]``: for each resample (row of ``idx``), the sum of the rows of ``X`` it draws."""
    size, n = idx.shape
    if n * X.shape[1] <= _GATHER_CELLS:  # X fits in cache: sum the drawn rows, as 0/1 sparse products
        from scipy import sparse

        rows = max(1, _GATHER_PART // n)
        ones, ptr = np.ones(min(rows, size) * n), np.arange(0, min(rows, size) * n + 1, n, dtype=np.int32)

        def summed(r0: int) -> np.ndarray:
            p = idx[r0:r0 + rows]
            m = sparse.csr_matrix((ones[:p.size], p.ravel(), ptr[:len(p) + 1]), shape=(len(p), n))
            return np.asarray(m @ X)

        return np.concatenate(list(pool.map(summed, range(0, size, rows))))
    # else each resample's count of every user (bincount), then one counts x values product
    out = np.empty((size, X.shape[1]))
    rows = -(-size // -(-(size * n) // _COUNT_BINS))  # the block in equal parts of at most _COUNT_BINS counts
    offsets = (np.arange(min(rows, size), dtype=np.int64) * n)[:, None]
    for r0 in range(0, size, rows):
        part = idx[r0:r0 + rows]
        counts = np.bincount((part + offsets[:len(part)]).ravel(), minlength=len(part) * n)
        out[r0:r0 + len(part)] = counts.reshape(len(part), n).astype(np.float64) @ X
    return out


def _resampled_means(X: np.ndarray, outputs: list[tuple[np.ndarray, tuple[int, int]]], theta_hat: np.ndarray,
                     resamples: int, seed: int) -> np.ndarray:
    """``[len(outputs), resamples]``: each output's mean in every resample
    (:func:`bootstrap_intervals`); an output ``(x, (p, q))`` is column *p* of ``X`` (``q`` -1)
    or column *p* minus column *q*, ``x`` its values. A resampled mean within rounding of the
    output's mean is recomputed as scipy computes it (``np.mean`` of the drawn values of ``x``),
    so BCa's bias correction counts as scipy's."""
    from concurrent.futures import ThreadPoolExecutor

    n, K = X.shape
    col_scale = np.abs(X).max(axis=0)
    p = np.array([o[1][0] for o in outputs])
    q = np.array([o[1][1] for o in outputs])
    # rounding: of the output's own values, and for a difference of the two sums subtracted
    own = np.array([np.abs(x).max() for x, _ in outputs])
    scale = np.maximum.reduce([own, col_scale[p], np.where(q >= 0, col_scale[q], 0.0), np.full(len(outputs), 1e-300)])
    theta = np.empty((len(outputs), resamples))
    b0 = 0
    with ThreadPoolExecutor(2) as pool:  # the parts of a block summed on both cores (the products release the GIL)
        for idx in _draw_blocks(n, resamples, seed):
            size = len(idx)
            sums = _block_sums(idx, X, pool) / n  # [size, K]
            means = sums[:, p] - np.where(q >= 0, sums[:, q], 0.0)  # [size, outputs]
            near = np.abs(means - theta_hat) <= 1e-9 * scale
            for b, k in zip(*np.nonzero(near)):  # at the mean within rounding: scipy's own sum decides
                means[b, k] = np.mean(outputs[k][0][idx[b]])
            theta[:, b0:b0 + size] = means.T
            b0 += size
    return theta


def effect(a: np.ndarray, b: np.ndarray) -> float:
    """Cohen's :math:`d_z` of the paired differences: 0 when every difference is 0, NaN
    (undefined) with fewer than 2 users or when every user differs by the same non-zero amount.

    >>> effect([0.5, 0.75, 1.0], [0.25, 0.5, 0.75])   # every user + 0.25: sd 0
    nan
    """
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    if len(d) < 2:
        return float("nan")
    if not np.any(d):
        return 0.0
    if _constant(d):
        return float("nan")
    return float(d.mean() / d.std(ddof=1))


def stats_signature(test: str, correction: str, ci: str, level: float, resamples: int, seed: int) -> str:
    """The statistics' part of a signature: ``test:t|corr:holm|ci:bca|level:0.95|B:10000|seed:0``."""
    fields = {"test": test, "corr": correction, "ci": ci, "level": format(level, "g"), "B": str(resamples), "seed": str(seed)}
    return signature_text(*fields.items())


def parse_stats_signature(text: str) -> dict[str, Any]:
    """The statistics' fields of a comparison signature (the inverse of :func:`stats_signature`).

    >>> parse_stats_signature("ndcg@10|rel:4|test:t|corr:holm|ci:bca|level:0.95|B:1000|seed:0|userset:truth")
    {'test': 't', 'correction': 'holm', 'ci': 'bca', 'level': 0.95, 'resamples': 1000, 'seed': 0, 'users': 'truth'}
    """
    back = {v: k for k, v in KEYS.items()}
    out: dict[str, Any] = {}
    for key, value in signature_fields(text).items():
        if key in back:
            name = back[key]
            out[name] = float(value) if name == "level" else int(value) if name in ("resamples", "seed") else value
        elif key == "userset":
            out["users"] = value
        elif key in ("paired", "dropped"):
            out[key] = value
    return out


def compare(
    per_user: Mapping[str, Mapping[str, np.ndarray]],
    *,
    higher_is_better: dict[str, bool] | None = None,
    signatures: dict[str, str] | None = None,
    users: str = "truth",
    user_ids: Ids | None = None,
    progress: bool | None = None,
    dropped_why: str = "novalue",
    options: StatsOptions | None = None,
    **given: Any,
) -> Comparison:
    """A :class:`~receval.comparison.Comparison` of runs from their per-user values.

    ``per_user[run][metric]`` holds one value per user, the same users in the same order for
    every run (NaN: no value, e.g. a user the metric leaves out). Every mean, interval and test
    is computed on the *paired* users (:func:`paired_users`: a value in every run on every
    metric), so every number of the comparison is on the same users; ``Comparison.users`` is
    their count and ``Comparison.dropped`` the users left out, which the signatures state when
    there are any: ``userset:truth|paired:518/580|dropped:norel`` (``dropped_why``: why they lack
    a value, ``novalue`` by default, ``norel`` when the caller knows they have no relevant item).
    With ``test="tukey"`` the signatures' ``corr`` is ``tukey``, the adjustment applied. Paired tests run against ``baseline`` (every other
    run) or between all pairs; the p-values of the whole table are corrected together; intervals
    are computed for every value and every difference (``ci="poisson"`` needs ``user_ids``, the
    users of the rows). ``progress``: a rich progress bar on stderr (default: when stderr is a
    terminal). The statistics' options (``test``, ``correction``, ``ci``, ``level``,
    ``resamples``, ``seed``, ``baseline``): :class:`receval.resampling.StatsOptions`, given as
    ``options=`` and/or as keywords (which win).

    >>> import numpy as np
    >>> pu = {"a": {"m@1": np.array([1.0, 1.0, 0.0, 1.0])}, "b": {"m@1": np.array([0.0, 1.0, 0.0, 0.0])}}
    >>> c = compare(pu, test="t", ci="t", correction="none")
    >>> c.values[("a", "m@1")], c.pair("m@1", "a", "b").diff, c.pair("m@1", "a", "b").wins
    (0.75, 0.5, 2)
    >>> c.pair("m@1", "b", "a").diff                    # always the first run minus the second
    -0.5
    >>> pu["b"] = {"m@1": np.array([0.0, 1.0, np.nan, 0.0])}   # no value of b for the third user
    >>> c = compare(pu, test="t", ci="none", correction="none")
    >>> c.users, c.dropped, c.values[("a", "m@1")]     # a's mean on the paired users too
    (3, 1, 1.0)
    """
    o = StatsOptions.of(options, given)
    test, correction, ci, level, resamples, seed, baseline = o.test, o.correction, o.ci, o.level, o.resamples, o.seed, o.baseline
    runs = list(per_user)
    if len(runs) < 1:
        raise SpecError("compare needs at least one run")
    check_run_names(runs)
    if baseline is not None and baseline not in per_user:
        raise SpecError(f"baseline {baseline!r} is not one of the runs ({', '.join(runs)})")
    metrics = list(per_user[runs[0]])
    for r in runs[1:]:
        if list(per_user[r]) != metrics:
            raise SpecError(f"run {r!r} has other metrics than {runs[0]!r}; evaluate every run with the same metrics")
    keep = paired_users(per_user)
    total, n_users = len(keep), int(keep.sum())
    if metrics and n_users == 0:
        raise DataError(_no_paired_user(per_user, total))
    dropped = total - n_users
    cols = {(r, m): np.asarray(per_user[r][m], dtype=np.float64)[keep] for r in runs for m in metrics}
    hib = {m: True for m in metrics} | dict(higher_is_better or {})
    userset: list[tuple[str, Any]] = [("userset", users)]
    if dropped:
        userset += [("paired", f"{n_users}/{total}"), ("dropped", dropped_why)]
    stat_sig = stats_signature(test, "tukey" if test == "tukey" else correction, ci, level, resamples, seed)
    sig_stats = signature_text(stat_sig, *userset)
    sigs = {m: signature_text(str((signatures or {}).get(m, m)), sig_stats) for m in metrics}
    values: dict[tuple[str, str], float] = {}
    intervals: dict[tuple[str, str], Interval] = {}
    ids = None if user_ids is None else np.asarray(user_ids)
    if ids is not None:
        if len(ids) != total:
            raise SpecError(f"user_ids must name the {total} users of the per-user values, got {len(ids)} ids")
        ids = ids[keep]
    pairs_n = len(runs) - 1 if baseline else len(runs) * (len(runs) - 1) // 2
    bar = _progress(progress, len(metrics) * (len(runs) + pairs_n), "comparing runs")
    pairs_of = [(baseline, r) for r in runs if r != baseline] if baseline else [
        (runs[i], runs[j]) for i in range(len(runs)) for j in range(i + 1, len(runs))
    ]
    diff_cis: dict[tuple[str, str, str], Interval] = {}
    if ci in ("bca", "percentile"):  # every value and every difference from one set of resamples
        keys: list[Any] = [(r, m) for r in runs for m in metrics] + [(m, a, b) for m in metrics for a, b in pairs_of]
        at = {k: i for i, k in enumerate(keys[:len(runs) * len(metrics)])}
        diffs = [(at[(a, m)], at[(b, m)]) for m in metrics for a, b in pairs_of]
        for k, iv in zip(keys, bootstrap_intervals([cols[k] for k in keys[:len(at)]], ci, level, resamples=resamples,
                                                   seed=seed, differences=diffs)):
            if len(k) == 2:
                intervals[k] = iv
            else:
                diff_cis[k] = iv
    for r in runs:
        for m in metrics:
            x = cols[(r, m)]
            values[(r, m)] = float(x.mean())
            if ci != "none" and (r, m) not in intervals:
                intervals[(r, m)] = interval(x, ci, level, resamples=resamples, seed=seed, ids=ids)
            bar.advance()
    note = (f"n/a: fewer than 2 paired users ({n_users}); a paired test needs 2 or more" if n_users < 2 else
            "n/a: the test is undefined on these values")
    raw: list[tuple[str, str, str, float, float, float, int, int, int, Interval | None]] = []
    for m in metrics:
        tukey = _tukey([cols[(r, m)] for r in runs]) if test == "tukey" else None
        for a, b in pairs_of:
            x, y = cols[(a, m)], cols[(b, m)]
            d = x - y
            if tukey is not None:
                p = float(tukey[runs.index(a), runs.index(b)])
            else:
                p = paired_p(x, y, test, resamples=resamples, seed=seed)
            dci = diff_cis.get((m, a, b)) or (interval(d, ci, level, resamples=resamples, seed=seed, ids=ids)
                                              if ci != "none" else None)
            bar.advance()
            raw.append((m, a, b, float(d.mean()), p, effect(x, y),
                        int((d > 0).sum()), int((d == 0).sum()), int((d < 0).sum()), dci))
    bar.close()
    # Tukey's HSD is already adjusted for its family; the other tests are corrected together
    adj = np.array([t[4] for t in raw]) if test == "tukey" else adjust([t[4] for t in raw], correction)
    pairs = [
        PairTest(m, a, b, diff, p, float(pa), test, "tukey" if test == "tukey" else correction, eff, "cohen_dz", w, t_, lo, dci,
                 note if math.isnan(p) else None)
        for (m, a, b, diff, p, eff, w, t_, lo, dci), pa in zip(raw, adj)
    ]
    return Comparison(runs, metrics, values, hib, sigs, n_users, intervals, pairs, baseline, None, dropped)


def paired_users(per_user: Mapping[str, Mapping[str, Any]]) -> np.ndarray:
    """The paired users of aligned per-user values: a boolean mask, True where every run has a
    value (not NaN) on every metric.

    >>> paired_users({"a": {"m": [1.0, float("nan"), 0.5]}, "b": {"m": [0.0, 1.0, float("nan")]}}).tolist()
    [True, False, False]
    """
    cols = [np.asarray(v, dtype=np.float64) for run in per_user.values() for v in run.values()]
    if not cols:
        return np.zeros(0, dtype=bool)
    lengths = {c.shape for c in cols}
    if len(lengths) > 1 or cols[0].ndim != 1:
        raise SpecError("per-user values must be 1-d arrays of the same users, in the same order, for every run "
                        f"and metric; got lengths {sorted(len(c) for c in cols)}")
    return ~np.any(np.isnan(np.vstack(cols)), axis=0)


def _no_paired_user(per_user: Mapping[str, Mapping[str, Any]], total: int) -> str:
    for r, by_metric in per_user.items():
        for m, v in by_metric.items():
            if not np.any(~np.isnan(np.asarray(v, dtype=np.float64))):
                return (f"no user to compare: run {r!r} has no value of {m} for any of its {total} users; "
                        "leave that metric out of the comparison")
    return (f"no user to compare: none of the {total} users has a value in every run on every metric; "
            "compare the metrics separately")


class _Bar:
    """A rich progress bar on stderr, or nothing."""

    def __init__(self, total: int, text: str, show: bool):
        self.p = None
        if show and total > 1:
            from rich.progress import Progress

            self.p = Progress(transient=True)
            self.p.start()
            self.task = self.p.add_task(text, total=total)

    def advance(self) -> None:
        if self.p is not None:
            self.p.advance(self.task)

    def close(self) -> None:
        if self.p is not None:
            self.p.stop()


def _progress(show: bool | None, total: int, text: str) -> _Bar:
    import sys

    return _Bar(total, text, sys.stderr.isatty() if show is None else show)


def _tukey(samples: list[np.ndarray]) -> np.ndarray:
    """Tukey's HSD p-values of the runs' values (the paired users'); NaN (not available) when a
    run has fewer than 2 values."""
    from scipy import stats

    if len(samples) < 2:
        return np.ones((1, 1))
    if any(len(x) < 2 for x in samples):
        return np.full((len(samples), len(samples)), np.nan)
    if all(np.all(x == samples[0][0]) for x in samples):
        return np.ones((len(samples), len(samples)))
    with np.errstate(divide="ignore", invalid="ignore"):  # no spread within the runs: p 0 between different runs
        return np.asarray(stats.tukey_hsd(*samples).pvalue)


__all__ = ["TESTS", "CORRECTIONS", "CI_METHODS", "MIN_RESAMPLES", "check_options", "check_run_names", "paired_users",
           "paired_p", "holm", "adjust", "interval", "bootstrap_intervals", "effect", "compare",
           "user_hash", "poisson_weights", "poisson_sums", "poisson_interval",
           "stats_signature", "parse_stats_signature"]
