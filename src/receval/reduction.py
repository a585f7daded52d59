"""Distributed reductions a global metric declares (``register(..., distributed=...)``).

A global metric's ``partial`` statistics usually travel to the driver of a distributed
backend and are combined there (``combine``). A partial held per distinct key (the stacked
AUC keeps one (score, positives, negatives) row per distinct score) would bring the data to
the driver; such a metric declares a :class:`KeyedReduction` instead, and a distributed
backend (Spark) runs it without knowing the metric:

1. on each partition, :attr:`KeyedReduction.rows` takes the (key, a, b) rows out of the batch's
   partial; the backend keeps them as rows, not metadata;
2. the backend sums ``a`` and ``b`` key by key, splits the distinct keys into ranges and calls
   :attr:`KeyedReduction.scan` on each range (one summary of four numbers per range);
3. the driver hands the summaries to :attr:`KeyedReduction.reduce`, whose result is the one
   partial that the metric's ``combine`` reads.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

#: one key range: (its lowest key, an exact integer, a count, a count)
Run = tuple[float, int, int, int]


@dataclass(frozen=True)
class KeyedReduction:
    """How a distributed backend reduces a global metric's keyed partial (see the module).

    ``holds(options)``: whether the partial under these options holds keyed rows (the backend
    then keeps its output for a second pass); ``rows(partial)``: the (float keys, int64 a,
    int64 b) rows of one batch's partial, or None; ``scan(key, a, b, options)``: the
    :data:`Run` of one range of keys (unsorted, summed by key); ``reduce(runs, options)``: the
    partial ``combine`` reads, from the runs of disjoint ranges. Every function is a module-level
    function (the hook is pickled to the workers).
    """

    holds: Callable[[dict[str, Any]], bool]
    rows: Callable[[Any], tuple[np.ndarray, np.ndarray, np.ndarray] | None]
    scan: Callable[[np.ndarray, np.ndarray, np.ndarray, dict[str, Any]], Run]
    reduce: Callable[[list[Run], dict[str, Any]], Any]


__all__ = ["KeyedReduction", "Run"]
