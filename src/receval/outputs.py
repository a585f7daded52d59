"""Where receval writes: the rules every writer follows.

* Nothing that exists is replaced unless the caller said so (``overwrite=True``, ``--force``).
* Nothing is deleted that receval did not create: a directory is replaced only when it holds
  nothing but the output of an earlier write of the same kind (Spark part files, a report).
* A file is written in the format its extension names (:data:`PER_USER_FORMATS`); any other
  extension is refused with the list.
* An input is never written, even with ``--force``: inputs and outputs are compared as files
  (device and inode, following symlinks), so a hard link or a symlink to an input is the input
  (:func:`not_an_input`); the outputs of one command are distinct files (:func:`check_outputs`).
* A file is replaced whole or not at all (:func:`atomic_write`): it is written to a temporary
  file beside it (``.NAME.tmp-RANDOM``), flushed to disk, then renamed over ``NAME``. A failed
  write (disk full, file too large, not a folder, an exception, Ctrl-C) removes the temporary
  file and leaves the previous file, if any, as it was; an :class:`OSError` becomes a one-line
  :class:`~receval.errors.DataError` naming the path and the cause. An existing output that is
  a link is replaced by the new file; the file the link named is never written.

>>> per_user_format("out.pq")
'parquet'
>>> per_user_format("out.txt")
Traceback (most recent call last):
...
receval.errors.DataError: cannot tell the format of the per-user file 'out.txt' from its extension: use .csv, .tsv, .parquet, .pq, .json
"""

from __future__ import annotations

import io
import os
import secrets
import stat
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

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
    """Refuse to write ``path`` if it exists (unless ``overwrite``; a dangling link exists too), is
    a directory (always), or its folder does not exist or is not a folder."""
    p = Path(str(path))
    if p.is_dir():
        raise DataError(f"the {what} '{path}' is a directory; name a file")
    if os.path.lexists(p) and not overwrite:
        raise DataError(f"the {what} '{path}' already exists; choose another name, or pass {flag} to replace it")
    if not p.parent.is_dir():
        if os.path.lexists(p.parent) and p.parent.exists():
            raise DataError(f"the folder of the {what} '{path}' is a file, not a folder; name a file in a folder")
        raise DataError(f"the folder of the {what} '{path}' does not exist; create it first")


def _stat(path: Any, follow: bool = True) -> os.stat_result | None:
    try:
        return os.stat(path) if follow else os.lstat(path)
    except (OSError, ValueError):
        return None


def _same(a: os.stat_result | None, b: os.stat_result | None) -> bool:
    return a is not None and b is not None and (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _entry(path: Any) -> str:
    """Where ``path``'s own directory entry is: its folder with every link resolved, and its name
    (a link at ``path`` itself is not followed)."""
    p = Path(os.path.abspath(str(path)))
    return os.path.normcase(os.path.join(os.path.realpath(p.parent), p.name))


#: at most this many entries of an input folder are compared with an existing output
MAX_FOLDER_ENTRIES = 100_000


def _in_folder(out: os.stat_result, entry: str, folder: Path) -> bool:
    """Whether another entry under ``folder`` (links to folders not followed) is the file ``out``."""
    seen = 0
    for root, dirs, names in os.walk(folder):
        real_root = os.path.realpath(root)
        for name in names:
            seen += 1
            if seen > MAX_FOLDER_ENTRIES:
                return False
            here = os.path.join(root, name)
            if os.path.normcase(os.path.join(real_root, name)) != entry and _same(out, _stat(here)):
                return True
    return False


def not_an_input(path: Any, inputs: Iterable[Any], what: str = "output file") -> None:
    """Refuse an output that is one of the inputs (even with ``--force``), compared as files:
    the same path, a hard link or a symlink to an input (or an input given as a link to the
    output) are all refused, as is an existing output that is a file held in an input folder
    under another name. Inputs that are not paths (frames, dicts) are skipped."""
    out = _stat(str(path))
    out_link = _stat(str(path), follow=False)
    try:
        resolved = Path(str(path)).resolve()
    except (OSError, RuntimeError):  # pragma: no cover - a symlink loop
        resolved = None
    for obj in inputs:
        if not isinstance(obj, (str, os.PathLike)):
            continue
        src = Path(os.fspath(obj))
        s = _stat(src)
        if s is None:
            continue
        if (
            _same(out, s)
            or _same(out_link, _stat(src, follow=False))
            or (resolved is not None and src.resolve() == resolved)
            or (out is not None and out_link is not None and stat.S_ISDIR(s.st_mode) and not stat.S_ISDIR(out.st_mode)
                # a plain file with one name can be in the folder only as itself: no walk
                and (stat.S_ISLNK(out_link.st_mode) or out.st_nlink > 1)
                and _in_folder(out, _entry(path), src))
        ):
            raise DataError(f"the {what} '{path}' is one of the inputs; choose another name (an input is never overwritten)")


def check_outputs(paths: Iterable[Any], inputs: Iterable[Any] = (), overwrite: bool = False, what: str = "output file",
                  flag: str = "overwrite=True / --force") -> None:
    """Check every output of one command before any work: none is an input
    (:func:`not_an_input`), each is new unless ``overwrite`` (:func:`check_new_file`), and no
    two are the same file (the same path written twice, or two links to one file): the second
    write would replace the first."""
    paths = [p for p in paths if p is not None]
    inputs = list(inputs)
    seen: list[tuple[Any, str, os.stat_result | None]] = []
    for path in paths:
        not_an_input(path, inputs, what)
        check_new_file(path, overwrite, what, flag)
        try:
            where = os.path.normcase(str(Path(str(path)).resolve()))
        except (OSError, RuntimeError):  # pragma: no cover - a symlink loop
            where = _entry(path)
        st = _stat(str(path))
        for other, other_where, other_st in seen:
            if where == other_where or _same(st, other_st):
                raise DataError(f"the {what} '{path}' is the same file as the {what} '{other}'; "
                                "give each output its own file (the second would replace the first)")
        seen.append((path, where, st))


def input_paths(*objs: Any) -> tuple[str, ...]:
    """The inputs among ``objs`` that are paths (for :func:`not_an_input` at write time)."""
    return tuple(os.fspath(o) for o in objs if isinstance(o, (str, os.PathLike)))


class _Recording(io.BufferedWriter):
    """A buffered file that remembers the first OSError of a write or flush, so that a writer
    that reports it as its own error (polars' parquet writer) is still told as its cause."""

    error: OSError | None = None

    def write(self, b: Any) -> int:
        try:
            return super().write(b)
        except OSError as exc:
            self.error = self.error or exc
            raise

    def flush(self) -> None:
        try:
            super().flush()
        except OSError as exc:
            self.error = self.error or exc
            raise


def write_error(path: Any, exc: OSError, what: str = "output file") -> DataError:
    """The one-line error of a failed write of ``path``: the path and the cause."""
    why = exc.strerror or (str(exc).splitlines() or [type(exc).__name__])[0]
    return DataError(f"cannot write the {what} '{path}': {why}")


@contextmanager
def atomic_write(path: Any, mode: str = "wb", *, what: str = "output file", encoding: str = "utf-8") -> Iterator[IO[Any]]:
    """Write ``path`` whole or not at all: yield a file object (``mode`` ``"wb"`` or ``"w"``) on a
    temporary file ``.NAME.tmp-RANDOM`` in ``path``'s folder; when the block ends, flush it to
    disk and rename it over ``path`` (an existing file keeps its permission bits; an existing
    link is replaced, never written through). On any exception the temporary file is removed and
    ``path`` is left as it was; an OSError (or a writer's error caused by one) becomes a one-line
    :class:`~receval.errors.DataError` naming ``path`` and the cause.

    Checks come first (:func:`check_new_file`, :func:`not_an_input`): this only writes."""
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_write writes 'w' or 'wb', not {mode!r}")
    target = Path(str(path))
    name = target.name
    while len(os.fsencode(name)) > 200:  # the temporary name stays within the 255 bytes of a name
        name = name[:-1]
    tmp = target.parent / f".{name}.tmp-{secrets.token_hex(4)}"
    old = _stat(target, follow=False)
    f: Any = None
    buffer: _Recording | None = None
    try:
        buffer = _Recording(io.FileIO(tmp, "xb"))  # a new file (O_EXCL), mode 0o666 less the umask
        f = buffer if mode == "wb" else io.TextIOWrapper(buffer, encoding=encoding)
        yield f
        f.flush()
        os.fsync(buffer.fileno())
        f.close()
        if old is not None and stat.S_ISREG(old.st_mode):
            os.chmod(tmp, stat.S_IMODE(old.st_mode))
        os.replace(tmp, target)
    except BaseException as exc:
        if f is not None:
            try:
                f.close()
            except Exception:
                pass
        try:
            os.unlink(tmp)
        except OSError:
            pass
        # the cause: an OSError, or the one our file raised under a writer's own error (polars)
        cause = exc if isinstance(exc, OSError) else (buffer.error if buffer is not None else None)
        if isinstance(exc, Exception) and not isinstance(exc, DataError) and cause is not None:
            raise write_error(path, cause, what) from None
        raise
    _sync_folder(target.parent)


def _sync_folder(folder: Path) -> None:
    """Flush the rename to disk (where the system allows a folder to be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - Windows
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def write_output(path: Any, data: str | bytes | Callable[[IO[bytes]], Any], what: str = "output file") -> Path:
    """Write ``data`` to ``path`` with :func:`atomic_write`: text (UTF-8), bytes, or a function
    given the binary file object (``lambda f: frame.write_parquet(f)``). Returns the path."""
    if isinstance(data, str):
        with atomic_write(path, "w", what=what) as f:
            f.write(data)
    else:
        with atomic_write(path, "wb", what=what) as f:
            if isinstance(data, (bytes, bytearray, memoryview)):
                f.write(data)
            else:
                data(f)
    return Path(str(path))


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


__all__ = ["PER_USER_FORMATS", "per_user_format", "check_new_file", "not_an_input", "check_outputs", "input_paths",
           "atomic_write", "write_output", "write_error", "spark_mode", "is_spark_output"]
