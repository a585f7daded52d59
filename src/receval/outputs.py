"""Where receval writes: the rules every writer follows.

* Nothing that exists is replaced unless the caller said so (``overwrite=True``, ``--force``).
* Nothing is deleted that receval did not create: a directory is replaced only when it holds
  nothing but the output of an earlier write of the same kind (Spark part files, a report).
* A file is written in the format its extension names (:data:`PER_USER_FORMATS`); any other
  extension is refused with the list.

>>> per_user_format("out.pq")
'parquet'
>>> per_user_format("out.txt")
Traceback (most recent call last):
...
receval.errors.DataError: cannot tell the format of the per-user file 'out.txt' from its extension: use .csv, .tsv, .parquet, .pq, .json
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .errors import DataError

#: extension -> format of a per-user file (or, on Spark, a directory of part files)
PER_USER_FORMATS = {".csv": "csv", ".tsv": "tsv", ".parquet": "parquet", ".pq": "parquet", ".json": "json"}


def per_user_format(path: Any) -> str:
    """The format named by ``path``'s extension; any other extension is refused."""
    suffix = Path(str(path)).suffix.lower()
    if suffix not in PER_USER_FORMATS:
        raise DataError(
            f"cannot tell the format of the per-user file '{path}' from its extension: use "
            + ", ".join(PER_USER_FORMATS)
        )
    return PER_USER_FORMATS[suffix]


def check_new_file(path: Any, overwrite: bool, what: str = "file", flag: str = "overwrite=True / --force") -> None:
    """Refuse to write ``path`` if it exists (unless ``overwrite``) or is a directory (always)."""
    p = Path(str(path))
    if p.is_dir():
        raise DataError(f"the {what} '{path}' is a directory; name a file")
    if p.exists() and not overwrite:
        raise DataError(f"the {what} '{path}' already exists; choose another name, or pass {flag} to replace it")
    if not p.parent.exists():
        raise DataError(f"the folder of the {what} '{path}' does not exist; create it first")


def not_an_input(path: Any, inputs: Iterable[Any], what: str = "output file") -> None:
    """Refuse an output path that is one of the inputs (even with ``--force``)."""
    try:
        out = Path(str(path)).resolve()
    except OSError:  # pragma: no cover
        return
    for obj in inputs:
        if isinstance(obj, (str, os.PathLike)) and Path(str(obj)).exists() and Path(str(obj)).resolve() == out:
            raise DataError(f"the {what} '{path}' is one of the inputs; choose another name (an input is never overwritten)")


def is_spark_output(path: Path) -> bool:
    """Whether the directory holds only what a Spark write leaves (so replacing it deletes
    nothing the user made)."""
    names = [p.name for p in path.iterdir()]
    if "_SUCCESS" not in names:
        return False
    return all(n.startswith(("part-", ".part-", "_SUCCESS", "._SUCCESS", "_committed", "_started")) for n in names)


def spark_mode(path: Any, overwrite: bool) -> str:
    """The Spark save mode for ``path``: ``errorifexists`` when it is new; ``overwrite`` only
    when asked and the directory is an earlier Spark output; otherwise a one-line refusal."""
    p = Path(str(path))
    if not p.exists():
        return "errorifexists"
    if not overwrite:
        raise DataError(f"the per-user output '{path}' already exists; choose another name, or pass overwrite=True / --force to replace it")
    if p.is_dir() and is_spark_output(p):
        return "overwrite"
    raise DataError(
        f"the per-user output '{path}' exists and is not an earlier Spark output (part files and _SUCCESS only); "
        "receval does not delete what it did not write: choose another name"
    )


__all__ = ["PER_USER_FORMATS", "per_user_format", "check_new_file", "not_an_input", "spark_mode", "is_spark_output"]
