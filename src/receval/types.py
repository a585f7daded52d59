"""The types of receval's public signatures, named once so that a type checker and the API
reference show what each argument takes.

Every name here is a type alias written as a string (nothing is imported at run time: polars,
pandas, pyarrow and pyspark are named only for type checkers).

- :data:`Frame`: a table of rows (recommendations, a ground truth, a side input): a polars
  DataFrame or LazyFrame, a pandas DataFrame, a pyarrow Table, a pyspark DataFrame (evaluated
  on Spark), a dict of columns, or the path of a CSV, TSV, Parquet or TREC file;
- :data:`Metrics`: one metric spec (``"ndcg@10"``, ``"ndcg@[5,10]"``) or several
  (``["ndcg@10", "recall@20"]``, strings or parsed :class:`receval.Spec`);
- :data:`DialectLike`: a dialect name (``"recbole"``, ``"daisyrec@2.3"``), a
  :class:`receval.dialects.Dialect`, or None (the standard definitions);
- :data:`Ids`: user or item ids, one per row or per item (a list, a numpy array or a Series);
- :data:`Unset`: the type of :data:`receval.resolve.UNSET`, the "not given" marker of the
  context options (an option not given keeps the dialect's or the metric's default);
- :data:`ScoreSource`: the scores of :func:`receval.sampled.sampled_evaluate` (a function of
  the user id, or a table of user, item and score rows);
- :data:`ResultSource`: a published result (a JSON file, its text, its dict or a
  :class:`receval.Results`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:  # pragma: no cover
    import os
    from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
    from typing import Any

    import numpy as np
    import pandas as pd
    import polars as pl
    import pyarrow as pa
    from pyspark.sql import DataFrame as SparkDataFrame

    from .dialects import Dialect
    from .resolve import _Unset
    from .results import Results
    from .spec import Spec

#: a table of rows: polars, pandas, pyarrow, pyspark, a dict of columns, or a file path
Frame: TypeAlias = (
    "pl.DataFrame | pl.LazyFrame | pd.DataFrame | pa.Table | SparkDataFrame | Mapping[str, Sequence[Any]]"
    " | str | os.PathLike[str]"
)

#: one metric spec or several, as strings or parsed specs
Metrics: TypeAlias = "str | Iterable[str | Spec]"

#: a dialect: its name, a Dialect, or None (the standard definitions)
DialectLike: TypeAlias = "str | Dialect | None"

#: ids, one per row or per item
Ids: TypeAlias = "Sequence[Hashable] | np.ndarray | pl.Series | pd.Series"

#: the type of the "not given" marker of the context options (receval.resolve.UNSET)
Unset: TypeAlias = "_Unset"

#: the score source of :func:`receval.sampled.sampled_evaluate`: ``scores(user_id)`` returning one
#: score per catalogue item (in the catalogue's order), or a table of (user, item, score) rows
ScoreSource: TypeAlias = "Callable[[Any], Sequence[float] | np.ndarray] | Frame"

#: a published result: a JSON file, its text, its dict, or Results
ResultSource: TypeAlias = "str | os.PathLike[str] | Mapping[str, Any] | Results"

__all__ = ["Frame", "Metrics", "DialectLike", "Ids", "Unset", "ScoreSource", "ResultSource"]
