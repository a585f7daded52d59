"""The user-set policies, in one place: which truth users are averaged, which count 0, and
the one-line errors of the ``error`` policies; F1 of the means.

``empty`` concerns truth users without a relevant item, ``norecs`` users with relevant items
but no recommendations. Every backend (memory, Polars, Spark) and every metric that applies
the policies itself (per-user AUC) uses these functions, so a policy and its message are
written once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import DataError

#: axis -> (what the users lack, the fix)
FIXES = {
    "empty": ("no relevant item", "pass empty='skip' to leave them out or empty='zero' to score them 0"),
    "norecs": ("no recommendations", "pass norecs='zero' to score them 0 or norecs='skip' to leave them out"),
}


def policy_error(axis: str, n: int, first: Any) -> DataError:
    """The ``error`` policy's message: how many users, one example, the fix."""
    what, fix = FIXES[axis]
    return DataError(f"{n} truth users have {what} (e.g. user {_py(first)}); {fix}")


def no_user_left(spec: Any) -> DataError:
    return DataError(
        f"no user left to average for '{spec}': every truth user was left out by the empty/norecs policies or by the metric's own (e.g. insufficient=exclude)"
    )


@dataclass
class Masks:
    """Per user: averaged, forced to 0, skipped by ``empty=skip``, and in breach of an ``error`` policy."""

    include: np.ndarray
    zero: np.ndarray
    skipped: np.ndarray
    err_empty: np.ndarray
    err_norecs: np.ndarray


def masks(n_rel: np.ndarray, length: np.ndarray, o: dict, context: Sequence[str], out: np.ndarray | None = None) -> Masks:
    """The policies per user, without raising (a batch of users: Spark sums the error flags).

    ``out``: users the metric itself leaves out (its NaN values, for a metric registered with
    ``skips``); they are left out before ``empty``/``norecs`` would score them 0."""
    u = len(n_rel)
    include = np.ones(u, dtype=bool) if out is None else ~out
    zero = np.zeros(u, dtype=bool)
    none = np.zeros(u, dtype=bool)
    skipped, err_empty, err_norecs = none, none, none
    no_rel = n_rel == 0
    if "empty" in context:
        if o["empty"] == "error":
            err_empty = no_rel
        elif o["empty"] == "skip":
            include = include & ~no_rel
            skipped = no_rel
        else:
            zero = zero | (no_rel & include)
    if "norecs" in context:
        no_recs = (length == 0) & ~no_rel
        if o["norecs"] == "error":
            err_norecs = no_recs
        elif o["norecs"] == "skip":
            include = include & ~no_recs
    return Masks(include, zero, skipped, err_empty, err_norecs)


def user_policy(h: Any, o: dict, context: Sequence[str], out: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, int]:
    """Apply the ``empty`` and ``norecs`` policies to a whole user set (``h`` has ``n_rel``,
    ``length``, ``user_ids``): (users averaged, users forced to 0, users skipped); an
    ``error`` policy raises its one-line :class:`DataError`."""
    m = masks(h.n_rel, h.length, o, context, out)
    for axis, bad in (("empty", m.err_empty), ("norecs", m.err_norecs)):
        if bad.any():
            raise policy_error(axis, int(bad.sum()), h.user_ids[np.flatnonzero(bad)[0]])
    return m.include, m.zero, int(m.skipped.sum())


def left_out(v: np.ndarray, skips: bool) -> np.ndarray | None:
    """The users a metric registered with ``skips`` leaves out itself (its NaN values)."""
    return np.isnan(v) if skips and v.ndim == 1 else None


def f1_of_means(p: float, r: float) -> float:
    """F1 of mean precision and mean recall (0 when both are 0)."""
    return 0.0 if p + r == 0 else 2 * p * r / (p + r)


def f1_per_user(v: np.ndarray) -> np.ndarray:
    """Per-user F1 from ``[U, 2]`` (precision, recall) pairs."""
    s = v.sum(axis=1)
    return np.where(s > 0, 2 * v[:, 0] * v[:, 1] / np.maximum(s, 1e-300), 0.0)


def of_means(kind: str, a: float, b: float) -> float:
    """The value of per-user pairs from their means ``a``, ``b`` (:meth:`receval.registry.Metric.pair_kind`):
    F1 of the means (``"f1"``), or their ratio ``a / b`` = Σ numerator / Σ denominator (``"ratio"``; 0 when b = 0)."""
    if kind == "f1":
        return f1_of_means(a, b)
    return 0.0 if b == 0 else a / b


def pair_per_user(kind: str, v: np.ndarray) -> np.ndarray:
    """Per-user values from ``[U, 2]`` pairs: F1 (``"f1"``) or numerator / denominator (``"ratio"``, 0 when 0/0)."""
    if kind == "f1":
        return f1_per_user(v)
    den = v[:, 1]
    return np.where(den != 0, v[:, 0] / np.where(den != 0, den, 1.0), 0.0)


def zero_pairs(kind: str, v: np.ndarray, zero: np.ndarray) -> np.ndarray:
    """``[U, 2]`` pairs with the users a policy scores 0: both parts 0 (``"f1"``), or the numerator
    0 and the denominator kept (``"ratio"``: the user's slots still count in the pooled ratio)."""
    if kind == "f1":
        return np.where(zero[:, None], 0.0, v)
    return np.stack([np.where(zero, 0.0, v[:, 0]), v[:, 1]], axis=1)


def _py(x: Any) -> Any:
    return x.item() if hasattr(x, "item") else x


__all__ = ["FIXES", "Masks", "masks", "left_out", "policy_columns", "user_policy", "policy_error", "no_user_left", "f1_of_means", "f1_per_user", "of_means", "pair_per_user", "zero_pairs"]


def policy_columns(o: dict, context: Sequence[str], v: np.ndarray, n_rel: np.ndarray, length: np.ndarray,
                   skips: bool = False, pairs: bool | str | None = False) -> dict[str, np.ndarray]:
    """The policies per user as columns a distributed engine sums and counts: ``value`` (NaN
    when left out), ``a``/``b`` (precision/recall for F1 of the means, NaN when left out),
    ``skipped``, ``err_empty``, ``err_norecs`` (0/1). ``pairs``: ``v`` holds (precision,
    recall) pairs, or the kind of its pairs (:meth:`receval.registry.Metric.pair_kind`; True is ``"f1"``)."""
    m = masks(n_rel, length, o, context, left_out(v, skips))
    kind = "f1" if pairs is True else (pairs or None)
    v = zero_pairs(kind, v, m.zero) if kind else np.where(m.zero, 0.0, v)
    nan = np.full(len(n_rel), np.nan)
    if kind:
        pu = pair_per_user(kind, v)
        a, b = np.where(m.include, v[:, 0], np.nan), np.where(m.include, v[:, 1], np.nan)
    else:
        pu, a, b = v, nan, nan
    return {
        "value": np.where(m.include, pu, np.nan).astype(np.float64),
        "a": a.astype(np.float64),
        "b": b.astype(np.float64),
        "skipped": m.skipped.astype(np.int8),
        "err_empty": m.err_empty.astype(np.int8),
        "err_norecs": m.err_norecs.astype(np.int8),
    }
