r"""Data fingerprints: an order-free content hash of each input of an evaluation.

A signature says *how* a number was computed; a fingerprint says *on what*. :func:`receval.evaluate`
records one per input it was given (``recs``, ``truth`` and each side input: ``train``,
``catalog``, ``categories``, ``item_groups``, ``user_groups``, ``baseline``) in
``Results.fingerprints`` and in the JSON output; ``receval verify`` recomputes them.

Definition (version ``rf1``)
----------------------------
1. **Rows by role.** An input is read as the evaluation reads it and cut to the columns the
   evaluation uses, by role, in this fixed order (an optional role whose column is absent is
   left out, and the schema below says so):

   =========================  ===============================================================
   recs, baseline             user, item, score (if present), rank (if present)
   truth                      user, item, rating (if present)
   train                      user, item
   catalog                    item
   categories                 item, category (a MovieLens ``genres`` column: one row per genre)
   item_groups, user_groups   item (user), group
   =========================  ===============================================================

   Column names, column order, other columns, row order and the file format (CSV, Parquet,
   a frame) do not enter; every row does, duplicates included (a multiset).
2. **Column types.** An id column is ``int`` (every value fits int64: Int8..Int64, UInt8..UInt64
   alike), ``uint`` (a UInt64 column holding a value >= 2^63) or ``str``. **Ids are identified
   as given: the integer 7 and the string "7" differ** (a Parquet/frame string column stays
   ``str``). A text file has no types: the engine reads the user and item ids of recs and
   truth from a .csv/.tsv/.txt file as text and such a column whose every value is a canonical
   decimal integer (``"7"``, ``"-3"``; never ``"007"``, ``"+7"``, ``"7.0"``) is ``int`` here,
   whatever the other file holds, so a CSV and a Parquet file with the same integer ids agree;
   side inputs are read as their metrics read them (polars' type inference). Floating ids of a
   side input are ``f64``. score and rating are ``f64`` (integers read as floats, as the
   engine does), rank is ``i64``, category and group are ``str`` (labels as text).
3. **Words.** Each value becomes 64-bit words: ``int``/``i64`` its two's complement; ``uint``
   itself; ``f64`` its IEEE-754 bits with -0.0 as 0.0 and every NaN as 0x7FF8000000000000;
   ``str`` two words ``(sA, sB)``: lanes A and B of step 4 run over the string's own words (its
   length in UTF-8 bytes, then its UTF-8 bytes zero-padded to a multiple of 8 and read as
   little-endian 64-bit words) from the seeds 0x243F6A8885A308D3 (A) and 0x13198A2E03707344 (B).
4. **Row hash**, two lanes: ``h = seed; for each word w of the row, in role order:
   h = mix(h XOR w)``; lane A: seed 0x9E3779B97F4A7C15 and mix = MurmurHash3's fmix64
   (``h ^= h>>33; h *= 0xFF51AFD7ED558CCD; h ^= h>>33; h *= 0xC4CEB9FE1A85EC53; h ^= h>>33``);
   lane B: seed 0xD1B54A32D192ED03 and mix = SplitMix64's finaliser
   (``h ^= h>>30; h *= 0xBF58476D1CE4E5B9; h ^= h>>27; h *= 0x94D049BB133111EB; h ^= h>>31``),
   all modulo 2^64.
5. **Multiset.** ``SA``, ``SB``: the sums of the row hashes of each lane modulo 2^64 (order-free;
   a duplicated row adds its hash twice); ``n``: the number of rows.
6. **Fingerprint** = ``"rf1:"`` + the hex BLAKE2b digest (16 bytes) of
   ``b"rf1\0" + schema + b"\0" + n, SA, SB`` (each 8 bytes, little-endian), where ``schema``
   is ``role:type`` joined by commas in role order, e.g. ``user:int,item:int,score:f64``.

numpy for the rows and :mod:`hashlib` (BLAKE2b) for the final digest: ``polars.Series.hash``
is documented as stable within one polars version only, so it is not used, and a fingerprint is
the same on every machine, process and version. Strings are hashed in numpy from their Arrow
buffers (measured several times cheaper than BLAKE2b over a table of the distinct strings,
whose hash join dominated); rows are mixed in blocks of 64k (in cache), read in slices of 1M.
The row mixing is not a cryptographic hash: a fingerprint tells data apart that differ by
accident or by mistake (a changed row, a dropped duplicate, another split), not data forged
to collide with it.

>>> from receval.fingerprint import fingerprint_columns
>>> fp = fingerprint_columns({"user": [1, 1, 2], "item": [10, 20, 10], "score": [0.9, 0.8, 0.5]})
>>> fp
'rf1:427d28294e2b8e8361bf8ce48cf0e1a1'
>>> fingerprint_columns({"user": [2, 1, 1], "item": [10, 20, 10], "score": [0.5, 0.8, 0.9]}) == fp   # rows shuffled
True
>>> fingerprint_columns({"user": ["1", "1", "2"], "item": [10, 20, 10], "score": [0.9, 0.8, 0.5]}) == fp  # "1" is not 1
False
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from .encode import _CANONICAL_INT, number_series
from .errors import DataError
from .io import Columns, is_text_path, missing_column, parse_sep, read_frame
from .side import SideInputs, categories_frame

VERSION = "rf1"
#: the inputs a result names, in the order they are listed
INPUTS = ("recs", "truth", "train", "catalog", "categories", "item_groups", "user_groups", "baseline")
#: role -> kind of value
KINDS = {"user": "id", "item": "id", "score": "num", "rating": "num", "rank": "rank", "category": "label", "group": "label"}

_SEED_A, _SEED_B = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xD1B54A32D192ED03)
_A1, _A2 = np.uint64(0xFF51AFD7ED558CCD), np.uint64(0xC4CEB9FE1A85EC53)
_B1, _B2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_S27, _S30, _S31, _S33 = (np.uint64(s) for s in (27, 30, 31, 33))
_STR_A, _STR_B = np.uint64(0x243F6A8885A308D3), np.uint64(0x13198A2E03707344)
_NAN = np.uint64(0x7FF8000000000000)
_BLOCK = 1 << 16  # rows mixed at a time (in cache)
_SLICE = 1 << 20  # rows turned into words at a time (bounded memory)


# ---- the hash -------------------------------------------------------------------------------------


def _mix(h: np.ndarray, t: np.ndarray, steps: tuple) -> None:
    """``h ^= h >> s1; h *= c1; h ^= h >> s2; h *= c2; h ^= h >> s3`` in place (``t``: scratch)."""
    (s1, c1), (s2, c2), s3 = steps
    for shift, mult in ((s1, c1), (s2, c2)):
        np.right_shift(h, shift, out=t)
        h ^= t
        h *= mult
    np.right_shift(h, s3, out=t)
    h ^= t


_FMIX64 = ((_S33, _A1), (_S33, _A2), _S33)  # lane A: MurmurHash3's fmix64
_SPLITMIX64 = ((_S30, _B1), (_S27, _B2), _S31)  # lane B: SplitMix64's finaliser


def _absorb(a: np.ndarray, b: np.ndarray, w: np.ndarray, t: np.ndarray) -> None:
    """One word into both lanes: ``a = fmix64(a ^ w)``, ``b = splitmix64(b ^ w)``."""
    a ^= w
    _mix(a, t, _FMIX64)
    b ^= w
    _mix(b, t, _SPLITMIX64)


def _sums(words: list[np.ndarray], n: int) -> tuple[int, int]:
    """(SA, SB) of ``n`` rows given as word columns (uint64 arrays of length n)."""
    sa = sb = 0
    ha, hb, t = (np.empty(min(n, _BLOCK), dtype=np.uint64) for _ in range(3))
    with np.errstate(over="ignore"):
        for lo in range(0, n, _BLOCK):
            m = min(_BLOCK, n - lo)
            a, b, tt = ha[:m], hb[:m], t[:m]
            a.fill(_SEED_A)
            b.fill(_SEED_B)
            for w in words:
                _absorb(a, b, w[lo:lo + m], tt)
            sa += int(a.sum(dtype=np.uint64))
            sb += int(b.sum(dtype=np.uint64))
    return sa % 2**64, sb % 2**64


def _digest(schema: str, n: int, sa: int, sb: int) -> str:
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{VERSION}\0{schema}\0".encode())
    h.update(n.to_bytes(8, "little") + sa.to_bytes(8, "little") + sb.to_bytes(8, "little"))
    return f"{VERSION}:{h.hexdigest()}"


def _string_words(s: pl.Series) -> list[np.ndarray]:
    """The two words (lane A, lane B) of every string: each lane's chain over the string's byte
    length and its UTF-8 bytes as zero-padded little-endian 64-bit words, read straight from
    the Arrow buffers, in blocks of rows."""
    import pyarrow as pa

    arr = s.cast(pl.String).to_arrow()
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if arr.type != pa.large_string():
        arr = arr.cast(pa.large_string())
    n = len(arr)
    _, obuf, dbuf = arr.buffers()
    off = np.frombuffer(obuf, dtype=np.int64, count=n + 1, offset=arr.offset * 8) if n else np.zeros(1, np.int64)
    data = np.frombuffer(dbuf, dtype=np.uint8) if dbuf is not None and n else np.zeros(0, np.uint8)
    end = int(off[-1])
    pad = np.zeros(end + 8, dtype=np.uint8)  # the bytes used, then 8 zeros: every 8-byte window exists
    pad[:end] = data[:end]
    window = np.lib.stride_tricks.as_strided(pad, shape=(end + 1, 8), strides=(1, 1), writeable=False)
    out_a, out_b = np.empty(n, dtype=np.uint64), np.empty(n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for lo in range(0, n, _BLOCK):
            start, length = off[lo:lo + _BLOCK + 1][:-1], np.diff(off[lo:lo + _BLOCK + 1])
            m = len(length)
            a, b, t = np.full(m, _STR_A), np.full(m, _STR_B), np.empty(m, dtype=np.uint64)
            _absorb(a, b, length.astype(np.uint64), t)
            for j in range(int(length.max() + 7) // 8 if m else 0):
                rest = length - 8 * j
                live = None if rest.min() > 0 else np.flatnonzero(rest > 0)
                pos, rest = (start, rest) if live is None else (start[live], rest[live])
                w = window[pos + 8 * j].view("<u8").ravel().astype(np.uint64, copy=False)
                part = rest < 8
                if part.any():  # the last word of a string: its bytes only (the window reads on)
                    w[part] &= (np.uint64(1) << (rest[part].astype(np.uint64) * np.uint64(8))) - np.uint64(1)
                if live is None:
                    _absorb(a, b, w, t)
                else:  # strings that still have words
                    la, lb = a[live], b[live]
                    _absorb(la, lb, w, t[live])
                    a[live], b[live] = la, lb
            out_a[lo:lo + m], out_b[lo:lo + m] = a, b
    return [out_a, out_b]


@dataclass
class _Col:
    role: str
    name: str  # column name in the frame
    type: str  # int, uint, str, f64, i64

    def words(self, s: pl.Series, what: str) -> list[np.ndarray]:
        if s.null_count():
            raise DataError(f"{what} column '{self.name}' has {s.null_count()} missing values; drop or fill them first")
        if self.type in ("int", "uint"):
            if s.dtype == pl.String:  # a text file's canonical integers
                s = s.cast(pl.Int64)
            a = s.cast(pl.UInt64 if self.type == "uint" else pl.Int64).to_numpy()
            return [a.view(np.uint64)]
        if self.type == "str":
            return _string_words(s)
        if self.type == "i64":
            return [number_series(s, what, self.name, "rank").astype(np.int64, copy=False).view(np.uint64)]
        a = number_series(s, what, self.name, self.role) if KINDS[self.role] == "num" else s.cast(pl.Float64).to_numpy()
        a = np.asarray(a, dtype=np.float64) + 0.0  # -0.0 + 0.0 is 0.0
        bits = a.view(np.uint64).copy()
        bits[np.isnan(a)] = _NAN
        return [bits]


def _types(lf: pl.LazyFrame, roles: Mapping[str, str], text: bool, what: str) -> list[_Col]:
    """The type of every role column, decided on the whole input (one lazy pass)."""
    schema = lf.collect_schema()
    cols: list[_Col] = []
    probes: dict[str, pl.Expr] = {}
    for role, name in roles.items():
        dtype = schema[name]
        kind = KINDS[role]
        if kind == "num":
            typ = "f64"
        elif kind == "rank":
            typ = "i64"
        elif kind == "label":
            typ = "str"
        elif dtype == pl.UInt64:
            typ = "uint?"
            probes[name] = pl.col(name).max() >= 2**63
        elif dtype.is_integer():
            typ = "int"
        elif dtype.is_float():
            typ = "f64"
        elif dtype in (pl.String, pl.Categorical) or isinstance(dtype, (pl.Categorical, pl.Enum)):
            typ = "str"
            if text and dtype == pl.String:
                typ = "str?"
                probes[name] = pl.col(name).str.contains(_CANONICAL_INT).all()
        elif dtype == pl.Null:
            typ = "int"
        else:
            raise DataError(f"{what} column '{name}' has type {dtype}; ids must be integers or strings")
        cols.append(_Col(role, name, typ))
    if probes:
        got = lf.select(**{f"p{i}": e for i, e in enumerate(probes.values())}).collect().row(0)
        found = dict(zip(probes, got))
        for c in cols:
            if c.type == "uint?":
                c.type = "uint" if found[c.name] else "int"
            elif c.type == "str?":
                c.type = "int" if found[c.name] else "str"
    return cols


def _slices(data: pl.DataFrame | pl.LazyFrame) -> Iterator[pl.DataFrame]:
    if isinstance(data, pl.DataFrame):
        for lo in range(0, max(data.height, 1), _SLICE):
            yield data.slice(lo, _SLICE)
        return
    lo = 0
    while True:
        part = data.slice(lo, _SLICE).collect()
        yield part
        if part.height < _SLICE:
            return
        lo += _SLICE


class FrameFingerprint:
    """:func:`fingerprint_frame` of a frame whose rows arrive in parts: any split of its rows
    (user batches, slices) gives the fingerprint of the whole, because the row hashes are
    summed. The column types are decided on ``data`` (the whole input) when made; :meth:`add`
    every part (a DataFrame with the columns of ``data``), then :meth:`value`."""

    def __init__(self, data: pl.DataFrame | pl.LazyFrame, roles: Mapping[str, str], *, text: bool = False,
                 what: str = "input"):
        order = [r for r in KINDS if r in roles]
        self.cols = _types(data.lazy(), {r: roles[r] for r in order}, text, what)
        self.what = what
        self.n = self.sa = self.sb = 0

    @property
    def names(self) -> list[str]:
        """The frame's columns the fingerprint reads."""
        return [c.name for c in self.cols]

    def add(self, part: pl.DataFrame) -> None:
        """Add the rows of ``part`` (read in slices: memory bounded by one slice)."""
        for piece in _slices(part.select(self.names)):
            words = [w for c in self.cols for w in c.words(piece.get_column(c.name), self.what)]
            a, b = _sums(words, piece.height)
            self.n, self.sa, self.sb = self.n + piece.height, (self.sa + a) % 2**64, (self.sb + b) % 2**64

    def value(self) -> str:
        schema = ",".join(f"{c.role}:{c.type}" for c in self.cols)
        return _digest(schema, self.n, self.sa, self.sb)


def fingerprint_frame(data: pl.DataFrame | pl.LazyFrame, roles: Mapping[str, str], *, text: bool = False,
                      what: str = "input") -> str:
    """The fingerprint of the columns ``roles`` (role -> column name) of a frame; ``text``: it
    was read from a text file (canonical-integer id columns are integers). A LazyFrame is read
    in slices (memory bounded by one slice)."""
    return _whole(FrameFingerprint(data, roles, text=text, what=what), data)


def _whole(fp: FrameFingerprint, data: pl.DataFrame | pl.LazyFrame) -> str:
    """``fp`` fed every row of ``data`` (a LazyFrame collected in slices)."""
    for part in _slices(data.select(fp.names) if isinstance(data, pl.DataFrame) else data.lazy().select(fp.names)):
        fp.add(part)
    return fp.value()


def fingerprint_columns(columns: Mapping[str, Any]) -> str:
    """The fingerprint of columns given by role (``user``, ``item``, ``score``, ``rank``,
    ``rating``, ``category``, ``group``): lists, numpy arrays or polars Series of one length."""
    unknown = [r for r in columns if r not in KINDS]
    if unknown:
        raise DataError(f"unknown fingerprint role {unknown[0]!r}; roles are {', '.join(KINDS)}")
    frame = pl.DataFrame({r: _series(v, r) for r, v in columns.items()})
    return fingerprint_frame(frame, {r: r for r in columns})


def _series(values: Any, name: str) -> pl.Series:
    if isinstance(values, pl.Series):
        return values.alias(name)
    arr = np.asarray(values) if not isinstance(values, list) else None
    if arr is not None and arr.dtype == object:
        try:
            return pl.Series(name, arr, dtype=pl.String, strict=True)
        except Exception:
            raise DataError(f"the {name} values mix strings with other values; give them one type") from None
    return pl.Series(name, values if arr is None else arr)


# ---- the inputs of an evaluation --------------------------------------------------------------------


def as_lazy(obj: Any, what: str, ids: tuple[str, ...] = (), sep: str | None = None) -> pl.DataFrame | pl.LazyFrame:
    """An input as the engine reads it; a LazyFrame or a Parquet path stays lazy."""
    if isinstance(obj, pl.LazyFrame):
        return obj
    if isinstance(obj, (str, os.PathLike)) and str(obj).lower().endswith((".parquet", ".pq")) and os.path.isfile(obj):
        return pl.scan_parquet(str(obj))
    return read_frame(obj, what, ids=ids, sep=sep)


def _roles(data: pl.DataFrame | pl.LazyFrame, what: str, required: dict[str, str], optional: dict[str, str]) -> dict[str, str]:
    names = data.collect_schema().names()
    for role, name in required.items():
        if name not in names:
            raise DataError(missing_column(what, name, role, names))
    return {role: name for role, name in {**required, **optional}.items() if name in names}


def run_fingerprint(data: pl.DataFrame | pl.LazyFrame, what: str, cols: Columns, text: bool) -> FrameFingerprint:
    """The fingerprint of recommendations (or a baseline) to be fed their rows."""
    roles = _roles(data, what, {"user": cols.user, "item": cols.item}, {"score": cols.score, "rank": cols.rank})
    return FrameFingerprint(data, roles, text=text, what=what)


def truth_fingerprint(data: pl.DataFrame | pl.LazyFrame, cols: Columns, text: bool) -> FrameFingerprint:
    """The fingerprint of a ground truth to be fed its rows."""
    tc = cols.truth()
    roles = _roles(data, "ground truth", {"user": tc.user, "item": tc.item}, {"rating": cols.rating})
    return FrameFingerprint(data, roles, text=text, what="ground truth")


def run_fp(data: Any, what: str, cols: Columns, text: bool) -> str:
    return _whole(run_fingerprint(data, what, cols, text), data)


def truth_fp(data: Any, cols: Columns, text: bool) -> str:
    return _whole(truth_fingerprint(data, cols, text), data)


def _categories_frame(obj: Any, cols: Columns) -> pl.DataFrame:
    """(item, category) pairs as the beyond-accuracy metrics read them."""
    frame, item_col = categories_frame(obj, cols)
    return frame.select(pl.col(item_col).alias("item"), pl.col("category"))


def side_fingerprint(name: str, obj: Any, cols: Columns) -> str:
    """The fingerprint of one side input (``train``, ``catalog``, ``categories``,
    ``item_groups``, ``user_groups``, ``baseline``), read as its metrics read it."""
    if name == "train":
        data = as_lazy(obj, "train interactions", sep=cols.sep)
        return fingerprint_frame(data, _roles(data, "train interactions", {"user": cols.user, "item": cols.item}, {}),
                                 what="train interactions")
    if name == "catalog":
        if isinstance(obj, (list, tuple, np.ndarray)):
            arr = np.asarray(obj)
            return fingerprint_columns({"item": arr.astype(object) if arr.dtype.kind in "US" else arr})
        data = as_lazy(obj, "catalog", sep=cols.sep)
        return fingerprint_frame(data, _roles(data, "catalog", {"item": cols.item}, {}), what="catalog")
    if name == "categories":
        return fingerprint_frame(_categories_frame(obj, cols), {"item": "item", "category": "category"}, what="categories")
    if name in ("item_groups", "user_groups"):
        role, what = ("item", "item groups") if name == "item_groups" else ("user", "user groups")
        data = read_frame(obj, what)
        roles = _roles(data, what, {role: getattr(cols, role)}, {})
        if "group" not in data.columns:
            raise DataError(f"{what} are missing column 'group' (found: {', '.join(data.columns)})")
        return fingerprint_frame(data, {**roles, "group": "group"}, what=what)
    if name == "baseline":
        data = read_frame(obj, "baseline")
        return run_fp(data, "baseline", cols, text=False)
    raise DataError(f"unknown input {name!r}; inputs are {', '.join(INPUTS)}")


def side_fingerprints(side: SideInputs | None) -> dict[str, str]:
    """The fingerprint of every side input given (``None`` ones are left out)."""
    if side is None:
        return {}
    return {name: side_fingerprint(name, getattr(side, name), side.cols)
            for name in INPUTS[2:] if getattr(side, name, None) is not None}


def fingerprint(data: Any, input: str = "recs", *, user_col: str = "user_id", item_col: str = "item_id",
                score_col: str = "score", rank_col: str = "rank", rating_col: str = "rating", sep: str | None = None) -> str:
    """The fingerprint of one input as :func:`receval.evaluate` records it: ``input`` names its
    part (``recs``, ``truth``, ``train``, ``catalog``, ``categories``, ``item_groups``,
    ``user_groups``, ``baseline``); ``data`` is anything ``evaluate`` accepts for it.

    >>> from receval.examples import WORKED_RECS, WORKED_TRUTH
    >>> from receval import evaluate
    >>> evaluate(WORKED_RECS, WORKED_TRUTH, ["precision@2"]).fingerprints["truth"] == fingerprint(WORKED_TRUTH, "truth")
    True
    """
    cols = Columns(user_col, item_col, score_col, rank_col, rating_col, sep=parse_sep(sep))
    if input in ("recs", "truth"):
        what = "recommendations" if input == "recs" else "ground truth"
        frame = as_lazy(data, what, (cols.user, cols.item), cols.sep)
        if input == "recs":
            return run_fp(frame, what, cols, is_text_path(data))
        return truth_fp(frame, cols, is_text_path(data))
    return side_fingerprint(input, data, cols)


__all__ = ["VERSION", "INPUTS", "fingerprint", "fingerprint_frame", "FrameFingerprint", "run_fingerprint", "truth_fingerprint", "fingerprint_columns", "side_fingerprint",
           "side_fingerprints"]
