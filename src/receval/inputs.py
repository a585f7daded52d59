"""The input step of an evaluation: the recommendations and the ground truth read once, as
the engine reads them, then encoded (:func:`receval.encode.encode`) and fingerprinted
(:mod:`receval.fingerprint`) from the same frames.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from .encode import Encoded, encode
from .fingerprint import as_lazy, run_fp, side_fingerprints, truth_fp
from .io import Columns, check_columns, is_text_path, read_frame
from .kernels import deferred
from .resolve import Resolved
from .side import SideInputs


def exact_items(resolved: Sequence[Resolved]) -> bool:
    """Whether item ids must be coded exactly: a metric reads the item layer, or a tie rule
    orders by item id."""
    return any("items" in r.metric.needs_for(r.options) or r.options.get("ties") in ("item", "item_desc", "text_desc") for r in resolved)


@dataclass
class Truth:
    """A ground truth read once (a frame, and whether it came from a text file), to evaluate
    several runs against it without reading or parsing it again."""

    frame: pl.DataFrame
    text: bool = False


def read_truth(truth: Any, cols: Columns) -> Truth:
    """Read the ground truth once (any frame type or file); pass the result as ``truth``."""
    if isinstance(truth, Truth):
        return truth
    tc = cols.truth()
    return Truth(read_frame(truth, "ground truth", ids=(tc.user, tc.item), sep=cols.sep), is_text_path(truth))


def encode_inputs(recs: Any, truth: Any, cols: Columns, exact: bool = True) -> Encoded:
    """Read both inputs (any frame type or file; ``truth`` may be a :class:`Truth`) and
    encode them (:func:`receval.encode.encode`)."""
    rf = read_frame(recs, "recommendations", ids=(cols.user, cols.item), sep=cols.sep)
    t = read_truth(truth, cols)
    return encode_frames(rf, t.frame, cols, text=(is_text_path(recs), t.text), exact=exact)


def encode_frames(rf: pl.DataFrame, tf: pl.DataFrame, cols: Columns, text: tuple[bool, bool] = (False, False),
                  exact: bool = True) -> Encoded:
    rroles = check_columns(rf, "recommendations", {"user": cols.user, "item": cols.item}, {"score": cols.score, "rank": cols.rank})
    tc = cols.truth()
    troles = check_columns(tf, "ground truth", {"user": tc.user, "item": tc.item}, {"rating": cols.rating})
    got = deferred(rf, tf, (rroles, troles), text, exact, cols)  # large inputs: the kernels' path (receval.kernels)
    if got is not None:
        return got
    enc = encode(rf, tf, (rroles, troles), text=text, exact_items=exact)
    enc.info["columns"] = cols
    return enc


@dataclass
class Inputs:
    """The recommendations and the ground truth read once: encoded by the engine and
    fingerprinted from the same frames (never read twice)."""

    recs: pl.DataFrame
    truth: Truth
    cols: Columns
    recs_text: bool = False

    @property
    def text(self) -> tuple[bool, bool]:
        return self.recs_text, self.truth.text

    def encode(self, exact: bool = True):
        """:func:`encode_frames` of the frames (what ``encode_inputs`` does)."""
        return encode_frames(self.recs, self.truth.frame, self.cols, text=self.text, exact=exact)

    def fingerprints(self, side: SideInputs | None = None) -> dict[str, str]:
        out = {"recs": run_fp(self.recs, "recommendations", self.cols, self.recs_text),
               "truth": truth_fp(self.truth.frame, self.cols, self.truth.text)}
        return {**out, **side_fingerprints(side)}


def read_inputs(recs: Any, truth: Any, cols: Columns) -> Inputs:
    """Read recs and truth as :func:`receval.engine.encode_inputs` does."""
    rf = read_frame(recs, "recommendations", ids=(cols.user, cols.item), sep=cols.sep)
    return Inputs(rf, read_truth(truth, cols), cols, is_text_path(recs))


def input_fingerprints(recs: Any, truth: Any, cols: Columns, side: SideInputs | None = None) -> dict[str, str]:
    """Every fingerprint of an evaluation's inputs, read again (Parquet files and LazyFrames
    in slices): for engines that read the inputs themselves (``engine="polars"``)."""
    ids = (cols.user, cols.item)
    t_data: pl.DataFrame | pl.LazyFrame
    if isinstance(truth, Truth):
        t_data, t_text = truth.frame, truth.text
    else:
        tc = cols.truth()
        t_data, t_text = as_lazy(truth, "ground truth", (tc.user, tc.item), cols.sep), is_text_path(truth)
    out = {"recs": run_fp(as_lazy(recs, "recommendations", ids, cols.sep), "recommendations", cols, is_text_path(recs)),
           "truth": truth_fp(t_data, cols, t_text)}
    return {**out, **side_fingerprints(side)}


#: the side inputs a request carries, in the order every engine reads them
SIDE_INPUTS = ("categories", "train", "catalog", "baseline", "item_groups", "user_groups")


@dataclass(frozen=True)
class Request:
    """One evaluation as asked: what :func:`receval.evaluate` builds once and hands to an engine
    (memory, polars, spark). ``columns``: the inputs' column names (None: the defaults);
    ``overrides``: the context keywords (``rel``, ``order``, ``ties``, ...; ``UNSET`` when not
    given); the side inputs as given (frames, paths or, for ``catalog``, ids)."""

    recs: Any
    truth: Any
    metrics: Any
    dialect: Any = None
    columns: Columns = field(default_factory=Columns)
    overrides: Mapping[str, Any] = field(default_factory=dict)
    categories: Any = None
    train: Any = None
    catalog: Any = None
    baseline: Any = None
    item_groups: Any = None
    user_groups: Any = None

    def __post_init__(self) -> None:
        if self.columns is None:
            object.__setattr__(self, "columns", Columns())
        if self.overrides is None:
            object.__setattr__(self, "overrides", {})

    @property
    def side_given(self) -> tuple[Any, ...]:
        """The side inputs as given, in the order of :data:`SIDE_INPUTS`."""
        return tuple(getattr(self, name) for name in SIDE_INPUTS)

    def side(self, truth_max: float | None = None) -> SideInputs:
        """The side inputs, each read once when a metric first asks for it."""
        return SideInputs(self.categories, self.train, self.catalog, self.columns, baseline=self.baseline,
                          item_groups=self.item_groups, user_groups=self.user_groups, truth_max=truth_max)


__all__ = ["Request", "SIDE_INPUTS", "Truth", "read_truth", "encode_inputs", "encode_frames", "exact_items", "Inputs", "read_inputs", "input_fingerprints"]
