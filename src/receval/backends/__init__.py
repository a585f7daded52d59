"""Batched backends: Polars (:func:`receval.backends.polars.evaluate_polars`) and Spark
(:func:`receval.backends.spark.evaluate_spark`). Both run the in-memory numpy code on batches
of users and combine the per-user values exactly (see :mod:`receval.backends._batch`)."""

from __future__ import annotations

from .polars import evaluate_polars
from .spark import evaluate_spark

__all__ = ["evaluate_polars", "evaluate_spark"]
