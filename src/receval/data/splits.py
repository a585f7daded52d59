"""Train/test splits of an interaction frame.

All splits are pure polars/numpy (no Python loop per user), deterministic,
keep every input column, and return the rows of each part in input order.
Input frames need ``user_id``, ``item_id`` and (for the time-based splits)
``timestamp`` columns, as produced by :mod:`receval.data.movielens`.

Fractions are interpreted through their shortest decimal representation
(``0.2`` means exactly 1/5), so ``n = 10, test_fraction = 0.3`` gives 3 and
never 2 because of binary floating point.
"""

from __future__ import annotations

import math
from datetime import datetime, UTC
from fractions import Fraction
from typing import NamedTuple

import numpy as np
import polars as pl

__all__ = [
    "Split",
    "TimeSplit",
    "global_time_split",
    "leave_last_out",
    "random_split",
    "n_train_target",
    "to_unix_seconds",
]


class Split(NamedTuple):
    """A train/test pair (unpacks as ``train, test = split``), the rows of each part in input
    order: what :func:`leave_last_out` and :func:`random_split` return."""

    train: pl.DataFrame
    test: pl.DataFrame


class TimeSplit(NamedTuple):
    """A global time split (unpacks as ``train, test, cutoff = split``).

    ``cutoff`` is the first test time in Unix seconds: train rows have
    ``timestamp < cutoff``, test rows ``timestamp >= cutoff``.
    """

    train: pl.DataFrame
    test: pl.DataFrame
    cutoff: int


def _check_fraction(test_fraction: float) -> Fraction:
    if isinstance(test_fraction, bool) or not isinstance(test_fraction, (int, float, Fraction)):
        raise ValueError(f"test_fraction must be a number in (0, 1), got {test_fraction!r}")
    f = test_fraction if isinstance(test_fraction, Fraction) else Fraction(repr(float(test_fraction)))
    if not 0 < f < 1:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction!r}; e.g. test_fraction=0.2")
    return f


def n_train_target(n: int, test_fraction: float) -> int:
    r"""Number of rows before the boundary: :math:`\lfloor (1 - f)\,n \rfloor`.

    Computed exactly in rational arithmetic on the decimal value of ``f``.

    >>> n_train_target(100836, 0.2), n_train_target(10, 0.3)
    (80668, 7)
    """
    return math.floor((1 - _check_fraction(test_fraction)) * n)


def to_unix_seconds(t: int | float | str | datetime) -> int:
    """Convert a cut-off given as Unix seconds, ISO 8601 text or datetime.

    Naive datetimes and ISO strings without offset are taken as UTC.

    >>> to_unix_seconds("1970-01-02T00:00:00"), to_unix_seconds(86400)
    (86400, 86400)
    """
    if isinstance(t, bool):
        raise ValueError(f"cutoff must be Unix seconds, an ISO 8601 string or a datetime, got {t!r}")
    if isinstance(t, (int, np.integer)):
        return int(t)
    if isinstance(t, (float, np.floating)):
        if not float(t).is_integer():
            raise ValueError(f"cutoff {t!r} is not a whole number of seconds; pass an int")
        return int(t)
    if isinstance(t, str):
        try:
            t = datetime.fromisoformat(t)
        except ValueError:
            raise ValueError(f"cutoff {t!r} is not ISO 8601; pass e.g. '2016-03-18T08:26:11Z' or Unix seconds") from None
    if isinstance(t, datetime):
        if t.tzinfo is None:
            t = t.replace(tzinfo=UTC)
        ts = t.timestamp()
        if not float(ts).is_integer():
            raise ValueError(f"cutoff {t!r} has sub-second precision; timestamps are whole seconds")
        return int(ts)
    raise ValueError(f"cutoff must be Unix seconds, an ISO 8601 string or a datetime, got {type(t).__name__}")


def _require(df: pl.DataFrame, cols: tuple[str, ...], what: str) -> None:
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ValueError(
            f"{what} needs column(s) {missing}; load data with receval.data.load_movielens/"
            "load_interactions or rename your columns"
        )
    if df.height == 0:
        raise ValueError(f"{what} got an empty frame; pass at least one interaction")
    if "timestamp" in cols and not df.schema["timestamp"].is_integer():
        raise ValueError(
            f"{what}: column 'timestamp' has type {df.schema['timestamp']}; convert it to integer Unix "
            "seconds (load_interactions does)"
        )
    if "timestamp" in cols and df["timestamp"].null_count():
        raise ValueError(
            f"{what}: {df['timestamp'].null_count()} rows have no timestamp; drop them or use random_split"
        )


def global_time_split(
    df: pl.DataFrame,
    test_fraction: float | None = 0.2,
    *,
    cutoff: int | str | datetime | None = None,
) -> TimeSplit:
    r"""Split by one global point in time: the latest interactions are test.

    Boundary rule (identical to RePlay's ``DateSplitter`` with a float
    ``test_start``): sort the :math:`n` timestamps ascending,
    :math:`t_{(0)} \le \dots \le t_{(n-1)}`, and take

    .. math::  t^* = t_{(p)}, \qquad p = \lfloor (1 - f)\, n \rfloor

    (0-based position).  Every row with ``timestamp >= t*`` is test, every
    row with ``timestamp < t*`` is train.  All rows sharing a timestamp
    therefore land on the same side; ties at :math:`t^*` all go to **test**,
    so the test part has *at least* :math:`n - p = \lceil f n \rceil` rows.

    Parameters
    ----------
    df : polars.DataFrame
        Interactions with a non-null integer ``timestamp`` column.
    test_fraction : float, default 0.2
        :math:`f \in (0, 1)`; ignored when ``cutoff`` is given.
    cutoff : int, str or datetime, optional
        Use this first test time instead (Unix seconds, ISO 8601 string or
        datetime; naive = UTC).

    Returns
    -------
    TimeSplit
        ``(train, test, cutoff)``; ``cutoff`` is :math:`t^*` in Unix seconds.

    Examples
    --------
    >>> df = pl.DataFrame({"user_id": [1, 1, 2, 2, 3], "item_id": [1, 2, 1, 3, 2],
    ...                    "timestamp": [10, 20, 30, 30, 40]})
    >>> train, test, t = global_time_split(df, 0.5)   # p = floor(2.5) = 2
    >>> t, train.height, test.height                  # both rows at t=30 are test
    (30, 2, 3)
    """
    _require(df, ("user_id", "item_id", "timestamp"), "global_time_split")
    if cutoff is None:
        if test_fraction is None:
            raise ValueError("global_time_split needs test_fraction or cutoff; pass e.g. test_fraction=0.2")
        p = n_train_target(df.height, test_fraction)
        t_star = int(df["timestamp"].sort()[p])
    else:
        t_star = to_unix_seconds(cutoff)
    is_test = pl.col("timestamp") >= t_star
    return TimeSplit(df.filter(~is_test), df.filter(is_test), t_star)


def leave_last_out(df: pl.DataFrame, n: int = 1) -> Split:
    """Hold out each user's ``n`` latest interactions.

    Within a user, rows are ordered by ``timestamp`` ascending, ties broken
    by ``item_id`` ascending (then by input order), and the last ``n`` rows
    of that order are test.  So among interactions at the same second the
    one with the **largest** ``item_id`` counts as the latest.  A user with
    ``n`` or fewer interactions has all of them in test (and becomes a cold
    user that :func:`receval.data.protocol.prepare_study` removes).

    Parameters
    ----------
    df : polars.DataFrame
        Interactions with ``user_id``, ``item_id``, ``timestamp``.
    n : int, default 1
        Number of interactions per user to hold out (>= 1).

    Returns
    -------
    Split

    Examples
    --------
    >>> df = pl.DataFrame({"user_id": [1, 1, 1, 2], "item_id": [5, 3, 4, 9],
    ...                    "timestamp": [1, 2, 2, 7]})
    >>> train, test = leave_last_out(df)
    >>> test.rows()
    [(1, 4, 2), (2, 9, 7)]
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    _require(df, ("user_id", "item_id", "timestamp"), "leave_last_out")
    idx = "__receval_row"
    ordered = df.with_row_index(idx).sort(["user_id", "timestamp", "item_id", idx])
    from_end = pl.int_range(pl.len(), 0, -1).over("user_id")  # n_u, ..., 1
    marked = ordered.with_columns((from_end <= int(n)).alias("__is_test")).sort(idx)
    is_test = marked["__is_test"]
    return Split(df.filter(~is_test), df.filter(is_test))


def random_split(df: pl.DataFrame, test_fraction: float = 0.2, seed: int = 0) -> Split:
    r"""Hold out a uniformly random subset of rows.

    Exactly :math:`n - \lfloor (1 - f) n \rfloor = \lceil f n \rceil` rows
    are test: the first ones of ``numpy.random.default_rng(seed).permutation(n)``
    (positions in the input order).  Same input order and seed give the same
    split on every platform.

    Parameters
    ----------
    df : polars.DataFrame
        Any interaction frame.
    test_fraction : float, default 0.2
        :math:`f \in (0, 1)`.
    seed : int, default 0
        Seed of :func:`numpy.random.default_rng`.

    Returns
    -------
    Split

    Examples
    --------
    >>> df = pl.DataFrame({"user_id": range(10), "item_id": range(10)})
    >>> train, test = random_split(df, 0.3, seed=1)
    >>> train.height, test.height
    (7, 3)
    """
    if df.height == 0:
        raise ValueError("random_split got an empty frame; pass at least one interaction")
    n = df.height
    n_test = n - n_train_target(n, test_fraction)
    chosen = np.random.default_rng(seed).permutation(n)[:n_test]
    mask = np.zeros(n, dtype=bool)
    mask[chosen] = True
    is_test = pl.Series("is_test", mask)
    return Split(df.filter(~is_test), df.filter(is_test))
