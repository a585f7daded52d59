"""Results: values by spec, per-user values, signatures, exports."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np
import polars as pl

from .errors import RecevalError, SpecError


class LazyFingerprints(Mapping):
    """The fingerprints of the inputs as read, computed on first access (then kept)."""

    def __init__(self, compute: Callable[[], dict[str, str]]) -> None:
        self._compute: Callable[[], dict[str, str]] | None = compute
        self._value: dict[str, str] = {}

    def _get(self) -> dict[str, str]:
        if self._compute is not None:
            self._value, self._compute = dict(self._compute()), None
        return self._value

    def __getitem__(self, key: str) -> str:
        return self._get()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())

    def __repr__(self) -> str:
        return repr(self._get())


@dataclass
class Entry:
    metric: str  # canonical spec as asked
    value: float
    signature: str
    users: int  # users averaged (0 for aggregate metrics)
    skipped: int = 0
    per_user: np.ndarray | None = None  # [U] with NaN for users left out
    dialect: str = "standard"
    asked: str = ""  # the spec as asked, in the standard canonical form


@dataclass
class Results:
    """What :func:`receval.evaluate` returns: values by canonical spec, their signatures,
    per-user values and exports.

    Examples
    --------
    >>> from receval.examples import WORKED_RECS, WORKED_TRUTH
    >>> from receval import evaluate
    >>> res = evaluate(WORKED_RECS, WORKED_TRUTH, ["ndcg@4", "precision@2"])
    >>> res["precision@2"]
    0.5
    >>> res.signature("precision@2").split("|")[:2]
    ['precision@2', 'den:k']
    >>> sorted(res.fingerprints)          # what the values were computed on (receval.fingerprint)
    ['recs', 'truth']
    """

    entries: list[Entry]
    user_ids: np.ndarray
    version: str
    info: dict[str, Any] = field(default_factory=dict)
    #: on Spark: the per-user values as a Spark DataFrame (user, one column per spec), never collected
    spark_per_user: Any = field(default=None, compare=False, repr=False)
    #: writes ``spark_per_user`` to a path (set by the Spark backend)
    spark_writer: Any = field(default=None, compare=False, repr=False)
    #: the inputs given as paths (set by :func:`receval.evaluate`): never written by write_per_user
    inputs: tuple[str, ...] = field(default=(), compare=False, repr=False)
    #: input name (``recs``, ``truth``, ``train``, ...) -> its order-free content fingerprint
    #: (:mod:`receval.fingerprint`); empty when the engine records none (Spark). The in-memory
    #: engine hashes the inputs it read on first access (:class:`LazyFingerprints`), so an
    #: evaluation whose fingerprints nobody reads does not pay for them
    fingerprints: Mapping[str, str] = field(default_factory=dict)

    def _entry(self, spec: Any) -> Entry:
        from .spec import parse_spec

        key = spec if isinstance(spec, str) and spec in self.keys() else str(parse_spec(spec))
        for e in self.entries:
            if e.metric == key:
                return e
        for e in self.entries:  # under a dialect the key may differ from the spec as written
            if e.asked == key:
                return e
        raise SpecError(f"no result for '{spec}'; computed: {', '.join(self.keys())}")

    def keys(self) -> list[str]:
        return [e.metric for e in self.entries]

    def __getitem__(self, spec: Any) -> float:
        return self._entry(spec).value

    def value(self, spec: Any) -> float:
        return self._entry(spec).value

    def signature(self, spec: Any) -> str:
        return self._entry(spec).signature

    @property
    def values(self) -> dict[str, float]:
        return {e.metric: e.value for e in self.entries}

    @property
    def signatures(self) -> dict[str, str]:
        return {e.metric: e.signature for e in self.entries}

    def per_user(self) -> pl.DataFrame:
        """One row per truth user, one column per per-user metric (null where left out).

        A Spark evaluation keeps its per-user values in Spark: use ``spark_per_user`` (a Spark
        DataFrame) or :meth:`write_per_user`."""
        if self.spark_per_user is not None:
            raise RecevalError(
                "per-user values of a Spark evaluation stay in Spark: use results.spark_per_user (a Spark DataFrame) "
                "or results.write_per_user(path), or collect them yourself with results.spark_per_user.toPandas()"
            )
        cols: dict[str, Any] = {"user_id": self.user_ids}
        for e in self.entries:
            if e.per_user is not None:
                cols[e.metric] = pl.Series(e.metric, e.per_user, nan_to_null=True)
        return pl.DataFrame(cols)

    def write_per_user(self, path: str, overwrite: bool = False) -> None:
        """Write the per-user values to ``path`` in the format its extension names: .csv,
        .tsv, .parquet/.pq or .json (rows as objects); any other extension is refused.

        An existing file is replaced only with ``overwrite=True``. On Spark, Spark writes them
        (a directory of part files; nothing is collected), and an existing directory is
        replaced only with ``overwrite=True`` and only when it is an earlier Spark output."""
        from .outputs import atomic_write, check_new_file, not_an_input, per_user_format, spark_mode

        fmt = per_user_format(path)
        not_an_input(path, self.inputs, "per-user file")  # as files: a hard link or a symlink to an input too
        if self.spark_per_user is not None:
            self.spark_writer(self.spark_per_user, str(path), fmt, spark_mode(path, overwrite))
            return
        check_new_file(path, overwrite, "per-user file")
        frame = self.per_user()
        with atomic_write(path, "wb", what="per-user file") as f:  # whole or not at all
            if fmt == "parquet":
                frame.write_parquet(f)
            elif fmt == "json":
                frame.write_json(f)  # type: ignore[call-overload]  # a binary file object
            else:
                frame.write_csv(f, separator="\t" if fmt == "tsv" else ",")

    def to_dict(self) -> dict[str, Any]:
        """The JSON document: version, results (metric, value, signature, users) and the
        fingerprints of the inputs (``receval verify`` checks a document against its files)."""
        return {
            "version": self.version,
            "results": [
                {"metric": e.metric, "value": _json_float(e.value), "signature": e.signature, "users": e.users}
                for e in self.entries
            ],
            "fingerprints": dict(self.fingerprints),
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    def to_frame(self) -> pl.DataFrame:
        return pl.DataFrame(
            {
                "metric": [e.metric for e in self.entries],
                "value": [e.value for e in self.entries],
                "users": [e.users for e in self.entries],
                "signature": [e.signature for e in self.entries],
            }
        )

    def __repr__(self) -> str:
        width = max((len(e.metric) for e in self.entries), default=6)
        lines = [f"{e.metric:<{width}}  {e.value:.6f}" for e in self.entries]
        return "\n".join(lines)


def _json_float(v: float) -> float | None:
    return None if v is None or (isinstance(v, float) and np.isnan(v)) else float(v)
