"""One check of a Parquet input for every engine: a file, or a folder of ``.parquet`` part files,
is opened (its footer and schema read, no data) before any engine scans it, so that a corrupt or
truncated file, parts whose schemas differ, an empty folder or an input without rows is refused
in one line naming the file and the fix, by the memory, Polars and Spark engines alike.

:func:`check_text_rows` does the same for a text file's rows (a header and no rows).
"""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

from .errors import DataError


def parquet_parts(path: Path, what: str) -> list[Path]:
    """The part files of a Parquet folder (``*.parquet``, sorted), or ``[path]`` for a file; an
    empty folder refused."""
    if not path.is_dir():
        return [path]
    parts = sorted(path.glob("*.parquet"))
    if not parts:
        raise DataError(f"name a file (.csv, .tsv, .parquet, .run, .qrels, .trec) or a directory of .parquet part files: "
                        f"the {what} path {path} is a directory without .parquet files")
    return parts


def _first(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def check_parquet(path: str | Path, what: str) -> list[Path]:
    """The part files of the Parquet input ``path`` (a file or a folder), each opened: refused
    when one cannot be read (corrupt, truncated, not Parquet), when the parts' schemas differ
    (a column missing or of another type in one part), or when no part holds a row."""
    import polars as pl

    path = Path(path)
    parts = parquet_parts(path, what)
    schemas: list[tuple[Path, dict[str, Any]]] = []
    rows = 0
    for part in parts:
        try:
            schema = dict(pl.read_parquet_schema(part))
            rows += int(pl.scan_parquet(part).select(pl.len()).collect().item())
        except Exception as exc:
            raise DataError(f"re-write the {what} file {part}: cannot read it (corrupt, truncated or not Parquet): {_first(exc)}") from None
        schemas.append((part, schema))
    first_part, first = schemas[0]
    for part, schema in schemas[1:]:
        if list(schema) != list(first):
            raise DataError(f"write every part of {path} with the same columns: {part.name} has ({', '.join(schema)}), "
                            f"{first_part.name} has ({', '.join(first)})")
        for col, dtype in schema.items():
            if dtype != first[col]:
                raise DataError(f"write every part of {path} with one schema: column '{col}' is {dtype} in {part.name} "
                                f"and {first[col]} in {first_part.name}")
    if rows == 0:
        raise DataError(f"check that the {what} file was written completely: {path} has columns ({', '.join(first)}) but no rows, "
                        "nothing to evaluate")
    return parts


def check_text_rows(path: str | Path, what: str) -> None:
    """Refuse an empty text file, or one with a header and no rows (read: its first two lines)."""
    path = Path(path)
    opener: Any = gzip.open if path.suffix.lower() == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8", errors="replace") as fh:
            header = fh.readline()
            rows = any(line.strip() for line in fh)
    except OSError as exc:
        raise DataError(f"re-write the {what} file {path} (it cannot be read): {_first(exc)}") from None
    if not header.strip():
        raise DataError(f"the {what} file {path} is empty (no header, no rows); check that it was written completely")
    if not rows:
        raise DataError(f"the {what} file {path} has a header ({header.strip()[:80]}) but no rows: nothing to evaluate; "
                        "check that the file was written completely")


__all__ = ["parquet_parts", "check_parquet", "check_text_rows"]
