"""The list layer of the intermediate form: item codes shared by the lists, the truth and the
side inputs, and the top-k lists cut from the form's rows.

:attr:`receval.hits.Hits.lists` builds one :class:`ListSpace` per form, the first time a metric
reads it (a metric reading it declares ``needs={"rows", "items"}``, so that the form carries
the row-level arrays and the item ids, or the item codes with their decoder ``Hits.item_decode``,
of which only the distinct codes are decoded); it is handed the side inputs already read
(by the form's ``side``, :class:`receval.side.SideInputs`, once per call): the list layer
reads no file or frame itself.

The id helpers (:func:`unique_ids`, :func:`encoder`, :func:`index_in`, :func:`unique_pairs`)
code other id columns (train, groups, a baseline run) into the same space.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from .errors import DataError, OutsideCatalogue, TiesRefused


class ListSpace:
    """Item codes shared by the lists, the truth and the side inputs (built once per form).

    ``h`` is the form (:class:`receval.hits.Hits`) with its row-level arrays; ``categories``
    (item ids, category names), ``train`` (user ids, item ids) and ``catalog`` (item ids) the
    side inputs as :meth:`receval.side.SideInputs.read` gives them (None when not given)."""

    def __init__(self, h: Any, categories: tuple[np.ndarray, np.ndarray] | None = None,
                 train: tuple[np.ndarray, np.ndarray] | None = None, catalog: np.ndarray | None = None):
        self._form = weakref.ref(h)  # (weak: see :attr:`_h`)
        self.categories = categories
        self.train = train
        self.catalog = catalog
        if h.item_decode is not None:  # the form's item codes: the distinct ones decoded, then coded again
            present = _union_ids([h.row_item, h.truth_item])
            parts = [h.item_decode(present)]
        else:
            parts = [h.row_item, h.truth_item]
        if self.categories is not None:
            parts.append(self.categories[0])
        if self.train is not None:
            parts.append(self.train[1])
        if self.catalog is not None:
            parts.append(self.catalog)
        kinds = {p.dtype == object for p in parts if len(p)}
        if len(kinds) > 1:
            raise DataError("item ids of the side inputs (categories/train/catalog) and the recommendations differ in type; cast them alike")
        self.universe = _union_ids(parts)
        self.n_items = len(self.universe)
        code = encoder(self.universe)
        form_code = code if h.item_decode is None else _recoder(present, code(parts[0]))
        self.row_code = form_code(h.row_item)
        self.truth_code = form_code(h.truth_item)
        if self.catalog is not None:
            cat_codes = np.unique(code(self.catalog))
        elif self.train is not None:
            cat_codes = np.unique(code(self.train[1]))
        else:
            cat_codes = np.arange(self.n_items)
        self.n_catalog = len(cat_codes)
        self.to_catalog = np.full(self.n_items + 1, -1, dtype=np.int64)  # last slot: padding -1 stays -1
        self.to_catalog[cat_codes] = np.arange(self.n_catalog)
        if self.train is not None:
            tu, ti = self.train
            train_users = unique_ids(tu)
            pairs = unique_pairs(encoder(train_users)(tu), code(ti))
            self.popularity = np.bincount(pairs[:, 1], minlength=self.n_items).astype(np.float64)
            self.n_train_users = len(train_users)
            self.train_items = np.unique(code(ti))
        if self.categories is not None:
            import scipy.sparse as sp

            ci, cc = self.categories
            # category codes in the sorted order of their names (np.unique's order; a polars sort
            # and a hash join for string names, the same codes)
            cat_names = unique_ids(cc)
            cat_code = encoder(cat_names)(cc)
            m = sp.csr_matrix((np.ones(len(ci)), (code(ci), cat_code)), shape=(self.n_items, len(cat_names)))
            m.data[:] = 1.0
            self.aspects = m
        # truth CSR by user (every kept truth row, relevant or not)
        self.t_offsets = np.r_[0, np.cumsum(np.bincount(h.truth_user, minlength=h.n_users))].astype(np.int64)
        tu = h.truth_user
        by_user = len(tu) < 2 or bool(np.all(tu[1:] >= tu[:-1]))  # already by user: the arrays themselves
        order = None if by_user else np.argsort(tu, kind="stable")
        self.t_items = _kept(self.truth_code, order).astype(np.int64, copy=False)
        self.t_ratings = _kept(h.truth_rating, order).astype(np.float64, copy=False)
        self.t_rel = _kept(h.truth_rel, order)
        self.t_keep = None if h.truth_keep is None or h.truth_keep.all() else _kept(h.truth_keep, order)

    @property
    def _h(self) -> Any:
        """The form this layer was built from, held weakly: the form holds the layer
        (``Hits.lists``), and a strong reference back made a cycle that only Python's cyclic
        collector frees. Every call of a list metric then left the form's arrays behind until a
        collection ran (about 80 MB a call at 100k users x 20: memory grew call by call, and each
        call wrote to fresh pages)."""
        h = self._form()
        if h is None:
            raise ValueError("the form this list layer was built from is gone: read the layer as h.lists while h is alive")
        return h

    def kept_truth(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(offsets, items, ratings) of the truth rows the ``tdup`` policy keeps, by user (every
        row under ``tdup=keep``): the truth read row by row (αβ-nDCG's γ and ideal candidates)."""
        if self.t_keep is None:
            return self.t_offsets, self.t_items, self.t_ratings
        user = np.repeat(np.arange(len(self.t_offsets) - 1), np.diff(self.t_offsets))[self.t_keep]
        offsets = np.r_[0, np.cumsum(np.bincount(user, minlength=len(self.t_offsets) - 1))].astype(np.int64)
        return offsets, self.t_items[self.t_keep], self.t_ratings[self.t_keep]

    def check_order_of_shared(self, ks: list[int], metric: str) -> None:
        """Refuse a metric that reads the order of a list's items (α-nDCG, αβ-nDCG) where rows
        share a position inside the top k (``ties=optimistic``, equal rank values): their order
        is not in the data, and the value would follow the row order (:class:`TiesRefused`
        "shared", with the number of such users at each cut-off)."""
        h = self._h
        if h.rows_ranked or h.row_pos is None or len(h.row_pos) < 2:  # (ranked rows: every position once)
            return
        user, pos = h.row_user, h.row_pos
        same = np.flatnonzero((user[1:] == user[:-1]) & (pos[1:] == pos[:-1]))
        if not len(same):
            return
        counts = {int(k): int(np.unique(user[same[pos[same] <= k]]).size) for k in ks}
        if any(counts.values()):
            raise TiesRefused(metric, counts, "shared")

    def _layout(self, width: int) -> tuple[np.ndarray | None, np.ndarray | None, int]:
        """The rows at positions ≤ ``width`` (a mask over the rows; None: every row), their
        columns (None: each row's position − 1) and the number of columns. A row's column is its
        position − 1, unless positions repeat within a user (``ties=optimistic``,
        ``order=rank_value``: every row at a position ≤ k is in the top k, so a top k can hold
        more than k rows); then the rows of a user fill the columns in ranked order and
        :meth:`top_pos` gives their positions."""
        h = self._h
        width = h.width([width])
        every = len(h.row_pos) == 0 or int(h.row_pos.max()) <= width
        keep = None if every else h.row_pos <= width  # (every row kept: the arrays themselves, no copies)
        user, pos = _kept(h.row_user, keep), _kept(h.row_pos, keep)
        if len(user) > 1 and np.any((user[1:] == user[:-1]) & (pos[1:] == pos[:-1])):
            idx = np.arange(len(user), dtype=np.int64)
            start = np.maximum.accumulate(np.where(np.r_[True, user[1:] != user[:-1]], idx, 0))
            col = idx - start
            return keep, col, int(col.max()) + 1
        return keep, None, width

    def _flat(self, width: int) -> tuple[np.ndarray | None, np.ndarray, int]:
        """(:meth:`_layout`'s mask, each kept row's place in a flat ``[U, W]`` array, W)."""
        h = self._h
        keep, col, w = self._layout(width)
        flat = _kept(h.row_user, keep) * w
        if col is None:
            flat += _kept(h.row_pos, keep)
            flat -= 1
        else:
            flat += col
        return keep, flat, w

    def top(self, width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """items [U, W] (−1 pad), rel [U, W], rating [U, W] (NaN if unrated): every row at a
        position ≤ ``width``; W = ``width`` but no wider than the longest list (later columns
        would be padding only), or wider when repeated positions put more rows there (:meth:`_layout`)."""
        h = self._h
        keep, flat, w = self._flat(width)
        items = np.full(h.n_users * w, -1, dtype=np.int64)
        items[flat] = _kept(self.row_code, keep)
        t = _kept(h.row_truth, keep)
        hit = t >= 0
        at, t = flat[hit], t[hit]
        rating = np.full(h.n_users * w, np.nan)
        rating[at] = h.truth_rating[t]
        rel = np.zeros(h.n_users * w, dtype=bool)
        rel[at] = h.truth_rel[t]
        shape = (h.n_users, w)
        return items.reshape(shape), rel.reshape(shape), rating.reshape(shape)

    def row_lists(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The lists as the form's rows, when they are each user's rows together in ranked order
        at the positions 1..ℓ (``Hits.rows_ranked``): (each user's first row, its number of rows);
        the rows' item codes are :attr:`row_code`, their truth rows ``row_truth``. None otherwise
        (:meth:`top` then gives the lists)."""
        h = self._h
        if not h.rows_ranked:
            return None
        if h.row_groups is not None:
            users, sizes = h.row_groups
            first = np.cumsum(sizes) - sizes
        else:
            user = h.row_user
            assert user is not None
            first = np.flatnonzero(np.r_[True, user[1:] != user[:-1]]) if len(user) else np.zeros(0, dtype=np.int64)
            users, sizes = user[first], np.diff(np.r_[first, len(user)])
        starts = np.zeros(h.n_users, dtype=np.int64)
        starts[users] = first
        length = np.zeros(h.n_users, dtype=np.int64)
        length[users] = sizes
        return starts, length

    def top_pos(self, width: int) -> np.ndarray:
        """The 1-based positions [U, W] of :meth:`top`'s entries (as floats; padding holds its
        column + 1, a position no row has, and is masked by the callers)."""
        h = self._h
        keep, flat, w = self._flat(width)
        out = np.broadcast_to(np.arange(1, w + 1, dtype=np.float64), (h.n_users, w)).copy()
        out.ravel()[flat] = _kept(h.row_pos, keep)
        return out

    def catalog_top(self, width: int, metric: str) -> np.ndarray:
        """The top-width lists in catalogue codes 0..|I|-1 (−1 pad); items outside it are an error."""
        items = self.top(width)[0]
        out = self.to_catalog[items]  # items == -1 indexes the last slot, which is -1
        self.check_in_catalog(items[(items >= 0) & (out < 0)], metric)
        return out

    def outside(self, codes: np.ndarray) -> np.ndarray:
        """The distinct ids of the item ``codes`` (≥ 0) that are not in the catalogue."""
        codes = np.unique(codes[self.to_catalog[codes] < 0])
        return self.universe[codes]

    def check_in_catalog(self, codes: np.ndarray, metric: str) -> None:
        """The one rule for every metric that reads a catalogue (issue 31, ruling 3): a
        recommended item (``codes``, item codes ≥ 0 of the recommended entries the metric reads)
        outside the catalogue is refused, :class:`receval.errors.OutsideCatalogue`."""
        ids = self.outside(codes)
        if len(ids):
            raise OutsideCatalogue(metric, ids.tolist())

    def need(self, what: str, metric: str) -> Any:
        if what == "categories" and self.categories is None:
            raise DataError(f"{metric} needs item categories: pass categories= (item_id, category) or --categories FILE (MovieLens movies.csv works)")
        if what == "train" and self.train is None:
            raise DataError(f"{metric} needs train interactions for item popularity: pass train= or --train FILE")
        return None


# ---- id helpers ------------------------------------------------------------------------------


def _strings(values: np.ndarray) -> Any:
    """``values`` as a polars String series when every one of them is a str, else None."""
    if values.dtype != object:
        return None
    import polars as pl

    try:
        s = pl.Series("v", values, dtype=pl.String, strict=True)
    except (TypeError, ValueError, pl.exceptions.PolarsError):
        return None
    return s if s.null_count() == 0 else None


def _kept(a: np.ndarray, keep: np.ndarray | None) -> np.ndarray:
    """``a[keep]`` (a mask or an order), or ``a`` itself when ``keep`` is None (no copy)."""
    return a if keep is None else a[keep]


def _table_base(lo: int, hi: int) -> int | None:
    """The id a lookup table of integer ids ``lo`` .. ``hi`` starts at: 0 when they are
    non-negative and below 2^26 (the ids index it themselves: no shifted copy), ``lo`` when their
    range is below 2^26, else None (no table)."""
    if 0 <= lo and hi < 2**26:
        return 0
    return lo if hi - lo < 2**26 else None


def unique_ids(values: np.ndarray) -> np.ndarray:
    """Sorted unique values; a presence table (no sort) for integer ids of a small range; a
    polars sort for string ids (code-point order, as numpy's)."""
    return _union_ids([values])


def _union_ids(parts: list[np.ndarray]) -> np.ndarray:
    """:func:`unique_ids` of the concatenated ``parts``: integer ids of a small range in one
    presence table marked part by part (no concatenated copy); string ids by a polars sort; else
    ``np.unique``."""
    full = [p for p in parts if len(p)]
    kind = np.result_type(*parts)  # the concatenation's dtype (float ids: np.unique below)
    if full and kind.kind in "iu":
        lo, hi = min(int(p.min()) for p in full), max(int(p.max()) for p in full)
        base = _table_base(lo, hi)
        if base is not None:
            present = np.zeros(hi - base + 1, dtype=bool)
            for p in full:
                present[p - base if base else p] = True
            return (np.flatnonzero(present) + base).astype(kind)
    values = parts[0] if len(parts) == 1 else np.concatenate(parts)
    text = _strings(values)
    if text is not None:
        return np.array(text.unique().sort().to_list(), dtype=object)
    return np.unique(values)


def encoder(universe: np.ndarray):
    """Codes 0..n-1 of values in the sorted ``universe``: a lookup table for integer ids of a
    small range (one gather), a hash join for string ids, else a binary search."""
    if universe.dtype.kind in "iu" and len(universe) and _table_base(int(universe[0]), int(universe[-1])) is not None:
        return _recoder(universe, np.arange(len(universe)))  # (the ids 0..n-1: their own codes)
    text = _strings(universe)
    if text is not None:
        import polars as pl

        mapping = pl.DataFrame({"v": text, "c": np.arange(len(universe), dtype=np.int64)})

        def by_join(a: np.ndarray) -> np.ndarray:
            keys = _strings(np.asarray(a, dtype=object))
            if keys is None:  # not all strings: the values cannot be in a universe of strings
                return np.searchsorted(universe, a)
            j = keys.to_frame().join(mapping, on="v", how="left", maintain_order="left")["c"]
            return j.fill_null(-1).to_numpy()

        return by_join
    return lambda a: np.searchsorted(universe, a)


def _recoder(present: np.ndarray, target: np.ndarray):
    """Codes of values in the sorted integer ``present`` mapped to ``target`` (one per value of
    ``present``): ``target[position in present]``, one gather through a table for a small range
    (-1 for a value of the range not present), else a binary search; the values themselves when
    ``present`` and ``target`` are both 0..n-1."""
    base = _table_base(int(present[0]), int(present[-1])) if len(present) else None
    if base == 0 and int(present[-1]) == len(present) - 1 and np.array_equal(target, np.arange(len(target))):
        return lambda a: np.asarray(a).astype(np.int64, copy=False)  # every code maps onto itself (no copy)
    if base is None:
        return lambda a: target[np.searchsorted(present, a)]
    table = np.full(int(present[-1]) - base + 1, -1, dtype=np.int64)
    table[present - base if base else present] = target
    if base == 0:
        return lambda a: table[np.asarray(a, dtype=np.int64)]
    return lambda a: table[np.asarray(a, dtype=np.int64) - base]


def index_in(sorted_ids: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(position of each value in ``sorted_ids`` (0 where absent), whether it is present)."""
    values = np.asarray(values)
    if _strings(sorted_ids) is not None and values.dtype == object:
        idx = encoder(sorted_ids)(values)
        ok = idx >= 0
        return np.where(ok, idx, 0), ok
    idx = np.searchsorted(sorted_ids, values)
    ok = idx < len(sorted_ids)
    ok[ok] = sorted_ids[idx[ok]] == values[ok]
    return np.where(ok, idx, 0), ok


def unique_pairs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.unique(np.stack([a, b], axis=1), axis=0)`` for non-negative integer codes, by one
    sort of int64 keys."""
    if len(a) == 0:
        return np.zeros((0, 2), dtype=np.int64)
    span = int(b.max()) + 1
    key = np.unique(np.asarray(a, dtype=np.int64) * span + np.asarray(b, dtype=np.int64))
    return np.stack([key // span, key % span], axis=1)


__all__ = ["ListSpace", "unique_ids", "encoder", "index_in", "unique_pairs"]
