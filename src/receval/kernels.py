"""The large-input path through compiled kernels (numba, imported lazily): string ids, rows in
any order, ordered by score, metrics read from the sparse hits only.

:func:`deferred` (called where the inputs are encoded) returns a :class:`Deferred` encoding for
inputs of at least :data:`MIN_ROWS` recommendation rows; :meth:`Deferred.form` (called by
:func:`receval.engine.form`) then builds the form of a build group without the sorts of the
numpy path. Frames held in memory that the numpy path would split into user batches go to the
kernels whole when they take every build group (:func:`whole`; their memory is held in parts
of users instead): a refusal that depends on the data raises :class:`Rebatch`, and the frames
are evaluated in batches as before.

* users are coded as :func:`receval.encode.encode` codes them (positions among the sorted truth
  users): the kernel places each id by a 64-bit hash of its bytes (the same for every length:
  the 16-byte Arrow string view, which holds an id of at most 12 bytes whole, then each further
  8 bytes of a longer id, read in the column's data buffers in place, 8 bytes a load) in a table
  of the truth users (ids of at most 44 bytes whole in their slots; longer ones beside them), so
  every match is confirmed on the id's bytes; a row's bytes are read once for its hash and its
  comparison, rows in blocks whose slots are prefetched;
* the rows are grouped by user in parts of about :data:`PART_ROWS` rows: two radix passes on
  the user code carry (row, item hash, score bits) records, the first read segment by segment
  from the columns' chunks in place (each half of the rows on a thread), the second in
  parallel; the truth is grouped by the same passes;
* per user (users in parallel), the truth items' hashes go into a small hash set and every
  recommended row is looked up in it; duplicate items and tied scores are found in the same
  pass; a hit's tie group is the user's rows scored higher (``lo`` = their number + 1) through
  the rows scored the same (``hi``), its position ``lo`` + the tied rows before it in the
  input (``optimistic``: ``lo``); no sort by score. ``ties=average`` takes the bounds (the
  existing closed forms), every tie rule that needs no item order takes this path;
* every hash match is confirmed on the ids themselves (a hash is only an index): a recommended
  id that merely shares its hash with a truth id of the user is no hit (in the kernel, on the
  views and, for ids longer than 12 bytes, their bytes in the data buffers; columns not held as
  string views: on the strings after the kernel).

Whatever the kernel does not decide returns None and the numpy path takes the call (the same
values, the same messages): integer ids, a rank column or another order, metrics reading the
rows or items, ``hitscore=positive``, ``ties=item`` / ``item_desc`` / ``text_desc``, a repeated
item within a user (a duplicate row), no hit at all. ``RECEVAL_NO_JIT=1`` (or numba missing)
keeps every call on the numpy path. The kernels compile once per install (10-30 s on 2 cores, by their load; numba's cache, see
:func:`cache_dir`) and load from the cache in about 1 s; ``import receval`` and inputs below
:data:`MIN_ROWS` never import numba.
"""

from __future__ import annotations

import os
import warnings
from bisect import bisect_right
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from . import _numba
from . import encode as E
from .encode import Encoded
from .hits import Hits

#: recommendation rows grouped at once (24 bytes each; every part reads the columns once): more rows are grouped and
#: matched in parts of users (``RECEVAL_JIT_PART_ROWS``)
PART_ROWS = int(os.environ.get("RECEVAL_JIT_PART_ROWS", 25_000_000))

#: recommendation rows from which an encoding goes through the kernels (a batch's rows, in
#: batched runs): below it the numpy path runs and numba is never imported
#: (``RECEVAL_JIT_MIN_ROWS=0`` forces the kernels on for every input, e.g. to run a test suite)
MIN_ROWS = int(os.environ.get("RECEVAL_JIT_MIN_ROWS", 1_000_000))

#: the bits of the kernels' own hash of inline ids (all; tests keep two, so that ids share
#: hashes and every match must be confirmed on the ids)
HASH_MASK = np.uint64(2**64 - 1)


def enabled() -> bool:
    """Whether the kernels may run: ``RECEVAL_NO_JIT`` unset (or 0) and numba installed."""
    return _numba.enabled()


def cache_dir() -> Path:
    """Where numba caches the kernels (:func:`receval._numba.cache_dir`): beside this module when
    its folder is writable, else ``$XDG_CACHE_HOME/receval/numba`` (``~/.cache/receval/numba``)."""
    return _numba.cache_dir()


def _jit() -> Any:
    """The kernel module, imported (and compiled, the first time on this install) on first use
    by :func:`receval._numba.load`; a line on stderr says when the kernels are compiled rather
    than loaded from the cache."""
    return _numba.load("_jit", "large-input kernels", _warm, expect="10-30 s")


def _warm(jit: Any) -> None:
    """Compile (or load) every signature of :mod:`receval._jit` now, on tiny inputs: one
    message, one wait (the hashes and views read-only, as the calls pass them: numba types the
    flag)."""
    z = np.zeros(1, np.int32)
    u, v = _ro(np.zeros(1, np.uint64)), _ro(np.zeros((1, 2), np.uint64))
    ad, en = _NO_ADDR, _NO_ADDR
    jit.padded(v)
    code, _, table, rep, longest, _ = jit.code_users(v, HASH_MASK, ad, en)
    jit.lookup_users(table, rep, longest, v, code, HASH_MASK, ad, en)
    jit.hash_views(v, np.zeros(1, np.uint64), HASH_MASK, ad, en)
    jit.recode(code, z, 1)
    cnt = jit.count_codes(z, 1)
    st, g = np.array([0, 1], dtype=np.int64), np.zeros((1, 3), dtype=np.uint64)  # row 0, an empty id
    jit.scatter(z, 0, 0, 1, 1, np.zeros_like(cnt), g, v, u, True, HASH_MASK, u, ad, en)
    jit.settle(g, st, 1)
    lv, ls, la, le, lf, _ = _typed_views([(v, ad, en, [])])
    with warnings.catch_warnings():  # numba says at compile time that reflected lists may go
        warnings.simplefilter("ignore")
        jit.match(st, g, st, g, np.ones(1, np.bool_), jit.INPUT, lv, ls, lv, ls, True, la, le, lf, la, le, lf)


def _ro(a: np.ndarray) -> np.ndarray:
    """``a`` read-only (one numba signature per kernel whatever the source of the array)."""
    a = a.view()
    a.flags.writeable = False
    return a


def _hash(s: pl.Series) -> np.ndarray:
    return _ro(np.ascontiguousarray(E.hash64(s), dtype=np.uint64))


def _arrow_buffers(a: Any) -> tuple[np.ndarray, np.ndarray, list[Any]]:
    """The variadic data buffers of an Arrow string_view array (the bytes of its ids longer than
    12 bytes, read in place by the kernels): each one's address and end (one 0 when there are
    none: never read), and the buffers themselves (held while the kernels read them)."""
    bufs = [b for b in a.buffers()[2:] if b is not None]
    addr = np.array([b.address for b in bufs] or [0], dtype=np.int64)
    end = addr + np.array([b.size for b in bufs] or [0], dtype=np.int64)
    return _ro(addr), _ro(end), bufs


#: a chunk's string views as the kernels read them: the (rows, 2) uint64 views, the addresses and
#: ends of its data buffers, the buffers (:func:`_arrow_buffers`)
Views = tuple[np.ndarray, np.ndarray, np.ndarray, list[Any]]


def _chunk_views(s: pl.Series) -> list[Views] | None:
    """The 16-byte Arrow string views of each chunk of a String column as (rows, 2) uint64 (read
    in place), with the chunk's data buffers (:func:`_arrow_buffers`: where the views of ids
    longer than 12 bytes point), or None when the column is not held as string views (or an
    inline view is not zero padded: its view would not be the id)."""
    parts = []
    for c in s.get_chunks():
        a = c.to_arrow(compat_level=pl.CompatLevel.newest())
        if str(a.type) != "string_view":
            return None
        v = _ro(np.frombuffer(a.buffers()[1], dtype=np.uint64).reshape(-1, 2)[a.offset:a.offset + len(a)])
        if not _jit().padded(v):
            return None
        parts.append((v, *_arrow_buffers(a)))
    return parts


def _view_hash(parts: list[Views]) -> np.ndarray:
    """The hashes of the ids of a column's chunks (:func:`_chunk_views`), as one array."""
    jit = _jit()
    out = np.empty(sum(len(x[0]) for x in parts), dtype=np.uint64)
    at = 0
    for v, addr, end, _ in parts:
        jit.hash_views(v, out[at:at + len(v)], HASH_MASK, addr, end)
        at += len(v)
    return _ro(out)


def _starts(chunks: list[np.ndarray]) -> list[int]:
    """The first row of each chunk."""
    return np.cumsum([0, *(len(c) for c in chunks)]).tolist()


def _segment(chunks: list[np.ndarray], starts: list[int], a: int, b: int) -> np.ndarray:
    """Rows ``a`` .. ``b`` - 1 of a column held in chunks (``starts``: :func:`_starts`), within
    one chunk (read in place)."""
    k = bisect_right(starts, a) - 1
    return chunks[k][a - starts[k]:b - starts[k]]


def _threads() -> int:
    """The threads the kernels run on (numba's, at most the cores)."""
    return max(1, min(int(_jit().numba_threads()), os.cpu_count() or 1))


def _parts(count: np.ndarray, rows: int) -> list[tuple[int, int]]:
    """Users 0 .. len(``count``) - 1 in consecutive parts of about ``rows`` rows (``count``: each
    user's rows); one part when they fit."""
    total = int(count.sum())
    n = len(count)
    if total <= rows or n < 2:
        return [(0, n)]
    ends = np.cumsum(count)
    cuts = np.searchsorted(ends, np.arange(rows, total, rows), side="left") + 1
    bounds = sorted({0, n, *(int(c) for c in cuts if 0 < c < n)})
    return list(zip(bounds[:-1], bounds[1:]))


def _views(s: pl.Series) -> Views | None:
    """:func:`_chunk_views` of the column in one chunk (rechunked when it has several: the views
    of a chunk point into its own data buffers)."""
    if s.n_chunks() > 1:
        s = s.rechunk()
    parts = _chunk_views(s)
    if parts is None:
        return None
    if not parts:
        return _NONE_V, _NO_ADDR, _NO_ADDR, []
    return parts[0]


def _typed_views(parts: list[Views]) -> tuple[list[np.ndarray], np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                              list[Any]]:
    """Chunk views (:func:`_chunk_views`) as :func:`receval._jit.match` takes them: the views (a
    list, read by the kernel as a reflected list: a numba typed list compiles its methods in
    every process, about 0.45 s), each chunk's first row, the chunks' data buffers' addresses and
    ends in one array each, the place of each chunk's first buffer in them, and the buffers."""
    starts = np.zeros(len(parts) + 1, dtype=np.int64)
    np.cumsum([len(x[0]) for x in parts], out=starts[1:])
    first = np.zeros(max(1, len(parts)), dtype=np.int64)
    np.cumsum([len(x[1]) for x in parts[:-1]], out=first[1:len(parts)])
    addr = _ro(np.concatenate([x[1] for x in parts])) if parts else _NO_ADDR
    end = _ro(np.concatenate([x[2] for x in parts])) if parts else _NO_ADDR
    return [x[0] for x in parts] or [_NONE_V], starts, addr, end, first, [b for x in parts for b in x[3]]


_NO_ADDR = _ro(np.zeros(1, dtype=np.int64))
_NONE_V = _ro(np.zeros((0, 2), dtype=np.uint64))
_NONE_H = _ro(np.zeros(0, dtype=np.uint64))


Segment = tuple[int, int, np.ndarray, np.ndarray, bool, np.ndarray, np.ndarray, np.ndarray]


def _radix(codes: np.ndarray, count: np.ndarray, g0: int, g1: int, groups: Sequence[Sequence[Segment]],
           before: Sequence[np.ndarray | None]) -> tuple[np.ndarray, np.ndarray]:
    """The rows of the codes ``g0`` .. ``g1`` - 1 grouped by code, input order kept (``count``:
    each code's rows): each code's first place (``starts``) and the (row, item hash, score bits)
    records, by two radix passes on the code: :func:`receval._jit.scatter` segment by segment
    (a segment: (first row, end row, the rows' item views or else their item hashes, whether
    views, their score bits, the addresses and ends of the views' chunk's data buffers), read in
    place) by the high half of the bits, then
    :func:`receval._jit.settle` by the low half, buckets in parallel. ``groups``: consecutive
    runs of segments, scattered on a thread each, each from its own places in every bucket
    (``before``: each code's rows in the groups before it, None for the first), so the records
    are those of one pass in row order."""
    jit = _jit()
    n = g1 - g0
    bits = max(1, (n - 1).bit_length())
    lo_bits = (bits + 1) // 2
    starts = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(count[g0:g1], out=starts[1:])
    first = np.minimum(np.arange(-(-n >> lo_bits), dtype=np.int64) << lo_bits, n)
    fills = [starts[first] + (0 if ahead is None else np.add.reduceat(ahead[g0:g1], first)) for ahead in before]
    out = np.empty((int(starts[-1]), 3), dtype=np.uint64)

    def run(k: int) -> None:
        for a, b, v, h, exact, sbits, addr, end in groups[k]:
            jit.scatter(codes[a:b], a, g0, g1, lo_bits, fills[k], out, v, h, exact, HASH_MASK, sbits, addr, end)

    if len(groups) == 1:
        run(0)
    else:
        with ThreadPoolExecutor(len(groups)) as pool:
            list(pool.map(run, range(len(groups))))
    jit.settle(out, starts, lo_bits)
    return starts, out


def formable(opts: dict[str, Any], needs: set[str] | frozenset[str]) -> bool:
    """Whether the kernels can form a build group of options ``opts`` whose metrics read the
    layers ``needs``: the hits only, lists ordered by score under a tie rule that needs no item
    order, every relevant item a hit."""
    return (not needs and opts.get("order", "auto") in ("auto", "score")
            and opts.get("ties", "input") in ("input", "average", "optimistic") and opts.get("hitscore") != "positive")


class Rebatch(Exception):
    """The kernels declined inputs taken whole (:func:`whole`): evaluate them in user batches."""


_WHOLE: ContextVar[bool] = ContextVar("receval_kernels_whole", default=False)


def whole(rf: pl.DataFrame, tf: pl.DataFrame, columns: Any, resolved: Sequence[Any]) -> bool:
    """Whether frames held in memory go to the kernels in one batch, though larger than the
    memory budget of the numpy path: the kernels take every build group of ``resolved``
    (:func:`formable`) on ids that are strings on both sides, ordered by score. Their working
    memory is a fraction of the numpy path's (about 40 bytes a row: the user codes, the grouped
    (row, item hash, score) records), so one batch saves the batches' filters. Evaluate inside
    :func:`taken_whole`; a data-dependent refusal (a repeated item, no hit) raises
    :class:`Rebatch`, and the caller evaluates in batches as before."""
    if rf.height < MIN_ROWS or not enabled() or not resolved:
        return False
    names = {"user": columns.user, "item": columns.item}
    tc = columns.truth()
    if columns.score not in rf.columns or columns.rank in rf.columns:
        return False
    for f, cols in ((rf, names), (tf, {"user": tc.user, "item": tc.item})):
        if not all(c in f.columns and f.schema[c] in (pl.String, pl.Categorical) for c in cols.values()):
            return False
    return all(formable(dict(r.build_key()), r.metric.needs_for(r.options)) for r in resolved)


@contextmanager
def taken_whole() -> Iterator[None]:
    """Inside, the encodings the kernels make are of inputs taken whole (:func:`whole`)."""
    token = _WHOLE.set(True)
    try:
        yield
    finally:
        _WHOLE.reset(token)


def deferred(rf: pl.DataFrame, tf: pl.DataFrame, roles: tuple[dict[str, str], dict[str, str]],
             text: tuple[bool, bool], exact: bool, columns: Any) -> Encoded | None:
    """A :class:`Deferred` encoding of large inputs with string ids ordered by score, else None."""
    rroles, troles = roles
    if (rf.height < MIN_ROWS or "rank" in rroles or "score" not in rroles or any(text) or not enabled()
            or not all(f.schema[c] in (pl.String, pl.Categorical) for f, c in
                       ((rf, rroles["user"]), (rf, rroles["item"]), (tf, troles["user"]), (tf, troles["item"])))):
        if _WHOLE.get():  # inputs taken whole for the kernels (:func:`whole`) never go to the numpy path whole
            raise Rebatch
        return None
    return Deferred(rf, tf, roles, text, exact, columns)


class Deferred(Encoded):
    """An encoding whose numpy form (:func:`receval.encode.encode`) is made only when a build
    group needs it; :meth:`form` builds the forms the kernels can."""

    def __init__(self, rf: pl.DataFrame, tf: pl.DataFrame, roles: tuple[dict[str, str], dict[str, str]],
                 text: tuple[bool, bool], exact: bool, columns: Any) -> None:
        self._raw: tuple[Any, ...] | None = (rf, tf, roles, text, exact)
        self._columns = columns
        #: whether the truth has a rating column (the relevance default reads it without encoding)
        self.rated = "rating" in roles[1]
        self._full: Encoded | None = None
        self._prep: dict[str, Any] | None = None
        #: the build groups the kernels formed (for tests: the path was taken)
        self.formed = 0
        #: the inputs were taken in one batch for the kernels (:func:`whole`)
        self.whole = _WHOLE.get()

    def _declined(self) -> Hits | None:
        """The kernels do not decide a build group: the numpy path takes it, except for inputs
        taken whole for the kernels (:func:`whole`), which are evaluated again in user batches."""
        if self.whole:
            raise Rebatch
        return None

    # ---- the numpy encoding, on demand -------------------------------------------------------
    def encoded(self) -> Encoded:
        if self.whole:  # never the numpy encoding of inputs taken whole (their memory): in batches
            raise Rebatch
        if self._full is None:
            assert self._raw is not None
            rf, tf, roles, text, exact = self._raw
            self._full = E.encode(rf, tf, roles, text=text, exact_items=exact)
            self._full.info["columns"] = self._columns
        return self._full

    recs = property(lambda self: self.encoded().recs)  # type: ignore[assignment]
    truth = property(lambda self: self.encoded().truth)  # type: ignore[assignment]
    user_ids = property(lambda self: self.encoded().user_ids)  # type: ignore[assignment]
    item_ids = property(lambda self: self.encoded().item_ids)  # type: ignore[assignment]
    info = property(lambda self: self.encoded().info)  # type: ignore[assignment]
    items_exact = property(lambda self: self.encoded().items_exact)  # type: ignore[assignment]
    dups_checked = property(lambda self: self.encoded().dups_checked)  # type: ignore[assignment]
    heads = property(lambda self: self.encoded().heads)  # type: ignore[assignment]

    def quick_items_meet(self, rows: int) -> bool:
        """:func:`receval.encode.items_meet` on the ids: one of the first ``rows`` recommended
        items is an item of the truth (False says nothing)."""
        assert self._raw is not None
        rf, tf, (rroles, troles), _, _ = self._raw
        ri = rf.get_column(rroles["item"]).head(rows)
        ti = tf.get_column(troles["item"])
        if ri.dtype != ti.dtype:
            ri, ti = ri.cast(pl.String), ti.cast(pl.String)
        return bool(len(ri)) and bool(E._in(ri, ti).any())

    # ---- the kernel path ---------------------------------------------------------------------
    def _prepare(self) -> dict[str, Any] | None:
        """The checks and user codes of :func:`receval.encode.encode`, in its order (the same
        errors), and the item hashes; None when the ids are not strings on both sides."""
        if self._prep is not None:
            return self._prep or None
        assert self._raw is not None
        rf, tf, (rroles, troles), text, _ = self._raw
        ru = E.id_series(rf.get_column(rroles["user"]), "recommendations", rroles["user"])
        ri = E.id_series(rf.get_column(rroles["item"]), "recommendations", rroles["item"])
        tu = E.id_series(tf.get_column(troles["user"]), "ground truth", troles["user"])
        ti = E.id_series(tf.get_column(troles["item"]), "ground truth", troles["item"])
        if len(tu) == 0:
            self._prep = {}
            return None
        ru, tu = E.harmonize(ru, tu, "user", text)
        ri, ti = E.harmonize(ri, ti, "item", text)
        if not all(s.dtype == pl.String for s in (ru, ri, tu, ti)):
            self._prep = {}
            return None
        if rf.height >= 2**31 or tf.height >= 2**31:
            self._prep = {}
            return None  # (int32 rows in the kernels)
        sc = rf.get_column(rroles["score"])
        if sc.dtype == pl.Float64 and not sc.null_count():  # checked in place (no copy of the column)
            score = None
            finite = bool(sc.is_finite().all())
        else:
            score = E.number_series(sc, "recommendations", rroles["score"], "score")
            finite = bool(np.all(np.isfinite(score)))
        rating = None
        if "rating" in troles:
            rating = E.number_series(tf.get_column(troles["rating"]), "ground truth", troles["rating"], "rating")
        if not (finite and (rating is None or np.all(np.isfinite(rating)))):
            self._prep = {}
            return None  # refused by encode, with the column named
        jit = _jit()
        tv = _views(tu)
        r_user = np.empty(len(ru), dtype=np.int32)
        r_parts = _chunk_views(ru) if tv is not None else None
        if tv is not None and r_parts is not None:  # coded in the kernel, on the views (ids of any length)
            t_code, first, table, rep, longest, slot_code = jit.code_users(tv[0], HASH_MASK, tv[1], tv[2])
            at = _starts([x[0] for x in r_parts])
            with ThreadPoolExecutor(_threads()) as pool:  # chunk by chunk (views read in place), on every thread
                list(pool.map(lambda k: jit.lookup_users(table, rep, longest, r_parts[k][0], r_user[at[k]:at[k + 1]],
                                                         HASH_MASK, r_parts[k][1], r_parts[k][2]), range(len(r_parts))))
            del table, rep, r_parts, tv
            reps = tu.gather(pl.Series(first, dtype=pl.Int64))
            order = reps.arg_sort().to_numpy()
            uni = reps.gather(order)
            rank = np.empty(len(order), dtype=np.int32)
            rank[order] = np.arange(len(order), dtype=np.int32)
            t_user = rank[t_code]
            slot_rank = np.where(slot_code >= 0, rank[np.maximum(slot_code, 0)], -1).astype(np.int32)
            r_count = jit.recode(r_user, slot_rank, len(order))  # slots -> codes; each user's rows
            del slot_code, slot_rank
        else:  # ids not held as string views: coded as encode codes them
            uni = tu.unique().sort()
            t_user = E._hash_codes(tu, uni).astype(np.int32)
            r_user[:] = E._hash_codes(ru, uni)
            r_count = jit.count_codes(r_user, len(uni))
        user_ids = uni.to_numpy()
        if user_ids.dtype.kind not in "iu":
            user_ids = user_ids.astype(object)
        if score is None:  # the scores' bits read chunk by chunk in place (-0.0 as 0.0 in scatter)
            scores = [_ro(c.to_numpy().view(np.uint64)) for c in sc.get_chunks()]
        else:
            scores = [_ro(np.ascontiguousarray(score, dtype=np.float64).view(np.uint64))]
        self._prep = dict(ru=ru, ri=ri, ti=ti, rating=rating, uni=uni, user_ids=user_ids,
                          t_user=t_user, r_user=r_user, r_count=r_count, scores=scores)
        return self._prep

    def form(self, opts: dict[str, Any], needs: set[str], side: Any, reach: int | None) -> Hits | None:
        """The form of one build group (what :func:`receval.engine.form` returns), or None when
        the kernels do not decide it (the numpy path then takes it)."""
        if self._full is not None or not formable(opts, needs):
            return self._declined()
        ties = opts.get("ties", "input")
        p = self._prepare()
        if p is None:
            return self._declined()
        threshold = opts.get("rel")
        rating = p["rating"]
        if rating is None:
            if threshold is not None and threshold > 1:
                return self._declined()  # refused by the build
            rating = np.ones(len(p["ti"]), dtype=np.float64)
        relevant = np.ones(len(rating), dtype=np.bool_) if threshold is None else rating >= threshold
        jit = _jit()
        n_users = len(p["user_ids"])
        if "t_group" not in p:  # the truth grouped by user, the item views, the rows of each user
            views = (_chunk_views(p["ri"]), _chunk_views(p["ti"]))  # read in place
            p["exact"] = views[0] is not None and views[1] is not None
            if p["exact"]:  # hashed from the views and data buffers (matches confirmed on the ids' bytes)
                t_hash = _view_hash(views[1])  # type: ignore[arg-type]
            else:
                t_hash, p["r_hash"] = _hash(p["ti"]), _hash(p["ri"])
            t_count = jit.count_codes(p["t_user"], n_users)  # (row, item hash, -) records by user
            p["t_group"] = _radix(p["t_user"], t_count, 0, n_users,
                                  [[(0, len(t_hash), _NONE_V, t_hash, False, t_hash, _NO_ADDR, _NO_ADDR)]], [None])
            del t_hash
            p["r_views"] = views[0]
            rv, rs, ra, re, rf0, rk = _typed_views(views[0] or [])
            tv, ts, ta, te, tf0, tk = _typed_views(views[1] or [])
            p["views"] = (rv, rs, tv, ts)
            p["bufs"] = (ra, re, rf0, ta, te, tf0)
            p["held"] = rk + tk  # the data buffers the kernels read by their addresses
            p["count"] = p["r_count"]  # (counted as the rows were coded)
            del views
        tst, tg = p["t_group"]
        cnt = p["count"]
        mode = {"input": jit.INPUT, "average": jit.AVERAGE, "optimistic": jit.OPTIMISTIC}[ties]
        got: list[tuple[np.ndarray, ...]] = []
        first_tie = np.empty(n_users, dtype=np.int64)
        max_pos = np.empty(n_users, dtype=np.int64)
        for g0, g1 in _parts(cnt, PART_ROWS):  # users in parts: the records of one part at a time
            rst, rg = self._group_part(p, g0, g1)
            t0, t1 = int(tst[g0]), int(tst[g1])
            status, *hits, ft, mp = jit.match(rst, rg, tst[g0:g1 + 1] - t0, tg[t0:t1], relevant, mode,
                                              *p["views"], p["exact"], *p["bufs"])
            del rst, rg
            if status != jit.OK:
                return self._declined()
            hits[0] += g0
            got.append(tuple(hits))
            first_tie[g0:g1], max_pos[g0:g1] = ft, mp
        hit_user, hit_row, hit_t, hit_pos, hit_lo, hit_hi = (
            np.concatenate([h[j] for h in got]) if len(got) != 1 else got[0][j] for j in range(6))
        del got
        if not p["exact"]:  # every hash match confirmed on the ids: a look-alike that shares a hash is no hit
            same = (p["ri"].gather(pl.Series(hit_row, dtype=pl.Int64))
                    == p["ti"].gather(pl.Series(hit_t, dtype=pl.Int64))).to_numpy()
            if not same.all():
                hit_user, hit_t, hit_pos, hit_lo, hit_hi = (a[same] for a in (hit_user, hit_t, hit_pos, hit_lo, hit_hi))
        if not len(hit_user):
            return self._declined()  # the numpy path judges a run without any hit (the item check)
        info = self._info(p)
        if info is None:
            return self._declined()
        t_user = p["t_user"]
        length = cnt
        trows = tg[:, 0].astype(np.int64)
        counted = relevant[trows]
        n_rel = np.bincount(t_user[relevant], minlength=n_users).astype(np.int64)
        n_truth = np.bincount(t_user, minlength=n_users).astype(np.int64)
        h_info = {"rec_rows": int(cnt.sum()), "order": "score", "users": n_users,
                  "users_without_relevant": int((n_rel == 0).sum()),
                  "users_without_recs": int(((length == 0) & (n_rel > 0)).sum())}
        tied_any = bool((first_tie != jit.NO_TIE).any())
        h = Hits(
            user_ids=p["user_ids"], n_rel=n_rel, n_truth=n_truth, length=length.astype(np.int64),
            hit_user=hit_user, hit_pos=hit_pos, hit_rating=rating[hit_t].astype(np.float64),
            rel_user=t_user[trows][counted].astype(np.int64), rel_rating=rating[trows][counted].astype(np.float64),
            options=dict(opts, order="score"), info={**h_info, **info}, max_pos=int(max_pos.max()) if n_users else 0,
            side=side,
        )
        if ties == "average" and tied_any:  # the tie groups' bounds (no tied score: the plain formulas)
            h.hit_lo, h.hit_hi, h.first_tie = hit_lo, hit_hi, first_tie
        if reach is not None:  # a tie group starting within the reach (0: anywhere)
            tied = first_tie != jit.NO_TIE if reach == 0 else first_tie <= reach
            h.tied_codes = np.flatnonzero(tied).astype(np.int64)
        self.formed += 1
        return h

    def _group_part(self, p: dict[str, Any], g0: int, g1: int) -> tuple[np.ndarray, np.ndarray]:
        """The recommended rows of the users ``g0`` .. ``g1`` - 1 grouped by user (input order
        kept): each user's first place (``starts``) and the (row, item hash, score bits) records,
        by two radix passes on the user code (:func:`receval._jit.scatter` segment by segment of
        the columns' chunks, read in place; :func:`receval._jit.settle`). Kept when the users
        are one part (every build group reads them)."""
        if p.get("part", (None,))[0] == (g0, g1):
            return p["part"][1]
        views: Any = p["r_views"]
        hashes: Any = p.get("r_hash")
        scores = p["scores"]
        exact = views is not None
        chunks = [x[0] for x in views] if exact else [hashes]
        v_at, s_at = _starts(chunks), _starts(scores)
        bounds = sorted({0, len(p["r_user"]), *v_at, *s_at})
        segs = [(a, b, _segment(chunks, v_at, a, b) if exact else _NONE_V, _NONE_H if exact else hashes[a:b], exact,
                 _segment(scores, s_at, a, b), *(views[bisect_right(v_at, a) - 1][1:3] if exact else (_NO_ADDR, _NO_ADDR)))
                for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
        if "cut" not in p:  # the rows in two halves (at a segment's start) scattered on two threads
            cut = bounds[min(range(len(bounds)), key=lambda k: abs(2 * bounds[k] - bounds[-1]))]
            p["cut"] = cut, (_jit().count_codes(p["r_user"][:cut], len(p["count"])) if 0 < cut < bounds[-1] and _threads() > 1
                             else None)
        cut, ahead = p["cut"]
        if ahead is None:
            starts, out = _radix(p["r_user"], p["count"], g0, g1, [segs], [None])
        else:
            starts, out = _radix(p["r_user"], p["count"], g0, g1, [[x for x in segs if x[0] < cut],
                                                                   [x for x in segs if x[0] >= cut]], [None, ahead])
        if len(_parts(p["count"], PART_ROWS)) == 1:
            p["part"] = ((g0, g1), (starts, out))
        return starts, out

    def _info(self, p: dict[str, Any]) -> dict[str, Any] | None:
        """The counts and the overlap judgement :func:`receval.encode.encode` gives (once)."""
        if "info" in p:
            return p["info"]
        r_user, ru = p["r_user"], p["ru"]
        cnt = p["r_count"]  # the users seen, the rows of no truth user: from each user's rows
        in_both, n_out = int(np.count_nonzero(cnt)), len(r_user) - int(cnt.sum())
        only_recs = 0 if n_out == 0 else int(ru.filter(pl.Series(r_user < 0)).n_unique())
        info: dict[str, Any] = {"rec_rows": int(len(ru)), "users_in_both": int(in_both), "users_only_in_recs": only_recs,
                                "users_only_in_truth": len(p["user_ids"]) - in_both}
        if not E._PER_BATCH.get():
            E.check_overlap(info, lambda: {"user": (ru.unique().sort(), p["uni"]),
                                           "item": (p["ri"].unique().sort(), p["ti"].unique().sort())})
        if only_recs:
            info["ignored_rec_rows"] = int(n_out)
            info["ignored_rec_users"] = only_recs
        p["info"] = info
        return info


__all__ = ["MIN_ROWS", "Deferred", "Rebatch", "deferred", "enabled", "cache_dir", "formable", "whole", "taken_whole"]
