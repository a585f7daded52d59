"""The public entry point: :func:`evaluate` (a facade over :mod:`receval.engine`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal

from . import kernels
from .backends.polars import run_polars
from .backends.spark import run_spark
from .budget import FILE_BUDGET, batches_for, memory_budget, one_batch_only
from .engine import evaluate_encoded, plan_request, say, settle_rel
from .errors import SpecError
from .inputs import Request, exact_items, read_inputs
from .io import Columns, id_columns, parse_sep
from .outputs import input_paths
from .resolve import UNSET
from .results import LazyFingerprints, Results
from .spec import announce

if TYPE_CHECKING:  # pragma: no cover
    from .types import DialectLike, Frame, Ids, Metrics, Unset


def evaluate(
    recs: Frame,
    truth: Frame,
    metrics: Metrics,
    *,
    dialect: DialectLike = None,
    user_col: str | Mapping[str, str] = "user_id",
    item_col: str | Mapping[str, str] = "item_id",
    score_col: str = "score",
    rank_col: str = "rank",
    rating_col: str = "rating",
    truth_user_col: str | None = None,
    truth_item_col: str | None = None,
    rel: float | str | Unset = UNSET,
    order: str | Unset = UNSET,
    ties: str | Unset = UNSET,
    hitscore: str | Unset = UNSET,
    dup: str | Unset = UNSET,
    tdup: str | Unset = UNSET,
    empty: str | Unset = UNSET,
    norecs: str | Unset = UNSET,
    categories: Frame | None = None,
    train: Frame | None = None,
    catalog: Frame | Ids | None = None,
    engine: Literal["memory", "polars", "spark"] | None = None,
    baseline: Frame | None = None,
    item_groups: Frame | None = None,
    user_groups: Frame | None = None,
    sep: str | None = None,
) -> Results:
    """Evaluate recommendations against a ground truth.

    Parameters
    ----------
    recs
        (user, item) rows with a ``score`` and/or a ``rank`` column: a pandas or polars
        DataFrame (or LazyFrame), a pyarrow Table, a dict of columns, or a CSV/Parquet path.
        Ids may be integers of any width or strings, rows in any order. A pyspark DataFrame
        is evaluated on Spark (``engine="spark"``).
    truth
        (user, item) rows with an optional ``rating``; same input types.
    metrics
        Metric strings (``"ndcg@10"``, ``"map(denominator=k)@20"``, ``"mrr"``: the whole list,
        ``mrr@all``) or parsed specs. A name of another vocabulary (``nDCG@10``, ``AP``) is
        keyed as written and says in one :class:`receval.errors.RecevalNote` what it resolves to.
    dialect
        A dialect name (``"recbole"``, ``"daisyrec@2.3"``) or :class:`receval.dialects.Dialect`:
        the defaults of that library. Options written in a spec win over it.
    user_col, item_col, score_col, rank_col, rating_col
        Column names: ``user_col`` / ``item_col`` name the id columns of the recommendations,
        of the side inputs, and of the ground truth unless ``truth_user_col`` /
        ``truth_item_col`` name its own; ``score_col`` / ``rank_col`` are read from the
        recommendations, ``rating_col`` from the ground truth. ``user_col={"recs": "user",
        "truth": "user_id"}`` is the same as ``user_col="user", truth_user_col="user_id"``.
        Column names are not part of a value or its signature.
    truth_user_col, truth_item_col
        The ground truth's user / item column (default: ``user_col`` / ``item_col``).
    rel, order, ties, hitscore, dup, tdup, empty, norecs
        Context options for every metric (see ``receval metrics``); a spec's own option wins.
    categories, train, catalog
        Side inputs of the beyond-accuracy metrics: item categories (``item_id``,
        ``category``), train interactions (``user_id``, ``item_id``) and the item catalogue.
    baseline, item_groups, user_groups
        Side inputs of the metrics that compare with a second run (``baseline``: recommendations
        in the layout of ``recs``; ``unexpectedness``, ``intersection``) or over groups
        (``item_groups``: ``item_id``, ``group``; ``user_groups``: ``user_id``, ``group``);
        read by every engine. A metric's signature names the side inputs its value was
        computed from (``side:train``; see :func:`receval.signature.side_reads`).
    sep
        The field separator of text-file inputs: one character (``";"``) or a name (``"tab"``,
        ``"semicolon"``, ``"pipe"``), used for every text input whose header holds it (the
        others keep their default). Default: ``","`` for .csv/.txt, tab for .tsv; a header
        plainly split by another separator is refused with the fix.

    Returns
    -------
    Results
        Values by canonical spec, per-user values, signatures, exports and the fingerprints of
        the inputs (:mod:`receval.fingerprint`). Inputs are never modified.
    """
    announce(metrics)  # another vocabulary's names (nDCG@10, AP) say once what they resolve to
    ids = id_columns(user_col, item_col, truth_user_col, truth_item_col)
    cols = Columns(score=score_col, rank=rank_col, rating=rating_col, sep=parse_sep(sep), **ids)
    overrides = {"rel": rel, "order": order, "ties": ties, "hitscore": hitscore, "dup": dup, "tdup": tdup, "empty": empty, "norecs": norecs}
    req = Request(recs, truth, metrics, dialect, cols, overrides, categories=categories, train=train, catalog=catalog,
                  baseline=baseline, item_groups=item_groups, user_groups=user_groups)
    paths = input_paths(recs, truth, *req.side_given)  # never written over
    name = "spark" if type(recs).__module__.startswith("pyspark") else ("memory" if engine is None else engine)
    if name not in ENGINES:
        raise SpecError(f"unknown engine {engine!r}; use 'memory' (default), 'polars' or 'spark'")
    res = ENGINES[name](req)
    res.inputs = paths
    return res


def _memory(req: Request) -> Results:
    """The in-memory engine: the inputs read once, encoded and evaluated at once
    (:func:`receval.engine.evaluate_each`); inputs larger than the memory budget go to the
    same engine over user batches (:func:`receval.backends.polars.run_polars`)."""
    cols = req.columns
    side, resolved = plan_request(req)
    n_files = _file_batches(req.recs, cols, resolved)
    if n_files > 1:  # a large file: read lazily, in user batches (backends.polars)
        return run_polars(req, n_batches=n_files, fingerprints=True)  # hashed batch by batch
    inputs = read_inputs(req.recs, req.truth, cols)  # read once: encoded here, fingerprinted below
    n = _frame_batches(inputs.recs, inputs.truth.frame, resolved)
    if n > 1 and kernels.whole(inputs.recs, inputs.truth.frame, cols, resolved):
        try:  # the kernels' path takes large frames in one batch (receval.kernels.whole)
            with kernels.taken_whole():
                return _one_batch(inputs, resolved, side)
        except kernels.Rebatch:  # a refusal that depends on the data: in batches, as the numpy path
            pass
    if n > 1:  # large frames: the same engine over user batches, so memory follows the budget
        res = run_polars(replace(req, recs=inputs.recs, truth=inputs.truth), n_batches=n, text=inputs.text)
        res.fingerprints = LazyFingerprints(lambda: inputs.fingerprints(side))  # hashed when first read
        return res
    return _one_batch(inputs, resolved, side)


def _one_batch(inputs: Any, resolved: list, side: Any) -> Results:
    """:func:`_memory` in one batch."""
    resolved, rel_said = settle_rel(resolved, inputs.truth.frame, inputs.cols.rating)  # rel:>0 when the truth is rated
    enc = inputs.encode(exact=exact_items(resolved))
    res = evaluate_encoded(enc, resolved, side)
    say(rel_said)
    res.fingerprints = LazyFingerprints(lambda: inputs.fingerprints(side))  # hashed when first read
    return res


def _polars(req: Request) -> Results:
    return run_polars(req, fingerprints=True)  # the inputs hashed batch by batch, never read again


def _spark(req: Request) -> Results:
    return run_spark(req)


#: the engines :func:`evaluate` hands its :class:`receval.inputs.Request` to (``engine=``)
ENGINES: dict[str, Callable[[Request], Results]] = {"memory": _memory, "polars": _polars, "spark": _spark}


def _file_batches(recs: Any, cols: Columns, resolved: list) -> int:
    """How many user batches a recommendations file (Parquet, CSV) is read in: 1 (read it whole)
    unless its rows outgrow the memory budget (:func:`receval.budget.memory_budget`)."""
    import os

    if not isinstance(recs, (str, os.PathLike)) or one_batch_only(resolved):
        return 1
    name = str(recs).lower()
    if not os.path.isfile(recs) or not name.endswith((".parquet", ".pq", ".csv", ".tsv", ".txt")):
        return 1
    if name.endswith((".parquet", ".pq")):
        import polars as pl

        try:
            rows = int(pl.scan_parquet(str(recs)).select(pl.len()).collect().item())
        except Exception:
            return 1  # read whole: the reader names the problem
    else:
        rows = os.path.getsize(recs) // 16  # a text row is rarely shorter
    return batches_for(rows, memory_budget(FILE_BUDGET))


def _frame_batches(recs: Any, truth: Any, resolved: list) -> int:
    """How many user batches frames held in memory are evaluated in (1 below the budget)."""
    if one_batch_only(resolved):
        return 1
    size = recs.estimated_size() + truth.estimated_size()
    return batches_for(recs.height, memory_budget(size))


__all__ = ["evaluate"]
