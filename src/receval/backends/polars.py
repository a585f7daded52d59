"""The Polars backend: LazyFrames in, users in batches, the in-memory numpy code per batch.

Users are split into ``n_batches`` by a hash of the user id (modulo ``n_batches``); each batch
is filtered and stably sorted by user in Polars (the order of a user's rows is kept, so
``ties=input`` / ``order=input`` mean what they mean in memory), handed as numpy columns to
the same :func:`receval.hits.build` and metric functions, and the per-user values of all
batches are merged exactly (:func:`receval.backends._batch.merge`): the results equal the
in-memory engine's bit for bit. Memory is bounded by one batch plus one float per user and
metric.

>>> import polars as pl
>>> from receval.backends.polars import evaluate_polars
>>> from receval.examples import WORKED_RECS, WORKED_TRUTH
>>> evaluate_polars(pl.DataFrame(WORKED_RECS).lazy(), pl.DataFrame(WORKED_TRUTH).lazy(), ["ndcg@4"], n_batches=3)["ndcg@4"]
0.498189...
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import polars as pl

from ..errors import SpecError
from ..io import Columns, read_frame
from ..registry import _UNSET, resolve
from ._batch import globals_without_partial, merge, run_batch

#: rows of recommendations per batch when ``n_batches`` is not given
BATCH_ROWS = 20_000_000
_SEED = 0x5EC


def _lazy(obj: Any, what: str) -> pl.LazyFrame:
    if isinstance(obj, pl.LazyFrame):
        return obj
    if isinstance(obj, (str,)) and obj.lower().endswith((".parquet", ".pq")):
        return pl.scan_parquet(obj)
    return read_frame(obj, what).lazy()


def evaluate_polars(
    recs: Any,
    truth: Any,
    metrics: str | Iterable[Any],
    *,
    dialect: Any = None,
    columns: Columns | None = None,
    overrides: dict[str, Any] | None = None,
    categories: Any = None,
    train: Any = None,
    catalog: Any = None,
    n_batches: int | None = None,
):
    """Evaluate on Polars (Lazy)Frames in user batches; same arguments and Results as
    :func:`receval.evaluate` (``columns``/``overrides`` as :func:`receval.backends.spark.evaluate_spark`).

    ``n_batches``: number of user batches (default: one per ``BATCH_ROWS`` recommendation rows).
    Global metrics without a ``partial``/``combine`` pair are computed in a single batch.
    """
    from ..api import _SideInputs, _dialect, _recs_columns, _truth_columns

    cols = columns or Columns()
    if isinstance(metrics, str):
        metrics = [metrics]
    metrics = list(metrics)
    if not metrics:
        raise SpecError("no metric given; pass at least one, e.g. 'ndcg@10'")
    ov = {k: v for k, v in (overrides or {}).items()}
    for key in ("rel", "order", "ties", "dup", "tdup", "empty", "norecs"):
        ov.setdefault(key, _UNSET)
    dialect_obj = _dialect(dialect)
    resolved = [resolve(m, dialect=dialect_obj, overrides=ov) for m in metrics]
    side = _SideInputs(categories, train, catalog, cols)
    lrecs, ltruth = _lazy(recs, "recommendations"), _lazy(truth, "ground truth")
    whole = bool(globals_without_partial(resolved))
    if whole:
        n_batches = 1
    if n_batches is None:
        rows = lrecs.select(pl.len()).collect().item()
        n_batches = max(1, math.ceil(rows / BATCH_ROWS))
    batches = []
    for b in range(n_batches):
        if n_batches == 1:
            rb, tb = lrecs, ltruth
        else:
            rb = lrecs.filter(pl.col(cols.user).hash(_SEED) % n_batches == b)
            tb = ltruth.filter(pl.col(cols.user).hash(_SEED) % n_batches == b)
        rb = rb.sort(cols.user, maintain_order=True)
        tb = tb.sort(cols.user, maintain_order=True)
        r_frame, t_frame = rb.collect(), tb.collect()
        rc = _recs_columns(r_frame, cols)
        tc = _truth_columns(t_frame, cols)
        del r_frame, t_frame
        batches.append(run_batch(rc, tc, resolved, side, whole_globals=whole))
        del rc, tc
    return merge(batches, resolved)


__all__ = ["evaluate_polars", "BATCH_ROWS"]
