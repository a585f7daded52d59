"""Reference recommenders used to produce rankings for metric studies.

Every model has ``fit(train) -> self`` on a polars frame with ``user_id`` and
``item_id`` columns and ``score(user_ids) -> (scores, item_ids)`` returning a
dense float64 matrix over all train items (columns ``item_ids``, sorted).
"""

from typing import Protocol, runtime_checkable

import numpy as np
import polars as pl

from receval.models.ease import EASE, interaction_matrix
from receval.models.popularity import Popularity

__all__ = ["EASE", "Popularity", "ScoringModel", "interaction_matrix"]


@runtime_checkable
class ScoringModel(Protocol):
    """What :func:`receval.data.protocol.recommend` needs from a model."""

    def fit(self, train: pl.DataFrame) -> "ScoringModel": ...

    def score(self, user_ids) -> tuple[np.ndarray, np.ndarray]: ...
