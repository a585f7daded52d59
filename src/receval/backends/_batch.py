"""What the batched backends share: the in-memory code on one batch of users, and the merge.

A batch holds every row of its users (recommendations and truth), and users are disjoint
between batches, so per-user values computed on a batch are the values the in-memory engine
computes for those users: :func:`run_batch` calls the same :func:`receval.hits.build` and the
same metric functions (no formula is written twice). Averages are then combined exactly:

* :func:`merge` (Polars): per-user raw values of all batches are put back in user order and
  handed to :func:`receval.api._aggregate`, so values, per-user values, policies, errors and
  signatures are the in-memory ones bit for bit;
* :func:`policy_columns` (Spark): the empty/norecs policies applied per user, giving the
  per-user value (NaN when left out) and flags whose sums and counts Spark aggregates.

Global metrics (``kind="global"``) use the metric's ``partial``/``combine`` pair.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import DataError, SpecError
from ..hits import build
from ..registry import Resolved


@dataclass
class Batch:
    user_ids: np.ndarray
    values: list[np.ndarray | None]  # per spec: [U] or [U, 2] raw per-user values; None for global
    n_rel: list[np.ndarray]  # per spec (its build group)
    length: list[np.ndarray]
    order: list[str | None]
    partials: list[Any]  # per spec: partial statistics (global metrics), else None
    whole: list[Any]  # per spec: the global value when computed on all users at once
    info: dict[str, Any] = field(default_factory=dict)


def k_index(r: Resolved, ks: list[int]) -> int:
    return ks.index(r.k if r.k is not None else 0)


def formula_groups(resolved: Sequence[Resolved]) -> list[tuple[tuple, list[int]]]:
    """Indices of ``resolved`` by build key, then by formula key (as the in-memory engine groups)."""
    by_build: dict[tuple, list[int]] = defaultdict(list)
    for i, r in enumerate(resolved):
        by_build[r.build_key()].append(i)
    return list(by_build.items())


def run_batch(
    recs: dict[str, np.ndarray],
    truth: dict[str, np.ndarray],
    resolved: Sequence[Resolved],
    side: Any = None,
    whole_globals: bool = False,
) -> Batch:
    """Per-user raw values of one batch of users, with the in-memory build and formulas."""
    n = len(resolved)
    out = Batch(np.zeros(0), [None] * n, [np.zeros(0, np.int64)] * n, [np.zeros(0, np.int64)] * n,
                [None] * n, [None] * n, [None] * n)
    if len(truth["user"]) == 0:
        ru = recs["user"]
        if len(ru):
            out.info = {"rec_rows": int(len(ru)), "ignored_rec_rows": int(len(ru)), "ignored_rec_users": int(len(np.unique(ru)))}
        out.user_ids = truth["user"][:0]
        return out
    first = True
    for key, idxs in formula_groups(resolved):
        rs = [resolved[i] for i in idxs]
        needs = set().union(*(r.metric.needs for r in rs))
        h = build(
            recs, truth, dict(key),
            need_rows="rows" in needs, need_items="items" in needs, need_truth_rows="truth_rows" in needs,
        )
        h.side = side  # type: ignore[attr-defined]
        if first:
            out.user_ids, out.info, first = h.user_ids, dict(h.info), False
        by_formula: dict[tuple, list[int]] = defaultdict(list)
        for i in idxs:
            by_formula[resolved[i].formula_key()].append(i)
        for fidx in by_formula.values():
            r0 = resolved[fidx[0]]
            metric = r0.metric
            ks = sorted({resolved[i].k if resolved[i].k is not None else 0 for i in fidx})
            if not r0.per_user:
                if whole_globals:
                    vals = np.asarray(metric.compute(h, ks, r0.options))
                    for i in fidx:
                        out.whole[i] = vals[k_index(resolved[i], ks)]
                else:
                    part = metric.partial(h, ks, r0.options)  # type: ignore[misc]
                    for i in fidx:
                        out.partials[i] = part
            else:
                vals = np.asarray(metric.compute(h, ks, r0.options))
                for i in fidx:
                    out.values[i] = vals[:, k_index(resolved[i], ks)]
            for i in fidx:
                out.n_rel[i], out.length[i] = h.n_rel, h.length
                out.order[i] = h.options.get("order")
    return out


def globals_without_partial(resolved: Sequence[Resolved]) -> list[str]:
    return [r.key for r in resolved if not r.per_user and (r.metric.partial is None or r.metric.combine is None)]


def merge_info(infos: Sequence[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for info in infos:
        for key, v in info.items():
            if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
                out[key] = out.get(key, 0) + int(v)
            else:
                out.setdefault(key, v)
    return out


class _Merged:
    """The parts of :class:`receval.hits.Hits` that :func:`receval.api._aggregate` reads."""

    def __init__(self, user_ids: np.ndarray, n_rel: np.ndarray, length: np.ndarray, order: str | None):
        self.user_ids, self.n_rel, self.length = user_ids, n_rel, length
        self.options = {"order": order}

    @property
    def n_users(self) -> int:
        return len(self.user_ids)


def merge(batches: Sequence[Batch], resolved: Sequence[Resolved]):
    """Exact merge of batches: per-user values in user order through the in-memory aggregation."""
    from .. import __version__
    from ..api import _aggregate
    from ..results import Results

    batches = [b for b in batches if len(b.user_ids)]
    if not batches:
        raise DataError("the ground truth is empty; pass at least one (user, item) row")
    user_ids = np.concatenate([b.user_ids for b in batches])
    perm = np.argsort(user_ids, kind="stable")
    user_ids = user_ids[perm]
    order = next((o for b in batches for o in b.order if o is not None), None)
    entries = []
    for i, r in enumerate(resolved):
        order_i = next((b.order[i] for b in batches if b.order[i] is not None), order)
        if not r.per_user:
            if batches[0].whole[i] is not None:
                value = batches[0].whole[i]
            else:
                ks = sorted({x.k if x.k is not None else 0 for x in resolved if x.formula_key() == r.formula_key()})
                vals = np.asarray(r.metric.combine([b.partials[i] for b in batches], ks, r.options))  # type: ignore[misc]
                value = vals[k_index(r, ks)]
            stub = _Merged(user_ids, np.zeros(0), np.zeros(0), order_i)
            entries.append(_aggregate(stub, r, np.asarray([value]), 0))  # type: ignore[arg-type]
            continue
        v = np.concatenate([b.values[i] for b in batches])[perm]
        stub = _Merged(
            user_ids,
            np.concatenate([b.n_rel[i] for b in batches])[perm],
            np.concatenate([b.length[i] for b in batches])[perm],
            order_i,
        )
        entries.append(_aggregate(stub, r, v[:, None], 0))  # type: ignore[arg-type]
    info = merge_info([b.info for b in batches])
    return Results(entries, user_ids, __version__, info)


# ---- Spark: the policies per user, as columns Spark can sum ------------------------------


def policy_columns(r: Resolved, v: np.ndarray, n_rel: np.ndarray, length: np.ndarray) -> dict[str, np.ndarray]:
    """Per user: ``value`` (NaN when left out), ``a``/``b`` (precision/recall of F1-of-means,
    NaN when left out), ``skipped`` (0/1), ``err_empty`` / ``err_norecs`` (0/1: the user
    triggers the ``error`` policy). Mirrors :func:`receval.api._aggregate` user by user; the
    driver sums and counts these columns."""
    o = r.options
    u = len(n_rel)
    include = np.ones(u, dtype=bool)
    no_rel = n_rel == 0
    zeros = np.zeros(u, dtype=np.int8)
    err_empty, err_norecs, skipped = zeros, zeros, zeros
    if "empty" in r.metric.context:
        if o["empty"] == "error":
            err_empty = no_rel.astype(np.int8)
        if o["empty"] == "skip":
            include &= ~no_rel
            skipped = no_rel.astype(np.int8)
        else:
            v = np.where(no_rel[:, None] if v.ndim == 2 else no_rel, 0.0, v)
    if "norecs" in r.metric.context:
        no_recs = (length == 0) & ~no_rel
        if o["norecs"] == "error":
            err_norecs = no_recs.astype(np.int8)
        if o["norecs"] == "skip":
            include &= ~no_recs
    nan = np.full(u, np.nan)
    if v.ndim == 2:
        s = v.sum(axis=1)
        pu = np.where(s > 0, 2 * v[:, 0] * v[:, 1] / np.maximum(s, 1e-300), 0.0)
        a, b = np.where(include, v[:, 0], np.nan), np.where(include, v[:, 1], np.nan)
    else:
        pu, a, b = v, nan, nan
    return {
        "value": np.where(include, pu, np.nan).astype(np.float64),
        "a": a.astype(np.float64),
        "b": b.astype(np.float64),
        "skipped": skipped,
        "err_empty": err_empty,
        "err_norecs": err_norecs,
    }


def check_globals(resolved: Sequence[Resolved], engine: str) -> None:
    missing = globals_without_partial(resolved)
    if missing:
        raise SpecError(
            f"{', '.join(missing)} cannot run on the {engine} engine yet: the metric declares no partial/combine "
            "pair for batched evaluation; use the in-memory engine"
        )
