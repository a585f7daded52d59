"""Small pieces several metric families share: safe division, per-k stacking, the list
denominator, the ratio of group shares, and the overlap of a run's lists with a baseline run's.

Pure math on arrays (and the intermediate form): nothing here reads a file or builds the
item space; the baseline run, read once by :mod:`receval.side`, is ranked here
(:func:`baseline_rows`) for every family that compares with it.

>>> import numpy as np
>>> safe_div(np.array([1.0, 2.0]), np.array([4, 0]))   # 0 where the denominator is 0
array([0.25, 0.  ])
>>> overlap(np.array([[3, 1, -1]]), np.array([[1, 2, 3]]))   # {3, 1} ∩ {1, 2, 3}
array([2.])
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from ..errors import DataError
from ..hits import Hits
from ..lists import ListSpace, index_in
from ..options import Axis

#: ``ties=average`` for a metric that is a sum over the rows of the top k (the paragraph
#: :func:`ties_by_row_chance` puts into each such metric's docstring)
TIES_BY_ROW_CHANCE = ("``ties=average``: each row weighs its chance (m/n) to be in the top k, which is the "
                      "expectation over the orderings of the ties, the value being linear in the rows.")

_F = TypeVar("_F", bound=Callable[..., Any])


def ties_by_row_chance(fn: _F) -> _F:
    """Put :data:`TIES_BY_ROW_CHANCE` into ``fn``'s docstring as the paragraph before its
    ``Examples`` section, indented as that section is (a decorator).

    >>> @ties_by_row_chance
    ... def demo():
    ...     '''Demo@k.
    ...
    ...     Examples
    ...     --------
    ...     '''
    >>> import inspect
    >>> print(inspect.getdoc(demo))
    Demo@k.
    <BLANKLINE>
    ``ties=average``: each row weighs its chance (m/n) to be in the top k, which is the
    expectation over the orderings of the ties, the value being linear in the rows.
    <BLANKLINE>
    Examples
    --------
    """
    doc = fn.__doc__
    if doc:  # None under python -OO
        at = re.search(r"^([ \t]*)Examples\n", doc, re.MULTILINE)
        if at is None:
            raise ValueError(f"{fn.__name__}: ties_by_row_chance needs an Examples section in the docstring")
        para = textwrap.fill(TIES_BY_ROW_CHANCE, width=92, initial_indent=at.group(1), subsequent_indent=at.group(1))
        fn.__doc__ = doc[:at.start()] + para + "\n\n" + doc[at.start():]
    return fn


LIST_DEN = Axis(
    "denominator", "den", "length", "what a per-user sum over the list is divided by",
    {"length": "ℓ_k, the user's list length (RecTools, Elliot)", "k": "the cut-off k (RecBole, RePlay)"},
)


def safe_div(num: Any, den: Any) -> np.ndarray:
    """num / den in float64, 0 where den = 0 (broadcast)."""
    num, den = np.broadcast_arrays(np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64))
    out = np.zeros(num.shape, dtype=np.float64)
    np.divide(num, den, out=out, where=den != 0)
    return out


def list_den(items: np.ndarray, k: int, o: dict) -> np.ndarray:
    """The per-user denominator of ``LIST_DEN``: the list length ℓ_k of ``items`` [U, k] (−1 pad) or k."""
    return np.full(items.shape[0], float(k)) if o["denominator"] == "k" else (items >= 0).sum(axis=1).astype(np.float64)


def row_sum(x: np.ndarray, k: int) -> np.ndarray:
    """Σ of each row of ``x`` [U, W] (a :meth:`receval.lists.ListSpace.top` view) in bits that
    do not depend on W: the first k columns as numpy sums them (a view of k columns, as without
    repeated positions), the columns a ``ties=optimistic`` top k holds beyond k added in order.
    W depends on the other users of a batch; a user's value must not."""
    out = x[:, :k].sum(axis=1)
    if x.shape[1] > k:
        out = out + np.cumsum(x[:, k:], axis=1)[:, -1]
    return out


def per_k(ks: list[int], fn: Callable[[int], np.ndarray]) -> np.ndarray:
    """``[U, len(ks)]``: the per-user values ``fn(k)`` stacked over the cut-offs."""
    return np.stack([fn(k) for k in ks], axis=1)


def ratio_combine(parts: list[dict], metric: str, names: Any = None) -> np.ndarray:
    """std/mean (population) over groups of Σ num / Σ den, one value per k."""
    num = sum(p["num"] for p in parts)
    den = sum(p["den"] for p in parts)
    if (den == 0).any():
        j = np.flatnonzero((den == 0).any(axis=0))[0]
        which = (names[j] if names is not None else ("short head", "long tail")[j])
        raise DataError(f"{metric}: the group '{which}' is empty for these users (it divides by it); choose other groups or another split/cut")
    p = num / den
    m = p.mean(axis=1)
    return np.where(m == 0, 0.0, p.std(axis=1) / np.where(m == 0, 1.0, m))


# ---- overlap with a baseline run ------------------------------------------------------------
# ``rows`` = (user index, item code, 0-based position, 1-based first and last position of the
# row's tie group) of the baseline's rows of the truth users, ranked (item code −2: outside the
# item space), as :func:`baseline_rows` returns them.


def baseline_top(rows: tuple[np.ndarray, ...], n_users: int, k: int) -> np.ndarray:
    """The baseline's top-k item codes per truth user [U, k] (−1 pad, −2 for items outside the
    space), tied scores in input order."""
    uidx, code, pos, _, _ = rows
    k = min(k, int(pos.max()) + 1 if len(pos) else 1)  # no wider than the longest baseline list
    out = np.full((n_users, k), -1, dtype=np.int64)
    sel = pos < k
    out[uidx[sel], pos[sel]] = code[sel]
    return out


def expected_overlap(h: Hits, rows: tuple[np.ndarray, ...], k: int, ref: int, row_code: np.ndarray, n_items: int) -> np.ndarray:
    """``ties=average``: E|L_k ∩ B_ref| per user = Σ over the list's rows whose item the
    baseline also lists of (the row's chance to be in the top k) × (the baseline row's chance
    to be in the baseline's top ref): the two lists' tie orders are independent, each chance
    1 inside, m/n for a tie group with m of its n slots inside, 0 beyond. ``row_code`` the
    item code of each row of ``h``, ``n_items`` the size of the item space."""
    uidx, code, pos, lo, hi = rows
    inside = lo <= ref
    b_w = np.where(hi <= ref, 1.0, (np.minimum(hi, ref) - lo + 1) / (hi - lo + 1))[inside]
    width = n_items + 3
    b_key = uidx[inside].astype(np.int64) * width + (code[inside] + 2)
    if h.row_lo is not None:
        r_w = h.top_chance(k)
    else:
        r_w = (h.row_pos <= k).astype(np.float64)
    r_key = h.row_user.astype(np.int64) * width + (row_code + 2)
    srt = np.argsort(b_key, kind="stable")
    b_key, b_w = b_key[srt], b_w[srt]
    at = np.minimum(np.searchsorted(b_key, r_key), max(len(b_key) - 1, 0))
    found = (b_key[at] == r_key) if len(b_key) else np.zeros(len(r_key), dtype=bool)
    w = np.where(found, r_w * (b_w[at] if len(b_w) else 0.0), 0.0)
    return np.bincount(h.row_user, weights=w, minlength=h.n_users)


def overlap(items: np.ndarray, base: np.ndarray) -> np.ndarray:
    """|L ∩ B| per row: the list positions whose item is among the baseline's, by (row, item) keys."""
    width = int(max(items.max(initial=-1), base.max(initial=-1))) + 1
    rows_i, rows_b = np.nonzero(items >= 0), np.nonzero(base >= 0)
    key_i = rows_i[0].astype(np.int64) * width + items[rows_i]
    key_b = rows_b[0].astype(np.int64) * width + base[rows_b]
    found = key_i[np.isin(key_i, key_b)]
    return np.bincount(found // max(width, 1), minlength=items.shape[0]).astype(np.float64)


def baseline_rows(h: Hits, metric: str):
    """The baseline's rows of the truth users, ranked: (user index, item code, 0-based position,
    1-based first and last position of the row's tie group). Ordered by its rank column if it
    has one, else by score descending, else in row order; repeated (user, item) rows keep the
    best-ranked. Equally scored rows form a tie group (``ties=average`` weighs each by its
    chance to be in the top k; any other rule keeps their input order)."""
    s = h.lists
    b = h.side.read("baseline") if h.side is not None else None
    if b is None:
        raise DataError(f"{metric} compares with a second run: pass baseline= or --baseline FILE (recommendations with user_id, item_id and a score or rank)")
    return h.memo(("baseline",), lambda: _rank_baseline(h, s, b))


def _rank_baseline(h: Hits, s: ListSpace, b: dict[str, np.ndarray]) -> tuple:
    """The rows of :func:`baseline_rows` from the baseline's columns (read by :mod:`receval.side`)."""
    if len(b["item"]) and (b["item"].dtype == object) != (s.universe.dtype == object):
        raise DataError("item ids of the baseline and the recommendations differ in type; cast them alike")
    if "rank" in b:
        sort_key = b["rank"].astype(np.float64)
    elif "score" in b:
        sort_key = -b["score"].astype(np.float64)
    else:
        sort_key = np.arange(len(b["user"]), dtype=np.float64)
    uidx, ok = index_in(h.user_ids, b["user"])
    uidx, item, sort_key = uidx[ok], b["item"][ok], sort_key[ok]
    order = np.lexsort((sort_key, uidx))  # stable: ties keep input order
    uidx, item, sort_key = uidx[order], item[order], sort_key[order]
    if len(item):
        code, known = index_in(s.universe, item)
        code = np.where(known, code, -2)
    else:
        code = np.zeros(0, dtype=np.int64)
    # drop repeated (user, item) rows, keeping the first
    pair = uidx.astype(np.int64) * (len(s.universe) + 2) + (code + 2)
    _, first = np.unique(pair, return_index=True)
    keep = np.zeros(len(pair), dtype=bool)
    keep[first] = True
    keep |= code == -2  # items outside the space cannot repeat a recommended item
    uidx, code, sort_key = uidx[keep], code[keep], sort_key[keep]
    start = np.r_[0, np.cumsum(np.bincount(uidx, minlength=h.n_users))]
    pos = np.arange(len(uidx)) - start[uidx]
    lo = hi = pos + 1
    if "rank" not in b and "score" in b and len(uidx):  # tie groups: runs of equal scores of one user
        new_group = np.r_[True, (uidx[1:] != uidx[:-1]) | (sort_key[1:] != sort_key[:-1])]
        gst = np.flatnonzero(new_group)
        glen = np.diff(np.r_[gst, len(uidx)])
        lo = np.repeat(pos[gst] + 1, glen)
        hi = lo + np.repeat(glen, glen) - 1
    return uidx, code, pos, lo, hi
