"""Sums that do not depend on how the terms are split into batches.

A global metric's ``partial`` returns :func:`exact_sum` of its batch's terms, a pair
``(hi, lo)`` with ``hi`` the correctly rounded sum and ``lo`` the correctly rounded rest;
``combine`` adds the pairs of all batches with :func:`total`, a correctly rounded sum of
the pairs. On one batch :func:`total` gives ``hi`` itself, the correctly rounded sum of the
terms; on several it gives the same float unless the exact sum lies within about 2⁻¹⁰⁶ of a
rounding boundary, so the batched engines reproduce the in-memory value bit for bit.

>>> total([exact_sum([0.1] * 10)])
1.0
>>> total([exact_sum([1e16, 1.0]), exact_sum([1.0])]) == 1e16 + 2
True
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np


def exact_sum(x) -> tuple[float, float]:
    """``(hi, lo)``: the correctly rounded sum of ``x`` and the correctly rounded remainder."""
    terms = np.asarray(x, dtype=np.float64).ravel().tolist()
    hi = math.fsum(terms)
    if not math.isfinite(hi):
        return hi, 0.0
    terms.append(-hi)
    return hi, math.fsum(terms)


def total(pairs: Iterable[tuple[float, float]]) -> float:
    """The correctly rounded sum of the ``(hi, lo)`` pairs of :func:`exact_sum`."""
    return math.fsum(v for p in pairs for v in p)
