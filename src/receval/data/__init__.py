"""Data access and evaluation protocols.

* :mod:`receval.data.movielens` – loaders (bundled ml-latest-small, any
  MovieLens release on disk, generic CSV/Parquet, genres);
* :mod:`receval.data.splits` – global time, leave-last-out and random splits;
* :mod:`receval.data.protocol` – the Tamm et al. (RecSys 2021) study protocol
  and full-ranking recommendation lists.
"""

from receval.data.movielens import (
    CANONICAL_SCHEMA,
    bundled_path,
    load_bundled,
    load_genres,
    load_interactions,
    load_movielens,
)
from receval.data.protocol import StudyData, prepare_study, recommend
from receval.data.splits import Split, TimeSplit, global_time_split, leave_last_out, random_split

__all__ = [
    "CANONICAL_SCHEMA",
    "bundled_path",
    "load_bundled",
    "load_genres",
    "load_interactions",
    "load_movielens",
    "Split",
    "TimeSplit",
    "global_time_split",
    "leave_last_out",
    "random_split",
    "StudyData",
    "prepare_study",
    "recommend",
]
