"""The statistics' options and the Poisson bootstrap kernel.

Shared by :mod:`receval.stats` (where they are documented) and the Spark backend, which draws
the same Poisson(1) weights per user on its workers (:func:`user_hash`, :func:`poisson_sums`)
and reduces them on the driver (:func:`poisson_interval`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from .comparison import Interval
from .errors import SpecError, bad_param

TESTS = ("t", "wilcoxon", "permutation", "bootstrap", "tukey")
CORRECTIONS = ("holm", "bonferroni", "bh", "none")
CI_METHODS = ("bca", "percentile", "t", "poisson", "none")
_BLOCK = 1 << 24


#: the fewest resamples accepted: fewer leave a 95% interval's tails empty (BCa turns NaN)
MIN_RESAMPLES = 100


def _check(name: str, value: str, choices: Sequence[str]) -> str:
    if value not in choices:
        raise SpecError(f"{name} must be one of {', '.join(choices)}; got {value!r}")
    return value


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def check_options(*, test: str | None = None, correction: str | None = None, ci: str | None = None,
                  level: Any = None, resamples: Any = None, seed: Any = None) -> None:
    """Check the statistics' options (those given): one place for every function of this module.

    >>> check_options(level=0.95, resamples=10_000, seed=0)
    >>> check_options(level=95)
    Traceback (most recent call last):
    receval.errors.SpecError: `level` must be a number between 0 and 1 (exclusive), e.g. 0.95 for 95% intervals, got 95
    """
    for name, value, choices in (("test", test, TESTS), ("correction", correction, CORRECTIONS), ("ci", ci, CI_METHODS)):
        if value is not None:
            _check(name, value, choices)
    if resamples is not None and not (_is_int(resamples) and resamples >= MIN_RESAMPLES):
        raise bad_param("resamples", f"an integer >= {MIN_RESAMPLES} (e.g. 10000, the default)", resamples)
    if seed is not None and not (_is_int(seed) and 0 <= seed < 2**64):
        raise bad_param("seed", "an integer from 0 to 2**64 - 1 (e.g. 0, the default)", seed)
    if level is not None:
        ok = isinstance(level, (int, float, np.integer, np.floating)) and not isinstance(level, (bool, np.bool_))
        if not (ok and math.isfinite(level) and 0 < level < 1):
            raise bad_param("level", "a number between 0 and 1 (exclusive), e.g. 0.95 for 95% intervals", level)


def _blocks(B: int, n: int) -> list[int]:
    step = max(1, _BLOCK // max(n, 1))
    return [min(step, B - i) for i in range(0, B, step)]


# ---- the Poisson bootstrap ----------------------------------------------------------------------

_M64 = np.uint64(0xFFFFFFFFFFFFFFFF)


def _splitmix64(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        x = x + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def _poisson1_cdf() -> np.ndarray:
    import math

    return np.cumsum([math.exp(-1.0) / math.factorial(k) for k in range(24)])


_CDF = _poisson1_cdf()


def user_hash(ids: Any) -> np.ndarray:
    """A 64-bit hash of each user id (``ids``: a sequence, numpy array or Series; integers as
    Int64, anything else as its string), the same in memory and on Spark's workers."""
    import polars as pl

    s = pl.Series("u", ids)
    s = s.cast(pl.Int64) if s.dtype.is_integer() else s.cast(pl.String)
    return s.hash(seed=0x5EED).to_numpy().astype(np.uint64)


def poisson_weights(h: np.ndarray, b0: int, b1: int, seed: int) -> np.ndarray:
    """Poisson(1) weights ``[b1 - b0, len(h)]`` of resamples ``b0..b1-1`` for users of hash ``h``."""
    b = np.arange(b0, b1, dtype=np.uint64)[:, None]
    with np.errstate(over="ignore"):
        key = _splitmix64(np.uint64(seed) * np.uint64(0xD1B54A32D192ED03) + b) ^ h[None, :]
    u = (_splitmix64(key) >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))
    return np.searchsorted(_CDF, u, side="right").astype(np.float64)


def poisson_sums(x: np.ndarray, h: np.ndarray, resamples: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``(Σ_u w_ub x_u, Σ_u w_ub)`` for every resample *b* (NaN values left out)."""
    check_options(resamples=resamples, seed=seed)
    x = np.asarray(x, dtype=np.float64)
    ok = ~np.isnan(x)
    x, h = x[ok], np.asarray(h, dtype=np.uint64)[ok]
    swx, sw = np.zeros(resamples), np.zeros(resamples)
    b0 = 0
    for size in _blocks(resamples, len(x)):
        w = poisson_weights(h, b0, b0 + size, seed)
        swx[b0:b0 + size], sw[b0:b0 + size] = w @ x, w.sum(axis=1)
        b0 += size
    return swx, sw


def poisson_interval(swx: np.ndarray, sw: np.ndarray, level: float = 0.95) -> Interval:
    """The percentile interval of the Poisson-bootstrap means ``swx / sw`` (resamples with no weight dropped)."""
    check_options(level=level)
    ok = sw > 0
    means = swx[ok] / sw[ok]
    lo, hi = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
    return Interval(float(lo), float(hi), "poisson", level)


@dataclass(frozen=True)
class StatsOptions:
    """The statistics' options of a comparison of runs (:mod:`receval.stats` says what each
    one does): one object for :func:`receval.stats.compare`, :meth:`receval.runs.Runs.compare`,
    :func:`receval.segments.compare_segments` and the command line."""

    test: str = "t"
    correction: str = "holm"
    ci: str = "bca"
    level: float = 0.95
    resamples: int = 10_000
    seed: int = 0
    #: the run every other run is tested against (None: all pairs)
    baseline: str | None = None

    @classmethod
    def of(cls, options: StatsOptions | None, given: Mapping[str, Any], caller: str = "compare") -> StatsOptions:
        """``options`` (default: the defaults) with the keywords ``given`` set, checked
        (:func:`check_options`); an unknown keyword is a TypeError naming ``caller``."""
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(given) - names)
        if unknown:
            raise TypeError(f"{caller}() got an unexpected keyword argument {unknown[0]!r}")
        out = replace(options if options is not None else cls(), **given)
        check_options(test=out.test, correction=out.correction, ci=out.ci, level=out.level, resamples=out.resamples,
                      seed=out.seed)
        return out


__all__ = ["StatsOptions", "TESTS", "CORRECTIONS", "CI_METHODS", "MIN_RESAMPLES", "check_options", "user_hash", "poisson_weights",
           "poisson_sums", "poisson_interval"]
