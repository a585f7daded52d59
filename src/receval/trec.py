r"""TREC run and qrels files, and ranx / ir_measures dict-of-dicts.

The formats are trec_eval's (``trec_eval -h``, ``form_res_rels.c``):

* a **run** has one line per retrieved document, ``qid Q0 docno rank score tag``, fields
  separated by any whitespace. trec_eval ignores the rank column and orders each query's
  documents by score (ties by docno, descending); so does the frame read here: it has no rank
  column and is ordered by ``score`` (evaluate under ``dialect="trec_eval"`` for its tie rule).
* a **qrels** file has one line per judgment, ``qid iter docno rel``; ``iter`` is ignored and
  ``rel`` is an integer (trec_eval's ``relevance_level`` 1 counts ``rel >= 1`` as relevant:
  pass ``rel=1``, since receval's default ``rel=all`` counts every judged row).

Query and document ids are kept as strings (``"007"`` and ``"7"`` are two ids; the
``item_desc`` tie rule compares them as trec_eval does, as strings). A name ending in ``.gz``
is read and written gzipped. A path ending in ``.run``, ``.qrels`` or ``.trec`` (optionally
``.gz``) is read by :func:`receval.evaluate` and the command line as TREC: ``.run`` is a run,
``.qrels`` a qrels file, ``.trec`` whichever its role is (recommendations or ground truth);
any other name is read as TREC only when asked for (:func:`read_run` / :func:`read_qrels`, or
``receval evaluate --input-format trec``). A line with the wrong number of fields is an error
naming the line, never a guess.

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "a.run").write_text("q1 Q0 d7 1 2.5 sys\nq1 Q0 007 2 1.0 sys\nq2 Q0 d1 1 0.3 sys\n")
>>> read_run(d / "a.run").rows()
[('q1', 'd7', 2.5), ('q1', '007', 1.0), ('q2', 'd1', 0.3)]
>>> _ = (d / "a.qrels").write_text("q1 0 d7 1\nq1 0 d9 0\nq2 0 d1 2\n")
>>> read_qrels(d / "a.qrels").rows()
[('q1', 'd7', 1), ('q1', 'd9', 0), ('q2', 'd1', 2)]
>>> from_dict({"q1": {"d7": 2.5, "007": 1.0}}, "score").rows()
[('q1', 'd7', 2.5), ('q1', '007', 1.0)]
"""

from __future__ import annotations

import gzip
import io
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from .errors import DataError

RUN_SUFFIXES = (".run", ".run.gz")
QRELS_SUFFIXES = (".qrels", ".qrels.gz")
ROLE_SUFFIXES = (".trec", ".trec.gz")
TREC_SUFFIXES = RUN_SUFFIXES + QRELS_SUFFIXES + ROLE_SUFFIXES

_RUN_RE = r"^\s*(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)(?:\s+(\S+))?\s*$"
_QRELS_RE = r"^\s*(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*$"


def trec_kind(path: str | os.PathLike[str], what: str) -> str | None:
    """``"run"``, ``"qrels"`` or ``None`` (not a TREC name) for a path read as ``what``.

    >>> trec_kind("x.run.gz", "recommendations"), trec_kind("x.trec", "ground truth"), trec_kind("x.csv", "recommendations")
    ('run', 'qrels', None)
    """
    name = str(path).lower()
    if name.endswith(RUN_SUFFIXES):
        return "run"
    if name.endswith(QRELS_SUFFIXES):
        return "qrels"
    if name.endswith(ROLE_SUFFIXES):
        return "qrels" if what == "ground truth" else "run"
    return None


def _lines(path: Path, what: str) -> pl.Series:
    if not path.exists():
        raise DataError(f"{what} file not found: {path}")
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    try:
        with opener(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise DataError(f"cannot read {what} file {path}: {exc}") from None
    frame = pl.read_csv(
        io.BytesIO(data), has_header=False, new_columns=["line"], separator="\x00", quote_char=None,
        schema={"line": pl.String}, truncate_ragged_lines=True,
    )
    return frame.get_column("line").fill_null("")


def _fields(lines: pl.Series, pattern: str, n: int, path: Path, what: str, layout: str) -> pl.DataFrame:
    blank = lines.str.strip_chars() == ""
    lines = lines.filter(~blank)
    groups = lines.str.extract_groups(pattern)
    bad = groups.struct.field("1").is_null()
    if bad.any():
        pos = int(bad.arg_max() or 0)
        line_no = int(((~blank).cum_sum() == pos + 1).arg_max() or 0) + 1
        raise DataError(
            f"{what} file {path}, line {line_no}: expected the {layout} fields of a TREC "
            f"{'run' if n >= 5 else 'qrels'} file, got {lines[pos]!r}"
        )
    return groups.struct.unnest().select([str(i) for i in range(1, n + 1)])


def read_run(path: str | os.PathLike[str], *, user_col: str = "user_id", item_col: str = "item_id",
             score_col: str = "score", what: str = "recommendations") -> pl.DataFrame:
    """A TREC run file (``qid Q0 docno rank score [tag]``) as a frame of string ids and float
    scores, in file order; the rank and tag columns are dropped (trec_eval ignores the rank)."""
    p = Path(path)
    f = _fields(_lines(p, what), _RUN_RE, 5, p, what, "qid Q0 docno rank score tag")
    try:
        score = f.get_column("5").cast(pl.Float64)
    except Exception:
        raise DataError(f"{what} file {p}: the fifth field of a TREC run (score) must be a number") from None
    return pl.DataFrame({user_col: f.get_column("1"), item_col: f.get_column("3"), score_col: score})


def read_qrels(path: str | os.PathLike[str], *, user_col: str = "user_id", item_col: str = "item_id",
               rating_col: str = "rating", what: str = "ground truth") -> pl.DataFrame:
    """A TREC qrels file (``qid iter docno rel``) as a frame of string ids and integer
    relevance grades, in file order; ``iter`` is dropped."""
    p = Path(path)
    f = _fields(_lines(p, what), _QRELS_RE, 4, p, what, "qid iter docno rel")
    try:
        rel = f.get_column("4").cast(pl.Int64)
    except Exception:
        raise DataError(f"{what} file {p}: the fourth field of a TREC qrels file (rel) must be an integer") from None
    return pl.DataFrame({user_col: f.get_column("1"), item_col: f.get_column("3"), rating_col: rel})


def read_trec(path: str | os.PathLike[str], what: str, ids: tuple[str, ...] = ()) -> pl.DataFrame:
    """Read ``path`` as the TREC file its name and role say (see :func:`trec_kind`)."""
    kind = trec_kind(path, what) or ("qrels" if what == "ground truth" else "run")
    user, item = (ids + ("user_id", "item_id")[len(ids):])[:2]
    if kind == "run" and what == "ground truth":
        raise DataError(f"the ground truth {path} is named as a TREC run; pass a qrels file (qid iter docno rel)")
    if kind == "qrels" and what == "recommendations":
        raise DataError(f"the recommendations {path} are named as a TREC qrels file; pass a run file (qid Q0 docno rank score tag)")
    if kind == "qrels":
        return read_qrels(path, user_col=user, item_col=item, what=what)
    return read_run(path, user_col=user, item_col=item, what=what)


def _as_frame(obj: Any, what: str) -> pl.DataFrame:
    """A polars frame of a polars / pandas / pyarrow frame or a dict of columns (the writers)."""
    if isinstance(obj, pl.LazyFrame):
        return obj.collect()
    if isinstance(obj, pl.DataFrame):
        return obj
    mod = type(obj).__module__
    try:
        if mod.startswith("pandas"):
            return pl.from_pandas(obj)
        if mod.startswith("pyarrow"):
            return pl.DataFrame(pl.from_arrow(obj))
        if is_dict_of_dicts(obj):
            return from_dict(obj, "score" if what == "recommendations" else "rating")
        if isinstance(obj, Mapping):
            return pl.DataFrame(dict(obj))
    except DataError:
        raise
    except Exception as exc:
        raise DataError(f"cannot read the {what}: {str(exc).splitlines()[0]}") from None
    raise DataError(f"cannot write the {what} from a {type(obj).__name__}; pass a polars/pandas frame, a pyarrow Table or a dict")


def _frame_cols(frame: Any, user_col: str, item_col: str, value_col: str, what: str) -> pl.DataFrame:
    f = _as_frame(frame, what)
    missing = [c for c in (user_col, item_col, value_col) if c not in f.columns]
    if missing:
        raise DataError(f"the {what} lack column(s) {', '.join(missing)} (found: {', '.join(f.columns)}); name them with user_col= / item_col= / {('score' if what == 'recommendations' else 'rating')}_col=")
    return f


def _write(lines: pl.DataFrame, path: str | os.PathLike[str]) -> None:
    p = Path(path)
    text = "\n".join(lines.get_column("line").to_list())
    data = (text + "\n" if text else "").encode()
    if p.name.lower().endswith(".gz"):
        with gzip.open(p, "wb") as f:
            f.write(data)
    else:
        p.write_bytes(data)


def write_run(recs: Any, path: str | os.PathLike[str], *, tag: str = "receval", user_col: str = "user_id",
              item_col: str = "item_id", score_col: str = "score") -> None:
    """Write recommendations as a TREC run: per query, documents by score descending (ties in
    input order), ranks 1..n. A run needs scores; ids are written as text."""
    f = _frame_cols(recs, user_col, item_col, score_col, "recommendations")
    if any(c.isspace() for c in tag) or not tag:
        raise DataError(f"a TREC run tag must be one word without spaces, got {tag!r}")
    f = f.select(
        pl.col(user_col).cast(pl.String).alias("q"), pl.col(item_col).cast(pl.String).alias("d"),
        pl.col(score_col).cast(pl.Float64).alias("s"),
    ).with_row_index("_i")
    _no_space(f, "recommendations")
    f = f.sort(["q", "s", "_i"], descending=[False, True, False], maintain_order=True)
    f = f.with_columns(pl.int_range(1, pl.len() + 1).over("q").alias("r"))
    lines = f.select(pl.format("{} Q0 {} {} {} " + tag, "q", "d", "r", pl.col("s").cast(pl.String)).alias("line"))
    _write(lines, path)


def write_qrels(truth: Any, path: str | os.PathLike[str], *, user_col: str = "user_id", item_col: str = "item_id",
                rating_col: str = "rating") -> None:
    """Write a ground truth as TREC qrels (``qid 0 docno rel``), in input order. Grades must be
    integers; a truth without a rating column is written with rel 1 for every row."""
    f = _as_frame(truth, "ground truth")
    if rating_col not in f.columns:
        f = f.with_columns(pl.lit(1, dtype=pl.Int64).alias(rating_col))
    f = _frame_cols(f, user_col, item_col, rating_col, "ground truth")
    r = f.get_column(rating_col)
    if r.dtype.is_float():
        if (r != r.round()).any() or r.is_nan().any():
            raise DataError("qrels grades are integers: round or map the ratings first (e.g. rel = rating >= 4.5)")
        r = r.cast(pl.Int64)
    elif not r.dtype.is_integer():
        raise DataError(f"qrels grades are integers; the rating column '{rating_col}' has type {r.dtype}")
    f = pl.DataFrame({"q": f.get_column(user_col).cast(pl.String), "d": f.get_column(item_col).cast(pl.String), "g": r})
    _no_space(f, "ground truth")
    _write(f.select(pl.format("{} 0 {} {}", "q", "d", "g").alias("line")), path)


def _no_space(f: pl.DataFrame, what: str) -> None:
    for col in ("q", "d"):
        bad = f.get_column(col).str.contains(r"\s")
        if bad.any():
            raise DataError(f"the {what} hold an id with whitespace ({f.get_column(col).filter(bad)[0]!r}), which a TREC file cannot store")


def is_dict_of_dicts(obj: Any) -> bool:
    """ranx / ir_measures / pytrec_eval's ``{qid: {docid: value}}`` (a non-empty mapping of mappings)."""
    return isinstance(obj, Mapping) and len(obj) > 0 and all(isinstance(v, Mapping) for v in obj.values())


def from_dict(obj: Mapping[Any, Mapping[Any, Any]], value_col: str, *, user_col: str = "user_id",
              item_col: str = "item_id") -> pl.DataFrame:
    """``{qid: {docid: value}}`` as a frame (ids as given, in dict order): ``value_col`` is
    ``"score"`` for a run, ``"rating"`` for qrels."""
    users: list[Any] = []
    items: list[Any] = []
    values: list[Any] = []
    for q, docs in obj.items():
        users.extend([q] * len(docs))
        items.extend(docs.keys())
        values.extend(docs.values())
    try:
        return pl.DataFrame({user_col: users, item_col: items, value_col: values}, strict=False)
    except Exception as exc:
        raise DataError(f"cannot read the {{qid: {{docid: {value_col}}}}} dict: {str(exc).splitlines()[0]}") from None


__all__ = ["read_run", "read_qrels", "read_trec", "write_run", "write_qrels", "from_dict", "is_dict_of_dicts", "trec_kind"]
