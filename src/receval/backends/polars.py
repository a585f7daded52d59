"""The Polars backend: frames or files in, users in batches, the in-memory numpy code per batch.

Users are split into ``n_batches`` by a hash of the user id (modulo ``n_batches``), so each
user's rows, on both sides, are in one batch; each batch is handed as numpy columns to the same
:func:`receval.engine.run_batch` the in-memory engine runs (the order of a user's rows is kept,
so ``ties=input`` / ``order=input`` mean what they mean in memory), and the per-user values of
all batches are merged exactly (:func:`receval.engine.merge`): the results equal the in-memory
engine's bit for bit, whatever the number of batches. Memory is bounded by one batch plus one
float per user and metric.

Where the batches come from:

* an eager frame (pandas, polars, arrow, a dict): each row's batch is computed once and each
  batch is a filter of the frame (the frame is not copied);
* a Parquet or CSV file: scanned lazily; in :data:`SPILL_FROM` batches or more, written once in
  user batches to a temporary directory (one streaming pass; ``RECEVAL_TMPDIR`` or the system's
  temporary directory), then read back one batch at a time and removed; in fewer, each batch is
  a filtered scan of the file;
* any other LazyFrame: each batch is a filtered collect of it.

The number of batches follows a memory budget (:func:`receval.budget.memory_budget`), not the
input: see :func:`receval.budget.batches_for`.

>>> import polars as pl
>>> from receval.backends.polars import evaluate_polars
>>> from receval.examples import WORKED_RECS, WORKED_TRUTH
>>> evaluate_polars(pl.DataFrame(WORKED_RECS).lazy(), pl.DataFrame(WORKED_TRUTH).lazy(), ["ndcg@4"], n_batches=3)["ndcg@4"]
0.498189...
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import polars as pl

# the memory budget lives in receval.budget (the in-memory path asks it too); its names are
# re-exported here, where tests and users have read them
from ..budget import BUDGET_ENV, FILE_BUDGET, INEXACT_COMBINE, MIN_BUDGET, ROW_BYTES, batches_for, memory_budget, one_batch_only, parse_bytes
from ..encode import check_lazy_overlap, harmonize, items_meet, user_batches
from ..engine import globals_without_partial, ignored_rows, merge, merge_info, needs_truth_max, plan_request, run_batch, say, settle_rel
from ..errors import DataError
from ..fingerprint import run_fingerprint, truth_fingerprint
from ..inputs import Request, Truth, encode_frames, exact_items, input_fingerprints, side_fingerprints
from ..io import Columns, is_text_path, missing_column, read_frame, scan_frame
from ..results import LazyFingerprints, Results

#: rows of recommendations per batch when neither ``n_batches`` nor a budget is given (old default)
BATCH_ROWS = 20_000_000
#: files read in this many batches or more are written once in user batches to a temporary
#: directory; fewer batches each scan the file (a scan costs less than writing it once)
SPILL_FROM = 6
#: rows the batch writers of that pass buffer in all (a row group each): polars' default row
#: group, times a hundred batches, took 1.8 GB at 100M rows, this 0.5 GB in the same time
SPILL_BUFFER_ROWS = 1 << 21
#: an evaluation shows a progress bar (on a terminal) once it has run this long
PROGRESS_AFTER = 2.0
_SEED = 0x5EC


def _source(obj: Any, what: str, cols: Columns) -> pl.DataFrame | pl.LazyFrame:
    """An input as a frame: a LazyFrame as given, a Parquet or CSV file scanned lazily
    (:func:`receval.io.scan_frame`), anything else read (:func:`receval.io.read_frame`)."""
    if isinstance(obj, Truth):
        return obj.frame
    if isinstance(obj, (pl.LazyFrame, pl.DataFrame)):
        return obj
    ids = (cols.user, cols.item)
    if isinstance(obj, (str, os.PathLike)):
        lazy = scan_frame(obj, what, ids=ids, sep=cols.sep)
        if lazy is not None:
            return lazy
    return read_frame(obj, what, ids=ids, sep=cols.sep)


def evaluate_polars(
    recs: Any,
    truth: Any,
    metrics: str | Iterable[Any],
    *,
    n_batches: int | None = None,
    budget: int | None = None,
    text: tuple[bool, bool] | None = None,
    fingerprints: bool = False,
    **request: Any,
) -> Results:
    """Evaluate in user batches; same arguments and Results as :func:`receval.evaluate`
    (``request``: the keywords of :class:`receval.inputs.Request`: ``dialect``, ``columns``,
    ``overrides`` and the side inputs).

    ``recs`` / ``truth``: LazyFrames, eager frames, or paths (Parquet and CSV files are read
    lazily). ``n_batches``: the number of user batches; default: as many as keep one batch
    within ``budget`` bytes of working memory (:func:`batches_for`; default budget
    :func:`memory_budget`), or one when a metric needs it (:func:`one_batch_only`). ``text``: whether each eager frame was read from a text file
    (canonical-integer id columns are integers; default: from the paths). Global metrics
    without a ``partial``/``combine`` pair are computed in a single batch. Every side input is
    read once, whole, and served to every batch (the metrics read the batch's users from it).
    ``fingerprints``: set ``Results.fingerprints`` (:mod:`receval.fingerprint`), the
    recommendations and the truth hashed batch by batch as they are evaluated (the inputs are
    not read again; the row hashes of a fingerprint add up over any split of the rows).
    """
    return run_polars(Request(recs, truth, metrics, **request), n_batches=n_batches, budget=budget, text=text,
                      fingerprints=fingerprints)


def run_polars(req: Request, *, n_batches: int | None = None, budget: int | None = None,
               text: tuple[bool, bool] | None = None, fingerprints: bool = False) -> Results:
    """The Polars engine on a :class:`receval.inputs.Request` (the other arguments as
    :func:`evaluate_polars`)."""
    try:
        return _evaluate_polars(req, n_batches=n_batches, budget=budget, text=text, fingerprints=fingerprints)
    except pl.exceptions.PolarsError as exc:  # a reader error found while scanning (a corrupt data page, ...)
        raise read_error(exc, {"recommendations": req.recs, "ground truth": req.truth}) from None


def read_error(exc: BaseException, inputs: dict[str, Any]) -> DataError:
    """One line for a reader error met while the inputs are scanned: the files it may come from
    and the fix (every file is opened before, so this is damage past the footer)."""
    files = [f"{k} {v}" for k, v in inputs.items() if isinstance(v, (str, os.PathLike))]
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    where = f" ({', '.join(files)})" if files else ""
    return DataError(f"re-write the input files{where}: they cannot be read to the end (corrupt, truncated or of "
                     f"mixed types): {first}")


def _evaluate_polars(req: Request, *, n_batches: int | None, budget: int | None, text: tuple[bool, bool] | None,
                     fingerprints: bool) -> Results:
    recs, truth, cols = req.recs, req.truth, req.columns
    side, resolved = plan_request(req)  # signatures name the side inputs read
    if text is None:
        text = (is_text_path(recs) or (isinstance(recs, Truth) and recs.text),
                is_text_path(truth) or (isinstance(truth, Truth) and truth.text))
    files = (_is_file(recs), _is_file(truth))
    given = cols
    frecs, ftruth = _source(recs, "recommendations", cols), _source(truth, "ground truth", cols.truth())
    ftruth, cols = _shared_names(ftruth, cols)  # the truth's own id columns renamed to the shared ones
    fps = _InPass(frecs, ftruth, cols, text) if fingerprints else None  # types decided on the inputs as given
    resolved, rel_said = settle_rel(resolved, ftruth, cols.rating)  # rel:>0 when the truth is rated
    if needs_truth_max(resolved):  # over the whole truth, not one batch's users
        side.truth_max = _truth_max(ftruth.lazy(), cols)
    if any(text):  # decide the id types of text files once, for every batch
        frecs, ftruth = _text_ids(frecs, ftruth, cols, text)
        text = (False, False)
    whole = bool(globals_without_partial(resolved))
    if whole or (n_batches is None and one_batch_only(resolved)):
        n_batches = 1
    if n_batches is None:
        eager = int(sum(f.estimated_size() for f in (frecs, ftruth) if isinstance(f, pl.DataFrame)))
        n_batches = batches_for(_height(frecs), budget if budget is not None else memory_budget(eager))
    batches, items_met = [], False
    with _Progress(n_batches) as progress, _Batches(frecs, ftruth, cols.user, n_batches, files, progress) as source:
        with user_batches():  # each batch is counted; the whole inputs are judged below
            for r_frame, t_frame in source:
                if fps is not None:
                    fps.add(r_frame, t_frame)
                if t_frame.height == 0:
                    batches.append(run_batch(None, resolved, side, whole_globals=whole, ignored=ignored_rows(r_frame, cols.user)))
                else:
                    enc = encode_frames(r_frame, t_frame, cols, text=text, exact=exact_items(resolved))
                    del r_frame, t_frame
                    items_met = items_met or items_meet(enc)
                    batches.append(run_batch(enc, resolved, side, whole_globals=whole))
                    del enc
                progress.advance()
        progress.status("merging the batches")
        check_lazy_overlap(merge_info([b.info for b in batches]), frecs.lazy(), ftruth.lazy(), cols.user, cols.item,
                           items_met=items_met)
        res = merge(batches, resolved)
    say(rel_said)
    if fingerprints:

        got = fps.values() if fps is not None else None
        if got is not None:
            res.fingerprints = {**got, **side_fingerprints(side)}
        else:  # an input the hash refused (a missing value): it says so when read
            res.fingerprints = LazyFingerprints(lambda: input_fingerprints(recs, truth, given, side))
    return res


class _InPass:
    """The fingerprints of the recommendations and the truth, fed each batch's rows (every row
    is in exactly one batch); given up (None) when a part cannot be hashed, so that the inputs
    are read again, and refused as they are, when the fingerprints are read."""

    def __init__(self, frecs: pl.DataFrame | pl.LazyFrame, ftruth: pl.DataFrame | pl.LazyFrame, cols: Columns,
                 text: tuple[bool, bool]):

        try:
            self.fps: tuple | None = (run_fingerprint(frecs, "recommendations", cols, text[0]),
                                      truth_fingerprint(ftruth, cols, text[1]))
        except DataError:
            self.fps = None

    def add(self, r_frame: pl.DataFrame, t_frame: pl.DataFrame) -> None:
        if self.fps is None:
            return
        try:
            self.fps[0].add(r_frame)
            self.fps[1].add(t_frame)
        except DataError:
            self.fps = None

    def values(self) -> dict[str, str] | None:
        return None if self.fps is None else {"recs": self.fps[0].value(), "truth": self.fps[1].value()}


def _is_file(obj: Any) -> bool:
    return isinstance(obj, (str, os.PathLike)) and os.path.isfile(obj)


def _height(frame: pl.DataFrame | pl.LazyFrame) -> int:
    if isinstance(frame, pl.DataFrame):
        return frame.height
    return int(frame.select(pl.len()).collect().item())


def _key(frame: pl.DataFrame | pl.LazyFrame, user: str, n: int) -> pl.Expr:
    """A row's batch: a hash of its user id, of one type on both sides (Int64 for any integer
    width, String for categorical ids), so that a user's rows meet in one batch."""
    dtype = frame.collect_schema()[user]
    col = pl.col(user)
    if dtype.is_integer() and dtype != pl.UInt64:
        col = col.cast(pl.Int64)
    elif dtype == pl.UInt64:
        col = col.cast(pl.Int64, strict=False)  # ids >= 2^63 share a batch (null)
    elif dtype != pl.String:
        col = col.cast(pl.String)
    return (col.hash(_SEED) % n).cast(pl.UInt32)


class _Batches:
    """The (recommendations, truth) frames of each user batch (see the module docstring)."""

    def __init__(self, recs: pl.DataFrame | pl.LazyFrame, truth: pl.DataFrame | pl.LazyFrame, user: str, n: int,
                 files: tuple[bool, bool], progress: _Progress):
        self.frames, self.user, self.n, self.files, self.progress = (recs, truth), user, n, files, progress
        self.tmp: str | None = None

    def __enter__(self) -> _Batches:
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)

    def __iter__(self) -> Iterator[tuple[pl.DataFrame, pl.DataFrame]]:
        if self.n == 1:
            yield self.frames[0].lazy().collect(), self.frames[1].lazy().collect()
            return
        ranges = self._ranges()
        if ranges is not None:  # recommendations grouped by user in id order: contiguous slices
            yield from ranges
            return
        sides = [self._side(f, is_file, name) for f, is_file, name in zip(self.frames, self.files, ("recs", "truth"))]
        for b in range(self.n):
            yield sides[0](b), sides[1](b)

    def _ranges(self) -> Iterator[tuple[pl.DataFrame, pl.DataFrame]] | None:
        """Batches of consecutive user ids when the recommendations are held in memory sorted by
        user id (what a recommender writes): batch *b* holds the users in ``[c_b, c_{b+1})``,
        the cuts taken at every n-th row, so its recommendations are a slice of the frame (no
        copy, no hash, no scan) and its truth a slice too when the truth is sorted, else a
        filter on the same range. None (hash batches) for anything else: a lazy or file
        input, different id types on the two sides, a null id, unsorted recommendations. Which
        users share a batch never changes a value (the batches are merged in user order)."""
        recs, truth = self.frames
        if not (isinstance(recs, pl.DataFrame) and isinstance(truth, pl.DataFrame)) or recs.height < 2 * self.n:
            return None
        ru, tu = recs.get_column(self.user), truth.get_column(self.user)
        if ru.dtype != tu.dtype or not (ru.dtype.is_integer() or ru.dtype == pl.String):
            return None
        if ru.null_count() or tu.null_count() or not ru.is_sorted():
            return None
        t_sorted = tu.is_sorted()
        cuts = ru.gather([recs.height * j // self.n for j in range(1, self.n)])

        def at(col: pl.Series, value: Any) -> int:
            return int(col.search_sorted(value, side="left"))

        def gen() -> Iterator[tuple[pl.DataFrame, pl.DataFrame]]:
            bounds = [None, *cuts.to_list(), None]
            for lo, hi in zip(bounds[:-1], bounds[1:]):
                r0, r1 = (0 if lo is None else at(ru, lo)), (recs.height if hi is None else at(ru, hi))
                if t_sorted:
                    t0, t1 = (0 if lo is None else at(tu, lo)), (truth.height if hi is None else at(tu, hi))
                    t_frame = truth.slice(t0, t1 - t0)
                else:
                    cond = pl.lit(True)
                    if lo is not None:
                        cond = cond & (pl.col(self.user) >= lo)
                    if hi is not None:
                        cond = cond & (pl.col(self.user) < hi)
                    t_frame = truth.filter(cond)
                yield recs.slice(r0, r1 - r0), t_frame

        return gen()

    def _side(self, frame: pl.DataFrame | pl.LazyFrame, is_file: bool, name: str):
        key = _key(frame, self.user, self.n)
        if isinstance(frame, pl.DataFrame):  # each row's batch computed once; a batch is a filter
            import numpy as np

            idx = frame.select(key).to_series().to_numpy()
            dtype = np.uint8 if self.n <= 256 else np.uint16 if self.n <= 65536 else np.uint32
            idx = idx.astype(dtype)
            return lambda b: frame.filter(pl.Series(idx == b))
        if is_file and self.n >= SPILL_FROM and hasattr(pl, "PartitionBy"):  # one streaming pass writes the batches
            if self.tmp is None:
                self.tmp = tempfile.mkdtemp(prefix="receval-batches-", dir=os.environ.get("RECEVAL_TMPDIR"))
            where = Path(self.tmp) / name
            self.progress.status(f"reading the {'recommendations' if name == 'recs' else 'ground truth'} in {self.n} user batches")
            frame.with_columns(_receval_batch=key).sink_parquet(
                pl.PartitionBy(where, key="_receval_batch", include_key=False), compression="lz4", maintain_order=True,
                row_group_size=max(4096, SPILL_BUFFER_ROWS // self.n))  # every batch's writer buffers one row group
            schema = frame.collect_schema()

            def read(b: int) -> pl.DataFrame:
                part = where / f"_receval_batch={b}"
                if not part.exists():
                    return pl.DataFrame(schema=schema)
                got = pl.read_parquet(sorted(part.glob("*.parquet")))
                shutil.rmtree(part, ignore_errors=True)  # read once: the disk is given back batch by batch
                return got

            return read
        return lambda b: frame.filter(key == b).collect()


class _Progress:
    """A progress bar over the batches (rich, on stderr), shown only when stderr is a terminal
    and the evaluation has run for :data:`PROGRESS_AFTER` seconds; removed when done."""

    def __init__(self, total: int):
        self.total, self.done, self.start = total, 0, time.monotonic()
        self.text = "evaluating"
        self.bar: Any = None
        self.task: Any = None
        self.enabled = _is_terminal()

    def __enter__(self) -> _Progress:
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.bar is not None:
            self.bar.stop()

    def status(self, text: str) -> None:
        self.text = text
        self._show()

    def advance(self) -> None:
        self.done += 1
        self.text = f"evaluating user batches ({self.done}/{self.total})"
        self._show()

    def _show(self) -> None:
        if not self.enabled:
            return
        if self.bar is None:
            if time.monotonic() - self.start < PROGRESS_AFTER:
                return
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                                console=Console(file=sys.stderr), transient=True)
            self.task = self.bar.add_task(self.text, total=self.total, completed=self.done)
            self.bar.start()
        self.bar.update(self.task, description=self.text, completed=self.done)


def _is_terminal() -> bool:
    try:
        return sys.stderr is not None and sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _shared_names(ftruth: pl.DataFrame | pl.LazyFrame, cols: Columns) -> tuple[pl.DataFrame | pl.LazyFrame, Columns]:
    """The ground truth with its own id columns (``cols.truth_user`` / ``truth_item``) renamed to
    the shared names, so that both sides are batched and joined by one name; and the columns
    without truth-side names. A column of the truth already holding a shared name is dropped."""
    tc, shared = cols.truth(), replace(cols, truth_user=None, truth_item=None)
    renames = {own: name for own, name in ((tc.user, cols.user), (tc.item, cols.item)) if own != name}
    if not renames:
        return ftruth, shared
    names = ftruth.collect_schema().names()
    for role, own in (("user", tc.user), ("item", tc.item)):
        if own not in names:
            raise DataError(missing_column("ground truth", own, role, names))
    clash = [n for n in renames.values() if n in names and n not in renames]
    return ftruth.drop(clash).rename(renames), shared


def _truth_max(ltruth: pl.LazyFrame, cols: Columns) -> float:
    """The largest rating of the whole ground truth (1 without a rating column: every row rated 1)."""
    if cols.rating not in ltruth.collect_schema().names():
        return 1.0
    got = ltruth.select(pl.col(cols.rating).cast(pl.Float64).max()).collect().item()
    return 1.0 if got is None else float(got)


def _text_ids(frecs: pl.DataFrame | pl.LazyFrame, ftruth: pl.DataFrame | pl.LazyFrame, cols: Columns, text: tuple[bool, bool]):
    """Id columns of text files: integers when every value on both sides is a canonical
    integer, else text (the in-memory rule, :func:`receval.encode.harmonize`), decided on
    the whole inputs so that every batch has the same id type. The rule reads the distinct ids
    in their first-seen order (what it reads of the rows), so only those are collected."""
    for col in (cols.user, cols.item):
        a = frecs.lazy().select(pl.col(col).unique(maintain_order=True)).collect().get_column(col)
        b = ftruth.lazy().select(pl.col(col).unique(maintain_order=True)).collect().get_column(col)
        a2, b2 = harmonize(a, b, "user" if col == cols.user else "item", text)
        if a2.dtype != a.dtype:
            frecs = frecs.with_columns(pl.col(col).cast(a2.dtype))
        if b2.dtype != b.dtype:
            ftruth = ftruth.with_columns(pl.col(col).cast(b2.dtype))
    return frecs, ftruth


__all__ = ["evaluate_polars", "BATCH_ROWS", "ROW_BYTES", "MIN_BUDGET", "BUDGET_ENV", "FILE_BUDGET", "SPILL_FROM", "memory_budget", "batches_for", "parse_bytes",
           "one_batch_only", "INEXACT_COMBINE"]
