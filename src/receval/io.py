"""Reading inputs: pandas, polars (eager or lazy), pyarrow tables, CSV / Parquet paths.

Everything becomes a dict of numpy arrays, one per requested column; nothing the caller
passed is modified.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from .errors import DataError, SpecError
from .partfiles import check_parquet, check_text_rows
from .trec import from_dict, is_dict_of_dicts, read_trec, trec_kind, unknown_format


@dataclass(frozen=True)
class Columns:
    """Column names of the inputs (every one overridable). ``user`` / ``item`` name the id
    columns of the recommendations and of every side input, and of the ground truth unless
    ``truth_user`` / ``truth_item`` name its own; ``score`` / ``rank`` are read from the
    recommendations only, ``rating`` from the ground truth only."""

    user: str = "user_id"
    item: str = "item_id"
    score: str = "score"
    rank: str = "rank"
    rating: str = "rating"
    #: the field separator of text files (None: ',' for .csv/.txt, tab for .tsv, checked against the header)
    sep: str | None = None
    #: the ground truth's user / item column (None: ``user`` / ``item``)
    truth_user: str | None = None
    truth_item: str | None = None

    def truth(self) -> Columns:
        """The names the ground truth is read by: ``user`` / ``item`` are its own (idempotent).

        >>> Columns("user", "item", truth_user="user_id").truth().user
        'user_id'
        """
        return replace(self, user=self.truth_user or self.user, item=self.truth_item or self.item,
                       truth_user=self.truth_user or self.user, truth_item=self.truth_item or self.item)


def id_columns(user_col: Any, item_col: Any, truth_user_col: Any = None, truth_item_col: Any = None) -> dict[str, Any]:
    """The id-column arguments of :func:`receval.evaluate` as :class:`Columns` fields: a
    ``user_col`` / ``item_col`` given as a mapping ``{"recs": NAME, "truth": NAME}`` names each
    input's column (a key left out: the default), a string names both's.

    >>> id_columns({"recs": "user", "truth": "uid"}, "item_id")
    {'user': 'user', 'item': 'item_id', 'truth_user': 'uid', 'truth_item': None}
    """
    out: dict[str, Any] = {}
    for role, shared, own, default in (("user", user_col, truth_user_col, "user_id"), ("item", item_col, truth_item_col, "item_id")):
        if isinstance(shared, Mapping):
            extra = set(shared) - {"recs", "truth"}
            if extra:
                raise SpecError(f"give {role}_col as a name or a mapping with the keys 'recs' and 'truth'; got the key {sorted(map(str, extra))[0]!r}")
            if own is not None and "truth" in shared:
                raise SpecError(f"give the truth's {role} column once: truth_{role}_col= or {role}_col={{'truth': ...}}")
            shared, own = shared.get("recs", default), shared.get("truth", own)
        for name, value in ((f"{role}_col", shared), (f"truth_{role}_col", own)):
            if value is not None and not isinstance(value, str):
                raise SpecError(f"give {name} as a column name (a string), got {value!r}")
        out[role], out[f"truth_{role}"] = shared, own
    return {k: out[k] for k in ("user", "item", "truth_user", "truth_item")}


#: the column keywords of the entry points (``receval.evaluate``, ``verify``, ``compare``) and the
#: :class:`Columns` field each one sets
COLUMN_KEYWORDS = {"user_col": "user", "item_col": "item", "score_col": "score", "rank_col": "rank",
                   "rating_col": "rating", "truth_user_col": "truth_user", "truth_item_col": "truth_item"}


def pop_columns(kwargs: dict[str, Any]) -> Columns:
    """The :class:`Columns` the column keywords in ``kwargs`` name (taken out of it; the others stay)."""
    return Columns(**{COLUMN_KEYWORDS[k]: kwargs.pop(k) for k in list(kwargs) if k in COLUMN_KEYWORDS})


#: names a separator may be given by (``--sep tab``)
SEP_NAMES = {"tab": "\t", "\\t": "\t", "comma": ",", "semicolon": ";", "pipe": "|", "space": " "}


def parse_sep(sep: Any) -> str | None:
    """Validate a field separator: one character, or a name (tab, comma, semicolon, pipe, space).

    >>> parse_sep("tab") == "\\t", parse_sep(";"), parse_sep(None)
    (True, ';', None)
    """
    if sep is None:
        return None
    if not isinstance(sep, str):
        raise DataError(f"`sep` must be one character such as ';' or a name (tab, comma, semicolon, pipe), got {sep!r}")
    sep = SEP_NAMES.get(sep.lower(), sep)
    if len(sep) != 1 or sep in ('"', "\n", "\r"):
        raise DataError(f"`sep` must be one character such as ';' or a name (tab, comma, semicolon, pipe), got {sep!r}")
    return sep


def read_frame(obj: Any, what: str, ids: tuple[str, ...] = (), sep: str | None = None) -> pl.DataFrame:
    """Return a polars DataFrame for a frame-like object, a ``{qid: {docid: value}}`` dict
    (ranx, ir_measures), or a CSV / Parquet / TREC path (:mod:`receval.trec`).

    Id columns named in ``ids`` are read from text files as text, so that ``"007"`` and
    ``"7"`` stay two ids (the engine turns canonical integers back into integers).
    ``sep`` is the field separator of a text file (:func:`parse_sep`); without it a header
    that is plainly split by another separator (';', tab, '|') is refused with the fix.
    """
    if isinstance(obj, pl.LazyFrame):
        return obj.collect()
    if isinstance(obj, pl.DataFrame):
        return obj
    if isinstance(obj, (str, os.PathLike)):
        return _read_path(Path(obj), what, ids, parse_sep(sep))
    mod = type(obj).__module__
    if type(obj).__name__ in ("Series", "ChunkedArray", "Array") and mod.startswith(("pandas", "polars", "pyarrow")):
        raise DataError(f"pass the {what} as a frame with named columns, not a {type(obj).__name__} "
                        "(e.g. series.to_frame(), or a DataFrame of user_id, item_id, ...)")
    if mod.startswith("pyarrow"):
        return pl.from_arrow(obj)  # type: ignore[return-value]
    if mod.startswith("pandas"):
        _check_pandas(obj, what)
        try:
            return pl.from_pandas(obj)
        except Exception as exc:  # pragma: no cover - exotic pandas dtypes
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise DataError(
                f"cannot read the {what} pandas frame: {first}; give each column one type "
                "(e.g. df[col] = df[col].astype(str) for ids that mix numbers and text)"
            ) from None
    if mod.startswith("pyspark"):
        raise DataError(f"the {what} is a Spark DataFrame: pass engine='spark' (or install receval[spark])")
    if type(obj).__module__.startswith("ranx"):  # ranx Run / Qrels
        obj = obj.to_dict()
    if isinstance(obj, dict):
        if is_dict_of_dicts(obj):  # ranx / ir_measures / pytrec_eval {qid: {docid: value}}
            value = "rating" if what == "ground truth" else "score"
            _check_cells([v for docs in obj.values() for v in docs.values()], what, value, "{qid: {docid: value}} dict's")
            return from_dict(obj, value, **dict(zip(("user_col", "item_col"), ids)))
        for name, values in obj.items():
            _check_cells(values, what, name, "dict")
        try:
            return pl.DataFrame(obj)
        except Exception as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise DataError(
                f"cannot read the {what} dict as columns: {first}; give each column one type and the same length"
            ) from None
    raise DataError(
        f"cannot read the {what} from a {type(obj).__name__}; pass a pandas/polars DataFrame, a pyarrow Table, or a CSV/Parquet path"
    )


#: cells that hold several values: a column of them is refused before the frame library
#: infers its type (a deeply nested list takes minutes, or crashes, to infer)
_NESTED = (list, tuple, dict, set, frozenset, np.ndarray)


def _shown(value: Any, limit: int = 60) -> str:
    """A short repr (a few levels of nesting, ``limit`` characters)."""
    import reprlib

    short = reprlib.Repr()
    short.maxlevel = 3
    text = short.repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _is_object(dtype: Any) -> bool:
    return isinstance(dtype, np.dtype) and dtype.kind == "O"


def _check_cells(values: Any, what: str, name: Any, kind: str) -> None:
    """Refuse a column (of a dict of columns, or a pandas object column) whose cells hold
    lists, tuples, dicts or arrays: ids, scores, ranks and ratings are one value per cell.
    Typed columns (numeric arrays, polars or arrow columns) and other iterables are left to the
    frame library (nothing is consumed here)."""
    if type(values).__module__.startswith("pandas") and _is_object(getattr(values, "dtype", None)):
        values = values.to_numpy()
    if isinstance(values, np.ndarray):
        if not _is_object(values.dtype):
            if values.ndim > 1:
                raise DataError(f"the {what} {kind} column '{name}' is a {values.ndim}-D array of shape {values.shape}; "
                                "give each column as a 1-D sequence, one value per row")
            return
    elif not isinstance(values, (list, tuple)):
        return
    nested = [t for t in set(map(type, values)) if issubclass(t, _NESTED) or t.__name__ in ("Series", "DataFrame")]
    if nested:
        row, first = next((i, v) for i, v in enumerate(values) if type(v) in nested)
        raise DataError(
            f"the {what} {kind} column '{name}' holds nested values (row {row}: {_shown(first)}); "
            "give one id or number per cell: flatten or explode the column first"
        )


def _check_pandas(frame: Any, what: str) -> None:
    """Refuse the pandas columns polars cannot take, naming the column and the fix: sparse
    columns, complex numbers, and object columns of nested values (lists, dicts)."""
    import pandas as pd

    if isinstance(frame, pd.Series):
        frame = frame.to_frame()
    if not isinstance(frame, pd.DataFrame):
        return
    repeated = frame.columns[frame.columns.duplicated()]
    if len(repeated):
        raise DataError(f"the {what} pandas frame repeats the column name '{repeated[0]}'; rename one of them")
    for i, (name, dtype) in enumerate(frame.dtypes.items()):
        if isinstance(dtype, pd.SparseDtype):
            raise DataError(
                f"the {what} pandas column '{name}' is sparse ({dtype}); make it dense first: "
                f"df['{name}'] = df['{name}'].sparse.to_dense()"
            )
        if getattr(dtype, "kind", "") == "c":
            raise DataError(
                f"the {what} pandas column '{name}' holds complex numbers ({dtype}); ids, scores, ranks and ratings "
                f"are real: keep the real part if the imaginary parts are 0, df['{name}'] = np.real(df['{name}'])"
            )
        if _is_object(dtype):
            _check_cells(frame.iloc[:, i].to_numpy(), what, name, "pandas")


def _read_path(path: Path, what: str, ids: tuple[str, ...] = (), sep: str | None = None) -> pl.DataFrame:
    if not path.exists():
        raise DataError(f"{what} file not found: {path}")

    if path.is_dir():
        parts = check_parquet(path, what)  # one policy for every engine: corrupt parts, schemas, no rows
        try:
            return pl.read_parquet(parts)
        except Exception as exc:
            raise DataError(f"cannot read the {what} part files in {path}: {str(exc).splitlines()[0]}") from None

    if trec_kind(path, what):  # .run / .qrels / .trec (also .gz): trec_eval's formats
        return read_trec(path, what, ids)
    if path.stat().st_size == 0:
        raise DataError(f"the {what} file {path} is empty (no header, no rows); check that it was written completely")
    suffix = "".join(path.suffixes[-2:]).lower() if path.suffix == ".gz" else path.suffix.lower()
    try:
        if suffix in (".parquet", ".pq"):
            check_parquet(path, what)
            return pl.read_parquet(path)
        if suffix in (".csv", ".csv.gz", ".tsv", ".tsv.gz", ".txt", ".txt.gz"):
            default = "\t" if suffix.startswith(".tsv") else ","
            if sep is None or sep not in _header(path):  # a given sep reads the files whose header holds it
                sep = default
            check_header(path, sep, what)
            frame = _read_csv(path, sep, ids)
        else:
            frame = None
    except DataError:
        raise
    except Exception as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        fix = "; save the file as UTF-8" if "utf-8" in first.lower() or "utf8" in first.lower() else ""
        raise DataError(f"cannot read {what} file {path}: {first}{fix}") from None
    if frame is None:  # a name that says no format, and content that is not TREC: say why, and how to set it
        raise DataError(unknown_format(path, what))
    if frame.height == 0:
        raise DataError(f"the {what} file {path} has a header ({', '.join(frame.columns)}) but no rows: nothing to evaluate; "
                        "check that the file was written completely")
    return frame


def scan_frame(obj: Any, what: str, ids: tuple[str, ...] = (), sep: str | None = None) -> pl.LazyFrame | None:
    """A Parquet file (or a directory of .parquet part files) or a CSV / TSV file as a LazyFrame,
    read only when collected (the batched engine reads it in user batches); None for any other
    input (read it with :func:`read_frame`). A text file gets the checks of :func:`read_frame`
    first (separator, header) and its id columns ``ids`` are read as text."""
    if not isinstance(obj, (str, os.PathLike)):
        return None
    path = Path(obj)
    if not path.exists():
        raise DataError(f"{what} file not found: {path}")

    if path.is_dir():
        return pl.scan_parquet(check_parquet(path, what))
    suffix = "".join(path.suffixes[-2:]).lower() if path.suffix == ".gz" else path.suffix.lower()
    if suffix in (".parquet", ".pq"):
        return pl.scan_parquet(check_parquet(path, what))
    if suffix in (".csv", ".tsv", ".txt"):  # gzip is not scanned (read whole)
        if trec_kind(path, what) or path.stat().st_size == 0:
            return None
        default = "\t" if suffix == ".tsv" else ","
        sep = parse_sep(sep)
        if sep is None or sep not in _header(path):
            sep = default
        check_header(path, sep, what)
        check_text_rows(path, what)
        return pl.scan_csv(path, separator=sep, infer_schema_length=10000, schema_overrides={c: pl.String for c in ids})
    return None


def _read_csv(path: Path, sep: str, ids: tuple[str, ...]) -> pl.DataFrame:
    """A text file with its id columns as text and the other columns typed from their first
    10,000 rows, or, when a later value does not fit that type (a '0.5', 'NaN' or 'five' below
    10,000 integers), from every row: the value is read as written, and the engine's checks
    (NaN, text in a number column) name the column, never the parser."""
    overrides = {c: pl.String for c in ids}
    try:
        return pl.read_csv(path, separator=sep, infer_schema_length=10000, schema_overrides=overrides)
    except pl.exceptions.ComputeError:
        return pl.read_csv(path, separator=sep, infer_schema_length=None, schema_overrides=overrides)


def _header(path: Path) -> str:
    """The first line of a text file (gzip too), without a BOM or line end; "" if unreadable."""
    import gzip

    try:
        opener = gzip.open if path.suffix.lower() == ".gz" else open
        with opener(path, "rt", encoding="utf-8", errors="replace") as fh:
            return str(fh.readline()).lstrip("\ufeff").rstrip("\r\n")
    except OSError:
        return ""


_SEP_SHOWN = {"\t": "tab", ";": ";", "|": "|", ",": ","}


def check_header(path: Path, sep: str, what: str) -> None:
    """Refuse a header that holds no ``sep`` but another common separator: the columns would
    otherwise be one column named 'a;b;c' and the error would speak of a missing column."""
    header = _header(path)
    if "\x00" in header:
        raise DataError(f"the {what} file {path} is not a text file (its first line holds NUL bytes); pass a CSV, TSV or Parquet file")
    names = [n.strip().strip('"') for n in header.split(sep)]
    repeated = sorted({n for n in names if names.count(n) > 1 and n})
    if repeated:
        raise DataError(f"the {what} file {path} repeats the column name '{repeated[0]}' in its header; rename one of them")
    if sep in header:
        return
    for other in ("\t", ";", "|"):
        if other != sep and other in header:
            shown = _SEP_SHOWN[other]
            flag = "--sep tab / sep='\\t'" if other == "\t" else f"--sep '{other}' / sep='{other}'"
            raise DataError(
                f"the {what} file {path} looks {shown}-separated (header: {header[:60]!r}), not '{_SEP_SHOWN[sep]}'-separated; "
                f"pass {flag}" + (", or name it .tsv" if other == "\t" else "")
            )


def check_columns(frame: pl.DataFrame, what: str, required: dict[str, str], optional: dict[str, str]) -> dict[str, str]:
    """Role -> column name of the columns present; a missing required column names the fix."""
    found = frame.columns
    for role, name in required.items():
        if name not in found:
            raise DataError(missing_column(what, name, role, found))
    return {role: name for role, name in {**required, **optional}.items() if name in found}


def missing_column(what: str, name: str, role: str, found: Any) -> str:
    """The message of a missing column: the ground truth's id columns are named by their own
    options (``--truth-user-col`` / ``truth_user_col=``)."""
    verb = "are" if what.endswith("s") else "is"
    option = f"--truth-{role}-col / truth_{role}_col=" if what == "ground truth" and role in ("user", "item") else f"--{role}-col / {role}_col="
    return f"{what} {verb} missing column '{name}' (found: {', '.join(found)}); name it with {option}"


def columns_of(frame: pl.DataFrame, what: str, required: dict[str, str], optional: dict[str, str]) -> dict[str, np.ndarray]:
    """Extract columns as numpy arrays; ``required``/``optional`` map role -> column name."""
    present = check_columns(frame, what, required, optional)
    return {role: _to_numpy(frame.get_column(name), what, name) for role, name in present.items()}


def _to_numpy(series: pl.Series, what: str, name: str) -> np.ndarray:
    dtype = series.dtype
    if dtype == pl.Null and len(series) == 0:  # an empty column given as an empty list
        return np.zeros(0, dtype=np.int64)
    if series.null_count():
        raise DataError(f"{what} column '{name}' has {series.null_count()} missing values; drop or fill them first")
    if dtype.is_integer():
        return series.cast(pl.Int64).to_numpy()
    if dtype.is_float():
        return series.cast(pl.Float64).to_numpy()
    if dtype == pl.Boolean:
        return series.cast(pl.Float64).to_numpy()
    if dtype in (pl.String, pl.Categorical, pl.Enum) or dtype == pl.Utf8:
        return series.cast(pl.String).to_numpy().astype(object)
    shown = str(dtype) if len(str(dtype)) <= 60 else str(dtype)[:45] + "…" + str(dtype)[-14:]  # a nested type can be huge
    raise DataError(f"{what} column '{name}' has type {shown}; use integers, floats or strings")


def is_text_path(obj: Any) -> bool:
    if not isinstance(obj, (str, os.PathLike)):
        return False
    name = str(obj).lower()
    return name.endswith((".csv", ".csv.gz", ".tsv", ".tsv.gz", ".txt", ".txt.gz"))
