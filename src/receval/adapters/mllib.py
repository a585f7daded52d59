"""Spark MLlib ``RankingMetrics`` (pyspark.mllib.evaluation) as an adapter, run in this process.

Needs pyspark (the ``spark`` extra) and Java; Spark runs in local mode (:func:`receval.backends.spark.local_session`).

Input preparation: one row per truth user: (the user's recommended items in rank order,
the user's truth items in truth row order, their ratings); a truth user without
recommendations gets an empty prediction list (MLlib scores it 0); recommendation-only users
are left out (MLlib would score their empty ground truth 0 and average it). Items are passed
as strings. MLlib gives means only, so every case is one ``RankingMetrics`` (one Spark job per
metric and case).

What each method computes (MLlib's RankingMetrics.scala, read at apache/spark 075aa42; unchanged
in pyspark 4.3.0): ``precisionAt(k)`` hits in the first min(k, ℓ) / k; ``recallAt(k)`` hits /
|set R|; ``meanAveragePrecisionAt(k)`` Σ P@i·rel_i / min(|set R|, k); ``meanAveragePrecision``
the same with k = max(ℓ, |set R|), i.e. ÷|set R|; ``ndcgAt(k)`` binary gain, 1/ln(i+1)
discount, ideal over min(|set R|, k) positions. A repeated recommended item is a hit at every
occurrence (recall and NDCG can exceed 1); the truth is a set. The graded NDCG of the Scala API
(relevance values, Spark >= 3.4) sums the ideal DCG over the labels in the order they arrive,
not sorted by relevance; pyspark 4.3.0 cannot reach it: ``PythonMLLibAPI.newRankingMetrics``
reads only the first two columns, so ``ndcgAt(graded)`` (relevance passed) is the binary NDCG.
See ``receval/dialects/mllib@4.3.0.toml``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from receval.adapters._base import ByMetric, PeerMetric
from receval.backends.spark import local_session
from receval.errors import RecevalError

if TYPE_CHECKING:
    import pandas as pd

    from receval.conformance.case import BatchImplementation, Case, Outcome

#: the dialect that reproduces the adapter
DIALECT = "mllib@4.3.0"

METRICS: tuple[PeerMetric, ...] = (
    PeerMetric("precisionAt", "precision", "precision@{k}", means_only=True),
    PeerMetric("recallAt", "recall", "recall@{k}", means_only=True),
    PeerMetric("ndcgAt", "ndcg", "ndcg@{k}", means_only=True),
    PeerMetric("ndcgAt(graded)", "ndcg", "ndcg@{k}", means_only=True,
               note="relevance values passed; pyspark drops them (binary NDCG)"),
    PeerMetric("meanAveragePrecisionAt", "map", "map@{k}", means_only=True),
    PeerMetric("meanAveragePrecision", "map", "map(denominator=r)@{k}", cut=False, whole=True, means_only=True),
)

Row = tuple[list[str], list[str], list[float]]


def rows_from_frames(recs: pd.DataFrame, truth: pd.DataFrame, user: str = "user", item: str = "item",
                     rating: str = "rating", rank: str = "rank") -> list[Row]:
    """MLlib's input rows (prediction, labels, relevance), one per truth user (pandas frames)."""
    preds: dict[str, list[str]] = {}
    for u, g in recs.sort_values([user, rank], kind="stable").groupby(user, sort=False):
        preds[str(u)] = [str(i) for i in g[item].tolist()]
    rows: list[Row] = []
    for u, g in truth.groupby(user, sort=True):
        rows.append((preds.get(str(u), []), [str(i) for i in g[item].tolist()], [float(r) for r in g[rating].tolist()]))
    return rows


_SESSION: Any = None


def session() -> Any:
    """The local SparkSession the adapter runs in (created once)."""
    global _SESSION
    if _SESSION is None or _SESSION.sparkContext._jsc is None:
        try:
            _SESSION = local_session(partitions=1)
        except Exception as exc:  # noqa: BLE001  (no Java, no pyspark: one line)
            raise RecevalError(f"the mllib adapter cannot start Spark (pyspark and Java are needed): {exc}".splitlines()[0]) from exc
    return _SESSION


def ranking_metrics(rows: Sequence[Row], graded: bool = False) -> Any:
    """A ``pyspark.mllib.evaluation.RankingMetrics`` over ``rows`` (explicit schema, so empty lists
    are fine; ``graded`` passes the relevance values as the third column)."""
    from pyspark.mllib.common import JavaModelWrapper, callMLlibFunc
    from pyspark.mllib.evaluation import RankingMetrics
    from pyspark.sql.types import ArrayType, DoubleType, StringType, StructField, StructType

    spark = session()
    fields = [StructField("prediction", ArrayType(StringType()), False), StructField("labels", ArrayType(StringType()), False)]
    if graded:
        fields.append(StructField("relevance", ArrayType(DoubleType()), False))
        data: list[tuple] = [tuple(r) for r in rows]
    else:
        data = [(p, lab) for p, lab, _ in rows]
    df = spark.createDataFrame(data, StructType(fields))
    # RankingMetrics(rdd) infers the schema from the rows, which fails on empty lists: the same
    # Java constructor (PythonMLLibAPI.newRankingMetrics) is called on a frame with a schema
    rm = RankingMetrics.__new__(RankingMetrics)
    JavaModelWrapper.__init__(rm, callMLlibFunc("newRankingMetrics", df._jdf))
    return rm


def compute(rm: Any, name: str, k: int | None) -> float:
    """One MLlib metric (an emitted name without ``@k``) at cut-off ``k``."""
    if name == "meanAveragePrecision":
        return float(rm.meanAveragePrecision)
    method = name.split("(")[0]
    if k is None:
        raise RecevalError(f"MLlib {name} needs a cut-off k")
    return float(getattr(rm, method)(int(k)))


@dataclass
class MllibImplementation:
    """One MLlib metric as a batch implementation: one RankingMetrics per case (means only)."""

    metric: PeerMetric

    def evaluate_cases(self, cases: list[Case]) -> Mapping[str, Outcome | str]:
        out: dict[str, Outcome | str] = {}
        for c in cases:
            if self.metric.cut and not self.metric.whole and c.k is None:
                out[c.id] = f"MLlib {self.metric.name} needs a cut-off k; the case has none"
                continue
            if c.truth.height == 0:
                out[c.id] = "MLlib averages an empty RDD: NaN"
                continue
            rows = rows_from_frames(c.recs.to_pandas(), c.truth.to_pandas())
            try:
                v = compute(ranking_metrics(rows, graded="graded" in self.metric.name), self.metric.name, c.k)
            except RecevalError:
                raise
            except Exception as exc:  # noqa: BLE001  (the library's exception, one line)
                out[c.id] = (f"{type(exc).__name__}: {exc}".splitlines() or ["error"])[0]
                continue
            out[c.id] = v if not math.isnan(v) else "MLlib gave NaN"
        return out


class MllibAdapter(ByMetric):
    """Spark MLlib ``RankingMetrics`` (pyspark), in this process."""

    name = "mllib"
    library = "Spark MLlib"
    called = "MLlib"
    dist = "pyspark"
    env = "local"  # this Python (pyspark, local mode), not a peer env
    pinned = "4.3.0"  # the pyspark the dialect was verified with (tests/parity/test_parity_mllib.py)
    dialect = DIALECT
    metrics = METRICS

    @property
    def version(self) -> str:
        try:
            from importlib.metadata import version
            return version("pyspark")
        except Exception as exc:  # noqa: BLE001
            raise RecevalError(f"the mllib adapter needs pyspark (pip install 'receval[spark]'): {exc}") from exc

    def available(self) -> bool:
        import shutil
        try:
            import pyspark  # noqa: F401
        except ImportError:
            return False
        return shutil.which("java") is not None

    def implementations(self) -> dict[str, tuple[str, BatchImplementation]]:
        return {m.name: (m.metric, MllibImplementation(m)) for m in self.metrics}
