r"""TREC run and qrels files, and ranx / ir_measures dict-of-dicts.

The formats are trec_eval's (``trec_eval -h``, ``form_res_rels.c``):

* a **run** has one line per retrieved document, ``qid Q0 docno rank score tag``, fields
  separated by any whitespace. trec_eval ignores the rank column and orders each query's
  documents by score (ties by docno, descending); so does the frame read here: it has no rank
  column and is ordered by ``score`` (evaluate under ``dialect="trec_eval"`` for its tie rule).
* a **qrels** file has one line per judgment, ``qid iter docno rel``; ``iter`` is ignored and
  ``rel`` is an integer. trec_eval's ``relevance_level`` 1 counts ``rel >= 1`` as relevant
  and ``rel <= 0`` as judged non-relevant: ``dialect="trec_eval"`` sets ``rel=1`` (under
  another dialect pass ``rel=1``, since receval's default ``rel=all`` counts every judged row).

Query and document ids are kept as strings (``"007"`` and ``"7"`` are two ids; the
``item_desc`` tie rule compares them as trec_eval does, as strings). A name ending in ``.gz``
is read and written gzipped. A path ending in ``.run``, ``.qrels`` or ``.trec`` (optionally
``.gz``) is read by :func:`receval.evaluate` and the command line as TREC: ``.run`` is a run,
``.qrels`` a qrels file, ``.trec`` whichever its role is (recommendations or ground truth).
A name ending in ``.csv``, ``.tsv``, ``.txt`` or ``.parquet`` is never read as TREC unless
asked for (:func:`read_run` / :func:`read_qrels`, or ``receval evaluate --input-format
trec``); a file with any other name (``results.test``) is read as TREC when its first lines
are (:func:`sniff_trec`: six fields ``qid Q0 docno rank score tag``, or four ``qid 0 docno
rel``). A line with the wrong number of fields is an error naming the line, never a guess;
so are an empty or blank file, a truncated or corrupt ``.gz``, NUL bytes and bytes that are
not UTF-8.

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
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from .errors import DataError
from .outputs import atomic_write, check_new_file

RUN_SUFFIXES = (".run", ".run.gz")
QRELS_SUFFIXES = (".qrels", ".qrels.gz")
ROLE_SUFFIXES = (".trec", ".trec.gz")
TREC_SUFFIXES = RUN_SUFFIXES + QRELS_SUFFIXES + ROLE_SUFFIXES

_RUN_RE = r"^\s*(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)(?:\s+(\S+))?\s*$"
_QRELS_RE = r"^\s*(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*$"


#: extensions that say a file is not TREC (receval.io reads them as CSV / TSV / Parquet)
OTHER_SUFFIXES = tuple(s + gz for s in (".csv", ".tsv", ".txt") for gz in ("", ".gz")) + (".parquet", ".pq")
#: lines looked at to recognise a TREC file by its content
_SNIFF_LINES = 20


def trec_kind(path: str | os.PathLike[str], what: str) -> str | None:
    """``"run"``, ``"qrels"`` or ``None`` (not TREC) for a path read as ``what``.

    The name decides first: ``.run`` / ``.qrels`` (with or without ``.gz``), ``.trec`` by the
    role, and ``.csv`` / ``.tsv`` / ``.txt`` / ``.parquet`` are never TREC. A file with any
    other name (``results.test``, ``bm25``) is TREC when its content is (:func:`sniff_trec`).

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
    if name.endswith(OTHER_SUFFIXES):
        return None
    return sniff_trec(path, what)


def _is_int(text: str) -> bool:
    return text.lstrip("+-").isdigit()


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _shape(fields: list[str]) -> str | None:
    """The TREC layout of one line's fields: a run (``qid Q0 docno rank score tag``, the tag
    optional), a qrels line (``qid 0 docno rel``), or neither. The second field must be
    ``Q0`` or ``0`` (what TREC files hold), so that a table of four or six numbers (MovieLens
    ``u.data``: user item rating timestamp) is not taken for TREC."""
    if not fields or fields[1:2] not in (["Q0"], ["q0"], ["0"]):
        return None
    if len(fields) in (5, 6) and _is_int(fields[3]) and _is_number(fields[4]):
        return "run"
    if len(fields) == 4 and _is_int(fields[3]):
        return "qrels"
    return None


def sniff_trec(path: str | os.PathLike[str], what: str = "input") -> str | None:
    """``"run"`` or ``"qrels"`` when the first non-blank lines of ``path`` (up to 20, gzip
    read when the name ends in ``.gz``) all have one TREC layout, else ``None``: six
    whitespace-separated fields ``qid Q0 docno rank score tag`` (rank an integer, score a
    number) are a run, four fields ``qid 0 docno rel`` (rel an integer) a qrels file.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "results.test").write_text("301 Q0 FT911-3 1 12.5 bm25\\n301 Q0 FT911-9 2 11.0 bm25\\n")
    >>> _ = (d / "judged.test").write_text("301 0 FT911-3 1\\n301 0 FT911-9 0\\n")
    >>> _ = (d / "u.data").write_text("196\\t242\\t3\\t881250949\\n186\\t302\\t3\\t891717742\\n")
    >>> sniff_trec(d / "results.test"), sniff_trec(d / "judged.test"), sniff_trec(d / "u.data")
    ('run', 'qrels', None)
    """
    shapes = _first_shapes(path, what)
    return next(iter(shapes)) if len(shapes) == 1 else None


def _first_shapes(path: str | os.PathLike[str], what: str) -> dict[str | None, tuple[int, str]]:
    """The TREC layouts (:func:`_shape`) of the first non-blank lines of ``path`` (up to
    :data:`_SNIFF_LINES`, stopping at the second layout), each with its first line (number,
    text); empty for a missing, empty or binary file."""
    p = Path(path)
    if not p.is_file():
        return {}
    head = _read(p, what, limit=1 << 16)
    if b"\x00" in head:
        return {}
    lines = head.split(b"\n")
    if len(head) >= 1 << 16:
        lines = lines[:-1]  # the last line may be cut by the limit
    shapes: dict[str | None, tuple[int, str]] = {}
    seen = 0
    for number, raw in enumerate(lines, start=1):
        text = raw.decode("utf-8", errors="replace").lstrip("\ufeff").strip()
        if not text:
            continue
        shapes.setdefault(_shape(text.split()), (number, text))
        seen += 1
        if seen >= _SNIFF_LINES or len(shapes) > 1:
            break
    return shapes


def unknown_format(path: str | os.PathLike[str], what: str) -> str:
    """The one-line error for a file whose name does not say its format and whose content is
    not recognisably TREC (:func:`sniff_trec`): why, and the option that sets the format.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "mixed.test").write_text("q1 Q0 d1 1 2.0 s\\nq1 0 d1 1\\n")
    >>> unknown_format(d / "mixed.test", "recommendations").split(": ", 1)[1]  # doctest: +ELLIPSIS
    'its name does not say its format (.test) and its first lines mix a TREC run line (line 1) and a qrels line (line 2); use a .csv, .tsv or .parquet file, or pass --input-format trec (Python: receval.trec.read_run / read_qrels) to read it as TREC'
    """
    p = Path(path)
    shapes = _first_shapes(p, what)
    kinds = {"run": "a TREC run line", "qrels": "a qrels line"}
    trec = [(kinds[k], n) for k, (n, _) in shapes.items() if k is not None]
    other = shapes.get(None)
    shown = (other[1][:40] + ("…" if len(other[1]) > 40 else "")) if other else ""
    if len(trec) == 2:
        why = f"its first lines mix {trec[0][0]} (line {trec[0][1]}) and {trec[1][0]} (line {trec[1][1]})"
    elif trec and other:
        why = f"its first lines start as {trec[0][0]} (line {trec[0][1]}) but line {other[0]} is not one ({shown!r})"
    else:
        why = ("its first lines are neither a TREC run (qid Q0 docno rank score tag) nor a qrels file (qid 0 docno rel)"
               + (f" (line {other[0]}: {shown!r})" if other else ""))
    suffix = "".join(p.suffixes[-2:]) if p.suffix.lower() == ".gz" else p.suffix
    return (f"cannot tell the format of the {what} file {p}: its name does not say its format ({suffix or 'no extension'}) "
            f"and {why}; use a .csv, .tsv or .parquet file, or pass --input-format trec (Python: "
            "receval.trec.read_run / read_qrels) to read it as TREC")


def _read(path: Path, what: str, limit: int = -1) -> bytes:
    """The bytes of ``path`` (gunzipped when its name ends in ``.gz``; the first ``limit``
    only, if given); a missing, unreadable, truncated or corrupt file is a one-line error."""
    if not path.exists():
        raise DataError(f"{what} file not found: {path}")
    if not path.name.lower().endswith(".gz"):
        try:
            with open(path, "rb") as f:
                return f.read(limit)
        except OSError as exc:
            raise DataError(f"cannot read {what} file {path}: {exc.strerror or exc}") from None
    chunks: list[bytes] = []
    size = 0
    try:
        with gzip.open(path, "rb") as f:
            while limit < 0 or size < limit:
                chunk = f.read(1 << 16 if limit < 0 else min(1 << 16, limit - size))
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
    except (OSError, EOFError, zlib.error) as exc:
        whole = b"".join(chunks).count(b"\n")
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if not chunks and isinstance(exc, gzip.BadGzipFile) and reason.startswith("Not a gzipped file"):
            raise DataError(
                f"{what} file {path}, line 1: not gzip data ({reason}), although the name ends in .gz; "
                "compress the file with gzip or drop the .gz from its name"
            ) from None
        if isinstance(exc, EOFError):
            problem = f"the gzip data ends early (truncated): only {whole} whole line(s) could be read"
        else:
            problem = f"the gzip data is corrupt ({reason}), found after reading {whole} line(s)"
        raise DataError(
            f"{what} file {path}, line {whole + 1}: {problem}; copy or download the file again, or test it with `gzip -t`"
        ) from None
    return b"".join(chunks)


def _line_of(data: bytes, pos: int) -> int:
    return data.count(b"\n", 0, pos) + 1


def _lines(path: Path, what: str) -> pl.Series:
    """The lines of a TREC file (blank lines kept, so that positions are line numbers); NUL
    bytes and bytes that are not UTF-8 are one-line errors naming the line."""
    data = _read(path, what)
    if data.startswith(b"\xef\xbb\xbf"):  # a UTF-8 byte order mark
        data = data[3:]
    nul = data.find(b"\x00")
    if nul >= 0:
        raise DataError(
            f"{what} file {path}, line {_line_of(data, nul)}: holds a NUL byte, so it is not a text TREC file "
            "(a binary file, or one damaged in copying); pass the run / qrels as plain text"
        )
    if not data or data.isspace():  # empty, or blank lines only (refused by _fields, which says which)
        return pl.Series("line", [""] * data.count(b"\n") if data else [], dtype=pl.String)
    try:
        frame = pl.read_csv(
            io.BytesIO(data), has_header=False, new_columns=["line"], separator="\x00", quote_char=None,
            schema={"line": pl.String}, truncate_ragged_lines=True,
        )
    except Exception as exc:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as bad:
            byte = data[bad.start:bad.start + 1].hex()
            raise DataError(
                f"{what} file {path}, line {_line_of(data, bad.start)}: byte 0x{byte} is not UTF-8; "
                "save the file as UTF-8 (e.g. iconv -f latin1 -t utf-8)"
            ) from None
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise DataError(f"cannot read {what} file {path}: {first}") from None
    return frame.get_column("line").fill_null("")


def _fields(lines: pl.Series, pattern: str, n: int, path: Path, what: str, layout: str) -> pl.DataFrame:
    kind = "run" if n >= 5 else "qrels"
    blank = lines.str.strip_chars() == ""
    if bool(blank.all()):
        raise DataError(
            f"{what} file {path} is {'blank' if len(lines) else 'empty'} (no TREC lines): a TREC {kind} file "
            f"has one '{layout}' line per {'retrieved document' if kind == 'run' else 'judgment'}; "
            "check that it was written completely"
        )
    lines = lines.filter(~blank)
    groups = lines.str.extract_groups(pattern)
    bad = groups.struct.field("1").is_null()
    if bad.any():
        pos = int(bad.arg_max() or 0)
        raise DataError(
            f"{what} file {path}, line {_file_line(blank, pos)}: expected the {layout} fields of a TREC "
            f"{kind} file, got {lines[pos]!r}"
        )
    out = groups.struct.unnest().select([str(i) for i in range(1, n + 1)])
    return out.with_columns(_file_lines(blank))


def _file_lines(blank: pl.Series) -> pl.Series:
    """The file line number (1-based) of each non-blank line."""
    return pl.int_range(1, len(blank) + 1, eager=True).alias("_line").filter(~blank)


def _file_line(blank: pl.Series, pos: int) -> int:
    return int(_file_lines(blank)[pos])


def _column(f: pl.DataFrame, col: str, dtype: Any, path: Path, what: str, field: str, fix: str) -> pl.Series:
    """Field ``col`` cast to ``dtype``; a value that is not one is an error naming its line."""
    raw = f.get_column(col)
    cast = raw.cast(dtype, strict=False)
    bad = cast.is_null()
    if bad.any():
        pos = int(bad.arg_max() or 0)
        raise DataError(f"{what} file {path}, line {int(f.get_column('_line')[pos])}: {field}, got {raw[pos]!r}; {fix}")
    return cast


def read_run(path: str | os.PathLike[str], *, user_col: str = "user_id", item_col: str = "item_id",
             score_col: str = "score", what: str = "recommendations") -> pl.DataFrame:
    """A TREC run file (``qid Q0 docno rank score [tag]``) as a frame of string ids and float
    scores, in file order; the rank and tag columns are dropped (trec_eval ignores the rank).
    An empty or blank file, a truncated or corrupt ``.gz``, NUL bytes and bytes that are not
    UTF-8 are one-line errors naming the file and the line."""
    p = Path(path)
    f = _fields(_lines(p, what), _RUN_RE, 5, p, what, "qid Q0 docno rank score tag")
    score = _column(f, "5", pl.Float64, p, what, "the fifth field of a TREC run (score) must be a number",
                    "write the score as a number such as 12.5")
    return pl.DataFrame({user_col: f.get_column("1"), item_col: f.get_column("3"), score_col: score})


def read_qrels(path: str | os.PathLike[str], *, user_col: str = "user_id", item_col: str = "item_id",
               rating_col: str = "rating", what: str = "ground truth") -> pl.DataFrame:
    """A TREC qrels file (``qid iter docno rel``) as a frame of string ids and integer
    relevance grades, in file order; ``iter`` is dropped. Errors as for :func:`read_run`."""
    p = Path(path)
    f = _fields(_lines(p, what), _QRELS_RE, 4, p, what, "qid iter docno rel")
    rel = _column(f, "4", pl.Int64, p, what, "the fourth field of a TREC qrels file (rel) must be an integer",
                  "write the relevance grade as an integer (0 non-relevant, 1, 2, ... relevant)")
    return pl.DataFrame({user_col: f.get_column("1"), item_col: f.get_column("3"), rating_col: rel})


def read_trec(path: str | os.PathLike[str], what: str, ids: tuple[str, ...] = ()) -> pl.DataFrame:
    """Read ``path`` as the TREC file its name (or, for another name, its content) and its
    role say (see :func:`trec_kind`)."""
    kind = trec_kind(path, what) or ("qrels" if what == "ground truth" else "run")
    how = "named as" if str(path).lower().endswith(TREC_SUFFIXES) else "by its content"
    user, item = (ids + ("user_id", "item_id")[len(ids):])[:2]
    if kind == "run" and what == "ground truth":
        raise DataError(f"the ground truth {path} is {how} a TREC run; pass a qrels file (qid iter docno rel)")
    if kind == "qrels" and what == "recommendations":
        raise DataError(f"the recommendations {path} are {how} a TREC qrels file; pass a run file (qid Q0 docno rank score tag)")
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


def _write(lines: pl.DataFrame, path: str | os.PathLike[str], what: str) -> None:
    p = Path(path)
    text = "\n".join(lines.get_column("line").to_list())
    data = (text + "\n" if text else "").encode()
    with atomic_write(p, "wb", what=what) as f:  # whole or not at all (receval.outputs)
        if p.name.lower().endswith(".gz"):  # the header names the output, not the temporary file
            with gzip.GzipFile(filename=p.name, mode="wb", fileobj=f) as g:
                g.write(data)
        else:
            f.write(data)


def write_run(recs: Any, path: str | os.PathLike[str], *, tag: str = "receval", user_col: str = "user_id",
              item_col: str = "item_id", score_col: str = "score", overwrite: bool = False) -> None:
    """Write recommendations as a TREC run: per query, documents by score descending (ties in
    input order), ranks 1..n. A run needs scores; ids are written as text. An existing file is
    replaced only with ``overwrite=True`` (whole or not at all: :mod:`receval.outputs`)."""
    check_new_file(path, overwrite, "TREC run file", "overwrite=True")
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
    _write(lines, path, "TREC run file")


def write_qrels(truth: Any, path: str | os.PathLike[str], *, user_col: str = "user_id", item_col: str = "item_id",
                rating_col: str = "rating", overwrite: bool = False) -> None:
    """Write a ground truth as TREC qrels (``qid 0 docno rel``), in input order. Grades must be
    integers; a truth without a rating column is written with rel 1 for every row. An existing
    file is replaced only with ``overwrite=True`` (whole or not at all: :mod:`receval.outputs`)."""
    check_new_file(path, overwrite, "TREC qrels file", "overwrite=True")
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
    _write(f.select(pl.format("{} 0 {} {}", "q", "d", "g").alias("line")), path, "TREC qrels file")


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


__all__ = ["read_run", "read_qrels", "read_trec", "write_run", "write_qrels", "from_dict", "is_dict_of_dicts", "trec_kind", "sniff_trec"]
