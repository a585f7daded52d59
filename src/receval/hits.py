"""The intermediate form: built once per call, read by every metric at every k.

:class:`Hits` holds, for the averaged user universe (the truth users, sorted by id):

* ``n_rel[u]`` – |R_u|, the number of relevant truth rows (after the duplicate policy);
* ``length[u]`` – ℓ_u, the number of recommendation rows of the user;
* the *hits*, sparse: for every recommended row that is a relevant truth item, the user code
  ``hit_user``, the 1-based position ``hit_pos`` and the truth rating ``hit_rating``; with
  ``ties=average`` also the 1-based bounds ``hit_lo`` .. ``hit_hi`` of the hit's tie group
  (the positions the equally scored items share; both equal ``hit_pos`` for an untied item,
  and both are None under every other tie rule);
* the relevant truth ratings (for ideal rankings), sparse, and – only when a metric needs
  them – the scores and labels of every row (AUC), the matched truth ratings of every
  recommended row (rating prediction, αβ-nDCG) and the item codes of every row (diversity).

Dense ``[users, k_max]`` matrices are cut from the sparse hits on demand and cached, so all
cut-offs of all metrics come from one cumulative sum. No Python loop runs per user. The list
layer :attr:`Hits.lists` (:mod:`receval.lists`: item codes shared with the side inputs, top-k
lists) is built from the row-level arrays the first time a metric reads it; the side inputs
(:class:`receval.side.SideInputs`) are given to :func:`build` by the engine.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol

import numpy as np

from .errors import DataError, TiesRefused
from .lists import ListSpace


class SideReader(Protocol):
    """What the form asks of its side inputs (:class:`receval.side.SideInputs` is one):
    ``read(name)``, the input as the metrics read it, or None when not given; ``truth_max``, the
    largest truth rating over all users when a batched engine sets it."""

    truth_max: float | None

    def read(self, name: str) -> Any: ...


#: cut-offs up to this many positions are computed on views k columns wide (the arithmetic
#: every backend repeats bit for bit); beyond it views stop at the longest list
WIDE = 1 << 16


@dataclass
class Hits:
    user_ids: np.ndarray  # [U] sorted truth user ids
    n_rel: np.ndarray  # [U] int64
    n_truth: np.ndarray  # [U] int64 rows in the truth (relevant or not)
    length: np.ndarray  # [U] int64 recommendation rows
    hit_user: np.ndarray  # [H] int64, sorted by (user, pos)
    hit_pos: np.ndarray  # [H] int64, 1-based
    hit_rating: np.ndarray  # [H] float64
    rel_user: np.ndarray  # [R] int64 user code of each relevant truth row
    rel_rating: np.ndarray  # [R] float64 its rating
    options: dict[str, Any]
    info: dict[str, Any] = field(default_factory=dict)
    # optional parts: row level arrays of the (ordered, deduplicated) recommendations of truth users
    # (``row_user`` and ``row_pos`` are properties: made from ``row_groups`` the first time they are read)
    _row_user: np.ndarray | None = None
    _row_pos: np.ndarray | None = None
    row_score: np.ndarray | None = None
    row_item: np.ndarray | None = None
    row_truth: np.ndarray | None = None  # index into truth rows or -1
    truth_user: np.ndarray | None = None
    truth_item: np.ndarray | None = None
    truth_rating: np.ndarray | None = None
    truth_rel: np.ndarray | None = None
    #: the truth rows the ``tdup`` policy keeps (None: every row); ``truth_rel`` is false on the others
    truth_keep: np.ndarray | None = None
    # ties=average: 1-based first and last position of each hit's tie group (else None)
    hit_lo: np.ndarray | None = None
    hit_hi: np.ndarray | None = None
    # ties=average with row-level data: the same bounds for every row (else None)
    row_lo: np.ndarray | None = None
    row_hi: np.ndarray | None = None
    # ties=average: per user, the first position of a tie group of two or more rows (a large
    # number when the user has none): the order of the top k is settled by the scores iff k < it
    first_tie: np.ndarray | None = None
    # hitscore=positive: user code and rating of every recommended relevant item, hit or not
    # (the masked ones included), for the "listed" denominators and ideals (else None: the hits)
    listed_user: np.ndarray | None = None
    listed_rating: np.ndarray | None = None
    #: side inputs of the beyond-accuracy metrics (:class:`receval.side.SideInputs`), given to
    #: :func:`build` by the engine (read by the list layer and the metrics that compare groups or runs)
    side: SideReader | None = None
    #: the largest position of any recommended row (0 without rows): every cut-off beyond it
    #: reads the same lists, so no array is wider than this
    max_pos: int = 0
    #: the user codes (of the encoding) with a tie group reaching into the top ``reach`` of the
    #: build group (:func:`receval.engine.tied_codes`); None when no spec of it reads the tie rule
    tied_codes: np.ndarray | None = None
    #: [H] the truth row (index into the truth arrays ``truth_*``) each hit matched
    hit_truth: np.ndarray | None = None
    #: when set, ``row_item`` and ``truth_item`` are the encoder's integer item codes and this
    #: decodes them into the ids (the list layer decodes the distinct codes only); None: they are the ids
    item_decode: Any = None
    #: with ``rows_ranked``: the rows' groups, the user code of each group in row order and its
    #: number of rows, when the matcher had them (``row_user`` and ``row_pos`` are then made from
    #: them only when a metric reads them); None: not kept
    row_groups: tuple[np.ndarray, np.ndarray] | None = None
    _dense: dict = field(default_factory=dict, repr=False)

    @property
    def rows_ranked(self) -> bool:
        """The row-level arrays hold each user's rows together, in ranked order at the positions
        1..ℓ (a row's position is 1 + the number of the user's rows before it): lists ordered by
        score under every tie rule but ``optimistic``, or by the row order; False without rows."""
        order = self.options.get("order")
        return self.row_truth is not None and (
            order == "input" or (order == "score" and self.options.get("ties", "input") != "optimistic"))

    @property
    def row_user(self) -> np.ndarray | None:
        """[rows] the user code of every row (None without row-level arrays)."""
        if self._row_user is None and self.row_groups is not None:
            users, sizes = self.row_groups
            self._row_user = np.repeat(users, sizes)
        return self._row_user

    @row_user.setter
    def row_user(self, value: np.ndarray | None) -> None:
        self._row_user = value

    @property
    def row_pos(self) -> np.ndarray | None:
        """[rows] the 1-based position of every row (None without row-level arrays)."""
        if self._row_pos is None and self.row_groups is not None:
            sizes = self.row_groups[1]
            firsts = np.cumsum(sizes) - sizes
            self._row_pos = np.arange(1, int(sizes.sum()) + 1, dtype=np.int64) - np.repeat(firsts, sizes)
        return self._row_pos

    @row_pos.setter
    def row_pos(self, value: np.ndarray | None) -> None:
        self._row_pos = value

    def width(self, ks: list[int]) -> int:
        """Columns a dense view needs for the cut-offs ``ks``: max k, or the longest position
        when k is beyond ``WIDE`` (then every later column would repeat the last one)."""
        k = max(ks)
        return k if k <= WIDE else max(1, min(k, self.max_pos))

    def cols(self, ks: list[int], width: int) -> np.ndarray:
        """0-based column of each cut-off in a view of ``width`` columns (later columns equal the last)."""
        return np.minimum(np.asarray(ks), width) - 1

    @property
    def n_users(self) -> int:
        return len(self.user_ids)

    @cached_property
    def lists(self) -> ListSpace:
        """The list layer (:class:`receval.lists.ListSpace`): item codes shared by the lists, the
        truth and the side inputs, and the top-k lists; built the first time a metric reads it
        (the metric declares ``needs={"rows", "items"}``)."""
        if self.row_item is None or self.truth_item is None:
            raise ValueError("the list layer needs the form's row-level item ids: the metric must declare needs={'rows', 'items'}")
        if self.side is None:
            return ListSpace(self)
        return ListSpace(self, self.side.read("categories"), self.side.read("train"), self.side.read("catalog"))

    def memo(self, key: tuple, make: Any) -> Any:
        """``make()``, computed once per form and ``key`` (a tuple naming what it is)."""
        if key not in self._dense:
            self._dense[key] = make()
        return self._dense[key]

    @cached_property
    def has_recs(self) -> np.ndarray:
        return self.length > 0

    # ---- dense views -----------------------------------------------------------------------
    def dense(self, width: int, weights: np.ndarray | None = None, key: str = "hits") -> np.ndarray:
        """``[U, width]`` matrix: at column j the sum of ``weights`` (default 1) of hits at position j+1."""
        cache_key = (key, width)
        if cache_key in self._dense:
            return self._dense[cache_key]
        keep = self.hit_pos <= width
        flat = self.hit_user[keep] * width + (self.hit_pos[keep] - 1)
        w = None if weights is None else weights[keep]
        out = np.bincount(flat, weights=w, minlength=self.n_users * width).astype(np.float64, copy=False)
        out = out.reshape(self.n_users, width)
        self._dense[cache_key] = out
        return out

    def cumulative(self, width: int) -> np.ndarray:
        """``[U, width]``: number of hits at positions <= j+1."""
        cache_key = ("cum", width)
        if cache_key not in self._dense:
            self._dense[cache_key] = np.cumsum(self.dense(width), axis=1)
        return self._dense[cache_key]

    def slot_mean(self, k: int, g: np.ndarray) -> np.ndarray:
        """``ties=average``: per row, E[g(pos)·1(pos ≤ k)] over the orderings of its tie group,
        i.e. (1/n) Σ_{i=lo}^{min(hi, k)} g(i); ``g[i − 1]`` is g at position i (as long as the
        longest list)."""
        assert self.row_lo is not None and self.row_hi is not None
        g = np.asarray(g, dtype=np.float64)
        cum = np.r_[0.0, np.cumsum(g)]
        top = np.minimum(self.row_hi, k)
        inside = top >= self.row_lo
        lo = np.minimum(self.row_lo, top + 1)  # an empty range where the group starts past k
        out = (cum[np.maximum(top, 0)] - cum[lo - 1]) / (self.row_hi - self.row_lo + 1)
        # a row alone in its group takes g at its position exactly (a difference of cumulative
        # sums is not): its value is then the plain formula's, bit for bit, with or without
        # ties elsewhere in the call (another batch's users)
        alone = self.row_hi == self.row_lo
        out[alone] = g[np.clip(self.row_lo[alone] - 1, 0, max(len(g) - 1, 0))] if len(g) else 0.0
        return np.where(inside, out, 0.0)

    def top_chance(self, k: int) -> np.ndarray:
        """``ties=average``: each row's chance to be in the top k over the orderings of its tie
        group (1 inside, m/n for a group with m of its n slots inside k, 0 beyond)."""
        return self.slot_mean(k, np.ones(max(self.max_pos, 1)))

    def check_order_settled(self, ks: list[int | None], metric: str) -> None:
        """``ties=average`` for a metric (or variant) with no tie-averaged value: its value is
        the same in every ordering of the tied scores when no tie group reaches into the top k
        (``k`` None: anywhere in the list); otherwise refused, naming the number of users and the fix."""
        if self.first_tie is None:
            return
        big = np.iinfo(np.int64).max - 1
        counts = {int(k or 0): int((self.first_tie <= (k or big)).sum()) for k in ks}
        if any(counts.values()):
            raise TiesRefused(metric, counts, "inside")

    def check_topk_settled(self, ks: list[int], metric: str) -> None:
        """``ties=average`` for a metric that reads only *which* items are in the top k: every
        ordering of the tied scores gives it the same value unless a tie group straddles k
        (then the top-k set itself differs between orderings: refused, naming the fix)."""
        if self.row_lo is None or self.row_hi is None or self.row_user is None:
            return
        counts = {}
        for k in ks:
            if k:
                across = (self.row_lo <= k) & (self.row_hi > k)
                counts[int(k)] = int(np.unique(self.row_user[across]).size) if across.any() else 0
        if any(counts.values()):
            raise TiesRefused(metric, counts, "straddle")

    @cached_property
    def first_hit(self) -> np.ndarray:
        """[U] position of the first hit (0 where the user has none)."""
        out = np.zeros(self.n_users, dtype=np.int64)
        if len(self.hit_user):
            starts = np.flatnonzero(np.r_[True, self.hit_user[1:] != self.hit_user[:-1]])
            out[self.hit_user[starts]] = self.hit_pos[starts]
        return out

    def listed(self) -> tuple[np.ndarray, np.ndarray]:
        """User code and rating of every recommended relevant item: the hits, plus the
        relevant items scored <= 0 under ``hitscore=positive`` (which are not hits)."""
        if self.listed_user is None or self.listed_rating is None:
            return self.hit_user, self.hit_rating
        return self.listed_user, self.listed_rating

    def rel_rank(self) -> np.ndarray:
        """0-based rank of each relevant truth row among its user's, by rating descending."""
        key = ("relrank",)
        if key not in self._dense:
            order = np.lexsort((-self.rel_rating, self.rel_user))
            self._dense[key] = order
        return self._dense[key]


# ------------------------------------------------------------------------------------------
# building


def _codes(values: np.ndarray, universe: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Code of each value in the sorted ``universe`` and whether it is in it."""
    idx = np.searchsorted(universe, values)
    idx = np.minimum(idx, len(universe) - 1) if len(universe) else idx
    found = universe[idx] == values if len(universe) else np.zeros(len(values), dtype=bool)
    return idx, found


def _unique_sorted(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted unique values and the inverse; fast path when already non-decreasing."""
    if len(values) and values.dtype != object and np.all(values[1:] >= values[:-1]):
        starts = np.r_[True, values[1:] != values[:-1]]
        return values[starts], np.cumsum(starts) - 1
    return np.unique(values, return_inverse=True)


def _check_id_types(a: np.ndarray, b: np.ndarray, what: str) -> None:
    a_obj, b_obj = a.dtype == object, b.dtype == object
    if a_obj != b_obj:
        raise DataError(
            f"{what} ids have different types in recommendations ({'string' if a_obj else 'integer'}) "
            f"and ground truth ({'string' if b_obj else 'integer'}); cast both to the same type"
        )


def _dup_error(what: str, n: int, example: tuple) -> DataError:
    policy = "dup" if what == "recommendations" else "tdup"
    return DataError(
        f"{n} duplicate (user, item) pairs in {what}, e.g. {example}; "
        f"pass {policy}='first' to keep the {'best-ranked' if policy == 'dup' else 'first'} or {policy}='keep' to count each"
    )


def _check_first_agrees(dup, r_sorted, sk, order, tu, ti, du, di) -> None:
    """tdup=first keeps the first of a key's rows: refuse when the repeated rows of one key
    disagree on the rating (the first would then depend on the row order)."""
    same = (r_sorted[1:] == r_sorted[:-1]) | (np.isnan(r_sorted[1:]) & np.isnan(r_sorted[:-1]))
    bad = dup[1:] & ~same
    if bad.any():
        keys = np.unique(sk[1:][bad])
        j = order[1:][bad][np.argmin(sk[1:][bad])]  # the smallest key: the same pair in any row order
        raise DataError(
            f"pass tdup='max' to keep the highest rating, or drop the repeats: {len(keys)} (user, item) pairs "
            f"repeat in the ground truth with different ratings, e.g. {(_py(du(tu[j])), _py(di(ti[j])))}"
        )


@dataclass
class _Inputs:
    """What both matchers read: the recommendation columns, the truth columns, the build options."""

    recs: dict[str, np.ndarray]
    tu: np.ndarray  # truth user ids
    ti: np.ndarray  # truth item ids
    rating: np.ndarray  # truth ratings (1 where the truth has none)
    threshold: Any  # the relevance threshold (None: every truth row is relevant)
    options: dict[str, Any]
    order: str  # the order rule the engine decided
    dups_checked: bool  # no (user, item) recommendation pair repeats (the caller checked)
    #: the first row of each user when the caller knows the rows grouped by user code in
    #: ascending order and ranked by score (:attr:`receval.encode.Encoded.heads`), else None
    heads: np.ndarray | None = None


@dataclass
class _Matched:
    """What a matcher hands :func:`build`: the truth users, and the recommendation rows of the
    truth users in ranked order (grouped by user), each matched against the truth."""

    info: dict[str, Any]
    order: str  # the order rule the engine decided
    ties: str  # the tie rule; "input" where ties=average meets no tied scores (the fast matcher)
    user_ids: np.ndarray  # [U] sorted truth user ids
    t_user: np.ndarray  # user code of every truth row
    keep: np.ndarray | None  # truth rows kept by the tdup policy (None: every row)
    relevant: np.ndarray | None  # truth rows at or above the threshold (None: every row)
    length: np.ndarray  # [U] rows per user
    max_pos: int  # the largest position of any row (0 without rows)
    hit_row: np.ndarray  # rows that are relevant truth items, ascending
    hit_user: np.ndarray  # their user codes
    hit_t: np.ndarray  # their truth rows
    score: np.ndarray | None  # of every row
    item: np.ndarray  # of every row
    row_user: np.ndarray | None  # of every row (None when the fast matcher needs none)
    pos: np.ndarray | None  # 1-based position of every row (None: 1..ℓ from ``ustart``)
    ustart: np.ndarray | None  # [U] first row of each user (when ``pos`` is None)
    row_truth: np.ndarray | None  # truth row of every row, or -1
    hits_sorted: bool  # hits already in (user, position) order
    #: the row groups (user code of each in row order, rows) when ``pos`` is None: ``row_user``
    #: and ``row_pos`` of the form are made from them when a metric reads them
    groups: tuple[np.ndarray, np.ndarray] | None = None


def build(
    recs: dict[str, np.ndarray],
    truth: dict[str, np.ndarray],
    options: dict[str, Any],
    *,
    need_rows: bool = False,
    need_items: bool = False,
    need_truth_rows: bool = False,
    ids: tuple[Any, Any] | None = None,
    dups_checked: bool = False,
    side: SideReader | None = None,
    heads: np.ndarray | None = None,
) -> Hits:
    """Build the intermediate form from column arrays.

    ``recs`` has ``user``, ``item`` and optionally ``score``, ``rank``; ``truth`` has
    ``user``, ``item`` and optionally ``rating``. ``options`` holds the resolved build axes
    (``rel``, ``order``, ``ties``, ``dup``, ``tdup``); ``order`` is the rule the engine
    decided (:func:`receval.engine.order_rule`), never ``auto``. ``ids`` decodes user and item
    codes into the original ids for error messages. ``dups_checked``: the caller has
    established that no (user, item) recommendation pair repeats (items outside the truth may
    then share a code), so no duplicate search runs. ``side``: the side inputs the form carries.
    ``heads``: the first row of each user, when the caller has established that the rows are
    grouped by user code in ascending order and ranked by score (the groups are not searched
    for again and the descending order is not checked again).

    One builder, two matchers: :func:`_match_grouped` (no sort, no search, for grouped integer
    inputs in ranked order) or else :func:`_match_general`; the form is assembled from either
    by :func:`_assemble`.
    """
    tu, ti = truth["user"], truth["item"]
    if len(tu) == 0:
        raise DataError("the ground truth is empty; pass at least one (user, item) row")
    _check_id_types(recs["user"], tu, "user")
    _check_id_types(recs["item"], ti, "item")
    rating = truth.get("rating")
    threshold = options.get("rel")
    if rating is None:  # every row rated 1 (as write_qrels writes such a truth): a threshold <= 1 keeps every row
        if threshold is not None and threshold > 1:
            raise DataError(
                f"a relevance threshold (rel={threshold}) needs a rating column in the ground truth; "
                "name it with rating_col= / --rating-col, or drop the threshold"
            )
        rating = np.ones(len(tu), dtype=np.float64)
    elif not np.all(np.isfinite(rating)):
        raise DataError("the ground truth has NaN or infinite ratings; drop or fill them first")

    order_rule = _decided_order(options)
    if options.get("ties") == "average":
        _check_ties_average(recs, order_rule)
    if options.get("hitscore") == "positive" and recs.get("score") is None:
        raise DataError("hitscore='positive' masks relevant items scored <= 0 and needs a score column; name it with score_col=")
    rows = need_rows or need_items or need_truth_rows
    inputs = _Inputs(recs, tu, ti, rating, threshold, options, order_rule, dups_checked,
                     heads if order_rule == "score" else None)
    m = _match_grouped(inputs, rows)
    if m is None:
        m = _match_general(inputs, ids)
    return _assemble(m, ti, rating, options, rows, side)


def _decided_order(options: dict[str, Any]) -> str:
    """The order rule of the build group, as the engine decided it (:func:`receval.engine.order_rule`)."""
    rule = options.get("order", "auto")
    if rule == "auto":
        raise ValueError("hits.build takes the order the engine decided (receval.engine.order_rule), not order='auto'")
    return rule


def _assemble(m: _Matched, ti: np.ndarray, rating: np.ndarray, options: dict[str, Any], rows: bool,
              side: SideReader | None) -> Hits:
    """The form from a matcher's rows: ``hitscore=positive`` masking, the hits in (user,
    position) order, the ``ties=average`` bounds, the per-user counts and the info."""
    info, n_users, t_user = m.info, len(m.user_ids), m.t_user
    hit_row, hit_user, hit_t = m.hit_row, m.hit_user, m.hit_t
    listed_user = listed_rating = None
    if options.get("hitscore") == "positive" and m.score is not None:
        listed_user, listed_rating = hit_user.astype(np.int64), rating[hit_t].astype(np.float64)
        masked = m.score[hit_row] <= 0
        if m.row_truth is not None:
            m.row_truth[hit_row[masked]] = -1
        hit_row, hit_user, hit_t = hit_row[~masked], hit_user[~masked], hit_t[~masked]
    if m.pos is not None:
        hit_pos = m.pos[hit_row].astype(np.int64)
    else:  # positions 1..ℓ: only the hits' are needed
        assert m.ustart is not None
        hit_pos = hit_row - m.ustart[hit_user] + 1
    if not m.hits_sorted:
        srt = np.lexsort((hit_pos, hit_user))
        hit_row, hit_user, hit_t, hit_pos = hit_row[srt], hit_user[srt], hit_t[srt], hit_pos[srt]
    hit_lo = hit_hi = lo = hi = first_tie = None
    if m.ties == "average" and m.order == "score":
        assert m.row_user is not None
        lo, hi = _tie_bounds(m.row_user, m.score)
        if not (hi > lo).any():  # no tied scores: every ordering is the one order (the plain formulas)
            lo = hi = None
        else:
            hit_lo, hit_hi = lo[hit_row], hi[hit_row]
            first_tie = _first_tie(m.row_user, lo, hi, n_users)

    counted = np.ones(len(t_user), dtype=bool) if m.relevant is None else m.relevant
    if m.keep is not None:
        counted = m.keep & counted
    n_rel = np.bincount(t_user[counted], minlength=n_users).astype(np.int64)
    n_truth = np.bincount(t_user if m.keep is None else t_user[m.keep], minlength=n_users).astype(np.int64)
    info["order"] = m.order
    info["users"] = n_users
    info["users_without_relevant"] = int((n_rel == 0).sum())
    info["users_without_recs"] = int(((m.length == 0) & (n_rel > 0)).sum())
    h = Hits(
        user_ids=m.user_ids,
        n_rel=n_rel,
        n_truth=n_truth,
        length=m.length,
        hit_user=hit_user.astype(np.int64),
        hit_pos=hit_pos,
        hit_rating=rating[hit_t].astype(np.float64),
        rel_user=t_user[counted].astype(np.int64),
        rel_rating=rating[counted].astype(np.float64),
        options=dict(options, order=m.order),
        info=info,
        hit_lo=hit_lo,
        hit_hi=hit_hi,
        listed_user=listed_user,
        listed_rating=listed_rating,
        max_pos=m.max_pos,
        first_tie=first_tie,
        side=side,
        hit_truth=hit_t.astype(np.int64, copy=False),
    )
    if rows:
        assert (m.row_user is not None and m.pos is not None) or m.groups is not None
        h.row_groups = m.groups if m.pos is None else None
        h.row_user = None if m.row_user is None else m.row_user.astype(np.int64, copy=False)
        h.row_pos = None if m.pos is None else m.pos.astype(np.int64, copy=False)
        h.row_lo, h.row_hi = lo, hi
        h.row_score = m.score
        h.row_item = m.item
        h.row_truth = m.row_truth
        h.truth_user = t_user.astype(np.int64, copy=False)
        h.truth_item = ti
        h.truth_rating = rating
        h.truth_rel = counted
        h.truth_keep = m.keep
    return h


def _match_general(b: _Inputs, ids: tuple[Any, Any] | None) -> _Matched:
    """Any input: one sort of the truth keys, the rows ranked (a no-op when the engine has
    sorted them), duplicates found by sorting, every row matched by a binary search."""
    recs, tu, ti, rating, threshold, options, order_rule = b.recs, b.tu, b.ti, b.rating, b.threshold, b.options, b.order
    du, di = ids if ids is not None else ((lambda c: c), (lambda c: c))
    info: dict[str, Any] = {}
    # ---- truth: users, duplicates, relevance ------------------------------------------------
    user_ids, t_user = _unique_sorted(tu)
    t_item, span, encode = _item_encoder(ti, recs["item"])
    t_key = t_user.astype(np.int64) * span + t_item
    order = np.argsort(t_key, kind="stable")
    sk = t_key[order]
    dup = np.r_[False, sk[1:] == sk[:-1]]
    n_dup = int(dup.sum())
    tdup = options.get("tdup", "error")
    keep_rows = np.ones(len(tu), dtype=bool)
    if n_dup:
        first_dup = order[np.flatnonzero(dup)[0]]
        if tdup == "error":
            raise _dup_error("ground truth", n_dup, (_py(du(tu[first_dup])), _py(di(ti[first_dup]))))
        if tdup in ("first", "max"):
            r_sorted = rating[order]
            if tdup == "max":  # each key's highest rating first (rows of one key, one rating: alike)
                order = np.lexsort((-rating, t_key))
            else:
                _check_first_agrees(dup, r_sorted, sk, order, tu, ti, du, di)
            keep_rows[order[dup]] = False
        info["truth_duplicates"] = n_dup
    relevant = np.ones(len(tu), dtype=bool) if threshold is None else rating >= threshold
    # unique keys for matching: first row of each key; with tdup='keep' a *relevant* row, so that
    # an item counted in |R| by one of its rows is also a hit when recommended, and of them the
    # highest rating (not the first: the row order would decide)
    uniq_mask = ~dup
    u_keys = sk[uniq_mask]
    if n_dup and tdup == "keep":
        order = np.lexsort((-rating, ~relevant, t_key))  # by key, relevant rows first, highest rating first
    u_rows = order[uniq_mask]

    # ---- recommendations -------------------------------------------------------------------
    ru, ri = recs["user"], recs["item"]
    r_user, in_truth = _codes(ru, user_ids)
    info["rec_rows"] = int(len(ru))
    if not in_truth.all():
        info["ignored_rec_rows"] = int((~in_truth).sum())
        info["ignored_rec_users"] = int(len(np.unique(ru[~in_truth])))
        sel = np.flatnonzero(in_truth)
        r_user = r_user[sel]
        ri = ri[sel]
        score = recs["score"][sel] if "score" in recs else None
        rank = recs["rank"][sel] if "rank" in recs else None
    else:
        score = recs.get("score")
        rank = recs.get("rank")
    ties = options.get("ties", "input")
    info["order"] = order_rule
    if order_rule == "score" and score is None:
        raise DataError("order='score' needs a score column in the recommendations; name it with score_col=")
    if order_rule in ("rank", "rank_value") and rank is None:
        raise DataError(f"order='{order_rule}' needs a rank column in the recommendations; name it with rank_col=")
    if score is not None and not np.all(np.isfinite(score)):
        bad = int((~np.isfinite(score)).sum())
        raise DataError(f"{bad} recommendation scores are NaN or infinite; drop those rows or give them a finite score")
    perm, pos = _rank(r_user, ri, score, rank, order_rule, ties)
    if perm is not None:
        r_user, ri = r_user[perm], ri[perm]
        score = None if score is None else score[perm]

    # ---- match against truth ---------------------------------------------------------------
    r_key = r_user.astype(np.int64) * span + encode(ri)
    idx, found = _codes(r_key, u_keys)
    # ---- duplicates in recommendations -----------------------------------------------------
    dup_policy = options.get("dup", "error")
    if dup_policy != "keep" and len(r_key) > 1 and not b.dups_checked:
        rk_sorted = np.sort(r_key)
        is_dup = rk_sorted[1:] == rk_sorted[:-1]
        if is_dup.any():
            n = int(is_dup.sum())
            info["rec_duplicates"] = n
            _, first_idx = np.unique(r_key, return_index=True)  # stable: first = best-ranked
            if dup_policy == "error":
                dup_key = rk_sorted[1:][is_dup][0]
                j = int(np.flatnonzero(r_key == dup_key)[0])
                raise _dup_error("recommendations", n, (_py(du(user_ids[r_user[j]])), _py(di(ri[j]))))
            keep = np.zeros(len(r_key), dtype=bool)
            keep[first_idx] = True
            r_user, ri, found, idx = r_user[keep], ri[keep], found[keep], idx[keep]
            score = None if score is None else score[keep]
            pos = pos[keep] if order_rule in ("rank", "rank_value") else _positions(r_user, score, ties if order_rule == "score" else "input")
    t_row = np.where(found, u_rows[np.minimum(idx, len(u_rows) - 1)], -1)
    hit = found & (t_row >= 0)
    hit &= relevant[np.maximum(t_row, 0)]
    hit_row = np.flatnonzero(hit)
    return _Matched(
        info=info, order=order_rule, ties=ties, user_ids=user_ids, t_user=t_user, keep=keep_rows, relevant=relevant,
        length=np.bincount(r_user, minlength=len(user_ids)).astype(np.int64), max_pos=int(pos.max()) if len(pos) else 0,
        hit_row=hit_row, hit_user=r_user[hit_row], hit_t=t_row[hit_row], score=score, item=ri, row_user=r_user,
        pos=pos, ustart=None, row_truth=t_row, hits_sorted=False,
    )


def _py(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value


#: cells of each lookup table of the grouped fast path (int32): users per chunk = cells // item span.
#: 16 MB a table: below glibc's largest mmap threshold (32 MB), so the tables come from the heap
#: and the next call reuses their pages; at 32 MB each call mapped and zeroed them afresh (on a VM
#: that gives freed memory back to its host, 60-150 ms a call at 100k users, benchmarks/RESULTS.md)
_TABLE_CELLS = 1 << 22


def _match_grouped(b: _Inputs, need_rows: bool) -> _Matched | None:
    """The same rows as :func:`_match_general`, without a sort or a search over all rows.

    Applies when the truth is sorted by user, the recommendations are grouped by user in the
    truth's user order and already in ranked order, ids are integers with an item span of at
    most ``_TABLE_CELLS``, and there are no duplicates. Users are processed in chunks: the
    chunk's truth rows are scattered into a dense (user, item) table and every recommended
    row reads its truth row back with one gather; a second table detects duplicate
    recommendations the same way. Returns None (the general matcher takes over, and raises any
    error) whenever a condition fails.
    """
    recs, tu, ti, rating, threshold, options, order_rule = b.recs, b.tu, b.ti, b.rating, b.threshold, b.options, b.order
    ru, ri = recs["user"], recs["item"]
    n = len(ru)
    if n < 2 or len(tu) >= 2**31 - 1 or n >= 2**31 - 1:
        return None
    if object in (ru.dtype, ri.dtype, tu.dtype, ti.dtype) or ri.dtype.kind not in "iu" or ti.dtype.kind not in "iu":
        return None
    if not np.all(tu[1:] >= tu[:-1]):
        return None
    lo = min(int(ti.min()), int(ri.min()))
    span = max(int(ti.max()), int(ri.max())) - lo + 1
    if span > _TABLE_CELLS:
        return None
    score, rank = recs.get("score"), recs.get("rank")
    if (order_rule == "score" and score is None) or (order_rule in ("rank", "rank_value") and rank is None):
        return None
    if score is not None and b.heads is None and not np.all(np.isfinite(score)):  # (heads: encode checked them)
        return None
    ties = options.get("ties", "input")

    starts = np.r_[True, tu[1:] != tu[:-1]]
    user_ids = tu[starts]
    t_user = np.cumsum(starts) - 1
    del starts
    n_users = len(user_ids)

    # groups of recommendation rows
    known = b.heads is not None  # grouped by user code and ranked by score: the caller checked
    gst = b.heads if known else np.flatnonzero(np.r_[True, ru[1:] != ru[:-1]])
    gl = np.diff(np.r_[gst, n])
    gc, gfound = _codes(ru[gst], user_ids)
    info: dict[str, Any] = {"rec_rows": int(n)}
    if not gfound.all():
        known = False
        info["ignored_rec_rows"] = int(gl[~gfound].sum())
        info["ignored_rec_users"] = int(len(np.unique(ru[gst[~gfound]])))
        sel = np.repeat(gfound, gl)
        ru, ri = ru[sel], ri[sel]
        score = None if score is None else score[sel]
        rank = None if rank is None else rank[sel]
        gc, gl = gc[gfound], gl[gfound]
        n = len(ru)
        del sel
        if n < 2:
            return None
    if not np.all(gc[1:] > gc[:-1]):  # grouped, and in the truth's user order
        return None
    gst = np.r_[0, np.cumsum(gl)]
    # rows must already be in ranked order
    same = np.ones(n - 1, dtype=bool)
    same[gst[1:-1] - 1] = False
    if order_rule == "score":
        if not known and np.any(same & (score[1:] > score[:-1])):
            return None
        tied = score[1:] == score[:-1]
        tied &= same
        if tied.any():
            if ties in ("item", "item_desc"):
                step = ri[1:] > ri[:-1] if ties == "item" else ri[1:] < ri[:-1]
                if not np.all(~tied | step):
                    return None
        elif ties == "average":  # no tied scores: every ordering is the one order (the plain formulas)
            ties = "input"
        del tied
    elif order_rule in ("rank", "rank_value"):
        tie_ok = order_rule == "rank_value"  # equal ranks share a position
        if np.any(rank < 1) or np.any(same & ((rank[1:] < rank[:-1]) if tie_ok else (rank[1:] <= rank[:-1]))):
            return None
    del same

    relevant = None if threshold is None else rating >= threshold
    dup_check = options.get("dup", "error") != "keep" and not b.dups_checked
    width = max(1, min(_TABLE_CELLS // span, n_users))  # users per chunk: tables no larger than the data
    truth_tab = np.zeros(width * span, dtype=np.int32)
    rec_tab = np.zeros(width * span, dtype=np.int32) if dup_check else None
    tst = np.searchsorted(t_user, np.arange(0, n_users + width, width))
    gbound = np.searchsorted(gc, np.arange(0, n_users + width, width))
    ustart = np.zeros(n_users, dtype=np.int64)
    ustart[gc] = gst[:-1]
    hu: list[np.ndarray] = []
    hr: list[np.ndarray] = []
    ht: list[np.ndarray] = []
    row_truth = np.full(n, -1, dtype=np.int64) if need_rows else None
    for c in range(len(tst) - 1):
        u0 = c * width
        g0, g1 = gbound[c], gbound[c + 1]
        if g0 == g1:
            continue
        a, b = tst[c], tst[c + 1]
        tloc = (t_user[a:b] - u0) * span + (ti[a:b] - lo)
        stamp = np.arange(a + 1, b + 1, dtype=np.int32)
        truth_tab[tloc] = stamp
        if not np.array_equal(truth_tab[tloc], stamp):  # duplicate truth pairs
            return None
        ra, rb = gst[g0], gst[g1]
        local = np.repeat((gc[g0:g1] - u0).astype(np.int64), gl[g0:g1])
        rkey = local * span + (ri[ra:rb] - lo)
        if rec_tab is not None:
            rstamp = np.arange(ra + 1, rb + 1, dtype=np.int32)
            rec_tab[rkey] = rstamp
            if not np.array_equal(rec_tab[rkey], rstamp):  # duplicate recommendations
                return None
        v = truth_tab[rkey]
        truth_tab[tloc] = 0
        if row_truth is not None:
            np.subtract(v, 1, out=row_truth[ra:rb], casting="unsafe")  # (no temporaries: v >= 0)
        idx = np.flatnonzero(v)
        t_row = v[idx].astype(np.int64) - 1
        if relevant is not None:
            ok = relevant[t_row]
            idx, t_row = idx[ok], t_row[ok]
        hu.append(local[idx] + u0)
        hr.append(idx + ra)
        ht.append(t_row)
    hit_user = np.concatenate(hu) if hu else np.zeros(0, dtype=np.int64)
    hit_row = np.concatenate(hr) if hr else np.zeros(0, dtype=np.int64)
    hit_t = np.concatenate(ht) if ht else np.zeros(0, dtype=np.int64)
    row_user = np.repeat(gc.astype(np.int64), gl) if ties in ("average", "optimistic") else None
    row_pos = None
    if order_rule in ("rank", "rank_value"):
        row_pos = rank.astype(np.int64)
    elif order_rule == "score" and ties == "optimistic":
        row_pos = _positions(row_user, score, "optimistic")
    # else the positions 1..ℓ of each group: the form makes them (and the rows' users) from the
    # groups when a metric reads them
    if need_rows and row_pos is not None and row_user is None:
        row_user = np.repeat(gc.astype(np.int64), gl)
    max_pos = (int(row_pos.max()) if len(row_pos) else 0) if row_pos is not None else (int(gl.max()) if len(gl) else 0)
    length = np.zeros(n_users, dtype=np.int64)
    length[gc] = gl
    return _Matched(
        info=info, order=order_rule, ties=ties, user_ids=user_ids, t_user=t_user, keep=None, relevant=relevant,
        length=length, max_pos=max_pos, hit_row=hit_row, hit_user=hit_user, hit_t=hit_t, score=score, item=ri,
        row_user=row_user, pos=row_pos, ustart=ustart, row_truth=row_truth, hits_sorted=True,
        groups=(gc.astype(np.int64), gl.astype(np.int64)) if row_pos is None and need_rows else None,
    )


def _dense_codes(values: np.ndarray) -> np.ndarray:
    if values.dtype != object:
        return values.astype(np.int64)
    return np.unique(values, return_inverse=True)[1].astype(np.int64)


def _rank(
    user: np.ndarray,
    item: np.ndarray,
    score: np.ndarray | None,
    rank: np.ndarray | None,
    order_rule: str,
    ties: str,
) -> tuple[np.ndarray | None, np.ndarray]:
    """Permutation into ranked order (grouped by user) and the 1-based positions."""
    n = len(user)
    if n == 0:
        return None, np.zeros(0, dtype=np.int64)
    same_user = user[1:] == user[:-1]
    grouped = _is_grouped(user, same_user)
    if order_rule == "input":
        perm = None if grouped else np.argsort(user, kind="stable")
        u = user if perm is None else user[perm]
        return perm, _positions(u, None, "input")
    if order_rule == "rank_value":  # the rank values are the positions; equal ranks allowed
        if np.any(rank < 1):
            raise DataError("ranks must be >= 1 (1 = best); found a rank below 1")
        ok = grouped and np.all(~same_user | (rank[1:] >= rank[:-1]))
        perm = None if ok else np.lexsort((rank, user))
        return perm, (rank if perm is None else rank[perm]).astype(np.int64)
    if order_rule == "rank":
        if np.any(rank < 1):
            raise DataError("ranks must be >= 1 (1 = best); found a rank below 1")
        ok = grouped and np.all(~same_user | (rank[1:] > rank[:-1]))
        perm = None if ok else np.lexsort((rank, user))
        u = user if perm is None else user[perm]
        rk = rank if perm is None else rank[perm]
        if np.any((u[1:] == u[:-1]) & (rk[1:] == rk[:-1])):
            raise DataError("a user has two recommendations with the same rank; give distinct ranks or use order='score'")
        return perm, rk.astype(np.int64)
    # order by score
    desc_ok = grouped and np.all(~same_user | (score[1:] <= score[:-1]))
    if desc_ok and ties not in ("input", "optimistic", "average"):
        tied = same_user & (score[1:] == score[:-1])
        if tied.any():
            step = item[1:] > item[:-1] if ties == "item" else item[1:] < item[:-1]
            desc_ok = bool(np.all(~tied | step))
    if desc_ok:
        perm = None
    else:
        keys: list[np.ndarray] = []
        if ties == "item":
            keys.append(_dense_codes(item))
        elif ties == "item_desc":
            keys.append(-_dense_codes(item))
        keys += [-score, user]
        perm = np.lexsort(keys)
    u = user if perm is None else user[perm]
    s = score if perm is None else score[perm]
    return perm, _positions(u, s, ties)


def _is_grouped(user: np.ndarray, same_user: np.ndarray) -> bool:
    """Whether each user's rows are contiguous (``user`` holds codes 0..U-1)."""
    starts = user[np.r_[True, ~same_user]]
    return bool(np.bincount(starts).max() <= 1)


def _item_encoder(truth_items: np.ndarray, rec_items: np.ndarray):
    """Integer codes for items shared by both sides: ``(truth codes, span, encode)``.

    Integer ids are used as they are (shifted by the minimum) when their range is small
    enough to pack (user, item) into one int64 key; other ids are factorised jointly.
    """
    if truth_items.dtype != object and len(truth_items):
        lo = int(truth_items.min()) if not len(rec_items) else min(int(truth_items.min()), int(rec_items.min()))
        hi = int(truth_items.max()) if not len(rec_items) else max(int(truth_items.max()), int(rec_items.max()))
        span = hi - lo + 1
        if span < 2**31:
            return truth_items - lo, span, (lambda items: items - lo)
    univ = np.unique(np.concatenate([truth_items, rec_items]))
    return np.searchsorted(univ, truth_items), len(univ), (lambda items: np.searchsorted(univ, items))


def _positions(user: np.ndarray, score: np.ndarray | None, ties: str) -> np.ndarray:
    n = len(user)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    idx = np.arange(n, dtype=np.int64)
    start = np.r_[True, user[1:] != user[:-1]]
    seg_start = np.maximum.accumulate(np.where(start, idx, 0))
    if ties == "optimistic" and score is not None:
        grp = start | np.r_[True, score[1:] != score[:-1]]
        grp_start = np.maximum.accumulate(np.where(grp, idx, 0))
        return grp_start - seg_start + 1
    return idx - seg_start + 1


def _check_ties_average(recs: dict[str, np.ndarray], order_rule: str) -> None:
    """Refuse ``ties=average`` without scores (the metrics that have no tie-averaged value are
    computed where the data settle the order and refused otherwise). Lists ordered by a rank
    column or by the row order have no tied scores, so there is nothing to average."""
    if order_rule in ("rank", "rank_value", "input"):
        return  # lists ordered by a rank or the row order have no tied scores: nothing to average
    if "score" not in recs:
        raise DataError(
            "ties=average needs a score column in the recommendations (it averages over equal scores); name it with score_col="
        )


def _first_tie(user: np.ndarray, lo: np.ndarray, hi: np.ndarray, n_users: int) -> np.ndarray:
    """Per user code, the first position of a tie group of two or more rows (rows grouped by
    user, in ranked order, so the first such row of a user has the smallest position); a
    large number where the user has no tie."""
    out = np.full(n_users, np.iinfo(np.int64).max, dtype=np.int64)
    tied = hi > lo
    if tied.any():
        u, first = np.unique(user[tied], return_index=True)
        out[u] = lo[tied][first]
    return out


def _tie_bounds(user: np.ndarray, score: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """1-based first and last position of each row's tie group (rows in ranked order, grouped
    by user): the run of rows of the same user with the same score."""
    n = len(user)
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    idx = np.arange(n, dtype=np.int64)
    start = np.r_[True, user[1:] != user[:-1]]
    seg_start = np.maximum.accumulate(np.where(start, idx, 0))
    grp = start | np.r_[True, score[1:] != score[:-1]]
    gst = np.flatnonzero(grp)
    glen = np.diff(np.r_[gst, n])
    lo = np.repeat(gst, glen) - seg_start + 1
    hi = np.repeat(gst + glen - 1, glen) - seg_start + 1
    return lo.astype(np.int64), hi.astype(np.int64)
