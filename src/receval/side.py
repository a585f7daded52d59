"""Side inputs: the data beside the run and the truth that some metrics read.

* ``categories``: item categories, a frame with ``item_id`` and ``category`` columns (one row
  per item–category pair) or a MovieLens ``movies.csv`` / ``movies.dat`` path (pipe-separated
  ``genres``);
* ``train``: train interactions (``user_id``, ``item_id``);
* ``catalog``: the item catalogue (a sequence of item ids, or a frame with ``item_id``);
* ``baseline``: a second run (``user_id``, ``item_id`` and a score or rank);
* ``item_groups`` / ``user_groups``: ``item_id`` / ``user_id`` and ``group``.

The engine hands one :class:`SideInputs` per call to every form it builds
(:func:`receval.engine.form`); each input is read here, the first time a metric asks for it,
and then served from this object to every build group and every batch of the call. No metric
module reads a file or a frame itself.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .data.movielens import load_genres
from .encode import _canonical_ints
from .errors import DataError
from .io import Columns, columns_of, is_text_path, read_frame


@dataclass
class SideInputs:
    """Side inputs of the beyond-accuracy metrics (categories, train, catalogue, a baseline run,
    item and user groups), each read once, when a metric first needs it."""

    categories: Any = None
    train: Any = None
    catalog: Any = None
    cols: Columns = field(default_factory=Columns)
    baseline: Any = None  # a second run (unexpectedness, intersection)
    item_groups: Any = None  # item_id, group (reo, rsp)
    user_groups: Any = None  # user_id, group (mad)
    #: the largest truth rating over ALL truth users (ab_ndcg's default r_max), set by the
    #: engines that evaluate users in batches, so that no batch sees only its own maximum
    truth_max: float | None = None
    _read: dict = field(default_factory=dict, repr=False, compare=False)

    def read(self, name: str) -> Any:
        """The side input ``name`` as the metrics read it (None when not given), read the first
        time it is asked for: ``categories`` → (item ids, category names) of every item–category
        row; ``train`` → (user ids, item ids); ``catalog`` → item ids; ``item_groups`` /
        ``user_groups`` → (ids, group names); ``baseline`` → the run's columns (``user``,
        ``item``, and ``score`` / ``rank`` when given)."""
        if getattr(self, name) is None:
            return None
        if name not in self._read:
            self._read[name] = _READERS[name](self)
        return self._read[name]


# ---- readers ---------------------------------------------------------------------------------


def categories_frame(obj: Any, cols: Any) -> tuple[Any, str]:
    """The (item, category) rows of a categories input as the metrics read them, and the name
    of its item column: a frame or file with ``category`` (or MovieLens' ``genres``, split on
    ``|``), or a MovieLens movies file; rows with an empty item or category refused."""
    import polars as pl

    item_col = cols.item if cols is not None else "item_id"
    if isinstance(obj, (str, os.PathLike)):
        frame = (read_ids_frame(obj, "categories", (item_col,), sep=getattr(cols, "sep", None))
                 if not str(obj).endswith((".dat",)) else None)
        if frame is None or ("genres" in frame.columns and "category" not in frame.columns):
            frame = load_genres(obj)
            item_col = "item_id"
    else:
        frame = read_frame(obj, "categories")
    if "genres" in frame.columns and "category" not in frame.columns:
        frame = frame.with_columns(pl.col("genres").str.split("|").alias("category")).explode("category")
        frame = frame.filter(pl.col("category") != "(no genres listed)")
    if item_col not in frame.columns and "movieId" in frame.columns:
        frame = frame.rename({"movieId": item_col})
    for c in (item_col, "category"):
        if c not in frame.columns:
            raise DataError(f"categories are missing column '{c}' (found: {', '.join(frame.columns)})")
        if frame.get_column(c).null_count():
            bad = frame.filter(pl.col(c).is_null())
            raise DataError(
                f"categories have {bad.height} rows with an empty '{c}' (first: {bad.row(0, named=True)}); "
                "fill them, or drop those rows (an item without a category is simply left out)"
            )
    return frame, item_col


def read_categories(obj: Any, cols: Any) -> tuple[np.ndarray, np.ndarray]:
    import polars as pl

    frame, item_col = categories_frame(obj, cols)
    items = frame.get_column(item_col)
    items = items.cast(pl.Int64).to_numpy() if items.dtype.is_integer() else items.cast(pl.String).to_numpy().astype(object)
    return items, frame.get_column("category").cast(pl.String).to_numpy().astype(object)


def read_ids_frame(obj: Any, what: str, ids: tuple[str, ...], sep: str | None = None) -> Any:
    """A side input as a frame, its id columns ``ids`` read as the engine reads the
    recommendations' and the truth's: from a text file as text, then integers when every value
    is a canonical decimal integer (``"7"``, never ``"007"``), so that an id compares as the same
    value whatever file type carried it (:func:`same_ids` compares two id columns)."""
    frame = read_frame(obj, what, ids=ids, sep=sep)
    return text_ids(frame, ids) if is_text_path(obj) else frame


def text_ids(frame: Any, ids: tuple[str, ...]) -> Any:
    """A text file's id columns ``ids`` (read as text) as integers when every value is a
    canonical decimal integer, else left as text."""
    import polars as pl

    for c in ids:
        if c in frame.columns and frame.schema[c] == pl.String and _canonical_ints(frame.get_column(c).drop_nulls()):
            frame = frame.with_columns(pl.col(c).cast(pl.Int64))
    return frame


def same_ids(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two id arrays of one type: as given when both are integers or both text; else both as
    text (an integer id is the text it prints: 7 is '7', never '007')."""
    text_a, text_b = a.dtype == object or a.dtype.kind in "US", b.dtype == object or b.dtype.kind in "US"
    if text_a == text_b:
        return a, b
    return (np.asarray([str(x) for x in a.tolist()], dtype=object),
            np.asarray([str(x) for x in b.tolist()], dtype=object))


def read_train(obj: Any, cols: Any) -> tuple[np.ndarray, np.ndarray]:
    user_col = cols.user if cols is not None else "user_id"
    item_col = cols.item if cols is not None else "item_id"
    frame = read_ids_frame(obj, "train interactions", (user_col, item_col), sep=getattr(cols, "sep", None))
    c = columns_of(frame, "train interactions", {"user": user_col, "item": item_col}, {})
    return c["user"], c["item"]


def read_catalog(obj: Any, cols: Any) -> np.ndarray:
    item_col = cols.item if cols is not None else "item_id"
    if isinstance(obj, (list, tuple, np.ndarray)):
        arr = np.asarray(obj)
        return arr.astype(object) if arr.dtype.kind in "US" else arr  # string ids as the other inputs hold them
    frame = read_ids_frame(obj, "catalog", (item_col,), sep=getattr(cols, "sep", None))
    return columns_of(frame, "catalog", {"item": item_col}, {})["item"]


def read_groups(obj: Any, key_col: str, what: str, role: str = "item") -> tuple[np.ndarray, np.ndarray]:
    """(ids, group names) of a groups input; an id with more than one group is refused."""
    import polars as pl

    frame = read_ids_frame(obj, what, (key_col,))
    if "group" not in frame.columns:
        raise DataError(f"{what} are missing column 'group' (found: {', '.join(frame.columns)})")
    ids = columns_of(frame, what, {role: key_col}, {})[role]
    groups = frame.get_column("group").cast(pl.String).to_numpy().astype(object)
    if len(np.unique(ids)) != len(ids):
        raise DataError(f"{what}: an id has more than one group; give each one group")
    return ids, groups


def read_baseline(obj: Any, cols: Columns) -> dict[str, np.ndarray]:
    """The columns of a baseline run (``user``, ``item``, and ``score`` / ``rank`` when given).

    Its rows are ranked and de-duplicated by :func:`receval.metrics.popularity._baseline_rows`
    (rank ascending, else score descending, else row order; ties kept in input order; a
    repeated pair keeps its best-ranked row), not by the engine's ``order``/``dup`` rules: a
    baseline's equal ranks are allowed and its repeated pairs are never an error, so the
    engine's encode step would change what published values read."""
    return columns_of(read_frame(obj, "baseline"), "baseline", {"user": cols.user, "item": cols.item},
                      {"score": cols.score, "rank": cols.rank})


_READERS: dict[str, Any] = {
    "categories": lambda s: read_categories(s.categories, s.cols),
    "train": lambda s: read_train(s.train, s.cols),
    "catalog": lambda s: read_catalog(s.catalog, s.cols),
    "item_groups": lambda s: read_groups(s.item_groups, s.cols.item, "item groups"),
    "user_groups": lambda s: read_groups(s.user_groups, s.cols.user, "user groups", "user"),
    "baseline": lambda s: read_baseline(s.baseline, s.cols),
}


__all__ = ["SideInputs", "read_ids_frame", "same_ids", "categories_frame", "read_categories", "read_train", "read_catalog", "read_groups", "read_baseline"]


# ---- which side inputs a value reads (declared at registration: ``register(..., side=...)``) --


def catalogue_reads(options: dict[str, Any], given: frozenset[str]) -> set[str]:
    """What defines the catalogue I (:class:`receval.lists.ListSpace`): ``catalog``, else the
    train items, else every item of the recommendations, the truth and the categories.

    >>> sorted(catalogue_reads({}, frozenset({"train", "catalog"})))
    ['catalog']
    """
    if "catalog" in given:
        return {"catalog"}
    if "train" in given:
        return {"train"}
    return {"categories"}


def split_reads(options: dict[str, Any], given: frozenset[str]) -> set[str]:
    """The popularity head/tail split reads train (required) and the catalogue; ``split=count``
    only the popularity φ."""
    return {"train"} | (catalogue_reads(options, given) if options.get("split") != "count" else set())
