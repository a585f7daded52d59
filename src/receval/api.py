"""The public entry point: :func:`evaluate`."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from . import __version__
from .errors import DataError, SpecError
from .hits import Hits, build
from .io import Columns, columns_of, read_frame
from .options import BUILD_AXES, CONTEXT_AXES
from .registry import Resolved, _UNSET, resolve
from .results import Entry, Results
from .signature import make_signature


def evaluate(
    recs: Any,
    truth: Any,
    metrics: str | Iterable[Any],
    *,
    dialect: Any = None,
    user_col: str = "user_id",
    item_col: str = "item_id",
    score_col: str = "score",
    rank_col: str = "rank",
    rating_col: str = "rating",
    rel: Any = _UNSET,
    order: Any = _UNSET,
    ties: Any = _UNSET,
    dup: Any = _UNSET,
    tdup: Any = _UNSET,
    empty: Any = _UNSET,
    norecs: Any = _UNSET,
    categories: Any = None,
    train: Any = None,
    catalog: Any = None,
    engine: str | None = None,
) -> Results:
    """Evaluate recommendations against a ground truth.

    Parameters
    ----------
    recs
        (user, item) rows with a ``score`` and/or a ``rank`` column: a pandas or polars
        DataFrame (or LazyFrame), a pyarrow Table, a dict of columns, or a CSV/Parquet path.
        A pyspark DataFrame is evaluated on Spark (``engine="spark"``).
    truth
        (user, item) rows with an optional ``rating``; same input types.
    metrics
        Metric strings (``"ndcg@10"``, ``"map(denominator=k)@20"``) or parsed specs.
    dialect
        A dialect name (``"recbole"``, ``"daisyrec@2.3"``) or :class:`receval.dialects.Dialect`:
        the defaults of that library. Options written in a spec win over it.
    rel, order, ties, dup, tdup, empty, norecs
        Context options for every metric (see ``receval metrics``); a spec's own option wins.
    categories, train, catalog
        Side inputs of the beyond-accuracy metrics: item categories (``item_id``,
        ``category``), train interactions (``user_id``, ``item_id``) and the item catalogue.

    Returns
    -------
    Results
        Values by canonical spec, per-user values, signatures and exports. Inputs are never
        modified.
    """
    if isinstance(metrics, str):
        metrics = [metrics]
    metrics = list(metrics)
    if not metrics:
        raise SpecError("no metric given; pass at least one, e.g. 'ndcg@10'")
    if engine == "spark" or type(recs).__module__.startswith("pyspark"):
        from .backends.spark import evaluate_spark

        return evaluate_spark(
            recs, truth, metrics, dialect=dialect,
            columns=Columns(user_col, item_col, score_col, rank_col, rating_col),
            overrides=dict(rel=rel, order=order, ties=ties, dup=dup, tdup=tdup, empty=empty, norecs=norecs),
            categories=categories, train=train, catalog=catalog,
        )
    dialect_obj = _dialect(dialect)
    overrides = {"rel": rel, "order": order, "ties": ties, "dup": dup, "tdup": tdup, "empty": empty, "norecs": norecs}
    resolved = [resolve(m, dialect=dialect_obj, overrides=overrides) for m in metrics]
    cols = Columns(user_col, item_col, score_col, rank_col, rating_col)
    recs_cols = _recs_columns(recs, cols)
    truth_cols = _truth_columns(truth, cols)
    side = _SideInputs(categories, train, catalog, cols)
    return evaluate_columns(recs_cols, truth_cols, resolved, side)


def _dialect(dialect: Any):
    if dialect is None or dialect == "standard":
        return None
    from .dialects import load_dialect

    return load_dialect(dialect) if isinstance(dialect, str) else dialect


def _recs_columns(recs: Any, cols: Columns) -> dict[str, np.ndarray]:
    frame = read_frame(recs, "recommendations")
    return columns_of(
        frame, "recommendations", {"user": cols.user, "item": cols.item}, {"score": cols.score, "rank": cols.rank}
    )


def _truth_columns(truth: Any, cols: Columns) -> dict[str, np.ndarray]:
    frame = read_frame(truth, "ground truth")
    return columns_of(frame, "ground truth", {"user": cols.user, "item": cols.item}, {"rating": cols.rating})


class _SideInputs:
    """Lazily read side inputs (categories, train, catalogue) for beyond-accuracy metrics."""

    def __init__(self, categories: Any, train: Any, catalog: Any, cols: Columns):
        self.categories, self.train, self.catalog, self.cols = categories, train, catalog, cols


def evaluate_columns(
    recs: dict[str, np.ndarray],
    truth: dict[str, np.ndarray],
    resolved: Sequence[Resolved],
    side: _SideInputs | None = None,
) -> Results:
    """Evaluate already-resolved specs on column arrays (the in-memory backend)."""
    groups: dict[tuple, list[Resolved]] = defaultdict(list)
    for r in resolved:
        groups[r.build_key()].append(r)
    entries: dict[int, Entry] = {}
    user_ids = None
    info: dict[str, Any] = {}
    for key, rs in groups.items():
        needs = set().union(*(r.metric.needs for r in rs))
        build_opts = dict(key)
        h = build(
            recs, truth, build_opts,
            need_rows="rows" in needs, need_items="items" in needs, need_truth_rows="truth_rows" in needs,
        )
        h.side = side  # type: ignore[attr-defined]
        if user_ids is None:
            user_ids = h.user_ids
            info = dict(h.info)
        entries.update(compute_entries(h, rs))
    return Results([entries[id(r)] for r in resolved], user_ids, __version__, info)


def compute_entries(h: Hits, rs: Sequence[Resolved]) -> dict[int, Entry]:
    """Compute every resolved spec on one intermediate form; specs differing only in k share a pass."""
    by_formula: dict[tuple, list[Resolved]] = defaultdict(list)
    for r in rs:
        by_formula[r.formula_key()].append(r)
    out: dict[int, Entry] = {}  # keyed by id() of the resolved spec
    for group in by_formula.values():
        metric = group[0].metric
        ks = sorted({r.k if r.k is not None else 0 for r in group})
        values = metric.compute(h, ks, group[0].options)
        for r in group:
            j = ks.index(r.k if r.k is not None else 0)
            out[id(r)] = _aggregate(h, r, values, j)
    return out


def _aggregate(h: Hits, r: Resolved, values: Any, j: int) -> Entry:
    order = h.options.get("order")
    if np.asarray(values).ndim == 1:  # an aggregate metric: one value per cut-off
        value = float(np.asarray(values)[j])
        sig = make_signature(r, __version__, order=order)
        return Entry(r.key, value, sig, users=0, dialect=r.dialect, asked=str(r.spec))
    v = np.asarray(values)[:, j]
    include, zero, skipped = user_policy(h, r.options, r.metric.context)
    v = np.where(zero[:, None] if v.ndim == 2 else zero, 0.0, v)
    n = int(include.sum())
    sig = make_signature(r, __version__, order=order, skipped=skipped)
    if n == 0:
        raise DataError(f"no user left to average for '{r.spec}': every truth user was left out by the empty/norecs policies")
    if v.ndim == 2:  # a (precision, recall) pair: F1 of the means
        p, rc = v[include, 0].mean(), v[include, 1].mean()
        value = 0.0 if p + rc == 0 else 2 * p * rc / (p + rc)
        pu = np.where(v.sum(axis=1) > 0, 2 * v[:, 0] * v[:, 1] / np.maximum(v.sum(axis=1), 1e-300), 0.0)
    else:
        value = float(v[include].mean())
        pu = v
    per_user = np.where(include, pu, np.nan)
    return Entry(r.key, float(value), sig, users=n, skipped=skipped, per_user=per_user, dialect=r.dialect, asked=str(r.spec))


def _policy_error(n: int, what: str, first: Any, fix: str) -> DataError:
    return DataError(f"{n} truth users have {what} (e.g. user {_py(first)}); {fix}")


def user_policy(h: Hits, o: dict, context: Sequence[str]) -> tuple[np.ndarray, np.ndarray, int]:
    """Apply the ``empty`` and ``norecs`` policies: (users averaged, users forced to 0, users skipped).

    ``empty`` concerns truth users without a relevant item, ``norecs`` users with relevant
    items but no recommendations; ``error`` raises a one-line :class:`DataError` naming the fix.
    """
    include = np.ones(h.n_users, dtype=bool)
    zero = np.zeros(h.n_users, dtype=bool)
    no_rel = h.n_rel == 0
    skipped = 0
    if "empty" in context and no_rel.any():
        if o["empty"] == "error":
            raise _policy_error(int(no_rel.sum()), "no relevant item", h.user_ids[np.flatnonzero(no_rel)[0]],
                                "pass empty='skip' to leave them out or empty='zero' to score them 0")
        if o["empty"] == "skip":
            include &= ~no_rel
            skipped = int(no_rel.sum())
        else:
            zero |= no_rel
    no_recs = (h.length == 0) & ~no_rel
    if "norecs" in context and no_recs.any():
        if o["norecs"] == "error":
            raise _policy_error(int(no_recs.sum()), "no recommendations", h.user_ids[np.flatnonzero(no_recs)[0]],
                                "pass norecs='zero' to score them 0 or norecs='skip' to leave them out")
        if o["norecs"] == "skip":
            include &= ~no_recs
    return include, zero, skipped


def _py(x: Any) -> Any:
    return x.item() if hasattr(x, "item") else x


__all__ = ["evaluate", "evaluate_columns", "compute_entries", "BUILD_AXES", "CONTEXT_AXES"]
