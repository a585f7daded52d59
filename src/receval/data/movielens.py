"""Loaders for MovieLens releases and generic interaction files.

Every loader returns a :class:`polars.DataFrame` with the canonical columns

============  =========  ==========================================
column        dtype      meaning
============  =========  ==========================================
``user_id``   Int64      user identifier (as in the source file)
``item_id``   Int64      item identifier (MovieLens ``movieId``)
``rating``    Float64    explicit rating (MovieLens: 0.5 .. 5.0)
``timestamp`` Int64      seconds since the Unix epoch (UTC)
============  =========  ==========================================

Rows keep the order of the source file; nothing is de-duplicated, filtered
or re-indexed.  Nothing is ever downloaded: pass a folder or ``.zip`` you
already have (for example ``ml-25m.zip`` as distributed by GroupLens).

Supported MovieLens layouts (detected automatically, also inside one
sub-folder of a folder or zip such as ``ml-1m/ratings.dat``):

* ``ratings.csv`` with header ``userId,movieId,rating,timestamp``:
  ml-latest, ml-latest-small, ml-20m, ml-25m, ml-32m;
* ``ratings.dat`` with ``::`` separators and no header: ml-1m, ml-10m
  (ml-10m's folder is ``ml-10M100K``);
* ``u.data`` tab-separated, no header: ml-100k.

If a location holds several of them, the first of ``ratings.csv``,
``ratings.dat``, ``u.data`` wins.

The bundled ml-latest-small release (F. Maxwell Harper and Joseph A.
Konstan, 2015, *The MovieLens Datasets: History and Context*, ACM TiiS
5(4)) ships unmodified together with GroupLens's ``README.txt``, whose
licence terms apply to it.
"""

from __future__ import annotations

import io
import os
import zipfile
from importlib import resources
from pathlib import Path

import polars as pl

__all__ = [
    "CANONICAL_SCHEMA",
    "bundled_path",
    "load_bundled",
    "load_movielens",
    "load_interactions",
    "load_genres",
]

#: Column names and dtypes of every frame returned by the rating loaders.
CANONICAL_SCHEMA: dict[str, pl.DataType] = {
    "user_id": pl.Int64(),
    "item_id": pl.Int64(),
    "rating": pl.Float64(),
    "timestamp": pl.Int64(),
}

_RATING_FILES = ("ratings.csv", "ratings.dat", "u.data")
_MOVIE_FILES = ("movies.csv", "movies.dat", "u.item")
_BUNDLED_DIR = "ml-latest-small"

#: Genre order of ml-100k's ``u.item`` flag columns (as listed in ``u.genre``).
ML100K_GENRES = (
    "unknown", "Action", "Adventure", "Animation", "Children's", "Comedy",
    "Crime", "Documentary", "Drama", "Fantasy", "Film-Noir", "Horror",
    "Musical", "Mystery", "Romance", "Sci-Fi", "Thriller", "War", "Western",
)  # fmt: skip

NO_GENRES = "(no genres listed)"


# --------------------------------------------------------------------------
# locating files
# --------------------------------------------------------------------------
def bundled_path(name: str = "ratings.csv"):
    """Return a :mod:`importlib.resources` handle of a bundled data file.

    Parameters
    ----------
    name : str
        ``"ratings.csv"``, ``"movies.csv"`` or ``"README.txt"``.

    Returns
    -------
    importlib.resources.abc.Traversable
        Works for a source checkout, an installed wheel or a zipped package;
        use ``.read_bytes()`` or :func:`importlib.resources.as_file`.
    """
    return resources.files("receval.data").joinpath(_BUNDLED_DIR, name)


def _is_junk(member: str) -> bool:
    base = member.rsplit("/", 1)[-1]
    return member.startswith("__MACOSX/") or base.startswith("._")


def _pick(candidates: dict[str, list[str]], wanted: tuple[str, ...], where: str) -> tuple[str, str]:
    """Choose ``(basename, location)`` from ``{basename: [locations...]}``.

    The shallowest folder holding any wanted file wins; inside it the order
    of ``wanted`` decides.  Two different folders at that depth (two releases
    side by side) are refused as ambiguous.
    """
    found = [(loc.count("/"), loc.rpartition("/")[0], wanted.index(name), name, loc)
             for name in wanted for loc in candidates.get(name, [])]
    if not found:
        raise ValueError(
            f"no {', '.join(wanted[:-1])} or {wanted[-1]} found in {where}; "
            "pass the folder or zip of a MovieLens release"
        )
    depth = min(f[0] for f in found)
    top = sorted(f for f in found if f[0] == depth)
    folders = sorted({f[1] for f in top})
    if len(folders) > 1:
        raise ValueError(
            f"{where} holds several MovieLens releases ({', '.join(folders)}); "
            "pass the folder or zip of a single release"
        )
    best = min(top, key=lambda f: f[2])
    return best[3], best[4]


def _read_source(path: str | os.PathLike, wanted: tuple[str, ...]) -> tuple[str, bytes | str]:
    """Find one of ``wanted`` in a file, folder or zip.

    Returns ``(basename, data)`` where data is a filesystem path (str) or the
    file's bytes when read from a zip.
    """
    p = Path(path).expanduser()
    if not p.exists():
        raise ValueError(f"{p} does not exist; pass the folder or zip of a MovieLens release")
    if p.is_file() and p.name in wanted:
        return p.name, str(p)
    if p.is_file() and not zipfile.is_zipfile(p):
        # a renamed file (e.g. ml-100k's ua.base): the extension tells the layout
        by_suffix = dict(zip((".csv", ".dat", ".data"), _RATING_FILES)) if wanted == _RATING_FILES \
            else dict(zip((".csv", ".dat", ".item"), _MOVIE_FILES))
        if wanted == _RATING_FILES:
            by_suffix.update({".base": "u.data", ".test": "u.data"})
        if p.suffix.lower() in by_suffix:
            return by_suffix[p.suffix.lower()], str(p)
    if p.is_file() and zipfile.is_zipfile(p):
        with zipfile.ZipFile(p) as zf:
            cands: dict[str, list[str]] = {}
            for member in zf.namelist():
                if member.endswith("/") or _is_junk(member):
                    continue
                base = member.rsplit("/", 1)[-1]
                if base in wanted and member.count("/") <= 1:
                    cands.setdefault(base, []).append(member)
            kind, member = _pick(cands, wanted, str(p))
            return kind, zf.read(member)
    if p.is_dir():
        cands = {}
        for name in wanted:
            if (p / name).is_file():
                cands.setdefault(name, []).append(name)
        for sub in sorted(x for x in p.iterdir() if x.is_dir()):
            for name in wanted:
                if (sub / name).is_file():
                    cands.setdefault(name, []).append(f"{sub.name}/{name}")
        kind, rel = _pick(cands, wanted, str(p))
        return kind, str(p / rel)
    raise ValueError(
        f"{p} is neither a folder, a zip nor one of {', '.join(wanted)}; "
        "pass the folder or zip of a MovieLens release"
    )


def _as_source(data: bytes | str):
    return io.BytesIO(data) if isinstance(data, bytes) else data


def _raw_bytes(data: bytes | str) -> bytes:
    return data if isinstance(data, bytes) else Path(data).read_bytes()


# --------------------------------------------------------------------------
# ratings
# --------------------------------------------------------------------------
def _finish(df: pl.DataFrame) -> pl.DataFrame:
    return df.select(
        pl.col("user_id").cast(pl.Int64),
        pl.col("item_id").cast(pl.Int64),
        pl.col("rating").cast(pl.Float64),
        pl.col("timestamp").cast(pl.Int64),
    )


def _read_ratings_csv(data: bytes | str, where: str) -> pl.DataFrame:
    try:
        df = pl.read_csv(
            _as_source(data),
            schema_overrides={"userId": pl.Int64, "movieId": pl.Int64, "rating": pl.Float64, "timestamp": pl.Int64},
        )
    except pl.exceptions.PolarsError:
        raise ValueError(f"{where}: ratings.csv is malformed; pass an unmodified MovieLens release") from None
    missing = {"userId", "movieId", "rating", "timestamp"} - set(df.columns)
    if missing:
        raise ValueError(
            f"{where}: ratings.csv lacks column(s) {sorted(missing)}; expected the MovieLens header "
            "userId,movieId,rating,timestamp (use load_interactions for other files)"
        )
    return _finish(df.rename({"userId": "user_id", "movieId": "item_id"}))


def _read_headerless(data: bytes | str, separator: str, where: str) -> pl.DataFrame:
    # ratings.dat uses "::"; polars needs a one-byte separator, so read with ":"
    # and keep every other field (the empty ones lie between the two colons).
    df = pl.read_csv(_as_source(data), separator=separator, has_header=False, infer_schema=False)
    step = 2 if separator == ":" else 1
    if df.width != 4 * step - (step - 1):
        raise ValueError(
            f"{where}: expected 4 fields per line (user, item, rating, timestamp), found "
            f"{(df.width + step - 1) // step}; pass an unmodified MovieLens release"
        )
    cols = df.columns[::step]
    out = df.select(
        pl.col(cols[0]).str.strip_chars().alias("user_id"),
        pl.col(cols[1]).str.strip_chars().alias("item_id"),
        pl.col(cols[2]).str.strip_chars().alias("rating"),
        pl.col(cols[3]).str.strip_chars().alias("timestamp"),
    )
    try:
        return _finish(out)
    except pl.exceptions.PolarsError:
        raise ValueError(f"{where}: a field is not a number; pass an unmodified MovieLens release") from None


def load_movielens(path: str | os.PathLike) -> pl.DataFrame:
    """Load the ratings of any MovieLens release already on disk.

    Parameters
    ----------
    path : str or os.PathLike
        A release folder (``ml-25m/``), a folder containing exactly one
        release folder, a release ``.zip`` as distributed by GroupLens (read
        in memory, nothing is extracted), or a ratings file itself; a file
        with another name is read by its extension: ``.csv`` as
        ``ratings.csv``, ``.dat`` as ``ratings.dat``, ``.data``/``.base``/
        ``.test`` as ml-100k's ``u.data`` (e.g. ``ua.base``).

    Returns
    -------
    polars.DataFrame
        Columns ``user_id`` (Int64), ``item_id`` (Int64), ``rating``
        (Float64), ``timestamp`` (Int64, Unix seconds), in file order.

    Raises
    ------
    ValueError
        If no ``ratings.csv``, ``ratings.dat`` or ``u.data`` is found, if
        several releases are found side by side, or if the file is malformed.

    Notes
    -----
    The whole ratings file is read into memory (ml-32m: about 32 million
    rows, ~1 GB as a polars frame).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "u.data").write_text("1\\t10\\t4\\t881250949\\n2\\t10\\t5\\t881250950\\n")
    >>> load_movielens(d).row(1)
    (2, 10, 5.0, 881250950)
    """
    kind, data = _read_source(path, _RATING_FILES)
    where = f"{path}"
    if kind == "ratings.csv":
        return _read_ratings_csv(data, where)
    if kind == "ratings.dat":
        return _read_headerless(data, ":", where)
    return _read_headerless(data, "\t", where)


def load_bundled() -> pl.DataFrame:
    """Load the bundled MovieLens ml-latest-small ratings.

    Returns
    -------
    polars.DataFrame
        100,836 ratings by 610 users of 9,724 movies, columns ``user_id``,
        ``item_id``, ``rating``, ``timestamp`` (see :data:`CANONICAL_SCHEMA`).

    Notes
    -----
    The files are the unmodified GroupLens release (CRLF line ends kept);
    see ``receval/data/ml-latest-small/README.txt`` for the licence.

    Examples
    --------
    >>> df = load_bundled()
    >>> df.shape, df["user_id"].n_unique()
    ((100836, 4), 610)
    """
    data = bundled_path("ratings.csv").read_bytes()
    return _read_ratings_csv(data, "bundled ml-latest-small")


# --------------------------------------------------------------------------
# generic interactions
# --------------------------------------------------------------------------
def _to_unix_seconds(s: pl.Series, name: str) -> pl.Series:
    dt = s.dtype
    if dt == pl.Datetime or isinstance(dt, pl.Datetime):
        return s.dt.epoch("s").cast(pl.Int64)
    if dt == pl.Date:
        return s.cast(pl.Datetime("us")).dt.epoch("s").cast(pl.Int64)
    if dt == pl.String:
        try:
            return s.cast(pl.Int64, strict=True)
        except pl.exceptions.InvalidOperationError:
            pass
        try:
            parsed = s.str.to_datetime(time_zone="UTC", strict=True)
        except Exception:  # noqa: BLE001 - polars raises several kinds here
            raise ValueError(
                f"timestamp column {name!r} is neither integer seconds nor ISO 8601 text; "
                "convert it to Unix seconds first"
            ) from None
        return parsed.dt.epoch("s").cast(pl.Int64)
    if dt.is_float():
        if (s.drop_nulls() != s.drop_nulls().floor()).any():
            raise ValueError(
                f"timestamp column {name!r} has fractional values; round it to whole seconds first"
            )
        return s.cast(pl.Int64)
    if dt.is_integer():
        return s.cast(pl.Int64)
    raise ValueError(f"timestamp column {name!r} has type {dt}; convert it to Unix seconds first")


def load_interactions(
    path: str | os.PathLike,
    *,
    user_col: str = "user_id",
    item_col: str = "item_id",
    rating_col: str | None = "rating",
    timestamp_col: str | None = "timestamp",
    separator: str | None = None,
    encode_ids: bool = False,
) -> pl.DataFrame:
    """Load interactions from a CSV/TSV or Parquet file with named columns.

    Parameters
    ----------
    path : str or os.PathLike
        ``.parquet``/``.pq`` is read as Parquet; anything else as delimited
        text with a header row.
    user_col, item_col : str
        Source column names of the user and item identifiers.
    rating_col : str or None
        Source column of the rating; ``None`` sets every rating to 1.0
        (implicit feedback).
    timestamp_col : str or None
        Source column of the time.  Integers are taken as Unix seconds;
        Datetime/Date columns and ISO 8601 strings (naive = UTC) are
        converted to Unix seconds.  ``None`` gives a null timestamp (then
        the time-based splits refuse the data).
    separator : str or None
        Field separator for text files; ``None`` means ``"\\t"`` for
        ``.tsv``/``.tab`` files and ``","`` otherwise.
    encode_ids : bool
        If the ids are not integers, map each column to dense integers
        ``0..n-1`` in lexicographic order of the original ids (deterministic).
        Without it, non-integer ids raise ``ValueError``.

    Returns
    -------
    polars.DataFrame
        The canonical ``user_id, item_id, rating, timestamp`` frame.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "log.csv"
    >>> _ = f.write_text("u,i,t\\n1,7,100\\n1,8,200\\n")
    >>> load_interactions(f, user_col="u", item_col="i", rating_col=None, timestamp_col="t").rows()
    [(1, 7, 1.0, 100), (1, 8, 1.0, 200)]
    """
    p = Path(path).expanduser()
    if not p.is_file():
        raise ValueError(f"{p} is not a file; pass the path of a CSV, TSV or Parquet file")
    if p.suffix.lower() in (".parquet", ".pq"):
        df = pl.read_parquet(p)
    else:
        sep = separator or ("\t" if p.suffix.lower() in (".tsv", ".tab") else ",")
        df = pl.read_csv(p, separator=sep, infer_schema_length=10000)
    wanted = {"user_col": user_col, "item_col": item_col, "rating_col": rating_col, "timestamp_col": timestamp_col}
    for arg, col in wanted.items():
        if col is not None and col not in df.columns:
            raise ValueError(
                f"{p} has no column {col!r} (columns: {', '.join(df.columns)}); pass {arg}=<one of them>"
            )
    out = {}
    for key, col in (("user_id", user_col), ("item_id", item_col)):
        s = df[col]
        if not s.dtype.is_integer():
            try:
                s = s.cast(pl.Int64, strict=True)
            except Exception:  # noqa: BLE001
                if not encode_ids:
                    raise ValueError(
                        f"column {col!r} holds non-integer ids; pass encode_ids=True to map them to 0..n-1"
                    ) from None
                s = s.cast(pl.String).rank("dense").cast(pl.Int64) - 1
        out[key] = s.cast(pl.Int64)
    out["rating"] = (
        pl.repeat(1.0, df.height, dtype=pl.Float64, eager=True)
        if rating_col is None
        else df[rating_col].cast(pl.Float64)
    )
    out["timestamp"] = (
        pl.repeat(None, df.height, dtype=pl.Int64, eager=True)
        if timestamp_col is None
        else _to_unix_seconds(df[timestamp_col], timestamp_col)
    )
    return pl.DataFrame({k: v.alias(k) for k, v in out.items()})


# --------------------------------------------------------------------------
# genres
# --------------------------------------------------------------------------
def _decode(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:  # ml-1m and ml-100k are ISO-8859-1
        return raw.decode("latin-1")


def load_genres(path: str | os.PathLike | None = None, *, keep_unlisted: bool = False) -> pl.DataFrame:
    """Load the item–genre pairs of a MovieLens release.

    Parameters
    ----------
    path : str, os.PathLike or None
        Folder, zip or file as for :func:`load_movielens`, holding
        ``movies.csv`` (pipe-separated genres), ``movies.dat``
        (``MovieID::Title::Genres``) or ml-100k's ``u.item`` (19 flag
        columns).  ``None`` reads the bundled ml-latest-small ``movies.csv``.
    keep_unlisted : bool
        MovieLens marks a movie without genres as ``(no genres listed)``
        (ml-100k: flag ``unknown``).  By default such a movie gets **no
        row**, so it has no category; set ``True`` to keep that marker as an
        ordinary category.

    Returns
    -------
    polars.DataFrame
        Columns ``item_id`` (Int64) and ``category`` (String), one row per
        item–genre pair, sorted by ``item_id`` and then in the order the
        genres are listed in the file.

    Notes
    -----
    The bundled ml-latest-small has 9,742 movies, 19 genres plus
    ``(no genres listed)`` (34 movies), i.e. 19 distinct categories by
    default and 20 with ``keep_unlisted=True``.

    Examples
    --------
    >>> g = load_genres()
    >>> g.filter(g["item_id"] == 1)["category"].to_list()
    ['Adventure', 'Animation', 'Children', 'Comedy', 'Fantasy']
    >>> g["category"].n_unique(), load_genres(keep_unlisted=True)["category"].n_unique()
    (19, 20)
    """
    if path is None:
        kind, data = "movies.csv", bundled_path("movies.csv").read_bytes()
    else:
        kind, data = _read_source(path, _MOVIE_FILES)
    where = "bundled ml-latest-small" if path is None else str(path)
    if kind == "movies.csv":
        movies = pl.read_csv(_as_source(data), schema_overrides={"movieId": pl.Int64, "genres": pl.String})
        if not {"movieId", "genres"} <= set(movies.columns):
            raise ValueError(
                f"{where}: movies.csv lacks movieId/genres columns; pass an unmodified MovieLens release"
            )
        pairs = movies.select(
            pl.col("movieId").alias("item_id"), pl.col("genres").str.split("|").alias("category")
        ).explode("category")
        unlisted = NO_GENRES
    elif kind == "movies.dat":
        lines = pl.Series("line", _decode(_raw_bytes(data)).splitlines(), dtype=pl.String)
        parts = lines.filter(lines.str.strip_chars() != "").str.split("::")
        if (parts.list.len() < 3).any():
            raise ValueError(f"{where}: movies.dat lines need MovieID::Title::Genres; pass an unmodified release")
        pairs = pl.DataFrame(
            {
                "item_id": parts.list.first().str.strip_chars().cast(pl.Int64),
                "category": parts.list.last().str.strip_chars().str.split("|"),
            }
        ).explode("category")
        unlisted = NO_GENRES
    else:  # u.item
        lines = pl.Series("line", _decode(_raw_bytes(data)).splitlines(), dtype=pl.String)
        parts = lines.filter(lines.str.strip_chars() != "").str.split("|")
        if (parts.list.len() != 5 + len(ML100K_GENRES)).any():
            raise ValueError(f"{where}: u.item lines need 24 '|' fields; pass an unmodified ml-100k release")
        flags = pl.DataFrame(
            {g: parts.list.get(5 + j) for j, g in enumerate(ML100K_GENRES)}
        ).with_columns(pl.all() == "1")
        pairs = (
            pl.DataFrame({"item_id": parts.list.first().cast(pl.Int64)})
            .with_columns(
                pl.concat_list(
                    [pl.when(flags[g]).then(pl.lit(g)).otherwise(pl.lit(None)) for g in ML100K_GENRES]
                ).list.drop_nulls().alias("category")
            )
            .explode("category")
        )
        unlisted = "unknown"
    pairs = pairs.filter(pl.col("category").is_not_null() & (pl.col("category") != ""))
    if not keep_unlisted:
        pairs = pairs.filter(pl.col("category") != unlisted)
    return pairs.select(pl.col("item_id").cast(pl.Int64), pl.col("category").cast(pl.String)).sort(
        "item_id", maintain_order=True
    )

