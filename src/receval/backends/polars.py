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

from ..encode import check_lazy_overlap, harmonize, user_batches
from ..engine import SideInputs, needs_truth_max, encode_frames, exact_items, is_text_path, globals_without_partial, merge, merge_info, plan, run_batch
from ..io import Columns, read_frame
from ..signature import note_side

#: rows of recommendations per batch when ``n_batches`` is not given
BATCH_ROWS = 20_000_000
_SEED = 0x5EC


def _lazy(obj: Any, what: str, ids: tuple[str, ...] = (), sep: str | None = None) -> pl.LazyFrame:
    if isinstance(obj, pl.LazyFrame):
        return obj
    if isinstance(obj, (str,)) and obj.lower().endswith((".parquet", ".pq")):
        return pl.scan_parquet(obj)
    return read_frame(obj, what, ids=ids, sep=sep).lazy()


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
    baseline: Any = None,
    item_groups: Any = None,
    user_groups: Any = None,
):
    """Evaluate on Polars (Lazy)Frames in user batches; same arguments and Results as
    :func:`receval.evaluate` (``columns``/``overrides`` as :func:`receval.backends.spark.evaluate_spark`).

    ``n_batches``: number of user batches (default: one per ``BATCH_ROWS`` recommendation rows).
    Global metrics without a ``partial``/``combine`` pair are computed in a single batch.
    Every side input is whole in every batch (the metrics read the batch's users from it).
    """
    cols = columns or Columns()
    side = SideInputs(categories, train, catalog, cols, baseline=baseline, item_groups=item_groups, user_groups=user_groups)
    resolved = note_side(plan(metrics, dialect, overrides), side)  # signatures name the side inputs read
    ids = (cols.user, cols.item)
    lrecs, ltruth = _lazy(recs, "recommendations", ids, cols.sep), _lazy(truth, "ground truth", ids, cols.sep)
    if needs_truth_max(resolved):  # over the whole truth, not one batch's users
        side.truth_max = _truth_max(ltruth, cols)
    text = (is_text_path(recs), is_text_path(truth))
    if any(text):  # decide the id types of text files once, for every batch
        lrecs, ltruth = _text_ids(lrecs, ltruth, cols, text)
        text = (False, False)
    whole = bool(globals_without_partial(resolved))
    if whole:
        n_batches = 1
    if n_batches is None:
        rows = lrecs.select(pl.len()).collect().item()
        n_batches = max(1, math.ceil(rows / BATCH_ROWS))
    batches = []
    with user_batches():  # each batch is counted; the whole inputs are judged below
        for b in range(n_batches):
            if n_batches == 1:
                rb, tb = lrecs, ltruth
            else:
                rb = lrecs.filter(pl.col(cols.user).hash(_SEED) % n_batches == b)
                tb = ltruth.filter(pl.col(cols.user).hash(_SEED) % n_batches == b)
            r_frame, t_frame = rb.collect(), tb.collect()
            if t_frame.height == 0:
                ignored = {}
                if r_frame.height:
                    n_users = r_frame.get_column(cols.user).n_unique()
                    ignored = {"rec_rows": r_frame.height, "ignored_rec_rows": r_frame.height,
                               "ignored_rec_users": n_users, "users_only_in_recs": n_users}
                batches.append(run_batch(None, resolved, side, whole_globals=whole, ignored=ignored))
                continue
            enc = encode_frames(r_frame, t_frame, cols, text=text, exact=exact_items(resolved))
            del r_frame, t_frame
            batches.append(run_batch(enc, resolved, side, whole_globals=whole))
            del enc
    check_lazy_overlap(merge_info([b.info for b in batches]), lrecs, ltruth, cols.user, cols.item)
    return merge(batches, resolved)


def _truth_max(ltruth: pl.LazyFrame, cols: Columns) -> float:
    """The largest rating of the whole ground truth (1 without a rating column: every row rated 1)."""
    if cols.rating not in ltruth.collect_schema().names():
        return 1.0
    got = ltruth.select(pl.col(cols.rating).cast(pl.Float64).max()).collect().item()
    return 1.0 if got is None else float(got)


def _text_ids(lrecs: pl.LazyFrame, ltruth: pl.LazyFrame, cols: Columns, text: tuple[bool, bool]):
    """Id columns of text files: integers when every value on both sides is a canonical
    integer, else text (the in-memory rule, :func:`receval.encode.harmonize`), decided on
    the whole inputs so that every batch has the same id type."""
    for col in (cols.user, cols.item):
        a = lrecs.select(pl.col(col)).collect().get_column(col)
        b = ltruth.select(pl.col(col)).collect().get_column(col)
        a2, b2 = harmonize(a, b, "user" if col == cols.user else "item", text)
        if a2.dtype != a.dtype:
            lrecs = lrecs.with_columns(pl.col(col).cast(a2.dtype))
        if b2.dtype != b.dtype:
            ltruth = ltruth.with_columns(pl.col(col).cast(b2.dtype))
    return lrecs, ltruth


__all__ = ["evaluate_polars", "BATCH_ROWS"]
